// REST routes for comments and replies, on spaces (`SPACE/comments…`) and change requests
// (`CR/comments…`): the same table twice, with the scope in the path.
import { z } from 'zod';
import { type RestRoute, type RestInput, listQueryShape, pageVariables, listEnvelope, compact, CONNECTION_FIELDS, q } from './router.ts';
import { PostCommentInput, UpdateCommentInput, PostReplyInput, UpdateReplyInput } from '../domain/comments.ts';
import { USER_FIELDS, toRestUser } from './users.ts';
import { MEMBER_FIELDS, toRestMember } from './members.ts';

const ENTRY_FIELDS = `
  id postedAt editedAt
  markdown @skip(if: $asDocument)
  document @include(if: $asDocument)
  postedBy { ${USER_FIELDS} }
  reactions { emoji count users { reactedAt user { ${USER_FIELDS} } } }
  urls { location }
  permissions { view edit reply react delete }
`;
const COMMENT_FIELDS = `
  ${ENTRY_FIELDS}
  replyCount status resolvedAt resolvedBy { ${USER_FIELDS} }
  target { space revision changeRequest node page { id: pageId title emoji path outdated createdAt updatedAt } }
`;

function toRestEntry(c: any) {
  return compact({
    id: c.id,
    postedBy: toRestUser(c.postedBy),
    postedAt: c.postedAt,
    editedAt: c.editedAt,
    reactions: c.reactions.map((r: any) => ({ emoji: r.emoji, count: r.count, users: r.users.map((u: any) => ({ user: toRestUser(u.user), reactedAt: u.reactedAt })) })),
    body: c.document !== undefined ? { document: c.document } : { markdown: c.markdown },
    urls: c.urls,
    permissions: c.permissions,
  });
}

export function toRestComment(c: any) {
  const target = c.target;
  return compact({
    object: 'comment',
    ...toRestEntry(c),
    replies: c.replyCount,
    status: c.status,
    resolvedAt: c.resolvedAt,
    resolvedBy: c.resolvedBy ? toRestUser(c.resolvedBy) : undefined,
    target: compact({
      space: target.space,
      revision: target.revision,
      changeRequest: target.changeRequest,
      node: target.node ? { id: target.node } : undefined,
      page: target.page ? compact(target.page) : undefined,
    }),
  });
}

export const toRestReply = (c: any) => compact({ object: 'comment-reply', ...toRestEntry(c) });

const formatShape = { format: z.enum(['markdown', 'document']).optional() };
const formatQuery = z.strictObject(formatShape);
const asDocument = (input: RestInput<{ format?: string }>) => input.query.format === 'document';

const listCommentsQuery = z.strictObject({
  ...listQueryShape,
  ...formatShape,
  order: z.enum(['asc', 'desc']).optional(),
  status: z.enum(['all', 'open', 'resolved']).optional(),
  targetPage: z.string().max(256).optional(),
  authors: q.array(),
});

