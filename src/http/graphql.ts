// GraphQL at /graphql: yoga (with GraphiQL) and its plugins, the request's way to it (a ticket for
// an EventSource, the token before the body, the body under the edge's caps), and the rules that
// turn a GraphQL result into an HTTP answer (error statuses, masked errors).
import type http from 'node:http';
import { createYoga, type Plugin, type YogaInitialContext, type YogaServerInstance } from 'graphql-yoga';
import { GraphQLError, Kind, getOperationAST, parse, type ASTVisitor, type DocumentNode, type SelectionSetNode, type ValidationContext } from 'graphql';
import type { Logger } from 'pino';
import { LRUCache } from 'lru-cache';
import { maxTokensPlugin } from '@escape.tech/graphql-armor-max-tokens';
import { maxAliasesPlugin } from '@escape.tech/graphql-armor-max-aliases';
import { maxDirectivesPlugin } from '@escape.tech/graphql-armor-max-directives';
import { useDeferStream } from '@graphql-yoga/plugin-defer-stream';
import { AppError, ERROR_CODES, RETRY_AFTER_SECONDS, toPublicError } from '../lib/errors.ts';
import { FORBIDDEN_CHAR, FORBIDDEN_CHAR_MESSAGE, findForbiddenString } from '../lib/input-hygiene.ts';
import { bearerToken } from '../auth/tokens.ts';
import { PUBLISHED_READ_ROOT_FIELDS } from '../auth/audience.ts';
import { redeemSubscriptionTicket, viewerForTokenId } from '../auth/subscription-tickets.ts';
import type { Context, RequestRecord } from '../graphql/context.ts';
import { PUBLISHED_ONLY_MESSAGE, UNAUTHENTICATED_MESSAGE, type Edge } from './edge.ts';
import { documentIsIntrospectionOnly, explorerOptions, renderExplorer, serveExplorerAsset, useIntrospectionCache } from './explorer.ts';
import { createPublishedCache, type PublishedCache } from './published-cache.ts';
import { appendVary, mergeVary, sendJson, useResponseCompression } from './compression.ts';
import { sendJsonWithEtag, useConditionalGet } from './conditional.ts';
import { TRUSTED_DOCUMENTS_PATH, TRUSTED_DOCUMENT_ERROR_CODES, loadTrustedDocuments, useTrustedDocuments, type TrustedDocuments } from './trusted-documents.ts';
import { ANONYMOUS_MAX_BODY_BYTES, RequestRejected, requireJsonDepth, type RequestTarget } from './limits.ts';
import { clientIp, rateLimitedGraphqlBody } from './rate-limit.ts';
import { noteViewer } from './observability.ts';
import { currentRequest } from './request-context.ts';
import { liveRequestFor, useLiveEventStream } from './live-sse.ts';
import { GRAPHQL_RESPONSE_JSON, REQUEST_ERROR_HTTP, graphqlJsonType, preferenceOrderedAccept, sendGraphqlJson, sendGraphqlRequestError, useSubscriptionsOverHttp, useWellFormedParams } from './graphql-over-http.ts';

/** What yoga is handed with each request (and merges into the context). */
export type ServerContext = { req: http.IncomingMessage; requestRecord: RequestRecord };

export type GraphqlEndpoint = ReturnType<typeof createGraphqlEndpoint>;

