// Comments and replies on spaces and change requests.
import { keysetConnection, keysetRelation, type KeysetPage } from './cursors.ts';
import { builder } from './builder.ts';
import { DeletePayload, dropUndefined, groupByKey, loadSpaceById, loadUserById, loader, primeUsers, countsByKey } from './common.ts';
import { UserRef } from './users.ts';
import { MemberRef } from './members.ts';
import type { Context } from './context.ts';
import type { Comment } from '../generated/prisma/client.ts';
import {
  CommentListFilters,
  commentFilterWhere,
  commentListOrder,
  commentListWhere,
  deleteComment,
  getComment,
  getReply,
  postComment,
  postReply,
  resolveScope,
  updateComment,
  updateReply,
} from '../domain/comments.ts';
import { parseForRead } from '../lib/markdown-pool.ts';
import { loadPageVersions, loadRevisionContent } from './content-loading.ts';
import { forbidden, notFound, parseInput } from '../lib/errors.ts';

const CommentStatusEnum = builder.enumType('CommentStatus', {
  description: 'State of a comment thread.',
  values: {
    open: { description: 'Still under discussion.' },
    resolved: { description: 'Marked resolved by its author or an editor (resolvedAt, resolvedBy).' },
  } as const,
});
const CommentStatusFilterEnum = builder.enumType('CommentStatusFilter', {
  description: 'Which comment threads to list by status.',
  values: {
    all: { description: 'Open and resolved threads.' },
    open: { description: 'Open threads only.' },
    resolved: { description: 'Resolved threads only.' },
  } as const,
});
const ListOrderEnum = builder.enumType('CommentOrder', {
  description: 'Order of comments by posting time.',
  values: {
    asc: { description: 'Oldest first.' },
    desc: { description: 'Newest first.' },
  } as const,
});

const CommentPermissions = builder.simpleObject('CommentPermissions', {
  description: 'What you may do with a comment or reply.',
  fields: (t) => ({
    view: t.boolean({ description: 'Read it (any role on the space).' }),
    edit: t.boolean({ description: 'Change its body: its author, or a space admin.' }),
    reply: t.boolean({ description: 'Reply to the thread (comment role or above).' }),
    react: t.boolean({ description: 'Add or remove emoji reactions (comment role or above).' }),
    delete: t.boolean({ description: 'Delete it: its author, or a space admin.' }),
    resolve: t.boolean({ description: 'Resolve or reopen it (`resolved` of updateComment): its author, or `edit` on the space. Always false on a reply, which has no status.' }),
  }),
});

type ReactionUser = { userId: string; reactedAt: Date };
type ReactionGroup = { emoji: string; users: ReactionUser[] };

const ReactionUserRef = builder.objectRef<ReactionUser>('ReactionUser').implement({
  description: 'One user’s reaction.',
  fields: (t) => ({
    user: t.field({ type: UserRef, description: 'Who reacted.', resolve: async (r, _a, ctx) => (await loadUserById(ctx, r.userId))! }),
    reactedAt: t.field({ type: 'DateTime', description: 'When they reacted.', resolve: (r) => r.reactedAt }),
  }),
});

const ReactionRef = builder.objectRef<ReactionGroup>('EmojiReaction').implement({
  description: 'Users who reacted with one emoji.',
  fields: (t) => ({
    emoji: t.string({ description: 'The emoji (the character itself).', resolve: (r) => r.emoji }),
    count: t.int({ description: 'Number of users who reacted with it.', resolve: (r) => r.users.length }),
    users: t.field({ type: [ReactionUserRef], description: 'Who reacted, first reaction first.', resolve: (r) => r.users }),
  }),
});

function reactionsOf(ctx: Context, commentId: string) {
  return loader<string, ReactionGroup[]>(ctx, 'comment.reactions', async (ids) => {
    // The reacting users come in the same statement, so they never need a loader wave of their own.
    const rows = await ctx.prisma.reaction.findMany({ where: { commentId: { in: [...ids] } }, orderBy: { createdAt: 'asc' }, include: { user: true } });
    primeUsers(ctx, rows.map((r) => r.user));
    return groupByKey(ids, rows, (r) => r.commentId).map((list) => {
      const byEmoji = new Map<string, ReactionUser[]>();
      for (const r of list) byEmoji.set(r.emoji, [...(byEmoji.get(r.emoji) ?? []), { userId: r.userId, reactedAt: r.createdAt }]);
      return [...byEmoji].map(([emoji, users]) => ({ emoji, users }));
    });
  }).load(commentId);
}

