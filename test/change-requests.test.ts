// Change requests: create (numbers under concurrency), list, get, update, merge/update access,
// PDF access, over the official client, raw REST and GraphQL.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectAccess, startTestApp, type TestApp } from './helpers.ts';
import { expectValidResponse } from './openapi.ts';
import { newId } from '../src/lib/ids.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.close();
});

const CRS = (spaceId: string) => `/v1/spaces/${spaceId}/change-requests`;
const CR = (spaceId: string, cr: string | number) => `/v1/spaces/${spaceId}/change-requests/${cr}`;

async function newSpace(title = 'Docs') {
  const r = await t.rest('POST', `/v1/orgs/${t.org.id}/spaces`, { title });
  expect(r.status).toBe(201);
  return r.body.id as string;
}

async function newChangeRequest(spaceId: string, body: Record<string, unknown> = {}, token?: string) {
  const r = await t.rest('POST', CRS(spaceId), body, token);
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body;
}

async function author(spaceId: string, cr: string | number, changes: unknown[], token?: string) {
  const r = await t.rest('POST', `${CR(spaceId, cr)}/content`, { changes }, token);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body;
}

describe('creating change requests', () => {
  it('creates one through the official client (201, valid), based on the current space revision', async () => {
    const spaceId = await newSpace();
    const space = await t.rest('GET', `/v1/spaces/${spaceId}`);
    const res = await t.client().spaces.createChangeRequest(spaceId, { subject: 'Fix typos', agentTaskId: 'task_123' });
    expect(res.status).toBe(201);
    expectValidResponse('POST', '/spaces/{spaceId}/change-requests', 201, res.data);
    expect(res.data).toMatchObject({
      object: 'change-request',
      number: 1,
      status: 'open',
      subject: 'Fix typos',
      revision: space.body.revision,
      revisionInitial: space.body.revision,
      outdated: false,
      comments: 0,
      createdBy: { object: 'user', id: t.adminUser.id },
    });
    expect(res.data.id).toMatch(/^cr_/);
    expect(res.data.urls.location).toContain(`/v1/spaces/${spaceId}/change-requests/${res.data.id}`);
    expect(res.data.revisionMerged).toBeUndefined();
    const row = await t.app.prisma.changeRequest.findUniqueOrThrow({ where: { id: res.data.id } });
    expect(row.agentTaskId).toBe('task_123');

    // No body fields at all: subject is empty, the next number is handed out.
    const second = await t.rest('POST', CRS(spaceId), {});
    expect(second.status).toBe(201);
    expect(second.body).toMatchObject({ number: 2, subject: '' });
    const noBody = await t.rest('POST', CRS(spaceId));
    expect(noBody.status).toBe(201);
    expect(noBody.body.number).toBe(3);
  });

  it('hands out unique numbers under 10 concurrent creations', async () => {
    const spaceId = await newSpace();
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => t.rest('POST', CRS(spaceId), { subject: `CR ${i}` })));
    expect(results.map((r) => r.status)).toEqual(Array(10).fill(201));
    const numbers = results.map((r) => r.body.number).sort((a, b) => a - b);
    expect(numbers).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    const space = await t.app.prisma.space.findUniqueOrThrow({ where: { id: spaceId } });
    expect(space.changeRequestSeq).toBe(10);
    const counts = await t.rest('GET', `/v1/spaces/${spaceId}`);
    expect(counts.body).toMatchObject({ changeRequests: 10, changeRequestsOpen: 10, changeRequestsDraft: 0 });
  });

  it('validates the body (400 naming the field, nothing created)', async () => {
    const spaceId = await newSpace();
    for (const [body, field] of [
      [{ subject: 'x'.repeat(101) }, 'subject'],
      [{ subject: 42 }, 'subject'],
      [{ agentTaskId: 7 }, 'agentTaskId'],
      [{ title: 'nope' }, 'title'],
    ] as const) {
      const r = await t.rest('POST', CRS(spaceId), body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error).toEqual({ code: 400, message: expect.stringContaining(field) });
    }
    expect(await t.app.prisma.changeRequest.count({ where: { spaceId } })).toBe(0);
    const space = await t.app.prisma.space.findUniqueOrThrow({ where: { id: spaceId } });
    expect(space.changeRequestSeq).toBe(0);
  });

  it('401 without a token, 403 for readers, 404 for outsiders and missing spaces', async () => {
    const spaceId = await newSpace();
    expect((await t.rest('POST', CRS(spaceId), {}, null)).status).toBe(401);
    const reader = await t.createUser('read');
    const denied = await t.rest('POST', CRS(spaceId), {}, reader.token);
    expect(denied.status).toBe(403);
    const outsider = await t.createUser(undefined);
    expect((await t.rest('POST', CRS(spaceId), {}, outsider.token)).status).toBe(404);
    expect((await t.rest('POST', CRS('space_missing'), {})).status).toBe(404);
    const editor = await t.createUser('edit');
    expect((await t.rest('POST', CRS(spaceId), {}, editor.token)).status).toBe(201);
    expect(await t.app.prisma.changeRequest.count({ where: { spaceId } })).toBe(1);
  });
});

