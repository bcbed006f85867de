// Reading and editing a revision's content: the page tree with paths, files, links (ok, broken,
// in-app) and file backlinks, and (extension) live edits of a space's own content.
//
// Reads work on any revision id, so the same functions serve a space's current revision and a
// change request's head. The GraphQL layer loads revisions and page versions in batches
// (graphql/content.ts) and hands them to `buildRevisionContent`, which is pure.
import { isVisibleTo } from './site-order.ts';
import type { DomainContext } from './context.ts';
import type { PageVersion, Revision } from '../generated/prisma/client.ts';
import { AppError, notFound, parseInput } from '../lib/errors.ts';
import { applyChanges, ContentChangesInput, type TreeNode } from './revisions.ts';
import { requireEditable, requireSpaceById } from './spaces.ts';
import { isInAppUrl, normalizePagePath, type StoredLink } from '../lib/markdown.ts';
import { parseForRead } from '../lib/markdown-pool.ts';
import { safeFetch } from '../lib/url-guard.ts';
import { transaction } from '../db/transaction.ts';
import { recordEvent } from '../events/log.ts';
import { lockSpace } from '../db/locks.ts';
import { recordMovedPages } from './site-redirects.ts';

// ------------------------------------------------------------------ the page tree of a revision

/**
 * The columns a page needs; `markdown` and `links` are absent when the caller did not ask for
 * content, `links` null on versions written before links were stored (until the backfill).
 */
export type PageVersionRow = Omit<PageVersion, 'markdown' | 'document' | 'links'> & { markdown?: string; links?: StoredLink[] | null };

/**
 * The revision columns reads need: the root of its page tree in the tree store (`treeRoot`), and
 * the legacy JSON `tree` only for a revision not yet given a root (`revisionTree`, revision-tree.ts).
 */
export type RevisionRow = Pick<Revision, 'id' | 'spaceId' | 'parents' | 'type' | 'tree' | 'treeRoot' | 'fileIds' | 'variables' | 'reusableContents' | 'changeRequestId' | 'createdAt'>;

export type ContentPage = {
  id: string;
  parentId: string | null;
  depth: number;
  /** Slug chain from the root, e.g. `guide/setup`. */
  path: string;
  version: PageVersionRow;
  children: ContentPage[];
  content: RevisionContent;
};

export type RevisionContent = {
  revision: RevisionRow;
  roots: ContentPage[];
  byId: Map<string, ContentPage>;
  /** Every page, pre-order (parents before children, siblings in order). */
  ordered: ContentPage[];
  byPath: Map<string, string>;
  fileIds: Set<string>;
  /** True when page rows carry their markdown. */
  withMarkdown: boolean;
  /** True when page rows carry their stored links (with markdown, or alone: `links` loads no bodies). */
  withLinks: boolean;
  /** Set on a reader's view (`contentForReader`): the claims its pages were filtered by; conditions are not shown. */
  reader?: { claims: Record<string, unknown> };
};

/**
 * Assemble a revision's pages from its page tree (the whole tree, or the part of it one answer
 * needs: `treeAround`) and the page-version rows it points at.
 */
export function buildRevisionContent(revision: RevisionRow, tree: TreeNode[], versions: Map<string, PageVersionRow>, withMarkdown: boolean, withLinks = withMarkdown): RevisionContent {
  const content: RevisionContent = {
    revision,
    roots: [],
    byId: new Map(),
    ordered: [],
    byPath: new Map(),
    fileIds: new Set(revision.fileIds),
    withMarkdown,
    withLinks: withLinks || withMarkdown,
  };
  const visit = (nodes: TreeNode[], parent: ContentPage | null, out: ContentPage[]) => {
    for (const n of nodes) {
      const version = versions.get(n.v);
      if (!version) continue; // cannot happen for a consistent revision; never crash a read on it
      const path = parent ? `${parent.path}/${version.slug}` : version.slug;
      const page: ContentPage = { id: n.id, parentId: parent?.id ?? null, depth: parent ? parent.depth + 1 : 0, path, version, children: [], content };
      out.push(page);
      content.byId.set(page.id, page);
      content.ordered.push(page);
      if (!content.byPath.has(path)) content.byPath.set(path, page.id);
      visit(n.pages, page, page.children);
    }
  };
  visit(tree, null, content.roots);
  return content;
}

/**
 * The part of a tree one page's answer needs: the chain of its ancestors (each with only the next
 * one as child), the page, and (with `subtree`) everything below it; undefined when the page is
 * not in the tree. Built from the index alone, so a one-page read loads the rows of these pages
 * only; nodes below the page are the tree's own (shared, never changed).
 */
