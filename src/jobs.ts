// Background work on a Postgres-backed queue (graphile-worker). The tasks are a table handed in
// by the caller (src/tasks.ts); jobs are enqueued inside the caller's transaction (graphile_worker.add_job), so a
// job exists exactly when the change that asked for it committed. Handlers must be idempotent:
// the queue retries a job whose worker died.
//
// Recovery of jobs whose worker died (graphile-worker by itself frees their locks only after 4
// hours): every worker process records a heartbeat (docgraph_worker.heartbeats, one row per
// graphile-worker pool, the id jobs are locked by) every `jobHeartbeatSeconds`, and on each beat
// (and at start-up) sweeps: jobs locked for longer than `jobLockTimeoutSeconds` by a pool not
// heard from within that time are unlocked and so retried at once; their attempt already counts.
// A job that has used its last attempt is not retried by the queue: its task's `onGiveUp` marks
// the domain row failed (the sweep for a job whose worker died on the last attempt, the task
// wrapper for a handler that threw on the last attempt).
import { EventEmitter } from 'node:events';
import pg from 'pg';
import { Logger as WorkerLogger, run, runMigrations, type Runner, type Task, type WorkerEvents } from 'graphile-worker';
import type { Logger } from 'pino';
import type { Tx } from './db/client.ts';

/**
 * What every task receives besides its payload (the caller's choice: src/domain/context.ts
 * `TaskDeps`); the queue only needs the configuration's heartbeat settings from it.
 */
export type TaskDepsBase = { config: { jobHeartbeatSeconds: number; jobLockTimeoutSeconds: number } };
export type TaskHandler<D = any> = (payload: unknown, deps: D) => Promise<void>;
/**
 * Why the queue gave a job up after its last attempt: its worker process died (or stopped
 * answering) during every attempt, or the handler threw.
 */
export type GiveUpReason = { cause: 'worker-lost'; attempts: number } | { cause: 'error'; attempts: number; error: unknown };
/** Record on the domain row that the job will not run again. Must be idempotent. */
export type GiveUpHandler<D = any> = (payload: unknown, deps: D, reason: GiveUpReason) => Promise<void>;

/** One task: its handler, an optional schedule (crontab fields) and its give-up recorder. */
export type TaskDefinition = { handler: TaskHandler; cron?: string; onGiveUp?: GiveUpHandler };
export type TaskTable = Record<string, TaskDefinition>;

/** Worker slots + its LISTEN connection + cron. */
const MAX_QUEUE_CONNECTIONS = 4;

export class Jobs {
  private runner?: Runner;
  private deps?: TaskDepsBase;
  private pool?: pg.Pool;
  /** The id graphile-worker locks this process's jobs with (`locked_by`). */
  private poolId?: string;
  private beatTimer?: NodeJS.Timeout;
  private beating?: Promise<void>;

