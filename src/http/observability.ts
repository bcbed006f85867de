// Operations: request ids, one access log line per request, Prometheus metrics.
//
// - Every request runs with its record (graphql/context.ts `RequestRecord`, current through
//   request-context.ts): its id is the caller's well-formed `X-Request-Id` or a generated one,
//   echoed on the response and added to every log line written while the request runs
//   (`withRequestIds`), and to the body of unexpected errors.
// - When the response is finished (or the client goes away) one line is logged: method, route
//   pattern, status, duration, SQL statements, user, GraphQL operation. Level: info, warn for
//   429/413/503, error only for unexpected failures (other 5xx, or a masked GraphQL error).
// - `/metrics` (Prometheus text) from a registry of this app instance (tests run several apps in
//   one process): HTTP requests and latency by route/method/status, statements per request, the
//   database pool, the job queue (read on scrape), process metrics and the GraphQL phases.
// docs/decisions.md, "Observability".
import crypto from 'node:crypto';
import type http from 'node:http';
import type pg from 'pg';
import type { Logger } from 'pino';
import { getOperationAST } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { usePrometheus } from '@graphql-yoga/plugin-prometheus';
import type { Config } from '../config.ts';
import type { Viewer } from '../auth/access.ts';
import type { RequestRecord } from '../graphql/context.ts';
import { errorBody } from '../lib/errors.ts';
import { sendJson } from './compression.ts';
import { currentRequest, runWithRequest } from './request-context.ts';
import { READ_ROUTES, type Replicas } from '../db/replicas.ts';

export const REQUEST_ID_HEADER = 'X-Request-Id';
/** What a caller-supplied request id may look like; anything else is replaced by a generated one. */
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
/** The job queue is read on scrape: a slow or absent database must not hang the scrape. */
const QUEUE_SCRAPE_TIMEOUT_MS = 1000;
/** Operation names are the client's: logged, cut to this length. */
const MAX_OPERATION_NAME = 100;

export function requestIdFrom(header: string | string[] | undefined): string {
  return typeof header === 'string' && REQUEST_ID.test(header) ? header : crypto.randomUUID();
}

/** A child of `log` whose lines carry `requestId` when written while a request runs. */
export function withRequestIds(log: Logger): Logger {
  return log.child(
    {},
    {
      formatters: {
        log: (obj: object) => {
          const id = currentRequest()?.id;
          return id && !('requestId' in obj) ? { requestId: id, ...obj } : obj;
        },
      },
    },
  );
}

/** The route pattern of a request no router named (REST routes set theirs): never the raw path. */
export function routeOf(rawUrl: string | undefined): string {
  const path = (rawUrl ?? '/').split('?')[0];
  if (path === '/' || path === '/healthz' || path === '/readyz' || path === '/metrics' || path === '/graphql') return path;
  const s = path.split('/').slice(1);
  if (s[0] === 'graphql') return s[1] === 'assets' && s.length === 3 ? '/graphql/assets/:file' : '/graphql/*';
  if (s[0] === 'files') return s[1] === 'pdf' && s.length === 3 ? '/files/pdf/:exportId' : s.length === 2 ? '/files/:fileId' : '/files/*';
  if (s[0] === 'sso') return s[1] === 'saml' && s.length === 4 && /^(acs|start|metadata)$/.test(s[3]) ? `/sso/saml/:providerId/${s[3]}` : '/sso/*';
  if (s[0] === 'v1') return '/v1/*';
  return '(unmatched)';
}

function levelFor(status: number, unexpected: boolean): 'info' | 'warn' | 'error' {
  if (unexpected || (status >= 500 && status !== 503)) return 'error';
  if (status === 503 || status === 429 || status === 413) return 'warn';
  return 'info';
}

/** Record the authenticated caller on the request's record (access log, metrics). */
export function noteViewer<V extends Viewer | null>(record: RequestRecord, viewer: V): V {
  if (viewer) {
    record.userId = viewer.user.id;
    record.tokenId = viewer.tokenId;
  }
  return viewer;
}


type Metrics = {
  registry: Registry;
  requests: Counter<'method' | 'route' | 'status'>;
  duration: Histogram<'method' | 'route' | 'status'>;
  statements: Histogram<'method' | 'route'>;
  wsConnections: Counter;
  wsOpen: Gauge;
};

/** One WebSocket connection (graphql-ws) as the access log and the metrics see it (live-ws.ts). */
export type WebSocketRecord = {
  /** The request id of the upgrade (the caller's `X-Request-Id` or a generated one), sent on the 101. */
  readonly id: string;
  /** The handshake completed (101): counted and open from now. */
  opened(): void;
  /** The caller authenticated at `connection_init`. */
  user(viewer: Viewer): void;
  /** An operation (`subscribe` message) arrived on the socket. */
  operation(): void;
  /** The socket closed with `code`: one access log line (status 101, its duration and operation count). */
  closed(code: number): void;
};

