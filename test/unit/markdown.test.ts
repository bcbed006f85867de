import { createRequire } from 'node:module';
import Ajv from 'ajv';
import { describe, expect, it } from 'vitest';
import {
  analyzeMarkdown,
  blockNesting,
  classifyLink,
  documentToMarkdown,
  extractLinks,
  InvalidDocumentError,
  isInAppUrl,
  markdownToDocument,
  markdownToPlainText,
  slugify,
  splitSections,
  unparsedMarkdown,
  type JSONDocument,
} from '../../src/lib/markdown.ts';

// ---- JSONDocument validator built from the official OpenAPI document (3.0 → JSON Schema draft 7)

const require = createRequire(import.meta.url);
const spec = require('@gitbook/api/spec/openapi.json') as { components: { schemas: Record<string, unknown> } };

function toJsonSchema(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(toJsonSchema);
  if (!node || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(node)) {
    out[k] = k === '$ref' && typeof v === 'string' ? v.replace('#/components/schemas/', '#/definitions/') : toJsonSchema(v);
  }
  if (out.nullable === true) {
    if (typeof out.type === 'string') out.type = [out.type, 'null'];
    delete out.nullable;
  }
  return out;
}

const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false });
const validateDocument = ajv.compile({
  definitions: toJsonSchema(spec.components.schemas),
  $ref: '#/definitions/JSONDocument',
});

function expectValidDocument(doc: JSONDocument) {
  const ok = validateDocument(doc);
  if (!ok) throw new Error(`${ajv.errorsText(validateDocument.errors, { separator: '\n' }).slice(0, 3000)}\n${JSON.stringify(doc, null, 1).slice(0, 3000)}`);
}

// A page using every construct the conversion supports, written the way documentToMarkdown writes it.
const CANONICAL = `# Getting started

Some **bold** text, *italic*, \`inline code\` and ~~gone~~, plus **bold with \`code\` inside**.

A [link](https://example.com/docs), a [page](page:pg_123), an [anchor](#install), an [anchor elsewhere](page:pg_9#faq) and a [file](file:fl_1).

## Install

- first
- second with **bold**
  - nested item
- third

1. one
2. two
3. three

> A quote with *emphasis*.
>
> - a list in a quote

\`\`\`ts
const x = 1;

console.log(x);
\`\`\`

\`\`\`
no language
\`\`\`

### Media

![Logo](file:fl_logo) ![Remote](https://cdn.example.com/a.png)

---

- [x] done
- [ ] todo

Line one\\
line two
`;

