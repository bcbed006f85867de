import { describe, expect, it } from 'vitest';
import JSZip from 'jszip';
import { importZip, importHtml, crawlWebsite, importDocx, importFromSource, DEFAULT_ZIP_LIMITS } from '../../src/lib/importers.ts';

const PNG = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex');

describe('zip import', () => {
  it('builds the tree from SUMMARY.md, keeping images as files', async () => {
    const zip = new JSZip();
    zip.file('book/SUMMARY.md', '# Summary\n\n* [Intro](README.md)\n* [Guide](guide/README.md)\n  * [Setup](guide/setup.md)\n\n## Reference\n\n* [API](api.md)\n');
    zip.file('book/README.md', '# Welcome\n\nHello ![logo](images/logo.png)');
    zip.file('book/guide/README.md', 'Guide body');
    zip.file('book/guide/setup.md', '# Setup\n\nSee [intro](../README.md).');
    zip.file('book/api.md', 'API body');
    zip.file('book/images/logo.png', PNG);
    zip.file('__MACOSX/junk', 'x');
    const r = await importZip(await zip.generateAsync({ type: 'nodebuffer' }));
    expect(r.pages.map((p) => p.title)).toEqual(['Intro', 'Guide', 'Reference']);
    expect(r.pages[1].children.map((p) => p.title)).toEqual(['Setup']);
    expect(r.pages[1].children[0].sourcePath).toBe('guide/setup.md');
    expect(r.pages[2]).toMatchObject({ kind: 'group', children: [expect.objectContaining({ title: 'API', markdown: 'API body\n' })] });
    expect(r.files).toEqual([expect.objectContaining({ path: 'images/logo.png', name: 'logo.png', contentType: 'image/png' })]);
  });

  it('uses the folder tree without a summary, and refuses garbage and bombs', async () => {
    const zip = new JSZip();
    zip.file('b.md', '# Bee\n\nb');
    zip.file('a.md', 'a');
    zip.file('docs/README.md', '# Docs\n\nfolder page');
    zip.file('docs/child.md', 'child');
    const r = await importZip(await zip.generateAsync({ type: 'nodebuffer' }));
    expect(r.pages.map((p) => p.title)).toEqual(['A', 'Bee', 'Docs']);
    expect(r.pages[2].children.map((p) => p.title)).toEqual(['Child']);
    await expect(importZip(Buffer.from('not a zip'))).rejects.toThrow(/zip/);
    await expect(importZip(await zip.generateAsync({ type: 'nodebuffer' }), { ...DEFAULT_ZIP_LIMITS, maxTotalBytes: 10 })).rejects.toThrow(/expands/);
  });
});

describe('html and websites', () => {
  it('converts HTML to markdown with the title', () => {
    const p = importHtml('<html><head><title>Page</title><script>x()</script></head><body><h2>Part</h2><p>Some <b>bold</b> <a href="/x">link</a></p></body></html>');
    expect(p.title).toBe('Page');
    expect(p.markdown).toContain('## Part');
    expect(p.markdown).toContain('**bold**');
    expect(p.markdown).not.toContain('x()');
  });

  it('crawls same-site links to a bounded depth', async () => {
    const site: Record<string, string> = {
      'https://d.test/docs/': '<title>Home</title><a href="a">A</a><a href="https://other.test/x">ext</a>',
      'https://d.test/docs/a': '<title>A</title><a href="a/deep">deep</a><a href="/outside">out</a>',
      'https://d.test/docs/a/deep': '<title>Deep</title><a href="deeper">deeper</a>',
      'https://d.test/docs/a/deep/deeper': '<title>Too deep</title>',
    };
    const fetched: string[] = [];
    const r = await crawlWebsite('https://d.test/docs/', async (u) => {
      fetched.push(u);
      if (!(u in site)) throw new Error('404');
      return { contentType: 'text/html', body: Buffer.from(site[u]) };
    });
    expect(fetched).not.toContain('https://other.test/x');
    expect(fetched).not.toContain('https://d.test/outside');
    expect(fetched).not.toContain('https://d.test/docs/a/deep/deeper');
    expect(r.totalResources).toBe(3);
    expect(r.pages[0].title).toBe('Home');
  });

  it('refuses unsupported sources', async () => {
    await expect(importFromSource('notion', Buffer.from(''), 'https://x.test/a', async () => ({ contentType: null, body: Buffer.from('') }))).rejects.toThrow(/not supported/);
  });
});

describe('docx', () => {
  it('converts a minimal Word document', async () => {
    const zip = new JSZip();
    zip.file('[Content_Types].xml', '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>');
    zip.file('_rels/.rels', '<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>');
    zip.file('word/document.xml', '<?xml version="1.0"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body><w:p><w:pPr><w:pStyle w:val="Heading1"/></w:pPr><w:r><w:t>Quarterly report</w:t></w:r></w:p><w:p><w:r><w:t>Revenue grew.</w:t></w:r></w:p></w:body></w:document>');
    const r = await importDocx(await zip.generateAsync({ type: 'nodebuffer' }), 'report');
    expect(r.pages[0].title).toBe('Quarterly report');
    expect(r.pages[0].markdown).toContain('Revenue grew.');
  });
});

describe('link rewriting after an import', () => {
  it('points links and images at the imported pages and files, and leaves code as written', async () => {
    const { rewriteLinks } = await import('../../src/domain/imports.ts');
    const targets = new Map([
      ['guide/setup.md', '/pages/page_setup'],
      ['img/logo.png', '/files/file_logo'],
    ]);
    // Code, links elsewhere and links to nothing imported stay exactly as written.
    const untouched = [
      '',
      'Inline `[setup](setup.md)` stays.',
      '',
      '```md',
      'A [setup](setup.md) example.',
      '```',
      '',
      'And [elsewhere](https://example.com/x.md), [missing](nope.md).',
    ];
    const md = ['See [setup](setup.md#install) and ![logo](../img/logo.png "Logo").', ...untouched].join('\n');
    expect(rewriteLinks(md, 'guide/index.md', targets).split('\n')).toEqual([
      'See [setup](/pages/page_setup#install) and ![logo](/files/file_logo "Logo").',
      ...untouched,
    ]);
  });
});
