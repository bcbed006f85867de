// Content: the Revision node (page tree, files, links, backlinks), Space.revision, live edits of a
// space's content (extension) and imports.
//
// Batching: revisions load by id through the `revision.byId` loader and page versions through one
// loader per column set (`pageVersion.meta` without markdown, `pageVersion.full` with it), so the
// page trees of any number of spaces cost two statements per request. Use `loadRevisionContent`
// (or `loadRevisionsBatched`) from other areas instead of querying revisions yourself.
import { Kind, type GraphQLResolveInfo, type SelectionSetNode, type FragmentDefinitionNode } from 'graphql';
import { builder } from './builder.ts';
import { baseIdOf, revisionPageId, viewScopedId } from './view-ids.ts';
import { Keyset, keysetConnection } from './cursors.ts';
import { loadById, loader, loadSpaceById } from './common.ts';
import type { Context } from './context.ts';
import { Prisma, type File, type Revision } from '../generated/prisma/client.ts';
import {
  appUrlsOf,
  applySpaceContentChanges,
  buildRevisionContent,
  computeLinks,
  descendantsOf,
  fileBacklinks,
  fileNotInRevision,
  linkStats,
  pageLayout,
  type ContentLink,
  type ContentPage,
  type LinkStatus,
  type PageVersionRow,
  type RevisionContent,
  type RevisionRow,
  contentForReader,
  treeAround,
  treeVersionIds,
} from '../domain/content.ts';
import { viewKeyOf, viewOf } from './sites.ts';
import type { Space } from '../generated/prisma/client.ts';
import type { ChangeOutcome, TreeNode } from '../domain/revisions.ts';
import { classifyLink } from '../lib/markdown.ts';
import { parseForRead } from '../lib/markdown-pool.ts';
import { badRequest, notFound } from '../lib/errors.ts';
import { getImportJob, startImport, waitForImportJob, IMPORT_SOURCES } from '../domain/imports.ts';
import { SpaceRef } from './spaces.ts';
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

const META_COLUMNS = Prisma.raw(
  `id, "pageId", "spaceId", kind::text AS kind, title, slug, emoji, icon, description, href, hidden, "noIndex", "noRobotsIndex", condition, layout, "createdAt", "pageCreatedAt"`,
);
// Links without bodies: the stored links, and the markdown only of versions written before links
// were stored (parsed in the pool, see storedLinks in domain/content.ts).
const LINK_COLUMNS = Prisma.raw(
  `id, "pageId", "spaceId", kind::text AS kind, title, slug, emoji, icon, description, href, hidden, "noIndex", "noRobotsIndex", condition, layout, "createdAt", "pageCreatedAt", links, CASE WHEN links IS NULL THEN markdown END AS markdown`,
);
const FULL_COLUMNS = Prisma.raw(
  `id, "pageId", "spaceId", kind::text AS kind, title, slug, emoji, icon, description, href, hidden, "noIndex", "noRobotsIndex", condition, layout, "createdAt", "pageCreatedAt", markdown, links`,
);

/** Which columns of a page version a read loads: the metadata, plus the stored links, plus the body. */
export type PageColumns = 'meta' | 'links' | 'full';
const COLUMNS: Record<PageColumns, Prisma.Sql> = { meta: META_COLUMNS, links: LINK_COLUMNS, full: FULL_COLUMNS };

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
      const rows = await loadPageVersions(ctx, row.pageVersionIds, set);
      const versions = new Map<string, PageVersionRow>();
      for (const r of rows) if (r) versions.set(r.id, r);
      const content = buildRevisionContent(row, versions, set === 'full', set !== 'meta');
      return { content, complete: versions.size === new Set(row.pageVersionIds).size };
    };
    p = set !== 'meta' ? load().then((l) => l.content) : sharedTree(ctx, id, load);
  }
  memo.set(key, p);
  return p;
}

/** The revision's whole tree when this request or this process has it already (no statement). */
function treeAtHand(ctx: Context, id: string): Promise<RevisionContent> | RevisionContent | undefined {
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
    const tree = treeAround((revision.tree as unknown as TreeNode[]) ?? [], pageId, subtree);
    if (!tree) return null;
    const rows = await loadPageVersions(ctx, treeVersionIds(tree), false);
    const versions = new Map<string, PageVersionRow>();
    for (const r of rows) if (r) versions.set(r.id, r);
    content = buildRevisionContent({ ...revision, tree: tree as unknown as RevisionRow['tree'] }, versions, false);
  }
  return (claims ? contentForReader(content, claims) : content).byId.get(pageId) ?? null;
}

/**
 * The pages at a path (`guide/setup`), in tree order, found level by level: one statement per
 * path segment, each returning only the siblings whose slug is that segment (a path with more
 * segments than the tree has levels stops at the first level with no match).
 */
async function pageIdsAtPath(ctx: Context, revision: RevisionRow, path: string): Promise<string[]> {
  let level = (revision.tree as unknown as TreeNode[]) ?? [];
  let found: TreeNode[] = [];
  for (const segment of path.split('/')) {
    if (level.length === 0 || segment === '') return [];
    const ids = level.map((n) => n.v);
    const rows = await ctx.prisma.$queryRaw<Array<{ id: string }>>`SELECT id FROM "PageVersion" WHERE id = ANY(${ids}::text[]) AND slug = ${segment}`;
    const matching = new Set(rows.map((r) => r.id));
    found = level.filter((n) => matching.has(n.v));
    level = found.flatMap((n) => n.pages);
  }
  return found.map((n) => n.id);
}

/**
 * The shared tree of a revision: from the cache, else the load already running for it (its
 * waiters share its outcome, an error too), else a new load. Only a complete tree is stored:
 * a failed load leaves nothing behind, so the next read tries the database again.
 */
