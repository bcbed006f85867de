// GraphQL over WebSocket (the `graphql-transport-ws` protocol of the graphql-ws library, what most
// Apollo Client and urql set-ups use) on /graphql, beside the event streams (live-sse.ts): README
// "Live updates", docs/decisions.md "graphql-ws and EventSource".
//
// - Upgrade requests to /graphql come here (server.ts `upgrade`); a plain GET still goes to yoga.
//   Refused before the handshake: another path (404), not a WebSocket upgrade (400), a client
//   address at its socket cap (429), a server shutting down (503).
// - Authentication: the API token in `connectionParams` (`{ authorization: 'Bearer …' }` or
//   `{ token }`), checked at `connection_init`: none → close 4401, unknown or revoked → 4403,
//   a `published`-scoped token → 4403 (it reads published content over HTTP only). The token is
//   checked again (token cache) before every operation: revoked → the operation fails and the
//   socket closes with 4403.
// - Operations run on yoga's own pipeline (`getEnveloped`: the document limits, error masking,
//   the complexity budget) with a context built like an HTTP request's, one per operation, whose
//   `live` carries the caps' owner (token id, client IP) and the token re-check: subscriptions
//   are the same fields on the same feed (src/graphql/subscriptions.ts), ordered, resumable with
//   `after`, re-checked before every delivery (a revoked token or lost access completes them),
//   capped per token and per address (RATE_LIMITED). Queries and mutations are charged to the
//   rate limit like over HTTP (their complexity), a subscription 1 point, like an event stream.
// - Bounds: message size (`WS_MAX_PAYLOAD_BYTES`: ws closes with 1009 above it), time to send
//   `connection_init` (`WS_INIT_TIMEOUT_MS`: 4408), open sockets per client address
//   (`WS_MAX_CONNECTIONS_PER_IP`), and ws-level pings (a dead peer is dropped).
// - Read replicas (DATABASE_REPLICA_URLS): a query runs on a fit replica like over HTTP;
//   mutations and subscriptions on the primary. Read-your-writes: the client's token (the
//   `X-Docgraph-Lsn` value of an HTTP write) goes in `connectionParams.lsn` for the whole
//   connection and/or in an operation's `extensions.lsn`; a query is served by a replica only
//   once it has replayed both (a token that does not parse: the primary). A mutation's result
//   carries `extensions.lsn` (the primary's WAL position after it committed) and the connection
//   keeps the latest, so the same socket's next queries read its own writes without echoing it.
// - Observability: one access log line per socket at its close (status 101, duration, operation
//   count, close code) under the upgrade's request id (sent on the 101 as `X-Request-Id`), a
//   line per refused upgrade, and the connection counter and open gauge (observability.ts).
import type http from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { useServer } from 'graphql-ws/use/ws';
import { GraphQLError, getOperationAST, type DocumentNode, type ExecutionArgs, type GraphQLFormattedError } from 'graphql';
import type { YogaServerInstance } from 'graphql-yoga';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { Viewer } from '../auth/access.ts';
import type { Context } from '../graphql/context.ts';
import { bearerToken } from '../auth/tokens.ts';
import { ERROR_CODES, toPublicError } from '../lib/errors.ts';
import { clientIp, graphqlCost, RATE_LIMITED_MESSAGE, type RateLimits } from './rate-limit.ts';
import { FORBIDDEN_CHAR_MESSAGE, findForbiddenString } from '../lib/input-hygiene.ts';
import { documentIsIntrospectionOnly } from './explorer.ts';
import { REQUEST_ID_HEADER, requestIdFrom, type Observability, type WebSocketRecord } from './observability.ts';
import type { Db } from '../db/client.ts';
import { formatLsn, parseLsn } from '../db/replicas.ts';

export const GRAPHQL_WS_PATH = '/graphql';

export type LiveWsDeps = {
  yoga: YogaServerInstance<any, any>;
  config: Config;
  log: Logger;
  rateLimits?: RateLimits;
  /** The viewer of an API token (through the token cache), null when unknown or revoked. */
  viewerForToken(token: string): Promise<Viewer | null>;
  /** The context of one operation, as server.ts builds an HTTP request's; `db`: a query's client (`readDb`), default the primary. */
  makeContext(viewer: Viewer, req: http.IncomingMessage, db?: Db): Context;
  /** With read replicas: the client a query needing `lsn` (a read-your-writes token; undefined: none) runs on; undefined = the primary. */
  readDb?(lsn: string | undefined): Promise<Db | undefined>;
  /** With read replicas: the primary's WAL position, the token a mutation's result carries. */
  writePosition?(): Promise<string>;
  /** Trusted documents in `only` mode: whether a document's text may run (server.ts). */
  trustedText?: (text: string) => boolean;
  /** The access log and metrics of sockets and refused upgrades. */
  obs?: Pick<Observability, 'webSocket' | 'upgradeRefused'>;
};

