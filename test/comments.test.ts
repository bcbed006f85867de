import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers.ts';
import { expectValidResponse } from './openapi.ts';
import { applyChanges } from '../src/domain/revisions.ts';
import { newId } from '../src/lib/ids.ts';

let t: TestApp;
let spaceId: string;
let pageId: string;
let crId: string;
let commenter: Awaited<ReturnType<TestApp['createUser']>>;
let reader: Awaited<ReturnType<TestApp['createUser']>>;
let outsider: Awaited<ReturnType<TestApp['createUser']>>;

/** Apply a batch to the space's current revision and move the space to it. */
async function edit(changes: unknown[]) {
  return t.app.prisma.$transaction(async (tx) => {
    const space = await tx.space.findUniqueOrThrow({ where: { id: spaceId } });
    const r = await applyChanges(tx, { spaceId, baseRevisionId: space.revisionId!, changes, createdById: t.adminUser.id, storage: t.app.services.storage });
    await tx.space.update({ where: { id: spaceId }, data: { revisionId: r.revision.id } });
    return r;
  });
}

beforeAll(async () => {
  t = await startTestApp();
  const s = await t.rest('POST', `/v1/orgs/${t.org.id}/spaces`, { title: 'Discussed' });
  spaceId = s.body.id;
  const r = await edit([{ operation: 'insert_page', title: 'Intro', document: { markdown: 'Hello' } }]);
  pageId = r.outcomes[0].pageId;
  const space = await t.app.prisma.space.findUniqueOrThrow({ where: { id: spaceId } });
  crId = newId('ChangeRequest');
  await t.app.prisma.changeRequest.create({
    data: { id: crId, spaceId, number: 1, createdById: t.adminUser.id, revisionInitialId: space.revisionId!, revisionId: space.revisionId! },
  });
  commenter = await t.createUser('comment');
  reader = await t.createUser('read');
  outsider = await t.createUser(undefined);
});
afterAll(async () => {
  await t?.close();
});

