// The REST shim: a route table where each /v1 operation runs a GraphQL document on the same
// schema and context, so REST and GraphQL can never disagree on data, validation or access.
// Documents are parsed and validated once, when the table is built.
import Router from 'find-my-way';
import { execute, parse, validate, type DocumentNode, type ExecutionArgs, type ExecutionResult, type GraphQLSchema, GraphQLError } from 'graphql';
import { z } from 'zod';
import { AppError, RETRY_AFTER_HEADER, toPublicError, zodToAppError, errorBody } from '../lib/errors.ts';
import { requireCleanStrings } from '../lib/input-hygiene.ts';
import { ID_PREFIXES, isUuid, type IdType } from '../lib/ids.ts';
import type { Context } from '../graphql/context.ts';

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export type RestInput<Q = Record<string, unknown>, B = unknown> = {
  params: Record<string, string>;
  query: Q;
  body: B;
};

/** One row of the route table. */
export type RestRoute<Q = any, B = any> = {
  method: Method;
  /** find-my-way path, e.g. `/v1/orgs/:organizationId/members`. */
  path: string;
  /** The GraphQL operation this route runs. */
  document: string;
  /**
   * A published read (src/auth/audience.ts): runs without a token (anonymous) and with a
   * `published`-scoped token; its document's root fields are published reads only.
   */
  published?: true;
  /** Query-string schema (strings in, typed values out). Unknown keys are rejected; a route without one refuses every key. */
  query?: z.ZodType<Q>;
  /** Body schema. Omit for operations without a body (any body is then ignored). */
  body?: z.ZodType<B>;
  /** GraphQL variables from the validated request. */
  variables: (input: RestInput<Q, B>) => Record<string, unknown>;
  /** REST body from the GraphQL data (ignored for 204/205). */
  result?: (data: any, input: RestInput<Q, B>) => unknown;
  /** Success status: fixed, or computed from the data (e.g. 205 deleted / 204 absent). */
  status?: number | ((data: any, input: RestInput<Q, B>) => number);
  /** Domain input fields the contract names otherwise (`spaceIds` → `spaces`), for 400 messages. */
  fieldNames?: Record<string, string>;
  /**
   * How /v1/openapi.json describes a route the official document lacks (rest/openapi-document.ts):
   * its operationId and summary (else derived from the path), and its success body: a zod
   * schema, or the name of a schema of the official document's components.
   */
  openapi?: { operationId?: string; summary?: string; response?: z.ZodType | string; /** The success status to document when `status` is computed (a delete's 205). */ status?: number };
  /** Success answers the official document lacks (an import's 202), added to /v1/openapi.json beside its own. */
  moreResponses?: Record<number, { description: string; response: z.ZodType; headers?: Record<string, { description: string; schema: { type: string } }> }>;
};

export type RestResponse = { status: number; body?: unknown; headers?: Record<string, string> };

type CompiledRoute = RestRoute & { doc: DocumentNode };

export const DEFAULT_PAGE_SIZE = 100;

// ------------------------------------------------------------------ query-string helpers

/** The query schema of a route that declares none: every key is unknown (a 400 naming it). */
const NO_QUERY = z.strictObject({});

const boolString = z.enum(['true', 'false']).transform((v) => v === 'true');
export const q = {
  bool: () => boolString.optional(),
  int: (min: number, max: number) => z.coerce.number().int().min(min).max(max).optional(),
  string: (max = 1024) => z.string().max(max).optional(),
  /** Repeated keys (`?a=1&a=2`) arrive as an array; one key as a string. */
  array: () =>
    z
      .union([z.string(), z.array(z.string())])
      .transform((v) => (Array.isArray(v) ? v : [v]))
      .optional(),
};

/** `page` (cursor) and `limit` (0–1000), the standard list parameters. */
export const listQueryShape = { page: z.string().max(512).optional(), limit: q.int(0, 1000) };
export const listQuery = z.strictObject(listQueryShape);