function replyCount(ctx: Context, commentId: string) {
  return loader<string, number>(ctx, 'comment.replyCount', async (ids) => {
    const rows = await ctx.prisma.comment.groupBy({ by: ['parentId'], where: { parentId: { in: [...ids] } }, _count: { _all: true } });
    return countsByKey(ids, rows.map((r) => ({ key: r.parentId!, count: r._count._all })));
  }).load(commentId);
}

/**
 * The revision page targets are resolved in: the change request's head, else the space's current
 * one (from the request's space loader, which the comment's permissions read too).
 */
async function scopeRevisionId(ctx: Context, comment: Comment): Promise<string | null> {
  if (!comment.changeRequestId) return (await loadSpaceById(ctx, comment.spaceId))?.revisionId ?? null;
  return loader<string, string | null>(ctx, 'comment.changeRequestRevisionId', async (ids) => {
    const rows = await ctx.prisma.changeRequest.findMany({ where: { id: { in: [...ids] } }, select: { id: true, revisionId: true } });
    const byId = new Map(rows.map((r) => [r.id, r.revisionId]));
    return ids.map((id) => byId.get(id) ?? null);
  }).load(comment.changeRequestId);
}

type TargetPage = { id: string; title: string; emoji: string | null; path: string; outdated: boolean; createdAt: Date | null; updatedAt: Date | null };

const TargetPageRef = builder.objectRef<TargetPage>('CommentTargetPage').implement({
  description: 'The page a comment is about, as it is now (or as it was, when deleted).',
  fields: (t) => ({
    pageId: t.string({ description: 'Page id (`page_…`).', resolve: (p) => p.id }),
    id: t.string({ description: 'Page id (`page_…`).', deprecationReason: 'Not this object\'s own id (client caches key objects by `id`): use `pageId`.', resolve: (p) => p.id }),
    title: t.string({ description: 'Page title (`Deleted page` when gone and unknown).', resolve: (p) => p.title }),
    emoji: t.string({ nullable: true, description: 'Page emoji; null when none.', resolve: (p) => p.emoji }),
    path: t.string({ description: 'Page path in the space (its slug when deleted).', resolve: (p) => p.path }),
    outdated: t.boolean({ description: 'True when the page changed (or disappeared) after the comment was made.', resolve: (p) => p.outdated }),
    createdAt: t.field({ type: 'DateTime', nullable: true, description: 'When the page was created; null when unknown.', resolve: (p) => p.createdAt }),
    updatedAt: t.field({ type: 'DateTime', nullable: true, description: 'When the page was last changed; null when unknown.', resolve: (p) => p.updatedAt }),
  }),
});

const CommentTargetRef = builder.objectRef<Comment>('CommentTarget').implement({
  description: 'What a comment thread is attached to.',
  fields: (t) => ({
    space: t.string({ description: 'Space id (`space_…`).', resolve: (c) => c.spaceId }),
    revision: t.string({ description: 'Revision the comment was made on (`rev_…`); empty when unknown.', resolve: (c) => c.revisionId ?? '' }),
    changeRequest: t.string({ nullable: true, description: 'Change request id (`cr_…`); null for a comment on the space itself.', resolve: (c) => c.changeRequestId }),
    node: t.string({ nullable: true, description: 'Id of the block within the page it is anchored to; null for the whole page or space.', resolve: (c) => c.node }),
    page: t.field({
      type: TargetPageRef,
      nullable: true,
      description: 'The page commented on; null for a comment on the space or change request as a whole.',
      resolve: async (c, _a, ctx) => {
        if (!c.pageId) return null;
        // Page trees without bodies, batched per request and cached per (immutable) revision.
        const revisionId = await scopeRevisionId(ctx, c);
        const page = revisionId ? (await loadRevisionContent(ctx, revisionId, { withMarkdown: false })).byId.get(c.pageId) : undefined;
        if (!page) {
          // The page is gone: describe it as it was when commented on (batched, no bodies).
          const [old] = c.pageVersionId ? await loadPageVersions(ctx, [c.pageVersionId], false) : [null];
          return { id: c.pageId, title: old?.title ?? 'Deleted page', emoji: old?.emoji ?? null, path: old?.slug ?? '', outdated: true, createdAt: old?.pageCreatedAt ?? null, updatedAt: old?.createdAt ?? null };
        }
        const v = page.version;
        return { id: c.pageId, title: v.title, emoji: v.emoji, path: page.path, outdated: v.id !== c.pageVersionId, createdAt: v.pageCreatedAt, updatedAt: v.createdAt };
      },
    }),
  }),
});