export function treeAround(tree: TreeNode[], pageId: string, subtree: boolean): TreeNode[] | undefined {
  const chain: TreeNode[] = [];
  const find = (nodes: TreeNode[]): boolean => {
    for (const n of nodes) {
      chain.push(n);
      if (n.id === pageId || find(n.pages)) return true;
      chain.pop();
    }
    return false;
  };
  if (!find(tree)) return undefined;
  let node: TreeNode = { ...chain[chain.length - 1] };
  if (!subtree) node.pages = [];
  for (let i = chain.length - 2; i >= 0; i--) node = { id: chain[i].id, v: chain[i].v, pages: [node] };
  return [node];
}

/** Version ids of every node of a (pruned) tree. */
export function treeVersionIds(tree: TreeNode[]): string[] {
  const out: string[] = [];
  const visit = (nodes: TreeNode[]) => {
    for (const n of nodes) {
      out.push(n.v);
      visit(n.pages);
    }
  };
  visit(tree);
  return out;
}

/** Default page layout (the contract requires every option on document pages). */
export const DEFAULT_PAGE_LAYOUT = {
  width: 'default',
  cover: true,
  coverSize: 'hero',
  title: true,
  description: true,
  tableOfContents: true,
  outline: true,
  pagination: true,
  metadata: true,
} as const;

export function pageLayout(version: Pick<PageVersionRow, 'layout'>) {
  const stored = version.layout && typeof version.layout === 'object' && !Array.isArray(version.layout) ? (version.layout as Record<string, unknown>) : {};
  return { ...DEFAULT_PAGE_LAYOUT, ...stored };
}

/** Descendants of a page, pre-order. */
export function descendantsOf(page: ContentPage): ContentPage[] {
  const out: ContentPage[] = [];
  const visit = (p: ContentPage) => {
    for (const c of p.children) {
      out.push(c);
      visit(c);
    }
  };
  visit(page);
  return out;
}

// ------------------------------------------------------------------ links

export const LINK_STATUSES = ['ok', 'broken', 'in_app'] as const;
export type LinkStatus = (typeof LINK_STATUSES)[number];
export type LinkRelation = 'reference' | 'dependsOn';

export type LinkTarget =
  | { kind: 'url'; raw: string; url: string }
  | { kind: 'page'; raw: string; pageId?: string }
  | { kind: 'file'; raw: string; fileId: string };

export type ContentLink = {
  /** Stable sort and cursor key: one item per target. */
  key: string;
  status: LinkStatus;
  relation: LinkRelation;
  target: LinkTarget;
  /** Pages of the revision where a link to the target is found, in tree order. */
  locationPageIds: string[];
};

const PAGE_ID = /^page_[0-9A-Za-z]{22}$/;
const FILE_ID = /^file_[0-9A-Za-z]{22}$/;

/**
 * Where a link points, in a revision. Internal references are written `page:<id>` / `file:<id>`
 * (markdown.ts) or `/pages/<id>` / `/files/<id>` (the official content-change batch); page paths
 * (`./setup.md`, `/guide/setup`) resolve against the linking page, then the space root.
 */
export function resolveLinkTarget(
  content: RevisionContent,
  from: ContentPage,
  link: { kind: string; target: string },
): LinkTarget | null {
  if (link.kind === 'anchor') return null;
  if (link.kind === 'url') return { kind: 'url', raw: link.target, url: link.target };
  if (link.kind === 'file') return { kind: 'file', raw: `file:${link.target}`, fileId: link.target };
  // kind 'page': an id (page:<id>) or a normalized path.
  const t = link.target;
  const byRef = /^\/(pages|files)\/([^/]+)$/.exec(t);
  if (byRef) {
    return byRef[1] === 'files'
      ? { kind: 'file', raw: t, fileId: byRef[2] }
      : { kind: 'page', raw: t, pageId: content.byId.has(byRef[2]) ? byRef[2] : undefined };
  }
  if (PAGE_ID.test(t)) return { kind: 'page', raw: `page:${t}`, pageId: content.byId.has(t) ? t : undefined };
  if (FILE_ID.test(t)) return { kind: 'file', raw: `file:${t}`, fileId: t };
  return { kind: 'page', raw: t, pageId: resolvePagePath(content, from, t) };
}

function stripReadme(path: string) {
  return path.replace(/(^|\/)(readme|index)$/i, '').replace(/\/$/, '');
}

function resolvePagePath(content: RevisionContent, from: ContentPage, target: string): string | undefined {
  if (target.startsWith('/')) return content.byPath.get(stripReadme(target.slice(1)));
  const parentPath = from.path.includes('/') ? from.path.slice(0, from.path.lastIndexOf('/')) : '';
  // Sibling first (`./setup.md` next to this page), then child (a page is also a folder).
  for (const base of [parentPath, from.path]) {
    const joined = normalizePagePath(base ? `${base}/${target}` : target);
    if (joined.startsWith('..')) continue;
    const id = content.byPath.get(stripReadme(joined));
    if (id) return id;
  }
  return undefined;
}

