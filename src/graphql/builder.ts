// Pothos builder: plugin configuration only. Types live in one file per area.
import SchemaBuilder from '@pothos/core';
import PrismaPlugin from '@pothos/plugin-prisma';
import RelayPlugin from '@pothos/plugin-relay';
import DataloaderPlugin from '@pothos/plugin-dataloader';
import ComplexityPlugin from '@pothos/plugin-complexity';
import SimpleObjectsPlugin from '@pothos/plugin-simple-objects';
import { DateTimeResolver, JSONResolver, JSONObjectResolver } from 'graphql-scalars';
import type PrismaTypes from '../generated/pothos-prisma-types.ts';
import { getDatamodel } from '../generated/pothos-prisma-types.ts';
import type { Context } from './context.ts';
import { typeOfId } from '../domain/ids.ts';
import { AppError } from '../domain/errors.ts';

export const MAX_PAGE_SIZE = 1000;

export const builder = new SchemaBuilder<{
  Context: Context;
  PrismaTypes: PrismaTypes;
  DefaultFieldNullability: false;
  Scalars: {
    DateTime: { Input: Date; Output: Date | string };
    JSON: { Input: unknown; Output: unknown };
    JSONObject: { Input: Record<string, unknown>; Output: Record<string, unknown> };
    ID: { Input: string; Output: string | number };
  };
  Connection: { totalCount: number | (() => number | Promise<number>) };
}>({
  plugins: [ComplexityPlugin, SimpleObjectsPlugin, RelayPlugin, PrismaPlugin, DataloaderPlugin],
  defaultFieldNullability: false,
  prisma: {
    dmmf: getDatamodel(),
    // The Prisma client is per process but reached through the context so tests can run
    // several apps (databases) side by side.
    client: (ctx) => ctx.prisma,
    filterConnectionTotalCount: true,
    exposeDescriptions: true,
    onUnusedQuery: process.env.NODE_ENV === 'production' ? null : 'warn',
  },
  relay: {
    clientMutationId: 'omit',
    cursorType: 'String',
    // The Relay id is the object's own prefixed id, the same string REST uses.
    encodeGlobalID: (_typename, id) => String(id),
    decodeGlobalID: (globalID) => {
      const type = typeOfId(globalID);
      if (!type) throw new AppError('BAD_REQUEST', `Not a valid id: ${globalID}`, 'id');
      return { typename: type, id: globalID };
    },
    nodesOnConnection: true,
    // Price a connection by the page it asks for: its `edges`/`nodes` lists already count ×10,
    // so the multiplier here is first/10 (a page of 1,000 weighs ~1,000 times its node).
    defaultConnectionFieldOptions: {
      complexity: (args: { first?: number | null; last?: number | null }) => ({
        field: 1,
        multiplier: Math.max(1, Math.ceil((args.first ?? args.last ?? 100) / 10)),
      }),
    },
  },
  complexity: {
    defaultComplexity: 1,
    defaultListMultiplier: 10,
    limit: { complexity: 100_000, depth: 24, breadth: 400 },
  },
});

builder.addScalarType('DateTime', DateTimeResolver);
builder.addScalarType('JSON', JSONResolver);
builder.addScalarType('JSONObject', JSONObjectResolver);

builder.queryType({});
builder.mutationType({});