const CommentUrls = builder.simpleObject('CommentUrls', {
  description: 'Addresses of a comment or reply.',
  fields: (t) => ({ location: t.string({ description: 'Its REST address (…/comments/{commentId}, or …/replies/{commentReplyId} for a reply).' }) }),
});

function commentLocation(ctx: Context, c: Comment) {
  const base = `${ctx.config.publicUrl}/v1/spaces/${c.spaceId}${c.changeRequestId ? `/change-requests/${c.changeRequestId}` : ''}/comments`;
  return c.parentId ? `${base}/${c.parentId}/replies/${c.id}` : `${base}/${c.id}`;
}

async function permissionsFor(ctx: Context, c: Comment) {
  return ctx.access.commentPermissions((await loadSpaceById(ctx, c.spaceId)) ?? null, c);
}

/** What comments and replies share, as an interface both implement. */
const CommentEntryRef = builder.interfaceRef<Comment>('CommentEntry').implement({
  description: 'A comment or a reply.',
  resolveType: (c) => (c.parentId ? 'CommentReply' : 'Comment'),
  fields: (t) => ({
    postedBy: t.field({ type: UserRef, description: 'The author.', resolve: async (c, _a, ctx) => (await loadUserById(ctx, c.authorId))! }),
    postedAt: t.field({ type: 'DateTime', description: 'When it was posted.', resolve: (c) => c.postedAt }),
    editedAt: t.field({ type: 'DateTime', nullable: true, description: 'When its body was last edited; null when never.', resolve: (c) => c.editedAt }),
    markdown: t.string({ description: 'The body as markdown (the stored form).', resolve: (c) => c.markdown }),
    document: t.field({
      type: 'JSON',
      description: 'The body as a JSON document.',
      // Stored when the body was written; comments from before are parsed in the pool until the backfill job reaches them.
      resolve: async (c) => c.document ?? (await parseForRead(c.markdown)).document,
    }),
    reactions: t.field({ type: [ReactionRef], description: 'Emoji reactions, one entry per emoji, first used first.', resolve: (c, _a, ctx) => reactionsOf(ctx, c.id) }),
    urls: t.field({ type: CommentUrls, description: 'Its REST address.', resolve: (c, _a, ctx) => ({ location: commentLocation(ctx, c) }) }),
    permissions: t.field({ type: CommentPermissions, description: 'What you may do with it.', resolve: (c, _a, ctx) => permissionsFor(ctx, c) }),
  }),
});

/** node(id:) finds only comments and replies in spaces you may read. */
async function findVisibleComment(id: string, ctx: Context) {
  const c = await ctx.prisma.comment.findUnique({ where: { id }, select: { spaceId: true } });
  const space = c ? await loadSpaceById(ctx, c.spaceId) : null;
  if (!space || space.deletedAt || !(await ctx.access.spaceRole(space))) throw notFound('Comment');
  return { id };
}

export const CommentReplyRef = builder.prismaNode('Comment', {
  variant: 'CommentReply',
  id: { field: 'id' },
  description: 'A reply in a comment thread.',
  findUnique: findVisibleComment,
  interfaces: [CommentEntryRef],
  fields: () => ({}),
});

