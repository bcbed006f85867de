// Comments and replies, on a space or on a change request. A reply is a Comment row with a
// `parentId`; the body is stored as markdown (JSON documents are converted on the way in) and,
// parsed once when it is written (lib/markdown-pool.ts), as the JSON document `format=document`
// answers with.
//
// Who may: the `comment:*` rows of SPACE_ACTIONS (src/auth/space-actions.ts), with the comment's
// author as a fact: readers see comments; `comment` and above post, reply and react; the author (or
// a space admin) edits and deletes; resolving needs the author or `edit`.
import { z } from 'zod';
import type { DomainContext } from './context.ts';
import type { Comment, Prisma, Role, Space } from '../generated/prisma/client.ts';
import { newId } from '../lib/ids.ts';
import { badRequest, notFound, parseInput } from '../lib/errors.ts';
import { InvalidDocumentError } from '../lib/markdown.ts';
import { documentToMarkdownInPool, parseMarkdownFor, refusalError } from '../lib/markdown-pool.ts';
import { revisionPages, storedTreeOf } from './revision-tree.ts';
import { transaction } from '../db/transaction.ts';
import { recordEvent, type EventInput } from '../events/log.ts';

export const CommentBody = z.union([
  z.strictObject({ markdown: z.string().max(100_000) }),
  z.strictObject({ document: z.record(z.string(), z.unknown()) }),
  z.strictObject({}),
]);

const Reactions = z.array(z.string().min(1).max(50)).max(20);

export const PostCommentInput = z.strictObject({
  node: z.string().max(256).optional(),
  page: z.string().max(256).optional(),
  body: CommentBody,
  tableCell: z.strictObject({ record: z.string(), definition: z.string() }).optional(),
});
export const UpdateCommentInput = z.strictObject({
  resolved: z.boolean().optional(),
  body: CommentBody.optional(),
  addedReactions: Reactions.optional(),
  removedReactions: Reactions.optional(),
});
export const PostReplyInput = z.strictObject({ body: CommentBody });
export const UpdateReplyInput = z.strictObject({
  body: CommentBody.optional(),
  addedReactions: Reactions.optional(),
  removedReactions: Reactions.optional(),
});

export const CommentListFilters = z.strictObject({
  order: z.enum(['asc', 'desc']).default('desc'),
  status: z.enum(['all', 'open', 'resolved']).default('all'),
  targetPage: z.string().max(256).optional(),
  authors: z.array(z.string().max(256)).max(100).optional(),
});
export type CommentListFilters = z.infer<typeof CommentListFilters>;

/** Where comments live: a space, or one of its change requests. */
export type CommentScope = { space: Space; role: Role; changeRequestId: string | null; revisionId: string };

/**
 * A body as stored: its markdown and the JSON document it parses to, both computed in the parsing
 * pool; content that does not parse within the budget is a 400 naming `body.markdown` (or
 * `body.document`).
 */
async function bodyContent(body: z.infer<typeof CommentBody>, field: string): Promise<{ markdown: string; document: Prisma.InputJsonValue }> {
  let markdown: string;
  let from = `${field}.markdown`;
  if ('markdown' in body) markdown = body.markdown;
  else if ('document' in body) {
    from = `${field}.document`;
    try {
      markdown = await documentToMarkdownInPool(body.document);
    } catch (e) {
      if (e instanceof InvalidDocumentError) throw badRequest(from, `invalid document: ${e.message}`);
      throw refusalError(e, from);
    }
  } else markdown = '';
  if (!markdown.trim()) throw badRequest(field, 'must not be empty');
  const { document } = await parseMarkdownFor(markdown, from);
  return { markdown, document: document as unknown as Prisma.InputJsonValue };
}

/**
 * Resolve the scope: the space (readable by the caller) and, when given, the change request by
 * id or per-space number. The revision is the one page targets are resolved in.
 */
export async function resolveScope(ctx: DomainContext, spaceId: string, changeRequestIdOrNumber?: string | null): Promise<CommentScope> {
  const space = await ctx.prisma.space.findUnique({ where: { id: spaceId } });
  const role = await ctx.access.requireSpace(space, 'space:read');
  if (!changeRequestIdOrNumber) return { space: space!, role, changeRequestId: null, revisionId: space!.revisionId! };
  const asNumber = /^\d+$/.test(changeRequestIdOrNumber) ? Number(changeRequestIdOrNumber) : undefined;
  const cr = await ctx.prisma.changeRequest.findFirst({
    where: { spaceId, ...(asNumber !== undefined ? { number: asNumber } : { id: changeRequestIdOrNumber }) },
    select: { id: true, revisionId: true },
  });
  if (!cr) throw notFound('Change request');
  return { space: space!, role, changeRequestId: cr.id, revisionId: cr.revisionId };
}

