// Background work on a Postgres-backed queue (graphile-worker). Area modules register task
// handlers here; jobs are enqueued inside the caller's transaction (graphile_worker.add_job), so a
// job exists exactly when the change that asked for it committed. Handlers must be idempotent:
// the queue retries a job whose worker died.
import pg from 'pg';
import { Logger as WorkerLogger, run, runMigrations, type Runner, type Task } from 'graphile-worker';
import type { Logger } from 'pino';
import type { Tx, Db } from './db/client.ts';
import type { Config } from './config.ts';
import type { Clock } from './domain/clock.ts';
import type { Services } from './services.ts';

export type TaskDeps = { prisma: Db; config: Config; clock: Clock; log: Logger; services: Services };
export type TaskHandler = (payload: unknown, deps: TaskDeps) => Promise<void>;

const handlers = new Map<string, TaskHandler>();
const cronLines: string[] = [];

/** Register a task handler (called at module load by area modules). */
export function registerTask(name: string, handler: TaskHandler, opts: { cron?: string } = {}) {
  handlers.set(name, handler);
  if (opts.cron) cronLines.push(`${opts.cron} ${name}`);
}

/** Worker slots + its LISTEN connection + cron. */
const MAX_QUEUE_CONNECTIONS = 4;

export class Jobs {
  private runner?: Runner;
  private deps?: TaskDeps;
  private pool?: pg.Pool;

  constructor(
    private readonly databaseUrl: string,
    private readonly log: Logger,
    private readonly opts: { connectTimeoutMs?: number } = {},
  ) {}

  /**
   * The queue's connections. We own the pool instead of handing graphile-worker a connection
   * string: its own pool is ended without waiting and loses its 'error' listener first, so a
   * connection closed by the server while it ends (a dropped database, a stopping Postgres)
   * crashed the process with an unhandled 'error' event.
   */
  private getPool() {
    if (!this.pool) {
      // Bounded connects so a frozen database fails the queue's polls (logged, retried) instead
      // of hanging them; no statement timeout (the queue's own statements are short).
      this.pool = new pg.Pool({
        connectionString: this.databaseUrl,
        max: MAX_QUEUE_CONNECTIONS,
        keepAlive: true,
        ...(this.opts.connectTimeoutMs ? { connectionTimeoutMillis: this.opts.connectTimeoutMs } : {}),
      });
      this.pool.on('error', (err) => this.log.warn({ err, worker: true }, 'idle queue connection failed'));
      // A checked-out client's error surfaces again on its next query; the listener only keeps
      // it from being an unhandled 'error' event.
      this.pool.on('connect', (client) => client.on('error', (err) => this.log.warn({ err, worker: true }, 'queue connection failed')));
    }
    return this.pool;
  }

  /** Install the queue's own schema (idempotent). */
  async migrate() {
    await runMigrations({ pgPool: this.getPool(), logger: quietLogger(this.log) });
  }

  async start(deps: TaskDeps, opts: { concurrency?: number } = {}) {
    this.deps = deps;
    const concurrency = Math.min(opts.concurrency ?? 2, MAX_QUEUE_CONNECTIONS - 2);
    const taskList: Record<string, Task> = {};
    for (const [name, handler] of handlers) {
      taskList[name] = async (payload) => handler(payload, deps);
    }
    this.runner = await run({
      pgPool: this.getPool(),
      concurrency,
      noHandleSignals: true,
      pollInterval: 1000,
      taskList,
      crontab: cronLines.join('\n'),
      logger: quietLogger(this.log),
    });
    // The runner's promise rejects when the queue fails; log it rather than leave it unhandled.
    this.runner.promise.catch((err) => this.log.error({ err, worker: true }, 'job queue stopped with an error'));
  }

  /** Enqueue in the caller's transaction. `jobKey` deduplicates (replaces a pending job). */
  async enqueue(tx: Tx, name: string, payload: Record<string, unknown>, opts: { jobKey?: string; maxAttempts?: number } = {}) {
    await tx.$executeRaw`SELECT graphile_worker.add_job(${name}, ${JSON.stringify(payload)}::json, job_key => ${opts.jobKey ?? null}, max_attempts => ${opts.maxAttempts ?? 5})`;
  }

  /** Run a handler directly (tests, admin tools). */
  async runNow(name: string, payload: unknown) {
    const handler = handlers.get(name);
    if (!handler || !this.deps) throw new Error(`unknown task ${name} or jobs not started`);
    await handler(payload, this.deps);
  }

  /** Stop the worker (running jobs finish), then close every queue connection. */
  async stop() {
    await this.runner?.stop();
    this.runner = undefined;
    const pool = this.pool;
    this.pool = undefined;
    await pool?.end();
  }
}

/** Route graphile-worker's messages through pino: errors as errors, the rest at debug. */
function quietLogger(log: Logger) {
  return new WorkerLogger(() => (level, message) => {
    if (level === 'error') log.error({ worker: true }, message);
    else if (level === 'warning') log.warn({ worker: true }, message);
    else log.debug({ worker: true }, message);
  });
}