/** The yoga instance and the caches and documents it runs with; `route` answers a request under /graphql. */
export function createGraphqlEndpoint(edge: Edge) {
  const { deps } = edge;
  const publishedCache = createPublishedCache({ maxBytes: deps.config.structureCacheBytes, sharedCaching: deps.config.sharedCache });
  const documentCaches = createDocumentCaches();
  const introspectionCache = useIntrospectionCache();
  // Trusted documents (trusted-documents.ts): the REST shim's own and the operator's file.
  const trusted = loadTrustedDocuments(deps.schema, deps.rest.routes.map((r) => r.document), deps.config.trustedDocuments);
  const yoga: YogaServerInstance<ServerContext, Context> = createYoga<ServerContext, Context>({
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
    context: graphqlContext(edge),
    maskedErrors: { maskError: (error, message) => maskError(error, message, deps.log) },
    plugins: graphqlPlugins(edge, { trusted, publishedCache, introspectionCache }),
    logging: yogaLogging(deps.log),
  });

  /** A request under /graphql: the explorer's assets, the trusted documents' manifest, GraphQL itself. */
  async function route(req: http.IncomingMessage, res: http.ServerResponse, target: RequestTarget, record: RequestRecord) {
    if (target.segments[1] === 'assets' && target.segments.length === 3) return await serveExplorerAsset(req, res, target.segments[2], target.searchParams);
    if (target.pathname === TRUSTED_DOCUMENTS_PATH && deps.config.trustedDocuments.mode !== 'off' && (req.method === 'GET' || req.method === 'HEAD')) return await sendJsonWithEtag(req, res, trusted.manifest());
    deps.rateLimits?.track(req, res, record, () => edge.viewerFor(req, record));
    if (await refusedTicket(edge, req, res, target, record)) return;
    return await handleGraphql(edge, yoga, req, res, target, record);
  }

  return { yoga, route, publishedCache, documentCaches, introspectionCache, trusted };
}

/**
 * The context of a GraphQL request. Introspection alone reads only the schema: public, so the
 * Docs pane needs no token. Published reads (every root field in PUBLISHED_READ_ROOT_FIELDS) run
 * without a token, as the anonymous reader; a `published`-scoped token runs nothing else
 * (docs/decisions.md, "Requests without a token").
 */
function graphqlContext(edge: Edge) {
  const { config } = edge.deps;
  const maxTokens = config.limits.graphqlMaxTokens;
  return async ({ req, requestRecord: record, params, request }: YogaInitialContext & ServerContext): Promise<Context> => {
    // The request's text, parsed at most once here (under the token bound) for the checks below.
    const document = parsedOnce(params.query, maxTokens);
    const introspectionOnly = typeof params.query === 'string' && params.query.includes('__') && document() !== undefined && documentIsIntrospectionOnly(document()!);
    if (introspectionOnly) return edge.makeContext(null, 'graphql', undefined, record);
    const viewer = await edge.viewerFor(req, record);
    const publishedRead = () => isPublishedRead(document(), params.operationName);
    // With replicas: a query runs on one (edge.readDb), a mutation's answer carries the
    // read-your-writes token (handleGraphql); decided from the document, not the HTTP method.
    const parsed = edge.deps.replicas ? document() : undefined;
    const kind = parsed ? getOperationAST(parsed, params.operationName)?.operation : undefined;
    const db = () => (kind === 'query' ? edge.readDb(req) : Promise.resolve(undefined));
    if (!viewer) {
      // Without credentials only: a token that does not work (revoked, unknown) stays a 401,
      // so its holder learns it rather than silently reading as the anonymous reader.
      if (req.headers.authorization === undefined && publishedRead()) return edge.makeContext(null, 'graphql', req, record, await db());
      throw new GraphQLError(UNAUTHENTICATED_MESSAGE, { extensions: { code: 'UNAUTHENTICATED', http: { status: 401 } } });
    }
    if (viewer.scope && !publishedRead()) {
      throw new GraphQLError(PUBLISHED_ONLY_MESSAGE, { extensions: { code: 'FORBIDDEN', http: { status: 403 } } });
    }
    // Live updates: Last-Event-ID, a token re-check, and who holds the stream (its caps) for subscriptions (live-sse.ts).
    // An EventSource's ticket stands for its token: the token is re-checked by id.
    const token = bearerToken(req.headers.authorization)!;
    const revalidate = record.revalidate ?? (() => edge.viewerForToken(token));
    const owner = { tokenId: viewer.tokenId, ip: clientIp(req, config.rateLimit.trustProxy) };
    // Only a caller's mutation that may run (an unauthenticated one never does).
    if (kind === 'mutation') writes.add(record);
    return { ...edge.makeContext(viewer, 'graphql', req, record, await db()), live: liveRequestFor(request, revalidate, owner) };
  };
}

/** Requests whose operation is a mutation (with replicas only): their answer gets the read-your-writes token. */
const writes = new WeakSet<RequestRecord>();