describe('markdownToDocument / documentToMarkdown', () => {
  it('produces a document that validates against JSONDocument', () => {
    const doc = markdownToDocument(CANONICAL);
    expect(doc.object).toBe('document');
    expectValidDocument(doc);
  });

  it('has a validator that rejects malformed documents', () => {
    const doc = markdownToDocument('# T\n\ntext');
    expect(validateDocument(doc)).toBe(true);
    const broken = structuredClone(doc);
    delete broken.nodes[0]!.data; // headings require data
    expect(validateDocument(broken)).toBe(false);
    const badMark = structuredClone(doc) as unknown as { nodes: Array<{ nodes: Array<{ leaves: Array<{ marks: unknown[] }> }> }> };
    badMark.nodes[1]!.nodes[0]!.leaves[0]!.marks = [{ object: 'mark', type: 'blink' }];
    expect(validateDocument(badMark)).toBe(false);
  });

  it('round-trips canonical markdown exactly', () => {
    expect(documentToMarkdown(markdownToDocument(CANONICAL))).toBe(CANONICAL);
  });

  it('maps constructs to the documented block and inline shapes', () => {
    const doc = markdownToDocument('## Title\n\nA **b** [l](https://x.y) `c`\n\n```js\na\nb\n```\n');
    expect(doc.nodes.map((n) => n.type)).toEqual(['heading-2', 'paragraph', 'code']);
    expect(doc.nodes[0]!.nodes).toEqual([{ object: 'text', leaves: [{ object: 'leaf', text: 'Title', marks: [] }] }]);
    const para = doc.nodes[1]!.nodes!;
    expect(para[0]).toEqual({
      object: 'text',
      leaves: [
        { object: 'leaf', text: 'A ', marks: [] },
        { object: 'leaf', text: 'b', marks: [{ object: 'mark', type: 'bold' }] },
        { object: 'leaf', text: ' ', marks: [] },
      ],
    });
    expect(para[1]).toMatchObject({ object: 'inline', type: 'link', data: { ref: { kind: 'url', url: 'https://x.y' } } });
    expect(para[2]).toEqual({
      object: 'text',
      leaves: [
        { object: 'leaf', text: ' ', marks: [] },
        { object: 'leaf', text: 'c', marks: [{ object: 'mark', type: 'code' }] },
      ],
    });
    expect(doc.nodes[2]).toMatchObject({ type: 'code', data: { syntax: 'js' } });
    expect(doc.nodes[2]!.nodes!.map((l) => ('type' in l ? l.type : l.object))).toEqual(['code-line', 'code-line']);
  });

  it('maps internal references to content refs', () => {
    const doc = markdownToDocument('[p](page:a) [f](file:b) [x](#c) [y](page:d#e) [z](./rel.md)');
    const refs = doc.nodes[0]!.nodes!.filter((n) => n.object === 'inline').map((n) => n.data?.ref);
    expect(refs).toEqual([
      { kind: 'page', page: 'a' },
      { kind: 'file', file: 'b' },
      { kind: 'anchor', anchor: 'c' },
      { kind: 'anchor', page: 'd', anchor: 'e' },
      { kind: 'url', url: './rel.md' },
    ]);
  });

  it('is a fixpoint on documents for markdown written in other styles', () => {
    const inputs = [
      'Some __bold *and italic*__ and _em_.\n\n* star list\n* item\n\n+ plus list',
      '[**strong link**](https://a.b) and **[also](https://c.d)** and ***both***',
      'Setext heading\n==============\n\nAnother\n-------\n\n#### deep heading',
      'soft\nline break and hard  \nbreak',
      '[ref link][r] and ![ref image][i]\n\n[r]: https://example.com\n[i]: file:fl_img',
      '5. starts at five\n6. six',
      '> quote\n> > nested quote\n>\n> ```\n> code in quote\n> ```',
      '- item\n\n  continued paragraph\n\n  ```sh\n  npm i\n  ```\n- ![img in list](https://x/y.png)',
      '| a | b |\n|---|---|\n| 1 | 2 |\n\n<div>raw <b>html</b></div>\n\nText with <kbd>inline</kbd> html.',
      '**bold **not bold',
      '',
    ];
    for (const md of inputs) {
      const doc = markdownToDocument(md);
      expectValidDocument(doc);
      const again = markdownToDocument(documentToMarkdown(doc));
      expect(again, md).toEqual(doc);
    }
  });

  it('keeps text of loosely specified markdown', () => {
    const doc = markdownToDocument('#### Deep\n\n| a | b |\n|---|---|\n| 1 | 2 |');
    expect(doc.nodes[0]!.type).toBe('heading-3');
    expect(documentToMarkdown(doc)).toBe('### Deep\n\na b\n\n1 2\n');
  });

  it('moves whitespace out of marks so the markdown stays valid', () => {
    const doc: JSONDocument = {
      object: 'document',
      data: {},
      nodes: [
        {
          object: 'block',
          type: 'paragraph',
          nodes: [
            {
              object: 'text',
              leaves: [
                { object: 'leaf', text: 'a', marks: [] },
                { object: 'leaf', text: ' bold ', marks: [{ object: 'mark', type: 'bold' }] },
                { object: 'leaf', text: 'b', marks: [] },
              ],
            },
          ],
        },
      ],
    };
    expect(documentToMarkdown(doc)).toBe('a **bold** b\n');
  });

  it('renders unknown blocks and refs by their text', () => {
    const doc = {
      object: 'document' as const,
      data: {},
      nodes: [
        {
          object: 'block' as const,
          type: 'hint',
          data: { style: 'info' },
          nodes: [
            {
              object: 'block' as const,
              type: 'paragraph',
              nodes: [
                {
                  object: 'inline' as const,
                  type: 'link',
                  data: { ref: { kind: 'user', user: 'u1' } },
                  nodes: [{ object: 'text' as const, leaves: [{ object: 'leaf' as const, text: 'Ann', marks: [] }] }],
                },
              ],
            },
          ],
        },
        { object: 'block' as const, type: 'drawing', isVoid: true, data: {} },
      ],
    };
    expect(documentToMarkdown(doc)).toBe('Ann\n');
  });
});

describe('documentToMarkdown input checks', () => {
  it('rejects input that is not document-shaped', () => {
    const bad: Array<[unknown, RegExp]> = [
      [null, /object must be "document"/],
      ['# md', /object must be "document"/],
      [{ object: 'document', data: {} }, /nodes must be an array/],
      [{ object: 'document', nodes: [null] }, /nodes\[0\] must be an object/],
      [{ object: 'document', nodes: [{ object: 'block', nodes: [] }] }, /nodes\[0\]\.type/],
      [{ object: 'document', nodes: [{ object: 'block', type: 'paragraph', nodes: [{ object: 'text', leaves: [{ text: 1 }] }] }] }, /nodes\[0\]\.nodes\[0\]\.leaves\[0\]\.text/],
      [{ object: 'document', nodes: [{ object: 'block', type: 'paragraph', nodes: {} }] }, /nodes\[0\]\.nodes must be an array/],
      [{ object: 'document', nodes: [{ object: 'weird' }] }, /object must be/],
    ];
    for (const [input, message] of bad) {
      expect(() => documentToMarkdown(input), JSON.stringify(input)).toThrow(InvalidDocumentError);
      expect(() => documentToMarkdown(input)).toThrow(message);
    }
    expect(documentToMarkdown({ object: 'document', data: {}, nodes: [] })).toBe('');
  });
});