describe('reading change requests', () => {
  it('gets one by id or by number; 404 for missing ones and outsiders; readers may read', async () => {
    const spaceId = await newSpace();
    const cr = await newChangeRequest(spaceId, { subject: 'Read me' });
    const byId = await t.client().spaces.getChangeRequestById(spaceId, cr.id);
    expectValidResponse('GET', '/spaces/{spaceId}/change-requests/{changeRequestId}', 200, byId.data);
    expect(byId.data.id).toBe(cr.id);
    const byNumber = await t.rest('GET', CR(spaceId, cr.number));
    expect(byNumber.status).toBe(200);
    expect(byNumber.body.id).toBe(cr.id);

    expect((await t.rest('GET', CR(spaceId, 99))).status).toBe(404);
    expect((await t.rest('GET', CR(spaceId, 'cr_missing'))).status).toBe(404);
    expect((await t.rest('GET', CR(spaceId, '99999999999999'))).status).toBe(404);
    expect((await t.rest('GET', CR(spaceId, '9999999999'))).status).toBe(404);
    // Another space's change request is not reachable through this space.
    const other = await newSpace();
    expect((await t.rest('GET', CR(other, cr.id))).status).toBe(404);
    expect((await t.rest('GET', CR(spaceId, cr.id), undefined, null)).status).toBe(401);
    const outsider = await t.createUser(undefined);
    expect((await t.rest('GET', CR(spaceId, cr.id), undefined, outsider.token)).status).toBe(404);
    const reader = await t.createUser('read');
    expect((await t.rest('GET', CR(spaceId, 1), undefined, reader.token)).status).toBe(200);
  });

  it('lists open ones by default, filters by status and contributor, pages with next', async () => {
    const spaceId = await newSpace();
    const editor = await t.createUser('edit');
    const a = await newChangeRequest(spaceId, { subject: 'A' });
    const b = await newChangeRequest(spaceId, { subject: 'B' }, editor.token);
    const c = await newChangeRequest(spaceId, { subject: 'C' });
    const d = await newChangeRequest(spaceId, { subject: 'D' });
    await t.rest('PATCH', CR(spaceId, c.id), { status: 'draft' });
    await t.rest('PATCH', CR(spaceId, d.id), { status: 'archived' });
    // The editor contributes a revision to A without being its author.
    await author(spaceId, a.id, [{ operation: 'insert_page', title: 'By the editor', document: { markdown: 'x' } }], editor.token);

    const res = await t.client().spaces.listChangeRequestsForSpace(spaceId);
    expectValidResponse('GET', '/spaces/{spaceId}/change-requests', 200, res.data);
    expect(res.data.items.map((i) => i.subject)).toEqual(['B', 'A']);
    expect(res.data.count).toBe(2);
    expect(res.data.next).toBeUndefined();

    const drafts = await t.rest('GET', `${CRS(spaceId)}?status=draft`);
    expect(drafts.body.items.map((i: any) => i.id)).toEqual([c.id]);
    const archived = await t.client().spaces.listChangeRequestsForSpace(spaceId, { status: 'archived' as any });
    expect(archived.data.items.map((i) => i.id)).toEqual([d.id]);

    const byEditor = await t.rest('GET', `${CRS(spaceId)}?contributor=${editor.user.id}`);
    expect(byEditor.body.items.map((i: any) => i.id).sort()).toEqual([a.id, b.id].sort());
    expectValidResponse('GET', '/spaces/{spaceId}/change-requests', 200, byEditor.body);
    const byAdmin = await t.rest('GET', `${CRS(spaceId)}?contributor=${t.adminUser.id}`);
    expect(byAdmin.body.items.map((i: any) => i.id)).toEqual([a.id]);

    const page1 = await t.rest('GET', `${CRS(spaceId)}?limit=1`);
    expect(page1.body.items.map((i: any) => i.id)).toEqual([b.id]);
    expect(page1.body.count).toBe(2);
    expect(page1.body.next.page).toEqual(expect.any(String));
    const page2 = await t.rest('GET', `${CRS(spaceId)}?limit=1&page=${encodeURIComponent(page1.body.next.page)}`);
    expect(page2.body.items.map((i: any) => i.id)).toEqual([a.id]);
    expect(page2.body.next).toBeUndefined();

    const bad = await t.rest('GET', `${CRS(spaceId)}?status=all`);
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toContain('status');
    expect((await t.rest('GET', `${CRS(spaceId)}?limit=5000`)).body.error.message).toContain('limit');
    expect((await t.rest('GET', `${CRS(spaceId)}?sort=x`)).status).toBe(400);
    await expectAccess(t, { method: 'GET', path: CRS(spaceId) }, { anonymous: 401, outsider: 404 });
    expect((await t.rest('GET', CRS('space_missing'))).status).toBe(404);
  });

  it('counts open comments on the change request', async () => {
    const spaceId = await newSpace();
    const cr = await newChangeRequest(spaceId);
    const comment = (data: Record<string, unknown>) =>
      t.app.prisma.comment.create({ data: { id: newId('Comment'), spaceId, changeRequestId: cr.id, authorId: t.adminUser.id, markdown: 'hi', ...data } });
    const first = await comment({});
    await comment({ status: 'resolved' });
    await comment({ parentId: first.id, id: newId('CommentReply') });
    await t.app.prisma.comment.create({ data: { id: newId('Comment'), spaceId, authorId: t.adminUser.id, markdown: 'on the space' } });
    const r = await t.rest('GET', CR(spaceId, cr.id));
    expect(r.body.comments).toBe(1);
  });

  it('lists without N+1: the statement count does not grow with the page size', async () => {
    const spaceId = await newSpace();
    const editor = await t.createUser('edit');
    for (let i = 0; i < 12; i++) await newChangeRequest(spaceId, { subject: `N${i}` }, i % 2 ? editor.token : undefined);
    const query = (first: number) =>
      t.gql(
        `query($id: ID!, $first: Int) { space(id: $id) { changeRequestList(first: $first) { totalCount nodes { id number outdated commentCount createdBy { id displayName } permissions { edit merge } urls { location } } } } }`,
        { id: spaceId, first },
      );
    const small = await t.countQueries(() => query(2));
    const large = await t.countQueries(() => query(12));
    expect(large.result.errors).toBeUndefined();
    expect(large.result.data.space.changeRequestList.nodes).toHaveLength(12);
    expect(large.count).toBe(small.count);
  });
});

