// Keyset cursors for every connection (docs/decisions.md, "Cursors").
//
// A cursor names the sort key of an item, the list it came from and the ordering, never a row:
// a page asks for the items after that key (`WHERE (a, id) > (…)`, written out for Prisma as
// `a > x OR (a = x AND id > y)`), so deleting, inserting or editing items between pages never
// ends a listing early or repeats an item. A cursor that does not decode, whose checksum does
// not match, or that belongs to another list or ordering is a BAD_REQUEST naming `after` or
// `before` (the REST shim renames it `page`).
import { createHash } from 'node:crypto';
import { Kind, type GraphQLResolveInfo } from 'graphql';
import { getModel, getRefFromModel, queryFromInfo } from '@pothos/plugin-prisma';
import { badRequest } from '../lib/errors.ts';
import { builder, MAX_PAGE_SIZE } from './builder.ts';
import type { Context } from './context.ts';

export type Dir = 'asc' | 'desc';
/** Sort fields in order, the last one unique (the id). */
export type Order = ReadonlyArray<readonly [string, Dir]>;
export type PageArgs = { first?: number | null; last?: number | null; after?: string | null; before?: string | null };

const VERSION = 1;
const CURSOR_SHAPE = /^([A-Za-z0-9_-]{1,4096})\.([A-Za-z0-9_-]{10})$/;

const checksum = (payload: string) => createHash('sha256').update(`docgraph-cursor:${payload}`).digest('base64url').slice(0, 10);
const signature = (list: string, order: Order) => `${list}|${order.map(([f, d]) => `${f}:${d}`).join(',')}`;

/** A Prisma `orderBy` (object or array of one-field objects) as an Order. */
export function orderOf(orderBy: unknown): Order {
  const parts = Array.isArray(orderBy) ? orderBy : orderBy ? [orderBy] : [];
  return parts.map((p) => {
    const entries = Object.entries(p as Record<string, unknown>);
    if (entries.length !== 1 || (entries[0][1] !== 'asc' && entries[0][1] !== 'desc')) {
      throw new Error(`keyset paging needs flat one-field orderBy entries, got ${JSON.stringify(p)}`);
    }
    return [entries[0][0], entries[0][1] as Dir] as const;
  });
}