export class Observability {
  private readonly metrics?: Metrics;
  private readonly offQuery: () => void;
  private readonly log: Logger;

  constructor(
    private readonly opts: {
      config: Config;
      log: Logger;
      /** Subscribe to every SQL statement (createPrisma's `onQuery`). */
      onQuery: (listener: (sql: string) => void) => () => void;
      /** The API's connection pool (the one inside the Prisma adapter). */
      pool?: pg.Pool;
    },
  ) {
    this.log = opts.log;
    // Prisma emits its query event inside the caller's async context: the request's own.
    this.offQuery = opts.onQuery(() => {
      const info = currentRequest();
      if (info) info.statements++;
    });
    if (opts.config.metrics) this.metrics = this.createMetrics();
  }

  get registry(): Registry | undefined {
    return this.metrics?.registry;
  }

  close() {
    this.offQuery();
    this.metrics?.registry.clear();
  }

  /** Run `next` as one request, with its new record: its id (header too), its access log line and its metrics. */
  handle(req: http.IncomingMessage, res: http.ServerResponse, next: (record: RequestRecord) => Promise<unknown>): Promise<unknown> {
    const record: RequestRecord = { id: requestIdFrom(req.headers['x-request-id']), startedAt: process.hrtime.bigint(), method: req.method ?? 'GET', statements: 0 };
    res.setHeader(REQUEST_ID_HEADER, record.id);
    res.once('close', () => this.finish(record, req, res));
    return runWithRequest(record, () => next(record));
  }

  private finish(info: RequestRecord, req: http.IncomingMessage, res: http.ServerResponse) {
    const seconds = Number(process.hrtime.bigint() - info.startedAt) / 1e9;
    const route = info.route ?? routeOf(req.url);
    const aborted = !res.writableFinished;
    const status = res.headersSent || !aborted ? res.statusCode : 499;
    const line = {
      method: info.method,
      route,
      status,
      durationMs: Math.round(seconds * 10_000) / 10,
      statements: info.statements,
      ...(info.userId ? { userId: info.userId } : {}),
      ...(info.operationName ? { operationName: info.operationName } : {}),
      ...(aborted ? { aborted: true } : {}),
    };
    this.log[levelFor(status, !!info.unexpected)](line, 'request');
    const m = this.metrics;
    if (m) {
      const labels = { method: info.method, route, status: String(status) };
      m.requests.inc(labels);
      m.duration.observe(labels, seconds);
      m.statements.observe({ method: info.method, route }, info.statements);
    }
  }

  /** A request node's parser refused (clientError): a generated id, one log line, counted. */
  clientError(status: number): string {
    const id = crypto.randomUUID();
    this.log.info({ requestId: id, method: '(unparsed)', route: '(malformed)', status, durationMs: 0, statements: 0 }, 'request');
    this.metrics?.requests.inc({ method: '(unparsed)', route: '(malformed)', status: String(status) });
    return id;
  }

  /**
   * A WebSocket upgrade of /graphql: one access log line when its socket closes (`status` 101,
   * `durationMs` from the upgrade to the close, `operations`, `closeCode`, the user), counted in
   * `docgraph_ws_connections_total` and `docgraph_ws_connections_open` while open. A socket that
   * never completes its handshake logs nothing here (`upgradeRefused` covers refusals).
   */
  webSocket(req: http.IncomingMessage): WebSocketRecord {
    const startedAt = process.hrtime.bigint();
    const id = requestIdFrom(req.headers['x-request-id']);
    let userId: string | undefined;
    let operations = 0;
    let open = false;
    return {
      id,
      opened: () => {
        if (open) return;
        open = true;
        this.metrics?.wsConnections.inc();
        this.metrics?.wsOpen.inc();
      },
      user: (viewer) => void (userId = viewer.user.id),
      operation: () => void operations++,
      closed: (code) => {
        if (!open) return;
        open = false;
        this.metrics?.wsOpen.dec();
        const seconds = Number(process.hrtime.bigint() - startedAt) / 1e9;
        // 1011: the server failed the socket (an unexpected error); anything else is the protocol at work.
        this.log[code === 1011 ? 'error' : 'info'](
          { requestId: id, method: 'GET', route: routeOf(req.url), status: 101, protocol: 'graphql-ws', durationMs: Math.round(seconds * 10_000) / 10, operations, closeCode: code, ...(userId ? { userId } : {}) },
          'request',
        );
      },
    };
  }

