// The REST shim at /v1 as HTTP: the rate limit, the route match, the token before the body, the
// body's type and depth, then the route table (src/rest/router.ts) runs the route's GraphQL
// document; the answer with its ETag (and shared-cache headers for an anonymous published read).
// Also the OpenAPI document of /v1, generated from the route table at start-up.
import type http from 'node:http';
import { Kind, execute, parse, type DocumentNode, type ExecutionArgs } from 'graphql';
import { errorBody } from '../lib/errors.ts';
import { sharedCacheable } from '../auth/audience.ts';
import type { Context, RequestRecord } from '../graphql/context.ts';
import { OPENAPI_PATH, buildOpenApiDocument } from '../rest/openapi-document.ts';
import { PUBLISHED_ONLY_MESSAGE, UNAUTHENTICATED_MESSAGE, type Edge } from './edge.ts';
import { isPublishedRead } from './graphql.ts';
import { sendJson } from './compression.ts';
import { sendJsonWithEtag, type SharedAnswer } from './conditional.ts';
import type { PublishedCache } from './published-cache.ts';
import { RequestRejected, requireJsonDepth, type RequestTarget } from './limits.ts';

/** `route` answers a request under /v1. Throws at start-up when a `published` route's document reads more than published content. */
export function createRestEndpoint(edge: Edge, publishedCache?: PublishedCache) {
  const { rest, rateLimits } = edge.deps;
  // Public (it describes the API, not data): served before authentication.
  const openApiDocument = buildOpenApiDocument(rest.routes);
  // A route marked `published` runs without a token: its document must be a published read.
  for (const route of rest.routes) {
    if (route.published && !isPublishedRead(parse(route.document), undefined)) throw new Error(`REST route ${route.method} ${route.path} is marked published but its document reads more than published content`);
  }
  return {
    async route(req: http.IncomingMessage, res: http.ServerResponse, target: RequestTarget, record: RequestRecord) {
      if (rateLimits && !(await rateLimits.admitRest(req, res, () => edge.viewerFor(req, record)))) return;
      if (target.pathname === OPENAPI_PATH) return serveOpenApiDocument(req, res, openApiDocument);
      return handleRest(edge, req, res, target, record, publishedCache);
    },
  };
}

async function handleRest(edge: Edge, req: http.IncomingMessage, res: http.ServerResponse, target: RequestTarget, record: RequestRecord, publishedCache: PublishedCache | undefined) {
  const { rest, config } = edge.deps;
  const method = req.method ?? 'GET';
  const match = rest.match(method, target.pathname);
  if (!match.route) {
    if (match.allowed) {
      res.setHeader('Allow', match.allowed.join(', '));
      return sendJson(res, 405, errorBody(405, `Method ${method} is not allowed on ${target.pathname}`));
    }
    return sendJson(res, 404, errorBody(404, match.notFound ?? `No route ${method} ${target.pathname}`));
  }
  record.route = match.route.path;
  // Every /v1 route but the published reads needs a token: checked before a byte of the body is
  // read or held. A token that does not work is a 401 on every route (published reads run
  // without credentials, not with bad ones). A `published`-scoped token runs the published reads only.
  const viewer = await edge.viewerFor(req, record);
  if (!viewer && (!match.route.published || req.headers.authorization !== undefined)) return sendJson(res, 401, errorBody(401, UNAUTHENTICATED_MESSAGE));
  if (viewer?.scope && !match.route.published) return sendJson(res, 403, errorBody(403, PUBLISHED_ONLY_MESSAGE));
  const { body, release } = await edge.read(req, {}, record);
  try {
    const raw = body.toString('utf8');
    if (match.route.body && body.length > 0) requireJsonContentType(req.headers['content-type']);
    if (match.route.body) requireJsonDepth(raw, config.limits.maxJsonDepth);
    // A GET of a query document may run on a replica (edge.readDb); any other method is a write.
    const reading = method === 'GET' || method === 'HEAD';
    const db = reading && edge.deps.replicas && isQueryDocument(match.route.doc) ? await edge.readDb(req) : undefined;
    const ctx = edge.makeContext(viewer, 'rest', req, record, db);
    const params = match.params ?? {};
    // A published GET goes through the published cache, as the same read over GraphQL does.
    const read = match.route.published && (method === 'GET' || method === 'HEAD') ? publishedCache : undefined;
    const run = read ? (args: ExecutionArgs) => read.execute(ctx, args, async () => execute(args), !viewer) : undefined;
    const out = await rest.handle(match.route, params, target.searchParams, raw, ctx, run);
    if (!reading) await edge.tagWrite(res);
    for (const [k, v] of Object.entries(out.headers ?? {})) res.setHeader(k, v);
    if (out.body === undefined) {
      res.statusCode = out.status;
      return res.end();
    }
    if (out.status === 200 && (method === 'GET' || method === 'HEAD')) {
      // Decided by the published cache's gate when it ran (no second statement), else by the gate here.
      const shared = !viewer && match.route.published ? (publishedCache?.sharedAnswerOf(record) ?? (await sharedRestAnswer(edge, ctx, params, target.searchParams.get('shareKey')))) : undefined;
      return await sendJsonWithEtag(req, res, out.body, shared);
    }
    return await sendJson(res, out.status, out.body);
  } finally {
    release();
  }
}

/** A route's document is a single query operation (REST documents hold one operation). */
function isQueryDocument(doc: DocumentNode): boolean {
  const operations = doc.definitions.filter((d) => d.kind === Kind.OPERATION_DEFINITION);
  return operations.length === 1 && operations[0].operation === 'query';
}

/**
 * An anonymous REST published read of a site a shared cache may keep (the same rule as the
 * published cache's GraphQL answers: `sharedCacheable`), decided by the published gate again —
 * one statement, only for anonymous GETs that succeeded.
 */
async function sharedRestAnswer(edge: Edge, ctx: Context, params: Record<string, string>, shareKey: string | null): Promise<SharedAnswer | undefined> {
  const siteId = params.siteId;
  if (!siteId) return undefined;
  const gate = await ctx.access.publishedSiteGate(siteId, { organizationId: params.organizationId, shareKey, visitorToken: ctx.visitorToken ?? null, now: ctx.clock.now() });
  return gate && sharedCacheable(gate.reader) ? { siteId, version: String(gate.version), caching: edge.deps.config.sharedCache } : undefined;
}

/**
 * A REST body is JSON: a body sent as anything else (`text/plain`, a form) is a 415 with the
 * contract's error body. No `Content-Type` at all is accepted when the body parses as JSON (raw
 * HTTP clients often omit it; browsers and the official client always send one).
 */
function requireJsonContentType(header: string | undefined) {
  if (header === undefined || header.trim() === '') return;
  const type = header.split(';')[0].trim().toLowerCase();
  if (type === 'application/json' || /^application\/[a-z0-9.+-]+\+json$/.test(type)) return;
  throw new RequestRejected(415, `Unsupported content type ${JSON.stringify(type)}: send the body as application/json`);
}

/** GET /v1/openapi.json (before authentication: the document describes the API, not data). GET and HEAD; any other method is a 405. */
async function serveOpenApiDocument(req: http.IncomingMessage, res: http.ServerResponse, document: object) {
  const method = req.method ?? 'GET';
  if (method === 'GET' || method === 'HEAD') return sendJson(res, 200, document);
  res.setHeader('Allow', 'GET, HEAD');
  return sendJson(res, 405, errorBody(405, `Method ${method} is not allowed on ${OPENAPI_PATH}`));
}
