// One node:http server: GraphQL (yoga, with GraphiQL) at /graphql, the REST shim at /v1, file
// downloads, health probes. Authentication happens here, once per request, for both APIs.
import http from 'node:http';
import { createYoga, type Plugin, type YogaServerInstance } from 'graphql-yoga';
import { GraphQLError, Kind, parse, type DocumentNode, type GraphQLSchema, type OperationDefinitionNode, type SelectionSetNode } from 'graphql';
import type { Logger } from 'pino';
import type { Db } from '../db/client.ts';
import type { Config } from '../config.ts';
import type { Clock } from '../lib/clock.ts';
import type { Services } from '../services.ts';
import { AppError, ERROR_CODES, RETRY_AFTER_HEADER, RETRY_AFTER_SECONDS, errorBody, unauthenticated } from '../lib/errors.ts';
import { bearerToken, userForToken } from '../auth/tokens.ts';
import type { TokenCache } from '../auth/token-cache.ts';
import type { Viewer } from '../auth/access.ts';
import { PUBLISHED_READ_ROOT_FIELDS, sharedCacheable } from '../auth/audience.ts';
import { createContext, type Context } from '../graphql/context.ts';
import { RestRouter } from '../rest/router.ts';
import { OPENAPI_PATH, buildOpenApiDocument, serveOpenApiDocument } from '../rest/openapi-document.ts';
import { handleDownload } from './downloads.ts';
import { handleSsoRequest } from './sso.ts';
import { explorerOptions, isIntrospectionOnly, renderExplorer, serveExplorerAsset, useIntrospectionCache } from './explorer.ts';
import { createPublishedCache } from './published-cache.ts';
import { LRUCache } from 'lru-cache';
import { appendVary, mergeVary, sendJson, useResponseCompression } from './compression.ts';
import { createCors } from './cors.ts';
import { sendJsonWithEtag, useConditionalGet, type SharedAnswer } from './conditional.ts';
import { TRUSTED_DOCUMENTS_PATH, TRUSTED_DOCUMENT_ERROR_CODES, loadTrustedDocuments, useTrustedDocuments } from './trusted-documents.ts';
import { ANONYMOUS_MAX_BODY_BYTES, BodyBudget, LINGER_MS, RequestRejected, lingerOnUnreadBody, requireJsonDepth, parseRequestTarget, readBody, type BodyLimits, type ReadOptions, type RequestTarget } from './limits.ts';
import { CleanStringLiteralsRule, FORBIDDEN_CHAR_MESSAGE, findForbiddenString } from './input-hygiene.ts';
import { clientIp, rateLimitedGraphqlBody, type RateLimits } from './rate-limit.ts';
import { maxTokensPlugin } from '@escape.tech/graphql-armor-max-tokens';
import { maxAliasesPlugin } from '@escape.tech/graphql-armor-max-aliases';
import { maxDirectivesPlugin } from '@escape.tech/graphql-armor-max-directives';
import { REQUEST_ID_HEADER, noteViewer, type Observability } from './observability.ts';
import { currentRequest, toPublicError } from './request-context.ts';
import { liveRequestFor, useLiveEventStream } from './live-sse.ts';
import { useDeferStream } from '@graphql-yoga/plugin-defer-stream';
import { GRAPHQL_RESPONSE_JSON, REQUEST_ERROR_HTTP, challengeEvery401, graphqlJsonType, preferenceOrderedAccept, sendGraphqlJson, sendGraphqlRequestError, useSubscriptionsOverHttp, useWellFormedParams } from './graphql-over-http.ts';
import { createLiveWebSocket } from './live-ws.ts';
import { redeemSubscriptionTicket, viewerForTokenId } from '../auth/subscription-tickets.ts';

const UNAUTHENTICATED_MESSAGE = unauthenticated().message;
/** A `published`-scoped token asked for something else than a published read (403). */
export const PUBLISHED_ONLY_MESSAGE = 'this token may only read published content';

export type AppDeps = { prisma: Db; config: Config; clock: Clock; log: Logger; services: Services; schema: GraphQLSchema; rest: RestRouter; tokens?: TokenCache; obs: Observability; rateLimits?: RateLimits };

