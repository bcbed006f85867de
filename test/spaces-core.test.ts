import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers.ts';
import { newId } from '../src/lib/ids.ts';
import { expectValidResponse } from './openapi.ts';
import { applyChanges, loadRevision, pagePaths, versionIdsOf } from '../src/domain/revisions.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.close();
});

describe('creating and reading spaces', () => {
  it('creates a space with an empty first revision and reads it through the official client', async () => {
    const created = await t.rest('POST', `/v1/orgs/${t.org.id}/spaces`, { title: 'Handbook', emoji: '📘', visibility: 'share-link' });
    expect(created.status).toBe(201);
    expect(created.headers.get('location')).toBe(created.body.urls.location);
    expect(created.body).toMatchObject({ object: 'space', title: 'Handbook', emoji: '📘', visibility: 'share-link', organization: t.org.id, comments: 0, changeRequests: 0 });
    const res = await t.client().spaces.getSpaceById(created.body.id);
    expectValidResponse('GET', '/spaces/{spaceId}', 200, res.data);
    expect(res.data.revision).toMatch(/^rev_/);
    expect(res.data.permissions.admin).toBe(true);
  });

  it('validates input, 403 for readers, 404 for outsiders and missing spaces', async () => {
    const bad = await t.rest('POST', `/v1/orgs/${t.org.id}/spaces`, { title: 'x'.repeat(51) });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toContain('title');
    const reader = await t.createUser('read');
    expect((await t.rest('POST', `/v1/orgs/${t.org.id}/spaces`, { title: 'A' }, reader.token)).status).toBe(403);
    const outsider = await t.createUser(undefined);
    const s = await t.rest('POST', `/v1/orgs/${t.org.id}/spaces`, { title: 'Private one' });
    expect((await t.rest('GET', `/v1/spaces/${s.body.id}`, undefined, outsider.token)).status).toBe(404);
    expect((await t.rest('GET', `/v1/spaces/space_missing`)).status).toBe(404);
  });

  it('space(id) reads the space row once, and still hides deleted spaces', async () => {
    const s = (await t.rest('POST', `/v1/orgs/${t.org.id}/spaces`, { title: 'Read once' })).body;
    const query = `query($id: ID!) { space(id: $id) { id title } }`;
    const { result, statements } = await t.countQueries(() => t.gql(query, { id: s.id }));
    expect(result.data.space).toEqual({ id: s.id, title: 'Read once' });
    expect(statements.filter((sql) => /FROM "public"\."Space"/.test(sql))).toHaveLength(1);
    await t.rest('DELETE', `/v1/spaces/${s.id}`);
    expect((await t.gql(query, { id: s.id })).errors?.[0].extensions?.code).toBe('NOT_FOUND');
    expect((await t.rest('GET', `/v1/spaces/${s.id}`)).status).toBe(404);
  });
});

describe('statements of a space read', () => {
  const isAccess = (sql: string) => /WITH teams AS/.test(sql);
  const isToken = (sql: string) => /"ApiToken"|"Token"/.test(sql);
  it('GET /v1/spaces/{id} costs at most 3 statements with the token read (token, space with counts, access), for an admin and for a reader with a team grant on an ancestor collection', async () => {
    const outer = (await t.rest('POST', `/v1/orgs/${t.org.id}/collections`, { title: 'Outer' })).body;
    const inner = (await t.rest('POST', `/v1/orgs/${t.org.id}/collections`, { title: 'Inner', parent: outer.id })).body;
    const space = (await t.rest('POST', `/v1/orgs/${t.org.id}/spaces`, { title: 'Counted', parent: inner.id })).body;
    const cr = await t.rest('POST', `/v1/spaces/${space.id}/change-requests`, { subject: 'One' });
    expect(cr.status).toBe(201);
    await t.rest('POST', `/v1/spaces/${space.id}/comments`, { body: { markdown: 'Hello' } });
    const admin = await t.createUser('admin');
    const reader = await t.createUser('read');
    const team = await t.app.prisma.team.create({ data: { id: newId('Team'), organizationId: t.org.id, title: 'Writers' } });
    await t.app.prisma.teamMember.create({ data: { teamId: team.id, userId: reader.user.id } });
    await t.app.prisma.contentGrant.create({ data: { id: newId('ContentGrant'), organizationId: t.org.id, collectionId: outer.id, teamId: team.id, role: 'edit' } });

    for (const [who, token, edit] of [['admin', admin.token, true], ['reader', reader.token, true]] as const) {
      // Each user's first request finds the token cache cold: the token read is counted.
      const { result, count, statements } = await t.countQueries(() => t.rest('GET', `/v1/spaces/${space.id}`, undefined, token));
      expect(result.status, who).toBe(200);
      expect(result.body, who).toMatchObject({ id: space.id, comments: 1, changeRequests: 1, changeRequestsOpen: 1, changeRequestsDraft: 0 });
      expect(result.body.permissions.edit, who).toBe(edit);
      expect(result.body.permissions.admin, who).toBe(who === 'admin');
      expect(statements.filter(isToken), who).toHaveLength(1);
      expect(statements.filter(isAccess), who).toHaveLength(1);
      expect(count, `${who}: ${statements.join('\n')}`).toBeLessThanOrEqual(3);
    }
    // Without the team's grant the reader keeps the organization's read role: the statement still decides.
    await t.app.prisma.teamMember.delete({ where: { teamId_userId: { teamId: team.id, userId: reader.user.id } } });
    const after = await t.rest('GET', `/v1/spaces/${space.id}`, undefined, reader.token);
    expect(after.body.permissions).toMatchObject({ view: true, edit: false });

    // The other space-scoped reads check access with the same single statement.
    for (const p of [`/v1/spaces/${space.id}/content`, `/v1/spaces/${space.id}/change-requests`]) {
      const { result, statements } = await t.countQueries(() => t.rest('GET', p, undefined, admin.token));
      expect(result.status, p).toBe(200);
      expect(statements.filter(isAccess), p).toHaveLength(1);
      expect(statements.filter((sql) => /"public"\."(Member|TeamMember|ContentGrant)"/.test(sql)), p).toHaveLength(0);
    }
  });
});