/** The route table for one scope; `cr` adds the change request segment. */
function commentRoutes(cr: boolean): RestRoute[] {
  const base = cr ? '/v1/spaces/:spaceId/change-requests/:changeRequestId/comments' : '/v1/spaces/:spaceId/comments';
  const scope = (p: Record<string, string>) => ({ spaceId: p.spaceId, changeRequestId: cr ? p.changeRequestId : null });
  const scopeVars = '$spaceId: ID!, $changeRequestId: String';
  const scopeArgs = 'spaceId: $spaceId, changeRequestId: $changeRequestId';
  const deleted = (key: string) => (d: any) => (d[key].deleted ? 205 : 204);
  return [
    {
      method: 'GET',
      path: base.replace(/\/comments$/, '/commenters'),
      query: z.strictObject(listQueryShape),
      document: `query(${scopeVars}, $first: Int, $after: String) { commenters(${scopeArgs}, first: $first, after: $after) { ${CONNECTION_FIELDS} nodes { ${MEMBER_FIELDS} } } }`,
      variables: (i) => ({ ...scope(i.params), ...pageVariables(i.query) }),
      // `total` is required by the OpenAPI document for commenter listings (contract notes).
      result: (d) => listEnvelope(d.commenters, toRestMember, { total: d.commenters.totalCount }),
    },
    {
      method: 'GET',
      path: base,
      query: listCommentsQuery,
      document: `query(${scopeVars}, $first: Int, $after: String, $order: CommentOrder, $status: CommentStatusFilter, $targetPage: String, $authors: [String!], $asDocument: Boolean!) {
        comments(${scopeArgs}, first: $first, after: $after, order: $order, status: $status, targetPage: $targetPage, authors: $authors) { ${CONNECTION_FIELDS} nodes { ${COMMENT_FIELDS} } } }`,
      variables: (i) => ({ ...scope(i.params), ...pageVariables(i.query), order: i.query.order, status: i.query.status, targetPage: i.query.targetPage, authors: i.query.authors, asDocument: asDocument(i) }),
      result: (d) => listEnvelope(d.comments, toRestComment),
    },
    {
      method: 'POST',
      path: base,
      query: formatQuery,
      body: PostCommentInput,
      document: `mutation($input: PostCommentInput!, $asDocument: Boolean!) { postComment(input: $input) { comment { ${COMMENT_FIELDS} } } }`,
      variables: (i) => ({ input: { ...scope(i.params), page: i.body.page, node: i.body.node, body: i.body.body }, asDocument: asDocument(i) }),
      result: (d) => toRestComment(d.postComment.comment),
    },
    {
      method: 'GET',
      path: `${base}/:commentId`,
      query: formatQuery,
      document: `query(${scopeVars}, $id: ID!, $asDocument: Boolean!) { comment(${scopeArgs}, id: $id) { ${COMMENT_FIELDS} } }`,
      variables: (i) => ({ ...scope(i.params), id: i.params.commentId, asDocument: asDocument(i) }),
      result: (d) => toRestComment(d.comment),
    },
    {
      method: 'PUT',
      path: `${base}/:commentId`,
      query: formatQuery,
      body: UpdateCommentInput,
      document: `mutation($input: UpdateCommentInput!, $asDocument: Boolean!) { updateComment(input: $input) { comment { ${COMMENT_FIELDS} } } }`,
      variables: (i) => ({ input: { ...scope(i.params), id: i.params.commentId, ...i.body }, asDocument: asDocument(i) }),
      result: (d) => toRestComment(d.updateComment.comment),
    },
    {
      method: 'DELETE',
      path: `${base}/:commentId`,
      document: `mutation($input: DeleteCommentInput!) { deleteComment(input: $input) { deleted } }`,
      variables: (i) => ({ input: { ...scope(i.params), id: i.params.commentId } }),
      status: deleted('deleteComment'),
    },
    {
      method: 'GET',
      path: `${base}/:commentId/replies`,
      query: z.strictObject({ ...listQueryShape, ...formatShape }),
      document: `query(${scopeVars}, $commentId: ID!, $first: Int, $after: String, $asDocument: Boolean!) {
        commentReplies(${scopeArgs}, commentId: $commentId, first: $first, after: $after) { ${CONNECTION_FIELDS} nodes { ${ENTRY_FIELDS} } } }`,
      variables: (i) => ({ ...scope(i.params), commentId: i.params.commentId, ...pageVariables(i.query), asDocument: asDocument(i) }),
      result: (d) => listEnvelope(d.commentReplies, toRestReply),
    },
    {
      method: 'POST',
      path: `${base}/:commentId/replies`,
      query: formatQuery,
      body: PostReplyInput,
      document: `mutation($input: PostCommentReplyInput!, $asDocument: Boolean!) { postCommentReply(input: $input) { reply { ${ENTRY_FIELDS} } } }`,
      variables: (i) => ({ input: { ...scope(i.params), commentId: i.params.commentId, body: i.body.body }, asDocument: asDocument(i) }),
      result: (d) => toRestReply(d.postCommentReply.reply),
    },
    {
      method: 'GET',
      path: `${base}/:commentId/replies/:commentReplyId`,
      query: formatQuery,
      document: `query(${scopeVars}, $commentId: ID!, $id: ID!, $asDocument: Boolean!) { commentReply(${scopeArgs}, commentId: $commentId, id: $id) { ${ENTRY_FIELDS} } }`,
      variables: (i) => ({ ...scope(i.params), commentId: i.params.commentId, id: i.params.commentReplyId, asDocument: asDocument(i) }),
      result: (d) => toRestReply(d.commentReply),
    },
    {
      method: 'PUT',
      path: `${base}/:commentId/replies/:commentReplyId`,
      query: formatQuery,
      body: UpdateReplyInput,
      document: `mutation($input: UpdateCommentReplyInput!, $asDocument: Boolean!) { updateCommentReply(input: $input) { reply { ${ENTRY_FIELDS} } } }`,
      variables: (i) => ({ input: { ...scope(i.params), commentId: i.params.commentId, id: i.params.commentReplyId, ...i.body }, asDocument: asDocument(i) }),
      result: (d) => toRestReply(d.updateCommentReply.reply),
    },
    {
      method: 'DELETE',
      path: `${base}/:commentId/replies/:commentReplyId`,
      document: `mutation($input: DeleteCommentReplyInput!) { deleteCommentReply(input: $input) { deleted } }`,
      variables: (i) => ({ input: { ...scope(i.params), commentId: i.params.commentId, id: i.params.commentReplyId } }),
      status: deleted('deleteCommentReply'),
    },
  ];
}

export const routes: RestRoute[] = [...commentRoutes(false), ...commentRoutes(true)];
