// PDF export of pages, rendered from their markdown with pdfkit (built-in fonts only): a title
// page, then each page with its title as a heading and its blocks laid out readably.
// CPU-heavy and unbounded in time: run it off the event loop (lib/pdf-thread.ts runs it in a
// worker thread with a time budget); `maxBytes` stops it once the output passes the byte budget.
import PDFDocument from 'pdfkit';
import { unified } from 'unified';
import remarkParse from 'remark-parse';
import remarkGfm from 'remark-gfm';
import { toString } from 'mdast-util-to-string';
import type { Root, RootContent, List } from 'mdast';

export type PdfPage = { title: string; markdown: string; depth?: number };

const HEADING_SIZES = [20, 16, 14, 12, 12, 12];

/** The output passed the byte budget: rendering stopped, nothing is returned. */
export class PdfTooLargeError extends Error {
  constructor(readonly maxBytes: number) {
    const size = maxBytes >= 1024 * 1024 ? `${Math.round((maxBytes / 1024 / 1024) * 10) / 10} MiB` : `${Math.round(maxBytes / 1024)} KiB`;
    super(`The PDF would be larger than ${size}; export a part of the tree with page`);
    this.name = 'PdfTooLargeError';
  }
}

/**
 * Render `pages` in order: an array, or an async iterable that hands them over as they are
 * loaded (so a large export never holds every body at once). `pageCount` is shown on the title
 * page (default: the array's length).
 */
export async function renderPagesPdf(pages: Iterable<PdfPage> | AsyncIterable<PdfPage>, opts: { title: string; maxBytes?: number; pageCount?: number }): Promise<Buffer> {
  const count = opts.pageCount ?? (Array.isArray(pages) ? pages.length : 0);
  const maxBytes = opts.maxBytes ?? Infinity;
  const doc = new PDFDocument({ size: 'A4', margin: 56, info: { Title: opts.title } });
  const chunks: Buffer[] = [];
  let bytes = 0;
  let tooLarge = false;
  const done = new Promise<Buffer>((resolve, reject) => {
    doc.on('data', (c: Buffer) => {
      bytes += c.length;
      if (bytes > maxBytes) tooLarge = true;
      else chunks.push(c);
    });
    doc.on('end', () => (tooLarge ? reject(new PdfTooLargeError(maxBytes)) : resolve(Buffer.concat(chunks))));
    doc.on('error', reject);
  });
  done.catch(() => {}); // awaited below; a stop before then must not be an unhandled rejection

  doc.font('Helvetica-Bold').fontSize(28).text(opts.title, { align: 'center' });
  doc.moveDown().font('Helvetica').fontSize(12).text(`${count} page${count === 1 ? '' : 's'}`, { align: 'center' });

  const parser = unified().use(remarkParse).use(remarkGfm);
  for await (const page of pages) {
    doc.addPage();
    doc.font('Helvetica-Bold').fontSize(24 - Math.min(page.depth ?? 0, 3) * 2).text(page.title);
    doc.moveDown(0.5);
    const tree = parser.parse(page.markdown) as Root;
    for (const block of tree.children) renderBlock(doc, block, 0);
    // pdfkit hands its output to 'data' on a later tick: let it flow, then check the budget.
    await new Promise((resolve) => setImmediate(resolve));
    if (tooLarge) throw new PdfTooLargeError(maxBytes);
  }
  doc.end();
  return done;
}

function renderBlock(doc: PDFKit.PDFDocument, node: RootContent, indent: number) {
  const x = doc.page.margins.left + indent * 16;
  switch (node.type) {
    case 'heading':
      doc.moveDown(0.5).font('Helvetica-Bold').fontSize(HEADING_SIZES[node.depth - 1]).text(toString(node), x);
      doc.moveDown(0.25);
      break;
    case 'paragraph':
      doc.font('Helvetica').fontSize(11).text(toString(node), x);
      doc.moveDown(0.5);
      break;
    case 'code':
      doc.font('Courier').fontSize(9).text(node.value, x + 8);
      doc.moveDown(0.5);
      break;
    case 'blockquote':
      for (const child of node.children) renderBlock(doc, child, indent + 1);
      break;
    case 'list':
      renderList(doc, node, indent);
      doc.moveDown(0.5);
      break;
    case 'table':
      for (const row of node.children) doc.font('Helvetica').fontSize(10).text(row.children.map((c) => toString(c)).join('  |  '), x);
      doc.moveDown(0.5);
      break;
    case 'thematicBreak':
      doc.moveDown(0.5);
      break;
    default:
      if ('children' in node || 'value' in node) {
        const text = toString(node);
        if (text.trim()) doc.font('Helvetica').fontSize(11).text(text, x);
      }
  }
}

function renderList(doc: PDFKit.PDFDocument, list: List, indent: number) {
  list.children.forEach((item, i) => {
    const marker = list.ordered ? `${(list.start ?? 1) + i}.` : '•';
    const [first, ...rest] = item.children;
    const x = doc.page.margins.left + indent * 16;
    doc.font('Helvetica').fontSize(11).text(`${marker} ${first ? toString(first) : ''}`, x);
    for (const child of rest) {
      if (child.type === 'list') renderList(doc, child, indent + 1);
      else renderBlock(doc, child, indent + 1);
    }
  });
}
