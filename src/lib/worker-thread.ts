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
