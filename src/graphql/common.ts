// Shared GraphQL pieces: the error-code enum, role enums, and small helpers every area uses.
import DataLoader from 'dataloader';
import { builder } from './builder.ts';
import { ERROR_CODES, HTTP_STATUS, notFound, type ErrorCode } from '../lib/errors.ts';
import { ROLES, type Role } from '../auth/roles.ts';
import type { Context } from './context.ts';
import type { User } from '../generated/prisma/client.ts';

export const ErrorCodeEnum = builder.enumType('ErrorCode', {
  description: 'Codes of expected failures, shared with the REST shim (mapped to HTTP statuses). Found in `errors[].extensions.code`.',
  values: describeValues(ERROR_CODES, {
    UNAUTHENTICATED: 'No valid API token: it is missing, unknown or revoked.',
    FORBIDDEN: 'You may see the object but your role does not allow this.',
    NOT_FOUND: 'The object does not exist, or you may not see it.',
    BAD_REQUEST: 'An argument or input field is invalid; the message names it (in REST, the query or body field).',
    CONFLICT: 'The object is not in a state that allows this (a merged change request, a locked space, a space not deleted…).',
    PRECONDITION_FAILED: 'Another object stands in the way (such as a space still published in a site when moving it); the message says which.',
    RATE_LIMITED: 'Too many requests: slow down and retry later.',
    SERVICE_UNAVAILABLE: 'The service is briefly unable to answer (database unavailable or overloaded): retry in a few seconds (REST sends `Retry-After`).',
  } satisfies Record<ErrorCode, string>, (code) => ` REST: HTTP ${HTTP_STATUS[code]}.`),
});

export const RoleEnum = builder.enumType('Role', {
  description: 'Content roles, lowest to highest: read < comment < edit < review < create < admin.',
  values: describeValues(ROLES, {
    read: 'See the content.',
    comment: 'Read, and comment.',
    edit: 'Comment, and edit content (change requests, and the space itself unless it is locked).',
    review: 'Edit, and review and merge change requests.',
    create: 'Review, and create spaces, collections and OpenAPI specs in the organization.',
    admin: 'Everything: also members, teams, invite links, roles and settings.',
  } satisfies Record<Role, string>),
});

/** Enum values with their descriptions (`suffix` appends per-value text, e.g. the HTTP status). */
function describeValues<V extends string>(values: readonly V[], descriptions: Record<V, string>, suffix: (value: V) => string = () => '') {
  return Object.fromEntries(values.map((v) => [v, { description: descriptions[v] + suffix(v) }])) as Record<V, { description: string }>;
}

/**
 * A per-request DataLoader, created on first use. `key` must be unique per loader kind.
 * Use it for relations plugin-prisma cannot fold (counts, computed joins).
 */
export function loader<K, V>(ctx: Context, key: string, batch: (keys: readonly K[]) => Promise<ReadonlyArray<V | Error>>): DataLoader<K, V> {
  let l = ctx.loaders.get(key) as DataLoader<K, V> | undefined;
  if (!l) {
    l = new DataLoader<K, V>(batch);
    ctx.loaders.set(key, l);
  }
  return l;
}

/** Group rows by a key and answer in the order of `keys` (for DataLoader batch functions). */
export function groupByKey<T, K>(keys: readonly K[], rows: T[], keyOf: (row: T) => K): T[][] {
  const m = new Map<K, T[]>();
  for (const r of rows) {
    const k = keyOf(r);
    const list = m.get(k);
    if (list) list.push(r);
    else m.set(k, [r]);
  }
  return keys.map((k) => m.get(k) ?? []);
}

/** Count rows per key (from a Prisma groupBy result) in the order of `keys`. */
export function countsByKey<K>(keys: readonly K[], rows: Array<{ key: K; count: number }>): number[] {
  const m = new Map(rows.map((r) => [r.key, r.count]));
  return keys.map((k) => m.get(k) ?? 0);
}

