// One way to start a worker thread from this code base, run either from its sources (tsx,
// vitest) or from the bundle `npm start` runs: in the bundle, the worker is `<name>.mjs` beside
// it (scripts/build.mjs writes each entry of its WORKERS list there); from the sources, `<name>.ts`
// beside the caller, loaded through tsx's API (a worker does not inherit its parent's loader, and
// `--import tsx` in a worker's execArgv does not register it on Node 20). Used by the threads that
// run one long task each (imports: import-thread.ts, PDF renders: pdf-thread.ts, OpenAPI parses:
// openapi-thread.ts); the markdown pool
// (piscina) has its own entry shim, markdown-worker-dev.mjs, for the same reason.
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Worker, type WorkerOptions } from 'node:worker_threads';

/** Start the worker `name` (no extension) that lives beside `callerUrl` (the caller's import.meta.url). */
export function startWorkerThread(callerUrl: string, name: string, options: WorkerOptions): Worker {
  if (!callerUrl.endsWith('.ts')) return new Worker(new URL(`./${name}.mjs`, callerUrl), options);
  // require.resolve finds tsx's CommonJS build; the worker imports its ESM twin.
  const tsxApi = pathToFileURL(createRequire(callerUrl).resolve('tsx/esm/api').replace(/\.cjs$/, '.mjs')).href;
  const entry = new URL(`./${name}.ts`, callerUrl).href;
  const boot = `import(${JSON.stringify(tsxApi)}).then(({ tsImport }) => tsImport(${JSON.stringify(entry)}, ${JSON.stringify(entry)}))`;
  return new Worker(boot, { ...options, eval: true });
}

/** How a supervised thread's outcome is given: once; later calls are ignored. */
export type Settle<T> = { resolve: (value: T) => void; reject: (error: unknown) => void; readonly settled: boolean };

/**
 * The outcome of one task run by `worker`: the first of its answer (a `message` handler that
 * settles; one that does not keeps waiting, e.g. for a request of the thread's), its error, its
 * exit, or the deadline. The thread is terminated as soon as the outcome is known, whatever it is.
 */
export function superviseWorkerThread<T, M>(
  worker: Worker,
  timeoutMs: number,
  on: {
    message: (message: M, settle: Settle<T>) => void;
    timeout: (settle: Settle<T>) => void;
    error: (error: Error & { code?: string }, settle: Settle<T>) => void;
    exit: (code: number, settle: Settle<T>) => void;
  },
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    const end = (fn: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      fn();
      void worker.terminate();
    };
    const settle: Settle<T> = {
      resolve: (value) => end(() => resolve(value)),
      reject: (error) => end(() => reject(error)),
      get settled() {
        return settled;
      },
    };
    const timer = setTimeout(() => on.timeout(settle), timeoutMs);
    worker.on('message', (m: M) => on.message(m, settle));
    worker.on('error', (e: Error & { code?: string }) => on.error(e, settle));
    worker.on('exit', (code) => on.exit(code, settle));
  });
}