describe('updating change requests', () => {
  it('lets the author change subject and status; validates; merged only by merging', async () => {
    const spaceId = await newSpace();
    const editor = await t.createUser('edit');
    const cr = await newChangeRequest(spaceId, { subject: 'Draft me' }, editor.token);
    const res = await editor.client.spaces.updateChangeRequestById(spaceId, cr.id, { subject: 'Renamed', status: 'draft' });
    expectValidResponse('PATCH', '/spaces/{spaceId}/change-requests/{changeRequestId}', 200, res.data);
    expect(res.data).toMatchObject({ subject: 'Renamed', status: 'draft' });
    const byNumber = await t.rest('PATCH', CR(spaceId, cr.number), { status: 'open' }, editor.token);
    expect(byNumber.body.status).toBe('open');

    for (const [body, field] of [
      [{ status: 'merged' }, 'status'],
      [{ status: 'closed' }, 'status'],
      [{ subject: 'y'.repeat(101) }, 'subject'],
      [{ subject: null }, 'subject'],
      [{ revision: 'rev_x' }, 'revision'],
    ] as const) {
      const r = await t.rest('PATCH', CR(spaceId, cr.id), body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error.message).toContain(field);
    }
    const after = await t.rest('GET', CR(spaceId, cr.id));
    expect(after.body).toMatchObject({ subject: 'Renamed', status: 'open' });
  });

  it('403 for members below edit who are not the author, 404 outsiders and missing, 401', async () => {
    const spaceId = await newSpace();
    const cr = await newChangeRequest(spaceId, { subject: 'Keep' });
    await expectAccess(t, { method: 'PATCH', path: CR(spaceId, cr.id), body: { subject: 'Hacked' } }, { commenter: 403, outsider: 404, anonymous: 401 });
    expect((await t.rest('PATCH', CR(spaceId, 42), { subject: 'Hacked' })).status).toBe(404);
    expect((await t.rest('GET', CR(spaceId, cr.id))).body.subject).toBe('Keep');
    // Another editor (not the author) may.
    const editor = await t.createUser('edit');
    expect((await t.rest('PATCH', CR(spaceId, cr.id), { status: 'archived' }, editor.token)).body.status).toBe('archived');
  });

  it('a merged change request keeps its status (409) but may be renamed', async () => {
    const spaceId = await newSpace();
    const cr = await newChangeRequest(spaceId);
    expect((await t.rest('POST', `${CR(spaceId, cr.id)}/merge`)).body.result).toBe('merge');
    const r = await t.rest('PATCH', CR(spaceId, cr.id), { status: 'open' });
    expect(r.status).toBe(409);
    expect((await t.rest('PATCH', CR(spaceId, cr.id), { subject: 'Shipped' })).body).toMatchObject({ subject: 'Shipped', status: 'merged' });
  });
});