  constructor(
    private readonly databaseUrl: string,
    private readonly log: Logger,
    private readonly tasks: TaskTable,
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
      const pool = this.pool;
      // pool.end() resolves before its clients' sockets close: a database stopped right after
      // (the embedded one at shutdown) ends them with 57P01, expected then, not worth a warning.
      const warn = (msg: string) => (err: Error) => {
        if (!pool.ending) this.log.warn({ err, worker: true }, msg);
      };
      pool.on('error', warn('idle queue connection failed'));
      // A checked-out client's error surfaces again on its next query; the listener only keeps
      // it from being an unhandled 'error' event.
      pool.on('connect', (client) => client.on('error', warn('queue connection failed')));
    }
    return this.pool;
  }

  /** Install the queue's own schema (idempotent). */
  async migrate() {
    await runMigrations({ pgPool: this.getPool(), logger: quietLogger(this.log) });
  }

  async start<D extends TaskDepsBase>(deps: D, opts: { concurrency?: number } = {}) {
    this.deps = deps;
    const concurrency = Math.min(opts.concurrency ?? 2, MAX_QUEUE_CONNECTIONS - 2);
    const taskList: Record<string, Task> = {};
    for (const [name, { handler }] of Object.entries(this.tasks)) {
      taskList[name] = async (payload, helpers) => {
        try {
          await handler(payload, deps);
        } catch (error) {
          // The queue will not retry after the last attempt: say so on the domain row.
          if (helpers.job.attempts >= helpers.job.max_attempts) await this.giveUp(name, payload, { cause: 'error', attempts: helpers.job.attempts, error });
          throw error;
        }
      };
    }
    // Jobs are locked with the pool's id, known only from this event (emitted inside run()).
    const events: WorkerEvents = new EventEmitter();
    events.on('pool:create', ({ workerPool }) => {
      this.poolId = workerPool.id;
    });
    this.runner = await run({
      pgPool: this.getPool(),
      concurrency,
      noHandleSignals: true,
      pollInterval: 1000,
      taskList,
      crontab: Object.entries(this.tasks)
        .flatMap(([name, t]) => (t.cron ? [`${t.cron} ${name}`] : []))
        .join('\n'),
      logger: quietLogger(this.log),
      events,
    });
    // The runner's promise rejects when the queue fails; log it rather than leave it unhandled.
    this.runner.promise.catch((err) => this.log.error({ err, worker: true }, 'job queue stopped with an error'));
    // First beat and sweep now (jobs of workers that died before this start), then periodically.
    const beatMs = deps.config.jobHeartbeatSeconds * 1000;
    const tick = () => {
      this.beating = this.beatAndSweep().finally(() => {
        this.beating = undefined;
        if (this.runner) this.beatTimer = setTimeout(tick, beatMs);
      });
    };
    tick();
  }

  /** Record that this process is alive, then recover the jobs of workers that are not. */
  private async beatAndSweep() {
    const deps = this.deps!;
    const pool = this.getPool();
    const timeout = deps.config.jobLockTimeoutSeconds;
    try {
      if (this.poolId) {
        await pool.query(
          `INSERT INTO docgraph_worker.heartbeats (pool_id) VALUES ($1)
           ON CONFLICT (pool_id) DO UPDATE SET last_seen_at = now()`,
          [this.poolId],
        );
      }
      await this.sweep(timeout);
    } catch (err) {
      this.log.warn({ err, worker: true }, 'job heartbeat or recovery sweep failed');
    }
  }

  /**
   * Unlock the jobs (and named queues) of worker pools not heard from within `timeoutSeconds`.
   * A lock younger than the timeout is never touched, so a pool that has just started (and not
   * yet written its first beat) keeps its jobs. Jobs on their last attempt are given up first
   * (domain rows marked failed), then unlocked (the queue does not run them again).
   * Safe to run concurrently in several processes: every step is idempotent.
   */
  async sweep(timeoutSeconds: number): Promise<number> {
    const pool = this.getPool();
    const { rows: stale } = await pool.query<{ locked_by: string }>(
      `SELECT DISTINCT l.locked_by FROM (
         SELECT locked_by, locked_at FROM graphile_worker._private_jobs WHERE locked_by IS NOT NULL
         UNION ALL
         SELECT locked_by, locked_at FROM graphile_worker._private_job_queues WHERE locked_by IS NOT NULL
       ) l
       WHERE l.locked_at < now() - make_interval(secs => $1)
         AND NOT EXISTS (SELECT 1 FROM docgraph_worker.heartbeats h
                         WHERE h.pool_id = l.locked_by AND h.last_seen_at >= now() - make_interval(secs => $1))`,
      [timeoutSeconds],
    );
    const poolIds = stale.map((r) => r.locked_by);
    if (poolIds.length) {
      const { rows: lost } = await pool.query<{ id: string; task: string; payload: unknown; attempts: number; max_attempts: number }>(
        `SELECT j.id, t.identifier AS task, j.payload, j.attempts, j.max_attempts
         FROM graphile_worker._private_jobs j JOIN graphile_worker._private_tasks t ON t.id = j.task_id
         WHERE j.locked_by = ANY($1::text[])`,
        [poolIds],
      );
      for (const job of lost) {
        if (job.attempts >= job.max_attempts) await this.giveUp(job.task, job.payload, { cause: 'worker-lost', attempts: job.attempts });
      }
      // What an administrator sees on the queue's row; then the same as WorkerUtils.forceUnlockWorkers.
      await pool.query(
        `UPDATE graphile_worker._private_jobs SET last_error = 'the worker running this job stopped (no heartbeat for ' || $2::int || ' s)'
         WHERE locked_by = ANY($1::text[])`,
        [poolIds, timeoutSeconds],
      );
      await pool.query('SELECT graphile_worker.force_unlock_workers($1::text[])', [poolIds]);
      this.log.warn({ worker: true, pools: poolIds, jobs: lost.map((j) => j.id) }, 'unlocked jobs of worker processes that stopped');
    }
    // Rows of pools gone quiet: their locks (if any) were just released; a pool that was only
    // paused writes its row again on its next beat.
    await pool.query(`DELETE FROM docgraph_worker.heartbeats WHERE last_seen_at < now() - make_interval(secs => $1)`, [timeoutSeconds]);
    return poolIds.length;
  }

  /** Run a task's give-up handler; a failure is logged and the sweep tries again next time. */
  private async giveUp(task: string, payload: unknown, reason: GiveUpReason) {
    const handler = this.tasks[task]?.onGiveUp;
    if (!handler || !this.deps) return;
    try {
      await handler(payload, this.deps, reason);
    } catch (err) {
      this.log.error({ err, worker: true, task }, 'could not mark a given-up job as failed');
      if (reason.cause === 'worker-lost') throw err;
    }
  }

  /** Enqueue in the caller's transaction. `jobKey` deduplicates (replaces a pending job). */
  async enqueue(tx: Tx, name: string, payload: Record<string, unknown>, opts: { jobKey?: string; maxAttempts?: number } = {}) {
    await tx.$executeRaw`SELECT graphile_worker.add_job(${name}, ${JSON.stringify(payload)}::json, job_key => ${opts.jobKey ?? null}, max_attempts => ${opts.maxAttempts ?? 5})`;
  }

  /** Run a handler directly (tests, admin tools). */
  async runNow(name: string, payload: unknown) {
    const handler = this.tasks[name]?.handler;
    if (!handler || !this.deps) throw new Error(`unknown task ${name} or jobs not started`);
    await handler(payload, this.deps);
  }

  /** Stop the worker (running jobs finish, still beating), then close every queue connection. */
  async stop() {
    const runner = this.runner;
    await runner?.stop();
    this.runner = undefined;
    clearTimeout(this.beatTimer);
    await this.beating;
    clearTimeout(this.beatTimer);
    if (runner && this.poolId) {
      await this.pool?.query('DELETE FROM docgraph_worker.heartbeats WHERE pool_id = $1', [this.poolId]).catch(() => {});
    }
    this.poolId = undefined;
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