export function pageVariables(query: { page?: string; limit?: number }) {
  return { first: query.limit ?? DEFAULT_PAGE_SIZE, after: query.page ?? null };
}

/** Content-reading flags shared by the content operations. */
export const contentQueryShape = { metadata: q.bool(), computed: q.bool() };

// ------------------------------------------------------------------ list envelope

export type ConnectionData<N> = {
  totalCount: number;
  pageInfo: { hasNextPage: boolean; endCursor: string | null };
  nodes: N[];
};

/** `{next?: {page}, count, items}`; `next` is absent on the last page. */
export function listEnvelope<N>(connection: ConnectionData<N>, mapItem: (node: N) => unknown, extra: Record<string, unknown> = {}) {
  const body: Record<string, unknown> = { items: connection.nodes.map(mapItem), count: connection.totalCount, ...extra };
  if (connection.pageInfo.hasNextPage && connection.pageInfo.endCursor) body.next = { page: connection.pageInfo.endCursor };
  return body;
}

/** The selection every list document uses for its connection. */
export const CONNECTION_FIELDS = 'totalCount pageInfo { hasNextPage endCursor }';

// ------------------------------------------------------------------ representation helpers

/**
 * Drop null/undefined keys (REST omits absent optional fields) except those listed, which the
 * contract types as "X or null" and requires.
 */
export function compact<T extends Record<string, unknown>>(obj: T, keepNull: string[] = []): T {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(obj)) {
    if (v === null || v === undefined) {
      if (keepNull.includes(k)) out[k] = null;
      continue;
    }
    out[k] = v;
  }
  return out as T;
}

/** GraphQL enum names use `_` where the contract's values use `-` (`share_link` ↔ `share-link`). */
export const restEnum = (v: string | null | undefined) => (v == null ? v : v.replace(/_/g, '-'));
export const gqlEnum = (v: string | null | undefined) => (v == null ? v : v.replace(/-/g, '_'));

/**
 * A contract enum in a REST body or query: accepts the contract's spelling (`share-link`) and
 * hands the domain the model's (`share_link`). `values` are the domain's (model) values; the 400
 * for a bad value lists the contract's. Use it via `DomainSchema.extend({ field: contractEnum(…) })`.
 */
export function contractEnum<const T extends readonly [string, ...string[]]>(values: T) {
  const contract = values.map((v) => v.replace(/_/g, '-')) as unknown as [string, ...string[]];
  return z.enum(contract).transform((v) => gqlEnum(v) as T[number]);
}

// ------------------------------------------------------------------ path parameters

/** A path parameter's rule: its label (for the 404) and the one pattern a value must match. */
export type PathParam = { label: string; pattern: RegExp; valid: (value: string) => boolean };
const byPattern = (label: string, pattern: RegExp): PathParam => ({ label, pattern, valid: (v) => pattern.test(v) });
const ID_BODY = '[0-9A-Za-z]{1,64}';
const idOf = (type: IdType, label: string) => byPattern(label, new RegExp(`^${ID_PREFIXES[type]}_${ID_BODY}$`));

/**
 * Every path parameter of the table, with the shape a value must have to name an object. A
 * value of any other shape is a 404 before any lookup; a route whose path uses a parameter not
 * listed here fails at start-up. The pattern is also the parameter's schema in /v1/openapi.json.
 */
