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
import { isObjectType, type GraphQLResolveInfo } from 'graphql';
import { resolveNodes } from '@pothos/plugin-relay';
import { typeOfId } from '../lib/ids.ts';
import { AppError, fromDatabaseError, notFound } from '../lib/errors.ts';

export const MAX_PAGE_SIZE = 1000;

/** The budget of a GraphQL request (docs/decisions.md, "Cursors and limits"). */
export const GRAPHQL_LIMITS = { complexity: 100_000, depth: 24, breadth: 400 };

/** Contexts running a REST route's fixed document: exempt from the complexity budget. */
export const fixedDocuments = new WeakSet<object>();

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
    // Never throws: an id with no known prefix gets an empty typename, and `resolveNodeOrNotFound`
    // answers NOT_FOUND for it like for any id it cannot find (one bad id in `nodes(ids:)` must
    // not fail the others).
    decodeGlobalID: (globalID) => ({ typename: typeOfId(globalID) ?? '', id: globalID }),
    nodeQueryOptions: {
      resolve: (_root, args, ctx, info) => resolveNodeOrNotFound(ctx, info, args.id),
    },
    nodesQueryOptions: {
      // One promise per id: a missing id is null with its own error at ["nodes", i].
      resolve: (_root, args, ctx, info) => args.ids.map((id) => resolveNodeOrNotFound(ctx, info, id)),
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
    // REST documents are fixed and validated at start-up, and their only free size is `limit`
    // (≤ MAX_PAGE_SIZE): they run without the budget, so every legal REST request answers.
    limit: (ctx: Context) => (fixedDocuments.has(ctx) ? {} : GRAPHQL_LIMITS),
    complexityError: (kind, result) => {
      const [what, figure, max] =
        kind === 'Depth' ? ['depth', result.depth, result.maxDepth] : kind === 'Breadth' ? ['breadth', result.breadth, result.maxBreadth] : ['complexity', result.complexity, result.maxComplexity];
      return new AppError('BAD_REQUEST', `Query ${what} ${figure} exceeds the limit of ${max}`);
    },
  },
});

/** Real ids are short printable ASCII (`newId`); anything else cannot name a row. */
const PLAUSIBLE_ID = /^[\x21-\x7e]{1,128}$/;

/**
 * node(id:) and nodes(ids:) for one id: the object, or a NOT_FOUND error for every id that names
 * nothing the caller may see — unknown or malformed ids, prefixes of types that are not Nodes
 * (`tok_`, `page_`…), rows that do not exist and rows the type's own `findUnique` hides (some
 * answer null, some throw NOT_FOUND, some make Prisma's findUniqueOrThrow fail).
 */
async function resolveNodeOrNotFound(ctx: Context, info: GraphQLResolveInfo, gid: { id: string; typename: string }): Promise<unknown> {
  const type = gid.typename ? info.schema.getType(gid.typename) : undefined;
  const isNode = isObjectType(type) && type.getInterfaces().some((i) => i.name === 'Node');
  if (!isNode || !PLAUSIBLE_ID.test(gid.id)) throw notFound(gid.typename || 'Node');
  let node: unknown;
  try {
    [node] = await resolveNodes(builder, ctx, info, [gid]);
  } catch (error) {
    if (error instanceof AppError) throw error;
    const known = fromDatabaseError(error);
    if (known?.code === 'NOT_FOUND') throw notFound(gid.typename);
    throw error;
  }
  if (node == null) throw notFound(gid.typename);
  return node;
}

builder.addScalarType('DateTime', DateTimeResolver);
builder.addScalarType('JSON', JSONResolver);
builder.addScalarType('JSONObject', JSONObjectResolver);

builder.queryType({});
builder.mutationType({});