describe('space comments', () => {
  it('posts, gets, lists with filters, validated against the OpenAPI document', async () => {
    const api = commenter.client;
    const posted = await api.spaces.postCommentInSpace(spaceId, { page: pageId, body: { markdown: 'Typo in the intro' } });
    expectValidResponse('POST', '/spaces/{spaceId}/comments', 200, posted.data);
    expect(posted.data).toMatchObject({ object: 'comment', status: 'open', replies: 0, body: { markdown: 'Typo in the intro' } });
    expect(posted.data.target.page).toMatchObject({ id: pageId, title: 'Intro', path: 'intro', outdated: false });
    expect(posted.data.permissions).toMatchObject({ view: true, edit: true, delete: true, reply: true });

    const got = await t.client().spaces.getCommentInSpace(spaceId, posted.data.id, { format: 'document' as never });
    expectValidResponse('GET', '/spaces/{spaceId}/comments/{commentId}', 200, got.data);
    expect('document' in got.data.body).toBe(true);
    expect(got.data.permissions.edit).toBe(true); // admins may edit others' comments

    await t.rest('POST', `/v1/spaces/${spaceId}/comments`, { body: { markdown: 'General remark' } });
    const all = await t.client().spaces.listCommentsInSpace(spaceId);
    expectValidResponse('GET', '/spaces/{spaceId}/comments', 200, all.data);
    expect(all.data.count).toBe(2);
    expect(all.data.items[0].body).toEqual({ markdown: 'General remark' }); // desc by default
    const asc = await t.rest('GET', `/v1/spaces/${spaceId}/comments?order=asc`);
    expect(asc.body.items[0].body.markdown).toBe('Typo in the intro');
    const onPage = await t.rest('GET', `/v1/spaces/${spaceId}/comments?targetPage=${pageId}`);
    expect(onPage.body.count).toBe(1);
    const byAuthor = await t.rest('GET', `/v1/spaces/${spaceId}/comments?authors=${commenter.user.id}&authors=${reader.user.id}`);
    expect(byAuthor.body.items.map((c: any) => c.postedBy.id)).toEqual([commenter.user.id]);
  });

  it('marks the target page outdated once the page changes', async () => {
    const posted = await t.rest('POST', `/v1/spaces/${spaceId}/comments`, { page: pageId, body: { markdown: 'before edit' } });
    await edit([{ operation: 'update_page', page: pageId, document: { markdown: 'Hello, edited' } }]);
    const after = await t.rest('GET', `/v1/spaces/${spaceId}/comments/${posted.body.id}`);
    expect(after.body.target.page.outdated).toBe(true);
  });

  it('resolves and reopens, setting and clearing resolvedAt/resolvedBy; counts open comments on the space', async () => {
    const c = await t.rest('POST', `/v1/spaces/${spaceId}/comments`, { body: { markdown: 'please resolve me' } }, commenter.token);
    const before = (await t.rest('GET', `/v1/spaces/${spaceId}`)).body.comments;
    const resolved = await t.client().spaces.updateCommentInSpace(spaceId, c.body.id, { resolved: true });
    expectValidResponse('PUT', '/spaces/{spaceId}/comments/{commentId}', 200, resolved.data);
    expect(resolved.data).toMatchObject({ status: 'resolved', resolvedBy: { id: t.adminUser.id } });
    expect((await t.rest('GET', `/v1/spaces/${spaceId}`)).body.comments).toBe(before - 1);
    expect((await t.rest('GET', `/v1/spaces/${spaceId}/comments?status=resolved`)).body.items.map((x: any) => x.id)).toContain(c.body.id);
    const reopened = await t.rest('PUT', `/v1/spaces/${spaceId}/comments/${c.body.id}`, { resolved: false }, commenter.token);
    expect(reopened.body.status).toBe('open');
    expect(reopened.body.resolvedAt).toBeUndefined();
    expect(reopened.body.resolvedBy).toBeUndefined();
  });

  it('adds and removes reactions idempotently, one per user per emoji', async () => {
    const c = await t.rest('POST', `/v1/spaces/${spaceId}/comments`, { body: { markdown: 'react to me' } });
    await t.rest('PUT', `/v1/spaces/${spaceId}/comments/${c.body.id}`, { addedReactions: ['👍'] }, commenter.token);
    await t.rest('PUT', `/v1/spaces/${spaceId}/comments/${c.body.id}`, { addedReactions: ['👍', '👍'] }, commenter.token);
    const twice = await t.rest('PUT', `/v1/spaces/${spaceId}/comments/${c.body.id}`, { addedReactions: ['👍', '🎉'] });
    expect(twice.body.reactions).toEqual([
      { emoji: '👍', count: 2, users: [expect.objectContaining({ user: expect.objectContaining({ id: commenter.user.id }) }), expect.objectContaining({ user: expect.objectContaining({ id: t.adminUser.id }) })] },
      { emoji: '🎉', count: 1, users: [expect.anything()] },
    ]);
    const removed = await t.rest('PUT', `/v1/spaces/${spaceId}/comments/${c.body.id}`, { removedReactions: ['👍'] }, commenter.token);
    expect(removed.body.reactions.find((r: any) => r.emoji === '👍').count).toBe(1);
    const again = await t.rest('PUT', `/v1/spaces/${spaceId}/comments/${c.body.id}`, { removedReactions: ['👍'] }, commenter.token);
    expect(again.body.reactions.find((r: any) => r.emoji === '👍').count).toBe(1);
  });

  it('replies: post, list, get, update, delete; the comment counts them', async () => {
    const c = await t.rest('POST', `/v1/spaces/${spaceId}/comments`, { body: { markdown: 'thread' } });
    const api = commenter.client;
    const reply = await api.spaces.postCommentReplyInSpace(spaceId, c.body.id, { body: { markdown: 'a reply' } });
    expectValidResponse('POST', '/spaces/{spaceId}/comments/{commentId}/replies', 200, reply.data);
    expect(reply.data.object).toBe('comment-reply');
    const list = await t.client().spaces.listCommentRepliesInSpace(spaceId, c.body.id);
    expectValidResponse('GET', '/spaces/{spaceId}/comments/{commentId}/replies', 200, list.data);
    expect(list.data.items.map((r) => r.id)).toEqual([reply.data.id]);
    expect((await t.rest('GET', `/v1/spaces/${spaceId}/comments/${c.body.id}`)).body.replies).toBe(1);
    const got = await t.client().spaces.getCommentReplyInSpace(spaceId, c.body.id, reply.data.id);
    expectValidResponse('GET', '/spaces/{spaceId}/comments/{commentId}/replies/{commentReplyId}', 200, got.data);
    const updated = await api.spaces.updateCommentReplyInSpace(spaceId, c.body.id, reply.data.id, { body: { markdown: 'edited reply' } });
    expectValidResponse('PUT', '/spaces/{spaceId}/comments/{commentId}/replies/{commentReplyId}', 200, updated.data);
    expect(updated.data.editedAt).toBeDefined();
    // Another commenter may not edit or delete it.
    const other = await t.createUser('comment');
    expect((await t.rest('PUT', `/v1/spaces/${spaceId}/comments/${c.body.id}/replies/${reply.data.id}`, { body: { markdown: 'hijack' } }, other.token)).status).toBe(403);
    expect((await t.rest('DELETE', `/v1/spaces/${spaceId}/comments/${c.body.id}/replies/${reply.data.id}`, undefined, other.token)).status).toBe(403);
    const del = await t.rest('DELETE', `/v1/spaces/${spaceId}/comments/${c.body.id}/replies/${reply.data.id}`, undefined, commenter.token);
    expect(del.status).toBe(205);
    expect((await t.rest('DELETE', `/v1/spaces/${spaceId}/comments/${c.body.id}/replies/${reply.data.id}`, undefined, commenter.token)).status).toBe(204);
    expect((await t.rest('GET', `/v1/spaces/${spaceId}/comments/${c.body.id}`)).body.replies).toBe(0);
  });

  it('deletes idempotently: 205, then 204; replies go with their comment', async () => {
    const c = await t.rest('POST', `/v1/spaces/${spaceId}/comments`, { body: { markdown: 'bye' } });
    await t.rest('POST', `/v1/spaces/${spaceId}/comments/${c.body.id}/replies`, { body: { markdown: 'r' } });
    expect((await t.rest('DELETE', `/v1/spaces/${spaceId}/comments/${c.body.id}`)).status).toBe(205);
    expect((await t.rest('DELETE', `/v1/spaces/${spaceId}/comments/${c.body.id}`)).status).toBe(204);
    expect((await t.rest('GET', `/v1/spaces/${spaceId}/comments/${c.body.id}`)).status).toBe(404);
    expect(await t.app.prisma.comment.count({ where: { parentId: c.body.id } })).toBe(0);
    expect((await t.rest('DELETE', `/v1/spaces/space_missing/comments/${c.body.id}`)).status).toBe(404);
  });

  it('bad input is a 400 naming the field and creates nothing', async () => {
    const count = await t.app.prisma.comment.count();
    for (const [body, field] of [
      [{}, 'body'],
      [{ body: { markdown: '' } }, 'body'],
      [{ body: { markdown: 1 } }, 'body'],
      [{ body: { markdown: 'x' }, page: 'page_nope' }, 'page'],
      [{ body: { markdown: 'x' }, extra: 1 }, 'extra'],
    ] as const) {
      const r = await t.rest('POST', `/v1/spaces/${spaceId}/comments`, body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error.message).toContain(field);
    }
    expect((await t.rest('GET', `/v1/spaces/${spaceId}/comments?status=closed`)).status).toBe(400);
    expect(await t.app.prisma.comment.count()).toBe(count);
  });

  it('a reader cannot comment (403), an outsider sees nothing (404), no token is 401', async () => {
    expect((await t.rest('POST', `/v1/spaces/${spaceId}/comments`, { body: { markdown: 'hi' } }, reader.token)).status).toBe(403);
    const list = await t.rest('GET', `/v1/spaces/${spaceId}/comments`, undefined, reader.token);
    expect(list.status).toBe(200);
    expect(list.body.items[0].permissions).toMatchObject({ view: true, reply: false, edit: false });
    expect((await t.rest('GET', `/v1/spaces/${spaceId}/comments`, undefined, outsider.token)).status).toBe(404);
    expect((await t.rest('POST', `/v1/spaces/${spaceId}/comments`, { body: { markdown: 'hi' } }, outsider.token)).status).toBe(404);
    expect((await t.rest('GET', `/v1/spaces/${spaceId}/comments`, undefined, null)).status).toBe(401);
  });
});

