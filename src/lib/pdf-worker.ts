// Worker-thread entry of the PDF renderer (lib/pdf-thread.ts starts it; scripts/build.mjs bundles
// it beside the server as pdf-worker.mjs). Renders once and posts the bytes or the error back.
import { parentPort, workerData } from 'node:worker_threads';
import { renderPagesPdf, PdfTooLargeError, type PdfPage } from './pdf.ts';

export type PdfWorkerInput = { pages: PdfPage[]; title: string; maxBytes: number };
export type PdfWorkerOutput = { ok: true; pdf: Uint8Array } | { ok: false; tooLarge: boolean; message: string };

const input = workerData as PdfWorkerInput;
try {
  const pdf = await renderPagesPdf(input.pages, { title: input.title, maxBytes: input.maxBytes });
  const bytes = new Uint8Array(pdf.buffer, pdf.byteOffset, pdf.byteLength);
  parentPort!.postMessage({ ok: true, pdf: bytes } satisfies PdfWorkerOutput, [bytes.buffer as ArrayBuffer]);
} catch (err) {
  parentPort!.postMessage({ ok: false, tooLarge: err instanceof PdfTooLargeError, message: err instanceof Error ? err.message : String(err) } satisfies PdfWorkerOutput);
}