/**
 * What a connection learnt at `connection_init`; `lsn`: its read-your-writes token (from
 * `connectionParams.lsn`, then the latest of its own mutations), `badLsn`: one that did not parse.
 */
type Connection = { token: string; viewer: Viewer; ip: string; lsn?: bigint; badLsn?: boolean };

/** A read-your-writes token as sent by a client: absent, a position, or unusable (the primary then). */
function lsnOf(value: unknown): { lsn?: bigint; bad?: boolean } {
  if (value === undefined || value === null) return {};
  const lsn = typeof value === 'string' ? parseLsn(value) : undefined;
  return lsn === undefined ? { bad: true } : { lsn };
}
const maxLsn = (a: bigint | undefined, b: bigint | undefined) => (a === undefined ? b : b === undefined || a >= b ? a : b);

const KNOWN_CODES: readonly string[] = [...ERROR_CODES, 'INTERNAL_SERVER_ERROR', 'PERSISTED_QUERY_ONLY'];

/** A GraphQL error as a client may see it: a known code and its message, never an internal one. */
function publicError(e: GraphQLError, log: Logger): GraphQLFormattedError {
  const json = e.toJSON();
  const code = e.extensions?.code;
  const extensions = { ...(json.extensions ?? {}) } as Record<string, unknown>;
  delete extensions.http;
  if (typeof code === 'string' && KNOWN_CODES.includes(code)) return { ...json, extensions };
  // A request error (parse, validation: no path) is the client's; anything else is decided once
  // (toPublicError: AppErrors keep their code, a database outage is SERVICE_UNAVAILABLE, the rest masked).
  if (!e.path && !e.originalError) return { ...json, extensions: { ...extensions, code: 'BAD_REQUEST' } };
  const p = toPublicError(e, log, 'graphql-ws operation');
  const message = p.kind === 'expected' ? p.error.message : p.kind === 'request' ? p.error.message : p.message;
  const outCode = p.kind === 'expected' ? p.error.code : p.kind === 'unavailable' ? 'SERVICE_UNAVAILABLE' : p.kind === 'request' ? 'BAD_REQUEST' : 'INTERNAL_SERVER_ERROR';
  return { message, ...(json.locations ? { locations: json.locations } : {}), ...(json.path ? { path: json.path } : {}), extensions: { code: outCode } };
}

const requestError = (message: string, code = 'BAD_REQUEST', extra: Record<string, unknown> = {}) => new GraphQLError(message, { extensions: { code, ...extra } });

