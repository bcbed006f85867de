// How the GraphQL side loads revision content: revisions and page versions through batched
// loaders (one statement per column set per request), the process-wide caches of immutable trees,
// one page without its revision's other bodies, the byte budget of listed bodies, and a published
// reader's filtered pages. graphql/content.ts (the types) and other areas read content through here.
import { Kind, type GraphQLResolveInfo, type SelectionSetNode, type FragmentDefinitionNode } from 'graphql';
import { loadById, loader } from './common.ts';
import type { Context } from './context.ts';
import { Prisma, type File, type Revision } from '../generated/prisma/client.ts';
import { buildRevisionContent, descendantsOf, type ContentPage, type PageVersionRow, type RevisionContent, type RevisionRow, contentForReader, treeAround, treeVersionIds } from '../domain/content.ts';
import { viewOf } from './sites.ts';
import type { Space } from '../generated/prisma/client.ts';
import type { TreeNode } from '../domain/revisions.ts';
import { childPages, lookupPages, readTrees, revisionTree, type TreeEntry } from '../domain/revision-tree.ts';
import { parseForRead } from '../lib/markdown-pool.ts';
import { badRequest, notFound } from '../lib/errors.ts';
import { LRUCache } from 'lru-cache';


// ------------------------------------------------------------------ batched loading

/** Revision rows by id: from the process cache (rows are immutable), else one statement per tick. */
export function loadRevisionById(ctx: Context, id: string): Promise<Revision | null> {
  const caches = contentCaches(ctx.config);
  const cached = caches.rows?.get(id);
  if (cached) return Promise.resolve(cached);
  return loader<string, Revision | null>(ctx, 'revision.byId', async (ids) => {
    const rows = await ctx.prisma.revision.findMany({ where: { id: { in: [...ids] } } });
    const m = new Map(rows.map((r) => [r.id, r]));
    for (const r of rows) caches.rows?.set(r.id, r);
    return ids.map((i) => m.get(i) ?? null);
  }).load(id);
}

export function loadRevisionsBatched(ctx: Context, ids: readonly string[]): Promise<Array<Revision | null>> {
  return Promise.all(ids.map((id) => loadRevisionById(ctx, id)));
}

export const META_COLUMNS = Prisma.raw(
  `id, "pageId", "spaceId", kind::text AS kind, title, slug, emoji, icon, description, href, hidden, "noIndex", "noRobotsIndex", condition, layout, "createdAt", "pageCreatedAt"`,
);
// Links without bodies: the stored links, and the markdown only of versions written before links
// were stored (parsed in the pool, see storedLinks in domain/content.ts).
export const LINK_COLUMNS = Prisma.raw(
  `id, "pageId", "spaceId", kind::text AS kind, title, slug, emoji, icon, description, href, hidden, "noIndex", "noRobotsIndex", condition, layout, "createdAt", "pageCreatedAt", links, CASE WHEN links IS NULL THEN markdown END AS markdown`,
);
export const FULL_COLUMNS = Prisma.raw(
  `id, "pageId", "spaceId", kind::text AS kind, title, slug, emoji, icon, description, href, hidden, "noIndex", "noRobotsIndex", condition, layout, "createdAt", "pageCreatedAt", markdown, links`,
);

/** Which columns of a page version a read loads: the metadata, plus the stored links, plus the body. */
export type PageColumns = 'meta' | 'links' | 'full';
export const COLUMNS: Record<PageColumns, Prisma.Sql> = { meta: META_COLUMNS, links: LINK_COLUMNS, full: FULL_COLUMNS };

/**
 * Page-version rows by id; without markdown unless asked (`true` is `'full'`, `false` `'meta'`).
 * One statement per request tick and column set (`id = ANY($1)`, a single array parameter, so
 * thousands of pages fit). Null for an id with no row; a failed statement (a timeout, a lost
 * connection) rejects: it is not "no row".
 */
