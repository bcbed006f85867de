// Assembles one running gateway on a database: Prisma, schema, REST table, jobs, HTTP server.
// Used by main.ts, the test helpers and the benchmark.
import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import pino, { type Logger } from 'pino';
import type { Config } from './config.ts';
import { createPrisma, onSecondConnectionInTransaction } from './db/client.ts';
import { ReadyProbe } from './db/check.ts';
import { Replicas } from './db/replicas.ts';
import type { TaskDeps } from './domain/context.ts';
import { onTransactionRetry } from './db/transaction.ts';
import { systemClock, type Clock } from './lib/clock.ts';
import { schema } from './graphql/schema.ts';
import { contentCaches } from './graphql/content-loading.ts';
import { searchCache } from './domain/search.ts';
import { CONDITION_CACHE_BYTES, conditionCacheBytes } from './lib/conditions.ts';
import { buildRestRouter } from './rest/index.ts';
import { createHttpServer } from './http/server.ts';
import { drainHttpServer } from './http/drain.ts';
import { startPurgeChain } from './http/purge.ts';
import { Observability, withRequestIds } from './http/observability.ts';
import type { FileStorage } from './lib/storage.ts';
import { Jobs } from './jobs.ts';
import { tasks } from './tasks.ts';
import { TokenCache } from './auth/token-cache.ts';
import { RateLimits } from './http/rate-limit.ts';
import { EventFeed } from './events/feed.ts';
import { createFileStorage, type Services } from './services.ts';
import { bootstrapIfEmpty } from './domain/users.ts';
import { configureMarkdownPool, startMarkdownPool } from './lib/markdown-pool.ts';
import { currentRequest } from './http/request-context.ts';

export type App = Awaited<ReturnType<typeof createApp>>;

/** How long close() lets in-flight requests run before cutting their connections. */
export const SHUTDOWN_GRACE_MS = 8_000;

