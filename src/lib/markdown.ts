// Markdown helpers for page content: link extraction, search sections, slugs, plain text, and the
// conversion between markdown and GitBook's JSON document form (`JSONDocument` in the OpenAPI spec).
//
// Internal references in page markdown:
//   [text](page:<pageId>)   a page (`page:<pageId>#<anchor>` an anchor in that page)
//   [text](file:<fileId>)   a file; `![alt](file:<fileId>)` an image stored as a file
//   [text](/pages/<pageId>) and [text](/files/<fileId>): the same references as the official
//                           content-change batch writes them (read as page/file references)
//   [text](./other-page.md) a page by path (relative, or absolute from the space root: `/a/b`)
//   [text](#anchor)         an anchor in the current page
import { unified } from 'unified';
import remarkParse from 'remark-parse';
import remarkGfm from 'remark-gfm';
import remarkStringify from 'remark-stringify';
import { toString } from 'mdast-util-to-string';
import { visit } from 'unist-util-visit';
import type { BlockContent, Definition, Image, Link, Nodes, PhrasingContent, Root, RootContent } from 'mdast';

const parser = unified().use(remarkParse).use(remarkGfm);
const stringifier = unified()
  .use(remarkGfm)
  .use(remarkStringify, { bullet: '-', emphasis: '*', strong: '*', fences: true, rule: '-', listItemIndent: 'one' });

function parse(markdown: string): Root {
  return parser.parse(markdown);
}

function definitionsOf(tree: Root): Map<string, Definition> {
  const defs = new Map<string, Definition>();
  visit(tree, 'definition', (node) => {
    // CommonMark: the first definition of a label wins.
    if (!defs.has(node.identifier)) defs.set(node.identifier, node);
  });
  return defs;
}

// ---------------------------------------------------------------------------------------------
// Links

export type LinkKind = 'url' | 'page' | 'file' | 'anchor';
export interface ExtractedLink {
  kind: LinkKind;
  /** url: the URL as written; page: page id or normalized path; file: file id; anchor: the anchor without `#`. */
  target: string;
  /** Link text, or the alt text of an image. */
  text: string;
}