describe('merge and update: access and states', () => {
  it('merge needs review: editors and readers 403, outsiders 404, 401, missing 404; nothing changes', async () => {
    const spaceId = await newSpace();
    const cr = await newChangeRequest(spaceId);
    await author(spaceId, cr.id, [{ operation: 'insert_page', title: 'New', document: { markdown: 'hello' } }]);
    const before = await t.app.prisma.space.findUniqueOrThrow({ where: { id: spaceId } });
    await expectAccess(t, { method: 'POST', path: `${CR(spaceId, cr.id)}/merge` }, { editor: 403, reader: 403, outsider: 404, anonymous: 401 });
    expect((await t.rest('POST', `${CR(spaceId, 77)}/merge`)).status).toBe(404);
    const after = await t.app.prisma.space.findUniqueOrThrow({ where: { id: spaceId } });
    expect(after.revisionId).toBe(before.revisionId);
    expect((await t.rest('GET', CR(spaceId, cr.id))).body.status).toBe('open');

    const reviewer = await t.createUser('review');
    const res = await reviewer.client.spaces.mergeChangeRequest(spaceId, String(cr.number));
    expectValidResponse('POST', '/spaces/{spaceId}/change-requests/{changeRequestId}/merge', 200, res.data);
    expect(res.data.result).toBe('merge');
    // Merging twice is a conflict of states.
    expect((await t.rest('POST', `${CR(spaceId, cr.id)}/merge`)).status).toBe(409);
  });

  it('refuses to merge archived change requests and on locked spaces (409), changing nothing', async () => {
    const spaceId = await newSpace();
    const cr = await newChangeRequest(spaceId);
    await author(spaceId, cr.id, [{ operation: 'insert_page', title: 'New', document: { markdown: 'hello' } }]);
    await t.rest('PATCH', CR(spaceId, cr.id), { status: 'archived' });
    expect((await t.rest('POST', `${CR(spaceId, cr.id)}/merge`)).status).toBe(409);
    await t.rest('PATCH', CR(spaceId, cr.id), { status: 'open' });
    const before = await t.app.prisma.space.update({ where: { id: spaceId }, data: { editMode: 'locked' } });
    const locked = await t.rest('POST', `${CR(spaceId, cr.id)}/merge`);
    expect(locked.status).toBe(409);
    expect(locked.body.error.message).toContain('locked');
    expect((await t.app.prisma.space.findUniqueOrThrow({ where: { id: spaceId } })).revisionId).toBe(before.revisionId);
    expect((await t.rest('GET', CR(spaceId, cr.id))).body.status).toBe('open');
    await t.app.prisma.space.update({ where: { id: spaceId }, data: { editMode: 'live' } });
    expect((await t.rest('POST', `${CR(spaceId, cr.id)}/merge`)).body.result).toBe('merge');
  });

  it('update needs edit; an up-to-date change request updates to itself', async () => {
    const spaceId = await newSpace();
    const cr = await newChangeRequest(spaceId);
    const res = await t.client().spaces.updateChangeRequest(spaceId, cr.id);
    expectValidResponse('POST', '/spaces/{spaceId}/change-requests/{changeRequestId}/update', 200, res.data);
    expect(res.data).toEqual({ result: 'update', revision: cr.revision });
    const reader = await t.createUser('read');
    expect((await t.rest('POST', `${CR(spaceId, cr.id)}/update`, undefined, reader.token)).status).toBe(403);
    const outsider = await t.createUser(undefined);
    expect((await t.rest('POST', `${CR(spaceId, cr.id)}/update`, undefined, outsider.token)).status).toBe(404);
    expect((await t.rest('POST', `${CR(spaceId, cr.id)}/update`, undefined, null)).status).toBe(401);
    expect((await t.rest('POST', `${CR(spaceId, 'cr_nope')}/update`)).status).toBe(404);
    const editor = await t.createUser('edit');
    expect((await t.rest('POST', `${CR(spaceId, cr.id)}/update`, undefined, editor.token)).status).toBe(200);
  });
});

