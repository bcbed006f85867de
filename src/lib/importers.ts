// Converters from external content to a page tree: markdown, HTML (turndown), a crawled
// website, Word documents (mammoth → HTML → turndown) and zip archives of markdown, with a
// GitBook-style SUMMARY.md or the folder tree. Pure: fetching is injected by the caller, which
// applies the SSRF guard. Links between imported files stay relative; `sourcePath` lets the
// caller resolve them to page and file ids. Archives (zip, docx) are read by zip-reader.ts
// within `ZipLimits`: nothing is inflated past them.
import path from 'node:path/posix';
import JSZip from 'jszip';
import mammoth from 'mammoth';
import TurndownService from 'turndown';
import { parse as parseHtml } from 'node-html-parser';
import { readZip, ZipLimitError, type ZipLimits } from './zip-reader.ts';
import { FetchGuardError, FetchTimeoutError, FetchTooLargeError, safeFetch } from './url-guard.ts';
import { codeRanges } from './markdown.ts';

/** What a source converts to: a page tree (paths of the source, for links) and files. */
export type ImportedPage = {
  title: string;
  slug?: string;
  description?: string | null;
  kind?: 'document' | 'group';
  markdown: string;
  /** Path in the source (`guide/setup.md`), used to resolve links between imported resources. */
  sourcePath?: string;
  /** Where `markdown` has code (offsets), found by fetchAndConvert's parse so links are rewritten without parsing again. */
  codeRanges?: Array<[number, number]>;
  children: ImportedPage[];
};
export type ImportedFile = { path: string; name: string; contentType: string; data: Buffer };
export type ConvertedImport = { pages: ImportedPage[]; files: ImportedFile[]; totalResources: number };

/** Raised for problems the user can act on (bad URL, unreadable archive…): the job fails with this message. */
export class ImportError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ImportError';
  }
}

export type { ZipLimits } from './zip-reader.ts';
/** The defaults of `IMPORT_MAX_ENTRIES`, `IMPORT_MAX_ENTRY_BYTES`, `IMPORT_MAX_TOTAL_BYTES` (src/config.ts). */
export const DEFAULT_ZIP_LIMITS: ZipLimits = { maxEntries: 5000, maxEntryBytes: 20 * 1024 * 1024, maxTotalBytes: 50 * 1024 * 1024 };

/** `readZip` with its refusals as import errors. */
async function readArchive(...args: Parameters<typeof readZip>) {
  try {
    return await readZip(...args);
  } catch (e) {
    throw e instanceof ZipLimitError ? new ImportError(e.message) : e;
  }
}


const IMAGE_TYPES: Record<string, string> = {
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.svg': 'image/svg+xml',
  '.webp': 'image/webp',
};
const MARKDOWN_EXT = /\.(md|markdown)$/i;

export type Fetcher = (url: string) => Promise<{ contentType: string | null; body: Buffer }>;

// ------------------------------------------------------------------ markdown and HTML

/** Title from the first `# heading` (removed from the body), else the name hint. */
export function importMarkdown(text: string, nameHint = 'Untitled', sourcePath?: string): ImportedPage {
  const m = /^\s*#\s+(.+?)\s*#*\s*(\r?\n|$)/.exec(text);
  const title = m ? m[1].trim() : nameHint;
  const markdown = m ? text.slice(m[0].length).replace(/^\s*\n/, '') : text;
  return { title, markdown: markdown.trimEnd() + '\n', sourcePath, children: [] };
}

function turndown() {
  const td = new TurndownService({ headingStyle: 'atx', codeBlockStyle: 'fenced', bulletListMarker: '-' });
  td.remove(['script', 'style', 'nav', 'noscript', 'iframe']);
  return td;
}

export function importHtml(html: string, nameHint = 'Untitled', sourcePath?: string): ImportedPage {
  const root = parseHtml(html);
  const title = root.querySelector('title')?.text.trim() || root.querySelector('h1')?.text.trim() || nameHint;
  const main = root.querySelector('main') ?? root.querySelector('article') ?? root.querySelector('body') ?? root;
  const markdown = turndown().turndown(main.toString());
  const page = importMarkdown(markdown, title, sourcePath);
  return { ...page, title };
}

// ------------------------------------------------------------------ docx

