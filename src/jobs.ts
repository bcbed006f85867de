// Background work on a Postgres-backed queue (graphile-worker). The tasks are a table handed in
// by the caller (src/tasks.ts); jobs are enqueued inside the caller's transaction (graphile_worker.add_job), so a
// job exists exactly when the change that asked for it committed. Handlers must be idempotent:
// the queue retries a job whose worker died.
//
// Pools: tasks run on the main worker pool (imports, processing, cleanup) unless their row names a
// pool of their own (`pool: 'webhooks'`): each pool is a graphile-worker runner with its own
// workers and task list, so a task that waits on strangers (webhook receivers) can hold only its
// own pool's workers, never another task's.
//
// Recovery of jobs whose worker died (graphile-worker by itself frees their locks only after 4
// hours), two ways:
// - at once: every pool holds a session-level advisory lock (its "mark") on a connection of its
//   own for the process's life, and records the lock's key on its heartbeat row. PostgreSQL
//   releases the lock when the process dies (its connection closes), so a sweep that can take a
//   recorded mark knows that pool is dead and unlocks its jobs, however recent its last beat.
// - by time, for a process alive but frozen (its mark still held) or from before the marks: every
//   worker process records a heartbeat (docgraph_worker.heartbeats, one row per graphile-worker
//   pool, the id jobs are locked by) every `jobHeartbeatSeconds`; jobs locked for longer than
//   `jobLockTimeoutSeconds` by a pool not heard from within that time are unlocked.
// Each process sweeps at start-up and on every beat; an unlocked job is retried at once and its
// attempt already counts.
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

/**
 * One task: its handler, an optional schedule (crontab fields), its give-up recorder, and the
 * worker pool it runs on (a name of `JobsOptions.pools`; default the main pool).
 */
export type TaskDefinition = { handler: TaskHandler; cron?: string; onGiveUp?: GiveUpHandler; pool?: string };
export type TaskTable = Record<string, TaskDefinition>;

/**
 * The names of the task table (src/tasks.ts declares them into this interface, so this file needs
 * no import of the table and its handlers): `enqueue` and `runNow` take only those, and a typo is a
 * type error. graphile-worker types its own `addJob` the same way (`GraphileWorker.Tasks`).
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface TaskNames {}
export type TaskName = keyof TaskNames & string;

export type JobsOptions = {
  connectTimeoutMs?: number;
  /** Workers of the main pool (default 2). */
  concurrency?: number;
  /** Workers of each named pool (tasks with `pool: name`); a pool not listed gets 1. */
  pools?: Record<string, number>;
};

const MAIN_POOL = 'main';
/** The advisory-lock key text of a pool's mark (`hashtextextended(key, 0)`). */
const markKey = (poolId: string) => `docgraph:worker:${poolId}`;
type RunningPool = { name: string; runner: Runner; id: string };

/**
 * The named queue of an organization's heavy jobs (imports, OpenAPI processing, PDF exports):
 * graphile-worker runs one job of a named queue at a time, so one organization holds at most one
 * of the main pool's workers and another organization's job takes the next free one, however
 * many jobs the first has queued (webhooks have `webhooks:<org>`).
 */
export function organizationQueue(organizationId: string) {
  return `org:${organizationId}`;
}

export class Jobs {
  /** The running pools; each one's `id` is what graphile-worker locks its jobs with (`locked_by`). */
  private pools: RunningPool[] = [];
  private running = false;
  private deps?: TaskDepsBase;
  private pool?: pg.Pool;
  /** The session holding this process's marks (advisory locks), and each pool's lock key. */
  private markClient?: pg.Client;
  private readonly markKeys = new Map<string, string>();
  private beatTimer?: NodeJS.Timeout;
  private beating?: Promise<void>;

  constructor(
    private readonly databaseUrl: string,
    private readonly log: Logger,
    private readonly tasks: TaskTable,
    private readonly opts: JobsOptions = {},
  ) {}

