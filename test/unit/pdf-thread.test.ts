import { describe, expect, it } from 'vitest';
import { renderPdfInWorker, PdfRenderError } from '../../src/lib/pdf-thread.ts';

describe('renderPdfInWorker', () => {
  it('renders in a worker thread', async () => {
    const pdf = await renderPdfInWorker([{ title: 'One', markdown: 'hello **world**' }], 'T', { timeoutMs: 20_000, maxBytes: 10 << 20, maxHeapMb: 256 });
    expect(pdf.subarray(0, 5).toString()).toBe('%PDF-');
  });
});

describe('renderPdfInWorker budgets', () => {
  const pages = Array.from({ length: 60 }, (_, i) => ({ title: `Page ${i}`, markdown: 'words '.repeat(1500) }));
  it('stops at the byte budget', async () => {
    const err = await renderPdfInWorker(pages, 'T', { timeoutMs: 120_000, maxBytes: 20_000, maxHeapMb: 256 }).catch((e) => e);
    expect(err).toBeInstanceOf(PdfRenderError);
    expect(err).toMatchObject({ reason: 'bytes', message: expect.stringContaining('larger than 20 KiB') });
  }, 150_000);
  it('stops at the time budget (the thread is terminated)', async () => {
    const err = await renderPdfInWorker(pages, 'T', { timeoutMs: 100, maxBytes: 1 << 30, maxHeapMb: 256 }).catch((e) => e);
    expect(err).toMatchObject({ reason: 'time', message: expect.stringContaining('longer than 0.1 s') });
  });
});
