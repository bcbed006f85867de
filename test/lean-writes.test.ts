// A one-row write through the API costs three statements whatever the entry point: the space read
// and the caller's access (both the request's own checks), then one statement that updates the
// row, records the event (the outbox) and reads the answer's counters (docs/performance.md, "A
// one-row write, statement by statement"). The behaviour around it stays.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectAccess, startTestApp, type TestApp } from './helpers.ts';
import { expectValidResponse } from './openapi.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.close();
});

async function newSpace(title = 'Lean') {
  const r = await t.rest('POST', `/v1/orgs/${t.org.id}/spaces`, { title });
  expect(r.status).toBe(201);
  return r.body.id as string;
}

const eventsOf = (objectId: string) => t.app.prisma.event.findMany({ where: { objectId, type: 'space_updated' }, orderBy: { seq: 'asc' } });

describe('statements of a one-row update', () => {
  it('PATCH /v1/spaces/{id} {title}: 3 statements, the answer the contract’s, one event', async () => {
    const id = await newSpace();
    // Open a change request and a comment so the counters are not all zero.
    await t.gql(`mutation($id: ID!) { createChangeRequest(input: { spaceId: $id, subject: "cr" }) { changeRequest { id } } }`, { id });
    const { result: r, count, statements } = await t.countQueries(() => t.rest('PATCH', `/v1/spaces/${id}`, { title: 'Renamed' }));
    expect(r.status).toBe(200);
    expect(count, statements.join('\n---\n')).toBe(3);
    expect(statements.some((s) => /^\s*(BEGIN|COMMIT)/.test(s))).toBe(false);
    expect(r.body).toMatchObject({ id, title: 'Renamed', changeRequests: 1, changeRequestsOpen: expect.any(Number) });
    // The same answer a read gives.
    const read = await t.rest('GET', `/v1/spaces/${id}`);
    expect(r.body).toEqual(read.body);
    const events = await eventsOf(id);
    expect(events.map((e) => e.payload)).toEqual([{ title: 'Renamed', fields: ['title'] }]);
    expect(events[0]).toMatchObject({ organizationId: t.org.id, userId: t.adminUser.id, objectType: 'space', source: 'rest' });
  });

  it('GraphQL updateSpace: 3 statements with or without the counters', async () => {
    const id = await newSpace();
    const lean = await t.countQueries(() => t.gql(`mutation($id: ID!) { updateSpace(input: { id: $id, title: "G" }) { space { id title } } }`, { id }));
    expect(lean.result.errors).toBeUndefined();
    expect(lean.result.data.updateSpace.space.title).toBe('G');
    expect(lean.count, lean.statements.join('\n---\n')).toBe(3);
    const full = await t.countQueries(() =>
      t.gql(`mutation($id: ID!) { updateSpace(input: { id: $id, emoji: "🎉", editMode: locked }) { space { title emoji icon editMode commentCount changeRequests changeRequestsOpen changeRequestsDraft } } }`, { id }),
    );
    expect(full.result.errors).toBeUndefined();
    expect(full.result.data.updateSpace.space).toEqual({ title: 'G', emoji: '🎉', icon: null, editMode: 'locked', commentCount: 0, changeRequests: 0, changeRequestsOpen: 0, changeRequestsDraft: 0 });
    expect(full.count, full.statements.join('\n---\n')).toBe(3);
    expect((await eventsOf(id)).map((e) => e.payload)).toEqual([
      { title: 'G', fields: ['title'] },
      { title: 'G', fields: ['editMode', 'emoji', 'icon'] },
    ]);
  });
});

describe('behaviour stays', () => {
  it('the official client sees the update; enum columns and icon/emoji exclusivity hold', async () => {
    const id = await newSpace();
    const res = await t.client().spaces.updateSpaceById(id, { title: 'Client', icon: 'https://example.com/i.png', defaultLevel: 'read' as never });
    expect(res.data).toMatchObject({ id, title: 'Client', emoji: '', defaultLevel: 'read' });
    expect(res.data.urls.icon).toBe('https://example.com/i.png');
    const row = await t.app.prisma.space.findUniqueOrThrow({ where: { id } });
    expect(row).toMatchObject({ title: 'Client', icon: 'https://example.com/i.png', emoji: null, defaultLevel: 'read' });
    expectValidResponse('PATCH', '/spaces/{spaceId}', 200, res.data);
  });

  it('a deleted or missing space answers 404 and records nothing', async () => {
    const id = await newSpace();
    expect((await t.rest('DELETE', `/v1/spaces/${id}`)).status).toBe(205);
    const r = await t.rest('PATCH', `/v1/spaces/${id}`, { title: 'Ghost' });
    expect(r.status).toBe(404);
    expect((await t.rest('PATCH', `/v1/spaces/space_missing`, { title: 'Ghost' })).status).toBe(404);
    expect(await eventsOf(id)).toEqual([]);
    expect((await t.app.prisma.space.findUniqueOrThrow({ where: { id } })).title).toBe('Lean');
  });

  it('bad input is a 400 naming the field, nothing changed', async () => {
    const id = await newSpace();
    const r = await t.rest('PATCH', `/v1/spaces/${id}`, { editMode: 'frozen' });
    expect(r.status).toBe(400);
    expect(JSON.stringify(r.body)).toContain('editMode');
    expect(await eventsOf(id)).toEqual([]);
  });

  it('a reader gets 403, an outsider 404, and neither writes', async () => {
    const id = await newSpace();
    await expectAccess(t, { method: 'PATCH', path: `/v1/spaces/${id}`, body: { title: 'Nope' } }, { anonymous: 401, outsider: 404, reader: 403, editor: 403, admin: 200 });
    expect((await eventsOf(id)).map((e) => e.payload)).toEqual([{ title: 'Nope', fields: ['title'] }]);
  });

  it('a rename moves the published structure’s version of the sites showing the space', async () => {
    const id = await newSpace();
    const site = await t.rest('POST', `/v1/orgs/${t.org.id}/sites`, { title: 'Site' });
    expect(site.status).toBe(201);
    expect((await t.rest('POST', `/v1/orgs/${t.org.id}/sites/${site.body.id}/site-spaces`, { spaceId: id })).status).toBe(201);
    const version = async () => (await t.app.prisma.siteStructureVersion.findUnique({ where: { siteId: site.body.id } }))?.version ?? 0n;
    const before = await version();
    expect((await t.rest('PATCH', `/v1/spaces/${id}`, { title: 'Bumped' })).status).toBe(200);
    expect(await version()).toBeGreaterThan(before);
  });
});