describe('revisions', () => {
  it('a batch on a 1,000-page space writes O(1) page rows and shares the rest', async () => {
    const s = await t.rest('POST', `/v1/orgs/${t.org.id}/spaces`, { title: 'Big' });
    const space = await t.app.prisma.space.findUniqueOrThrow({ where: { id: s.body.id } });
    const storage = t.app.services.storage;
    const changes = Array.from({ length: 50 }, (_, i) => ({ operation: 'insert_page', title: `Page ${i}`, document: { markdown: `Body ${i}` } }));
    let revisionId = space.revisionId!;
    for (let batch = 0; batch < 20; batch++) {
      const r = await t.app.prisma.$transaction((tx) =>
        applyChanges(tx, { spaceId: space.id, baseRevisionId: revisionId, changes, createdById: t.adminUser.id, storage }),
      );
      revisionId = r.revision.id;
    }
    const before = await loadRevision(t.app.prisma, revisionId);
    expect(versionIdsOf(before.tree)).toHaveLength(1000);
    const target = before.tree[500].id;
    const rowsBefore = await t.app.prisma.pageVersion.count({ where: { spaceId: space.id } });
    const { revision } = await t.app.prisma.$transaction((tx) =>
      applyChanges(tx, { spaceId: space.id, baseRevisionId: revisionId, changes: [{ operation: 'update_page', page: target, document: { markdown: 'changed' } }], createdById: t.adminUser.id, storage }),
    );
    const rowsAfter = await t.app.prisma.pageVersion.count({ where: { spaceId: space.id } });
    expect(rowsAfter - rowsBefore).toBe(1);
    const after = await loadRevision(t.app.prisma, revision.id);
    expect(after.revision.parents).toEqual([revisionId]);
    const shared = versionIdsOf(after.tree).filter((v) => versionIdsOf(before.tree).includes(v));
    expect(shared).toHaveLength(999);
  });

  it('inserts nested pages with refs, moves, deletes and reverts', async () => {
    const s = await t.rest('POST', `/v1/orgs/${t.org.id}/spaces`, { title: 'Docs' });
    const space = await t.app.prisma.space.findUniqueOrThrow({ where: { id: s.body.id } });
    const storage = t.app.services.storage;
    const apply = (baseRevisionId: string, changes: unknown[]) =>
      t.app.prisma.$transaction((tx) => applyChanges(tx, { spaceId: space.id, baseRevisionId, changes, createdById: t.adminUser.id, storage }));
    const r1 = await apply(space.revisionId!, [
      { operation: 'insert_page', ref: 'guide', document: { markdown: '# Guide\n\nSee [setup](./setup.md).' } },
      { operation: 'insert_page', ref: 'setup', title: 'Setup', document: { markdown: 'Install it.' } },
    ]);
    const guideId = r1.outcomes[0].pageId;
    const setupId = r1.outcomes[1].pageId;
    let loaded = await loadRevision(t.app.prisma, r1.revision.id);
    const guide = loaded.versions.get(loaded.tree[0].v)!;
    expect(guide.title).toBe('Guide');
    expect(guide.markdown).toBe(`See [setup](/pages/${setupId}).`);
    const r2 = await apply(r1.revision.id, [{ operation: 'update_page', page: setupId, into: guideId }]);
    loaded = await loadRevision(t.app.prisma, r2.revision.id);
    expect(pagePaths(loaded).get(setupId)).toBe('guide/setup');
    const r3 = await apply(r2.revision.id, [{ operation: 'delete_page', page: guideId }]);
    expect((await loadRevision(t.app.prisma, r3.revision.id)).tree).toEqual([]);
    const r4 = await apply(r3.revision.id, [{ operation: 'revert_page', page: guideId, revision: r2.revision.id }]);
    expect((await loadRevision(t.app.prisma, r4.revision.id)).tree.map((n) => n.id)).toEqual([guideId]);
    await expect(apply(r4.revision.id, [{ operation: 'update_page', page: 'page_nope', title: 'x' }])).rejects.toMatchObject({ code: 'BAD_REQUEST', field: 'changes.0.page' });
  });
});
