// The Prisma client on the pg driver adapter. Every query is reported to `onQuery` listeners so
// tests (and the benchmark) can count SQL statements per request.
//
// Timeouts (docs/decisions.md, "Database faults and timeouts"): the server cancels a statement
// after `statementTimeoutMs` (SQLSTATE 57014); the client gives up on an answer one second later
// (`query_timeout`: a frozen or partitioned server never cancels anything itself); opening a
// connection, and waiting for a free one in the pool, stop after `connectTimeoutMs`. All three
// failures are classified as "database unavailable" (503) by `isDatabaseUnavailable`. Prisma's
// own wait for a transaction's connection (`maxWait`, 2 s by default) is set to the same limit.
//
// A transaction holds its connection until it ends, so code inside one must not ask the pool for
// another (a query through the outer client, an access check on its loaders, a nested
// transaction): N such transactions on a pool of N wait for each other until they time out.
// `transactionScope` marks the code of an open transaction (db/transaction.ts sets it), the
// pool reports every connection asked for inside one, the app logs it and the tests fail on it
// (docs/decisions.md, "Transactions, lock order and retries").
import { AsyncLocalStorage } from 'node:async_hooks';
import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import type { Logger } from 'pino';
import { PrismaClient } from '../generated/prisma/client.ts';

export type Db = PrismaClient;
export type Tx = Omit<PrismaClient, '$connect' | '$disconnect' | '$on' | '$transaction' | '$extends'>;

export type QueryListener = (sql: string) => void;

export type DbTimeouts = {
  /** Server-side `statement_timeout` in ms (0 = none). The client waits one second longer. */
  statementTimeoutMs: number;
  /** Connecting, and waiting for a free pooled connection, in ms (0 = no limit). */
  connectTimeoutMs: number;
};

/** Set while the callback of an interactive transaction runs (`open` turns false when it ends). */
export const transactionScope = new AsyncLocalStorage<{ open: boolean }>();

type SecondConnectionListener = (info: { stack: string }) => void;
const secondConnectionListeners = new Set<SecondConnectionListener>();

/** Subscribe to every pooled connection asked for inside an open transaction (a bug); returns the unsubscribe function. */
export function onSecondConnectionInTransaction(listener: SecondConnectionListener) {
  secondConnectionListeners.add(listener);
  return () => secondConnectionListeners.delete(listener);
}

/** Margin between the server's statement timeout and the client's own read timeout. */
export const CLIENT_TIMEOUT_MARGIN_MS = 1000;

/**
 * A connection whose statement got no answer within `query_timeout` is in an unknown state (a
 * frozen server, our statement maybe half-run): close it at once. Otherwise a transaction's
 * connection goes back to the pool (adapter-pg releases it without an error) and Prisma's
 * ROLLBACK, then the next request, queue behind the lost statement and wait a full timeout each.
 * pg's `end()` destroys the socket when a query is still active, and fails what is queued.
 */
class ClosingOnTimeoutClient extends pg.Client {
  override query(...args: any[]): any {
    const result = (super.query as (...a: any[]) => any)(...args);
    if (result && typeof result.catch === 'function') {
      result.catch((err: unknown) => {
        if ((err as Error)?.message === 'Query read timeout') void this.end().catch(() => {});
      });
    }
    return result;
  }
}

const statementText = (arg: unknown): string | undefined =>
  typeof arg === 'string' ? arg : arg && typeof arg === 'object' && typeof (arg as { text?: unknown }).text === 'string' ? (arg as { text: string }).text : undefined;

/**
 * A client for a connection through a transaction-mode pooler (PgBouncer `pool_mode=transaction`):
 * each transaction may run on a different server connection, so nothing may live on the session.
 * - No startup parameter: the statement timeout is set inside every transaction
 *   (`set_config(…, true)`, i.e. SET LOCAL) right after its BEGIN; a statement outside a
 *   transaction is wrapped in one (BEGIN + set_config, the statement, COMMIT), queued on the
 *   connection back to back, so nothing waits between them but the round trips themselves.
 * - Unnamed statements only: a named prepared statement lives on one server connection (the
 *   limiter's library names its statements; the name is dropped here).
 */