export const PATH_PARAMS: Record<string, PathParam> = {
  organizationId: idOf('Organization', 'Organization'),
  inviteId: idOf('LinkInvite', 'Invite'),
  userId: idOf('User', 'User'),
  teamId: idOf('Team', 'Team'),
  collectionId: idOf('Collection', 'Collection'),
  spaceId: idOf('Space', 'Space'),
  pageId: idOf('Page', 'Page'),
  fileId: idOf('File', 'File'),
  /** A change request's id, or its number in the space. */
  changeRequestId: byPattern('Change request', new RegExp(`^(?:${ID_PREFIXES.ChangeRequest}_${ID_BODY}|[1-9]\\d{0,9})$`)),
  commentId: idOf('Comment', 'Comment'),
  commentReplyId: idOf('CommentReply', 'Comment reply'),
  siteId: idOf('Site', 'Site'),
  siteSectionId: idOf('SiteSection', 'Site section'),
  siteSectionGroupId: idOf('SiteSectionGroup', 'Site section group'),
  siteSpaceId: idOf('SiteSpace', 'Site space'),
  shareLinkId: idOf('ShareLink', 'Share link'),
  siteRedirectId: idOf('SiteRedirect', 'Site redirect'),
  samlProviderId: idOf('SamlProvider', 'SAML provider'),
  translationSettingsId: idOf('TranslationSettings', 'Translation settings'),
  // The domain validates the slug itself (a PUT to a bad slug is a 400 naming `specSlug`).
  specSlug: byPattern('OpenAPI specification', /^[A-Za-z0-9._-]{1,100}$/),
  versionId: byPattern('OpenAPI specification version', idOf('OpenApiSpecVersion', '').pattern),
  // Any segment: the domain validates it, so a bad one is a 400 naming `emailDomain`, not a 404.
  emailDomain: byPattern('Email domain', /^.+$/su),
  /** Audit events carry UUIDs, as the contract documents them. */
  auditEventId: byPattern('Audit event', /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/),
  webhookId: idOf('Webhook', 'Webhook'),
  deliveryId: idOf('WebhookDelivery', 'Webhook delivery'),
  importRunId: idOf('ImportJob', 'Import run'),
};

// ------------------------------------------------------------------ the router

export class RestRouter {
  private router = Router({ ignoreTrailingSlash: true, maxParamLength: 500 });
  private paths = new Map<string, Set<Method>>();
  readonly routes: CompiledRoute[] = [];

  constructor(private readonly schema: GraphQLSchema) {}

  add(routes: RestRoute[]) {
    for (const route of routes) {
      const doc = parse(route.document);
      const errors = validate(this.schema, doc);
      if (errors.length) throw new Error(`REST route ${route.method} ${route.path}: invalid GraphQL document: ${errors[0].message}`);
      for (const m of route.path.matchAll(/:(\w+)/g)) {
        if (!PATH_PARAMS[m[1]]) throw new Error(`REST route ${route.method} ${route.path}: path parameter :${m[1]} has no rule in PATH_PARAMS`);
      }
      const compiled = { ...route, doc };
      this.routes.push(compiled);
      this.router.on(route.method, route.path, () => {}, compiled);
      const methods = this.paths.get(route.path) ?? new Set();
      methods.add(route.method);
      this.paths.set(route.path, methods);
    }
    return this;
  }

  /**
   * Find the route for a raw (percent-encoded, never normalised) path. `undefined` with
   * `allowed` set means 405; with `notFound` set, the route exists but a path parameter cannot
   * name any object (wrong id prefix or shape): 404 before any lookup. HEAD runs the GET route.
   */
  match(method: string, path: string): { route?: CompiledRoute; params?: Record<string, string>; allowed?: string[]; notFound?: string } {
    const found = this.router.find((method === 'HEAD' ? 'GET' : method) as never, path);
    if (found) {
      const params = found.params as Record<string, string>;
      for (const [name, value] of Object.entries(params)) {
        const rule = PATH_PARAMS[name];
        if (!rule) throw new Error(`REST path parameter :${name} has no rule in PATH_PARAMS`);
        if (!rule.valid(value)) return { notFound: `${rule.label} not found` };
      }
      return { route: found.store as CompiledRoute, params };
    }
    const allowed: string[] = [];
    for (const m of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as Method[]) {
      if (m !== method && this.router.find(m as never, path)) allowed.push(m);
    }
    if (allowed.includes('GET')) allowed.push('HEAD');
    return allowed.length ? { allowed } : {};
  }