export async function createApp(opts: {
  config: Config;
  databaseUrl: string;
  /**
   * Session connections: LISTEN (token cache, live feed), the job worker. Default `databaseUrl`;
   * a different URL means `databaseUrl` is a transaction-mode pooler (src/db/client.ts).
   */
  directUrl?: string;
  clock?: Clock;
  log?: Logger;
  storage?: FileStorage;
  /** Start the background worker (default: config.runWorker). */
  worker?: boolean;
  poolSize?: number;
}) {
  const { config, databaseUrl } = opts;
  const directUrl = opts.directUrl ?? databaseUrl;
  const pooled = directUrl !== databaseUrl;
  // Lines written while a request runs carry its id (src/http/observability.ts).
  const log = withRequestIds(opts.log ?? pino({ level: config.logLevel }));
  const clock = opts.clock ?? systemClock;
  // One pool of parser threads per process, shared by every app in it (lib/markdown-pool.ts),
  // started before the first request: writes parse inside their transaction.
  // Parsing threads are shared out by caller (the request's user; jobs as one more caller).
  configureMarkdownPool({ ...config.markdown, tenantOf: () => currentRequest()?.userId ?? 'background' });
  await startMarkdownPool();
  const { prisma, pool, onQuery, listeners, disconnect } = createPrisma(databaseUrl, {
    poolSize: opts.poolSize,
    timeouts: { statementTimeoutMs: config.dbStatementTimeoutMs, connectTimeoutMs: config.dbConnectTimeoutMs },
    log,
    pooled,
  });
  // A retried deadlock or serialization failure is expected but worth seeing (docs/decisions.md).
  const stopRetryLog = onTransactionRetry(({ attempt, sqlState }) => log.warn({ attempt, sqlState }, 'transaction retried'));
  // A bug that deadlocks the pool under load (db/client.ts): loud, with where it happened.
  const stopSecondConnectionLog = onSecondConnectionInTransaction(({ stack }) => log.error({ stack }, 'a transaction asked the pool for a second connection'));
  // Webhook deliveries wait on strangers' servers: a pool of workers of their own (src/tasks.ts).
  // The queue needs a session (graphile-worker's LISTEN, named statements, advisory locks).
  const jobs = new Jobs(directUrl, log, tasks, { connectTimeoutMs: config.dbConnectTimeoutMs, pools: { webhooks: config.webhookDelivery.concurrency } });
  // A storage given by the caller is the caller's to close.
  const ownStorage = opts.storage ? undefined : createFileStorage(config, databaseUrl, { pooled });
  const services: Services = { storage: opts.storage ?? ownStorage!, jobs };
  const rest = buildRestRouter(schema);
  // Token → viewer per process, invalidated across processes by LISTEN/NOTIFY (token-cache.ts).
  const tokens = config.tokenCache ? new TokenCache(directUrl, log, { connectTimeoutMs: config.dbConnectTimeoutMs, health: config.listenHealth }) : undefined;
  await tokens?.start();
  services.tokens = tokens;
  // Live updates: one event-log follower per process, connected at the first subscription (events/feed.ts).
  const live = new EventFeed(directUrl, log, { ...config.live, connectTimeoutMs: config.dbConnectTimeoutMs, health: config.listenHealth });
  services.live = live;
  // Access logs, statement counts per request, /metrics (README, "Operations").
  const obs = new Observability({ config, log, onQuery, pool });
  // Counters in the database, shared by every process, with their own small pool (rate-limit.ts).
  const rateLimits = config.rateLimit.enabled ? new RateLimits(config.rateLimit, databaseUrl, log, { connectTimeoutMs: config.dbConnectTimeoutMs, pooled }) : undefined;
  // Streaming replicas for GraphQL queries and REST reads (db/replicas.ts); statements there count for the request like the primary's.
  const replicas = config.replicas.urls.length
    ? new Replicas(config.replicas.urls, {
        maxLagMs: config.replicas.maxLagMs,
        poolSize: opts.poolSize,
        timeouts: { statementTimeoutMs: config.dbStatementTimeoutMs, connectTimeoutMs: config.dbConnectTimeoutMs },
        log,
        listeners,
      })
    : undefined;
  // `/readyz` on a connection of its own: answers whatever the request pool is doing.
  const readyProbe = new ReadyProbe(databaseUrl);
  const server = createHttpServer({ prisma, config, clock, log, services, schema, rest, tokens, obs, rateLimits, replicas, ready: () => readyProbe.ready() });
  obs.watch({ publishedCache: server.publishedCache.stats, live, tokens, caches: () => cacheSizes(config, server), replicas });

  const bootstrap = await prisma.$transaction((tx) => bootstrapIfEmpty(tx, { adminEmail: config.adminEmail, adminToken: config.adminToken }));

  await jobs.migrate();
  // Background jobs get their own small pool with a long statement timeout: an import or a purge
  // may legitimately run statements far longer than an API request should.
  let jobsDb: ReturnType<typeof createPrisma> | undefined;
  if (opts.worker ?? config.runWorker) {
    jobsDb = createPrisma(directUrl, {
      poolSize: 3,
      timeouts: { statementTimeoutMs: config.dbJobStatementTimeoutMs, connectTimeoutMs: config.dbConnectTimeoutMs },
      log,
      listeners,
    });
    const taskDeps: TaskDeps = { prisma: jobsDb.prisma, config, clock, log, services };
    await jobs.start(taskDeps);
    await startPurgeChain(taskDeps);
  }

  let closed = false;
  return {
    prisma,
    onQuery,
    schema,
    rest,
    server,
    jobs,
    services,
    log,
    obs,
    live,
    /** The token cache, when TOKEN_CACHE is on. */
    tokens,
    /** The read replicas, when DATABASE_REPLICA_URLS is set. */
    replicas,
    clock,
    config,
    /** Set on the first run on an empty database: the admin's token, shown once. */
    bootstrap,
    /** Rejects (EADDRINUSE, EACCES…) instead of emitting an unhandled 'error'. */
    async listen(port = config.port, host = config.host) {
      await new Promise<void>((resolve, reject) => {
        const onError = (err: Error) => reject(err);
        server.once('error', onError);
        server.listen(port, host, () => {
          server.off('error', onError);
          resolve();
        });
      });
      return (server.address() as AddressInfo).port;
    },
    /**
     * Stop accepting connections, answer 503 (`/readyz` too) on those still open, let in-flight
     * requests finish (cut after `graceMs`), close idle keep-alive connections at once, then stop
     * the jobs and close the pools (src/http/drain.ts).
     */
    async close(opts: { graceMs?: number } = {}) {
      if (closed) return;
      closed = true;
      stopRetryLog();
      stopSecondConnectionLog();
      // Refuse new requests first, then end the open event streams so their connections can close.
      const drained = drainHttpServer(server, { graceMs: opts.graceMs ?? SHUTDOWN_GRACE_MS, log });
      live.endAll();
      await drained;
      await live.stop();
      await jobs.stop();
      await tokens?.stop();
      await rateLimits?.close();
      await jobsDb?.disconnect();
      await readyProbe.close();
      await replicas?.close();

      await ownStorage?.close?.();
      await disconnect();
      obs.close();
    },
  };
}