export async function importDocx(buffer: Buffer, nameHint = 'Document', limits: ZipLimits = DEFAULT_ZIP_LIMITS): Promise<ConvertedImport> {
  // mammoth inflates with JSZip, all at once: it is given a copy rebuilt from the entries read
  // within the limits, stored uncompressed, so what it reads cannot expand any further.
  const entries = await readArchive(buffer, limits, { what: 'the Word document' });
  const copy = new JSZip();
  for (const e of entries) copy.file(e.name, e.data);
  const stored = await copy.generateAsync({ type: 'nodebuffer', compression: 'STORE' });
  const files: ImportedFile[] = [];
  let n = 0;
  let result;
  try {
    result = await mammoth.convertToHtml(
      { buffer: stored },
      {
        convertImage: mammoth.images.imgElement(async (image) => {
          const ext = image.contentType.split('/')[1]?.replace('jpeg', 'jpg') ?? 'bin';
          const name = `image-${++n}.${ext}`;
          files.push({ path: `media/${name}`, name, contentType: image.contentType, data: Buffer.from(await image.read('base64'), 'base64') });
          return { src: `media/${name}` };
        }),
      },
    );
  } catch (e) {
    throw new ImportError(`not a readable Word document: ${(e as Error).message}`);
  }
  const page = importHtml(`<body>${result.value}</body>`, nameHint, 'document.md');
  return { pages: [page], files, totalResources: 1 + files.length };
}

// ------------------------------------------------------------------ zip

export async function importZip(buffer: Buffer, limits: ZipLimits = DEFAULT_ZIP_LIMITS): Promise<ConvertedImport> {
  // Only markdown and images are read (and count against the limits); the rest is skipped unread.
  const wanted = (name: string) => !/(^|\/)(__MACOSX|\.)/.test(name) && (MARKDOWN_EXT.test(name) || !!IMAGE_TYPES[path.extname(name).toLowerCase()]);
  const entries = await readArchive(buffer, limits, { what: 'the archive', keep: wanted });
  const texts = new Map<string, string>();
  const files: ImportedFile[] = [];
  for (const { name, data } of entries) {
    if (MARKDOWN_EXT.test(name)) texts.set(name, data.toString('utf8'));
    else files.push({ path: name, name: path.basename(name), contentType: IMAGE_TYPES[path.extname(name).toLowerCase()], data });
  }
  // A single top-level folder (common when zipping a directory) is not a level of the tree.
  const prefix = commonFolder([...texts.keys(), ...files.map((f) => f.path)]);
  const strip = (p: string) => (prefix ? p.slice(prefix.length) : p);
  const docs = new Map([...texts].map(([k, v]) => [strip(k), v]));
  const outFiles = files.map((f) => ({ ...f, path: strip(f.path) }));

  const summary = [...docs.keys()].find((k) => k.toLowerCase() === 'summary.md');
  const pages = summary ? pagesFromSummary(docs.get(summary)!, docs) : pagesFromTree(docs);
  if (pages.length === 0) throw new ImportError('the archive holds no markdown pages');
  return { pages, files: outFiles, totalResources: docs.size + outFiles.length };
}

function commonFolder(paths: string[]): string {
  if (paths.length === 0) return '';
  const first = paths[0].split('/');
  if (first.length < 2) return '';
  const folder = `${first[0]}/`;
  return paths.every((p) => p.startsWith(folder)) ? folder : '';
}

/** GitBook SUMMARY.md: nested bullet lists of `[Title](path.md)`, optional `## Group` headings. */
function pagesFromSummary(summary: string, docs: Map<string, string>): ImportedPage[] {
  const root: ImportedPage[] = [];
  const stack: Array<{ indent: number; page: ImportedPage }> = [];
  let group: ImportedPage | null = null;
  for (const line of summary.split(/\r?\n/)) {
    const heading = /^#{2,}\s+(.+)$/.exec(line.trim());
    if (heading) {
      group = { title: heading[1].trim(), kind: 'group', markdown: '', children: [] };
      root.push(group);
      stack.length = 0;
      continue;
    }
    const item = /^(\s*)[-*+]\s+\[([^\]]+)\]\(([^)]*)\)/.exec(line);
    if (!item) continue;
    const indent = item[1].replace(/\t/g, '  ').length;
    const target = decodeURI(item[3].split('#')[0]).replace(/^\.\//, '');
    const text = docs.get(target);
    const page: ImportedPage = text !== undefined ? { ...importMarkdown(text, item[2], target), title: item[2].trim() } : { title: item[2].trim(), markdown: '', sourcePath: target || undefined, children: [] };
    while (stack.length && stack[stack.length - 1].indent >= indent) stack.pop();
    const parent = stack[stack.length - 1]?.page;
    (parent ? parent.children : group ? group.children : root).push(page);
    stack.push({ indent, page });
  }
  return root;
}