/** Load a comment (or a reply of `parentId`) inside a scope, 404 otherwise. */
async function loadInScope(ctx: DomainContext, scope: CommentScope, id: string, parentId: string | null) {
  const c = await ctx.prisma.comment.findUnique({ where: { id } });
  if (!c || c.spaceId !== scope.space.id || c.changeRequestId !== scope.changeRequestId || c.parentId !== parentId) {
    throw notFound(parentId ? 'Comment reply' : 'Comment');
  }
  return c;
}

export async function getComment(ctx: DomainContext, scope: CommentScope, id: string) {
  return loadInScope(ctx, scope, id, null);
}

export async function getReply(ctx: DomainContext, scope: CommentScope, commentId: string, replyId: string) {
  await loadInScope(ctx, scope, commentId, null);
  return loadInScope(ctx, scope, replyId, commentId);
}

export async function postComment(ctx: DomainContext, scope: CommentScope, raw: unknown) {
  const viewer = ctx.access.requireViewer();
  await ctx.access.requireSpace(scope.space, 'comment:post');
  const input = parseInput(PostCommentInput, raw);
  const body = await bodyContent(input.body, 'body');
  let pageVersionId: string | null = null;
  if (input.page) {
    const revision = await storedTreeOf(ctx.prisma, scope.revisionId);
    const entry = revision ? (await revisionPages(ctx.prisma, revision, [input.page])).get(input.page) : undefined;
    if (!entry) throw badRequest('page', 'no such page in this content');
    pageVersionId = entry.v;
  }
  return transaction(ctx.prisma, async (tx) => {
    const created = await tx.comment.create({
      data: {
        id: newId('Comment'),
        spaceId: scope.space.id,
        changeRequestId: scope.changeRequestId,
        authorId: viewer.user.id,
        markdown: body.markdown,
        document: body.document,
        node: input.node ?? null,
        pageId: input.page ?? null,
        pageVersionId,
        revisionId: scope.revisionId,
        postedAt: ctx.clock.now(),
      },
    });
    await recordEvent(tx, ctx, commentEvent(scope, created, 'posted'));
    return created;
  });
}

/** The event of a change to a comment or a reply (ids only, never the body). */
function commentEvent(scope: CommentScope, c: Comment, what: 'posted' | 'updated' | 'resolved' | 'reopened' | 'deleted'): EventInput {
  return {
    type: c.parentId != null ? (`comment_reply_${what}` as const) : (`comment_${what}` as const),
    organizationId: scope.space.organizationId,
    objectId: c.id,
    payload: { spaceId: c.spaceId, changeRequestId: c.changeRequestId, commentId: c.parentId ?? undefined, pageId: c.pageId },
  };
}

export async function postReply(ctx: DomainContext, scope: CommentScope, commentId: string, raw: unknown) {
  const viewer = ctx.access.requireViewer();
  const parent = await loadInScope(ctx, scope, commentId, null);
  await ctx.access.requireSpace(scope.space, 'comment:post');
  const input = parseInput(PostReplyInput, raw);
  const body = await bodyContent(input.body, 'body');
  return transaction(ctx.prisma, async (tx) => {
    const created = await tx.comment.create({
      data: {
        id: newId('CommentReply'),
        spaceId: parent.spaceId,
        changeRequestId: parent.changeRequestId,
        parentId: parent.id,
        authorId: viewer.user.id,
        markdown: body.markdown,
        document: body.document,
        revisionId: parent.revisionId,
        postedAt: ctx.clock.now(),
      },
    });
    await recordEvent(tx, ctx, commentEvent(scope, created, 'posted'));
    return created;
  });
}