export function createLiveWebSocket(deps: LiveWsDeps) {
  const { config, log } = deps;
  const wss = new WebSocketServer({ noServer: true, maxPayload: config.liveWs.maxPayloadBytes, perMessageDeflate: false });
  const connections = new WeakMap<object, Connection>();
  /** Each operation's enveloped pipeline, by its context. */
  const pipelines = new WeakMap<object, ReturnType<LiveWsDeps['yoga']['getEnveloped']>>();
  const perIp = new Map<string, number>();
  /** Each socket's access log record, by its upgrade request and then by the socket. */
  const upgrades = new WeakMap<http.IncomingMessage, WebSocketRecord>();
  const records = new WeakMap<object, WebSocketRecord>();
  /** Contexts of mutations whose result gets the read-your-writes token (with replicas only). */
  const mutations = new WeakSet<object>();
  let closing = false;

  useServer<Record<string, unknown>>(
    {
      isProd: true, // close reasons never carry an internal error's message
      connectionInitWaitTimeout: config.liveWs.initTimeoutMs,
      async onConnect(ctx) {
        const { socket, request } = ctx.extra;
        const params = ctx.connectionParams ?? {};
        const header = params.authorization ?? params.Authorization;
        const token = typeof header === 'string' ? bearerToken(header) : typeof params.token === 'string' && params.token ? params.token : undefined;
        const ip = clientIp(request, config.rateLimit.trustProxy);
        if (!token) {
          await deps.rateLimits?.charge({ kind: 'anonymous', id: ip }, 1);
          socket.close(4401, 'Unauthorized: send connectionParams { authorization: "Bearer <token>" }');
          return false;
        }
        let viewer: Viewer | null;
        try {
          viewer = await deps.viewerForToken(token);
        } catch (err) {
          toPublicError(err, log, 'graphql-ws token lookup');
          socket.close(1011, 'The token could not be checked; retry shortly');
          return false;
        }
        // Guessing tokens costs the address's budget, using one the user's (like an HTTP request).
        const charge = await deps.rateLimits?.charge(viewer ? { kind: 'user', id: viewer.user.id } : { kind: 'anonymous', id: ip }, 1);
        if (charge?.limited) {
          socket.close(4429, `${RATE_LIMITED_MESSAGE.split(':')[0]}: retry in ${charge.retryAfter} s`);
          return false;
        }
        if (!viewer) {
          socket.close(4403, 'Forbidden: the token is unknown or revoked');
          return false;
        }
        if (viewer.scope) {
          socket.close(4403, 'Forbidden: a published-read token reads over HTTP only');
          return false;
        }
        const initial = lsnOf(params.lsn);
        connections.set(ctx, { token, viewer, ip, lsn: initial.lsn, badLsn: initial.bad });
        records.get(socket)?.user(viewer);
        return true;
      },
      async onSubscribe(ctx, _id, payload) {
        const conn = connections.get(ctx);
        if (!conn) return [requestError('Not authenticated', 'UNAUTHENTICATED')];
        const { request, socket } = ctx.extra;
        records.get(socket)?.operation();
        // The token again: revoked since connection_init → this fails and the socket closes.
        const viewer = await deps.viewerForToken(conn.token).catch(() => null);
        if (!viewer) {
          setImmediate(() => socket.close(4403, 'Forbidden: the token was revoked'));
          return [requestError('The API token was revoked', 'UNAUTHENTICATED')];
        }
        conn.viewer = viewer;
        if (typeof payload.query !== 'string' || !payload.query) return [requestError('query: must be a GraphQL document')];
        const bad = findForbiddenString(payload.variables ?? {}, 'variables');
        if (bad !== undefined) return [requestError(`${bad}: ${FORBIDDEN_CHAR_MESSAGE}`, 'BAD_REQUEST', { field: bad })];
        const pipeline = deps.yoga.getEnveloped({ req: request, params: payload });
        let document: DocumentNode;
        try {
          document = pipeline.parse(payload.query);
        } catch (err) {
          return [err instanceof GraphQLError ? err : requestError('Syntax error')];
        }
        if (deps.trustedText && !deps.trustedText(payload.query) && !documentIsIntrospectionOnly(document)) {
          return [requestError('This server runs trusted documents only: over WebSocket, send the text of a trusted document', 'PERSISTED_QUERY_ONLY')];
        }
        const errors = pipeline.validate(pipeline.schema, document);
        if (errors.length) return errors;
        const operation = getOperationAST(document, payload.operationName);
        if (!operation) return [requestError('operationName: names no operation of the document (or the document has several and none is named)')];
        // A query on a replica that has replayed the connection's and the operation's tokens.
        let db: Db | undefined;
        if (deps.readDb && operation.operation === 'query') {
          const own = lsnOf((payload.extensions as Record<string, unknown> | undefined)?.lsn);
          const lsn = maxLsn(conn.lsn, own.lsn);
          db = conn.badLsn || own.bad ? undefined : await deps.readDb(lsn === undefined ? undefined : formatLsn(lsn));
        }
        const contextValue: Context = {
          ...deps.makeContext(viewer, request, db),
          live: {
            lastEventId: undefined,
            revalidate: () => deps.viewerForToken(conn.token),
            owner: { tokenId: viewer.tokenId, ip: conn.ip },
          },
        };
        // The rate limit: a subscription 1 point (like an event stream), anything else its cost.
        if (deps.rateLimits) {
          const cost = operation.operation === 'subscription' ? 1 : graphqlCost(document, payload.operationName, payload.variables ?? {}, contextValue, pipeline.schema);
          const c = await deps.rateLimits.charge({ kind: 'user', id: viewer.user.id }, cost);
          if (c.limited) return [requestError(RATE_LIMITED_MESSAGE, 'RATE_LIMITED', { retryAfter: c.retryAfter })];
          contextValue.rateLimit = { cost, limit: c.limit, remaining: c.remaining, resetAt: c.resetAt };
        }
        pipelines.set(contextValue, pipeline);
        if (deps.writePosition && operation.operation === 'mutation') mutations.add(contextValue);
        return {
          schema: pipeline.schema,
          document,
          operationName: payload.operationName,
          variableValues: payload.variables ?? undefined,
          contextValue,
          rootValue: {},
        } satisfies ExecutionArgs;
      },
      execute: (args) => pipelines.get(args.contextValue as object)!.execute(args) as never,
      subscribe: (args) => pipelines.get(args.contextValue as object)!.subscribe(args) as never,
      async onNext(ctx, _id, _payload, args, result) {
        // A cached answer (published cache, introspection cache) carries its bytes in `stringify`.
        const r = typeof (result as { stringify?: unknown }).stringify === 'function' ? JSON.parse((result as unknown as { stringify: () => string }).stringify()) : result;
        const out: Record<string, unknown> = {};
        if (r.data !== undefined) out.data = r.data;
        if (r.errors?.length) out.errors = r.errors.map((e: unknown) => (e instanceof GraphQLError ? publicError(e, log) : e));
        const { http: _http, ...extensions } = (r.extensions ?? {}) as Record<string, unknown>;
        // A mutation has committed (or failed) by now: its result carries the read-your-writes token.
        if (mutations.has(args.contextValue as object)) {
          const lsn = await deps.writePosition!().catch((err: unknown) => void log.warn({ err }, 'could not read the WAL position after a write'));
          if (lsn) {
            extensions.lsn = lsn;
            const conn = connections.get(ctx);
            if (conn) conn.lsn = maxLsn(conn.lsn, parseLsn(lsn));
          }
        }
        if (Object.keys(extensions).length) out.extensions = extensions;
        return out;
      },
      onError(_ctx, _id, _payload, errors) {
        return errors.map((e) => publicError(e, log));
      },
    },
    wss,
    config.liveWs.keepAliveMs,
  );

  // The 101 carries the upgrade's request id, as every HTTP answer does.
  wss.on('headers', (headers: string[], req: http.IncomingMessage) => {
    const record = upgrades.get(req);
    if (record) headers.push(`${REQUEST_ID_HEADER}: ${record.id}`);
  });

  wss.on('connection', (socket: WebSocket, req: http.IncomingMessage) => {
    const ip = clientIp(req, config.rateLimit.trustProxy);
    perIp.set(ip, (perIp.get(ip) ?? 0) + 1);
    const record = upgrades.get(req);
    if (record) {
      records.set(socket, record);
      record.opened();
      socket.once('close', (code: number) => record.closed(code));
    }
    socket.once('close', () => {
      const n = (perIp.get(ip) ?? 1) - 1;
      if (n <= 0) perIp.delete(ip);
      else perIp.set(ip, n);
    });
    // ws reports protocol errors (a message over the size limit: 1009) here after closing.
    socket.on('error', (err) => log.debug({ err, ip }, 'graphql-ws: socket error'));
  });

  /** Answer an upgrade request we refuse with a plain HTTP response and close the connection. */
  function refuse(req: http.IncomingMessage, socket: Duplex, status: number, reason: string, message: string) {
    const requestId = requestIdFrom(req.headers['x-request-id']);
    deps.obs?.upgradeRefused(req, status, requestId);
    const body = JSON.stringify({ errors: [{ message, extensions: { code: status === 429 ? 'RATE_LIMITED' : status === 503 ? 'SERVICE_UNAVAILABLE' : status === 404 ? 'NOT_FOUND' : 'BAD_REQUEST' } }] });
    socket.end(`HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n${REQUEST_ID_HEADER}: ${requestId}\r\n${status === 429 || status === 503 ? 'Retry-After: 1\r\n' : ''}\r\n${body}`);
  }

  return {
    /** server.ts's `upgrade` listener. */
    handleUpgrade(req: http.IncomingMessage, socket: Duplex, head: Buffer) {
      socket.on('error', () => socket.destroy());
      const pathname = (req.url ?? '/').split('?')[0];
      if (pathname !== GRAPHQL_WS_PATH) return refuse(req, socket, 404, 'Not Found', `Not found: ${pathname.slice(0, 200)}`);
      if ((req.headers.upgrade ?? '').toLowerCase() !== 'websocket') return refuse(req, socket, 400, 'Bad Request', 'Only WebSocket upgrades (subprotocol graphql-transport-ws) are served on /graphql');
      if (closing) return refuse(req, socket, 503, 'Service Unavailable', 'The server is shutting down; retry shortly (or on another instance)');
      const ip = clientIp(req, config.rateLimit.trustProxy);
      if ((perIp.get(ip) ?? 0) >= config.liveWs.maxConnectionsPerIp) {
        return refuse(req, socket, 429, 'Too Many Requests', `At most ${config.liveWs.maxConnectionsPerIp} WebSocket connections per client address: close one first`);
      }
      if (deps.obs) upgrades.set(req, deps.obs.webSocket(req));
      wss.handleUpgrade(req, socket, head, (ws) => wss.emit('connection', ws, req));
    },
    /** Open sockets now (for tests and metrics). */
    size: () => wss.clients.size,
    /** Shutdown: refuse new sockets, close the open ones (1001 Going Away: clients reconnect elsewhere), cut the stragglers. */
    close(graceMs = 2000) {
      closing = true;
      for (const client of wss.clients) client.close(1001, 'Server shutting down');
      const cut = setTimeout(() => {
        for (const client of wss.clients) client.terminate();
      }, graceMs);
      cut.unref();
    },
  };
}