  /** Each pool's name → its tasks' names and its workers. */
  private poolPlan() {
    const plan = new Map<string, { tasks: string[]; concurrency: number }>();
    for (const [name, t] of Object.entries(this.tasks)) {
      const pool = t.pool ?? MAIN_POOL;
      const concurrency = pool === MAIN_POOL ? (this.opts.concurrency ?? 2) : (this.opts.pools?.[pool] ?? 1);
      const entry = plan.get(pool) ?? { tasks: [], concurrency };
      entry.tasks.push(name);
      plan.set(pool, entry);
    }
    return plan;
  }

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
      // Per pool: its LISTEN connection, and its workers' short statements (a worker holds no
      // connection while its task runs: only to fetch and to complete a job), at most 2 at once
      // beyond the main pool's; plus cron's.
      let max = 1;
      for (const [name, { concurrency }] of this.poolPlan()) max += 1 + (name === MAIN_POOL ? concurrency : Math.min(concurrency, 2));
      this.pool = new pg.Pool({
        connectionString: this.databaseUrl,
        max,
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

  async start<D extends TaskDepsBase>(deps: D) {
    this.deps = deps;
    this.running = true;
    for (const [name, { tasks, concurrency }] of this.poolPlan()) {
      const taskList: Record<string, Task> = {};
      for (const task of tasks) {
        const { handler } = this.tasks[task];
        taskList[task] = async (payload, helpers) => {
          try {
            await handler(payload, deps);
          } catch (error) {
            // The queue will not retry after the last attempt: say so on the domain row.
            if (helpers.job.attempts >= helpers.job.max_attempts) await this.giveUp(task, payload, { cause: 'error', attempts: helpers.job.attempts, error });
            throw error;
          }
        };
      }
      // Jobs are locked with the pool's id, known only from this event (emitted inside run()).
      let id: string | undefined;
      const events: WorkerEvents = new EventEmitter();
      events.on('pool:create', ({ workerPool }) => {
        id = workerPool.id;
      });
      const runner = await run({
        pgPool: this.getPool(),
        concurrency,
        noHandleSignals: true,
        pollInterval: 1000,
        taskList,
        crontab: tasks
          .flatMap((task) => (this.tasks[task].cron ? [`${this.tasks[task].cron} ${task}`] : []))
          .join('\n'),
        logger: quietLogger(this.log),
        events,
      });
      // The runner's promise rejects when the queue fails; log it rather than leave it unhandled.
      runner.promise.catch((err) => this.log.error({ err, worker: true, pool: name }, 'job queue stopped with an error'));
      this.pools.push({ name, runner, id: id! });
    }
    // The marks, then the first beat and sweep now (jobs of workers that died before this start,
    // found by their free marks), then periodically.
    await this.holdMarks().catch((err) => this.log.warn({ err, worker: true }, 'could not take the worker pools’ session marks (retried on the next beat)'));
    const beatMs = deps.config.jobHeartbeatSeconds * 1000;
    const tick = () => {
      this.beating = this.beatAndSweep().finally(() => {
        this.beating = undefined;
        if (this.running) this.beatTimer = setTimeout(tick, beatMs);
      });
    };
    tick();
  }

  /**
   * Take every pool's mark (a session-level advisory lock) on a connection kept for the process's
   * life, then record its key on the pool's heartbeat row: a row with a key means "dead when this
   * lock is free". If the connection breaks while the process lives, the marks are gone: the rows
   * lose their keys on the next beat (the time rule applies meanwhile) and the marks are taken
   * again on a new connection.
   */
  private async holdMarks() {
    if (this.markClient || !this.running) return;
    const client = new pg.Client({
      connectionString: this.databaseUrl,
      keepAlive: true,
      // A frozen database must not hang the beat (and so a graceful stop) on taking the marks.
      query_timeout: 10_000,
      ...(this.opts.connectTimeoutMs ? { connectionTimeoutMillis: this.opts.connectTimeoutMs } : {}),
    });
    client.on('error', (err) => {
      if (this.markClient === client) {
        this.markClient = undefined;
        this.markKeys.clear();
      }
      void client.end().catch(() => {});
      if (this.running) this.log.warn({ err, worker: true }, 'the worker pools’ mark connection failed; taking the marks again');
    });
    await client.connect();
    try {
      for (const p of this.pools) {
        const { rows } = await client.query<{ key: string }>(`SELECT hashtextextended($1, 0)::text AS key FROM pg_advisory_lock(hashtextextended($1, 0))`, [markKey(p.id)]);
        await client.query(
          `INSERT INTO docgraph_worker.heartbeats (pool_id, lock_key) VALUES ($1, $2::bigint)
           ON CONFLICT (pool_id) DO UPDATE SET last_seen_at = now(), lock_key = EXCLUDED.lock_key`,
          [p.id, rows[0].key],
        );
        this.markKeys.set(p.id, rows[0].key);
      }
    } catch (err) {
      this.markKeys.clear();
      await client.end().catch(() => {});
      throw err;
    }
    this.markClient = client;
  }

  /** Record that this process is alive, then recover the jobs of workers that are not. */
  private async beatAndSweep() {
    const deps = this.deps!;
    const pool = this.getPool();
    const timeout = deps.config.jobLockTimeoutSeconds;
    try {
      if (!this.markClient) await this.holdMarks().catch((err) => this.log.warn({ err, worker: true }, 'could not take the worker pools’ session marks'));
      for (const p of this.pools) {
        // Without a held mark the row carries no key: the time rule alone applies to this pool.
        await pool.query(
          `INSERT INTO docgraph_worker.heartbeats (pool_id, lock_key) VALUES ($1, $2::bigint)
           ON CONFLICT (pool_id) DO UPDATE SET last_seen_at = now(), lock_key = EXCLUDED.lock_key`,
          [p.id, this.markKeys.get(p.id) ?? null],
        );
      }
      await this.sweep(timeout);
    } catch (err) {
      this.log.warn({ err, worker: true }, 'job heartbeat or recovery sweep failed');
    }
  }

  /**
   * The pools whose recorded mark is free: their process has died (or lost its mark connection).
   * A pool's own marks are held by this process's mark session, so another session cannot take
   * them; this process's pools are skipped anyway.
   */
  private async deadByMark(): Promise<string[]> {
    const client = await this.getPool().connect();
    try {
      const { rows } = await client.query<{ pool_id: string; lock_key: string }>(
        `SELECT pool_id, lock_key::text FROM docgraph_worker.heartbeats WHERE lock_key IS NOT NULL AND NOT (pool_id = ANY($1::text[]))`,
        [this.pools.map((p) => p.id)],
      );
      const dead: string[] = [];
      for (const { pool_id, lock_key } of rows) {
        const { rows: tried } = await client.query<{ free: boolean }>('SELECT pg_try_advisory_lock($1::bigint) AS free', [lock_key]);
        if (!tried[0].free) continue;
        await client.query('SELECT pg_advisory_unlock($1::bigint)', [lock_key]);
        dead.push(pool_id);
      }
      return dead;
    } finally {
      client.release();
    }
  }

  /**
   * Unlock the jobs (and named queues) of worker pools that are dead: their mark is free (at once,
   * whatever the lock's age), or they were not heard from within `timeoutSeconds` (then only locks
   * older than the timeout, so a pool that has just started and not yet written its first beat
   * keeps its jobs). Jobs on their last attempt are given up first (domain rows marked failed),
   * then unlocked (the queue does not run them again).
   * Safe to run concurrently in several processes: every step is idempotent.
   */
  async sweep(timeoutSeconds: number): Promise<number> {
    const pool = this.getPool();
    const gone = await this.deadByMark();
    const { rows: stale } = await pool.query<{ locked_by: string }>(
      `SELECT DISTINCT l.locked_by FROM (
         SELECT locked_by, locked_at FROM graphile_worker._private_jobs WHERE locked_by IS NOT NULL
         UNION ALL
         SELECT locked_by, locked_at FROM graphile_worker._private_job_queues WHERE locked_by IS NOT NULL
       ) l
       WHERE l.locked_by = ANY($2::text[])
          OR (l.locked_at < now() - make_interval(secs => $1)
              AND NOT EXISTS (SELECT 1 FROM docgraph_worker.heartbeats h
                              WHERE h.pool_id = l.locked_by AND h.last_seen_at >= now() - make_interval(secs => $1)))`,
      [timeoutSeconds, gone],
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
        `UPDATE graphile_worker._private_jobs SET last_error = 'the worker running this job stopped ' ||
           CASE WHEN locked_by = ANY($3::text[]) THEN '(its database session ended)' ELSE '(no heartbeat for ' || $2::int || ' s)' END
         WHERE locked_by = ANY($1::text[])`,
        [poolIds, timeoutSeconds, gone],
      );
      await pool.query('SELECT graphile_worker.force_unlock_workers($1::text[])', [poolIds]);
      this.log.warn({ worker: true, pools: poolIds, jobs: lost.map((j) => j.id) }, 'unlocked jobs of worker processes that stopped');
    }
    // Rows of dead pools and of pools gone quiet: their locks (if any) were just released; a pool
    // that was only paused writes its row again on its next beat.
    await pool.query(`DELETE FROM docgraph_worker.heartbeats WHERE last_seen_at < now() - make_interval(secs => $1) OR pool_id = ANY($2::text[])`, [timeoutSeconds, gone]);
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

  /**
   * Enqueue in the caller's transaction. `jobKey` deduplicates (replaces a pending job);
   * `queueName` runs the job after the others of that named queue, one at a time; `delayMs` runs
   * it that long after now (the database's clock).
   */
  async enqueue(tx: Tx, name: TaskName, payload: Record<string, unknown>, opts: { jobKey?: string; maxAttempts?: number; queueName?: string; delayMs?: number } = {}) {
    await tx.$executeRaw`SELECT graphile_worker.add_job(${name}, ${JSON.stringify(payload)}::json,
      queue_name => ${opts.queueName ?? null}::text,
      run_at => now() + make_interval(secs => ${(opts.delayMs ?? 0) / 1000}::float8),
      job_key => ${opts.jobKey ?? null}, max_attempts => ${opts.maxAttempts ?? 5})`;
  }

  /** Run a handler directly (tests, admin tools). */
  async runNow(name: TaskName, payload: unknown) {
    const handler = this.tasks[name]?.handler;
    if (!handler || !this.deps) throw new Error(`unknown task ${name} or jobs not started`);
    await handler(payload, this.deps);
  }

  /**
   * Stop the workers (running jobs finish, still beating), drop the pools' rows, release the marks,
   * then close every queue connection.
   */
  async stop() {
    const pools = this.pools;
    await Promise.all(pools.map((p) => p.runner.stop()));
    this.running = false;
    clearTimeout(this.beatTimer);
    await this.beating;
    clearTimeout(this.beatTimer);
    if (pools.length) {
      await this.pool?.query('DELETE FROM docgraph_worker.heartbeats WHERE pool_id = ANY($1::text[])', [pools.map((p) => p.id)]).catch(() => {});
    }
    this.pools = [];
    // Rows first, then the marks: a row with a key and a free mark would read as a dead pool.
    const marks = this.markClient;
    this.markClient = undefined;
    this.markKeys.clear();
    await marks?.end().catch(() => {});
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
