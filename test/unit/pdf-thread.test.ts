import { describe, expect, it } from 'vitest';
import { renderPdfInWorker, PdfRenderError } from '../../src/lib/pdf-thread.ts';

describe('renderPdfInWorker', () => {
  it('renders in a worker thread', async () => {
    const pdf = await renderPdfInWorker([{ title: 'One', markdown: 'hello **world**' }], 'T', { timeoutMs: 20_000, maxBytes: 10 << 20, maxHeapMb: 256 });
    expect(pdf.subarray(0, 5).toString()).toBe('%PDF-');
  });
});
