import { describe, expect, it } from 'vitest';
import { extractText, getDocumentProxy } from 'unpdf';
import { renderPdfInWorker, PdfRenderError } from '../../src/lib/pdf-thread.ts';

describe('renderPdfInWorker', () => {
  it('renders in a worker thread', async () => {
    const pdf = await renderPdfInWorker([{ title: 'One', markdown: 'hello **world**' }], { title: 'T' }, { timeoutMs: 20_000, maxBytes: 10 << 20, maxHeapMb: 256 });
    expect(pdf.subarray(0, 5).toString()).toBe('%PDF-');
  });

  it('takes the pages a batch at a time, as the thread asks for them', async () => {
    let asked = 0;
    const next = async () => {
      const n = asked++;
      return n < 3 ? Array.from({ length: 2 }, (_, i) => ({ title: `Batch ${n} page ${i}`, markdown: `body ${n}.${i}` })) : null;
    };
    const pdf = await renderPdfInWorker(next, { title: 'Batches', pageCount: 6 }, { timeoutMs: 60_000, maxBytes: 10 << 20, maxHeapMb: 256 });
    expect(asked).toBe(4);
    const { text } = await extractText(await getDocumentProxy(new Uint8Array(pdf)), { mergePages: true });
    for (const word of ['6 pages', 'Batch 0 page 0', 'Batch 2 page 1']) expect(text).toContain(word);
  }, 90_000);

  it('a failure to load the next batch fails the render with that error', async () => {
    const err = await renderPdfInWorker(async () => { throw new Error('database gone'); }, { title: 'T' }, { timeoutMs: 60_000, maxBytes: 10 << 20, maxHeapMb: 256 }).catch((e) => e);
    expect(err).not.toBeInstanceOf(PdfRenderError);
    expect(err.message).toBe('database gone');
  }, 90_000);
});

describe('renderPdfInWorker budgets', () => {
  const pages = Array.from({ length: 60 }, (_, i) => ({ title: `Page ${i}`, markdown: 'words '.repeat(1500) }));
  it('stops at the byte budget', async () => {
    const err = await renderPdfInWorker(pages, { title: 'T' }, { timeoutMs: 120_000, maxBytes: 20_000, maxHeapMb: 256 }).catch((e) => e);
    expect(err).toBeInstanceOf(PdfRenderError);
    expect(err).toMatchObject({ reason: 'bytes', message: expect.stringContaining('larger than 20 KiB') });
  }, 150_000);
  it('stops at the time budget (the thread is terminated)', async () => {
    const err = await renderPdfInWorker(pages, { title: 'T' }, { timeoutMs: 100, maxBytes: 1 << 30, maxHeapMb: 256 }).catch((e) => e);
    expect(err).toMatchObject({ reason: 'time', message: expect.stringContaining('longer than 0.1 s') });
  });
});
