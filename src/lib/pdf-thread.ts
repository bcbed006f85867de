// Renders a PDF in a worker thread, never on the event loop, within a time budget (the thread is
// terminated when it runs out), a byte budget (the renderer stops once its output passes it) and a
// heap cap (a thread that needs more is stopped by V8, not the process). The thread asks for the
// pages a batch at a time, so the caller need not hold every body at once.
// The worker: pdf-worker.ts (src/lib/worker-thread.ts says where it is found).
import { startWorkerThread, superviseWorkerThread } from './worker-thread.ts';
import type { PdfPage } from './pdf.ts';
import type { PdfWorkerBatch, PdfWorkerInput, PdfWorkerOutput } from './pdf-worker.ts';

/** Why a render gave up: `time` and `bytes` are the budgets, `failed` anything else. */
export class PdfRenderError extends Error {
  constructor(
    readonly reason: 'time' | 'bytes' | 'memory' | 'failed',
    message: string,
  ) {
    super(message);
    this.name = 'PdfRenderError';
  }
}

export type PdfBudget = { timeoutMs: number; maxBytes: number; maxHeapMb: number };

/**
 * The pages come from `nextBatch`, called each time the thread asks for more (`null`: no more),
 * so at most one batch of bodies is held here at a time. An array is handed over in one batch.
 */
export function renderPdfInWorker(pages: PdfPage[] | (() => Promise<PdfPage[] | null>), opts: { title: string; pageCount?: number }, budget: PdfBudget): Promise<Buffer> {
  let given = false;
  const nextBatch = typeof pages === 'function' ? pages : async () => (given ? null : ((given = true), pages));
  const pageCount = opts.pageCount ?? (Array.isArray(pages) ? pages.length : 0);
  const worker = startWorkerThread(import.meta.url, 'pdf-worker', {
    workerData: { title: opts.title, pageCount, maxBytes: budget.maxBytes } satisfies PdfWorkerInput,
    resourceLimits: { maxOldGenerationSizeMb: budget.maxHeapMb },
    stdout: false,
    stderr: false,
  });
  return superviseWorkerThread<Buffer, PdfWorkerOutput>(worker, budget.timeoutMs, {
    timeout: (settle) => settle.reject(new PdfRenderError('time', `Rendering the PDF took longer than ${Math.round(budget.timeoutMs / 100) / 10} s; export a part of the tree with page`)),
    message: (out, settle) => {
      if (out.type === 'next') {
        nextBatch().then(
          (batch) => {
            if (!settle.settled) worker.postMessage({ pages: batch } satisfies PdfWorkerBatch);
          },
          (err) => settle.reject(err), // loading the pages failed (the database): not the render's fault
        );
        return;
      }
      if (out.ok) settle.resolve(Buffer.from(out.pdf.buffer, out.pdf.byteOffset, out.pdf.byteLength));
      else settle.reject(new PdfRenderError(out.tooLarge ? 'bytes' : 'failed', out.message));
    },
    error: (err, settle) =>
      settle.reject(
        err.code === 'ERR_WORKER_OUT_OF_MEMORY'
          ? new PdfRenderError('memory', `Rendering the PDF needed more than ${budget.maxHeapMb} MiB of memory; export a part of the tree with page`)
          : new PdfRenderError('failed', `Rendering the PDF failed: ${err.message}`),
      ),
    exit: (code, settle) => settle.reject(new PdfRenderError('failed', `The PDF renderer stopped (exit code ${code})`)),
  });
}