/** Deleted-or-not payload for idempotent deletes: REST answers 205 when deleted, 204 when absent. */
export const DeletePayload = builder.simpleObject('DeletePayload', {
  description: 'Result of an idempotent delete.',
  fields: (t) => ({
    deleted: t.boolean({ description: 'True when something was deleted, false when it did not exist.' }),
    deletedId: t.id({
      nullable: true,
      description: 'Id of the object the request named, deleted or not; null for objects without an id of their own (an OpenAPI spec is named by its slug).',
    }),
  }),
});

/** GraphQL gives `undefined` for omitted input fields; strict zod schemas want them absent. */
export function dropUndefined<T extends Record<string, unknown>>(obj: T): Partial<T> {
  return Object.fromEntries(Object.entries(obj).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/**
 * Rows by id through a per-request DataLoader: one statement per request tick and `key`, null for
 * ids that do not exist. `fetch` gets the distinct ids of the batch.
 */
export function loadById<T extends { id: string }>(ctx: Context, key: string, id: string, fetch: (ids: string[]) => Promise<T[]>): Promise<T | null> {
  return byIdLoader(ctx, key, fetch).load(id);
}

function byIdLoader<T extends { id: string }>(ctx: Context, key: string, fetch: (ids: string[]) => Promise<T[]>) {
  return loader<string, T | null>(ctx, key, async (ids) => {
    const byId = new Map((await fetch([...ids])).map((r) => [r.id, r]));
    return ids.map((i) => byId.get(i) ?? null);
  });
}

const userLoader = (ctx: Context) => byIdLoader(ctx, 'user.byId', (ids) => ctx.prisma.user.findMany({ where: { id: { in: ids } } }));

export const loadUserById = (ctx: Context, id: string) => userLoader(ctx).load(id);

/** Seed the request's user loader with users read alongside other rows (no second statement). */
export function primeUsers(ctx: Context, users: Iterable<User>) {
  const l = userLoader(ctx);
  for (const u of users) l.prime(u.id, u);
}

export const loadSpaceById = (ctx: Context, id: string) => loadById(ctx, 'space.byId', id, (ids) => ctx.prisma.space.findMany({ where: { id: { in: ids } } }));

// ------------------------------------------------------------------ the organization of an object

/** Description of the optional `organizationId` of inputs whose object has its own id. */
export const OWN_ORGANIZATION_ID =
  "Optional: the object's own organization when omitted. When given (REST paths give theirs), the object must belong to it, else NOT_FOUND.";

const OWNER = {
  site: (ctx: Context, id: string) => ctx.prisma.site.findUnique({ where: { id }, select: { organizationId: true } }),
  team: (ctx: Context, id: string) => ctx.prisma.team.findUnique({ where: { id }, select: { organizationId: true } }),
  samlProvider: (ctx: Context, id: string) => ctx.prisma.samlProvider.findUnique({ where: { id }, select: { organizationId: true } }),
  translationSettings: (ctx: Context, id: string) => ctx.prisma.translationSettings.findUnique({ where: { id }, select: { organizationId: true } }),
  linkInvite: (ctx: Context, id: string) => ctx.prisma.linkInvite.findUnique({ where: { id }, select: { organizationId: true } }),
} as const;

/**
 * The organization a mutation on an object acts in: `given` when the caller named one (REST paths
 * do, so an object under another organization's path stays NOT_FOUND), else the object's own.
 * Null when none was given and the object does not exist (idempotent deletes answer `deleted:
 * false`; other mutations NOT_FOUND).
 */
export async function organizationOf(ctx: Context, given: string | number | null | undefined, model: keyof typeof OWNER, id: string | number): Promise<string | null> {
  if (given != null) return String(given);
  ctx.access.requireViewer();
  return (await OWNER[model](ctx, String(id)))?.organizationId ?? null;
}

/** `organizationOf`, NOT_FOUND (`what`) when the object does not exist. */
export async function requireOrganizationOf(ctx: Context, given: string | number | null | undefined, model: keyof typeof OWNER, id: string | number, what: string): Promise<string> {
  const org = await organizationOf(ctx, given, model, id);
  if (org === null) throw notFound(what);
  return org;
}