export const CommentRef = builder.prismaNode('Comment', {
  id: { field: 'id' },
  description: 'A comment thread on a space or a change request.',
  findUnique: findVisibleComment,
  interfaces: [CommentEntryRef],
  fields: (t) => ({
    replyCount: t.int({ description: 'Number of replies (REST `replies`).', resolve: (c, _a, ctx) => replyCount(ctx, c.id) }),
    status: t.expose('status', { type: CommentStatusEnum }),
    resolvedAt: t.expose('resolvedAt', { type: 'DateTime', nullable: true }),
    resolvedBy: t.field({ type: UserRef, nullable: true, description: 'Who resolved the thread; null while open.', resolve: async (c, _a, ctx) => (c.resolvedById ? loadUserById(ctx, c.resolvedById) : null) }),
    target: t.field({ type: CommentTargetRef, description: 'What the thread is attached to (space, change request, page, block).', resolve: (c) => c }),
    replies: keysetRelation(t, 'replies', {
      type: CommentReplyRef,
      list: 'Comment.replies',
      description: 'The replies, oldest first.',
      query: () => ({ orderBy: [{ postedAt: 'asc' as const }, { id: 'asc' as const }] }),
    }),
  }),
});

// ------------------------------------------------------------------ Space.comments, ChangeRequest.comments

type FilterArgs = { order?: 'asc' | 'desc' | null; status?: 'all' | 'open' | 'resolved' | null; targetPage?: string | null; authors?: string[] | null };

/** The list filters, validated as the REST query is (same schema, same field names). */
function filtersOf(args: FilterArgs): CommentListFilters {
  return parseInput(
    CommentListFilters,
    dropUndefined({ order: args.order ?? undefined, status: args.status ?? undefined, targetPage: args.targetPage ?? undefined, authors: args.authors ?? undefined }),
  );
}

type ThreadParent = 'space' | 'changeRequest';

/** Top-level comments of a parent that match the filters: a space's own (not its change requests'), or a change request's. */
function parentWhere(kind: ThreadParent, filters: Omit<CommentListFilters, 'order'>) {
  return { ...commentFilterWhere(filters), ...(kind === 'space' ? { changeRequestId: null } : {}) };
}

/**
 * A page of comment threads for a space's or change request's connection. Every parent of the
 * request asking with the same filters and page arguments is answered by one statement that reads
 * each parent's page through the Prisma relation (as collections read their spaces), so comments
 * under 100 spaces cost what they cost under 2.
 */
function threadPage(ctx: Context, kind: ThreadParent, parentId: string, filters: CommentListFilters, page: KeysetPage): Promise<Comment[]> {
  const where = parentWhere(kind, filters);
  const orderBy = commentListOrder(filters.order);
  // Validates the cursor before the batch, so a bad one fails this field alone.
  page.prisma({ where, orderBy });
  const key = JSON.stringify([filters, page.selection, page.args.first, page.args.last, page.args.after, page.args.before]);
  return loader<string, Comment[]>(ctx, `${kind}.comments:${key}`, async (ids) => {
    const select = { id: true, comments: page.prisma({ where, orderBy }) };
    const inParents = { id: { in: [...ids] } };
    const rows = (kind === 'space'
      ? await ctx.prisma.space.findMany({ where: inParents, select })
      : await ctx.prisma.changeRequest.findMany({ where: inParents, select })) as unknown as Array<{ id: string; comments: Comment[] }>;
    const byParent = new Map(rows.map((r) => [r.id, r.comments]));
    return ids.map((id) => byParent.get(id) ?? []);
  }).load(parentId);
}