export async function loadPageVersions(ctx: Context, ids: readonly string[], columns: boolean | PageColumns): Promise<Array<PageVersionRow | null>> {
  const set: PageColumns = columns === true ? 'full' : columns === false ? 'meta' : columns;
  const l = loader<string, PageVersionRow | null>(ctx, `pageVersion.${set}`, async (keys) => {
    const rows = await ctx.prisma.$queryRaw<PageVersionRow[]>(
      Prisma.sql`SELECT ${COLUMNS[set]} FROM "PageVersion" WHERE id = ANY(${[...keys]}::text[])`,
    );
    const m = new Map(rows.map((r) => [r.id, r]));
    return keys.map((k) => m.get(k) ?? null);
  });
  // loadMany answers a failed batch with Error values in place of rows; reading those as "no
  // row" once cached a timed-out load as an empty tree. Rethrow the first.
  const rows = await l.loadMany([...ids]);
  for (const r of rows) if (r instanceof Error) throw r;
  return rows as Array<PageVersionRow | null>;
}

/**
 * A revision's page tree with paths, memoized per request. Content without markdown is enough for
 * trees and titles; `links` adds every page's stored links without the bodies (link listings,
 * backlinks); `withMarkdown` loads page bodies too (whole lists with `markdown`). Trees without
 * bodies are shared across requests (`contentCaches`): one load at a time per revision, and only
 * a complete one is kept. One page's answer needs none of this: `loadPageContent`.
 */
export function loadRevisionContent(ctx: Context, revision: RevisionRow | string, opts: { withMarkdown: boolean; links?: boolean }): Promise<RevisionContent> {
  const memo = memoOf(ctx);
  const id = typeof revision === 'string' ? revision : revision.id;
  const full = memo.get(`${id}:full`);
  if (full) return full;
  const set: PageColumns = opts.withMarkdown ? 'full' : opts.links ? 'links' : 'meta';
  const key = `${id}:${set}`;
  let p = memo.get(key);
  if (!p && set === 'meta') p = memo.get(`${id}:links`);
  if (!p) {
    const load = async () => {
      const row = typeof revision === 'string' ? await loadRevisionById(ctx, revision) : revision;
      if (!row) throw notFound('Revision');
      const tree = await loadTreeOf(ctx, row);
      const versionIds = treeVersionIds(tree);
      const rows = await loadPageVersions(ctx, versionIds, set);
      const versions = new Map<string, PageVersionRow>();
      for (const r of rows) if (r) versions.set(r.id, r);
      const content = buildRevisionContent(row, tree, versions, set === 'full', set !== 'meta');
      return { content, complete: versions.size === new Set(versionIds).size };
    };
    p = set !== 'meta' ? load().then((l) => l.content) : sharedTree(ctx, id, load);
  }
  memo.set(key, p);
  return p;
}

/**
 * A revision's whole page tree (ids and version ids, no page row), once per request: from the
 * tree store (its nodes cached by the process), else the legacy JSON of an older revision.
 */
export function loadTreeOf(ctx: Context, revision: RevisionRow): Promise<TreeNode[]> {
  const memo = treeMemoOf(ctx);
  let p = memo.get(revision.id);
  if (!p) {
    const root = revision.treeRoot;
    // Trees listed in one tick are read together (one statement); an older revision without a root reads its JSON.
    p = root ? loader<string, TreeNode[]>(ctx, 'revision.treeByRoot', async (roots) => {
      const trees = await readTrees(ctx.prisma, [...roots]);
      return roots.map((r) => trees.get(r)!);
    }).load(root) : revisionTree(ctx.prisma, revision);
    memo.set(revision.id, p);
    p.catch(() => memo.delete(revision.id));
  }
  return p;
}

function treeMemoOf(ctx: Context): Map<string, Promise<TreeNode[]>> {
  let memo = ctx.loaders.get('revision.tree') as Map<string, Promise<TreeNode[]>> | undefined;
  if (!memo) ctx.loaders.set('revision.tree', (memo = new Map()));
  return memo;
}

/** The revision's whole tree when this request or this process has it already (no statement). */
export function treeAtHand(ctx: Context, id: string): Promise<RevisionContent> | RevisionContent | undefined {
  const memo = memoOf(ctx);
  return memo.get(`${id}:full`) ?? memo.get(`${id}:links`) ?? memo.get(`${id}:meta`) ?? contentCaches(ctx.config).trees?.get(id);
}

/**
 * One page of a revision as its reader sees it, with what its answer needs and nothing more: the
 * page's row, its ancestors' (path, depth, a reader's conditions) and, with `subtree`, the rows of
 * the pages below it (`pages`, `descendants`). The other pages of the revision are not read; their
 * tree index is (the revision row). When the whole tree is at hand already, the page comes from it.
 */