  /**
   * Run one REST request. `rawBody` is the unparsed body text (may be empty); `searchParams`
   * the query string. Never throws: every failure becomes an error response.
   */
  async handle(
    route: CompiledRoute,
    params: Record<string, string>,
    searchParams: URLSearchParams,
    rawBody: string,
    ctx: Context,
    /** Runs the route's document instead of `execute` (the edge's published cache for published reads). */
    run: (args: ExecutionArgs) => Promise<ExecutionResult> = async (args) => execute(args),
  ): Promise<RestResponse> {
    try {
      // find-my-way has already percent-decoded the parameters (once).
      const input: RestInput = { params, query: {}, body: undefined };

      const queryObj = queryToObject(searchParams);
      requireCleanStrings(queryObj);
      input.query = parseOrThrow(route.query ?? NO_QUERY, queryObj);

      if (route.body) {
        let json: unknown = {};
        if (rawBody.trim() !== '') {
          try {
            json = JSON.parse(rawBody);
          } catch {
            throw new AppError('BAD_REQUEST', 'body: malformed JSON', 'body');
          }
        }
        requireCleanStrings(json);
        input.body = parseOrThrow(route.body, json);
      }

      // A fixed document: no complexity budget (graphql/builder.ts).
      if (ctx.requestRecord) ctx.requestRecord.fixedDocument = true;
      const result = await run({
        schema: this.schema,
        document: route.doc,
        contextValue: ctx,
        variableValues: route.variables(input),
      });
      if (result.errors?.length) return errorResponse(result.errors[0], ctx, route.fieldNames);
      const status = typeof route.status === 'function' ? route.status(result.data, input) : (route.status ?? 200);
      if (status === 204 || status === 205) return { status };
      const body = route.result ? route.result(result.data, input) : result.data;
      // Creations answer the new object's API URL in `Location`, as the contract documents; an
      // accepted (202) job, the address to poll.
      const location = status === 201 || status === 202 ? (body as { urls?: { location?: unknown } } | null)?.urls?.location : undefined;
      return { status, body, ...(typeof location === 'string' ? { headers: { Location: location } } : {}) };
    } catch (err) {
      return errorResponse(err, ctx);
    }
  }
}

function parseOrThrow<T>(schema: z.ZodType<T>, value: unknown): T {
  const r = schema.safeParse(value);
  if (!r.success) throw zodToAppError(r.error);
  return r.data;
}

function queryToObject(sp: URLSearchParams): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const key of new Set(sp.keys())) {
    const all = sp.getAll(key);
    out[key] = all.length > 1 ? all : all[0];
  }
  return out;
}

/** GraphQL paging arguments under the names the REST caller used (`pageVariables`). */
const REST_PAGE_ARGS: Record<string, string> = { after: 'page', before: 'page', first: 'limit', last: 'limit' };

function restFieldNames(error: AppError, fieldNames: Record<string, string> = {}): string {
  if (!error.field) return error.message;
  const [head, ...tail] = error.field.split('.');
  const rest = REST_PAGE_ARGS[error.field] ?? (fieldNames[head] !== undefined ? [fieldNames[head], ...tail].join('.') : undefined);
  if (!rest || !error.message.startsWith(`${error.field}:`)) return error.message;
  return `${rest}${error.message.slice(error.field.length)}`;
}

export { errorBody };

function errorResponse(err: unknown, ctx: Context, fieldNames?: Record<string, string>): RestResponse {
  const e = toPublicError(err, ctx.log, 'REST route', ctx.requestRecord);
  switch (e.kind) {
    case 'unavailable':
      return { status: e.status, body: errorBody(e.status, e.message), headers: { ...RETRY_AFTER_HEADER } };
    case 'expected':
      return { status: e.status, body: errorBody(e.status, restFieldNames(e.error, fieldNames)) };
    case 'request':
      // Variable coercion and validation errors: the caller's input is wrong.
      return { status: 400, body: errorBody(400, e.error.message) };
    case 'unexpected':
      return { status: 500, body: errorBody(500, e.message) };
  }
}