/** Without a summary: folders become pages (their README.md is the content), files sorted by name. */
function pagesFromTree(docs: Map<string, string>): ImportedPage[] {
  type Folder = { pages: Map<string, ImportedPage>; folders: Map<string, Folder>; readme?: string; readmePath?: string };
  const top: Folder = { pages: new Map(), folders: new Map() };
  for (const [p, text] of docs) {
    const parts = p.split('/');
    let folder = top;
    for (const seg of parts.slice(0, -1)) {
      if (!folder.folders.has(seg)) folder.folders.set(seg, { pages: new Map(), folders: new Map() });
      folder = folder.folders.get(seg)!;
    }
    const file = parts[parts.length - 1];
    if (/^(readme|index)\.md$/i.test(file) && parts.length > 1) {
      folder.readme = text;
      folder.readmePath = p;
    } else folder.pages.set(file, importMarkdown(text, titleFromName(file), p));
  }
  const build = (folder: Folder): ImportedPage[] => {
    const names = [...new Set([...folder.pages.keys(), ...folder.folders.keys()])].sort((a, b) => a.localeCompare(b));
    return names.map((name) => {
      const sub = folder.folders.get(name);
      if (!sub) return folder.pages.get(name)!;
      const base = sub.readme !== undefined ? importMarkdown(sub.readme, titleFromName(name), sub.readmePath) : { title: titleFromName(name), markdown: '', children: [] };
      return { ...base, children: build(sub) };
    });
  };
  return build(top);
}

function titleFromName(name: string) {
  const base = name.replace(MARKDOWN_EXT, '').replace(/[-_]+/g, ' ').trim();
  return base ? base[0].toUpperCase() + base.slice(1) : 'Untitled';
}

// ------------------------------------------------------------------ website

/**
 * Breadth-first crawl of same-origin pages under the start URL's path, to `maxDepth` link hops
 * and at most `maxPages` pages. Pages nest by URL path where a parent page was crawled.
 */
export async function crawlWebsite(startUrl: string, fetcher: Fetcher, opts: { maxDepth?: number; maxPages?: number } = {}): Promise<ConvertedImport> {
  const maxDepth = opts.maxDepth ?? 2;
  const maxPages = opts.maxPages ?? 50;
  const start = new URL(startUrl);
  const scope = start.pathname.endsWith('/') ? start.pathname : path.dirname(start.pathname) + '/';
  const seen = new Set<string>([normalize(start)]);
  const queue: Array<{ url: URL; depth: number }> = [{ url: start, depth: 0 }];
  const crawled: Array<{ url: URL; page: ImportedPage }> = [];
  while (queue.length && crawled.length < maxPages) {
    const { url, depth } = queue.shift()!;
    let res;
    try {
      res = await fetcher(url.toString());
    } catch (e) {
      if (crawled.length === 0) throw e;
      continue; // a broken link deeper in the site does not fail the import
    }
    if (res.contentType && !res.contentType.includes('html')) continue;
    const html = res.body.toString('utf8');
    crawled.push({ url, page: importHtml(html, url.pathname, url.pathname) });
    if (depth >= maxDepth) continue;
    for (const a of parseHtml(html).querySelectorAll('a[href]')) {
      let next: URL;
      try {
        next = new URL(a.getAttribute('href')!, url);
      } catch {
        continue;
      }
      next.hash = '';
      if (next.origin !== start.origin || !next.pathname.startsWith(scope)) continue;
      const key = normalize(next);
      if (seen.has(key)) continue;
      seen.add(key);
      queue.push({ url: next, depth: depth + 1 });
    }
  }
  if (crawled.length === 0) throw new ImportError('no HTML page found at this URL');
  // Nest each page under the crawled page whose path is its closest ancestor.
  const byPath = new Map(crawled.map((c) => [trimSlash(c.url.pathname), c.page]));
  const roots: ImportedPage[] = [];
  for (const c of crawled) {
    let parentPath = trimSlash(c.url.pathname);
    let parent: ImportedPage | undefined;
    while (parentPath.includes('/') && !parent) {
      parentPath = parentPath.slice(0, parentPath.lastIndexOf('/'));
      if (parentPath.length + 1 < trimSlash(scope).length + 1) break;
      parent = byPath.get(parentPath);
    }
    if (parent && parent !== c.page && c.page !== crawled[0].page) parent.children.push(c.page);
    else roots.push(c.page);
  }
  return { pages: roots, files: [], totalResources: crawled.length };
}