/** The request's text parsed on first use, under the token bound; undefined when it is not a string or does not parse. */
function parsedOnce(query: unknown, maxTokens: number): () => DocumentNode | undefined {
  let parsed = false;
  let document: DocumentNode | undefined;
  return () => {
    if (parsed) return document;
    parsed = true;
    if (typeof query === 'string') {
      try {
        document = parse(query, { noLocation: true, maxTokens });
      } catch {
        // unparsable: Yoga answers the syntax error
      }
    }
    return document;
  };
}

/** Yoga's plugins, in order. */
function graphqlPlugins(edge: Edge, parts: { trusted: TrustedDocuments; publishedCache: PublishedCache; introspectionCache: Plugin }): Array<Plugin<any, any, any>> {
  const { config, rateLimits, obs } = edge.deps;
  const limits = config.limits;
  return [
    ...useTrustedDocuments(parts.trusted, config.trustedDocuments.mode, limits.graphqlMaxTokens),
    // Bounds on the document itself, checked while parsing and validating, before execution
    // (depth, breadth and cost are the complexity plugin's, in graphql/builder.ts).
    maxTokensPlugin({ n: limits.graphqlMaxTokens }),
    maxAliasesPlugin({ n: limits.graphqlMaxAliases, allowList: [] }),
    maxDirectivesPlugin({ n: limits.graphqlMaxDirectives }),
    useDeferStream(), // @defer / @stream as multipart/mixed (docs/decisions.md, "Incremental delivery")
    useWellFormedParams(),
    useCleanStrings(),
    useErrorStatus(),
    // Charged before the cache decides: a hit costs the caller what the query costs.
    ...(rateLimits ? [rateLimits.plugin()] : []),
    parts.publishedCache.plugin,
    parts.introspectionCache,
    // ETag / 304 on the uncompressed answer, so before compression.
    useConditionalGet((record) => parts.publishedCache.sharedAnswerOf(record)),
    useResponseCompression(),
    // Subscriptions as event streams with `id:` lines and keep-alives (live-sse.ts).
    useLiveEventStream({ keepAliveMs: config.live.keepAliveMs }),
    // Apollo's multipart HTTP subscriptions, and a 406 naming the transports (graphql-over-http.ts).
    useSubscriptionsOverHttp({ keepAliveMs: config.live.keepAliveMs }),
    ...obs.yogaPlugins(),
  ];
}

function yogaLogging(log: Logger) {
  return {
    debug: (...a: unknown[]) => log.debug(a.map(String).join(' ')),
    info: (...a: unknown[]) => log.info(a.map(String).join(' ')),
    warn: (...a: unknown[]) => log.warn(a.map(String).join(' ')),
    // Yoga reports here every error `maskError` replaced (a NOT_FOUND too): maskError has
    // already logged each at its level (unexpected ones at error), so these are debug.
    error: (...a: unknown[]) => (a[0] instanceof Error ? log.debug({ err: a[0] }, 'GraphQL error masked') : log.error(a.map(String).join(' '))),
  };
}

