// Worker-thread entry of the PDF renderer (lib/pdf-thread.ts starts it; scripts/build.mjs bundles
// it beside the server as pdf-worker.mjs). Asks its parent for the pages a batch at a time
// (`next`; `null` ends them), renders once, and posts the bytes or the error back (`result`).
import { parentPort, workerData } from 'node:worker_threads';
import { renderPagesPdf, PdfTooLargeError, type PdfPage } from './pdf.ts';

export type PdfWorkerInput = { title: string; pageCount: number; maxBytes: number };
/** Parent → worker: the next batch of pages, `null` when there are no more. */
export type PdfWorkerBatch = { pages: PdfPage[] | null };
export type PdfWorkerOutput =
  | { type: 'next' }
  | { type: 'result'; ok: true; pdf: Uint8Array }
  | { type: 'result'; ok: false; tooLarge: boolean; message: string };

const input = workerData as PdfWorkerInput;
const port = parentPort!;

async function* pages(): AsyncGenerator<PdfPage> {
  for (;;) {
    const batch = await new Promise<PdfPage[] | null>((resolve) => {
      port.once('message', (m: PdfWorkerBatch) => resolve(m.pages));
      port.postMessage({ type: 'next' } satisfies PdfWorkerOutput);
    });
    if (!batch) return;
    yield* batch;
  }
}

try {
  const pdf = await renderPagesPdf(pages(), { title: input.title, maxBytes: input.maxBytes, pageCount: input.pageCount });
  const bytes = new Uint8Array(pdf.buffer, pdf.byteOffset, pdf.byteLength);
  port.postMessage({ type: 'result', ok: true, pdf: bytes } satisfies PdfWorkerOutput, [bytes.buffer as ArrayBuffer]);
} catch (err) {
  port.postMessage({ type: 'result', ok: false, tooLarge: err instanceof PdfTooLargeError, message: err instanceof Error ? err.message : String(err) } satisfies PdfWorkerOutput);
}