export async function loadPageContent(ctx: Context, revision: RevisionRow, pageId: string, subtree: boolean): Promise<ContentPage | null> {
  const claims = readerClaimsOf(revision);
  const atHand = treeAtHand(ctx, revision.id);
  let content: RevisionContent;
  if (atHand) {
    content = await atHand;
  } else {
    const tree = await pageTreeAround(ctx, revision, pageId, subtree);
    if (!tree) return null;
    const rows = await loadPageVersions(ctx, treeVersionIds(tree), false);
    const versions = new Map<string, PageVersionRow>();
    for (const r of rows) if (r) versions.set(r.id, r);
    content = buildRevisionContent(revision, tree, versions, false);
  }
  return (claims ? contentForReader(content, claims) : content).byId.get(pageId) ?? null;
}

/**
 * The part of a revision's tree one page's answer needs (`treeAround`): with a stored tree, the
 * page and its ancestors are looked up one by one (each reads only its path in the tree store,
 * none when the nodes are cached); the subtree of a page with children comes from the whole tree
 * (one statement, or none when cached). A revision without a stored tree prunes its JSON.
 */
async function pageTreeAround(ctx: Context, revision: RevisionRow, pageId: string, subtree: boolean): Promise<TreeNode[] | undefined> {
  const root = revision.treeRoot;
  if (!root) return treeAround(await loadTreeOf(ctx, revision), pageId, subtree);
  const entry = (await lookupPages(ctx.prisma, root, [pageId])).get(pageId);
  if (!entry) return undefined;
  if (subtree && (await childPages(ctx.prisma, root, pageId)).length > 0) return treeAround(await loadTreeOf(ctx, revision), pageId, true);
  // The chain of ancestors: a page whose parent is missing (or on a cycle) is shown at the root, as readTree shows it.
  let node: TreeNode = { id: pageId, v: entry.v, pages: [] };
  const seen = new Set([pageId]);
  let parent = entry.parent;
  while (parent && !seen.has(parent)) {
    seen.add(parent);
    const up: TreeEntry | undefined = (await lookupPages(ctx.prisma, root, [parent])).get(parent);
    if (!up) break;
    node = { id: parent, v: up.v, pages: [node] };
    parent = up.parent;
  }
  return [node];
}

/**
 * The pages at a path (`guide/setup`), in tree order, found level by level: per path segment, the
 * siblings of that level (from the tree store: their parent's part of it, and their entries) and
 * one statement returning only those whose slug is that segment (a path with more segments than
 * the tree has levels stops at the first level with no match).
 */
export async function pageIdsAtPath(ctx: Context, revision: RevisionRow, path: string): Promise<string[]> {
  const root = revision.treeRoot;
  // A level: its pages in tree order, with their version ids.
  type Level = Array<{ id: string; v: string; pages?: TreeNode[] }>;
  const childrenOf = async (parents: Level | null): Promise<Level> => {
    if (!root) return parents ? parents.flatMap((n) => n.pages ?? []) : await loadTreeOf(ctx, revision);
    const ids = parents ? (await Promise.all(parents.map((p) => childPages(ctx.prisma, root, p.id)))).flat() : await childPages(ctx.prisma, root, null);
    if (ids.length === 0) return [];
    const entries = await lookupPages(ctx.prisma, root, ids.map((c) => c.pageId));
    return ids.flatMap((c) => {
      const e = entries.get(c.pageId);
      return e ? [{ id: c.pageId, v: e.v }] : [];
    });
  };
  let found: Level | null = null;
  for (const segment of path.split('/')) {
    if (segment === '') return [];
    const level = await childrenOf(found);
    if (level.length === 0) return [];
    const rows = await ctx.prisma.$queryRaw<Array<{ id: string }>>`SELECT id FROM "PageVersion" WHERE id = ANY(${level.map((n) => n.v)}::text[]) AND slug = ${segment}`;
    const matching = new Set(rows.map((r) => r.id));
    found = level.filter((n) => matching.has(n.v));
  }
  return (found ?? []).map((n) => n.id);
}

/**
 * The shared tree of a revision: from the cache, else the load already running for it (its
 * waiters share its outcome, an error too), else a new load. Only a complete tree is stored:
 * a failed load leaves nothing behind, so the next read tries the database again.
 */
