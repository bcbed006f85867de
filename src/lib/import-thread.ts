// Runs an import's fetch and conversion (importers.ts: HTML, docx and markdown parsing, archive
// inflation) in a worker thread of its own, so a large or hostile document costs that thread's
// CPU, not the event loop that answers requests. The thread has a deadline (terminated when it
// passes) and a heap limit (a document that needs more fails the import instead of the process).
// One thread per import: imports are rare and long, so its start-up (about half a second) does
// not matter, and a terminated thread takes everything it allocated with it.
import type { Worker } from 'node:worker_threads';
import { startWorkerThread, superviseWorkerThread } from './worker-thread.ts';
import { ImportError, type ConvertedImport, type ImportSource, type ZipLimits } from './importers.ts';

export type ImportThreadInput = { source: ImportSource; url: string; allowPrivate: boolean; limits: ZipLimits; maxPageChars: number };

type Reply = { ok: true; result: ConvertedImport } | { ok: false; importError?: string; error?: string };

/** The worker: import-worker.ts (src/lib/worker-thread.ts says where it is found). */
function spawn(input: ImportThreadInput, maxHeapMb: number): Worker {
  return startWorkerThread(import.meta.url, 'import-worker', {
    workerData: { input: { ...input, limits: { ...input.limits } } },
    resourceLimits: { maxOldGenerationSizeMb: maxHeapMb },
  });
}

export function convertInWorker(input: ImportThreadInput, opts: { timeoutMs: number; maxHeapMb: number }): Promise<ConvertedImport> {
  return superviseWorkerThread<ConvertedImport, Reply>(spawn(input, opts.maxHeapMb), opts.timeoutMs, {
    timeout: (settle) => settle.reject(new ImportError(`the import did not finish within ${Math.round(opts.timeoutMs / 1000)} s (fetching and converting)`)),
    message: (reply, settle) => {
      if (reply.ok) return settle.resolve(revive(reply.result));
      if (reply.importError !== undefined) return settle.reject(new ImportError(reply.importError));
      settle.reject(new Error(`import worker: ${reply.error}`));
    },
    error: (e, settle) => settle.reject(e.code === 'ERR_WORKER_OUT_OF_MEMORY' ? new ImportError(`converting this content needs more than ${opts.maxHeapMb} MB of memory`) : e),
    exit: (code, settle) => settle.reject(new Error(`import worker exited (${code}) without an answer`)),
  });
}

/** Buffers arrive as Uint8Arrays (structured clone): make them Buffers again, without copying. */
function revive(r: ConvertedImport): ConvertedImport {
  return { ...r, files: r.files.map((f) => ({ ...f, data: Buffer.from(f.data.buffer, f.data.byteOffset, f.data.byteLength) })) };
}