describe('change requests over GraphQL', () => {
  it('creates, reads by number, lists on the space, and reports errors with codes', async () => {
    const spaceId = await newSpace();
    const created = await t.gql(
      `mutation($input: CreateChangeRequestInput!) { createChangeRequest(input: $input) { changeRequest { id number status subject outdated commentCount createdBy { id } space { id } permissions { view edit editContent review merge } } } }`,
      { input: { spaceId, subject: 'From GraphQL' } },
    );
    expect(created.errors).toBeUndefined();
    const cr = created.data.createChangeRequest.changeRequest;
    expect(cr).toMatchObject({ number: 1, status: 'open', subject: 'From GraphQL', outdated: false, commentCount: 0, createdBy: { id: t.adminUser.id }, space: { id: spaceId } });
    expect(cr.permissions).toEqual({ view: true, edit: true, editContent: true, review: true, merge: true });

    const byNumber = await t.gql(`query($s: ID!) { changeRequest(spaceId: $s, idOrNumber: "1") { id } }`, { s: spaceId });
    expect(byNumber.data.changeRequest.id).toBe(cr.id);
    const node = await t.gql(`query($id: ID!) { node(id: $id) { id ... on ChangeRequest { number } } }`, { id: cr.id });
    expect(node.data.node).toEqual({ id: cr.id, number: 1 });
    const list = await t.gql(`query($s: ID!) { space(id: $s) { changeRequests changeRequestList(first: 10) { totalCount nodes { id } } } }`, { s: spaceId });
    expect(list.data.space.changeRequestList).toEqual({ totalCount: 1, nodes: [{ id: cr.id }] });

    const reader = await t.createUser('read');
    const readerView = await t.gql(`query($s: ID!) { changeRequest(spaceId: $s, idOrNumber: "1") { permissions { view edit merge } } }`, { s: spaceId }, reader.token);
    expect(readerView.data.changeRequest.permissions).toEqual({ view: true, edit: false, merge: false });

    const bad = await t.gql(`mutation($input: CreateChangeRequestInput!) { createChangeRequest(input: $input) { changeRequest { id } } }`, {
      input: { spaceId, subject: 'z'.repeat(101) },
    });
    expect(bad.errors?.[0].extensions).toMatchObject({ code: 'BAD_REQUEST', field: 'subject' });
    const denied = await t.gql(`mutation($input: CreateChangeRequestInput!) { createChangeRequest(input: $input) { changeRequest { id } } }`, { input: { spaceId } }, reader.token);
    expect(denied.errors?.[0].extensions?.code).toBe('FORBIDDEN');
    const updated = await t.gql(`mutation($input: UpdateChangeRequestInput!) { updateChangeRequest(input: $input) { changeRequest { status } } }`, {
      input: { spaceId, changeRequestId: '1', status: 'merged' },
    });
    expect(updated.errors?.[0].extensions).toMatchObject({ code: 'BAD_REQUEST', field: 'status' });
    const missing = await t.gql(`query($s: ID!) { changeRequest(spaceId: $s, idOrNumber: "12") { id } }`, { s: spaceId });
    expect(missing.errors?.[0].extensions?.code).toBe('NOT_FOUND');
  });

  it('updateChangeRequest, updateChangeRequestFromMain and exportChangeRequestPdf run the same rules', async () => {
    const spaceId = await newSpace();
    const cr = await newChangeRequest(spaceId, { subject: 'GQL' });
    const upd = await t.gql(`mutation($input: UpdateChangeRequestInput!) { updateChangeRequest(input: $input) { changeRequest { subject status } } }`, {
      input: { spaceId, changeRequestId: cr.id, subject: 'GQL 2', status: 'draft' },
    });
    expect(upd.data.updateChangeRequest.changeRequest).toEqual({ subject: 'GQL 2', status: 'draft' });
    const fromMain = await t.gql(`mutation($input: UpdateChangeRequestFromMainInput!) { updateChangeRequestFromMain(input: $input) { result revision conflicts { pageId } changeRequest { outdated } } }`, {
      input: { spaceId, changeRequestId: String(cr.number) },
    });
    expect(fromMain.data.updateChangeRequestFromMain).toEqual({ result: 'update', revision: cr.revision, conflicts: [], changeRequest: { outdated: false } });
    const pdf = await t.gql(`mutation($input: ExportChangeRequestPdfInput!) { exportChangeRequestPdf(input: $input) { url } }`, { input: { spaceId, changeRequestId: cr.id, only: true } });
    expect(pdf.errors?.[0].extensions).toMatchObject({ code: 'BAD_REQUEST', field: 'page' });
    const reader = await t.createUser('read');
    const denied = await t.gql(`mutation($input: MergeChangeRequestInput!) { mergeChangeRequest(input: $input) { result } }`, { input: { spaceId, changeRequestId: cr.id } }, reader.token);
    expect(denied.errors?.[0].extensions?.code).toBe('FORBIDDEN');
    const outsider = await t.createUser(undefined);
    const hidden = await t.gql(`query($s: ID!) { changeRequest(spaceId: $s, idOrNumber: "1") { id } }`, { s: spaceId }, outsider.token);
    expect(hidden.errors?.[0].extensions?.code).toBe('NOT_FOUND');
  });
});
