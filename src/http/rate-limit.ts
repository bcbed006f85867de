// Rate limits on /v1 and /graphql (docs/decisions.md, "Rate limits").
//
// - Who: an authenticated request counts against its user — all of the user's tokens share one
//   budget, so minting tokens buys nothing; a request without a valid token (none, unknown,
//   revoked) against its client IP, with a smaller budget.
// - How much: a REST request costs 1 point; a GraphQL request costs its operation's complexity
//   (the one @pothos/plugin-complexity enforces) at COMPLEXITY_PER_POINT per point, at least 1,
//   charged after validation and before execution. A GraphQL request that fails before execution
//   (parse or validation error, 401) costs 1. An introspection-only query costs INTROSPECTION_COST
//   (its answer is the whole schema), to the user or, without a token, to the client IP. A
//   published read without a token (server.ts) costs its complexity to the client IP. /sso
//   requests (anonymous by nature) cost 1 to the client IP. The explorer page and its assets are
//   free, as are /healthz, /readyz and /files (a published page's images would spend an
//   address's budget).
// - Where: counters live in PostgreSQL (docgraph_ratelimit.counters, an UNLOGGED table), so every
//   gateway process on the database shares them; each limiter has its own small pg pool. With
//   RATE_LIMIT_REDIS_URL they live in Redis/Valkey instead (same library, RateLimiterRedis over
//   ioredis; keys expire on their own) and the limiter never touches PostgreSQL: nothing is
//   written on a read path.
// - Every counted response carries X-RateLimit-Limit, X-RateLimit-Remaining and X-RateLimit-Reset
//   (epoch seconds); over the limit: 429 with Retry-After and the usual error body.
// - The counters' store (database or Redis) unreachable or frozen: fail open. Counting continues per process in memory for
//   a while (STORE_RETRY_MS), a warning is logged at most once per WARN_INTERVAL_MS, and requests
//   are served (they may still fail for their own reasons).
import type http from 'node:http';
import pg from 'pg';
import { Redis } from 'ioredis';
import { poolClientOptions } from '../db/client.ts';
import type { Logger } from 'pino';
import { Kind, type DocumentNode, type GraphQLSchema } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { RateLimiterMemory, RateLimiterPostgres, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { complexityFromQuery } from '@pothos/plugin-complexity';
import type { RateLimitConfig } from '../config.ts';
import type { Viewer } from '../auth/access.ts';
import type { Context, RequestRecord } from '../graphql/context.ts';
import { GRAPHQL_LIMITS } from '../graphql/builder.ts';
import { errorBody } from '../lib/errors.ts';
import { sendJson } from './compression.ts';
import { documentIsIntrospectionOnly } from './explorer.ts';

/** A GraphQL request costs ceil(complexity / COMPLEXITY_PER_POINT) points, at least 1. */
export const COMPLEXITY_PER_POINT = 100;

/**
 * An introspection-only query's cost. Its complexity says little (a few dozen fields), but the
 * full GraphiQL introspection answers ~400 kB and takes ~120 ms of CPU: priced like a page of
 * ~1,000 items, so an address without a token (600 points a minute) gets 30 a minute.
 */
export const INTROSPECTION_COST = 20;

export const RATE_LIMIT_TABLE = { schemaName: 'docgraph_ratelimit', tableName: 'counters' } as const;

/** Prefix of the counters' keys in Redis (`docgraph:ratelimit:usr:<user id>`, `…:ip:<address>`). */
export const RATE_LIMIT_REDIS_PREFIX = 'docgraph:ratelimit:';

/** After a failure of the counters' database, count in memory this long before trying it again. */
const STORE_RETRY_MS = 5_000;
/** At most one warning about the counters' database per this many ms. */
const WARN_INTERVAL_MS = 60_000;
/** Timeouts of the limiter's pool or Redis connection: a frozen store must not hold requests for long. */
const STORE_TIMEOUT_MS = 1_000;
/** Expired counters are deleted this often. */
const SWEEP_INTERVAL_MS = 5 * 60_000;

export const RATE_LIMITED_MESSAGE = 'Rate limit exceeded: retry after the time in Retry-After';

type Bucket = 'user' | 'anonymous';
type Key = { kind: Bucket; id: string };
type Waiter = { cost: number; resolve: (r: RateLimiterRes) => void; reject: (e: unknown) => void };

/** The outcome of one charge, as the headers tell it. */
export type Charge = { limit: number; remaining: number; resetAt: number; retryAfter: number; limited: boolean };

/** GraphQL's 429 body: the operation did not run. */
export function rateLimitedGraphqlBody() {
  return { errors: [{ message: RATE_LIMITED_MESSAGE, extensions: { code: 'RATE_LIMITED' } }] };
}

/** The cost of a validated GraphQL operation (see COMPLEXITY_PER_POINT). */
export function graphqlCost(document: DocumentNode, operationName: string | null | undefined, variables: Record<string, unknown> | null | undefined, ctx: object, schema: GraphQLSchema): number {
  // complexityFromQuery measures the first operation: hand it the one that runs.
  const operations = document.definitions.filter((d) => d.kind === Kind.OPERATION_DEFINITION);
  const chosen = operations.length > 1 ? operations.find((d) => d.name?.value === operationName) : operations[0];
  if (!chosen) return 1;
  const only: DocumentNode = { ...document, definitions: document.definitions.filter((d) => d === chosen || d.kind === Kind.FRAGMENT_DEFINITION) };
  let complexity: number;
  try {
    ({ complexity } = complexityFromQuery(only, { schema, ctx, variables: variables ?? {} }));
  } catch {
    return 1; // bad variables: execution fails before running anything
  }
  // Over the budget the complexity plugin refuses it before anything runs: a failed request.
  if (complexity > GRAPHQL_LIMITS.complexity) return 1;
  return Math.max(1, Math.ceil(complexity / COMPLEXITY_PER_POINT));
}

/** The client's address: the socket's, or the n-th X-Forwarded-For entry from the right behind n trusted proxies. */
export function clientIp(req: http.IncomingMessage, trustProxy: number): string {
  let ip = req.socket.remoteAddress ?? 'unknown';
  const forwarded = req.headers['x-forwarded-for'];
  if (trustProxy > 0 && forwarded) {
    const hops = (Array.isArray(forwarded) ? forwarded.join(',') : forwarded).split(',').map((s) => s.trim()).filter(Boolean);
    // Each trusted proxy appends the address it saw; entries further left are the client's to forge.
    if (hops.length) ip = hops[Math.max(0, hops.length - trustProxy)];
  }
  return ip.startsWith('::ffff:') ? ip.slice(7) : ip;
}

export class RateLimits {
  private readonly pool?: pg.Pool;
  private readonly redis?: Redis;
  private readonly store: Record<Bucket, RateLimiterPostgres | RateLimiterRedis>;
  private readonly memory: Record<Bucket, RateLimiterMemory>;
  /** Per key with a store call in flight: the charges waiting to go as the next one (`shared`). */
  private readonly queues = new Map<string, Waiter[]>();
  private readonly sweeper?: NodeJS.Timeout;
  private storeDownUntil = 0;
  private lastWarnAt = 0;

  constructor(
    private readonly config: RateLimitConfig,
    databaseUrl: string,
    private readonly log: Logger,
    opts: { connectTimeoutMs?: number; poolSize?: number; /** `databaseUrl` is a transaction-mode pooler (src/db/client.ts). */ pooled?: boolean } = {},
  ) {
    const timeout = Math.min(STORE_TIMEOUT_MS, opts.connectTimeoutMs || STORE_TIMEOUT_MS);
    const points: Record<Bucket, number> = { user: config.points, anonymous: config.anonymousPoints };
    // A key at its limit is refused from memory until its window ends: a flood of 429s costs no
    // store round trip on this process.
    const common = (kind: Bucket) => ({ points: points[kind], duration: config.windowSeconds, inMemoryBlockOnConsumed: points[kind] });
    if (config.redisUrl) {
      const redis = new Redis(config.redisUrl, {
        connectionName: 'docgraph-ratelimit',
        connectTimeout: timeout,
        // Every command answers within `timeout`, queued while (re)connecting or sent to a frozen
        // server alike; the failure then counts in memory like a database outage.
        commandTimeout: timeout,
        maxRetriesPerRequest: 1,
        retryStrategy: (times) => Math.min(times * 200, 2_000),
      });
      // Connection failures are retried by the client and reported by the charges (one warning).
      redis.on('error', (err) => this.log.debug({ err }, 'rate-limit redis connection failed'));
      this.redis = redis;
      const make = (kind: Bucket) =>
        new RateLimiterRedis({ storeClient: redis, keyPrefix: `${RATE_LIMIT_REDIS_PREFIX}${kind === 'user' ? 'usr' : 'ip'}`, ...common(kind) });
      this.store = { user: make('user'), anonymous: make('anonymous') };
    } else {
      const pool = new pg.Pool({
        connectionString: databaseUrl,
        max: opts.poolSize ?? 4,
        connectionTimeoutMillis: timeout,
        // Through a pooler: unnamed statements (the library names its own) and the timeout per transaction.
        ...poolClientOptions({ pooled: opts.pooled, statementTimeoutMs: timeout, clientMarginMs: 500 }),
        application_name: 'docgraph-ratelimit',
      });
      // An idle connection dropped by the server (restart, outage): the next query reconnects.
      pool.on('error', (err) => this.log.debug({ err }, 'rate-limit connection failed'));
      this.pool = pool;
      const make = (kind: Bucket) =>
        new RateLimiterPostgres({
          storeClient: pool,
          storeType: 'pool',
          ...RATE_LIMIT_TABLE,
          tableCreated: true, // the migration creates it: no DDL at run time
          clearExpiredByTimeout: false, // swept below, on a timer close() stops
          keyPrefix: kind === 'user' ? 'usr' : 'ip',
          ...common(kind),
        });
      this.store = { user: make('user'), anonymous: make('anonymous') };
      const { schemaName, tableName } = RATE_LIMIT_TABLE;
      this.sweeper = setInterval(() => {
        pool.query(`DELETE FROM "${schemaName}"."${tableName}" WHERE expire < $1`, [Date.now()]).catch(() => {});
      }, SWEEP_INTERVAL_MS);
      this.sweeper.unref();
    }
    this.memory = {
      user: new RateLimiterMemory({ keyPrefix: 'usr', points: points.user, duration: config.windowSeconds }),
      anonymous: new RateLimiterMemory({ keyPrefix: 'ip', points: points.anonymous, duration: config.windowSeconds }),
    };
  }

  /** Charge `cost` points to `key`; never throws (the counters' database down: counted in memory). */
  async charge(key: Key, cost: number): Promise<Charge> {
    const limit = key.kind === 'user' ? this.config.points : this.config.anonymousPoints;
    let res: RateLimiterRes;
    let limited = false;
    try {
      res = await this.consume(key, cost);
    } catch (rejected) {
      res = rejected as RateLimiterRes;
      limited = true;
    }
    const ms = Math.max(0, res.msBeforeNext);
    return {
      limit,
      remaining: limited ? 0 : Math.max(0, res.remainingPoints),
      resetAt: Math.ceil((Date.now() + ms) / 1000),
      retryAfter: Math.max(1, Math.ceil(ms / 1000)),
      limited,
    };
  }

  /** Resolves with the counter, rejects with it (a RateLimiterRes) over the limit. */
  private async consume(key: Key, cost: number): Promise<RateLimiterRes> {
    if (Date.now() >= this.storeDownUntil) {
      try {
        return await this.shared(key, cost);
      } catch (err) {
        if (err instanceof RateLimiterRes) throw err;
        this.storeDownUntil = Date.now() + STORE_RETRY_MS;
        if (Date.now() - this.lastWarnAt >= WARN_INTERVAL_MS) {
          this.lastWarnAt = Date.now();
          this.log.warn({ err }, `rate-limit counters unavailable: counting per process until ${this.redis ? 'Redis' : 'the database'} is back`);
        }
      }
    }
    return this.memory[key.kind].consume(key.id, cost);
  }

  /**
   * The store's consume, with the charges of one key that arrive while a call for it is in flight
   * sent together as the next call (one upsert, one row lock for the lot: a busy token costs the
   * database one statement per round trip, not one per request). Each charge gets its own place
   * in the sum: the first ones in the batch fit under the limit, the later ones may not.
   */
  private shared(key: Key, cost: number): Promise<RateLimiterRes> {
    return new Promise((resolve, reject) => {
      const k = `${key.kind}:${key.id}`;
      const queue = this.queues.get(k);
      if (queue) return void queue.push({ cost, resolve, reject });
      this.queues.set(k, [{ cost, resolve, reject }]);
      void this.drain(k, key);
    });
  }

  private async drain(k: string, key: Key) {
    const points = key.kind === 'user' ? this.config.points : this.config.anonymousPoints;
    for (let batch = this.queues.get(k)!; batch.length > 0; batch = this.queues.get(k)!) {
      this.queues.set(k, []);
      let res: RateLimiterRes;
      let limited = false;
      try {
        // Redis known to be down (connection lost, reconnecting): fail now rather than after the timeout.
        if (this.redis && (this.redis.status === 'reconnecting' || this.redis.status === 'close' || this.redis.status === 'end')) {
          throw new Error(`rate-limit redis ${this.redis.status}`);
        }
        res = await this.store[key.kind].consume(key.id, batch.reduce((sum, w) => sum + w.cost, 0));
      } catch (err) {
        if (!(err instanceof RateLimiterRes)) {
          for (const w of batch) w.reject(err);
          continue;
        }
        res = err;
        limited = true;
      }
      // Refused without a count (the key is blocked in memory): all of them.
      const all = limited && res.consumedPoints <= points;
      let consumed = res.consumedPoints;
      for (let i = batch.length - 1; i >= 0; i--) {
        const mine = new RateLimiterRes(Math.max(0, points - consumed), res.msBeforeNext, consumed, false);
        if (all || consumed > points) batch[i].reject(mine);
        else batch[i].resolve(mine);
        consumed -= batch[i].cost;
      }
    }
    this.queues.delete(k);
  }

  /** The user's key (whichever of their tokens), or the client IP's when there is no valid token (or it cannot be checked). */
  private async keyOf(req: http.IncomingMessage, viewer: () => Promise<Viewer | null>): Promise<Key> {
    const v = await viewer().catch(() => null);
    return v ? { kind: 'user', id: v.user.id } : { kind: 'anonymous', id: clientIp(req, this.config.trustProxy) };
  }

  private setHeaders(res: http.ServerResponse, c: Charge) {
    if (res.headersSent) return;
    res.setHeader('X-RateLimit-Limit', String(c.limit));
    res.setHeader('X-RateLimit-Remaining', String(c.remaining));
    res.setHeader('X-RateLimit-Reset', String(c.resetAt));
    if (c.limited) res.setHeader('Retry-After', String(c.retryAfter));
  }

  /** REST: charge 1 point and set the headers; over the limit, answer 429 and return false. */
  async admitRest(req: http.IncomingMessage, res: http.ServerResponse, viewer: () => Promise<Viewer | null>): Promise<boolean> {
    const c = await this.charge(await this.keyOf(req, viewer), 1);
    this.setHeaders(res, c);
    if (!c.limited) return true;
    await sendJson(res, 429, errorBody(429, RATE_LIMITED_MESSAGE));
    return false;
  }

  /** GraphQL: the request is counted by the yoga plugin below, or by `settle` when it fails before. */
  track(req: http.IncomingMessage, res: http.ServerResponse, record: RequestRecord, viewer: () => Promise<Viewer | null>) {
    record.rateLimit = { req, res, viewer, done: false };
  }

  /**
   * Charge 1 point to a tracked request not counted yet (it failed before execution) and set the
   * headers. Answers the charge, or undefined when there was nothing to count.
   */
  async settle(record: RequestRecord): Promise<Charge | undefined> {
    const state = record.rateLimit;
    if (!state || state.done) return undefined;
    state.done = true;
    const c = await this.charge(await this.keyOf(state.req, state.viewer), 1);
    this.setHeaders(state.res, c);
    if (c.limited) state.retryAfter = c.retryAfter;
    return c;
  }

  /** Yoga plugin: charges the operation's cost before execution; answers 429 when over. */
  plugin(): Plugin {
    return {
      onExecute: async ({ args, setResultAndStopExecution }) => {
        const ctx = args.contextValue as unknown as Context;
        const state = ctx.requestRecord?.rateLimit;
        if (!state || state.done) return;
        state.done = true;
        // The context has no viewer for an introspection-only query (server.ts): a fixed cost, to
        // the token's user or to the client IP; and for an anonymous published read: its cost,
        // like every query, to the client IP.
        const introspection = !ctx.viewer && documentIsIntrospectionOnly(args.document);
        const cost = introspection ? INTROSPECTION_COST : graphqlCost(args.document, args.operationName, args.variableValues as Record<string, unknown>, ctx, args.schema);
        const c = await this.charge(ctx.viewer ? { kind: 'user', id: ctx.viewer.user.id } : await this.keyOf(state.req, state.viewer), cost);
        this.setHeaders(state.res, c);
        ctx.rateLimit = { cost, limit: c.limit, remaining: c.remaining, resetAt: c.resetAt };
        if (c.limited) {
          state.retryAfter = c.retryAfter;
          setResultAndStopExecution({ data: null });
        }
      },
      onResponse: async ({ response, serverContext, setResponse, fetchAPI }) => {
        const record = (serverContext as { requestRecord?: RequestRecord } | undefined)?.requestRecord;
        const state = record?.rateLimit;
        if (!record || !state) return;
        // The explorer's page is free, like its assets.
        if (!state.done && response.headers.get('content-type')?.startsWith('text/html')) state.done = true;
        await this.settle(record);
        if (state.retryAfter === undefined) return;
        await response.body?.cancel().catch(() => {});
        setResponse(
          new fetchAPI.Response(JSON.stringify(rateLimitedGraphqlBody()), {
            status: 429,
            headers: { 'content-type': 'application/json; charset=utf-8', 'retry-after': String(state.retryAfter) },
          }),
        );
      },
    };
  }

  async close() {
    clearInterval(this.sweeper);
    await this.pool?.end().catch(() => {});
    // No QUIT: a frozen server would never answer it.
    this.redis?.disconnect();
  }
}