/** How many threads match, per parent (one grouped statement per request tick and filter set). */
function threadCount(ctx: Context, kind: ThreadParent, parentId: string, filters: Omit<CommentListFilters, 'order'>): Promise<number> {
  const { status, targetPage, authors } = filters;
  return loader<string, number>(ctx, `${kind}.comments.count:${JSON.stringify([status, targetPage, authors])}`, async (ids) => {
    if (kind === 'space') {
      const rows = await ctx.prisma.comment.groupBy({ by: ['spaceId'], where: { spaceId: { in: [...ids] }, ...parentWhere(kind, filters) }, _count: { _all: true } });
      return countsByKey(ids, rows.map((r) => ({ key: r.spaceId, count: r._count._all })));
    }
    const rows = await ctx.prisma.comment.groupBy({ by: ['changeRequestId'], where: { changeRequestId: { in: [...ids] }, ...parentWhere(kind, filters) }, _count: { _all: true } });
    return countsByKey(ids, rows.map((r) => ({ key: r.changeRequestId!, count: r._count._all })));
  }).load(parentId);
}

/** Comments are for readers of the space: a share-key reader sees the space, not its discussion. */
async function requireCommentReader(ctx: Context, spaceId: string) {
  const space = await loadSpaceById(ctx, spaceId);
  if (!space || !(await ctx.access.spaceRole(space))) throw forbidden('Reading comments needs the read role on the space');
}

const commentFilterArgs = builder.args((t) => ({
  order: t.field({ type: ListOrderEnum, description: 'By posting time; default `desc` (newest first).' }),
  status: t.field({ type: CommentStatusFilterEnum, description: 'Default `all`.' }),
  targetPage: t.string({ description: 'Only comments on this page id.' }),
  authors: t.stringList({ description: 'Only comments by these user ids.' }),
}));

for (const kind of ['space', 'changeRequest'] as const) {
  const parentOf = (p: { id: string; spaceId?: string }) => ({ id: p.id, spaceId: kind === 'space' ? p.id : p.spaceId! });
  builder.prismaObjectField(kind === 'space' ? 'Space' : 'ChangeRequest', 'comments', (t) =>
    keysetConnection(t, {
      type: CommentRef,
      list: `${kind}.comments`,
      nullable: true,
      description:
        kind === 'space'
          ? "Comment threads on the space itself (not its change requests'), with the REST list's filters. Null with FORBIDDEN for a share-key reader."
          : 'Comment threads on the change request, with the REST list\'s filters.',
      args: commentFilterArgs,
      resolve: async (page: KeysetPage, parent: { id: string; spaceId?: string }, args: any, ctx: Context) => {
        const p = parentOf(parent as never);
        const filters = filtersOf(args);
        await requireCommentReader(ctx, p.spaceId);
        return threadPage(ctx, kind, p.id, filters, page);
      },
      totalCount: async (parent: { id: string; spaceId?: string }, args: any, ctx: Context) => {
        const p = parentOf(parent as never);
        const filters = filtersOf(args);
        await requireCommentReader(ctx, p.spaceId);
        return threadCount(ctx, kind, p.id, filters);
      },
    }),
  );
}

// ------------------------------------------------------------------ queries

const scopeArgs = (t: PothosSchemaTypes.QueryFieldBuilder<any, any>) => ({
  spaceId: t.arg.id({ required: true, description: 'Space (`space_…`).' }),
  changeRequestId: t.arg.string({ description: 'Change request id or number; omit for comments on the space itself.' }),
});