describe('extractLinks', () => {
  it('classifies links and images', () => {
    const md = [
      '[site](https://example.com/a?b=1) [mail](mailto:a@b.c) [plain http](http://x.y)',
      '[page](page:pg_1) [page anchor](page:pg_2#sec) [file](file:fl_1) ![img](file:fl_2) ![remote](https://i/x.png)',
      '[rel](./other-page.md) [nested](other/page) [up](../up/there.md#frag) [abs](/root/page.md) [anchor](#Some-Heading)',
      '<https://auto.link> and www.example.com',
      '[ref][r]',
      '',
      '[r]: ./from-definition.md',
    ].join('\n');
    expect(extractLinks(md)).toEqual([
      { kind: 'url', target: 'https://example.com/a?b=1', text: 'site' },
      { kind: 'url', target: 'mailto:a@b.c', text: 'mail' },
      { kind: 'url', target: 'http://x.y', text: 'plain http' },
      { kind: 'page', target: 'pg_1', text: 'page' },
      { kind: 'page', target: 'pg_2', text: 'page anchor' },
      { kind: 'file', target: 'fl_1', text: 'file' },
      { kind: 'file', target: 'fl_2', text: 'img' },
      { kind: 'url', target: 'https://i/x.png', text: 'remote' },
      { kind: 'page', target: 'other-page', text: 'rel' },
      { kind: 'page', target: 'other/page', text: 'nested' },
      { kind: 'page', target: '../up/there', text: 'up' },
      { kind: 'page', target: '/root/page', text: 'abs' },
      { kind: 'anchor', target: 'Some-Heading', text: 'anchor' },
      { kind: 'url', target: 'https://auto.link', text: 'https://auto.link' },
      { kind: 'url', target: 'http://www.example.com', text: 'www.example.com' },
      { kind: 'page', target: 'from-definition', text: 'ref' },
    ]);
  });

  it('ignores links in code and empty destinations', () => {
    expect(extractLinks('`[x](page:a)`\n\n    [y](page:b)\n\n[z]() [w](#)')).toEqual([]);
  });

  it('normalizes page paths', () => {
    expect(classifyLink('./a/./b/../c.MD')).toEqual({ kind: 'page', target: 'a/c' });
    expect(classifyLink('my%20page.md?x=1')).toEqual({ kind: 'page', target: 'my page' });
    expect(classifyLink('/../x.md')).toEqual({ kind: 'page', target: '/x' });
    expect(classifyLink('//cdn.example.com/x')).toEqual({ kind: 'url', target: '//cdn.example.com/x' });
  });
});

describe('isInAppUrl', () => {
  it('matches the app host and base path', () => {
    expect(isInAppUrl('https://app.example.com/s/abc', 'https://app.example.com')).toBe(true);
    expect(isInAppUrl('http://APP.example.com:443/x', 'https://app.example.com')).toBe(false);
    expect(isInAppUrl('http://app.example.com/x', 'https://app.example.com/')).toBe(true);
    expect(isInAppUrl('//app.example.com/x', 'https://app.example.com')).toBe(true);
    expect(isInAppUrl('https://app.example.com.evil.com/x', 'https://app.example.com')).toBe(false);
    expect(isInAppUrl('https://evil.com/?u=https://app.example.com', 'https://app.example.com')).toBe(false);
    expect(isInAppUrl('https://app.example.com/docs/a', 'https://app.example.com/docs')).toBe(true);
    expect(isInAppUrl('https://app.example.com/docsx', 'https://app.example.com/docs')).toBe(false);
    expect(isInAppUrl('https://localhost:3000/a', 'http://localhost:3000')).toBe(true);
    expect(isInAppUrl('https://localhost:3001/a', 'http://localhost:3000')).toBe(false);
    expect(isInAppUrl('/relative', 'https://app.example.com')).toBe(false);
    expect(isInAppUrl('javascript:alert(1)', 'https://app.example.com')).toBe(false);
    expect(isInAppUrl('not a url', 'https://app.example.com')).toBe(false);
  });
});