function pooledClientClass(statementTimeoutMs: number): typeof pg.Client {
  const setTimeoutSql = `SELECT set_config('statement_timeout', '${Math.max(0, Math.floor(statementTimeoutMs))}', true)`;
  return class PooledClient extends ClosingOnTimeoutClient {
    /** Inside a transaction this client began (BEGIN seen, COMMIT/ROLLBACK not yet). */
    private inTransaction = false;
    override query(...args: any[]): any {
      let [first] = args;
      if (first && typeof first === 'object' && 'name' in first && first.name) {
        const { name: _name, ...unnamed } = first;
        args = [unnamed, ...args.slice(1)];
        first = unnamed;
      }
      const text = statementText(first)?.trim().toUpperCase();
      const run = (...a: any[]) => super.query(...a);
      if (text === undefined || !statementTimeoutMs) return run(...args);
      if (text.startsWith('BEGIN') || text.startsWith('START TRANSACTION')) {
        this.inTransaction = true;
        const begun = run(...args);
        // Queued behind BEGIN on this connection: the next statement of the transaction runs after it.
        if (begun && typeof begun.then === 'function') super.query(setTimeoutSql).catch(() => {});
        return begun;
      }
      if (text === 'COMMIT' || text === 'ROLLBACK' || text === 'END' || text === 'ABORT') {
        this.inTransaction = false;
        return run(...args);
      }
      if (this.inTransaction) return run(...args);
      super.query(`BEGIN; ${setTimeoutSql}`).catch(() => {});
      const result = run(...args);
      // A failed statement aborts the transaction: COMMIT then rolls back (no error of its own).
      super.query('COMMIT').catch(() => {});
      return result;
    }
  } as unknown as typeof pg.Client;
}

/**
 * The pg options of a pool on `databaseUrl`: on a direct connection the statement timeout is a
 * startup parameter; through a pooler (`pooled`) it goes inside each transaction (above).
 */
export function poolClientOptions(opts: { pooled?: boolean; statementTimeoutMs?: number; clientMarginMs?: number }): Partial<pg.PoolConfig> {
  const ms = opts.statementTimeoutMs ?? 0;
  const margin = opts.clientMarginMs ?? CLIENT_TIMEOUT_MARGIN_MS;
  if (opts.pooled) return { Client: pooledClientClass(ms), ...(ms ? { query_timeout: ms + margin } : {}) };
  return { Client: ClosingOnTimeoutClient, ...(ms ? { statement_timeout: ms, query_timeout: ms + margin } : {}) };
}

export function createPrisma(
  databaseUrl: string,
  opts: {
    poolSize?: number;
    timeouts?: DbTimeouts;
    log?: Logger;
    listeners?: Set<QueryListener>;
    /** `databaseUrl` is a transaction-mode pooler: no session state (see `pooledClientClass`). */
    pooled?: boolean;
  } = {},
) {
  const t = opts.timeouts;
  // After `disconnect()` a connection the server drops on its way down is expected, not news.
  let disconnecting = false;
  const connectionFailed = (message: string) => (err: unknown) =>
    disconnecting ? opts.log?.debug({ err }, message) : opts.log?.warn({ err }, message);
  // Our own pool (the adapter ends it on disconnect), so metrics can read its usage.
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    max: opts.poolSize ?? 10,
    keepAlive: true,
    ...poolClientOptions({ pooled: opts.pooled, statementTimeoutMs: t?.statementTimeoutMs }),
    ...(t?.connectTimeoutMs ? { connectionTimeoutMillis: t.connectTimeoutMs } : {}),
  });
  // pg-pool's `query` goes through `connect` too: this sees every connection the pool hands out.
  const connect = pool.connect.bind(pool) as (...args: unknown[]) => unknown;
  pool.connect = ((...args: unknown[]) => {
    if (transactionScope.getStore()?.open && secondConnectionListeners.size) {
      const stack = new Error('a second pooled connection asked for inside a transaction').stack ?? '';
      for (const l of secondConnectionListeners) l({ stack });
    }
    return connect(...args);
  }) as typeof pool.connect;
  const adapter = new PrismaPg(pool, {
    // Without these a connection dropped by the server (restart, outage) is an unhandled
    // 'error' event; the failure itself reaches the query that used the connection.
    onPoolError: connectionFailed('idle database connection failed'),
    onConnectionError: connectionFailed('database connection failed'),
    disposeExternalPool: true,
  });
  const prisma = new PrismaClient({
    adapter,
    log: [{ emit: 'event', level: 'query' }],
    // setTimeout's maximum stands for "no limit".
    transactionOptions: { maxWait: t?.connectTimeoutMs || 2 ** 31 - 1 },
  });
  const listeners = opts.listeners ?? new Set<QueryListener>();
  prisma.$on('query', (e) => {
    for (const l of listeners) l(e.query);
  });
  return {
    prisma,
    /** The connection pool under the Prisma adapter (read by the metrics: do not query it for the API). */
    pool,
    listeners,
    /** Close the pool; failures of connections closing meanwhile are logged at debug. */
    async disconnect() {
      disconnecting = true;
      await prisma.$disconnect();
    },
    /** Subscribe to every SQL statement; returns the unsubscribe function. */
    onQuery(listener: QueryListener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}

/**
 * An enum value read by raw SQL, in the model's spelling: the database keeps Prisma's `@map`ped
 * names (`share-link`), the model and GraphQL use the identifiers (`share_link`).
 */
export function enumFromRow<T extends string>(dbValue: string): T {
  return dbValue.replace(/-/g, '_') as T;
}