function encodeValue(v: unknown): unknown {
  if (v instanceof Date) return { d: v.toISOString() };
  if (v === null || typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') return v;
  if (typeof v === 'bigint') return { n: v.toString() };
  throw new Error(`cannot put a ${typeof v} in a cursor`);
}

function decodeValue(v: unknown): unknown {
  if (v === null || typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') return v;
  if (v && typeof v === 'object' && typeof (v as { d?: unknown }).d === 'string') {
    const date = new Date((v as { d: string }).d);
    if (Number.isNaN(date.getTime())) throw new Error('bad date');
    return date;
  }
  if (v && typeof v === 'object' && typeof (v as { n?: unknown }).n === 'string') return BigInt((v as { n: string }).n);
  throw new Error('bad value');
}

export function encodeCursor(list: string, order: Order, values: unknown[]): string {
  const payload = JSON.stringify([VERSION, signature(list, order), values.map(encodeValue)]);
  return `${Buffer.from(payload).toString('base64url')}.${checksum(payload)}`;
}

/** The sort key a cursor of `list` in `order` names; BAD_REQUEST naming `field` otherwise. */
export function decodeCursor(cursor: string, list: string, order: Order, field: string): unknown[] {
  const parsed = parseCursor(cursor, field);
  if (parsed[1] !== signature(list, order)) throw badRequest(field, 'this cursor belongs to another list or ordering');
  if (parsed[2].length !== order.length) throw badRequest(field, 'this cursor belongs to another list or ordering');
  try {
    return parsed[2].map(decodeValue);
  } catch {
    throw badRequest(field, 'not a cursor (malformed)');
  }
}

/**
 * What can be checked of a cursor before the list's ordering is known: its shape, checksum,
 * format and list. A page that reads no rows (only `totalCount` selected) still refuses a bad one.
 */
export function checkCursor(cursor: string, list: string, field: string): void {
  const parsed = parseCursor(cursor, field);
  if (typeof parsed[1] !== 'string' || !parsed[1].startsWith(`${list}|`)) throw badRequest(field, 'this cursor belongs to another list or ordering');
}

function parseCursor(cursor: string, field: string): [number, unknown, unknown[]] {
  const m = CURSOR_SHAPE.exec(cursor);
  if (!m) throw badRequest(field, 'not a cursor (malformed or truncated)');
  const payload = Buffer.from(m[1], 'base64url').toString('utf8');
  if (checksum(payload) !== m[2]) throw badRequest(field, 'not a cursor (damaged or altered)');
  let parsed: unknown;
  try {
    parsed = JSON.parse(payload);
  } catch {
    throw badRequest(field, 'not a cursor (malformed)');
  }
  if (!Array.isArray(parsed) || parsed.length !== 3 || parsed[0] !== VERSION || !Array.isArray(parsed[2])) {
    throw badRequest(field, 'not a cursor (unknown format)');
  }
  return parsed as [number, unknown, unknown[]];
}

/** Prisma `where` for the items strictly after (or before) `values` in `order`. */
export function keysetWhere(order: Order, values: unknown[], backward: boolean): Record<string, unknown> {
  return {
    OR: order.map(([field, dir], i) => {
      const clause: Record<string, unknown> = {};
      for (let j = 0; j < i; j++) clause[order[j][0]] = values[j];
      const up = (dir === 'asc') !== backward;
      clause[field] = { [up ? 'gt' : 'lt']: values[i] };
      return clause;
    }),
  };
}

function compareValues(a: unknown, b: unknown): number {
  const x = a instanceof Date ? a.getTime() : a;
  const y = b instanceof Date ? b.getTime() : b;
  if (x === y) return 0;
  if (x == null) return -1;
  if (y == null) return 1;
  return (x as never) < (y as never) ? -1 : 1;
}

function compareKeys(order: Order, a: unknown[], b: unknown[]): number {
  for (let i = 0; i < order.length; i++) {
    const c = compareValues(a[i], b[i]);
    if (c !== 0) return order[i][1] === 'asc' ? c : -c;
  }
  return 0;
}

export type PageOptions = { maxSize?: number; defaultSize?: number };

/**
 * One page request of one list: validates `first`/`last` (0 … maxSize), decodes `after`/`before`
 * against the list's name and ordering, and builds the page from rows fetched one past its size.
 */
export class Keyset {
  readonly size: number;
  readonly backward: boolean;
  private order?: Order;
  private valuesOf: (row: any) => unknown[] = (row) => this.order!.map(([f]) => row[f]);

  constructor(
    readonly list: string,
    readonly args: PageArgs,
    { maxSize = MAX_PAGE_SIZE, defaultSize = 20 }: PageOptions = {},
  ) {
    for (const name of ['first', 'last'] as const) {
      const v = args[name];
      if (v == null) continue;
      if (!Number.isInteger(v) || v < 0) throw badRequest(name, 'must be a non-negative integer');
      if (v > maxSize) throw badRequest(name, `at most ${maxSize} items per page (asked for ${v})`);
    }
    if (args.first != null && args.last != null) throw badRequest('last', 'use either first or last, not both');
    if (args.after != null && args.before != null) throw badRequest('before', 'use either after or before, not both');
    // Checked here, not only when rows are read: a count-only page would otherwise take any text.
    const cursor = args.before ?? args.after;
    if (cursor != null) checkCursor(cursor, list, this.cursorField());
    this.backward = args.last != null || (args.before != null && args.first == null);
    this.size = args.first ?? args.last ?? defaultSize;
  }

  private cursorField() {
    return this.args.before != null ? 'before' : 'after';
  }

  /** The decoded sort key of the cursor argument, if any. */
  private key(order: Order): unknown[] | undefined {
    this.order = order;
    const cursor = this.args.before ?? this.args.after;
    if (cursor == null) return undefined;
    return decodeCursor(cursor, this.list, order, this.cursorField());
  }

  /**
   * findMany arguments for the page: the caller's `where` and `orderBy`, the node selection
   * (`selection`: `{select}`/`{include}` from the plan) and the keyset condition.
   */
  prisma<Q extends { where?: unknown; orderBy: unknown }>(query: Q, selection: Record<string, unknown> = {}): Record<string, unknown> {
    const order = orderOf(query.orderBy);
    const key = this.key(order);
    const where = key ? (query.where ? { AND: [query.where, keysetWhere(order, key, this.direction())] } : keysetWhere(order, key, this.direction())) : query.where;
    const sel = withOrderColumns(selection, order);
    return {
      ...query,
      ...sel,
      ...(where ? { where } : {}),
      orderBy: this.backward ? order.map(([f, d]) => ({ [f]: d === 'asc' ? 'desc' : 'asc' })) : query.orderBy,
      take: this.size + 1,
    };
  }

  /** For `before` pages read forwards (`before` with `first`), the cut runs the other way. */
  private direction() {
    return this.args.before != null;
  }

  /** How a returned row's sort key is read (by default: its order columns). */
  keyOf<T>(valuesOf: (row: T) => unknown[]) {
    this.valuesOf = valuesOf as (row: any) => unknown[];
  }

  /** The page of an in-memory list: sorted here by `valuesOf` in `order`. */
  array<T>(items: readonly T[], order: Order, valuesOf: (item: T) => unknown[]): T[] {
    this.valuesOf = valuesOf as (row: any) => unknown[];
    const key = this.key(order);
    const sorted = items.map((item) => ({ item, k: valuesOf(item) })).sort((a, b) => compareKeys(order, a.k, b.k));
    let rows = sorted;
    if (key) {
      const before = this.args.before != null;
      rows = rows.filter((r) => (before ? compareKeys(order, r.k, key) < 0 : compareKeys(order, r.k, key) > 0));
    }
    if (this.backward) rows = rows.slice(Math.max(0, rows.length - this.size - 1)).reverse();
    else rows = rows.slice(0, this.size + 1);
    return rows.map((r) => r.item);
  }

  /** The connection from rows fetched by `prisma()` or `array()` (one past the page size). */
  connection<T>(rows: readonly T[], totalCount?: number | (() => number | Promise<number>)) {
    const more = rows.length > this.size;
    let page = rows.slice(0, this.size);
    if (this.backward) page = page.reverse();
    const order = this.order;
    const edges = page.map((node) => ({ cursor: order ? encodeCursor(this.list, order, this.valuesOf(node)) : '', node }));
    const hasCursor = this.args.after != null || this.args.before != null;
    return {
      edges,
      totalCount,
      pageInfo: {
        hasNextPage: this.backward ? this.args.before != null : more,
        hasPreviousPage: this.backward ? more : hasCursor,
        startCursor: edges[0]?.cursor ?? null,
        endCursor: edges.at(-1)?.cursor ?? null,
      },
    };
  }
}

/** Make sure a `{select}` selection reads the sort columns the cursors are made of. */
function withOrderColumns(selection: Record<string, unknown>, order: Order): Record<string, unknown> {
  const select = selection.select as Record<string, unknown> | undefined;
  if (!select) return selection;
  return { ...selection, select: { ...select, ...Object.fromEntries(order.map(([f]) => [f, true])) } };
}

// ------------------------------------------------------------------ connection fields

const NODE_PATHS = [[{ name: 'nodes' }], [{ name: 'edges' }, { name: 'node' }]];

/** Whether the document asks this connection for nothing but its count. */
function totalCountOnly(info: GraphQLResolveInfo): boolean {
  return info.fieldNodes.every((n) =>
    (n.selectionSet?.selections ?? []).every((s) => s.kind === Kind.FIELD && (s.name.value === 'totalCount' || s.name.value === '__typename')),
  );
}

const countConnection = {
  fields: (c: any) => ({
    totalCount: c.int({
      description: 'Number of items in the whole list (every page), with the same filters. REST: `count`.',
      resolve: (p: { totalCount?: number | (() => number | Promise<number>) }) => (typeof p.totalCount === 'function' ? p.totalCount() : p.totalCount),
    }),
  }),
};

type KeysetFieldOptions = PageOptions & {
  /** The node type: a Prisma model name or an object ref (prismaObject / prismaNode / plain). */
  type: any;
  /** Names the list in its cursors: a cursor of another list is refused. */
  list: string;
  description?: string;
  args?: Record<string, any>;
  /** Prisma-backed node types: the plan's node selection is handed to `page.prisma()`. */
  prisma?: boolean;
  resolve: (page: KeysetPage, parent: any, args: any, ctx: Context, info: GraphQLResolveInfo) => Promise<readonly unknown[]> | readonly unknown[];
  totalCount?: (parent: any, args: any, ctx: Context, info: GraphQLResolveInfo) => number | Promise<number>;
  [key: string]: unknown;
};

/** A Keyset bound to the node selection of the field being resolved. */
export class KeysetPage extends Keyset {
  selection: Record<string, unknown> = {};
  override prisma<Q extends { where?: unknown; orderBy: unknown }>(query: Q, selection = this.selection) {
    return super.prisma(query, selection);
  }
}

const typeNameOf = (type: any): string => {
  const ref = typeof type === 'string' ? getRefFromModel(type, builder) : type;
  return builder.configStore.getTypeConfig(ref).name;
};

/** Descriptions of the connection and edge types of a list of `type` (the generated `…Connection`/`…Edge`). */
function pageTypeOptions(type: any): { connection: { description?: string }; edge: { description?: string } } {
  let name: string;
  try {
    name = typeNameOf(type);
  } catch {
    return { connection: {}, edge: {} };
  }
  return {
    connection: { description: `A page of a list of \`${name}\`: \`nodes\` (or \`edges\` with cursors), \`pageInfo\` to ask for the next page, and \`totalCount\`.` },
    edge: { description: `A \`${name}\` of a page and its cursor.` },
  };
}

/**
 * A connection whose page is read by `resolve(page, …)`: Prisma lists call
 * `findMany(page.prisma({ where, orderBy }))`, in-memory lists return `page.array(items, order, key)`.
 */
export function keysetConnection(t: any, { type, list, maxSize, defaultSize, resolve, totalCount, prisma, ...options }: KeysetFieldOptions, connectionOptions: Record<string, unknown> = {}) {
  const isModel = prisma ?? (typeof type === 'string' || !!type?.modelName);
  const ref = typeof type === 'string' ? getRefFromModel(type, builder) : type;
  const pageTypes = pageTypeOptions(ref);
  return t.connection(
    {
      ...options,
      type: ref,
      resolve: async (parent: unknown, args: PageArgs, ctx: Context, info: GraphQLResolveInfo) => {
        const page = new KeysetPage(list, args, { maxSize, defaultSize });
        const count = totalCount && (() => totalCount(parent, args, ctx, info));
        if (totalCountOnly(info) && count) return page.connection([], count);
        if (isModel) {
          page.selection = (await queryFromInfo({ context: ctx, info, typeName: typeNameOf(type), paths: NODE_PATHS as never, awaitSelections: true } as never)) as Record<string, unknown>;
        }
        const rows = await resolve(page, parent, args, ctx, info);
        return page.connection(rows, count);
      },
    },
    { ...pageTypes.connection, ...countConnection, ...connectionOptions },
    pageTypes.edge,
  );
}

type KeysetRelationOptions = PageOptions & {
  type?: any;
  list: string;
  description?: string;
  args?: Record<string, any>;
  /** The relation's filter and order (the access filter too: this runs while the parent is planned). */
  query: (args: any, ctx: Context) => { where?: Record<string, unknown>; orderBy: unknown };
  [key: string]: unknown;
};

/**
 * A connection over a Prisma relation, folded into the parent's query like the plugin's
 * `relatedConnection` (no statement per parent), with keyset cursors.
 */
export function keysetRelation(t: any, relation: string, { type, list, maxSize, defaultSize, query, ...options }: KeysetRelationOptions) {
  const relationModel = getModel(t.model, builder).fields.find((f) => f.name === relation)?.type;
  if (!relationModel) throw new Error(`keysetRelation: ${t.model}.${relation} is not a relation`);
  const ref = type ?? getRefFromModel(relationModel, builder);
  const pageTypes = pageTypeOptions(ref);
  return t.connection(
    {
      ...options,
      type: ref,
      select: (args: PageArgs, ctx: Context, nestedSelection: any) => {
        const page = new Keyset(list, args, { maxSize, defaultSize });
        const base = query(args, ctx);
        const { select: _s, include: _i, ...findArgs } = page.prisma(base);
        const nested = nestedSelection(findArgs, { getType: () => typeNameOf(ref), paths: NODE_PATHS });
        const withColumns = withOrderColumns(nested, orderOf(base.orderBy));
        return { [relation]: withColumns, _count: { select: { [relation]: base.where ? { where: base.where } : true } } };
      },
      resolve: (parent: any, args: PageArgs, ctx: Context) => {
        const page = new Keyset(list, args, { maxSize, defaultSize });
        page.prisma(query(args, ctx)); // records the order (and re-checks the cursor)
        return page.connection(parent[relation] ?? [], parent._count?.[relation]);
      },
    },
    { ...pageTypes.connection, ...countConnection },
    pageTypes.edge,
  );
}
