// Runs an import's fetch and conversion (importers.ts: HTML, docx and markdown parsing, archive
// inflation) in a worker thread of its own, so a large or hostile document costs that thread's
// CPU, not the event loop that answers requests. The thread has a deadline (terminated when it
// passes) and a heap limit (a document that needs more fails the import instead of the process).
// One thread per import: imports are rare and long, so its start-up (about half a second) does
// not matter, and a terminated thread takes everything it allocated with it.
import type { Worker } from 'node:worker_threads';
import { startWorkerThread } from './worker-thread.ts';
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
  return new Promise((resolve, reject) => {
    const worker = spawn(input, opts.maxHeapMb);
    let settled = false;
    const settle = (fn: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      fn();
      void worker.terminate();
    };
    const timer = setTimeout(
      () => settle(() => reject(new ImportError(`the import did not finish within ${Math.round(opts.timeoutMs / 1000)} s (fetching and converting)`))),
      opts.timeoutMs,
    );
    worker.on('message', (reply: Reply) =>
      settle(() => {
        if (reply.ok) return resolve(revive(reply.result));
        if (reply.importError !== undefined) return reject(new ImportError(reply.importError));
        reject(new Error(`import worker: ${reply.error}`));
      }),
    );
    worker.on('error', (e: Error & { code?: string }) =>
      settle(() =>
        reject(e.code === 'ERR_WORKER_OUT_OF_MEMORY' ? new ImportError(`converting this content needs more than ${opts.maxHeapMb} MB of memory`) : e),
      ),
    );
    worker.on('exit', (code) => settle(() => reject(new Error(`import worker exited (${code}) without an answer`))));
  });
}

/** Buffers arrive as Uint8Arrays (structured clone): make them Buffers again, without copying. */
function revive(r: ConvertedImport): ConvertedImport {
  return { ...r, files: r.files.map((f) => ({ ...f, data: Buffer.from(f.data.buffer, f.data.byteOffset, f.data.byteLength) })) };
}