export function sharedTree(ctx: Context, id: string, load: () => Promise<{ content: RevisionContent; complete: boolean }>): Promise<RevisionContent> {
  const caches = contentCaches(ctx.config);
  const cached = caches.trees?.get(id);
  if (cached) return Promise.resolve(cached);
  const running = caches.loading.get(id);
  if (running) return running;
  const p = load().then(
    ({ content, complete }) => {
      caches.loading.delete(id);
      if (complete) caches.trees?.set(id, content);
      else ctx.log.warn({ revisionId: id }, 'revision tree with missing page versions: not cached');
      return content;
    },
    (error) => {
      caches.loading.delete(id);
      throw error;
    },
  );
  caches.loading.set(id, p);
  return p;
}

/**
 * Process-wide caches of immutable content, per configuration (so test apps in one process keep
 * their own): page trees (titles, paths, nesting — no bodies) and revision rows by revision id.
 * Revisions are immutable, so an entry never goes stale: a change lands as a new revision id and
 * is visible at once; each instance keeps its own and there is nothing to invalidate.
 * Both are bounded by estimated bytes (`CONTENT_CACHE_MB`: trees ¾, rows ¼), never by count:
 * a 10,000-page tree weighs some 10 MB, a 10-page one a few kB.
 */
export type ContentCaches = {
  trees?: LRUCache<string, RevisionContent>;
  rows?: LRUCache<string, Revision>;
  loading: Map<string, Promise<RevisionContent>>;
};
export const cachesByConfig = new WeakMap<object, ContentCaches>();

export function contentCaches(config: Context['config']): ContentCaches {
  let c = cachesByConfig.get(config);
  if (!c) {
    const bytes = config.contentCacheBytes ?? 64 * 1024 * 1024;
    c = { loading: new Map() };
    if (bytes > 0) {
      c.trees = new LRUCache<string, RevisionContent>({ maxSize: Math.max(1, Math.floor(bytes * 0.75)), sizeCalculation: treeBytes });
      c.rows = new LRUCache<string, Revision>({ maxSize: Math.max(1, Math.floor(bytes * 0.25)), sizeCalculation: revisionRowBytes });
    }
    cachesByConfig.set(config, c);
  }
  return c;
}

// Estimates of V8 heap bytes, calibrated with `node --expose-gc` on 50 trees of 1,000 pages
// (1.15 kB measured per page with 20–30-character ids, titles and slugs): fixed object overhead
// per page plus two bytes per character of its strings (one-byte strings cost less: an
// overestimate). The tree's revision row is counted with it (also in the row cache: counted twice).
export const PAGE_OVERHEAD = 800;
export const strBytes = (s: string | null | undefined) => (s ? 16 + 2 * s.length : 0);
export const jsonBytes = (v: unknown) => (v == null ? 0 : 3 * JSON.stringify(v).length);

export function pageVersionBytes(v: PageVersionRow): number {
  return (
    strBytes(v.id) + strBytes(v.pageId) + strBytes(v.spaceId) + strBytes(v.title) + strBytes(v.slug) + strBytes(v.emoji) + strBytes(v.icon) +
    strBytes(v.description) + strBytes(v.href) + strBytes(v.condition) + jsonBytes(v.layout)
  );
}

export function treeBytes(content: RevisionContent): number {
  let bytes = 1024 + revisionRowBytes(content.revision);
  for (const page of content.ordered) bytes += PAGE_OVERHEAD + strBytes(page.id) + strBytes(page.path) + pageVersionBytes(page.version);
  return bytes;
}

export function revisionRowBytes(row: RevisionRow): number {
  let bytes = 1024 + jsonBytes(row.tree) + strBytes(row.treeRoot) + jsonBytes(row.variables) + jsonBytes(row.reusableContents);
  for (const id of row.fileIds) bytes += 8 + strBytes(id);
  return bytes;
}

export function memoOf(ctx: Context): Map<string, Promise<RevisionContent>> {
  let m = ctx.loaders.get('revision.content') as Map<string, Promise<RevisionContent>> | undefined;
  if (!m) {
    m = new Map();
    ctx.loaders.set('revision.content', m);
  }
  return m;
}

/** Files by id (one statement per tick). */
export const loadFileById = (ctx: Context, id: string): Promise<File | null> =>
  loadById(ctx, 'file.byId', id, (ids) => ctx.prisma.file.findMany({ where: { id: { in: ids } } }));