export type HttpServer = http.Server;

/** The process caches' counted bytes and bounds, for /metrics. */
function cacheSizes(config: Config, server: ReturnType<typeof createHttpServer>) {
  const content = contentCaches(config);
  const { documentCache, errorCache } = server.documentCaches;
  return [
    { name: 'published_structure', ...server.publishedCache.size() },
    { name: 'graphql_documents', bytes: documentCache.calculatedSize, maxBytes: documentCache.maxSize },
    { name: 'graphql_parse_errors', bytes: errorCache.calculatedSize, maxBytes: errorCache.maxSize },
    { name: 'introspection_answers', ...server.introspectionCache.size() },
    { name: 'page_trees', bytes: content.trees?.calculatedSize ?? 0, maxBytes: content.trees?.maxSize ?? 0 },
    { name: 'revision_rows', bytes: content.rows?.calculatedSize ?? 0, maxBytes: content.rows?.maxSize ?? 0 },
    { name: 'conditions', bytes: conditionCacheBytes(), maxBytes: CONDITION_CACHE_BYTES },
    { name: 'search_candidates', bytes: searchCache(config)?.calculatedSize ?? 0, maxBytes: searchCache(config)?.maxSize ?? 0 },
  ];
}

/**
 * The job worker alone (`npm run worker`, src/worker.ts): graphile-worker and the periodic tasks on
 * a session connection (`directUrl`), no HTTP. Gateways then run with RUN_WORKER=false, so a queue
 * failure never takes an API process down.
 */
export async function createWorker(opts: { config: Config; directUrl: string; clock?: Clock; log?: Logger; storage?: FileStorage }) {
  const { config, directUrl } = opts;
  const log = opts.log ?? pino({ level: config.logLevel });
  const clock = opts.clock ?? systemClock;
  configureMarkdownPool({ ...config.markdown, tenantOf: () => 'background' });
  await startMarkdownPool();
  const jobs = new Jobs(directUrl, log, tasks, { connectTimeoutMs: config.dbConnectTimeoutMs, pools: { webhooks: config.webhookDelivery.concurrency } });
  const ownStorage = opts.storage ? undefined : createFileStorage(config, directUrl);
  const services: Services = { storage: opts.storage ?? ownStorage!, jobs };
  const jobsDb = createPrisma(directUrl, {
    poolSize: 3,
    timeouts: { statementTimeoutMs: config.dbJobStatementTimeoutMs, connectTimeoutMs: config.dbConnectTimeoutMs },
    log,
  });
  await jobs.migrate();
  const taskDeps = { prisma: jobsDb.prisma, config, clock, log, services } satisfies TaskDeps;
  await jobs.start(taskDeps);
  await startPurgeChain(taskDeps);
  let closed = false;
  return {
    jobs,
    prisma: jobsDb.prisma,
    log,
    async close() {
      if (closed) return;
      closed = true;
      await jobs.stop();
      await ownStorage?.close?.();
      await jobsDb.disconnect();
    },
  };
}
