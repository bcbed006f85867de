import { describe, expect, it } from 'vitest';
import { extractText, getDocumentProxy } from 'unpdf';
import { renderPagesPdf } from '../../src/lib/pdf.ts';

describe('renderPagesPdf', () => {
  it('renders a real PDF whose text holds each title and the bodies', async () => {
    const pdf = await renderPagesPdf(
      [
        { title: 'Getting started', markdown: '# Install\n\nRun the **installer**.\n\n- one\n- two\n\n```\nnpm start\n```' },
        { title: 'Reference', markdown: 'Everything about the API.\n\n> quoted', depth: 1 },
      ],
      { title: 'Handbook' },
    );
    expect(pdf.subarray(0, 5).toString()).toBe('%PDF-');
    const { text } = await extractText(await getDocumentProxy(new Uint8Array(pdf)), { mergePages: true });
    for (const word of ['Handbook', 'Getting started', 'Reference', 'installer', 'npm start', 'quoted']) expect(text).toContain(word);
  });
});