const trimSlash = (p: string) => p.replace(/\/+$/, '') || '/';
const normalize = (u: URL) => `${u.origin}${trimSlash(u.pathname)}${u.search}`;

// ------------------------------------------------------------------ dispatch

export type ImportSource = 'website' | 'docx' | 'markdown' | 'html' | 'zip' | 'confluence' | 'github_wiki' | 'notion' | 'google_docs';

/** Convert a fetched body (or, for `website`, crawl from the URL) into pages and files. */
export async function importFromSource(source: ImportSource, body: Buffer, url: string, fetcher: Fetcher, limits: ZipLimits = DEFAULT_ZIP_LIMITS): Promise<ConvertedImport> {
  const name = decodeURIComponent(path.basename(new URL(url).pathname)) || 'Imported';
  switch (source) {
    case 'markdown':
      return { pages: [importMarkdown(body.toString('utf8'), titleFromName(name), name)], files: [], totalResources: 1 };
    case 'html':
      return { pages: [importHtml(body.toString('utf8'), titleFromName(name), name)], files: [], totalResources: 1 };
    case 'docx':
      return importDocx(body, titleFromName(name.replace(/\.docx$/i, '')), limits);
    case 'zip':
      return importZip(body, limits);
    case 'website':
      return crawlWebsite(url, fetcher);
    default:
      throw new ImportError(`importing from ${source} is not supported`);
  }
}

const FETCH_LIMITS = { timeoutMs: 30_000, maxBytes: 50 * 1024 * 1024 };

/**
 * Fetch (SSRF-guarded; every failure an ImportError naming the URL), convert, and find the code
 * ranges of each page with links (for rewriting them later without a parse). Pages over
 * `maxPageChars` are left unparsed: the caller refuses them.
 */
export async function fetchAndConvert(source: ImportSource, url: string, opts: { allowPrivate: boolean; limits: ZipLimits; maxPageChars: number }): Promise<ConvertedImport> {
  const converted = await fetchAndConvertPages(source, url, opts);
  const annotate = (pages: ImportedPage[]): void =>
    pages.forEach((p) => {
      if (p.markdown.length <= opts.maxPageChars && p.markdown.includes('](')) p.codeRanges = codeRanges(p.markdown);
      annotate(p.children);
    });
  annotate(converted.pages);
  return converted;
}

async function fetchAndConvertPages(source: ImportSource, url: string, opts: { allowPrivate: boolean; limits: ZipLimits }): Promise<ConvertedImport> {
  const fetcher: Fetcher = async (u) => {
    let r;
    try {
      r = await safeFetch(u, { allowPrivate: opts.allowPrivate, ...FETCH_LIMITS });
    } catch (e) {
      if (e instanceof FetchGuardError || e instanceof FetchTimeoutError || e instanceof FetchTooLargeError) throw new ImportError(`cannot fetch ${u}: ${e.message}`);
      throw new ImportError(`cannot fetch ${u}: ${(e as Error).message || 'network error'}`);
    }
    if (r.status < 200 || r.status >= 300) throw new ImportError(`cannot fetch ${u}: HTTP ${r.status}`);
    return { contentType: r.contentType, body: r.body };
  };
  if (source === 'website') return importFromSource(source, Buffer.alloc(0), url, fetcher, opts.limits);
  const res = await fetcher(url);
  return importFromSource(source, res.body, url, fetcher, opts.limits);
}