export function createHttpServer(deps: AppDeps) {
  const { prisma, log, obs } = deps;
  const limits = deps.config.limits;
  const bodies = deps.config.bodies;
  const bodyLimits: BodyLimits = {
    maxBodyBytes: limits.maxBodyBytes,
    // One client's share holds at least one body of the largest size.
    budget: new BodyBudget(limits.bodyBudgetBytes, Math.max(limits.maxBodyBytes, bodies.clientBudgetBytes)),
    timeoutMs: bodies.timeoutMs,
    minBytesPerSecond: bodies.minBytesPerSecond,
    rateWindowMs: bodies.rateWindowMs,
  };
  // The client a body's bytes are charged to: its IP, as the rate limiter reads it (TRUST_PROXY).
  const read = (req: http.IncomingMessage, opts: Omit<ReadOptions, 'client'> = {}) => readBody(req, bodyLimits, { ...opts, client: clientIp(req, deps.config.rateLimit.trustProxy) });
  const publishedCache = createPublishedCache({ maxBytes: deps.config.structureCacheBytes, sharedCaching: deps.config.sharedCache });
  const documentCaches = createDocumentCaches();
  const introspectionCache = useIntrospectionCache();
  // HTTP conventions: one CORS policy for every route (cors.ts), trusted documents (trusted-documents.ts).
  const cors = createCors(deps.config.cors);
  const trusted = loadTrustedDocuments(deps.schema, deps.rest.routes.map((r) => r.document), deps.config.trustedDocuments);

  // Once per request: the rate limiter and the handlers ask for the same viewer.
  const viewers = new WeakMap<http.IncomingMessage, Promise<Viewer | null>>();
  function viewerFor(req: http.IncomingMessage): Promise<Viewer | null> {
    let viewer = viewers.get(req);
    if (!viewer) {
      const token = bearerToken(req.headers.authorization);
      viewer = (!token ? Promise.resolve(null) : deps.tokens ? deps.tokens.viewerFor(prisma, token) : userForToken(prisma, token)).then(noteViewer);
      viewers.set(req, viewer);
    }
    return viewer;
  }
  const { rateLimits } = deps;
  /** Requests authenticated by a subscription ticket: how their stream re-checks the token. */
  const ticketed = new WeakMap<http.IncomingMessage, () => Promise<Viewer | null>>();

  const makeContext = (viewer: Viewer | null, source: 'rest' | 'graphql' = 'rest', req?: http.IncomingMessage): Context => {
    const ctx = createContext({ prisma, config: deps.config, clock: deps.clock, log, viewer, source, services: deps.services });
    // A visitor token for published reads (src/auth/visitor-tokens.ts); one value, bounded like any header.
    const visitorToken = req?.headers['x-visitor-token'];
    if (typeof visitorToken === 'string' && visitorToken.length > 0) ctx.visitorToken = visitorToken;
    return ctx;
  };

  const yoga: YogaServerInstance<{ req: http.IncomingMessage }, Context> = createYoga({
    schema: deps.schema,
    graphqlEndpoint: '/graphql',
    landingPage: false,
    // Yoga's parse cache keys by the document's text, 1,024 entries by count: bounded by bytes
    // here (it is filled before authentication, by anyone who can post a document).
    parserAndValidationCache: documentCaches,
    // CORS is cors.ts's, for every route alike.
    cors: false,
    // GraphiQL from our own dependencies, with examples (src/http/explorer.ts).
    graphiql: explorerOptions(),
    renderGraphiQL: renderExplorer,
    context: async ({ req, params, request }) => {
      // Introspection alone reads only the schema: public, so the Docs pane needs no token.
      if (isIntrospectionOnly(params.query, limits.graphqlMaxTokens)) return makeContext(null, 'graphql');
      const viewer = await viewerFor(req);
      // Published reads (every root field in PUBLISHED_READ_ROOT_FIELDS) run without a token, as
      // the anonymous reader; a `published`-scoped token runs nothing else (docs/decisions.md,
      // "Audiences: the edge, scoped tokens and shared caches").
      const publishedRead = () => isPublishedReadQuery(params.query, params.operationName, limits.graphqlMaxTokens);
      if (!viewer) {
        // Without credentials only: a token that does not work (revoked, unknown) stays a 401,
        // so its holder learns it rather than silently reading as the anonymous reader.
        if (req.headers.authorization === undefined && publishedRead()) return makeContext(null, 'graphql', req);
        throw new GraphQLError('A valid API token is required (Authorization: Bearer <token>)', {
          extensions: { code: 'UNAUTHENTICATED', http: { status: 401 } },
        });
      }
      if (viewer.scope && !publishedRead()) {
        throw new GraphQLError(PUBLISHED_ONLY_MESSAGE, { extensions: { code: 'FORBIDDEN', http: { status: 403 } } });
      }
      // Live updates: Last-Event-ID, a token re-check, and who holds the stream (its caps) for subscriptions (live-sse.ts).
      // An EventSource's ticket stands for its token: the token is re-checked by id.
      const token = bearerToken(req.headers.authorization)!;
      const revalidate = ticketed.get(req) ?? (() => (deps.tokens ? deps.tokens.viewerFor(prisma, token) : userForToken(prisma, token)));
      const owner = { tokenId: viewer.tokenId, ip: clientIp(req, deps.config.rateLimit.trustProxy) };
      return { ...makeContext(viewer, 'graphql', req), live: liveRequestFor(request, revalidate, owner) };
    },
    maskedErrors: {
      maskError: (error, message) => maskError(error, message, log),
    },
    plugins: [
      ...useTrustedDocuments(trusted, deps.config.trustedDocuments.mode, limits.graphqlMaxTokens),
      // Bounds on the document itself, checked while parsing and validating, before execution
      // (depth, breadth and cost are the complexity plugin's, in graphql/builder.ts).
      maxTokensPlugin({ n: limits.graphqlMaxTokens }),
      maxAliasesPlugin({ n: limits.graphqlMaxAliases, allowList: [] }),
      maxDirectivesPlugin({ n: limits.graphqlMaxDirectives }),
      useDeferStream(), // @defer / @stream as multipart/mixed (docs/decisions.md, "Front-end clients: incremental delivery…")
      useWellFormedParams(),
      useCleanStrings(),
      useErrorStatus(),
      // Charged before the cache decides: a hit costs the caller what the query costs.
      ...(rateLimits ? [rateLimits.plugin()] : []),
      publishedCache.plugin,
      introspectionCache,
      // ETag / 304 on the uncompressed answer, so before compression.
      useConditionalGet((request) => publishedCache.sharedAnswerOf(request)),
      useResponseCompression(),
      // Subscriptions as event streams with `id:` lines and keep-alives (live-sse.ts).
      useLiveEventStream({ keepAliveMs: deps.config.live.keepAliveMs }),
      // Apollo's multipart HTTP subscriptions, and a 406 naming the transports (graphql-over-http.ts).
      useSubscriptionsOverHttp({ keepAliveMs: deps.config.live.keepAliveMs }),
      ...obs.yogaPlugins(),
    ],
    logging: {
      debug: (...a) => log.debug(a.map(String).join(' ')),
      info: (...a) => log.info(a.map(String).join(' ')),
      warn: (...a) => log.warn(a.map(String).join(' ')),
      // Yoga reports here every error `maskError` replaced (a NOT_FOUND too): maskError has
      // already logged each at its level (unexpected ones at error), so these are debug.
      error: (...a) => (a[0] instanceof Error ? log.debug({ err: a[0] }, 'GraphQL error masked') : log.error(a.map(String).join(' '))),
    },
  });

  // The OpenAPI document of /v1, generated from the route table at start-up; public (it
  // describes the API, not data), so it is served before authentication.
  const openApiDocument = buildOpenApiDocument(deps.rest.routes);
  // A route marked `published` runs without a token: its document must be a published read.
  for (const route of deps.rest.routes) {
    if (route.published && !isPublishedRead(parse(route.document), undefined)) throw new Error(`REST route ${route.method} ${route.path} is marked published but its document reads more than published content`);
  }

  async function handleRest(req: http.IncomingMessage, res: http.ServerResponse, target: RequestTarget) {
    if (target.pathname === OPENAPI_PATH) return serveOpenApiDocument(req, res, openApiDocument);
    const method = req.method ?? 'GET';
    const match = deps.rest.match(method, target.pathname);
    if (match.route) currentRequest()!.route = match.route.path;
    if (!match.route) {
      if (match.allowed) {
        res.setHeader('Allow', match.allowed.join(', '));
        return sendJson(res, 405, errorBody(405, `Method ${method} is not allowed on ${target.pathname}`));
      }
      return sendJson(res, 404, errorBody(404, match.notFound ?? `No route ${method} ${target.pathname}`));
    }
    // Every /v1 route but the published reads needs a token: checked before a byte of the body is
    // read or held. A token that does not work is a 401 on every route (published reads run
    // without credentials, not with bad ones). A `published`-scoped token runs the published reads only.
    const viewer = await viewerFor(req);
    if (!viewer && (!match.route.published || req.headers.authorization !== undefined)) return sendJson(res, 401, errorBody(401, UNAUTHENTICATED_MESSAGE));
    if (viewer?.scope && !match.route.published) return sendJson(res, 403, errorBody(403, PUBLISHED_ONLY_MESSAGE));
    const { body, release } = await read(req);
    try {
      const raw = body.toString('utf8');
      if (match.route.body && body.length > 0) requireJsonContentType(req.headers['content-type']);
      if (match.route.body) requireJsonDepth(raw, limits.maxJsonDepth);
      const ctx = makeContext(viewer, 'rest', req);
      const out = await deps.rest.handle(match.route, match.params ?? {}, target.searchParams, raw, ctx);
      for (const [k, v] of Object.entries(out.headers ?? {})) res.setHeader(k, v);
      if (out.body === undefined) {
        res.statusCode = out.status;
        return res.end();
      }
      if (out.status === 200 && (method === 'GET' || method === 'HEAD')) {
        const shared = !viewer && match.route.published ? await sharedRestAnswer(ctx, match.params ?? {}, target.searchParams.get('shareKey')) : undefined;
        return await sendJsonWithEtag(req, res, out.body, shared);
      }
      return await sendJson(res, out.status, out.body);
    } finally {
      release();
    }
  }

  /**
   * An anonymous REST published read of a site a shared cache may keep (the same rule as the
   * published cache's GraphQL answers: `sharedCacheable`), decided by the published gate again —
   * one statement, only for anonymous GETs that succeeded.
   */
  async function sharedRestAnswer(ctx: Context, params: Record<string, string>, shareKey: string | null): Promise<SharedAnswer | undefined> {
    const siteId = params.siteId;
    if (!siteId) return undefined;
    const gate = await ctx.access.publishedSiteGate(siteId, { organizationId: params.organizationId, shareKey, visitorToken: ctx.visitorToken ?? null, now: ctx.clock.now() });
    return gate && sharedCacheable(gate.reader) ? { siteId, caching: deps.config.sharedCache } : undefined;
  }

  /** GraphQL's 401 (or the 429 of a client over its budget), answered without reading the body. */
  async function refuseUnauthenticated(req: http.IncomingMessage, res: http.ServerResponse) {
    const charge = await rateLimits?.settle(req);
    if (!req.complete) res.setHeader('Connection', 'close');
    if (charge?.limited) return sendGraphqlJson(req, res, 429, rateLimitedGraphqlBody());
    return sendGraphqlJson(req, res, 401, { errors: [{ message: UNAUTHENTICATED_MESSAGE, extensions: { code: 'UNAUTHENTICATED' } }] });
  }

  /** A failure before yoga runs (the token lookup), answered as yoga would: GraphQL's error shape. */
  async function sendGraphqlFailure(req: http.IncomingMessage, res: http.ServerResponse, err: unknown) {
    const e = toPublicError(err, log, 'token lookup');
    await rateLimits?.settle(req);
    if (!req.complete) res.setHeader('Connection', 'close');
    if (e.kind === 'unavailable') res.setHeader('Retry-After', String(e.retryAfterSeconds ?? RETRY_AFTER_SECONDS));
    const code = e.kind === 'unavailable' ? 'SERVICE_UNAVAILABLE' : e.kind === 'expected' ? e.error.code : e.kind === 'request' ? 'BAD_REQUEST' : 'INTERNAL_SERVER_ERROR';
    const message = e.kind === 'expected' || e.kind === 'request' ? e.error.message : e.message;
    return sendGraphqlJson(req, res, e.status, { errors: [{ message, extensions: { code, ...(e.kind === 'unexpected' && e.requestId ? { requestId: e.requestId } : {}) } }] });
  }

  /**
   * A browser's EventSource sends no header: `ticket=` (createSubscriptionTicket, single use,
   * src/auth/subscription-tickets.ts) stands for the token on a GET event stream. An API token in
   * the URL (`token=`, `access_token=`) is refused: URLs end up in logs and histories. Answers
   * true when it sent the refusal.
   */
  async function refusedTicket(req: http.IncomingMessage, res: http.ServerResponse, target: RequestTarget): Promise<boolean> {
    const ticket = target.searchParams.get('ticket');
    const inUrl = ['token', 'access_token'].find((p) => target.searchParams.has(p));
    if (ticket === null && inUrl === undefined) return false;
    const refuse = async (status: number, message: string) => {
      await rateLimits?.settle(req);
      if (!req.complete) res.setHeader('Connection', 'close');
      await sendJson(res, status, { errors: [{ message, extensions: { code: status === 401 ? 'UNAUTHENTICATED' : 'BAD_REQUEST', ...(status === 400 ? { field: 'ticket' } : {}) } }] });
      return true;
    };
    if (inUrl) return refuse(401, `${inUrl}: an API token is never accepted in a URL; send Authorization: Bearer <token>, or for an EventSource a ticket from createSubscriptionTicket (ticket=)`);
    const eventStream = (req.headers.accept ?? '').toLowerCase().includes('text/event-stream');
    if (req.method !== 'GET' || !eventStream || req.headers.authorization !== undefined) {
      return refuse(400, 'ticket: only on a GET event stream (Accept: text/event-stream) without an Authorization header');
    }
    const viewer = await redeemSubscriptionTicket(prisma, ticket!, deps.clock.now());
    if (!viewer) return refuse(401, 'ticket: unknown, expired or already used; ask createSubscriptionTicket for a new one');
    viewers.set(req, Promise.resolve(noteViewer(viewer)));
    ticketed.set(req, () => viewerForTokenId(prisma, viewer.tokenId));
    return false;
  }

  /** GraphQL: the body is read here, under the same caps as REST, and handed to yoga parsed-free. */
  async function handleGraphql(req: http.IncomingMessage, res: http.ServerResponse, target: RequestTarget) {
    const fetchRequest = (method: string, body?: Buffer) => {
      const headers = new yoga.fetchAPI.Headers();
      for (const [k, v] of Object.entries(req.headers)) if (v !== undefined) headers.set(k, Array.isArray(v) ? v.join(', ') : v);
      // Yoga takes the first-listed type it can answer: ordered by q first (graphql-over-http.ts).
      const accept = preferenceOrderedAccept(req.headers.accept);
      if (accept !== undefined) headers.set('accept', accept);
      return new yoga.fetchAPI.Request(`http://localhost${req.url}`, { method, headers, body: body as unknown as BodyInit | undefined });
    };
    // The answer's media type follows Accept (graphql-over-http.ts).
    appendVary(res, 'Accept');
    /** A request error found before yoga runs: 400, or 200 with `errors` under application/json. */
    const refuse = async (message: string, malformed: boolean) => {
      await rateLimits?.settle(req);
      if (!req.complete) res.setHeader('Connection', 'close');
      return sendGraphqlRequestError(req, res, message, { malformed });
    };
    if (req.method === 'GET' || req.method === 'HEAD') {
      // Yoga JSON-parses these itself and treats a syntax error as an internal one. Not JSON, or
      // not an object: not a well-formed request (400 whatever the client accepts, as yoga
      // answers the same in a POST body); nested too deep: a request error like a bad variable.
      for (const param of ['variables', 'extensions']) {
        const value = target.searchParams.get(param);
        if (value === null || value === '') continue;
        const tooDeep = jsonTooDeep(value, limits.maxJsonDepth, param);
        if (tooDeep) return refuse(tooDeep, false);
        let parsed: unknown;
        try {
          parsed = JSON.parse(value);
        } catch {
          return refuse(`${param}: not valid JSON`, true);
        }
        if (parsed !== null && (typeof parsed !== 'object' || Array.isArray(parsed))) return refuse(`${param}: must be a JSON object`, true);
      }
      // HEAD is a GET without the body (node drops the body of a HEAD response by itself).
      return await writeFetchResponse(res, await yoga.handleRequest(fetchRequest('GET'), { req }));
    }
    // The token before the body. Without a valid one only an introspection query or (without any
    // Authorization header) a published read can succeed (the context decides; GraphiQL's Docs
    // pane sends no token, or a stale one): the body is read under a small cap (a published read
    // is a few KiB), and one declared or sent beyond it is the 401 it would end in anyway —
    // answered without holding its bytes.
    let anonymous: boolean;
    try {
      anonymous = !(await viewerFor(req));
    } catch (err) {
      return sendGraphqlFailure(req, res, err); // the token lookup failed (the database is down)
    }
    if (anonymous && Number(req.headers['content-length'] ?? 0) > ANONYMOUS_MAX_BODY_BYTES) return refuseUnauthenticated(req, res);
    const received = await read(req, anonymous ? { maxBytes: ANONYMOUS_MAX_BODY_BYTES, tooLarge: () => new RequestRejected(401, UNAUTHENTICATED_MESSAGE) } : {}).catch((err: unknown) => {
      if (err instanceof RequestRejected && err.status === 401) return undefined;
      throw err;
    });
    if (!received) return refuseUnauthenticated(req, res);
    const { body, release } = received;
    try {
      const tooDeep = jsonTooDeep(body, limits.maxJsonDepth);
      if (tooDeep) return await refuse(tooDeep, false);
      const response = await yoga.handleRequest(fetchRequest(req.method ?? 'POST', body), { req });
      return await writeFetchResponse(res, response);
    } finally {
      release();
    }
  }

  // obs.handle: the request id (header, log lines), the access log line and the metrics.
  const server = http.createServer((req, res) => obs.handle(req, res, async () => {
    // An answer sent before the body was read to its end still reaches the client (limits.ts).
    lingerOnUnreadBody(req, res, LINGER_MS);
    // `WWW-Authenticate: Bearer …` on every 401, whoever answers it (graphql-over-http.ts).
    challengeEvery401(req, res);
    try {
      // CORS headers on every answer; a preflight is answered here (cors.ts).
      if (cors.handle(req, res)) return;
      // Routing reads the raw path: a segment is one id, whatever it contains (limits.ts).
      const target = parseRequestTarget(req.url);
      const top = target.segments[0];
      if (target.pathname === '/healthz') return await sendJson(res, 200, { status: 'ok' });
      if (target.pathname === '/metrics') return await obs.serveMetrics(req, res);
      if (target.pathname === '/readyz') {
        if (await databaseReady(prisma)) return sendJson(res, 200, { status: 'ready' });
        res.setHeader('Retry-After', RETRY_AFTER_HEADER['Retry-After']);
        return sendJson(res, 503, { status: 'database unreachable' });
      }
      if (top === 'graphql') {
        if (target.segments[1] === 'assets' && target.segments.length === 3) return await serveExplorerAsset(req, res, target.segments[2], target.searchParams);
        if (target.pathname === TRUSTED_DOCUMENTS_PATH && deps.config.trustedDocuments.mode !== 'off' && (req.method === 'GET' || req.method === 'HEAD')) return await sendJsonWithEtag(req, res, trusted.manifest());
        rateLimits?.track(req, res, () => viewerFor(req));
        if (await refusedTicket(req, res, target)) return;
        return await handleGraphql(req, res, target);
      }
      if (top === 'v1') {
        if (rateLimits && !(await rateLimits.admitRest(req, res, () => viewerFor(req)))) return;
        return await handleRest(req, res, target);
      }
      if (top === 'files') {
        const viewer = await viewerFor(req);
        return await handleDownload(req, res, target, makeContext(viewer));
      }
      if (top === 'sso') {
        // Anonymous by nature (the identity provider's browser POST): counted per client IP.
        if (rateLimits && !(await rateLimits.admitRest(req, res, () => Promise.resolve(null)))) return;
        const { body, release } = await read(req);
        try {
          return await handleSsoRequest(req, res, target, body.toString('utf8'), makeContext(null));
        } finally {
          release();
        }
      }
      if (target.pathname === '/') {
        return sendJson(res, 200, { name: 'docgraph', graphql: '/graphql', rest: '/v1', health: '/healthz' });
      }
      return sendJson(res, 404, errorBody(404, `Not found: ${target.pathname}`));
    } catch (err) {
      if (err instanceof RequestRejected) {
        await rateLimits?.settle(req); // a GraphQL request refused before yoga still counts
        // A refused body may not have been read to its end: do not reuse the connection.
        if (err.status === 408 || err.status === 413 || err.status === 503 || !req.complete) res.setHeader('Connection', 'close');
        for (const [k, v] of Object.entries(err.headers)) res.setHeader(k, v);
        if (!res.headersSent) return sendJson(res, err.status, errorBody(err.status, err.message)).catch(() => res.end());
        return res.end();
      }
      // The token lookup, downloads and SSO land here when the database fails: 503, not 500.
      const e = toPublicError(err, log, 'request handler');
      if (res.headersSent) return void res.end();
      if (e.kind === 'unavailable') res.setHeader('Retry-After', String(e.retryAfterSeconds ?? RETRY_AFTER_SECONDS));
      const message = e.kind === 'expected' || e.kind === 'request' ? e.error.message : e.message;
      await sendJson(res, e.status, errorBody(e.status, message)).catch(() => res.end());
    }
  }));
  server.keepAliveTimeout = 65_000;
  // GraphQL over WebSocket (graphql-ws) on /graphql: upgrade requests only (live-ws.ts).
  const liveWs = createLiveWebSocket({
    yoga, config: deps.config, log, rateLimits,
    viewerForToken: (token) => (deps.tokens ? deps.tokens.viewerFor(prisma, token) : userForToken(prisma, token)),
    makeContext: (viewer, req) => makeContext(viewer, 'graphql', req),
    trustedText: deps.config.trustedDocuments.mode === 'only' ? (text) => trusted.has(text) : undefined,
    obs,
  });
  server.on('upgrade', liveWs.handleUpgrade);
  // A shutdown (drain.ts closes the server) closes the sockets too: upgraded connections are not the HTTP server's to close.
  const closeHttp = server.close.bind(server);
  server.close = ((cb?: (err?: Error) => void) => (liveWs.close(), closeHttp(cb))) as typeof server.close;
  // Requests node's parser refuses before any handler runs (headers or URL above the size limit,
  // malformed request lines) still answer with the contract's error body, not a bare status line.
  server.on('clientError', (err: NodeJS.ErrnoException, socket) => {
    if (!socket.writable || (err.code === 'ECONNRESET' && !socket.readable)) return void socket.destroy();
    const status = err.code === 'HPE_HEADER_OVERFLOW' ? 431 : err.code === 'HPE_HEADER_TIMEOUT' || err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
    const message = status === 431 ? 'Request headers or URL too large' : status === 408 ? 'Request timeout' : 'Malformed HTTP request';
    const body = JSON.stringify(errorBody(status, message));
    const reason = http.STATUS_CODES[status] ?? 'Bad Request';
    const id = obs.clientError(status);
    socket.end(`HTTP/1.1 ${status} ${reason}\r\n${REQUEST_ID_HEADER}: ${id}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
  });
  return Object.assign(server, { publishedCache, documentCaches, introspectionCache, bodyBudget: bodyLimits.budget, liveWs });
}

/**
 * Whether the operation that runs (`operationName`, else the only one) is a published read: a
 * query whose every root field — through fragments spread or inlined on the root, aliases
 * allowed — is in PUBLISHED_READ_ROOT_FIELDS (src/auth/audience.ts). By name: a field the schema
 * lacks fails validation anyway. Mutations and subscriptions never are.
 */
export function isPublishedRead(document: DocumentNode, operationName: string | null | undefined): boolean {
  const operations = document.definitions.filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
  const operation = operationName ? operations.find((o) => o.name?.value === operationName) : operations.length === 1 ? operations[0] : undefined;
  if (!operation || operation.operation !== 'query') return false;
  const fragments = new Map<string, SelectionSetNode>();
  for (const def of document.definitions) if (def.kind === Kind.FRAGMENT_DEFINITION) fragments.set(def.name.value, def.selectionSet);
  const seen = new Set<string>();
  let fields = 0;
  const only = (set: SelectionSetNode): boolean =>
    set.selections.every((s) => {
      if (s.kind === Kind.FIELD) return fields++, PUBLISHED_READ_ROOT_FIELDS.has(s.name.value);
      if (s.kind === Kind.INLINE_FRAGMENT) return only(s.selectionSet);
      const name = s.name.value;
      if (seen.has(name)) return true;
      seen.add(name);
      const fragment = fragments.get(name);
      return fragment !== undefined && only(fragment);
    });
  return only(operation.selectionSet) && fields > 0;
}

/** The same on a request's text (parsed under the token bound; unparsable: not a published read). */
function isPublishedReadQuery(query: unknown, operationName: string | null | undefined, maxTokens: number): boolean {
  if (typeof query !== 'string') return false;
  let document: DocumentNode;
  try {
    document = parse(query, { noLocation: true, maxTokens });
  } catch {
    return false;
  }
  return isPublishedRead(document, operationName);
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

/**
 * No NUL or control character (input-hygiene.ts) in GraphQL variables or string literals: a
 * `BAD_REQUEST` naming the variable path or the argument, before anything runs.
 */
function useCleanStrings(): Plugin {
  return {
    onParams({ params }) {
      const path = findForbiddenString(params.variables ?? {}, 'variables');
      if (path !== undefined) {
        throw new GraphQLError(`${path}: ${FORBIDDEN_CHAR_MESSAGE}`, { extensions: { code: 'BAD_REQUEST', field: path, http: REQUEST_ERROR_HTTP } });
      }
    },
    onValidate({ addValidationRule }) {
      addValidationRule(CleanStringLiteralsRule);
    },
  };
}

/**
 * The HTTP status of a GraphQL result from its errors, in one place (GraphQL over HTTP: see
 * graphql-over-http.ts and docs/decisions.md, "Front-end clients: GraphQL over HTTP"):
 * - request errors (parse, validation, variables, the document limits above, trusted documents)
 *   carry no code of their own: they get `BAD_REQUEST`, so every error a client can cause names
 *   its kind, and `REQUEST_ERROR_HTTP`: 400 under `application/graphql-response+json`, 200 with
 *   `errors` under `application/json`;
 * - an error outside execution with a status of its own (401, 403, 405, 429, 503) keeps it under
 *   both; an unexpected one (nothing ran, the server failed) is 500;
 * - a result whose every error is SERVICE_UNAVAILABLE (or every one RATE_LIMITED) that has no data
 *   left failed as a whole: 503 (429) + Retry-After, the longest the errors ask for. "No data left"
 *   is null data, or (under `application/json` only: the spec requires a 2xx for non-null data
 *   under `application/graphql-response+json`) only null root fields. Errors outside execution
 *   (the token lookup) already carry that status from `maskError`.
 */
function useErrorStatus(): Plugin {
  const kept: readonly string[] = [...ERROR_CODES, ...TRUSTED_DOCUMENT_ERROR_CODES, 'INTERNAL_SERVER_ERROR'];
  const isOurs = (code: unknown) => typeof code === 'string' && kept.includes(code);
  const trustedDocumentError = (code: unknown) => (TRUSTED_DOCUMENT_ERROR_CODES as readonly unknown[]).includes(code);
  return {
    onResultProcess({ request, result, setResult }) {
      if (Array.isArray(result) || !result || typeof result !== 'object' || Symbol.asyncIterator in result) return;
      let errors = result.errors ?? [];
      if (!errors.length) return;
      const status = (e: GraphQLError) => (e.extensions?.http as { status?: number } | undefined)?.status;
      const needsStatus = (e: GraphQLError) =>
        !isOurs(e.extensions?.code) ||
        // Unknown trusted document: a request error like an unknown field (Apollo's APQ link reads it as one).
        (!e.path && trustedDocumentError(e.extensions?.code) && status(e) === 400) ||
        (!e.path && e.extensions?.code === 'INTERNAL_SERVER_ERROR' && status(e) === undefined) ||
        // A BAD_REQUEST of ours before execution (a document or variable the domain refuses).
        (!e.path && e.originalError instanceof AppError && e.originalError.code === 'BAD_REQUEST' && status(e) === 400);
      if (errors.some(needsStatus)) {
        errors = errors.map((e) =>
          !needsStatus(e)
            ? e
            : new GraphQLError(e.message, {
                source: e.source,
                positions: e.positions,
                path: e.path,
                originalError: e.originalError,
                extensions: isOurs(e.extensions?.code)
                  ? { ...e.extensions, http: e.extensions.code === 'INTERNAL_SERVER_ERROR' ? { status: 500 } : REQUEST_ERROR_HTTP }
                  : // A request error (no path: nothing ran) is the client's.
                    { ...e.extensions, code: 'BAD_REQUEST', ...(e.path ? {} : { http: REQUEST_ERROR_HTTP }) },
              }),
        );
        result = { ...result, errors };
        setResult(result);
      }
      const data = result.data as Record<string, unknown> | null | undefined;
      if (data && (graphqlJsonType(request.headers.get('accept')) === GRAPHQL_RESPONSE_JSON || Object.values(data).some((v) => v !== null))) return;
      for (const [code, status] of [['SERVICE_UNAVAILABLE', 503], ['RATE_LIMITED', 429]] as const) {
        if (!errors.every((e) => e.extensions?.code === code)) continue;
        const retryAfter = Math.max(...errors.map((e) => (e.originalError instanceof AppError ? (e.originalError.retryAfterSeconds ?? 0) : 0)), status === 503 ? RETRY_AFTER_SECONDS : 1);
        setResult({ ...result, extensions: { ...result.extensions, http: { status, headers: { 'Retry-After': String(retryAfter) } } } });
      }
    },
  };
}

/** The message of `requireJsonDepth`'s refusal, or undefined when `text` is not nested too deep. */
function jsonTooDeep(text: string | Uint8Array, maxDepth: number, field?: string): string | undefined {
  try {
    requireJsonDepth(text, maxDepth, field);
    return undefined;
  } catch (err) {
    if (err instanceof RequestRejected && err.status === 400) return err.message;
    throw err;
  }
}

/** Send a fetch `Response` (yoga's answer) on a node response, streaming its body. */
async function writeFetchResponse(res: http.ServerResponse, response: Response) {
  res.statusCode = response.status;
  response.headers.forEach((value, key) => {
    // Vary merges with what cors.ts set on the node response.
    if (key === 'vary') res.setHeader('Vary', mergeVary(res.getHeader('Vary'), value.split(',')));
    else if (key !== 'set-cookie') res.setHeader(key, value);
  });
  const cookies = response.headers.getSetCookie();
  if (cookies.length) res.setHeader('set-cookie', cookies);
  if (!response.body) return void res.end();
  // A whole JSON answer (everything but a subscription's event stream or an incremental
  // multipart answer) goes out in one write: streaming a 400 kB body chunk by chunk costs a
  // syscall per chunk (`writev` was 15% of a cached hit's CPU).
  const type = response.headers.get('content-type') ?? '';
  if (!type.startsWith('text/event-stream') && !type.startsWith('multipart/')) {
    const bytes = Buffer.from(await response.arrayBuffer());
    if (!res.hasHeader('content-length')) res.setHeader('content-length', bytes.length);
    return void res.end(bytes);
  }
  // A stream: chunk by chunk; a client that goes away cancels it at once (an event stream's
  // subscription leaves the feed then, not at its next keep-alive).
  const reader = response.body.getReader();
  const cancel = () => void reader.cancel().catch(() => {});
  res.once('close', cancel);
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done || res.destroyed) break;
      if (!res.write(value)) await new Promise((resolve) => (res.once('drain', resolve), res.once('close', resolve)));
    }
  } finally {
    res.off('close', cancel);
  }
  res.end();
}

/** `/readyz` answers within this many ms whatever the database does. */
const READY_TIMEOUT_MS = 800;

/** `SELECT 1` raced against a timer: a frozen database is "not ready", not a hung probe. */
async function databaseReady(prisma: Db): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const probe = prisma.$queryRaw`SELECT 1`.then(
    () => true,
    () => false,
  );
  const timeout = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), READY_TIMEOUT_MS);
  });
  try {
    return await Promise.race([probe, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Expected errors keep their code (and field); anything else is logged and masked. */
function maskError(error: unknown, message: string, log: Logger): Error {
  const gqlError = error instanceof GraphQLError ? error : undefined;
  const at = { nodes: gqlError?.nodes, path: gqlError?.path };
  const e = toPublicError(error, log, 'GraphQL resolver');
  switch (e.kind) {
    case 'unavailable':
      return new GraphQLError(e.message, {
        ...at,
        // A field's error leaves the response 200 unless nothing else succeeded (see
        // useErrorStatus); an error outside execution is the whole response.
        extensions: { code: 'SERVICE_UNAVAILABLE', http: gqlError?.path ? { status: 200 } : { status: 503, headers: { 'Retry-After': String(e.retryAfterSeconds ?? RETRY_AFTER_SECONDS) } } },
      });
    case 'expected':
      return new GraphQLError(e.error.message, {
        ...at,
        originalError: e.error,
        extensions: { code: e.error.code, ...(e.error.field ? { field: e.error.field } : {}), http: { status: gqlError?.path ? 200 : e.status } },
      });
    case 'request':
      return e.error;
    case 'unexpected':
      return new GraphQLError(message, { ...at, extensions: { code: 'INTERNAL_SERVER_ERROR', ...(e.requestId ? { requestId: e.requestId } : {}) } });
  }
}

/** Bytes of parsed documents (and of parse errors) kept per process; no entry above 1 MiB. */
export const DOCUMENT_CACHE_BYTES = 16 * 1024 * 1024;
export const DOCUMENT_ERROR_CACHE_BYTES = 4 * 1024 * 1024;

/**
 * Yoga's parser caches, bounded by bytes: the key (2 bytes a character) and the AST, estimated at
 * 12 bytes a character of text (a dense document's nodes; a comment's cost less).
 */
function createDocumentCaches() {
  const byText = (perChar: number, maxSize: number) =>
    new LRUCache<string, any>({ max: 1024, maxSize, maxEntrySize: 1024 * 1024, ttl: 3_600_000, sizeCalculation: (_v, key) => 256 + key.length * perChar });
  return { documentCache: byText(14, DOCUMENT_CACHE_BYTES), errorCache: byText(2, DOCUMENT_ERROR_CACHE_BYTES), validationCache: true };
}