  /** An upgrade refused with a plain HTTP answer (live-ws.ts): its access log line and its count, like any request. */
  upgradeRefused(req: http.IncomingMessage, status: number, requestId: string = requestIdFrom(req.headers['x-request-id'])) {
    const route = routeOf(req.url);
    this.log[levelFor(status, false)]({ requestId, method: req.method ?? 'GET', route, status, protocol: 'websocket', durationMs: 0, statements: 0 }, 'request');
    this.metrics?.requests.inc({ method: req.method ?? 'GET', route, status: String(status) });
  }

  /** Yoga plugins: the operation name on the request, the GraphQL phase metrics. */
  yogaPlugins(): Plugin[] {
    const operationName: Plugin = {
      onParams({ params }) {
        const info = currentRequest();
        if (info && typeof params.operationName === 'string' && params.operationName) info.operationName = params.operationName.slice(0, MAX_OPERATION_NAME);
      },
      onExecute({ args }) {
        const info = currentRequest();
        const name = getOperationAST(args.document, args.operationName)?.name?.value;
        if (info && name) info.operationName = name.slice(0, MAX_OPERATION_NAME);
      },
    };
    if (!this.metrics) return [operationName];
    return [
      operationName,
      usePrometheus({
        registry: this.metrics.registry,
        // Served by /metrics below (with its token), not by yoga.
        endpoint: false,
        skipIntrospection: true,
        // Operation names and URLs are chosen by clients: unbounded label values. The access log
        // has the operation name; the metrics stay by operation type.
        labels: { operationName: false, url: false, path: false },
      }),
    ];
  }