describe('change request comments', () => {
  it('live in the change request (by id or number), separate from the space', async () => {
    const posted = await t.client().spaces.postCommentInChangeRequest(spaceId, crId, { body: { markdown: 'on the CR' } });
    expectValidResponse('POST', '/spaces/{spaceId}/change-requests/{changeRequestId}/comments', 200, posted.data);
    expect(posted.data.target.changeRequest).toBe(crId);
    const byNumber = await t.client().spaces.listCommentsInChangeRequest(spaceId, '1');
    expectValidResponse('GET', '/spaces/{spaceId}/change-requests/{changeRequestId}/comments', 200, byNumber.data);
    expect(byNumber.data.items.map((c) => c.id)).toEqual([posted.data.id]);
    expect((await t.rest('GET', `/v1/spaces/${spaceId}/comments/${posted.data.id}`)).status).toBe(404);
    const got = await t.client().spaces.getCommentInChangeRequest(spaceId, crId, posted.data.id);
    expectValidResponse('GET', '/spaces/{spaceId}/change-requests/{changeRequestId}/comments/{commentId}', 200, got.data);
    const upd = await t.client().spaces.updateCommentInChangeRequest(spaceId, crId, posted.data.id, { resolved: true });
    expectValidResponse('PUT', '/spaces/{spaceId}/change-requests/{changeRequestId}/comments/{commentId}', 200, upd.data);
    const reply = await t.client().spaces.postCommentReplyInChangeRequest(spaceId, crId, posted.data.id, { body: { markdown: 'r' } });
    expectValidResponse('POST', '/spaces/{spaceId}/change-requests/{changeRequestId}/comments/{commentId}/replies', 200, reply.data);
    const replies = await t.client().spaces.listCommentRepliesInChangeRequest(spaceId, crId, posted.data.id);
    expectValidResponse('GET', '/spaces/{spaceId}/change-requests/{changeRequestId}/comments/{commentId}/replies', 200, replies.data);
    const gotReply = await t.client().spaces.getCommentReplyInChangeRequest(spaceId, crId, posted.data.id, reply.data.id);
    expectValidResponse('GET', '/spaces/{spaceId}/change-requests/{changeRequestId}/comments/{commentId}/replies/{commentReplyId}', 200, gotReply.data);
    const updReply = await t.rest('PUT', `/v1/spaces/${spaceId}/change-requests/${crId}/comments/${posted.data.id}/replies/${reply.data.id}`, { body: { markdown: 'r2' } });
    expect(updReply.status).toBe(200);
    expectValidResponse('PUT', '/spaces/{spaceId}/change-requests/{changeRequestId}/comments/{commentId}/replies/{commentReplyId}', 200, updReply.body);
    expect((await t.rest('DELETE', `/v1/spaces/${spaceId}/change-requests/${crId}/comments/${posted.data.id}/replies/${reply.data.id}`)).status).toBe(205);
    expect((await t.rest('DELETE', `/v1/spaces/${spaceId}/change-requests/${crId}/comments/${posted.data.id}`)).status).toBe(205);
    expect((await t.rest('DELETE', `/v1/spaces/${spaceId}/change-requests/${crId}/comments/${posted.data.id}`)).status).toBe(204);
    expect((await t.rest('GET', `/v1/spaces/${spaceId}/change-requests/99/comments`)).status).toBe(404);
  });
});