export type LinkOptions = {
  /** Base URLs of this app: absolute links under them are `in-app`. */
  appUrls: string[];
  /** Only links found in this page. */
  pageId?: string;
  /**
   * That page with its links loaded, when `content` is the tree without them: the tree resolves
   * the targets, and only this page's links are read.
   */
  page?: ContentPage;
};

/**
 * The stored links of the pages' versions. A version written before links were stored (the
 * backfill job has not reached it yet) is parsed in the pool, never on the event loop.
 */
async function storedLinks(pages: ContentPage[]): Promise<void> {
  const legacy = pages.filter((p) => p.version.kind === 'document' && p.version.links == null && p.version.markdown);
  await Promise.all(legacy.map(async (p) => void (p.version.links = (await parseForRead(p.version.markdown!)).links)));
}

/** Every link of a revision (or of one page), one item per target, sorted by key. Needs the pages' links. */
export async function computeLinks(content: RevisionContent, opts: LinkOptions): Promise<ContentLink[]> {
  if (!content.withLinks && !opts.page) throw new Error('computeLinks needs the pages\' links');
  const items = new Map<string, ContentLink>();
  const pages = opts.page ? [opts.page] : opts.pageId ? [content.byId.get(opts.pageId)].filter((p): p is ContentPage => !!p) : content.ordered;
  await storedLinks(pages);
  for (const page of pages) {
    if (page.version.kind !== 'document' || !page.version.links) continue;
    for (const link of page.version.links) {
      const target = resolveLinkTarget(content, page, link);
      if (!target) continue;
      let key: string;
      let status: LinkStatus;
      let relation: LinkRelation = 'reference';
      if (target.kind === 'url') {
        key = `url:${target.url}`;
        status = opts.appUrls.some((base) => isInAppUrl(target.url, base)) ? 'in_app' : 'ok';
      } else if (target.kind === 'page') {
        key = target.pageId ? `page:${target.pageId}` : `missing:${target.raw}`;
        status = target.pageId ? 'ok' : 'broken';
      } else {
        key = `file:${target.fileId}`;
        status = content.fileIds.has(target.fileId) ? 'ok' : 'broken';
        relation = 'dependsOn';
      }
      const item = items.get(key);
      if (item) {
        if (!item.locationPageIds.includes(page.id)) item.locationPageIds.push(page.id);
      } else {
        items.set(key, { key, status, relation, target, locationPageIds: [page.id] });
      }
    }
  }
  return [...items.values()].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

export function linkStats(links: ContentLink[]) {
  return { total: links.length, broken: { total: links.filter((l) => l.status === 'broken').length } };
}

/** Pages of the revision that reference a file (link or image), in tree order. Needs the pages' links. */
export async function fileBacklinks(content: RevisionContent, fileId: string): Promise<ContentPage[]> {
  if (!content.withLinks) throw new Error('fileBacklinks needs the pages\' links');
  await storedLinks(content.ordered);
  return content.ordered.filter(
    (page) =>
      page.version.kind === 'document' &&
      !!page.version.links?.some((l) => {
        const t = resolveLinkTarget(content, page, l);
        return t?.kind === 'file' && t.fileId === fileId;
      }),
  );
}

export function appUrlsOf(ctx: Pick<DomainContext, 'config'>) {
  return [...new Set([ctx.config.appUrl, ctx.config.publicUrl])];
}

// ------------------------------------------------------------------ reading access

/** The space's current revision id, for a caller who may read the space. */
export async function currentRevisionId(ctx: DomainContext, spaceId: string): Promise<string> {
  const space = await requireSpaceById(ctx, spaceId, 'space:read');
  if (!space.revisionId) throw notFound('Revision');
  return space.revisionId;
}

// ------------------------------------------------------------------ live edits (extension)

/** Limits for files fetched on a user's behalf (`insert_files` with a url). */
const FILE_FETCH = { timeoutMs: 15_000, maxBytes: 10 * 1024 * 1024 };

export type FetchedFile = { body: Buffer; contentType: string };

/** GET a URL for a user (SSRF-guarded); non-2xx answers are errors. */
export async function fetchForUser(ctx: Pick<DomainContext, 'config'>, url: string, limits: { timeoutMs?: number; maxBytes?: number } = FILE_FETCH): Promise<FetchedFile & { finalUrl: string }> {
  const r = await safeFetch(url, { allowPrivate: ctx.config.allowPrivateFetch, ...limits });
  if (r.status < 200 || r.status >= 300) throw new Error(`the URL answered HTTP ${r.status}`);
  return { body: r.body, contentType: (r.contentType ?? 'application/octet-stream').split(';')[0].trim(), finalUrl: r.finalUrl };
}

/**
 * Fetch every `insert_files` URL of a batch before the transaction starts (no row lock held
 * during network I/O) and return the `fetchFile` to hand to `applyChanges`; failures are kept and
 * reported by `applyChanges` under the file's field (`changes.<i>.files.<j>.url`).
 */
export async function prepareFileFetcher(ctx: Pick<DomainContext, 'config'>, changes: unknown) {
  const results = new Map<string, Promise<FetchedFile>>();
  const parsed = ContentChangesInput.safeParse({ changes });
  if (parsed.success) {
    for (const c of parsed.data.changes) {
      if (c.operation !== 'insert_files') continue;
      for (const f of c.files) {
        if (f.url && !results.has(f.url)) {
          const p = fetchForUser(ctx, f.url);
          p.catch(() => {}); // observed later by fetchFile
          results.set(f.url, p);
        }
      }
    }
  }
  await Promise.allSettled(results.values());
  return (url: string) => results.get(url) ?? fetchForUser(ctx, url);
}

export type ContentUpdateResult = Awaited<ReturnType<typeof applyChanges>> & { spaceId: string };

/**
 * Apply a content-change batch straight to a space's current content (extension: the official
 * API edits through change requests; `live` spaces accept the same batch). One transaction: the
 * space row is locked (`FOR UPDATE`), the batch applies on the revision it points at, and the
 * space moves to the new revision, so two concurrent batches serialize and neither is lost.
 */
export async function applySpaceContentChanges(ctx: DomainContext, spaceId: string, rawChanges: unknown): Promise<ContentUpdateResult> {
  const viewer = ctx.access.requireViewer();
  const space = await requireSpaceById(ctx, spaceId, 'space:editContent');
  requireEditable(space);
  const { changes } = parseInput(ContentChangesInput, { changes: rawChanges });
  const fetchFile = await prepareFileFetcher(ctx, changes);
  return transaction(
    ctx.prisma,
    async (tx) => {
      // FOR UPDATE on the space (db/locks.ts): serializes writers of its current revision.
      const current = await lockSpace(tx, spaceId, 'update');
      if (!current) throw notFound('Space');
      requireEditable({ id: spaceId, ...current });
      if (!current.revisionId) throw notFound('Revision');
      const result = await applyChanges(tx, {
        spaceId,
        baseRevisionId: current.revisionId,
        changes,
        createdById: viewer.user.id,
        storage: ctx.services.storage,
        fetchFile,
      });
      // A batch that changed nothing wrote no revision: the space stays where it is, no event.
      if (!result.changed) return { ...result, spaceId };
      await tx.space.update({ where: { id: spaceId }, data: { revisionId: result.revision.id } });
      await recordMovedPages(tx, spaceId, current.revisionId, result.revision.id, ctx.clock.now());
      await recordEvent(tx, ctx, { type: 'space_content_updated', organizationId: space.organizationId, objectId: spaceId, payload: { revisionId: result.revision.id, previousRevisionId: current.revisionId, changes: changes.length } });
      return { ...result, spaceId };
    },
    { timeout: 30_000, maxWait: 10_000 },
  );
}

export function pageNotInRevision(pageId: string) {
  return new AppError('NOT_FOUND', `Page ${pageId} not found in this revision`);
}

export function fileNotInRevision(fileId: string) {
  return new AppError('NOT_FOUND', `File ${fileId} not found in this revision`);
}


// ------------------------------------------------------------------ a reader's view of a revision

const readerViews = new WeakMap<RevisionContent, Map<string, RevisionContent>>();

/**
 * The pages of `content` a published reader sees (src/auth/audience.ts): a page whose condition
 * fails for `claims` is left out with everything below it (a missing claim is false). The same
 * shape as the full content (roots, byId, ordered, byPath), so every page field answers from it
 * alone; memoized per content and claims. Pages are copies: the shared tree is never changed.
 */
export function contentForReader(content: RevisionContent, claims: Record<string, unknown>): RevisionContent {
  const key = JSON.stringify(claims);
  let views = readerViews.get(content);
  if (!views) readerViews.set(content, (views = new Map()));
  const known = views.get(key);
  if (known) return known;
  const view: RevisionContent = { ...content, roots: [], byId: new Map(), ordered: [], byPath: new Map(), reader: { claims } };
  const visit = (pages: ContentPage[], out: ContentPage[]) => {
    for (const p of pages) {
      if (!isVisibleTo(p.version.condition, claims)) continue;
      const copy: ContentPage = { ...p, children: [], content: view };
      out.push(copy);
      view.byId.set(copy.id, copy);
      view.ordered.push(copy);
      if (!view.byPath.has(copy.path)) view.byPath.set(copy.path, copy.id);
      visit(p.children, copy.children);
    }
  };
  visit(content.roots, view.roots);
  if (views.size > 16) views.clear(); // bounded: claims sets per tree are few
  views.set(key, view);
  return view;
}