describe('splitSections', () => {
  it('splits at headings with unique github-style ids and plain-text bodies', () => {
    const md = [
      'Intro with **bold** and [a link](https://x.y).',
      '',
      '# Hello, World!',
      '',
      'Para one.',
      '',
      '- item `code`',
      '',
      '## Hello, World!',
      '',
      '### Hello World 1',
      '',
      '## `API` _Reference_ 🚀',
      '',
      '```js',
      'x()',
      '```',
      '## Hello, World!',
    ].join('\n');
    expect(splitSections(md)).toEqual([
      { id: '', title: '', depth: 0, body: 'Intro with bold and a link.' },
      { id: 'hello-world', title: 'Hello, World!', depth: 1, body: 'Para one.\nitem code' },
      { id: 'hello-world-1', title: 'Hello, World!', depth: 2, body: '' },
      { id: 'hello-world-1-1', title: 'Hello World 1', depth: 3, body: '' },
      { id: 'api-reference-', title: 'API Reference 🚀', depth: 2, body: 'x()' },
      { id: 'hello-world-2', title: 'Hello, World!', depth: 2, body: '' },
    ]);
  });

  it('has no intro section when the page starts with a heading, and none at all when empty', () => {
    expect(splitSections('# Only\n\nText').map((s) => s.id)).toEqual(['only']);
    expect(splitSections('')).toEqual([]);
    expect(splitSections('Just text')).toEqual([{ id: '', title: '', depth: 0, body: 'Just text' }]);
  });

  it('gives punctuation-only headings a usable id', () => {
    expect(splitSections('# ???\n\n# ???').map((s) => s.id)).toEqual(['section', 'section-1']);
  });
});

describe('slugify', () => {
  it('makes ascii path segments', () => {
    expect(slugify('Hello, World!')).toBe('hello-world');
    expect(slugify('  Crème brûlée à la carte ')).toBe('creme-brulee-a-la-carte');
    expect(slugify('Straße & Ærø')).toBe('strasse-and-aero');
    expect(slugify('API v2.0 -- Guide')).toBe('api-v2-0-guide');
    expect(slugify('')).toBe('untitled');
    expect(slugify('日本語')).toBe('untitled');
    expect(slugify('🚀🚀')).toBe('untitled');
    const long = slugify('word '.repeat(100));
    expect(long.length).toBeLessThanOrEqual(100);
    expect(long).toMatch(/^[a-z0-9]+(-[a-z0-9]+)*$/);
  });
});

describe('markdownToPlainText', () => {
  it('strips syntax and keeps text', () => {
    const md = '# Title\n\nSome **bold** [link](https://x) ![alt text](a.png) `code`\n\n- a\n- b\n\n> quote\n\n```\nfn()\n```\n\n<p>html <b>here</b></p>\n\n| h1 | h2 |\n|--|--|\n| c1 | c2 |\n\nhard  \nbreak';
    expect(markdownToPlainText(md)).toBe('Title\nSome bold link alt text code\na\nb\nquote\nfn()\nhtml here\nh1 h2\nc1 c2\nhard\nbreak');
  });
});

describe('what is stored from a parse', () => {
  it('analyzeMarkdown: the document, the links (no anchors) and the sections of one parse', () => {
    const md = '# T\n\n[a](page:p1) [b](#here) ![i](file:f1) [c][r]\n\n[r]: https://x.y\n';
    const out = analyzeMarkdown(md);
    expect(out.document).toEqual(markdownToDocument(md));
    expect(out.links).toEqual(extractLinks(md).filter((l) => l.kind !== 'anchor').map(({ kind, target }) => ({ kind, target })));
    expect(out.sections).toEqual(splitSections(md));
  });

  it('unparsedMarkdown: the text as one code block, no links, one section', () => {
    const out = unparsedMarkdown('*a*a\nb');
    expect(out.document.nodes.map((n) => n.type)).toEqual(['code']);
    expect(out.links).toEqual([]);
    expect(out.sections).toEqual([{ id: '', title: '', depth: 0, body: '*a*a\nb' }]);
    expectValidDocument(out.document);
  });

  it('blockNesting counts quote and list levels, indentation, and skips fenced code', () => {
    expect(blockNesting('text\n> > quote').depth).toBe(2);
    expect(blockNesting('- a\n  - b\n    - c').depth).toBe(3);
    expect(blockNesting('1. > - x').depth).toBe(3);
    expect(blockNesting('```\n> > > > >\n```\nplain').depth).toBe(0);
    expect(blockNesting('*a*a - b').depth).toBe(0);
    expect(blockNesting(`ok\n${'> '.repeat(20_000)}`, 100)).toEqual({ depth: 20_000, line: 2 });
  });
});