// `document` is not here: it is stored, and loaded by version id (loadPageDocument).
export const CONTENT_FIELDS = new Set(['markdown', 'links']);

/**
 * Does the field's selection name a field in `names`: anywhere below it (`deep`), or in its own
 * selection only? Fragments are followed once each.
 */
function selectsField(info: GraphQLResolveInfo, names: Set<string>, deep: boolean): boolean {
  const seen = new Set<FragmentDefinitionNode>();
  const walk = (set: SelectionSetNode | undefined): boolean => {
    if (!set) return false;
    for (const sel of set.selections) {
      if (sel.kind === Kind.FIELD) {
        if (names.has(sel.name.value) || (deep && walk(sel.selectionSet))) return true;
      } else if (sel.kind === Kind.INLINE_FRAGMENT) {
        if (walk(sel.selectionSet)) return true;
      } else {
        const f = info.fragments[sel.name.value];
        if (f && !seen.has(f)) {
          seen.add(f);
          if (walk(f.selectionSet)) return true;
        }
      }
    }
    return false;
  };
  return info.fieldNodes.some((n) => walk(n.selectionSet));
}

/** Does the selection under this field ask for page bodies anywhere (at any depth)? */
export const selectsPageContent = (info: GraphQLResolveInfo): boolean => selectsField(info, CONTENT_FIELDS, true);

/** Does the field's own selection (not deeper) name one of `names`? */
export const selectsOwnField = (info: GraphQLResolveInfo, names: Set<string>): boolean => selectsField(info, names, false);
export const SUBTREE_FIELDS = new Set(['pages', 'descendants']);

/**
 * Page content with markdown for a page built without it: this page's body only, batched with
 * the other bodies asked for in the same tick (one statement), never the whole revision's.
 */
export async function withBody(ctx: Context, page: ContentPage): Promise<ContentPage | undefined> {
  if (page.content.withMarkdown) return page;
  const [row] = await loadPageVersions(ctx, [page.version.id], true);
  return row ? { ...page, version: row } : undefined;
}

/**
 * A whole revision's pages with their bodies, when the selection asks for bodies. The bodies one
 * request lists this way are bounded together by `PAGE_LIST_BODIES_MB` (a 400 above it),
 * measured before they load by one statement per tick that reads only their sizes
 * (`octet_length` neither decompresses nor fetches TOASTed values).
 */
export async function pagesWithBodies(ctx: Context, revision: RevisionRow, info: GraphQLResolveInfo): Promise<RevisionContent> {
  if (!selectsPageContent(info)) return readerContent(ctx, revision, { withMarkdown: false });
  // Keyed by revision; the trees come from this request's memo (loadTreeOf), filled before the
  // batch runs, so the revisions listed in one tick are measured by one statement.
  await loadTreeOf(ctx, revision);
  const bytes = await loader<string, number>(ctx, 'revision.bodyBytes', async (ids) => {
    const trees = await Promise.all(ids.map((id) => treeMemoOf(ctx).get(id) ?? Promise.resolve([])));
    const pairs = ids.flatMap((id, i) => treeVersionIds(trees[i]).map((v) => [id, v] as const));
    const rows = pairs.length
      ? await ctx.prisma.$queryRaw<Array<{ id: string; bytes: bigint | number | null }>>(
          Prisma.sql`SELECT x.r AS id, coalesce(sum(octet_length(pv.markdown)), 0)::bigint AS bytes
            FROM unnest(${pairs.map((p) => p[0])}::text[], ${pairs.map((p) => p[1])}::text[]) AS x(r, v) JOIN "PageVersion" pv ON pv.id = x.v GROUP BY x.r`,
        )
      : [];
    const m = new Map(rows.map((r) => [r.id, Number(r.bytes ?? 0)]));
    return ids.map((id) => m.get(id) ?? 0);
  }).load(revision.id);
  requireBodiesFit(ctx, revision.id, bytes);
  return readerContent(ctx, revision, { withMarkdown: true });
}

/**
 * Count `bytes` of bodies under `key` (once per key and request) against the request's total
 * (`PAGE_LIST_BODIES_MB`): a 400 above it, before any body loads.
 */