describe('commenters', () => {
  it('lists the members who commented, in the space and in a change request', async () => {
    const r = await t.client().spaces.listCommentersInSpace(spaceId);
    expectValidResponse('GET', '/spaces/{spaceId}/commenters', 200, r.data);
    expect(r.data.items.map((m) => m.user.id).sort()).toEqual([commenter.user.id, t.adminUser.id].sort());
    await t.rest('POST', `/v1/spaces/${spaceId}/change-requests/${crId}/comments`, { body: { markdown: 'cr remark' } }, commenter.token);
    const cr = await t.client().spaces.listCommentersInChangeRequest(spaceId, crId);
    expectValidResponse('GET', '/spaces/{spaceId}/change-requests/{changeRequestId}/commenters', 200, cr.data);
    expect(cr.data.items.map((m) => m.user.id)).toContain(commenter.user.id);
    expect((await t.rest('GET', `/v1/spaces/${spaceId}/commenters`, undefined, outsider.token)).status).toBe(404);
  });
});

describe('comments over GraphQL', () => {
  it('lists threads with their replies and reactions in a constant number of statements', async () => {
    const query = `query($spaceId: ID!) { comments(spaceId: $spaceId, first: 100) { totalCount nodes { id replyCount postedBy { displayName } reactions { emoji count } target { page { title outdated } } permissions { edit } replies(first: 10) { nodes { id postedBy { id } } } } } }`;
    const small = await t.countQueries(() => t.gql(query, { spaceId }));
    for (let i = 0; i < 15; i++) {
      const c = await t.rest('POST', `/v1/spaces/${spaceId}/comments`, { page: pageId, body: { markdown: `bulk ${i}` } }, commenter.token);
      await t.rest('POST', `/v1/spaces/${spaceId}/comments/${c.body.id}/replies`, { body: { markdown: 'r' } });
      await t.rest('PUT', `/v1/spaces/${spaceId}/comments/${c.body.id}`, { addedReactions: ['👍'] });
    }
    const large = await t.countQueries(() => t.gql(query, { spaceId }));
    expect(large.result.errors).toBeUndefined();
    expect(large.result.data.comments.nodes.length).toBeGreaterThan(15);
    expect(large.count).toBe(small.count);
  });

  it('describes pages that were deleted since, in a constant number of statements', async () => {
    const query = `query($spaceId: ID!) { comments(spaceId: $spaceId, first: 100) { nodes { id target { page { id title outdated } } } } }`;
    const gone: string[] = [];
    const count = async () => (await t.countQueries(() => t.gql(query, { spaceId }))).count;
    await count(); // warm: page trees are cached per revision
    const before = await count();
    for (const title of ['Doomed A', 'Doomed B', 'Doomed C']) {
      const p = (await edit([{ operation: 'insert_page', title, document: { markdown: title } }])).outcomes[0].pageId!;
      await t.rest('POST', `/v1/spaces/${spaceId}/comments`, { page: p, body: { markdown: `on ${title}` } });
      gone.push(p);
    }
    await edit(gone.map((page) => ({ operation: 'delete_page', page })));
    await count(); // warm the new revision's tree
    const { result, count: after } = await t.countQueries(() => t.gql(query, { spaceId }));
    const targets = result.data.comments.nodes.map((n: any) => n.target.page).filter((p: any) => p && gone.includes(p.id));
    expect(targets.map((p: any) => [p.title, p.outdated]).sort()).toEqual([['Doomed A', true], ['Doomed B', true], ['Doomed C', true]]);
    // One statement for the old versions of all three, whatever their number.
    expect(after).toBeLessThanOrEqual(before + 1);
  });

  it('reads the users who reacted with the reactions: reactors who wrote nothing cost no statement', async () => {
    const list = () => t.countQueries(() => t.rest('GET', `/v1/spaces/${spaceId}/comments?limit=100`));
    const before = await list();
    const c = (await t.rest('POST', `/v1/spaces/${spaceId}/comments`, { page: pageId, body: { markdown: 'react to me' } })).body;
    const reactors = [await t.createUser('edit'), await t.createUser('edit')];
    for (const r of reactors) expect((await t.rest('PUT', `/v1/spaces/${spaceId}/comments/${c.id}`, { addedReactions: ['🎉'] }, r.token)).status).toBe(200);
    const after = await list();
    expectValidResponse('GET', '/spaces/{spaceId}/comments', 200, after.result.body);
    const listed = after.result.body.items.find((x: any) => x.id === c.id);
    expect(listed.reactions).toEqual([{ emoji: '🎉', count: 2, users: reactors.map((r) => ({ user: expect.objectContaining({ id: r.user.id }), reactedAt: expect.any(String) })) }]);
    expect(after.count).toBe(before.count);
  });
});
