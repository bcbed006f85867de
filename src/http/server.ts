// One node:http server: the path switch between GraphQL at /graphql (graphql.ts), the REST shim at
// /v1 (rest.ts), file downloads, SSO and health probes; every request with its record
// (observability.ts `handle`), CORS, and the last resort for failures. Authentication happens
// once per request, for both APIs (edge.ts).
import http from 'node:http';
import type { Db } from '../db/client.ts';
import { RETRY_AFTER_HEADER, RETRY_AFTER_SECONDS, errorBody, toPublicError } from '../lib/errors.ts';
import type { RequestRecord } from '../graphql/context.ts';
import { createEdge, type AppDeps, type Edge } from './edge.ts';
import { createGraphqlEndpoint, type GraphqlEndpoint } from './graphql.ts';
import { createRestEndpoint } from './rest.ts';
import { handleDownload } from './downloads.ts';
import { handleSsoRequest } from './sso.ts';
import { sendJson } from './compression.ts';
import { createCors } from './cors.ts';
import { LINGER_MS, RequestRejected, lingerOnUnreadBody, parseRequestTarget } from './limits.ts';
import { REQUEST_ID_HEADER } from './observability.ts';
import { challengeEvery401 } from './graphql-over-http.ts';
import { createLiveWebSocket } from './live-ws.ts';
import { Replicas } from '../db/replicas.ts';
import { idempotencyKeyOf, runIdempotent } from './idempotency.ts';

export type { AppDeps } from './edge.ts';
export { PUBLISHED_ONLY_MESSAGE } from './edge.ts';
export { DOCUMENT_CACHE_BYTES, DOCUMENT_ERROR_CACHE_BYTES, isPublishedRead } from './graphql.ts';

export function createHttpServer(deps: AppDeps & { /** `/readyz`'s probe on its own connection (src/db/check.ts); the request pool when absent. */ ready?: () => Promise<boolean> }) {
  const { obs } = deps;
  const edge = createEdge(deps);
  const graphql = createGraphqlEndpoint(edge);
  const rest = createRestEndpoint(edge, graphql.publishedCache);
  // One CORS policy for every route (cors.ts).
  const cors = createCors(deps.config.cors);
  // obs.handle: the request's record, its id (header, log lines), the access log line and the metrics.
  const server = http.createServer((req, res) =>
    obs.handle(req, res, async (record) => {
      // An answer sent before the body was read to its end still reaches the client (limits.ts).
      lingerOnUnreadBody(req, res, LINGER_MS);
      // `WWW-Authenticate: Bearer …` on every 401, whoever answers it (graphql-over-http.ts).
      challengeEvery401(req, res);
      try {
        // CORS headers on every answer; a preflight is answered here (cors.ts).
        if (cors.handle(req, res)) return;
        return await route(req, res, record);
      } catch (err) {
        return await answerFailure(edge, req, res, record, err);
      }
    }),
  );

  /** The path switch. Routing reads the raw path: a segment is one id, whatever it contains (limits.ts). */
  async function route(req: http.IncomingMessage, res: http.ServerResponse, record: RequestRecord) {
    const target = parseRequestTarget(req.url);
    const top = target.segments[0];
    if (target.pathname === '/healthz') return await sendJson(res, 200, { status: 'ok' });
    if (target.pathname === '/metrics') return await obs.serveMetrics(req, res);
    if (target.pathname === '/readyz') return await answerReady(deps.ready ?? (() => databaseReady(deps.prisma)), res);
    if (top === 'graphql' || top === 'v1') {
      const api = () => (top === 'graphql' ? graphql.route(req, res, target, record) : rest.route(req, res, target, record));
      // A write with an Idempotency-Key runs at most once per caller and key (idempotency.ts).
      const key = idempotencyKeyOf(req);
      if (key === undefined) return await api();
      if (typeof key === 'object') return sendJson(res, 400, errorBody(400, `Idempotency-Key: ${key.invalid}`));
      record.idempotencyKey = key;
      return await runIdempotent(edge, req, res, record, key, api);
    }
    if (top === 'files') {
      const viewer = await edge.viewerFor(req, record);
      return await handleDownload(req, res, target, edge.makeContext(viewer, 'rest', undefined, record));
    }
    if (top === 'sso') {
      // Anonymous by nature (the identity provider's browser POST): counted per client IP.
      if (deps.rateLimits && !(await deps.rateLimits.admitRest(req, res, () => Promise.resolve(null)))) return;
      const { body, release } = await edge.read(req);
      try {
        return await handleSsoRequest(req, res, target, body.toString('utf8'), edge.makeContext(null, 'rest', undefined, record));
      } finally {
        release();
      }
    }
    if (target.pathname === '/') return sendJson(res, 200, { name: 'docgraph', graphql: '/graphql', rest: '/v1', health: '/healthz' });
    return sendJson(res, 404, errorBody(404, `Not found: ${target.pathname}`));
  }

  server.keepAliveTimeout = 65_000;
  const liveWs = webSocketsOn(server, edge, graphql);
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
  const { publishedCache, documentCaches, introspectionCache } = graphql;
  return Object.assign(server, { publishedCache, documentCaches, introspectionCache, bodyBudget: edge.bodyBudget, liveWs });
}