/** Update a comment or a reply; all changes in one transaction. */
async function updateCommentOrReply(
  ctx: DomainContext,
  scope: CommentScope,
  existing: Comment,
  input: { resolved?: boolean; body?: z.infer<typeof CommentBody>; addedReactions?: string[]; removedReactions?: string[] },
) {
  const viewer = ctx.access.requireViewer();
  const facts = { authorId: existing.authorId };
  if (input.body !== undefined) await ctx.access.requireSpace(scope.space, 'comment:edit', facts);
  if (input.resolved !== undefined) await ctx.access.requireSpace(scope.space, 'comment:resolve', facts);
  if (input.addedReactions?.length || input.removedReactions?.length) await ctx.access.requireSpace(scope.space, 'comment:react', facts);
  const body = input.body !== undefined ? await bodyContent(input.body, 'body') : undefined;
  const now = ctx.clock.now();
  return transaction(ctx.prisma, async (tx) => {
    if (input.addedReactions?.length) {
      // One reaction per user per emoji: adding twice changes nothing.
      await tx.reaction.createMany({
        data: [...new Set(input.addedReactions)].map((emoji) => ({ commentId: existing.id, userId: viewer.user.id, emoji, createdAt: now })),
        skipDuplicates: true,
      });
    }
    if (input.removedReactions?.length) {
      await tx.reaction.deleteMany({ where: { commentId: existing.id, userId: viewer.user.id, emoji: { in: input.removedReactions } } });
    }
    const data: Prisma.CommentUncheckedUpdateInput = {};
    if (body !== undefined && body.markdown !== existing.markdown) Object.assign(data, { markdown: body.markdown, document: body.document, editedAt: now });
    if (input.resolved === true && existing.status !== 'resolved') Object.assign(data, { status: 'resolved', resolvedAt: now, resolvedById: viewer.user.id });
    if (input.resolved === false && existing.status !== 'open') Object.assign(data, { status: 'open', resolvedAt: null, resolvedById: null });
    if (Object.keys(data).length === 0) return tx.comment.findUniqueOrThrow({ where: { id: existing.id } });
    const updated = await tx.comment.update({ where: { id: existing.id }, data });
    await recordEvent(
      tx,
      ctx,
      ...('markdown' in data ? [commentEvent(scope, updated, 'updated')] : []),
      ...(input.resolved === true && 'status' in data ? [commentEvent(scope, updated, 'resolved')] : []),
      ...(input.resolved === false && 'status' in data ? [commentEvent(scope, updated, 'reopened')] : []),
    );
    return updated;
  });
}

export async function updateComment(ctx: DomainContext, scope: CommentScope, id: string, raw: unknown) {
  const existing = await loadInScope(ctx, scope, id, null);
  return updateCommentOrReply(ctx, scope, existing, parseInput(UpdateCommentInput, raw));
}

export async function updateReply(ctx: DomainContext, scope: CommentScope, commentId: string, replyId: string, raw: unknown) {
  await loadInScope(ctx, scope, commentId, null);
  const existing = await loadInScope(ctx, scope, replyId, commentId);
  return updateCommentOrReply(ctx, scope, existing, parseInput(UpdateReplyInput, raw));
}

/** Idempotent delete: false when there was nothing to delete. Replies go with their comment. */
export async function deleteComment(ctx: DomainContext, scope: CommentScope, id: string, parentId: string | null = null): Promise<boolean> {
  ctx.access.requireViewer();
  if (parentId) await loadInScope(ctx, scope, parentId, null);
  const existing = await ctx.prisma.comment.findUnique({ where: { id } });
  if (!existing || existing.spaceId !== scope.space.id || existing.changeRequestId !== scope.changeRequestId || existing.parentId !== parentId) {
    return false;
  }
  await ctx.access.requireSpace(scope.space, 'comment:delete', { authorId: existing.authorId });
  return transaction(ctx.prisma, async (tx) => {
    const r = await tx.comment.deleteMany({ where: { id } });
    if (r.count > 0) await recordEvent(tx, ctx, commentEvent(scope, existing, 'deleted'));
    return r.count > 0;
  });
}

/** Prisma `where` for the list filters alone (top-level comments; status, page, authors). */
export function commentFilterWhere(filters: Omit<CommentListFilters, 'order'>) {
  return {
    parentId: null,
    ...(filters.status !== 'all' ? { status: filters.status } : {}),
    ...(filters.targetPage ? { pageId: filters.targetPage } : {}),
    ...(filters.authors?.length ? { authorId: { in: filters.authors } } : {}),
  };
}

/** How a comment listing is sorted: by posting time, then id, in the filter's order. */
export const commentListOrder = (order: 'asc' | 'desc') => [{ postedAt: order }, { id: order }];

/** Prisma `where` for a comment listing in a scope. */
export function commentListWhere(scope: Pick<CommentScope, 'space' | 'changeRequestId'>, filters: Omit<CommentListFilters, 'order'>) {
  return { spaceId: scope.space.id, changeRequestId: scope.changeRequestId, ...commentFilterWhere(filters) };
}
