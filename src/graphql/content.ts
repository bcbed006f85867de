// Content: the Revision node (page tree, files, links, backlinks), Space.revision and live edits of a
// space's content (extension). Imports are graphql/imports.ts.
//
// Batching: revisions load by id through the `revision.byId` loader and page versions through one
// loader per column set (`pageVersion.meta` without markdown, `pageVersion.full` with it), so the
// page trees of any number of spaces cost two statements per request. Use `loadRevisionContent`
// (or `loadRevisionsBatched`) from other areas instead of querying revisions yourself.
import { builder } from './builder.ts';
import { baseIdOf, revisionPageId, viewScopedId } from './view-ids.ts';
import { Keyset, keysetConnection } from './cursors.ts';
import { loadSpaceById } from './common.ts';
import type { Context } from './context.ts';
import { type File } from '../generated/prisma/client.ts';
import { appUrlsOf, applySpaceContentChanges, computeLinks, fileBacklinks, fileNotInRevision, linkStats, pageLayout, type ContentLink, type ContentPage, type LinkStatus, type RevisionContent, contentForReader } from '../domain/content.ts';
import { viewKeyOf, viewOf } from './sites.ts';
import type { ChangeOutcome } from '../domain/revisions.ts';
import { classifyLink } from '../lib/markdown.ts';
import { notFound } from '../lib/errors.ts';
import { SpaceRef } from './spaces.ts';
import { READER_CLAIMS, SUBTREE_FIELDS, VIEW_KEY, descendantsWithBodies, loadFileById, loadPageContent, loadPageDocument, loadRevisionById, loadRevisionContent, pageClaimsFor, pageIdsAtPath, pagesWithBodies, readerClaimsOf, readerContent, selectsOwnField, treeAtHand, viewKeyOfRevision, withBody } from './content-loading.ts';

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
