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

/** The budget of a GraphQL request (docs/decisions.md, "Page sizes"). */
export const GRAPHQL_LIMITS = { complexity: 100_000, depth: 24, breadth: 400 };

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
    nodesOnConnection: {
      description: 'The items of this page, in order (the `node` of each of `edges`). REST lists answer these as `items`.',
    },
    // Descriptions of the generated Relay types, fields and arguments (schema descriptions test).
    nodeTypeOptions: {
      description:
        'An object with an id: the prefixed id REST uses (`space_…`, `org_…`), which `node(id:)` and `nodes(ids:)` fetch whatever its type.',
    },
    idFieldOptions: { description: 'The object\'s id, the same string REST uses; its prefix names the type.' },
    nodeQueryOptions: {
      description: 'The object with this id, whatever its type (ask for its fields with `... on Space { … }`). NOT_FOUND when it does not exist or you may not see it.',
      args: { id: { description: 'A prefixed id such as `space_…` (the id REST uses).' } },
      resolve: (_root, args, ctx, info) => resolveNodeOrNotFound(ctx, info, args.id),
    },
    nodesQueryOptions: {
      description: 'The objects with these ids, in the order asked; an id that names nothing you may see is null with its own NOT_FOUND error at `["nodes", i]`.',
      args: { ids: { description: 'Prefixed ids such as `space_…`, of any types.' } },
      // One promise per id: a missing id is null with its own error at ["nodes", i].
      resolve: (_root, args, ctx, info) => args.ids.map((id) => resolveNodeOrNotFound(ctx, info, id)),
    },
    pageInfoTypeOptions: {
      description: 'Where a page sits in its list: whether more items follow or precede it, and the cursors to ask for them.',
    },
    hasNextPageFieldOptions: { description: 'True when items follow this page: ask for them with `after: endCursor`. REST: `next` is present.' },
    hasPreviousPageFieldOptions: { description: 'True when items precede this page: ask for them with `last: n, before: startCursor`.' },
    startCursorFieldOptions: { description: 'Cursor of the first item of the page; null when the page is empty.' },
    endCursorFieldOptions: { description: 'Cursor of the last item of the page (pass it as `after` for the next page); null when the page is empty. REST: `next.page`.' },
    pageInfoFieldOptions: { description: 'Position of this page in the list, with the cursors to ask for the next or previous page.' },
    edgesFieldOptions: { description: 'The items of this page with their cursors, in order (use `nodes` when you need no cursors).' },
    nodeFieldOptions: { description: 'The item at this position of the list.' },
    cursorFieldOptions: {
      description: 'Opaque cursor of this item: pass it as `after` (or `before`) to continue the list from here. Only valid for this list and ordering.',
    },
    firstArgOptions: {
      description: 'Page size, counted from the start of the list or from `after`: 0 to 1,000 items (BAD_REQUEST above). Default 20 on most lists. REST: `limit`.',
    },
    afterArgOptions: { description: 'A cursor (`endCursor`, or an edge\'s `cursor`) of this list: the page starts after that item. REST: `page`.' },
    lastArgOptions: {
      description: 'Page size counted back from the end of the list or from `before`: 0 to 1,000 items. Not with `first`.',
    },
    beforeArgOptions: { description: 'A cursor (`startCursor`, or an edge\'s `cursor`) of this list: the page ends before that item. Not with `after`.' },
    defaultConnectionTypeOptions: {
      description: 'A page of a list: its items (`nodes`, or `edges` with cursors), `pageInfo` to ask for the next page, and `totalCount`.',
    },
    defaultEdgeTypeOptions: { description: 'An item of a page and its cursor.' },
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
    // (≤ MAX_PAGE_SIZE): they run without the budget, so every legal REST request answers. The
    // REST router (and trusted documents) mark the request record.
    limit: (ctx: Context) => (ctx.requestRecord?.fixedDocument ? {} : GRAPHQL_LIMITS),
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

builder.queryType({
  description: 'Entry points for reading: `viewer` (you), objects by id (`node`, `nodes`) and the top-level lists. Every REST GET runs one of these.',
});
builder.mutationType({
  description: 'Every change, one field per documented operation; each runs in one transaction and takes one `input` argument. Failures carry an `ErrorCode` in `errors[].extensions.code`.',
});
