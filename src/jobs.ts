// Background work on a Postgres-backed queue (graphile-worker). Area modules register task
// handlers here; jobs are enqueued inside the caller's transaction (graphile_worker.add_job), so a
// job exists exactly when the change that asked for it committed. Handlers must be idempotent:
// the queue retries a job whose worker died.
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

export class Jobs {
  private runner?: Runner;
  private deps?: TaskDeps;

  constructor(private readonly databaseUrl: string, private readonly log: Logger) {}

  /** Install the queue's own schema (idempotent). */
  async migrate() {
    await runMigrations({ connectionString: this.databaseUrl, logger: quietLogger(this.log) });
  }

  async start(deps: TaskDeps, opts: { concurrency?: number } = {}) {
    this.deps = deps;
    const taskList: Record<string, Task> = {};
    for (const [name, handler] of handlers) {
      taskList[name] = async (payload) => handler(payload, deps);
    }
    this.runner = await run({
      connectionString: this.databaseUrl,
      concurrency: opts.concurrency ?? 2,
      noHandleSignals: true,
      pollInterval: 1000,
      taskList,
      crontab: cronLines.join('\n'),
      logger: quietLogger(this.log),
    });
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

  async stop() {
    await this.runner?.stop();
    this.runner = undefined;
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