export function requireBodiesFit(ctx: Context, key: string, bytes: number) {
  const counted = (ctx.loaders.get('revision.bodyBytes.counted') as Map<string, number> | undefined) ?? new Map<string, number>();
  ctx.loaders.set('revision.bodyBytes.counted', counted);
  counted.set(key, bytes);
  const total = [...counted.values()].reduce((a, b) => a + b, 0);
  const max = ctx.config.pageListBodiesMaxBytes;
  if (total > max) {
    const mib = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MiB`;
    throw badRequest('', `The pages' bodies total ${mib(total)}, more than one answer carries (${mib(max)}): list the pages without bodies (GraphQL), or read them one at a time (GET …/content/page/{pageId})`);
  }
}

/**
 * A page's descendants; with bodies selected, their bodies are measured first (one statement,
 * sizes only) and bounded with the request's other listed bodies (`requireBodiesFit`): the page
 * read of a root page nests its whole subtree, bodies included, as the contract's page does.
 */
export async function descendantsWithBodies(ctx: Context, page: ContentPage, info: GraphQLResolveInfo): Promise<ContentPage[]> {
  const pages = descendantsOf(page);
  if (pages.length === 0 || page.content.withMarkdown || !selectsPageContent(info)) return pages;
  const [row] = await ctx.prisma.$queryRaw<Array<{ bytes: bigint | number | null }>>`
    SELECT coalesce(sum(octet_length(markdown)), 0)::bigint AS bytes FROM "PageVersion" WHERE id = ANY(${pages.map((p) => p.version.id)}::text[])`;
  requireBodiesFit(ctx, `${page.content.revision.id}:${page.id}:descendants`, Number(row?.bytes ?? 0));
  return pages;
}

// ------------------------------------------------------------------ a published reader's pages

export const READER_CLAIMS = Symbol('docgraph.readerClaims');

/** The claims a revision row is read with (set by `Space.revision` for published readers). */
export const readerClaimsOf = (revision: RevisionRow): Record<string, unknown> | undefined => (revision as { [READER_CLAIMS]?: Record<string, unknown> })[READER_CLAIMS];

/** The key of the site view a revision row was reached through (`Space.revision` under a filtered site view). */
export const VIEW_KEY = Symbol('docgraph.revisionViewKey');
export const viewKeyOfRevision = (revision: RevisionRow): string | undefined => (revision as { [VIEW_KEY]?: string })[VIEW_KEY];

/**
 * The revision's content as its reader sees it: every page for the editor's view, else only the
 * pages whose conditions the reader's claims pass (src/auth/audience.ts; `contentForReader`).
 */
export async function readerContent(ctx: Context, revision: RevisionRow, opts: { withMarkdown: boolean; links?: boolean }): Promise<RevisionContent> {
  const content = await loadRevisionContent(ctx, revision, opts);
  const claims = readerClaimsOf(revision);
  return claims ? contentForReader(content, claims) : content;
}

/**
 * The claims a space's pages are filtered by: the reader's, for a space reached through a
 * published site (the row carries the reader's view); none for a caller with a role on the space;
 * and for anyone else (a share key, a public space) no claims at all, so conditioned pages are
 * hidden (a missing claim is false).
 */
export async function pageClaimsFor(ctx: Context, space: Space): Promise<Record<string, unknown> | undefined> {
  const view = viewOf(space);
  if (view) return view.claims ?? undefined;
  return (await ctx.access.spaceRole(space)) ? undefined : {};
}

/**
 * A page version's JSON document, stored when it was written (one statement per tick). A version
 * written before documents were stored (until the backfill job reaches it) is parsed in the
 * pool, never on the event loop.
 */
export function loadPageDocument(ctx: Context, versionId: string): Promise<unknown> {
  return loader<string, unknown>(ctx, 'pageVersion.document', async (ids) => {
    const rows = await ctx.prisma.$queryRaw<Array<{ id: string; document: unknown; markdown: string | null }>>`
      SELECT id, document, CASE WHEN document IS NULL THEN markdown END AS markdown FROM "PageVersion" WHERE id = ANY(${[...ids]}::text[])`;
    const byId = new Map(rows.map((r) => [r.id, r]));
    return Promise.all(
      ids.map(async (id) => {
        const r = byId.get(id);
        if (!r) return null;
        return r.document ?? (await parseForRead(r.markdown ?? '')).document;
      }),
    );
  }).load(versionId);
}