  /** `GET /metrics`: 404 when metrics are off, 401 without the configured token. */
  async serveMetrics(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const m = this.metrics;
    if (!m) return sendJson(res, 404, errorBody(404, 'Not found: /metrics'));
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('Allow', 'GET, HEAD');
      return sendJson(res, 405, errorBody(405, `Method ${req.method} is not allowed on /metrics`));
    }
    const token = this.opts.config.metricsToken;
    if (token && !sameSecret(req.headers.authorization ?? '', `Bearer ${token}`)) {
      res.setHeader('WWW-Authenticate', 'Bearer realm="metrics"');
      return sendJson(res, 401, errorBody(401, 'Metrics require Authorization: Bearer <METRICS_TOKEN>'));
    }
    const text = await m.registry.metrics();
    res.writeHead(200, { 'Content-Type': m.registry.contentType, 'Content-Length': Buffer.byteLength(text), 'Cache-Control': 'no-store' });
    res.end(req.method === 'HEAD' ? undefined : text);
  }

  private createMetrics(): Metrics {
    const registry = new Registry();
    collectDefaultMetrics({ register: registry });
    const requests = new Counter({ name: 'docgraph_http_requests_total', help: 'HTTP requests answered, by route pattern, method and status', labelNames: ['method', 'route', 'status'] as const, registers: [registry] });
    const duration = new Histogram({
      name: 'docgraph_http_request_duration_seconds',
      help: 'HTTP request duration (arrival to response end), by route pattern, method and status',
      labelNames: ['method', 'route', 'status'] as const,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    });
    const statements = new Histogram({
      name: 'docgraph_sql_statements_per_request',
      help: 'SQL statements issued for one HTTP request, by route pattern and method',
      labelNames: ['method', 'route'] as const,
      buckets: [0, 1, 2, 3, 5, 8, 13, 21, 34, 55, 89],
      registers: [registry],
    });
    const wsConnections = new Counter({ name: 'docgraph_ws_connections_total', help: 'WebSocket connections (graphql-ws) accepted on /graphql: handshakes completed', registers: [registry] });
    const wsOpen = new Gauge({ name: 'docgraph_ws_connections_open', help: 'WebSocket connections (graphql-ws) open on this process', registers: [registry] });
    const pool = this.opts.pool;
    if (pool) {
      const max = (pool.options as { max?: number }).max ?? 10;
      new Gauge({
        name: 'docgraph_db_pool_connections',
        help: 'API database pool connections by state (idle, busy) and the pool maximum (max)',
        labelNames: ['state'] as const,
        registers: [registry],
        collect() {
          this.set({ state: 'idle' }, pool.idleCount);
          this.set({ state: 'busy' }, pool.totalCount - pool.idleCount);
          this.set({ state: 'max' }, max);
        },
      });
      new Gauge({
        name: 'docgraph_db_pool_waiting',
        help: 'Queries waiting for a free connection of the API database pool',
        registers: [registry],
        collect() {
          this.set(pool.waitingCount);
        },
      });
      this.jobQueueMetrics(registry, pool);
    }
    return { registry, requests, duration, statements, wsConnections, wsOpen };
  }

  /**
   * Gauges read from in-process counters on scrape: the published-structure cache's requests by
   * result (`hit`, `miss`: executed and stored, `bypassed`: the gate said no and the request ran
   * uncached), the live feed's open subscriptions and log reads, and whether the token cache serves
   * (0 while its LISTEN connection is down or stalled). Called once the server exists.
   */
  watch(sources: {
    publishedCache?: { hits: number; misses: number; bypassed: number };
    live?: { readonly size: number; readonly reads: number };
    tokens?: { readonly serving: boolean };
    /** Each process cache's counted bytes and bound (every cache is bounded by bytes). */
    caches?: () => Array<{ name: string; bytes: number; maxBytes: number }>;
    /** The read replicas (DATABASE_REPLICA_URLS), when configured. */
    replicas?: Pick<Replicas, 'routed' | 'states' | 'list'>;
  }) {
    const registry = this.metrics?.registry;
    if (!registry) return;
    if (sources.replicas?.list.length) this.replicaMetrics(registry, sources.replicas);
    const caches = sources.caches;
    if (caches) {
      new Gauge({
        name: 'docgraph_cache_bytes',
        help: 'Bytes a process cache counts against its bound (estimated for page trees), by cache',
        labelNames: ['cache'] as const,
        registers: [registry],
        collect() {
          for (const c of caches()) this.set({ cache: c.name }, c.bytes);
        },
      });
      new Gauge({
        name: 'docgraph_cache_max_bytes',
        help: 'The bound of a process cache in bytes, by cache',
        labelNames: ['cache'] as const,
        registers: [registry],
        collect() {
          for (const c of caches()) this.set({ cache: c.name }, c.maxBytes);
        },
      });
    }
    const cache = sources.publishedCache;
    if (cache) {
      new Counter({
        name: 'docgraph_published_cache_requests_total',
        help: 'Cacheable publishedSite queries by result: hit (stored answer sent), miss (executed and stored), bypassed (the access gate said no; executed)',
        labelNames: ['result'] as const,
        registers: [registry],
        collect() {
          this.reset();
          this.inc({ result: 'hit' }, cache.hits);
          this.inc({ result: 'miss' }, cache.misses);
          this.inc({ result: 'bypassed' }, cache.bypassed);
        },
      });
    }
    const live = sources.live;
    if (live) {
      new Gauge({
        name: 'docgraph_live_subscriptions',
        help: 'Open GraphQL subscriptions (event streams) on this process',
        registers: [registry],
        collect() {
          this.set(live.size);
        },
      });
      new Counter({
        name: 'docgraph_live_feed_reads_total',
        help: 'Reads of the event log by the live feed (one per notice or poll, whatever the number of subscribers)',
        registers: [registry],
        collect() {
          this.reset();
          this.inc(live.reads);
        },
      });
    }
    const tokens = sources.tokens;
    if (tokens) {
      new Gauge({
        name: 'docgraph_token_cache_serving',
        help: 'Whether the token cache serves hits (0: its invalidation LISTEN connection is down or its self-notices are late; tokens are read from the database)',
        registers: [registry],
        collect() {
          this.set(tokens.serving ? 1 : 0);
        },
      });
    }
  }

  /**
   * Read replicas, labelled by their position in DATABASE_REPLICA_URLS (`replica="0"`…): each
   * one's state (`fit` serves reads; `lagging` beyond REPLICA_MAX_LAG_MS and `down` are skipped),
   * replay lag and backlog from its last check (refreshed on scrape when older than the check
   * interval: one statement per replica, bounded by the check's own timeout), the reads each
   * served, and every read routed by where it went and why (`docgraph_db_reads_total`).
   */
  private replicaMetrics(registry: Registry, replicas: Pick<Replicas, 'routed' | 'states' | 'list'>) {
    const labelNames = ['replica'] as const;
    // Each gauge reads the states itself (registry collects run concurrently); `states()` shares
    // one check per replica among them, and none at all while the last one is fresh.
    type Row = Awaited<ReturnType<Replicas['states']>>[number];
    const gauge = (name: string, help: string, value: (r: Row) => number) =>
      new Gauge({
        name,
        help,
        labelNames,
        registers: [registry],
        async collect() {
          for (const r of await replicas.states()) this.set({ replica: String(r.index) }, value(r));
        },
      });
    new Gauge({
      name: 'docgraph_replica_state',
      help: 'A read replica by state at its last check: fit (serves reads), lagging (behind REPLICA_MAX_LAG_MS: skipped), down (no answer, or not in recovery: skipped)',
      labelNames: ['replica', 'state'] as const,
      registers: [registry],
      async collect() {
        for (const r of await replicas.states()) {
          for (const state of ['fit', 'lagging', 'down'] as const) this.set({ replica: String(r.index), state }, r.state === state ? 1 : 0);
        }
      },
    });
    gauge('docgraph_replica_skipped', 'Whether reads skip a replica now (1: down, or lagging beyond REPLICA_MAX_LAG_MS)', (r) => (r.state === 'fit' ? 0 : 1));
    gauge('docgraph_replica_lag_seconds', 'Replay lag of a read replica at its last check (age of the last replayed transaction while received WAL waits; 0 when caught up; +Inf when down or unknown)', (r) =>
      r.status.ok ? r.status.lagMs / 1000 : Infinity,
    );
    gauge('docgraph_replica_replay_backlog_bytes', 'WAL a read replica has received but not replayed yet, at its last check', (r) => r.status.backlogBytes);
    new Counter({
      name: 'docgraph_replica_reads_total',
      help: 'Reads (GraphQL queries, REST reads) a read replica served',
      labelNames,
      registers: [registry],
      collect() {
        this.reset();
        for (const r of replicas.list) this.inc({ replica: String(r.index) }, r.served);
      },
    });
    new Counter({
      name: 'docgraph_db_reads_total',
      help: 'Reads that could go to a replica, by where they went: route="replica", or the primary because read_your_writes (no replica had replayed the client\'s token), lag (replicas too far behind), down (none answering), bad_token (an unparsable token)',
      labelNames: ['route'] as const,
      registers: [registry],
      collect() {
        this.reset();
        for (const route of READ_ROUTES) this.inc({ route }, replicas.routed[route]);
      },
    });
  }

  /**
   * graphile-worker's queue, read on scrape (one statement, bounded by a timer): jobs by state
   * (`queued`: never tried; `retrying`: failed before, will run again; `running`: locked by a
   * worker; `failed`: out of attempts, kept by the queue) and the age of the oldest runnable job.
   */
  private jobQueueMetrics(registry: Registry, pool: pg.Pool) {
    const log = this.log;
    // Registered after `jobs`, whose collect (run first: registration order) sets them.
    const oldest = new Gauge({ name: 'docgraph_job_queue_oldest_runnable_seconds', help: 'Age of the oldest job due and not running (0: none)', registers: [] });
    const up = new Gauge({ name: 'docgraph_job_queue_scrape_success', help: '1 when the job queue could be read for this scrape, else 0 (the job gauges are then absent)', registers: [] });
    new Gauge({
      name: 'docgraph_job_queue_jobs',
      help: 'Background jobs by state (queued, retrying, running, failed)',
      labelNames: ['state'] as const,
      registers: [registry],
      async collect() {
        this.reset();
        oldest.reset();
        try {
          const { rows } = await withTimeout(
            pool.query<{ queued: string; retrying: string; running: string; failed: string; oldest: number | null }>(
              `SELECT count(*) FILTER (WHERE locked_at IS NULL AND attempts = 0 AND attempts < max_attempts) AS queued,
                      count(*) FILTER (WHERE locked_at IS NULL AND attempts > 0 AND attempts < max_attempts) AS retrying,
                      count(*) FILTER (WHERE locked_at IS NOT NULL AND attempts < max_attempts) AS running,
                      count(*) FILTER (WHERE attempts >= max_attempts) AS failed,
                      extract(epoch FROM now() - min(run_at) FILTER (WHERE locked_at IS NULL AND attempts < max_attempts AND run_at <= now()))::float8 AS oldest
                 FROM graphile_worker._private_jobs`,
            ),
            QUEUE_SCRAPE_TIMEOUT_MS,
          );
          for (const state of ['queued', 'retrying', 'running', 'failed'] as const) this.set({ state }, Number(rows[0][state]));
          oldest.set(rows[0].oldest ?? 0);
          up.set(1);
        } catch (err) {
          log.warn({ err }, 'metrics: could not read the job queue');
          up.set(0);
        }
      },
    });
    registry.registerMetric(oldest);
    registry.registerMetric(up);
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
  });
  promise.catch(() => {});
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Compare two secrets in constant time (digests of equal length). */
function sameSecret(given: string, expected: string): boolean {
  const a = crypto.createHash('sha256').update(given).digest();
  const b = crypto.createHash('sha256').update(expected).digest();
  return crypto.timingSafeEqual(a, b);
}