const SCHEME = /^[a-z][a-z0-9+.-]*:/i;

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** `./a/../b/c.md?x#y` → `b/c`; keeps a leading `/` (space root) or leading `../` segments. */
export function normalizePagePath(path: string): string {
  const clean = safeDecode(path.replace(/[?#].*$/, ''));
  const absolute = clean.startsWith('/');
  const out: string[] = [];
  for (const segment of clean.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..' && out.length > 0 && out[out.length - 1] !== '..') out.pop();
    else if (segment === '..' && absolute) continue; // cannot go above the root
    else out.push(segment);
  }
  const joined = out.join('/').replace(/\.md$/i, '');
  return absolute ? `/${joined}` : joined;
}

/** `/pages/<id>` and `/files/<id>` (optionally with `?…` or `#…`): the batch's reference form. */
const BATCH_REF = /^\/(pages|files)\/([^/?#]+)(?:[?#].*)?$/;

/** Classify a link destination; null when there is nothing to reference. */
export function classifyLink(url: string): { kind: LinkKind; target: string } | null {
  const u = url.trim();
  if (u === '') return null;
  if (u.startsWith('#')) return u.length > 1 ? { kind: 'anchor', target: safeDecode(u.slice(1)) } : null;
  const scheme = SCHEME.exec(u)?.[0].toLowerCase();
  if (scheme === 'page:') {
    const id = u.slice(5).replace(/[?#].*$/, '');
    return id ? { kind: 'page', target: id } : null;
  }
  if (scheme === 'file:') {
    const id = u.slice(5).replace(/[?#].*$/, '');
    return id ? { kind: 'file', target: id } : null;
  }
  // Any other scheme (http, https, mailto, tel…) or a protocol-relative URL is external.
  if (scheme || u.startsWith('//')) return { kind: 'url', target: u };
  const ref = BATCH_REF.exec(u);
  if (ref) return { kind: ref[1] === 'pages' ? 'page' : 'file', target: safeDecode(ref[2]) };
  const path = normalizePagePath(u);
  return path && path !== '/' ? { kind: 'page', target: path } : null;
}

/** Every link and image of a page, in document order (reference-style links resolved). */
export function extractLinks(markdown: string): ExtractedLink[] {
  const tree = parse(markdown);
  return linksOf(tree, definitionsOf(tree));
}

function linksOf(tree: Root, defs: Map<string, Definition>): ExtractedLink[] {
  const links: ExtractedLink[] = [];
  const add = (url: string | undefined, text: string) => {
    const c = url === undefined ? null : classifyLink(url);
    if (c) links.push({ ...c, text });
  };
  visit(tree, (node) => {
    switch (node.type) {
      case 'link':
        add(node.url, toString(node));
        break;
      case 'image':
        add(node.url, node.alt ?? '');
        break;
      case 'linkReference':
        add(defs.get(node.identifier)?.url, toString(node));
        break;
      case 'imageReference':
        add(defs.get(node.identifier)?.url, node.alt ?? '');
        break;
    }
  });
  return links;
}

/** Source offsets [start, end) of code blocks and inline code: text there is literal, never a link. */
export function codeRanges(markdown: string): Array<[number, number]> {
  const ranges: Array<[number, number]> = [];
  visit(parse(markdown), (node) => {
    if ((node.type === 'code' || node.type === 'inlineCode') && node.position?.start.offset !== undefined && node.position.end.offset !== undefined) {
      ranges.push([node.position.start.offset, node.position.end.offset]);
    }
  });
  return ranges;
}

/** True when `url` is an absolute (or protocol-relative) http(s) URL on the app's host, under its base path. */
export function isInAppUrl(url: string, appBaseUrl: string): boolean {
  let target: URL;
  let base: URL;
  try {
    base = new URL(appBaseUrl);
    target = url.trim().startsWith('//') ? new URL(url.trim(), base) : new URL(url.trim());
  } catch {
    return false;
  }
  if (target.protocol !== 'http:' && target.protocol !== 'https:') return false;
  // `port` is '' for the scheme's default port, so http/https on default ports both match.
  if (target.hostname !== base.hostname || target.port !== base.port) return false;
  const basePath = base.pathname.replace(/\/+$/, '');
  return basePath === '' || target.pathname === basePath || target.pathname.startsWith(`${basePath}/`);
}

// ---------------------------------------------------------------------------------------------
// Plain text, sections, slugs

function stripTags(html: string): string {
  // Good enough for indexing; never used to sanitize anything.
  return html.replace(/<!--[\s\S]*?-->/g, '').replace(/<[^>]*>/g, '');
}

/** Text of a node without markdown syntax; blocks are separated by newlines. */
function plainText(node: Nodes): string {
  switch (node.type) {
    case 'html':
      return stripTags(node.value).trim();
    case 'definition':
      return '';
    case 'table':
    case 'tableRow':
      return node.children.map(plainText).filter(Boolean).join(node.type === 'table' ? '\n' : ' ');
    case 'root':
    case 'blockquote':
    case 'list':
    case 'listItem':
    case 'footnoteDefinition':
      return node.children.map(plainText).filter(Boolean).join('\n');
    default:
      return inlineText(node);
  }
}

/** Text of phrasing content and leaf blocks (paragraph, heading, code, table cell…). */
function inlineText(node: Nodes): string {
  if (node.type === 'html') return ''; // inline html is tags around sibling text nodes
  if (node.type === 'break') return '\n';
  if (node.type === 'image' || node.type === 'imageReference') return node.alt ?? '';
  if ('value' in node) return node.value;
  if ('children' in node) return (node.children as Nodes[]).map(inlineText).join('');
  return '';
}

/** Plain text of a page for full-text indexing. */
export function markdownToPlainText(markdown: string): string {
  return plainText(parse(markdown));
}

/** github-slugger's slug: lower-case, drop punctuation and symbols, each space → `-`. */
function githubSlug(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** Generates github-style slugs, unique within one page (`a`, `a-1`, `a-2`…). */
export class Slugger {
  private readonly seen = new Map<string, number>();
  slug(text: string): string {
    const original = githubSlug(text) || 'section';
    let result = original;
    while (this.seen.has(result)) {
      const n = (this.seen.get(original) ?? 0) + 1;
      this.seen.set(original, n);
      result = `${original}-${n}`;
    }
    this.seen.set(result, 0);
    return result;
  }
}

export interface Section {
  /** Anchor of the heading ('' for the text before the first heading). */
  id: string;
  title: string;
  /** Heading depth 1–6 (0 for the text before the first heading). */
  depth: number;
  /** Plain text of the section, without its heading. */
  body: string;
}

/**
 * Split a page at its top-level headings; the intro before the first heading is kept only if
 * non-empty. A line scanner rather than the full parser: search splits hundreds of pages per
 * request and remark costs ~2 ms per KB. It knows what matters here — ATX and setext headings,
 * fenced code (no headings inside), block quotes and lists (their `#` lines are not top-level
 * headings) — and strips inline syntax to plain text.
 */
export function splitSections(markdown: string): Section[] {
  const slugger = new Slugger();
  const sections: Section[] = [];
  let current: Section = { id: '', title: '', depth: 0, body: '' };
  let lines: string[] = [];
  const flush = () => {
    current.body = lines.map(inlineToText).filter(Boolean).join('\n');
    if (current.depth > 0 || current.body !== '') sections.push(current);
  };
  const startSection = (depth: number, raw: string) => {
    flush();
    const title = inlineToText(raw);
    current = { id: slugger.slug(title), title, depth, body: '' };
    lines = [];
  };
  let fence: string | null = null;
  const src = markdown.split(/\r?\n/);
  for (let i = 0; i < src.length; i++) {
    const line = src[i];
    if (fence) {
      if (new RegExp(`^ {0,3}${fence[0]}{${fence.length},}\\s*$`).test(line)) fence = null;
      else lines.push(line);
      continue;
    }
    const open = /^ {0,3}(`{3,}|~{3,})/.exec(line);
    if (open) {
      fence = open[1];
      continue;
    }
    const atx = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/.exec(line);
    if (atx) {
      startSection(atx[1].length, atx[2] ?? '');
      continue;
    }
    const next = src[i + 1];
    const setext = next !== undefined && line.trim() !== '' && !/^ {0,3}([-*+>]|\d+[.)])\s/.test(line) ? /^ {0,3}(=+|-+)[ \t]*$/.exec(next) : null;
    if (setext && (i === 0 || src[i - 1].trim() === '')) {
      startSection(setext[1][0] === '=' ? 1 : 2, line);
      i++;
      continue;
    }
    if (/^ {0,3}([-*_])( *\1){2,}\s*$/.test(line)) continue; // thematic break
    lines.push(line);
  }
  flush();
  return sections;
}

/** One markdown line as plain text: block markers and inline syntax removed. */
function inlineToText(line: string): string {
  return line
    .replace(/^ {0,3}(>\s?)+/, '') // block quotes
    .replace(/^\s*([-*+]|\d+[.)])\s+(\[[ xX]\]\s+)?/, '') // list markers, task boxes
    .replace(/!\[([^\]]*)\]\([^)]*\)/g, '$1') // images → alt text
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1') // links → text
    .replace(/\[([^\]]*)\]\[[^\]]*\]/g, '$1') // reference links
    .replace(/<[^>]+>/g, '') // inline HTML
    .replace(/(\*\*|__|~~)(.+?)\1/g, '$2')
    .replace(/(^|[^\w*])[*_](?!\s)(.+?)(?<!\s)[*_](?=[^\w*]|$)/g, '$1$2')
    .replace(/`+([^`]*)`+/g, '$1')
    .replace(/\\([\\`*_{}\[\]()#+\-.!|])/g, '$1')
    .replace(/[ \t]+/g, ' ')
    .trim();
}

// Letters NFKD does not decompose into ASCII.
const TRANSLITERATE: Record<string, string> = {
  ß: 'ss', æ: 'ae', œ: 'oe', ø: 'o', ł: 'l', đ: 'd', ð: 'd', þ: 'th', ı: 'i', '&': ' and ',
};
const MAX_SLUG_LENGTH = 100;

/** URL path segment for a page title: lower-case ASCII words joined by `-`, never empty. */
export function slugify(title: string): string {
  const ascii = title
    .toLowerCase()
    .replace(/[ßæœøłđðþı&]/g, (c) => TRANSLITERATE[c] ?? c)
    .normalize('NFKD')
    .replace(/\p{M}/gu, '');
  const slug = ascii
    .replace(/[^a-z0-9]+/g, '-')
    .slice(0, MAX_SLUG_LENGTH)
    .replace(/^-+|-+$/g, '');
  return slug || 'untitled';
}

// ---------------------------------------------------------------------------------------------
// GitBook JSON document

export type DocMarkType = 'bold' | 'italic' | 'strikethrough' | 'code';
export interface DocMark {
  object: 'mark';
  type: string;
}
export interface DocLeaf {
  object: 'leaf';
  text: string;
  marks: DocMark[];
}
export interface DocText {
  object: 'text';
  leaves: DocLeaf[];
}
export type DocContentRef =
  | { kind: 'url'; url: string }
  | { kind: 'page'; page: string; space?: string }
  | { kind: 'file'; file: string }
  | { kind: 'anchor'; anchor: string; page?: string; space?: string }
  | { kind: string; [key: string]: unknown };
export interface DocInline {
  object: 'inline';
  type: string;
  isVoid?: boolean;
  data?: Record<string, unknown>;
  nodes?: DocNode[];
}
export interface DocBlock {
  object: 'block';
  type: string;
  isVoid?: boolean;
  data?: Record<string, unknown>;
  nodes?: DocNode[];
  fragments?: unknown[];
}
export type DocNode = DocBlock | DocInline | DocText;
export interface JSONDocument {
  object: 'document';
  data: Record<string, unknown>;
  nodes: DocBlock[];
}

// Where blocks live decides which block types the spec allows there.
type BlockContext = 'top' | 'list-item' | 'blockquote';

const MARK_ORDER: DocMarkType[] = ['bold', 'italic', 'strikethrough', 'code'];

const textNode = (leaves: DocLeaf[]): DocText => ({ object: 'text', leaves });
const emptyText = (): DocText => textNode([{ object: 'leaf', text: '', marks: [] }]);

function refFromUrl(url: string): DocContentRef {
  const c = classifyLink(url);
  if (c?.kind === 'file') return { kind: 'file', file: c.target };
  if (c?.kind === 'anchor') return { kind: 'anchor', anchor: c.target };
  if (c?.kind === 'page' && (/^page:/i.test(url) || BATCH_REF.test(url.trim()))) {
    const anchor = /#(.+)$/.exec(url)?.[1];
    return anchor ? { kind: 'anchor', page: c.target, anchor: safeDecode(anchor) } : { kind: 'page', page: c.target };
  }
  // Page paths stay URLs: turning them into page ids needs the space's page tree.
  return { kind: 'url', url };
}

function imageRef(url: string): DocContentRef {
  const c = classifyLink(url);
  return c?.kind === 'file' ? { kind: 'file', file: c.target } : { kind: 'url', url };
}

/** The markdown destination of a content reference; null for kinds markdown cannot express. */
function urlFromRef(ref: unknown): string | null {
  if (!ref || typeof ref !== 'object') return null;
  const r = ref as Record<string, unknown>;
  const str = (k: string) => (typeof r[k] === 'string' ? (r[k] as string) : undefined);
  switch (r.kind) {
    case 'url':
      return str('url') ?? null;
    case 'page':
      return str('page') ? `page:${str('page')}` : null;
    case 'file':
      return str('file') ? `file:${str('file')}` : null;
    case 'anchor':
      return str('anchor') ? `${str('page') ? `page:${str('page')}` : ''}#${str('anchor')}` : null;
    default:
      return null;
  }
}

type InlineOut = DocLeaf | DocInline;

/** mdast phrasing → flat leaves/inlines, carrying the marks of enclosing strong/emphasis/delete. */
function flattenPhrasing(nodes: PhrasingContent[], marks: DocMarkType[], defs: Map<string, Definition>, out: InlineOut[]) {
  const leaf = (text: string, extra: DocMarkType[] = []) => {
    const set = new Set([...marks, ...extra]);
    out.push({ object: 'leaf', text, marks: MARK_ORDER.filter((m) => set.has(m)).map((type) => ({ object: 'mark', type })) });
  };
  const link = (url: string, children: PhrasingContent[]) => {
    const inner: InlineOut[] = [];
    flattenPhrasing(children, marks, defs, inner);
    out.push({ object: 'inline', type: 'link', isVoid: false, data: { ref: refFromUrl(url) }, nodes: groupInlines(inner) });
  };
  const image = (url: string, alt: string | null | undefined) => {
    const data: Record<string, unknown> = { ref: imageRef(url) };
    if (alt) data.caption = alt;
    out.push({ object: 'inline', type: 'inline-image', isVoid: true, data });
  };
  for (const node of nodes) {
    switch (node.type) {
      case 'text':
        // Soft line breaks render as spaces; a leaf's '\n' is a hard break.
        leaf(node.value.replace(/[ \t]*\n[ \t]*/g, ' '));
        break;
      case 'break':
        leaf('\n');
        break;
      case 'inlineCode':
        leaf(node.value, ['code']);
        break;
      case 'strong':
        flattenPhrasing(node.children, [...marks, 'bold'], defs, out);
        break;
      case 'emphasis':
        flattenPhrasing(node.children, [...marks, 'italic'], defs, out);
        break;
      case 'delete':
        flattenPhrasing(node.children, [...marks, 'strikethrough'], defs, out);
        break;
      case 'link':
        link(node.url, node.children);
        break;
      case 'linkReference': {
        const def = defs.get(node.identifier);
        if (def) link(def.url, node.children);
        else flattenPhrasing(node.children, marks, defs, out);
        break;
      }
      case 'image':
        image(node.url, node.alt);
        break;
      case 'imageReference': {
        const def = defs.get(node.identifier);
        if (def) image(def.url, node.alt);
        break;
      }
      case 'footnoteReference':
        leaf(`[^${node.label ?? node.identifier}]`);
        break;
      case 'html':
        break; // tags only; the text between them is in sibling text nodes
    }
  }
}

const sameMarks = (a: DocLeaf, b: DocLeaf) =>
  a.marks.length === b.marks.length && a.marks.every((m, i) => m.type === b.marks[i]?.type);

/** Consecutive leaves → one text node (merging leaves with equal marks); inlines stay as they are. */
function groupInlines(items: InlineOut[]): Array<DocText | DocInline> {
  const out: Array<DocText | DocInline> = [];
  for (const item of items) {
    if (item.object === 'inline') {
      out.push(item);
      continue;
    }
    if (item.text === '') continue;
    const last = out[out.length - 1];
    if (last?.object !== 'text') {
      out.push(textNode([{ ...item }]));
      continue;
    }
    const prev = last.leaves[last.leaves.length - 1];
    if (prev && sameMarks(prev, item)) prev.text += item.text;
    else last.leaves.push({ ...item });
  }
  return out.length > 0 ? out : [emptyText()];
}

function inlinesToDoc(nodes: PhrasingContent[], defs: Map<string, Definition>): Array<DocText | DocInline> {
  const out: InlineOut[] = [];
  flattenPhrasing(nodes, [], defs, out);
  return groupInlines(out);
}

const block = (type: string, nodes: DocNode[], data: Record<string, unknown> = {}): DocBlock => ({
  object: 'block',
  type,
  isVoid: false,
  data,
  nodes,
});

const plainParagraph = (text: string): DocBlock =>
  block('paragraph', [text ? textNode([{ object: 'leaf', text, marks: [] }]) : emptyText()]);

function isImageOnlyParagraph(children: PhrasingContent[]): boolean {
  const isImage = (c: PhrasingContent) => c.type === 'image' || c.type === 'imageReference';
  return children.some(isImage) && children.every((c) => isImage(c) || (c.type === 'text' && c.value.trim() === ''));
}

function blocksToDoc(nodes: RootContent[], ctx: BlockContext, defs: Map<string, Definition>): DocBlock[] {
  const out: DocBlock[] = [];
  for (const node of nodes) {
    switch (node.type) {
      case 'heading':
        out.push(block(`heading-${Math.min(node.depth, 3)}`, inlinesToDoc(node.children, defs)));
        break;
      case 'paragraph':
        // A paragraph of images is an `images` block, which only exists at the top level.
        if (ctx === 'top' && isImageOnlyParagraph(node.children)) {
          const images: DocBlock[] = [];
          for (const c of node.children) {
            const img: Image | undefined =
              c.type === 'image'
                ? c
                : c.type === 'imageReference' && defs.get(c.identifier)
                  ? { type: 'image', url: defs.get(c.identifier)!.url, alt: c.alt }
                  : undefined;
            if (!img) continue;
            const data: Record<string, unknown> = { ref: imageRef(img.url) };
            if (img.alt) data.alt = img.alt;
            images.push({ object: 'block', type: 'image', isVoid: true, data, fragments: [] });
          }
          if (images.length > 0) out.push(block('images', images));
        } else {
          out.push(block('paragraph', inlinesToDoc(node.children, defs)));
        }
        break;
      case 'list': {
        const tasks = node.children.some((item) => typeof item.checked === 'boolean');
        const type = tasks ? 'list-tasks' : node.ordered ? 'list-ordered' : 'list-unordered';
        const data: Record<string, unknown> = node.ordered && !tasks && node.start != null && node.start !== 1 ? { start: node.start } : {};
        const items = node.children.map((item) => {
          const children = blocksToDoc(item.children, 'list-item', defs);
          return block('list-item', children.length > 0 ? children : [plainParagraph('')], tasks ? { checked: item.checked === true } : {});
        });
        out.push(block(type, items, data));
        break;
      }
      case 'code':
        if (ctx === 'blockquote') {
          // The spec allows no code block in a quote: keep the code as code-marked text.
          const leaves = node.value.split('\n').flatMap((line, i): DocLeaf[] => [
            ...(i > 0 ? [{ object: 'leaf' as const, text: '\n', marks: [] }] : []),
            { object: 'leaf', text: line, marks: [{ object: 'mark', type: 'code' }] },
          ]);
          out.push(block('paragraph', [textNode(leaves)]));
        } else {
          const lines = node.value.split('\n').map((line) => block('code-line', [textNode([{ object: 'leaf', text: line, marks: [] }])]));
          out.push(block('code', lines, node.lang ? { syntax: node.lang } : {}));
        }
        break;
      case 'blockquote': {
        const children = blocksToDoc(node.children, 'blockquote', defs);
        out.push(block('blockquote', children.length > 0 ? children : [plainParagraph('')]));
        break;
      }
      case 'thematicBreak':
        out.push({ object: 'block', type: 'divider', isVoid: true, data: {} });
        break;
      case 'definition':
        break; // resolved into the links that use it
      default: {
        // Tables, html, footnotes…: kept as plain text.
        const text = plainText(node);
        if (text) out.push(...text.split('\n').map(plainParagraph));
      }
    }
  }
  return out;
}

/** Markdown → GitBook JSON document (validates against the spec's `JSONDocument`). */
export function markdownToDocument(markdown: string): JSONDocument {
  const tree = parse(markdown);
  return { object: 'document', data: {}, nodes: blocksToDoc(tree.children, 'top', definitionsOf(tree)) };
}

/** A link as stored with a page version (anchors, which never leave the page, are left out). */
export type StoredLink = { kind: Exclude<LinkKind, 'anchor'>; target: string };

/** What a page version stores from its markdown: one parse for the document and the links. */
export function analyzeMarkdown(markdown: string): { document: JSONDocument; links: StoredLink[]; sections: Section[] } {
  const tree = parse(markdown);
  const defs = definitionsOf(tree);
  const links = linksOf(tree, defs).flatMap((l): StoredLink[] => (l.kind === 'anchor' ? [] : [{ kind: l.kind, target: l.target }]));
  return { document: { object: 'document', data: {}, nodes: blocksToDoc(tree.children, 'top', defs) }, links, sections: splitSections(markdown) };
}

/**
 * What is stored for markdown that could not be parsed within its budget (old rows the backfill
 * meets): the text as one code block, no links, one section holding the text, so it is never
 * parsed again and search still finds its words.
 */
export function unparsedMarkdown(markdown: string): { document: JSONDocument; links: StoredLink[]; sections: Section[] } {
  const lines = markdown.split(/\r?\n/).map((line) => block('code-line', [textNode([{ object: 'leaf', text: line, marks: [] }])]));
  return {
    document: { object: 'document', data: {}, nodes: markdown ? [block('code', lines)] : [] },
    links: [],
    sections: markdown.trim() ? [{ id: '', title: '', depth: 0, body: markdown }] : [],
  };
}

/**
 * The deepest block nesting (block quotes and list items) a line of `markdown` may open, with the
 * line (the first one deeper than `limit`, when one is): a linear scan that over-estimates a little (each 2 columns of indentation count as a
 * level, lines in fenced code are skipped). The parser recurses once per level, so a page is
 * refused on this figure before it is parsed (lib/markdown-pool.ts).
 */
export function blockNesting(markdown: string, limit = Infinity): { depth: number; line: number } {
  let worst = { depth: 0, line: 0 };
  let fence: string | null = null;
  const lines = markdown.split(/\r?\n/);
  for (let n = 0; n < lines.length; n++) {
    const line = lines[n];
    let i = 0;
    let indent = 0;
    while (line[i] === ' ' || line[i] === '\t') indent += line[i++] === '\t' ? 4 : 1;
    let depth = Math.floor(indent / 2);
    for (;;) {
      while (line[i] === ' ' || line[i] === '\t') i++;
      if (line[i] === '>') {
        depth++;
        i++;
        continue;
      }
      const marker = /^(?:[-+*]|\d{1,9}[.)])(?=[ \t]|$)/.exec(line.slice(i, i + 12));
      if (!marker) break;
      depth++;
      i += marker[0].length;
    }
    const rest = line.slice(i, i + 12);
    if (fence) {
      if (rest.startsWith(fence)) fence = null;
      continue;
    }
    fence = /^(`{3,}|~{3,})/.exec(rest)?.[1] ?? null;
    if (depth > worst.depth) worst = { depth, line: n + 1 };
    if (depth > limit) break; // the first line past the limit is the one to name
  }
  return worst;
}

// ----- document → markdown

type Item =
  | { kind: 'leaf'; text: string; marks: DocMarkType[] }
  | { kind: 'link'; url: string; children: Item[]; marks: DocMarkType[] }
  | { kind: 'image'; url: string; alt: string; marks: DocMarkType[] };

const WRAPPING_MARKS = { bold: 'strong', italic: 'emphasis', strikethrough: 'delete' } as const;
type WrappingMark = keyof typeof WRAPPING_MARKS;
const isWrapping = (m: DocMarkType): m is WrappingMark => m !== 'code';

function leafMarks(leaf: DocLeaf): DocMarkType[] {
  return MARK_ORDER.filter((m) => leaf.marks?.some((mark) => mark.type === m));
}

function isText(node: DocNode): node is DocText {
  return node.object === 'text';
}

/** Document inline content → items; a link takes the marks all its text shares (`**[a](u)**`). */
function toItems(nodes: DocNode[] | undefined): Item[] {
  const items: Item[] = [];
  for (const node of nodes ?? []) {
    if (isText(node)) {
      for (const leaf of node.leaves ?? []) if (leaf.text) items.push({ kind: 'leaf', text: leaf.text, marks: leafMarks(leaf) });
    } else if (node.object === 'inline' && node.type === 'link') {
      const children = toItems(node.nodes);
      const url = urlFromRef(node.data?.ref);
      if (url === null) {
        items.push(...children);
        continue;
      }
      const shared = MARK_ORDER.filter((m) => isWrapping(m) && children.length > 0 && children.every((c) => c.marks.includes(m)));
      for (const c of children) c.marks = c.marks.filter((m) => !shared.includes(m));
      items.push({ kind: 'link', url, children, marks: shared });
    } else if (node.object === 'inline' && node.type === 'inline-image') {
      const url = urlFromRef(node.data?.ref);
      const caption = node.data?.caption;
      if (url !== null) items.push({ kind: 'image', url, alt: typeof caption === 'string' ? caption : '', marks: [] });
    } else if (node.nodes) {
      items.push(...toItems(node.nodes)); // unknown inline: keep its text
    }
  }
  return items;
}

/** Move whitespace at the edge of a mark out of it: `** a **` is not strong emphasis in markdown. */
function takeEdgeSpace(children: PhrasingContent[], side: 'start' | 'end'): string {
  const index = side === 'start' ? 0 : children.length - 1;
  const node = children[index];
  if (!node) return '';
  let taken = '';
  let emptied = false;
  if (node.type === 'text') {
    const match = (side === 'start' ? /^\s+/ : /\s+$/).exec(node.value);
    if (!match) return '';
    taken = match[0];
    node.value = side === 'start' ? node.value.slice(taken.length) : node.value.slice(0, -taken.length);
    emptied = node.value === '';
  } else if (node.type === 'strong' || node.type === 'emphasis' || node.type === 'delete') {
    taken = takeEdgeSpace(node.children, side);
    emptied = node.children.length === 0;
  } else {
    return '';
  }
  if (!emptied) return taken;
  children.splice(index, 1);
  const more = takeEdgeSpace(children, side);
  return side === 'start' ? taken + more : more + taken;
}

function renderItem(item: Item): PhrasingContent[] {
  switch (item.kind) {
    case 'leaf': {
      if (item.marks.includes('code')) return [{ type: 'inlineCode', value: item.text }];
      const out: PhrasingContent[] = [];
      item.text.split('\n').forEach((part, i) => {
        if (i > 0) out.push({ type: 'break' });
        if (part) out.push({ type: 'text', value: part });
      });
      return out;
    }
    case 'link': {
      const link: Link = { type: 'link', url: item.url, title: null, children: buildPhrasing(item.children) };
      return [link];
    }
    case 'image':
      return [{ type: 'image', url: item.url, alt: item.alt, title: null }];
  }
}

/** Nest marks: each step wraps the longest run of items sharing a mark, then recurses inside it. */
function buildPhrasing(items: Item[]): PhrasingContent[] {
  const out: PhrasingContent[] = [];
  let i = 0;
  while (i < items.length) {
    const item = items[i]!;
    let best: WrappingMark | null = null;
    let bestEnd = i;
    for (const mark of item.marks.filter(isWrapping)) {
      let end = i;
      while (end < items.length && items[end]!.marks.includes(mark)) end++;
      if (end > bestEnd) [best, bestEnd] = [mark, end];
    }
    if (!best) {
      out.push(...renderItem(item));
      i++;
      continue;
    }
    const mark = best;
    const inner = items.slice(i, bestEnd).map((it) => ({ ...it, marks: it.marks.filter((m) => m !== mark) }));
    const children = buildPhrasing(inner);
    const lead = takeEdgeSpace(children, 'start');
    const trail = takeEdgeSpace(children, 'end');
    if (lead) out.push({ type: 'text', value: lead });
    if (children.length > 0) out.push({ type: WRAPPING_MARKS[mark], children } as PhrasingContent);
    if (trail) out.push({ type: 'text', value: trail });
    i = bestEnd;
  }
  return out;
}

function docText(node: DocNode): string {
  if (isText(node)) return (node.leaves ?? []).map((l) => l.text).join('');
  return (node.nodes ?? []).map(docText).join('');
}

function blocksToMd(nodes: DocNode[] | undefined): BlockContent[] {
  const out: BlockContent[] = [];
  for (const node of nodes ?? []) {
    if (node.object !== 'block') {
      // Inline content where a block was expected: wrap it in a paragraph.
      out.push({ type: 'paragraph', children: buildPhrasing(toItems([node])) });
      continue;
    }
    const heading = /^heading-([1-6])$/.exec(node.type);
    if (heading) {
      const depth = Number(heading[1]) as 1 | 2 | 3 | 4 | 5 | 6;
      out.push({ type: 'heading', depth, children: buildPhrasing(toItems(node.nodes)) });
      continue;
    }
    switch (node.type) {
      case 'paragraph':
        out.push({ type: 'paragraph', children: buildPhrasing(toItems(node.nodes)) });
        break;
      case 'list-unordered':
      case 'list-ordered':
      case 'list-tasks': {
        const tasks = node.type === 'list-tasks';
        const start = node.data?.start;
        out.push({
          type: 'list',
          ordered: node.type === 'list-ordered',
          start: node.type === 'list-ordered' ? (typeof start === 'number' ? start : 1) : null,
          spread: false,
          children: (node.nodes ?? []).map((item) => ({
            type: 'listItem',
            spread: false,
            checked: tasks ? item.object !== 'text' && item.data?.checked === true : null,
            children: blocksToMd(item.object === 'block' && item.type === 'list-item' ? item.nodes : [item]),
          })),
        });
        break;
      }
      case 'code': {
        const syntax = node.data?.syntax;
        out.push({ type: 'code', lang: typeof syntax === 'string' && syntax ? syntax : null, meta: null, value: (node.nodes ?? []).map(docText).join('\n') });
        break;
      }
      case 'blockquote':
        out.push({ type: 'blockquote', children: blocksToMd(node.nodes) });
        break;
      case 'divider':
        out.push({ type: 'thematicBreak' });
        break;
      case 'images':
      case 'image': {
        const images = node.type === 'image' ? [node] : (node.nodes ?? []);
        const children: PhrasingContent[] = [];
        for (const img of images) {
          if (img.object !== 'block') continue;
          const url = urlFromRef(img.data?.ref);
          if (url === null) continue;
          if (children.length > 0) children.push({ type: 'text', value: ' ' });
          const alt = img.data?.alt;
          children.push({ type: 'image', url, alt: typeof alt === 'string' ? alt : '', title: null });
        }
        if (children.length > 0) out.push({ type: 'paragraph', children });
        break;
      }
      default: {
        // Blocks markdown has no syntax for (hints, tabs, expandables…): keep their content.
        const kids = node.nodes ?? [];
        if (kids.some((k) => k.object === 'block')) out.push(...blocksToMd(kids));
        else if (kids.length > 0) out.push({ type: 'paragraph', children: buildPhrasing(toItems(kids)) });
      }
    }
  }
  return out;
}

export class InvalidDocumentError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidDocumentError';
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Structural check of untrusted input, enough for the conversion to be safe; unknown types are fine. */
function checkNodes(nodes: unknown, path: string): void {
  if (nodes === undefined) return;
  if (!Array.isArray(nodes)) throw new InvalidDocumentError(`${path} must be an array`);
  nodes.forEach((node: unknown, i) => {
    const at = `${path}[${i}]`;
    if (!isObject(node)) throw new InvalidDocumentError(`${at} must be an object`);
    if (node.object === 'text') {
      if (!Array.isArray(node.leaves)) throw new InvalidDocumentError(`${at}.leaves must be an array`);
      node.leaves.forEach((leaf: unknown, j) => {
        if (!isObject(leaf) || typeof leaf.text !== 'string') throw new InvalidDocumentError(`${at}.leaves[${j}].text must be a string`);
        if (leaf.marks !== undefined && !(Array.isArray(leaf.marks) && leaf.marks.every(isObject))) {
          throw new InvalidDocumentError(`${at}.leaves[${j}].marks must be an array of marks`);
        }
      });
    } else if (node.object === 'block' || node.object === 'inline') {
      if (typeof node.type !== 'string') throw new InvalidDocumentError(`${at}.type must be a string`);
      if (node.data !== undefined && !isObject(node.data)) throw new InvalidDocumentError(`${at}.data must be an object`);
      checkNodes(node.nodes, `${at}.nodes`);
    } else {
      throw new InvalidDocumentError(`${at}.object must be "block", "inline" or "text"`);
    }
  });
}

/**
 * GitBook JSON document → markdown. Throws InvalidDocumentError when the input is not
 * document-shaped. Blocks markdown cannot express keep their text.
 */
export function documentToMarkdown(document: unknown): string {
  if (!isObject(document) || document.object !== 'document') throw new InvalidDocumentError('object must be "document"');
  if (!Array.isArray(document.nodes)) throw new InvalidDocumentError('nodes must be an array');
  checkNodes(document.nodes, 'nodes');
  const root: Root = { type: 'root', children: blocksToMd(document.nodes as DocNode[]) };
  return stringifier.stringify(root);
}