builder.queryFields((t) => ({
  comments: keysetConnection(t, {
    type: CommentRef,
    list: 'comments',
    description: 'Comment threads on a space or one of its change requests (read role on the space). REST: GET /v1/spaces/{spaceId}/comments, GET /v1/spaces/{spaceId}/change-requests/{changeRequestId}/comments.',
    args: { ...scopeArgs(t), ...commentFilterArgs },
    resolve: async (page, _r, args, ctx) => {
      const scope = await resolveScope(ctx, String(args.spaceId), args.changeRequestId);
      const filters = filtersOf(args);
      return ctx.prisma.comment.findMany(page.prisma({ where: commentListWhere(scope, filters), orderBy: commentListOrder(filters.order) }) as never);
    },
    totalCount: async (_r, args, ctx) => {
      const scope = await resolveScope(ctx, String(args.spaceId), args.changeRequestId);
      return ctx.prisma.comment.count({ where: commentListWhere(scope, filtersOf(args)) });
    },
  }),
  comment: t.prismaField({
    type: CommentRef,
    nullable: true,
    description: 'One comment thread (read role on the space). REST: GET /v1/spaces/{spaceId}/comments/{commentId} (and under …/change-requests/{changeRequestId}).',
    args: { ...scopeArgs(t), id: t.arg.id({ required: true, description: 'Comment id (`cmt_…`).' }) },
    resolve: async (query, _r, args, ctx) => {
      const scope = await resolveScope(ctx, String(args.spaceId), args.changeRequestId);
      const c = await getComment(ctx, scope, String(args.id));
      return ctx.prisma.comment.findUniqueOrThrow({ ...query, where: { id: c.id } });
    },
  }),
  commentReply: t.prismaField({
    type: CommentReplyRef,
    nullable: true,
    description: 'One reply of a thread (read role on the space). REST: GET /v1/spaces/{spaceId}/comments/{commentId}/replies/{commentReplyId} (and under …/change-requests/{changeRequestId}).',
    args: {
      ...scopeArgs(t),
      commentId: t.arg.id({ required: true, description: 'The thread’s comment id (`cmt_…`).' }),
      id: t.arg.id({ required: true, description: 'Reply id (`rpl_…`).' }),
    },
    resolve: async (query, _r, args, ctx) => {
      const scope = await resolveScope(ctx, String(args.spaceId), args.changeRequestId);
      const c = await getReply(ctx, scope, String(args.commentId), String(args.id));
      return ctx.prisma.comment.findUniqueOrThrow({ ...query, where: { id: c.id } });
    },
  }),
  commenters: keysetConnection(t, {
    type: MemberRef,
    list: 'commenters',
    description: 'Members who commented in a space or one of its change requests. REST: GET /v1/spaces/{spaceId}/commenters (and under …/change-requests/{changeRequestId}).',
    args: scopeArgs(t),
    resolve: async (page, _r, args, ctx) => {
      const scope = await resolveScope(ctx, String(args.spaceId), args.changeRequestId);
      return ctx.prisma.member.findMany(page.prisma({ where: await commentersWhere(ctx, scope), orderBy: [{ id: 'asc' }] }) as never);
    },
    totalCount: async (_r, args, ctx) => {
      const scope = await resolveScope(ctx, String(args.spaceId), args.changeRequestId);
      return ctx.prisma.member.count({ where: await commentersWhere(ctx, scope) });
    },
  }),
  commentReplies: keysetConnection(t, {
    type: CommentReplyRef,
    list: 'commentReplies',
    description: 'Replies of a thread, oldest first (read role on the space). REST: GET /v1/spaces/{spaceId}/comments/{commentId}/replies (and under …/change-requests/{changeRequestId}).',
    args: { ...scopeArgs(t), commentId: t.arg.id({ required: true, description: 'The thread’s comment id (`cmt_…`).' }) },
    resolve: async (page, _r, args, ctx) => {
      const scope = await resolveScope(ctx, String(args.spaceId), args.changeRequestId);
      const parent = await getComment(ctx, scope, String(args.commentId));
      return ctx.prisma.comment.findMany(page.prisma({ where: { parentId: parent.id }, orderBy: [{ postedAt: 'asc' }, { id: 'asc' }] }) as never);
    },
    totalCount: async (_r, args, ctx) => ctx.prisma.comment.count({ where: { parentId: String(args.commentId) } }),
  }),
}));

/** Members of the space's organization who authored a comment or reply in the scope. */
async function commentersWhere(ctx: Context, scope: Awaited<ReturnType<typeof resolveScope>>) {
  const authors = await ctx.prisma.comment.findMany({
    where: { spaceId: scope.space.id, changeRequestId: scope.changeRequestId },
    distinct: ['authorId'],
    select: { authorId: true },
  });
  return { organizationId: scope.space.organizationId, userId: { in: authors.map((a) => a.authorId) } };
}

// ------------------------------------------------------------------ mutations

const CommentBodyInput = builder.inputType('CommentBodyInput', {
  description: 'One of: markdown, or a JSON document.',
  fields: (t) => ({
    markdown: t.string({ description: 'The body as markdown.' }),
    document: t.field({ type: 'JSONObject', description: 'The body as a JSON document (the shape `document` answers).' }),
  }),
});