/** A failure no handler answered: a refused request (its own status), else what toPublicError decides (503 when the database fails: the token lookup, downloads, SSO). */
async function answerFailure(edge: Edge, req: http.IncomingMessage, res: http.ServerResponse, record: RequestRecord, err: unknown) {
  if (err instanceof RequestRejected) {
    await edge.deps.rateLimits?.settle(record); // a GraphQL request refused before yoga still counts
    // A refused body may not have been read to its end: do not reuse the connection.
    if (err.status === 408 || err.status === 413 || err.status === 503 || !req.complete) res.setHeader('Connection', 'close');
    for (const [k, v] of Object.entries(err.headers)) res.setHeader(k, v);
    if (!res.headersSent) return sendJson(res, err.status, errorBody(err.status, err.message)).catch(() => res.end());
    return res.end();
  }
  const e = toPublicError(err, edge.deps.log, 'request handler', record);
  if (res.headersSent) return void res.end();
  if (e.kind === 'unavailable') res.setHeader('Retry-After', String(e.retryAfterSeconds ?? RETRY_AFTER_SECONDS));
  const message = e.kind === 'expected' || e.kind === 'request' ? e.error.message : e.message;
  await sendJson(res, e.status, errorBody(e.status, message)).catch(() => res.end());
}

/** GraphQL over WebSocket (graphql-ws) on /graphql: upgrade requests only (live-ws.ts). */
function webSocketsOn(server: http.Server, edge: Edge, graphql: GraphqlEndpoint) {
  const { config, log, rateLimits, replicas } = edge.deps;
  const liveWs = createLiveWebSocket({
    yoga: graphql.yoga, config, log, rateLimits,
    viewerForToken: edge.viewerForToken,
    makeContext: (viewer, req, db) => edge.makeContext(viewer, 'graphql', req, undefined, db),
    // With read replicas: queries on one (read-your-writes by the connection's token), mutations answer a token.
    ...(replicas?.list.length ? { readDb: async (lsn: string | undefined) => (await replicas.route(lsn))?.prisma, writePosition: () => Replicas.currentLsn(edge.deps.prisma) } : {}),
    trustedText: config.trustedDocuments.mode === 'only' ? (text) => graphql.trusted.has(text) : undefined,
    obs: edge.deps.obs,
  });
  server.on('upgrade', liveWs.handleUpgrade);
  // A shutdown (drain.ts closes the server) closes the sockets too: upgraded connections are not the HTTP server's to close.
  const closeHttp = server.close.bind(server);
  server.close = ((cb?: (err?: Error) => void) => (liveWs.close(), closeHttp(cb))) as typeof server.close;
  return liveWs;
}

/** `/readyz`: 200 when the database answers, else 503 with Retry-After. */
async function answerReady(ready: () => Promise<boolean>, res: http.ServerResponse) {
  if (await ready()) return sendJson(res, 200, { status: 'ready' });
  res.setHeader('Retry-After', RETRY_AFTER_HEADER['Retry-After']);
  return sendJson(res, 503, { status: 'database unreachable' });
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