/** GraphQL: the body is read here, under the same caps as REST, and handed to yoga parsed-free. */
async function handleGraphql(edge: Edge, yoga: YogaServerInstance<ServerContext, Context>, req: http.IncomingMessage, res: http.ServerResponse, target: RequestTarget, record: RequestRecord) {
  const maxJsonDepth = edge.deps.config.limits.maxJsonDepth;
  const serverContext: ServerContext = { req, requestRecord: record };
  // The answer's media type follows Accept (graphql-over-http.ts).
  appendVary(res, 'Accept');
  /** A request error found before yoga runs: 400, or 200 with `errors` under application/json. */
  const refuse = async (message: string, malformed: boolean) => {
    await edge.deps.rateLimits?.settle(record);
    if (!req.complete) res.setHeader('Connection', 'close');
    return sendGraphqlRequestError(req, res, message, { malformed });
  };
  if (req.method === 'GET' || req.method === 'HEAD') {
    const bad = badQueryParams(target, maxJsonDepth);
    if (bad) return refuse(bad.message, bad.malformed);
    // HEAD is a GET without the body (node drops the body of a HEAD response by itself).
    return await writeFetchResponse(res, await yoga.handleRequest(fetchRequest(yoga, req, 'GET'), serverContext));
  }
  // The token before the body. Without a valid one only an introspection query or (without any
  // Authorization header) a published read can succeed (the context decides; GraphiQL's Docs
  // pane sends no token, or a stale one): the body is read under a small cap (a published read
  // is a few KiB), and one declared or sent beyond it is the 401 it would end in anyway —
  // answered without holding its bytes.
  let anonymous: boolean;
  try {
    anonymous = !(await edge.viewerFor(req, record));
  } catch (err) {
    return sendGraphqlFailure(edge, req, res, record, err); // the token lookup failed (the database is down)
  }
  if (anonymous && Number(req.headers['content-length'] ?? 0) > ANONYMOUS_MAX_BODY_BYTES) return refuseUnauthenticated(edge, req, res, record);
  const received = await edge.read(req, anonymous ? { maxBytes: ANONYMOUS_MAX_BODY_BYTES, tooLarge: () => new RequestRejected(401, UNAUTHENTICATED_MESSAGE) } : {}, record).catch((err: unknown) => {
    if (err instanceof RequestRejected && err.status === 401) return undefined;
    throw err;
  });
  if (!received) return refuseUnauthenticated(edge, req, res, record);
  const { body, release } = received;
  try {
    const tooDeep = jsonTooDeep(body, maxJsonDepth);
    if (tooDeep) return await refuse(tooDeep, false);
    const response = await yoga.handleRequest(fetchRequest(yoga, req, req.method ?? 'POST', body), serverContext);
    // A mutation has committed (or failed) by now: its answer carries the read-your-writes token.
    if (writes.has(record)) await edge.tagWrite(res);
    return await writeFetchResponse(res, response);
  } finally {
    release();
  }
}

/** The node request as the fetch `Request` yoga takes. */
function fetchRequest(yoga: YogaServerInstance<ServerContext, Context>, req: http.IncomingMessage, method: string, body?: Buffer) {
  const headers = new yoga.fetchAPI.Headers();
  for (const [k, v] of Object.entries(req.headers)) if (v !== undefined) headers.set(k, Array.isArray(v) ? v.join(', ') : v);
  // Yoga takes the first-listed type it can answer: ordered by q first (graphql-over-http.ts).
  const accept = preferenceOrderedAccept(req.headers.accept);
  if (accept !== undefined) headers.set('accept', accept);
  return new yoga.fetchAPI.Request(`http://localhost${req.url}`, { method, headers, body: body as unknown as BodyInit | undefined });
}

/**
 * A GET's `variables` and `extensions`: yoga JSON-parses these itself and treats a syntax error
 * as an internal one. Not JSON, or not an object: not a well-formed request (400 whatever the
 * client accepts, as yoga answers the same in a POST body); nested too deep: a request error like
 * a bad variable.
 */
function badQueryParams(target: RequestTarget, maxJsonDepth: number): { message: string; malformed: boolean } | undefined {
  for (const param of ['variables', 'extensions']) {
    const value = target.searchParams.get(param);
    if (value === null || value === '') continue;
    const tooDeep = jsonTooDeep(value, maxJsonDepth, param);
    if (tooDeep) return { message: tooDeep, malformed: false };
    let parsed: unknown;
    try {
      parsed = JSON.parse(value);
    } catch {
      return { message: `${param}: not valid JSON`, malformed: true };
    }
    if (parsed !== null && (typeof parsed !== 'object' || Array.isArray(parsed))) return { message: `${param}: must be a JSON object`, malformed: true };
  }
  return undefined;
}

/** GraphQL's 401 (or the 429 of a client over its budget), answered without reading the body. */
async function refuseUnauthenticated(edge: Edge, req: http.IncomingMessage, res: http.ServerResponse, record: RequestRecord) {
  const charge = await edge.deps.rateLimits?.settle(record);
  if (!req.complete) res.setHeader('Connection', 'close');
  if (charge?.limited) return sendGraphqlJson(req, res, 429, rateLimitedGraphqlBody());
  return sendGraphqlJson(req, res, 401, { errors: [{ message: UNAUTHENTICATED_MESSAGE, extensions: { code: 'UNAUTHENTICATED' } }] });
}