const bodyFromInput = (b: { markdown?: string | null; document?: Record<string, unknown> | null } | null | undefined) =>
  b == null ? undefined : dropUndefined({ markdown: b.markdown ?? undefined, document: b.document ?? undefined });

const scopeFields = (t: PothosSchemaTypes.InputFieldBuilder<any, 'InputObject'>) => ({
  spaceId: t.id({ required: true, description: 'Space (`space_…`).' }),
  changeRequestId: t.string({ description: 'Change request id or number; omit for the space itself.' }),
});

const CommentPayload = builder.simpleObject('CommentPayload', {
  description: 'Result of a comment mutation.',
  fields: (t) => ({ comment: t.field({ type: CommentRef, description: 'The comment after the change.' }) }),
});
const CommentReplyPayload = builder.simpleObject('CommentReplyPayload', {
  description: 'Result of a reply mutation.',
  fields: (t) => ({ reply: t.field({ type: CommentReplyRef, description: 'The reply after the change.' }) }),
});

builder.mutationFields((t) => ({
  postComment: t.field({
    type: CommentPayload,
    description: 'Start a comment thread on a space, a change request, a page or a block (comment role on the space). REST: POST /v1/spaces/{spaceId}/comments (and under …/change-requests/{changeRequestId}) (201).',
    args: {
      input: t.arg({
        required: true,
        description: 'Where to comment and what to say.',
        type: builder.inputType('PostCommentInput', {
          description: 'Where to comment and what to say.',
          fields: (f) => ({
            ...scopeFields(f),
            page: f.string({ description: 'Page id (`page_…`) to comment on; omitted for the space or change request as a whole.' }),
            node: f.string({ description: 'Block id within `page` to anchor the comment to.' }),
            body: f.field({ type: CommentBodyInput, required: true, description: 'The comment text.' }),
          }),
        }),
      }),
    },
    resolve: async (_r, { input }, ctx) => {
      const scope = await resolveScope(ctx, String(input.spaceId), input.changeRequestId);
      const comment = await postComment(ctx, scope, dropUndefined({ page: input.page ?? undefined, node: input.node ?? undefined, body: bodyFromInput(input.body) }));
      return { comment };
    },
  }),
  updateComment: t.field({
    type: CommentPayload,
    description: 'Edit a comment’s body (author or space admin), resolve or reopen it (author or edit role) and react (comment role). REST: PUT /v1/spaces/{spaceId}/comments/{commentId} (and under …/change-requests/{changeRequestId}).',
    args: {
      input: t.arg({
        required: true,
        description: 'The comment and what to change.',
        type: builder.inputType('UpdateCommentInput', {
          description: 'The comment and what to change; omitted fields are kept.',
          fields: (f) => ({
            ...scopeFields(f),
            id: f.id({ required: true, description: 'Comment id (`cmt_…`).' }),
            resolved: f.boolean({ description: 'true resolves the thread, false reopens it.' }),
            body: f.field({ type: CommentBodyInput, description: 'New text.' }),
            addedReactions: f.stringList({ description: 'Emojis to react with.' }),
            removedReactions: f.stringList({ description: 'Emojis of your reactions to take back.' }),
          }),
        }),
      }),
    },
    resolve: async (_r, { input }, ctx) => {
      const scope = await resolveScope(ctx, String(input.spaceId), input.changeRequestId);
      const comment = await updateComment(ctx, scope, String(input.id), dropUndefined({
        resolved: input.resolved ?? undefined,
        body: bodyFromInput(input.body),
        addedReactions: input.addedReactions ?? undefined,
        removedReactions: input.removedReactions ?? undefined,
      }));
      return { comment };
    },
  }),
  deleteComment: t.field({
    type: DeletePayload,
    description: 'Delete a comment thread with its replies (author or space admin). Idempotent (deleted: false when already gone). REST: DELETE /v1/spaces/{spaceId}/comments/{commentId} (and under …/change-requests/{changeRequestId}).',
    args: {
      input: t.arg({
        required: true,
        description: 'The comment to delete.',
        type: builder.inputType('DeleteCommentInput', {
          description: 'The comment to delete.',
          fields: (f) => ({ ...scopeFields(f), id: f.id({ required: true, description: 'Comment id (`cmt_…`).' }) }),
        }),
      }),
    },
    resolve: async (_r, { input }, ctx) => {
      const scope = await resolveScope(ctx, String(input.spaceId), input.changeRequestId);
      return { deleted: await deleteComment(ctx, scope, String(input.id)), deletedId: String(input.id) };
    },
  }),
  postCommentReply: t.field({
    type: CommentReplyPayload,
    description: 'Reply to a comment thread (comment role on the space). REST: POST /v1/spaces/{spaceId}/comments/{commentId}/replies (and under …/change-requests/{changeRequestId}) (201).',
    args: {
      input: t.arg({
        required: true,
        description: 'The thread and the reply.',
        type: builder.inputType('PostCommentReplyInput', {
          description: 'The thread and the reply.',
          fields: (f) => ({
            ...scopeFields(f),
            commentId: f.id({ required: true, description: 'The thread’s comment id (`cmt_…`).' }),
            body: f.field({ type: CommentBodyInput, required: true, description: 'The reply text.' }),
          }),
        }),
      }),
    },
    resolve: async (_r, { input }, ctx) => {
      const scope = await resolveScope(ctx, String(input.spaceId), input.changeRequestId);
      return { reply: await postReply(ctx, scope, String(input.commentId), { body: bodyFromInput(input.body) }) };
    },
  }),
  updateCommentReply: t.field({
    type: CommentReplyPayload,
    description: 'Edit a reply’s body (author or space admin) and react to it (comment role). REST: PUT /v1/spaces/{spaceId}/comments/{commentId}/replies/{commentReplyId} (and under …/change-requests/{changeRequestId}).',
    args: {
      input: t.arg({
        required: true,
        description: 'The reply and what to change.',
        type: builder.inputType('UpdateCommentReplyInput', {
          description: 'The reply and what to change; omitted fields are kept.',
          fields: (f) => ({
            ...scopeFields(f),
            commentId: f.id({ required: true, description: 'The thread’s comment id (`cmt_…`).' }),
            id: f.id({ required: true, description: 'Reply id (`rpl_…`).' }),
            body: f.field({ type: CommentBodyInput, description: 'New text.' }),
            addedReactions: f.stringList({ description: 'Emojis to react with.' }),
            removedReactions: f.stringList({ description: 'Emojis of your reactions to take back.' }),
          }),
        }),
      }),
    },
    resolve: async (_r, { input }, ctx) => {
      const scope = await resolveScope(ctx, String(input.spaceId), input.changeRequestId);
      const reply = await updateReply(ctx, scope, String(input.commentId), String(input.id), dropUndefined({
        body: bodyFromInput(input.body),
        addedReactions: input.addedReactions ?? undefined,
        removedReactions: input.removedReactions ?? undefined,
      }));
      return { reply };
    },
  }),
  deleteCommentReply: t.field({
    type: DeletePayload,
    description: 'Delete a reply (author or space admin). Idempotent (deleted: false when already gone). REST: DELETE /v1/spaces/{spaceId}/comments/{commentId}/replies/{commentReplyId} (and under …/change-requests/{changeRequestId}).',
    args: {
      input: t.arg({
        required: true,
        description: 'The reply to delete.',
        type: builder.inputType('DeleteCommentReplyInput', {
          description: 'The reply to delete.',
          fields: (f) => ({
            ...scopeFields(f),
            commentId: f.id({ required: true, description: 'The thread’s comment id (`cmt_…`).' }),
            id: f.id({ required: true, description: 'Reply id (`rpl_…`).' }),
          }),
        }),
      }),
    },
    resolve: async (_r, { input }, ctx) => {
      const scope = await resolveScope(ctx, String(input.spaceId), input.changeRequestId);
      return { deleted: await deleteComment(ctx, scope, String(input.id), String(input.commentId)), deletedId: String(input.id) };
    },
  }),
}));