function sharedTree(ctx: Context, id: string, load: () => Promise<{ content: RevisionContent; complete: boolean }>): Promise<RevisionContent> {
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
const cachesByConfig = new WeakMap<object, ContentCaches>();

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
const PAGE_OVERHEAD = 800;
const strBytes = (s: string | null | undefined) => (s ? 16 + 2 * s.length : 0);
const jsonBytes = (v: unknown) => (v == null ? 0 : 3 * JSON.stringify(v).length);

function pageVersionBytes(v: PageVersionRow): number {
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
  let bytes = 1024 + jsonBytes(row.tree) + jsonBytes(row.variables) + jsonBytes(row.reusableContents);
  for (const id of row.pageVersionIds) bytes += 8 + strBytes(id);
  for (const id of row.fileIds) bytes += 8 + strBytes(id);
  return bytes;
}

function memoOf(ctx: Context): Map<string, Promise<RevisionContent>> {
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
const CONTENT_FIELDS = new Set(['markdown', 'links']);

/** Does the selection under this field ask for page bodies anywhere (at any depth)? */
export function selectsPageContent(info: GraphQLResolveInfo): boolean {
  const seen = new Set<FragmentDefinitionNode>();
  const walk = (set: SelectionSetNode | undefined): boolean => {
    if (!set) return false;
    for (const sel of set.selections) {
      if (sel.kind === Kind.FIELD) {
        if (CONTENT_FIELDS.has(sel.name.value) || walk(sel.selectionSet)) return true;
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

/** Does the field's own selection (not deeper) name one of `names`? */
function selectsOwnField(info: GraphQLResolveInfo, names: Set<string>): boolean {
  const seen = new Set<FragmentDefinitionNode>();
  const walk = (set: SelectionSetNode | undefined): boolean => {
    if (!set) return false;
    for (const sel of set.selections) {
      if (sel.kind === Kind.FIELD) {
        if (names.has(sel.name.value)) return true;
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
const SUBTREE_FIELDS = new Set(['pages', 'descendants']);

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
async function pagesWithBodies(ctx: Context, revision: RevisionRow, info: GraphQLResolveInfo): Promise<RevisionContent> {
  if (!selectsPageContent(info)) return readerContent(ctx, revision, { withMarkdown: false });
  const bytes = await loader<string, number>(ctx, 'revision.bodyBytes', async (ids) => {
    const rows = await ctx.prisma.$queryRaw<Array<{ id: string; bytes: bigint | number | null }>>(
      Prisma.sql`SELECT r.id, coalesce(sum(octet_length(pv.markdown)), 0)::bigint AS bytes
        FROM "Revision" r JOIN "PageVersion" pv ON pv.id = ANY(r."pageVersionIds") WHERE r.id = ANY(${[...ids]}::text[]) GROUP BY r.id`,
    );
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
function requireBodiesFit(ctx: Context, key: string, bytes: number) {
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
async function descendantsWithBodies(ctx: Context, page: ContentPage, info: GraphQLResolveInfo): Promise<ContentPage[]> {
  const pages = descendantsOf(page);
  if (pages.length === 0 || page.content.withMarkdown || !selectsPageContent(info)) return pages;
  const [row] = await ctx.prisma.$queryRaw<Array<{ bytes: bigint | number | null }>>`
    SELECT coalesce(sum(octet_length(markdown)), 0)::bigint AS bytes FROM "PageVersion" WHERE id = ANY(${pages.map((p) => p.version.id)}::text[])`;
  requireBodiesFit(ctx, `${page.content.revision.id}:${page.id}:descendants`, Number(row?.bytes ?? 0));
  return pages;
}

// ------------------------------------------------------------------ a published reader's pages

const READER_CLAIMS = Symbol('docgraph.readerClaims');

/** The claims a revision row is read with (set by `Space.revision` for published readers). */
const readerClaimsOf = (revision: RevisionRow): Record<string, unknown> | undefined => (revision as { [READER_CLAIMS]?: Record<string, unknown> })[READER_CLAIMS];

/** The key of the site view a revision row was reached through (`Space.revision` under a filtered site view). */
const VIEW_KEY = Symbol('docgraph.revisionViewKey');
const viewKeyOfRevision = (revision: RevisionRow): string | undefined => (revision as { [VIEW_KEY]?: string })[VIEW_KEY];

/**
 * The revision's content as its reader sees it: every page for the editor's view, else only the
 * pages whose conditions the reader's claims pass (src/auth/audience.ts; `contentForReader`).
 */
async function readerContent(ctx: Context, revision: RevisionRow, opts: { withMarkdown: boolean; links?: boolean }): Promise<RevisionContent> {
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
async function pageClaimsFor(ctx: Context, space: Space): Promise<Record<string, unknown> | undefined> {
  const view = viewOf(space);
  if (view) return view.claims ?? undefined;
  return (await ctx.access.spaceRole(space)) ? undefined : {};
}

/**
 * A page version's JSON document, stored when it was written (one statement per tick). A version
 * written before documents were stored (until the backfill job reaches it) is parsed in the
 * pool, never on the event loop.
 */
function loadPageDocument(ctx: Context, versionId: string): Promise<unknown> {
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

// ------------------------------------------------------------------ keyset pages over derived lists

type PageArgs = { first?: number | null; after?: string | null; last?: number | null; before?: string | null };

/** A connection over a derived list, by `keyOf` ascending (keyset cursors: stable under inserts and deletes). */
function keyedConnection<T>(list: string, items: T[], keyOf: (item: T) => string, args: PageArgs, extra: Record<string, unknown> = {}) {
  const page = new Keyset(list, args, { defaultSize: 100 });
  const rows = page.array(items, [['key', 'asc']], (item) => [keyOf(item)]);
  return { ...page.connection(rows, items.length), ...extra };
}

// ------------------------------------------------------------------ enums and small types

export const RevisionTypeEnum = builder.enumType('RevisionType', {
  description: 'How a revision came to be.',
  values: {
    edits: { description: 'Content edits (a change batch, an import, or edits in a change request).' },
    merge: { description: 'The merge of a change request into the space (see `mergedFrom`).' },
    rollback: { description: 'A return to the content of an earlier revision (a contract value; this server does not write such revisions).' },
    update: { description: 'An update of a change request from main.' },
    computed: { description: 'Content generated from a computed source (a contract value; this server does not write such revisions).' },
  } as const,
});
export const PageTypeEnum = builder.enumType('RevisionPageType', {
  description: 'Kind of page in the page tree.',
  values: {
    document: { description: 'A page with content (markdown / document).' },
    group: { description: 'A heading grouping its child pages, without content of its own.' },
    link: { description: 'A navigation entry pointing elsewhere (`href`, `target`).' },
    computed: { description: 'A page generated from a computed source (a contract value; not created by this server).' },
  } as const,
});
export const LinkStatusEnum = builder.enumType('ContentLinkStatus', {
  description: '`ok`: no problem; `broken`: the target does not exist in the revision; `in_app` (REST `in-app`): a URL into this app.',
  values: {
    ok: { description: 'The target exists.' },
    broken: { description: 'The target page or file does not exist in the revision.' },
    in_app: { description: 'A URL into this app rather than a content reference (REST `in-app`).' },
  } as const,
});
export const LinkRelationEnum = builder.enumType('ContentLinkRelation', {
  description: '`reference`: a link; `dependsOn`: the page embeds or depends on the target (files).',
  values: {
    reference: { description: 'A link to the target.' },
    dependsOn: { description: 'The page embeds or depends on the target (images, files).' },
  } as const,
});

const RevisionUrls = builder.simpleObject('RevisionUrls', {
  description: 'Addresses of a revision.',
  fields: (t) => ({
    app: t.string({ description: 'The revision in the web app.' }),
    published: t.string({ nullable: true, description: 'Where readers see the space; null when it is private.' }),
    public: t.string({ nullable: true, description: 'The space’s public address; null unless its visibility is `public`.' }),
  }),
});
const PageUrls = builder.simpleObject('RevisionPageUrls', {
  description: 'Addresses of a page.',
  fields: (t) => ({ app: t.string({ description: 'The page in the web app.' }) }),
});
const FileDimensions = builder.simpleObject('FileDimensions', {
  description: 'Size of an image, in pixels.',
  fields: (t) => ({ width: t.int({ description: 'Width in pixels.' }), height: t.int({ description: 'Height in pixels.' }) }),
});
const LinkStats = builder.simpleObject('ContentLinkStats', {
  description: 'Counts over a link listing.',
  fields: (t) => ({
    total: t.int({ description: 'Links (distinct targets) in the listing before the status filter.' }),
    broken: t.int({ description: 'Broken ones among them.' }),
  }),
});

// ------------------------------------------------------------------ File

export const FileRef = builder.prismaNode('File', {
  id: { field: 'id' },
  description: 'An uploaded file (image or attachment) of a space; revisions list the files they contain.',
  // node(id:) answers only for files of spaces the caller may read.
  findUnique: async (id, ctx) => {
    const file = await loadFileById(ctx, id);
    const space = file ? await loadSpaceById(ctx, file.spaceId) : null;
    const visible = space && !space.deletedAt ? await ctx.access.spaceRole(space) : null;
    return { id: visible ? id : '' };
  },
  fields: (t) => ({
    name: t.exposeString('name'),
    contentType: t.exposeString('contentType'),
    size: t.exposeInt('size'),
    spaceId: t.exposeString('spaceId'),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    dimensions: t.field({
      type: FileDimensions,
      nullable: true,
      description: 'For images: width and height in pixels.',
      resolve: (f) => (f.width != null && f.height != null ? { width: f.width, height: f.height } : null),
    }),
    downloadURL: t.string({
      description: 'Where the bytes are served (with the same bearer token; access is checked).',
      resolve: (f, _a, ctx) => `${ctx.config.publicUrl}/files/${f.id}`,
    }),
  }),
});

// ------------------------------------------------------------------ RevisionPage

export const RevisionPageRef = builder.objectRef<ContentPage>('RevisionPage');

/** The content reference of a link page (`target` in the contract). */
export function linkPageTarget(href: string | null | undefined): Record<string, unknown> | null {
  if (!href) return null;
  const c = classifyLink(href);
  const ref = /^\/(pages|files)\/([^/]+)$/.exec(href);
  if (ref) return ref[1] === 'pages' ? { kind: 'page', page: ref[2] } : { kind: 'file', file: ref[2] };
  if (c?.kind === 'file') return { kind: 'file', file: c.target };
  if (c?.kind === 'page' && /^page:/i.test(href)) return { kind: 'page', page: c.target };
  return { kind: 'url', url: href };
}


RevisionPageRef.implement({
  description: 'A page of a revision: a document, a group of pages or a link. Nest `pages` as deep as you need.',
  fields: (t) => ({
    // Revision-scoped (a page differs from one revision to the next, and between a reader's
    // filtered view and the full tree): `rpg_<revisionId>_<pageId>`, plus a view key for readers.
    id: t.string({
      description:
        'This page as read in this revision: `rpg_<revisionId>_<pageId>` (with `~<view>` when read through a filtered view, e.g. a visitor). Unique per revision and view, so client caches keep the same page of two revisions apart. The stable page id is `pageId`.',
      resolve: (p) => revisionPageId(p.content.revision.id, p.id, p.content.reader?.claims),
    }),
    pageId: t.string({ description: 'Page id (`page_…`), stable across revisions: what `Revision.page(id:)`, `parentId` and REST use.', resolve: (p) => p.id }),
    title: t.string({ description: 'Page title.', resolve: (p) => p.version.title }),
    emoji: t.string({ nullable: true, description: 'Page emoji; null when none.', resolve: (p) => p.version.emoji }),
    icon: t.string({ nullable: true, description: 'Page icon name or URL; null when none.', resolve: (p) => p.version.icon }),
    type: t.field({ type: PageTypeEnum, description: 'Kind of page.', resolve: (p) => p.version.kind }),
    slug: t.string({ description: 'Last path segment of the page, e.g. `setup`.', resolve: (p) => p.version.slug }),
    path: t.string({ description: 'Slug chain from the root, e.g. `guide/setup`.', resolve: (p) => p.path }),
    description: t.string({ nullable: true, description: 'Short summary shown under the title; null when none.', resolve: (p) => p.version.description }),
    parentId: t.string({ nullable: true, description: 'Page id (`page_…`, the parent\'s `pageId`) of the parent page; null at the root.', resolve: (p) => p.parentId }),
    depth: t.int({ description: '0 at the root.', resolve: (p) => p.depth }),
    revisionId: t.string({ description: 'The revision this page was read from.', resolve: (p) => p.content.revision.id }),
    versionId: t.string({ description: 'Id of this immutable page version (shared between revisions).', resolve: (p) => p.version.id }),
    markdown: t.string({
      nullable: true,
      description: 'Body of a document page, as markdown (the stored form); null for groups and links.',
      resolve: async (p, _a, ctx) => (p.version.kind === 'document' ? ((await withBody(ctx, p))?.version.markdown ?? '') : null),
    }),
    document: t.field({
      type: 'JSON',
      nullable: true,
      description: 'Body of a document page as a JSON document (converted from markdown); null for groups and links.',
      resolve: (p, _a, ctx) => (p.version.kind === 'document' ? loadPageDocument(ctx, p.version.id) : null),
    }),
    href: t.string({ nullable: true, description: 'Target of a link page.', resolve: (p) => p.version.href }),
    target: t.field({ type: 'JSON', nullable: true, description: 'Content reference of a link page.', resolve: (p) => (p.version.kind === 'link' ? linkPageTarget(p.version.href) : null) }),
    hidden: t.boolean({ description: 'Not shown in the navigation, still reachable.', resolve: (p) => p.version.hidden }),
    noIndex: t.boolean({ description: 'Not indexed by search and ask.', resolve: (p) => p.version.noIndex }),
    noRobotsIndex: t.boolean({ description: 'Not indexed by search-engine robots.', resolve: (p) => p.version.noRobotsIndex }),
    condition: t.string({
      nullable: true,
      description: 'Adaptive-content condition deciding whether a visitor sees the page (null for published readers, who get only the pages their claims open).',
      resolve: (p) => (p.content.reader ? null : p.version.condition),
    }),
    layout: t.field({ type: 'JSON', nullable: true, description: 'Layout options of a document page.', resolve: (p) => (p.version.kind === 'document' ? pageLayout(p.version) : null) }),
    createdAt: t.field({ type: 'DateTime', description: 'When the page first appeared.', resolve: (p) => p.version.pageCreatedAt }),
    updatedAt: t.field({ type: 'DateTime', description: 'When this version of the page was written.', resolve: (p) => p.version.createdAt }),
    urls: t.field({
      type: PageUrls,
      description: 'Its app address.',
      resolve: (p, _a, ctx) => ({ app: `${ctx.config.appUrl}/s/${p.content.revision.spaceId}/${p.path}` }),
    }),
    pages: t.field({
      type: [RevisionPageRef],
      description: 'Child pages, in order.',
      complexity: { field: 1, multiplier: 1 },
      resolve: (p) => p.children,
    }),
    descendants: t.field({
      type: [RevisionPageRef],
      description: 'Every page below this one, pre-order (parents first). With bodies selected, bounded by the server\'s PAGE_LIST_BODIES_MB (a BAD_REQUEST above it).',
      resolve: (p, _a, ctx, info) => descendantsWithBodies(ctx, p, info),
    }),
    links: t.connection(
      {
        type: ContentLinkRef,
        description: 'Links found in this page, one per target.',
        args: { status: t.arg({ type: LinkStatusEnum, description: 'Only links with this status.' }) },
        // The whole tree resolves the targets (no bodies); only this page's links are read.
        resolve: async (p, args, ctx) => {
          const tree = await loadRevisionContent(ctx, p.content.revision.id, { withMarkdown: false });
          const page = tree.byId.get(p.id);
          const own = page ? await withBody(ctx, page) : undefined;
          return linkConnection(ctx, tree, args, p.id, own);
        },
      },
      ContentLinkConnection,
    ),
  }),
});

// ------------------------------------------------------------------ links

type LinkNode = ContentLink & { content: RevisionContent };

export const ContentLinkTargetRef = builder.objectRef<LinkNode>('ContentLinkTarget').implement({
  description: 'What a link points at. `page`/`file` are set when the target exists in the revision.',
  fields: (t) => ({
    kind: t.string({ description: '`url`, `page` or `file`.', resolve: (l) => l.target.kind }),
    raw: t.string({ description: 'The link as written in the markdown.', resolve: (l) => l.target.raw }),
    url: t.string({ nullable: true, description: 'The URL, for `url` targets; else null.', resolve: (l) => (l.target.kind === 'url' ? l.target.url : null) }),
    pageId: t.string({ nullable: true, description: 'The page id, for `page` targets; else null.', resolve: (l) => (l.target.kind === 'page' ? (l.target.pageId ?? null) : null) }),
    fileId: t.string({ nullable: true, description: 'The file id, for `file` targets; else null.', resolve: (l) => (l.target.kind === 'file' ? l.target.fileId : null) }),
    page: t.field({
      type: RevisionPageRef,
      nullable: true,
      description: 'The target page; null when not a page target or the page does not exist.',
      resolve: (l) => (l.target.kind === 'page' && l.target.pageId ? (l.content.byId.get(l.target.pageId) ?? null) : null),
    }),
    file: t.field({
      type: FileRef,
      nullable: true,
      description: 'The target file; null when not a file target or the file is not in the revision.',
      resolve: (l, _a, ctx) => (l.target.kind === 'file' && l.content.fileIds.has(l.target.fileId) ? loadFileById(ctx, l.target.fileId) : null),
    }),
  }),
});

export const ContentLinkRef = builder.objectRef<LinkNode>('ContentLink').implement({
  description: 'A link target and the pages where links to it are found.',
  fields: (t) => ({
    status: t.field({ type: LinkStatusEnum, description: 'Whether the target resolves.', resolve: (l) => l.status }),
    relation: t.field({ type: LinkRelationEnum, description: 'Link or dependency.', resolve: (l) => l.relation }),
    target: t.field({ type: ContentLinkTargetRef, description: 'What the link points to.', resolve: (l) => l }),
    locations: t.field({
      type: [RevisionPageRef],
      description: 'Pages of the revision that link to the target, in tree order.',
      // Priced like one page: a listing of 1,000 links must stay under the cost limit.
      complexity: { field: 1, multiplier: 1 },
      resolve: (l) => l.locationPageIds.map((id) => l.content.byId.get(id)!).filter(Boolean),
    }),
  }),
});

export const ContentLinkConnection = builder.connectionObject({
  type: ContentLinkRef,
  name: 'ContentLinkConnection',
  fields: (c) => ({
    totalCount: c.int({ description: 'Links matching the status filter.', resolve: (p) => (p as unknown as { totalCount: number }).totalCount }),
    stats: c.field({ type: LinkStats, description: 'Counts over every link of the revision (or page), whatever the status filter: all, and broken ones.', resolve: (p) => (p as unknown as { stats: { total: number; broken: number } }).stats }),
  }),
});

async function linkConnection(ctx: Context, content: RevisionContent, args: PageArgs & { status?: string | null }, pageId?: string, page?: ContentPage) {
  const list = pageId ? 'RevisionPage.links' : 'Revision.links';
  const all = pageId && !page ? [] : await computeLinks(content, { appUrls: appUrlsOf(ctx), pageId, page });
  const status = (args.status ?? undefined) as LinkStatus | undefined;
  const items: LinkNode[] = (status ? all.filter((l) => l.status === status) : all).map((l) => ({ ...l, content }));
  const stats = linkStats(all);
  return keyedConnection(list, items, (l) => l.key, args, { stats: { total: stats.total, broken: stats.broken.total } }) as never;
}

// ------------------------------------------------------------------ Revision

export const RevisionRef = builder.prismaNode('Revision', {
  // One object, one id: under a filtered view of a site its pages differ, so it answers `rev_…~<view>` there.
  id: {
    description: 'This revision as read here: `rev_…`, or `rev_…~<view>` when reached through a filtered view of a site (its space\'s `id` has the same view), whose pages differ, so client caches keep the views apart. The revision itself is `revisionId`.',
    resolve: (r) => viewScopedId(r.id, viewKeyOfRevision(r)),
  },
  description: 'An immutable snapshot of a space\'s content: page tree, files, reusable content and variables.',
  // node(id:) answers only for revisions of spaces the caller may read; a view-scoped id names the revision.
  findUnique: async (raw, ctx) => {
    const id = baseIdOf(raw);
    const rev = await loadRevisionById(ctx, id);
    const space = rev ? await loadSpaceById(ctx, rev.spaceId) : null;
    const visible = space && !space.deletedAt ? await ctx.access.spaceRole(space) : null;
    return { id: visible ? id : '' };
  },
  fields: (t) => ({
    revisionId: t.exposeString('id', { description: 'The revision id (`rev_…`), the same wherever it is read.' }),
    parents: t.exposeStringList('parents', { description: 'Ids of the parent revisions.' }),
    type: t.expose('type', { type: RevisionTypeEnum }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    spaceId: t.exposeString('spaceId'),
    space: t.relation('space'),
    changeRequestId: t.exposeString('changeRequestId', { nullable: true, description: 'Set on revisions written inside a change request.' }),
    variables: t.field({ type: 'JSON', description: 'Space variables at this revision, an object of name → value (`{}` when none).', resolve: (r) => r.variables ?? {} }),
    reusableContents: t.field({ type: 'JSON', description: 'Reusable content blocks at this revision, a list (`[]` when none).', resolve: (r) => r.reusableContents ?? [] }),
    urls: t.field({
      type: RevisionUrls,
      description: 'App and published addresses.',
      resolve: async (r, _a, ctx) => {
        const space = await loadSpaceById(ctx, r.spaceId);
        return {
          app: `${ctx.config.appUrl}/s/${r.spaceId}/~/revisions/${r.id}`,
          published: space && space.visibility !== 'private' ? `${ctx.config.publicUrl}/s/${r.spaceId}` : null,
          public: space?.visibility === 'public' ? `${ctx.config.publicUrl}/s/${r.spaceId}` : null,
        };
      },
    }),
    pages: t.field({
      type: [RevisionPageRef],
      description: 'Root pages, in order; nest `pages` to go deeper.',
      resolve: async (r, _a, ctx, info) => (await pagesWithBodies(ctx, r, info)).roots,
    }),
    allPages: t.field({
      type: [RevisionPageRef],
      description: 'Every page, pre-order (parents before children), with `parentId` and `depth`.',
      resolve: async (r, _a, ctx, info) => (await pagesWithBodies(ctx, r, info)).ordered,
    }),
    page: t.field({
      type: RevisionPageRef,
      nullable: true,
      description: 'A page by its page id (`pageId`, `page_…`, not the revision-scoped `id`); null when not in this revision. REST: GET /v1/spaces/{spaceId}/content/page/{pageId}.',
      args: { id: t.arg.string({ required: true, description: 'Page id (`page_…`, a page\'s `pageId`).' }) },
      // This page's row, its ancestors' and (when `pages`/`descendants` are selected) its subtree's;
      // a selected body loads for those pages only.
      resolve: (r, { id }, ctx, info) => loadPageContent(ctx, r, id, selectsOwnField(info, SUBTREE_FIELDS)),
    }),
    pageByPath: t.field({
      type: RevisionPageRef,
      nullable: true,
      description: 'A page by path (e.g. `guide/setup`; leading and trailing slashes ignored); null when none.',
      args: { path: t.arg.string({ required: true, description: 'Slug chain from the root.' }) },
      resolve: async (r, { path }, ctx, info) => {
        const wanted = path.replace(/^\/+|\/+$/g, '');
        const atHand = treeAtHand(ctx, r.id);
        if (atHand) {
          const claims = readerClaimsOf(r);
          const content = claims ? contentForReader(await atHand, claims) : await atHand;
          const id = content.byPath.get(wanted);
          return id ? (content.byId.get(id) ?? null) : null;
        }
        // The first page at that path the reader may see (as the whole tree's byPath answers).
        const subtree = selectsOwnField(info, SUBTREE_FIELDS);
        for (const id of await pageIdsAtPath(ctx, r, wanted)) {
          const page = await loadPageContent(ctx, r, id, subtree);
          if (page) return page;
        }
        return null;
      },
    }),
    files: keysetConnection(t, {
      type: FileRef,
      list: 'Revision.files',
      description: 'Files of the revision.',
      resolve: (page, r, _a, ctx) => ctx.prisma.file.findMany(page.prisma({ where: { id: { in: r.fileIds } }, orderBy: { id: 'asc' } }) as never),
      totalCount: (r) => r.fileIds.length,
    }),
    allFiles: t.field({
      type: [FileRef],
      description: 'Every file of the revision (the REST Revision representation); prefer `files` for paging.',
      resolve: async (r, _a, ctx) => (await Promise.all(r.fileIds.map((id) => loadFileById(ctx, id)))).filter((f): f is File => !!f),
    }),
    file: t.field({
      type: FileRef,
      nullable: true,
      description: 'A file by id; null when not in this revision. REST: GET /v1/spaces/{spaceId}/content/files/{fileId}.',
      args: { id: t.arg.string({ required: true, description: 'File id (`file_…`).' }) },
      resolve: (r, { id }, ctx) => (r.fileIds.includes(id) ? loadFileById(ctx, id) : null),
    }),
    links: t.connection(
      {
        type: ContentLinkRef,
        description: 'Every link of the revision\'s pages, one per target, sorted by target.',
        args: { status: t.arg({ type: LinkStatusEnum, description: 'Only links with this status.' }) },
        resolve: async (r, args, ctx) => linkConnection(ctx, await readerContent(ctx, r, { withMarkdown: false, links: true }), args),
      },
      ContentLinkConnection,
    ),
    fileBacklinks: t.connection(
      {
        type: RevisionPageRef,
        description: 'Pages of the revision that reference a file (links and images). NOT_FOUND when the file is not in the revision.',
        args: { fileId: t.arg.string({ required: true, description: 'File id (`file_…`).' }) },
        resolve: async (r, args, ctx) => {
          if (!r.fileIds.includes(args.fileId)) throw fileNotInRevision(args.fileId);
          const content = await readerContent(ctx, r, { withMarkdown: false, links: true });
          const pages = (await fileBacklinks(content, args.fileId)).sort((a, b) => (a.id < b.id ? -1 : 1));
          return keyedConnection('Revision.fileBacklinks', pages, (p) => p.id, args) as never;
        },
      },
      {
        name: 'RevisionPageConnection',
        fields: (c) => ({ totalCount: c.int({ description: 'Pages in the revision (REST `count`).', resolve: (p) => (p as unknown as { totalCount: number }).totalCount }) }),
      },
    ),
  }),
});

builder.prismaObjectField('Space', 'revision', (t) =>
  t.field({
    type: RevisionRef,
    description: 'The current revision (the content readers see).',
    resolve: async (s, _a, ctx) => {
      const rev = s.revisionId ? await loadRevisionById(ctx, s.revisionId) : null;
      if (!rev) throw notFound('Revision');
      const claims = await pageClaimsFor(ctx, s);
      const key = viewKeyOf(viewOf(s));
      if (!claims && !key) return rev;
      // A copy carrying the reader's claims and view: the cached row is shared by every request.
      const copy = { ...rev };
      if (claims) Object.defineProperty(copy, READER_CLAIMS, { value: claims, enumerable: false });
      if (key) Object.defineProperty(copy, VIEW_KEY, { value: key, enumerable: false });
      return copy;
    },
  }),
);

builder.queryField('revision', (t) =>
  t.field({
    type: RevisionRef,
    nullable: true,
    description: 'A revision of a space you may read (null otherwise). No REST twin (REST reads content through the space or change request).',
    args: { id: t.arg.id({ required: true, description: 'Revision id (`rev_…`).' }) },
    resolve: async (_r, { id }, ctx) => {
      ctx.access.requireViewer();
      const rev = await loadRevisionById(ctx, String(id));
      const space = rev ? await loadSpaceById(ctx, rev.spaceId) : null;
      const visible = space && !space.deletedAt ? await ctx.access.spaceRole(space) : null;
      return visible ? rev : null;
    },
  }),
);

// ------------------------------------------------------------------ live edits (extension)

type OutcomeShape = { outcome: ChangeOutcome; spaceId: string; revisionId: string; changeRequestId?: string | null };

export const ContentChangeOutcomeRef = builder.objectRef<OutcomeShape>('ContentChangeOutcome').implement({
  description: 'One affected page of a content-change batch (deduplicated, in the order first touched).',
  fields: (t) => ({
    object: t.string({ description: '`created_page`, `updated_page` or `deleted_page`.', resolve: (o) => o.outcome.object }),
    pageId: t.string({ description: 'The page created, updated or deleted.', resolve: (o) => o.outcome.pageId }),
    ref: t.string({ nullable: true, description: 'The batch-local ref of an inserted page.', resolve: (o) => (o.outcome.object === 'created_page' ? (o.outcome.ref ?? null) : null) }),
    location: t.string({
      nullable: true,
      description: 'API URL of the page content (null for deleted pages).',
      resolve: (o, _a, ctx) =>
        o.outcome.object === 'deleted_page'
          ? null
          : o.changeRequestId
            ? `${ctx.config.publicUrl}/v1/spaces/${o.spaceId}/change-requests/${o.changeRequestId}/content/page/${o.outcome.pageId}`
            : `${ctx.config.publicUrl}/v1/spaces/${o.spaceId}/content/page/${o.outcome.pageId}`,
    }),
    page: t.field({
      type: RevisionPageRef,
      nullable: true,
      description: 'The page in the new revision (null for deleted pages).',
      resolve: async (o, _a, ctx, info) => {
        const revision = await loadRevisionById(ctx, o.revisionId);
        return revision ? loadPageContent(ctx, revision, o.outcome.pageId, selectsOwnField(info, SUBTREE_FIELDS)) : null;
      },
    }),
  }),
});

const ApplySpaceContentChangesPayload = builder.simpleObject('ApplySpaceContentChangesPayload', {
  description: 'Result of applySpaceContentChanges.',
  fields: (t) => ({
    space: t.field({ type: SpaceRef, description: 'The space, now at the new revision.' }),
    revision: t.field({ type: RevisionRef, description: 'The revision the batch created; the current one when it changed nothing.' }),
    changed: t.boolean({ description: 'False when the batch changed nothing: no revision was written and the space did not move.' }),
    changes: t.field({ type: [ContentChangeOutcomeRef], description: 'One outcome per change, in the order sent.' }),
    insertedFiles: t.field({ type: [FileRef], description: 'Files created by insert_files changes.' }),
  }),
});

builder.mutationField('applySpaceContentChanges', (t) =>
  t.field({
    type: ApplySpaceContentChangesPayload,
    description:
      'Extension: apply a content-change batch (1–50 of insert_page, update_page, delete_page, revert_page, insert_files) straight to a live space, as one new revision. REST: POST /v1/spaces/{spaceId}/content.',
    args: {
      input: t.arg({
        description: 'The space and the batch.',
        type: builder.inputType('ApplySpaceContentChangesInput', {
          description: 'The space and the batch of changes.',
          fields: (f) => ({
            spaceId: f.id({ required: true, description: 'Space (`space_…`); needs the edit role and an unlocked space.' }),
            changes: f.field({ type: 'JSON', required: true, description: 'The batch, as in POST …/change-requests/{id}/content.' }),
          }),
        }),
        required: true,
      }),
    },
    resolve: async (_r, { input }, ctx) => {
      const result = await applySpaceContentChanges(ctx, String(input.spaceId), input.changes);
      const files = await ctx.prisma.file.findMany({ where: { id: { in: result.insertedFiles.map((f) => f.id) } } });
      const byId = new Map(files.map((f) => [f.id, f]));
      const space = await ctx.prisma.space.findUniqueOrThrow({ where: { id: result.spaceId } });
      return {
        space,
        revision: result.revision,
        changed: result.changed,
        changes: result.outcomes.map((outcome) => ({ outcome, spaceId: result.spaceId, revisionId: result.revision.id })),
        insertedFiles: result.insertedFiles.map((f) => byId.get(f.id)!).filter(Boolean),
      };
    },
  }),
);

// ------------------------------------------------------------------ imports

export const ImportJobStateEnum = builder.enumType('ImportJobState', {
  description: 'Progress of an import job.',
  values: {
    pending: { description: 'Queued, not started.' },
    running: { description: 'Fetching and converting the content.' },
    complete: { description: 'Done: the pages were written (see revision).' },
    failed: { description: 'Gave up (see error); nothing was written.' },
  } as const,
});
export const ImportContentSourceEnum = builder.enumType('ImportContentSource', {
  description: 'What kind of content an import URL serves. REST writes `github_wiki` as `github-wiki`, and so on.',
  values: {
    website: { description: 'A website, crawled from the URL.' },
    docx: { description: 'A Word document.' },
    markdown: { description: 'A markdown file.' },
    html: { description: 'An HTML page.' },
    zip: { description: 'A zip archive of markdown or HTML files.' },
    confluence: { description: 'A Confluence export.' },
    github_wiki: { description: 'A GitHub wiki.' },
    notion: { description: 'A Notion export.' },
    google_docs: { description: 'A Google Docs document.' },
  } as const satisfies Record<string, { description: string }>,
});

const ImportJobUrls = builder.simpleObject('ImportJobUrls', {
  description: 'Addresses of an import job.',
  fields: (t) => ({ location: t.string({ description: 'The job in the REST API (GET /v1/org/{organizationId}/imports/{importRunId}, an import run).' }) }),
});

/** The REST address of an import job: the import run of the newer contract. */
export const importRunLocation = (publicUrl: string, organizationId: string, jobId: string) => `${publicUrl}/v1/org/${organizationId}/imports/${jobId}`;

export const ImportJobRef = builder.prismaNode('ImportJob', {
  id: { field: 'id' },
  description: 'A background import of external content into a space (or a change request).',
  findUnique: async (id, ctx) => {
    try {
      await getImportJob(ctx, id);
      return { id };
    } catch {
      return { id: '' };
    }
  },
  fields: (t) => ({
    state: t.expose('state', { type: ImportJobStateEnum }),
    url: t.exposeString('url'),
    source: t.string({ description: 'Kind of content imported, as REST writes it (`github-wiki`, `markdown`…).', resolve: (j) => j.source }),
    spaceId: t.exposeString('spaceId'),
    organizationId: t.string({ description: 'The organization of the space.', select: { space: { select: { organizationId: true } } }, resolve: (j) => j.space.organizationId }),
    changeRequestId: t.exposeString('changeRequestId', { nullable: true }),
    urls: t.field({
      type: ImportJobUrls,
      description: 'Addresses of the job: poll `location` (REST) or `importJob(id:)` while it is pending or running.',
      select: { space: { select: { organizationId: true } } },
      resolve: (j, _a, ctx) => ({ location: importRunLocation(ctx.config.publicUrl, j.space.organizationId, j.id) }),
    }),
    error: t.exposeString('error', { nullable: true, description: 'Why a failed import failed.' }),
    revisionId: t.exposeString('revisionId', { nullable: true, description: 'The revision the import wrote (when complete).' }),
    revision: t.field({ type: RevisionRef, nullable: true, description: 'The revision the import wrote; null until complete.', resolve: (j, _a, ctx) => (j.revisionId ? loadRevisionById(ctx, j.revisionId) : null) }),
    importedResources: t.exposeInt('importedResources'),
    totalResources: t.exposeInt('totalResources'),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    finishedAt: t.expose('finishedAt', { type: 'DateTime', nullable: true }),
  }),
});

builder.queryField('importJob', (t) =>
  t.prismaField({
    type: 'ImportJob',
    nullable: true,
    description: 'An import job of a space you may edit; poll it until `complete` or `failed`. REST: GET /v1/org/{organizationId}/imports/{importRunId}.',
    args: { id: t.arg.id({ required: true, description: 'Import job id (`imp_…`).' }) },
    resolve: async (query, _r, { id }, ctx) => {
      await getImportJob(ctx, String(id));
      return ctx.prisma.importJob.findUniqueOrThrow({ ...query, where: { id: String(id) } });
    },
  }),
);

const ImportSpaceContentPayload = builder.simpleObject('ImportSpaceContentPayload', {
  description: 'Result of importSpaceContent.',
  fields: (t) => ({
    importJob: t.field({ type: ImportJobRef, description: 'The import job; poll `importJob(id:)` while it is pending or running.' }),
    revision: t.field({ type: RevisionRef, description: 'The revision the import wrote when it finished in time, else the current one.' }),
  }),
});

builder.mutationField('importSpaceContent', (t) =>
  t.field({
    type: ImportSpaceContentPayload,
    description:
      'Import a URL (markdown, zip, html, website, docx…) into a space as new pages, in a background job. With `waitSeconds` (max 20, and at most the server setting IMPORT_WAIT_SECONDS) the call waits for the job; REST waits IMPORT_WAIT_SECONDS (20 s), then answers 202 with the job to poll. Needs the edit role. REST: POST /v1/spaces/{spaceId}/content/import.',
    args: {
      input: t.arg({
        description: 'The space and what to import.',
        type: builder.inputType('ImportSpaceContentInput', {
          description: 'The space and what to import.',
          fields: (f) => ({
            spaceId: f.id({ required: true, description: 'Space (`space_…`).' }),
            changeRequestId: f.id({ description: 'Import into this change request instead of the space content.' }),
            url: f.string({ required: true, description: 'Public http(s) URL of the content to import.' }),
            source: f.field({ type: ImportContentSourceEnum, required: true, description: 'What kind of content the URL serves.' }),
            waitSeconds: f.int({ description: 'Wait up to this many seconds (0–20) for the job to finish.' }),
          }),
        }),
        required: true,
      }),
    },
    resolve: async (_r, { input }, ctx) => {
      const asked = input.waitSeconds ?? 0;
      if (asked < 0 || asked > 20) throw badRequest('waitSeconds', 'must be between 0 and 20');
      const wait = Math.min(asked, ctx.config.imports.waitSeconds);
      const job = await startImport(ctx, { spaceId: String(input.spaceId), changeRequestId: input.changeRequestId ? String(input.changeRequestId) : undefined }, {
        url: input.url,
        source: input.source,
      });
      const done = wait > 0 ? await waitForImportJob(ctx, job.id, wait * 1000) : job;
      const revisionId = done.revisionId ?? job.baseRevisionId;
      const revision = await loadRevisionById(ctx, revisionId);
      return { importJob: done, revision: revision! };
    },
  }),
);