/** A failure before yoga runs (the token lookup), answered as yoga would: GraphQL's error shape. */
async function sendGraphqlFailure(edge: Edge, req: http.IncomingMessage, res: http.ServerResponse, record: RequestRecord, err: unknown) {
  const e = toPublicError(err, edge.deps.log, 'token lookup', record);
  await edge.deps.rateLimits?.settle(record);
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
 * true when it sent the refusal; a redeemed ticket puts its caller on the request record.
 */
async function refusedTicket(edge: Edge, req: http.IncomingMessage, res: http.ServerResponse, target: RequestTarget, record: RequestRecord): Promise<boolean> {
  const ticket = target.searchParams.get('ticket');
  const inUrl = ['token', 'access_token'].find((p) => target.searchParams.has(p));
  if (ticket === null && inUrl === undefined) return false;
  const refuse = async (status: number, message: string) => {
    await edge.deps.rateLimits?.settle(record);
    if (!req.complete) res.setHeader('Connection', 'close');
    await sendJson(res, status, { errors: [{ message, extensions: { code: status === 401 ? 'UNAUTHENTICATED' : 'BAD_REQUEST', ...(status === 400 ? { field: 'ticket' } : {}) } }] });
    return true;
  };
  if (inUrl) return refuse(401, `${inUrl}: an API token is never accepted in a URL; send Authorization: Bearer <token>, or for an EventSource a ticket from createSubscriptionTicket (ticket=)`);
  const eventStream = (req.headers.accept ?? '').toLowerCase().includes('text/event-stream');
  if (req.method !== 'GET' || !eventStream || req.headers.authorization !== undefined) {
    return refuse(400, 'ticket: only on a GET event stream (Accept: text/event-stream) without an Authorization header');
  }
  const { prisma, clock } = edge.deps;
  const viewer = await redeemSubscriptionTicket(prisma, ticket!, clock.now());
  if (!viewer) return refuse(401, 'ticket: unknown, expired or already used; ask createSubscriptionTicket for a new one');
  record.viewer = Promise.resolve(noteViewer(record, viewer));
  record.revalidate = () => viewerForTokenId(prisma, viewer.tokenId);
  return false;
}

/**
 * Whether the operation that runs (`operationName`, else the only one) is a published read: a
 * query whose every root field — through fragments spread or inlined on the root, aliases
 * allowed — is in PUBLISHED_READ_ROOT_FIELDS (src/auth/audience.ts). By name: a field the schema
 * lacks fails validation anyway. Mutations and subscriptions never are.
 */
export function isPublishedRead(document: DocumentNode | undefined, operationName: string | null | undefined): boolean {
  const operation = document && getOperationAST(document, operationName);
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

/**
 * No NUL or control character (lib/input-hygiene.ts) in GraphQL variables or string literals: a
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
 * GraphQL validation rule: a string literal in the document (an argument, an input object field,
 * a default value) may not contain a forbidden character either. `\u0000` escapes are legal
 * GraphQL, so the parser lets them through.
 */
export function CleanStringLiteralsRule(context: ValidationContext): ASTVisitor {
  return {
    [Kind.STRING](node, _key, parent, _path, ancestors) {
      if (!FORBIDDEN_CHAR.test(node.value)) return;
      // Name the argument or input field the literal belongs to, outermost first.
      const names: string[] = [];
      for (const a of [...ancestors, parent]) {
        if (!a) continue;
        if (Array.isArray(a)) continue;
        const n = a as { kind?: string; name?: { value: string } };
        if ((n.kind === Kind.ARGUMENT || n.kind === Kind.OBJECT_FIELD) && n.name) names.push(n.name.value);
      }
      const field = names.join('.') || 'query';
      context.reportError(
        new GraphQLError(`${field}: ${FORBIDDEN_CHAR_MESSAGE}`, { nodes: [node], extensions: { code: 'BAD_REQUEST', field } }),
      );
    },
  };
}

/**
 * The HTTP status of a GraphQL result from its errors, in one place (GraphQL over HTTP: see
 * graphql-over-http.ts and docs/decisions.md, "GraphQL over HTTP"):
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

/** Expected errors keep their code (and field); anything else is logged and masked. */
function maskError(error: unknown, message: string, log: Logger): Error {
  const gqlError = error instanceof GraphQLError ? error : undefined;
  const at = { nodes: gqlError?.nodes, path: gqlError?.path };
  const e = toPublicError(error, log, 'GraphQL resolver', currentRequest());
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
