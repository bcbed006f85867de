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

const newOrg = async (title = 'Org') => (await t.gql(`mutation($t: String!) { createOrganization(input: { title: $t }) { id } }`, { t: title })).data.createOrganization.id as string;

async function collection(orgId: string, body: Record<string, unknown> = {}) {
  const r = await t.rest('POST', `/v1/orgs/${orgId}/collections`, { title: 'C', ...body });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body.id as string;
}

async function space(orgId: string, body: Record<string, unknown> = {}) {
  const r = await t.rest('POST', `/v1/orgs/${orgId}/spaces`, { title: 'S', ...body });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body.id as string;
}

/** Children of a parent in order, as ids, with dense positions checked. */
async function children(orgId: string, parentId: string | null) {
  const [cols, spaces] = await Promise.all([
    t.app.prisma.collection.findMany({ where: { organizationId: orgId, parentId } }),
    t.app.prisma.space.findMany({ where: { organizationId: orgId, parentId, deletedAt: null } }),
  ]);
  const items = [...cols, ...spaces].sort((a, b) => a.position - b.position);
  expect(items.map((i) => i.position)).toEqual(items.map((_i, n) => n));
  return items.map((i) => i.id);
}

const col = (id: string) => t.app.prisma.collection.findUnique({ where: { id } });
const spc = (id: string) => t.app.prisma.space.findUnique({ where: { id } });

describe('create, get and list collections', () => {
  it('creates (201) and reads through the official client', async () => {
    const res = await t.client().orgs.createCollection(t.org.id, { title: 'Guides' });
    expect(res.status).toBe(201);
    expectValidResponse('POST', '/orgs/{organizationId}/collections', 201, res.data);
    expect(res.data).toMatchObject({ object: 'collection', title: 'Guides', organization: t.org.id, defaultLevel: null, permissions: { admin: true, view: true, create: true } });
    const child = await t.client().orgs.createCollection(t.org.id, { title: 'Nested', parent: res.data.id });
    expect(child.data.parent).toBe(res.data.id);
    expect((await col(child.data.id))!.ancestorIds).toEqual([res.data.id]);
    const untitled = await t.rest('POST', `/v1/orgs/${t.org.id}/collections`, {});
    expect(untitled.status).toBe(201);
    expect(untitled.body.title).toBe('Untitled');

    const got = await t.client().collections.getCollectionById(res.data.id);
    expectValidResponse('GET', '/collections/{collectionId}', 200, got.data);
    expect(got.data.urls.location).toContain(`/v1/collections/${res.data.id}`);
  });

  it('400 naming the field and nothing created; 401, 403 below create, 404 for outsiders', async () => {
    const org = await newOrg('Create checks');
    for (const [body, field] of [
      [{ title: 'x'.repeat(51) }, 'title'],
      [{ title: 5 }, 'title'],
      [{ parent: 'col_missing' }, 'parent'],
      [{ description: 'not here' }, 'description'],
    ] as const) {
      const r = await t.rest('POST', `/v1/orgs/${org}/collections`, body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error.message).toContain(field);
    }
    expect(await t.app.prisma.collection.count({ where: { organizationId: org } })).toBe(0);
    await expectAccess(t, { method: 'POST', path: `/v1/orgs/${org}/collections`, body: { title: 'x' } }, { anonymous: 401, editor: 403, outsider: 404 }, { organizationId: org });
    expect((await t.rest('POST', `/v1/orgs/org_missing/collections`, { title: 'x' })).status).toBe(404);
    expect((await t.rest('GET', `/v1/collections/col_missing`)).status).toBe(404);
    const c = await collection(org);
    await expectAccess(t, { method: 'GET', path: `/v1/collections/${c}` }, { outsider: 404, anonymous: 401 }, { organizationId: org });
  });

  it('lists nested or top-level collections, only those the caller may see', async () => {
    const org = await newOrg('Listing');
    const top1 = await collection(org, { title: 'Top 1' });
    const top2 = await collection(org, { title: 'Top 2' });
    const nested = await collection(org, { title: 'Nested', parent: top1 });
    const deep = await collection(org, { title: 'Deep', parent: nested });

    const all = await t.client().orgs.listCollectionsInOrganizationById(org);
    expectValidResponse('GET', '/orgs/{organizationId}/collections', 200, all.data);
    expect(all.data.items.map((c) => c.id)).toEqual([top1, top2, nested, deep]);
    expect(all.data.count).toBe(4);
    const top = await t.client().orgs.listCollectionsInOrganizationById(org, { nested: false });
    expect(top.data.items.map((c) => c.id)).toEqual([top1, top2]);
    expect(top.data.count).toBe(2);
    const paged = await t.rest('GET', `/v1/orgs/${org}/collections?limit=3`);
    expect(paged.body.items).toHaveLength(3);
    const rest = await t.rest('GET', `/v1/orgs/${org}/collections?limit=3&page=${encodeURIComponent(paged.body.next.page)}`);
    expect(rest.body.items.map((c: any) => c.id)).toEqual([deep]);
    expect(rest.body.next).toBeUndefined();
    expect((await t.rest('GET', `/v1/orgs/${org}/collections?nested=maybe`)).body.error.message).toContain('nested');

    // A guest sees what is granted to them, and what is inside it.
    const guest = await t.createUser(null, { organizationId: org });
    await t.app.prisma.contentGrant.create({ data: { id: newId('ContentGrant'), organizationId: org, collectionId: nested, userId: guest.user.id, role: 'read' } });
    const seen = await t.rest('GET', `/v1/orgs/${org}/collections`, undefined, guest.token);
    expect(seen.body.items.map((c: any) => c.id)).toEqual([nested, deep]);
    expect(seen.body.count).toBe(2);
    for (const id of [top1, top2, nested, deep]) {
      const r = await t.rest('GET', `/v1/collections/${id}`, undefined, guest.token);
      expect(r.status, id).toBe([nested, deep].includes(id) ? 200 : 404);
    }
    const outsider = await t.createUser(undefined);
    expect((await t.rest('GET', `/v1/orgs/${org}/collections`, undefined, outsider.token)).status).toBe(404);
  });

  it('lists the spaces of a collection in order, and GraphQL nests spaces and collections', async () => {
    const org = await newOrg('Collection spaces');
    const c = await collection(org, { title: 'Box' });
    const s1 = await space(org, { parent: c, title: 'One' });
    const sub = await collection(org, { parent: c, title: 'Sub' });
    const s2 = await space(org, { parent: c, title: 'Two' });
    const deleted = await space(org, { parent: c, title: 'Gone' });
    await t.rest('DELETE', `/v1/spaces/${deleted}`);
    const res = await t.client().collections.listSpacesInCollectionById(c);
    expectValidResponse('GET', '/collections/{collectionId}/spaces', 200, res.data);
    expect(res.data.items.map((s) => s.id)).toEqual([s1, s2]);
    expect(res.data.count).toBe(2);
    expect((await t.rest('GET', `/v1/collections/col_missing/spaces`)).status).toBe(404);

    const g = await t.gql(
      `query($id: ID!) { collection(id: $id) { title spaces(first: 10) { totalCount nodes { id parent { id } } } collections(first: 10) { totalCount nodes { id title parent { id } } } } }`,
      { id: c },
    );
    expect(g.errors).toBeUndefined();
    expect(g.data.collection.spaces.nodes).toEqual([{ id: s1, parent: { id: c } }, { id: s2, parent: { id: c } }]);
    expect(g.data.collection.collections).toEqual({ totalCount: 1, nodes: [{ id: sub, title: 'Sub', parent: { id: c } }] });

    const outsider = await t.createUser(undefined);
    const hidden = await t.gql(`query($id: ID!) { node(id: $id) { id } }`, { id: c }, outsider.token);
    expect(hidden.errors?.[0].extensions?.code).toBe('NOT_FOUND');
    const visible = await t.gql(`query($id: ID!) { node(id: $id) { id ... on Collection { title } } }`, { id: c });
    expect(visible.data.node).toEqual({ id: c, title: 'Box' });
  });
});

describe('nested collection connections', () => {
  it('list every collection with its spaces and sub-collections in the same statements for 2 as for 8 collections, paging each', async () => {
    const org = await newOrg('Nested listing');
    const guest = await t.createUser(null, { organizationId: org });
    const QUERY = `query($id: ID!) { organization(id: $id) { collections(first: 50, nested: false) { nodes { id
      spaces(first: 2) { totalCount pageInfo { hasNextPage endCursor } nodes { id title } }
      collections(first: 5) { totalCount nodes { id } } } } } }`;
    const made: Array<{ id: string; spaces: string[]; subs: string[] }> = [];
    const grow = async (n: number) => {
      while (made.length < n) {
        const i = made.length;
        const id = await collection(org, { title: `C${i}` });
        const spaces: string[] = [];
        for (let j = 0; j < 3; j++) spaces.push(await space(org, { parent: id, title: `S${i}.${j}` }));
        const subs = i % 2 ? [await collection(org, { parent: id, title: `Sub${i}` })] : [];
        made.push({ id, spaces, subs });
      }
    };
    const run = async (token?: string) => {
      const { result, count } = await t.countQueries(() => t.gql(QUERY, { id: org }, token));
      expect(result.errors).toBeUndefined();
      return { nodes: result.data.organization.collections.nodes, count };
    };
    await grow(2);
    const small = await run();
    await grow(8);
    const large = await run();
    expect(large.count).toBe(small.count);
    expect(large.nodes.map((n: any) => n.id)).toEqual(made.map((m) => m.id));
    for (const [i, n] of large.nodes.entries()) {
      expect(n.spaces.totalCount).toBe(3);
      expect(n.spaces.nodes.map((s: any) => s.id)).toEqual(made[i].spaces.slice(0, 2));
      expect(n.spaces.pageInfo.hasNextPage).toBe(true);
      expect(n.collections).toEqual({ totalCount: made[i].subs.length, nodes: made[i].subs.map((id) => ({ id })) });
    }
    // The next page of one collection's spaces.
    const next = await t.gql(`query($id: ID!, $after: String) { collection(id: $id) { spaces(first: 2, after: $after) { nodes { id } pageInfo { hasNextPage } } } }`, {
      id: made[3].id,
      after: large.nodes[3].spaces.pageInfo.endCursor,
    });
    expect(next.data.collection.spaces).toEqual({ nodes: [{ id: made[3].spaces[2] }], pageInfo: { hasNextPage: false } });

    // A guest sees only what was granted, counts included.
    await t.app.prisma.contentGrant.create({ data: { id: newId('ContentGrant'), organizationId: org, spaceId: made[2].spaces[1], userId: guest.user.id, role: 'read' } });
    await t.app.prisma.contentGrant.create({ data: { id: newId('ContentGrant'), organizationId: org, collectionId: made[5].id, userId: guest.user.id, role: 'read' } });
    const seen = (await run(guest.token)).nodes;
    const byId = new Map(seen.map((n: any) => [n.id, n]));
    expect((byId.get(made[5].id) as any).spaces.totalCount).toBe(3);
    expect((byId.get(made[5].id) as any).collections.totalCount).toBe(1);
    for (const n of seen as any[]) {
      if (n.id === made[5].id) continue;
      const visible = n.spaces.nodes.map((x: any) => x.id);
      expect(visible.every((id: string) => id === made[2].spaces[1])).toBe(true);
      expect(n.spaces.totalCount).toBe(visible.length);
    }
  });
});

describe('collection(id)', () => {
  it('reads the collection row once; outsiders get NOT_FOUND', async () => {
    const id = await collection(t.org.id, { title: 'Read once' });
    const query = `query($id: ID!) { collection(id: $id) { id title } }`;
    const { result, statements } = await t.countQueries(() => t.gql(query, { id }));
    expect(result.data.collection).toEqual({ id, title: 'Read once' });
    expect(statements.filter((sql) => /FROM "public"\."Collection"/.test(sql))).toHaveLength(1);
    const outsider = await t.createUser(undefined);
    expect((await t.gql(query, { id }, outsider.token)).errors?.[0].extensions?.code).toBe('NOT_FOUND');
    expect((await t.gql(query, { id: 'col_missing' })).errors?.[0].extensions?.code).toBe('NOT_FOUND');
  });
});

describe('update a collection', () => {
  it('updates title, description and defaultLevel through the official client', async () => {
    const c = await collection(t.org.id, { title: 'Before' });
    const res = await t.client().collections.updateCollectionById(c, { title: 'After', description: 'About things', defaultLevel: 'read' as never });
    expectValidResponse('PATCH', '/collections/{collectionId}', 200, res.data);
    expect(res.data).toMatchObject({ title: 'After', description: 'About things', defaultLevel: 'read' });
    const inherit = await t.rest('PATCH', `/v1/collections/${c}`, { defaultLevel: 'inherit', description: null });
    expect(inherit.status).toBe(200);
    expectValidResponse('PATCH', '/collections/{collectionId}', 200, inherit.body);
    expect(inherit.body.defaultLevel).toBeNull();
    expect(inherit.body.description).toBeUndefined();
  });

  it('400 naming the field, nothing changed; 401, 403 below admin, 404', async () => {
    const c = await collection(t.org.id, { title: 'Stable' });
    for (const [body, field] of [
      [{ title: 'x'.repeat(51) }, 'title'],
      [{ description: 'x'.repeat(101) }, 'description'],
      [{ defaultLevel: 'boss' }, 'defaultLevel'],
      [{ parent: null }, 'parent'],
    ] as const) {
      const r = await t.rest('PATCH', `/v1/collections/${c}`, body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error.message).toContain(field);
    }
    await expectAccess(t, { method: 'PATCH', path: `/v1/collections/${c}`, body: { title: 'x' } }, { anonymous: 401, editor: 403, outsider: 404 });
    expect((await t.rest('PATCH', `/v1/collections/col_missing`, { title: 'x' })).status).toBe(404);
    expect((await col(c))!.title).toBe('Stable');
  });
});

describe('delete a collection', () => {
  it('moves what it contains up to its parent, in its place, keeping everyone\'s access; 205 then 204', async () => {
    const org = await newOrg('Delete org');
    const before = await space(org, { title: 'Before' });
    const k = await collection(org, { title: 'K' });
    const after = await space(org, { title: 'After' });
    const s1 = await space(org, { parent: k, title: 'S1', visibility: 'in-collection' });
    const sub = await collection(org, { parent: k, title: 'Sub' });
    const deep = await space(org, { parent: sub, title: 'Deep' });
    const gone = await space(org, { parent: k, title: 'Deleted' });
    await t.rest('DELETE', `/v1/spaces/${gone}`);
    await t.rest('PATCH', `/v1/collections/${k}`, { defaultLevel: 'read' });
    const guest = await t.createUser(null, { organizationId: org });
    const member = await t.createUser('edit', { organizationId: org });
    await t.app.prisma.contentGrant.create({ data: { id: newId('ContentGrant'), organizationId: org, collectionId: k, userId: guest.user.id, role: 'comment' } });
    const roleOf = async (token: string, id: string) => (await t.rest('GET', `/v1/spaces/${id}`, undefined, token)).body.permissions;
    const guestBefore = await roleOf(guest.token, deep);
    const memberBefore = await roleOf(member.token, s1);
    expect(guestBefore.comment).toBe(true);
    expect(memberBefore.edit).toBe(false); // the collection's default level is read

    await expectAccess(t, { method: 'DELETE', path: `/v1/collections/${k}` }, { editor: 403, outsider: 404, anonymous: 401 }, { organizationId: org });

    const del = await t.rest('DELETE', `/v1/collections/${k}`);
    expect(del.status).toBe(205);
    expectValidResponse('DELETE', '/collections/{collectionId}', 205, undefined);
    expect((await t.rest('DELETE', `/v1/collections/${k}`)).status).toBe(204);
    expect((await t.rest('GET', `/v1/collections/${k}`)).status).toBe(404);

    expect(await children(org, null)).toEqual([before, s1, sub, after]);
    expect(await spc(s1)).toMatchObject({ parentId: null, ancestorIds: [], visibility: 'private', defaultLevel: 'read' });
    expect(await col(sub)).toMatchObject({ parentId: null, ancestorIds: [], defaultLevel: 'read' });
    expect(await spc(deep)).toMatchObject({ parentId: sub, ancestorIds: [sub] });
    expect(await spc(gone)).toMatchObject({ parentId: null, ancestorIds: [] });
    expect(await roleOf(guest.token, deep)).toEqual(guestBefore);
    expect(await roleOf(member.token, s1)).toEqual(memberBefore);
    // The deleted space is still restorable.
    expect((await t.rest('POST', `/v1/spaces/${gone}/restore`)).status).toBe(200);
  });
});

describe('move a collection', () => {
  it('moves a subtree (ancestors rewritten), keeps orders dense, refuses cycles and no-ops', async () => {
    const org = await newOrg('Move org');
    const a = await collection(org, { title: 'A' });
    const b = await collection(org, { title: 'B' });
    const s = await space(org, { title: 'Root space' });
    const a1 = await collection(org, { parent: a, title: 'A1' });
    const deep = await space(org, { parent: a1, title: 'Deep' });
    const deleted = await space(org, { parent: a1, title: 'Deleted deep' });
    await t.rest('DELETE', `/v1/spaces/${deleted}`);

    const res = await t.client().collections.moveCollection(a, { parent: b } as never);
    expectValidResponse('POST', '/collections/{collectionId}/move', 200, res.data);
    expect(res.data.parent).toBe(b);
    expect(await col(a)).toMatchObject({ parentId: b, ancestorIds: [b] });
    expect(await col(a1)).toMatchObject({ ancestorIds: [b, a] });
    expect(await spc(deep)).toMatchObject({ ancestorIds: [b, a, a1] });
    expect(await spc(deleted)).toMatchObject({ ancestorIds: [b, a, a1] });
    expect(await children(org, null)).toEqual([b, s]);

    // Cycles: into itself or a descendant.
    for (const parent of [a, a1]) {
      const r = await t.rest('POST', `/v1/collections/${a}/move`, { parent });
      expect(r.status).toBe(400);
      expect(r.body.error.message).toContain('parent');
    }
    // Back to the root before the space, then a no-op.
    const back = await t.rest('POST', `/v1/collections/${a}/move`, { parent: null, position: { before: { type: 'space', space: s } } });
    expect(back.status).toBe(200);
    expect(await children(org, null)).toEqual([b, a, s]);
    expect(await spc(deep)).toMatchObject({ ancestorIds: [a, a1] });
    expect((await t.rest('POST', `/v1/collections/${a}/move`, { position: { after: { type: 'collection', collection: b } } })).status).toBe(409);
    expect((await t.rest('POST', `/v1/collections/${a}/move`, { parent: null })).status).toBe(200); // to the end
    expect(await children(org, null)).toEqual([b, s, a]);
    expect((await t.rest('POST', `/v1/collections/${a}/move`, { parent: null })).status).toBe(409);

    const bad = await t.rest('POST', `/v1/collections/${a}/move`, { position: { before: { type: 'space', space: deep } } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toContain('position.before');
    const gql = await t.gql(`mutation($id: ID!, $p: ID) { moveCollection(input: { id: $id, parent: $p }) { collection { id parentId position } } }`, { id: a, p: b });
    expect(gql.data.moveCollection.collection).toEqual({ id: a, parentId: b, position: 0 });

    await expectAccess(t, { method: 'POST', path: `/v1/collections/${a}/move`, body: { parent: null } }, { editor: 403, outsider: 404, anonymous: 401 }, { organizationId: org });
    expect((await t.rest('POST', `/v1/collections/col_missing/move`, { parent: null })).status).toBe(404);
    expect((await t.rest('POST', `/v1/collections/${a}/move`, {})).status).toBe(400);
  });
});

describe('transfer a collection', () => {
  it('transfers the whole subtree to another organization', async () => {
    const from = await newOrg('From');
    const to = await newOrg('To');
    await space(to, { title: 'Already there' });
    const parent = await collection(from, { title: 'Parent' });
    const c = await collection(from, { parent, title: 'Moving' });
    const sub = await collection(from, { parent: c, title: 'Sub' });
    const s = await space(from, { parent: sub, title: 'Inside' });
    const team = await t.app.prisma.team.create({ data: { id: newId('Team'), organizationId: from, title: 'T' } });
    await t.app.prisma.contentGrant.create({ data: { id: newId('ContentGrant'), organizationId: from, collectionId: sub, teamId: team.id, role: 'edit' } });

    const res = await t.client().collections.transferCollection(c, { organization: to });
    expectValidResponse('POST', '/collections/{collectionId}/transfer', 200, res.data);
    expect(res.data).toMatchObject({ organization: to });
    expect(res.data.parent).toBeUndefined();
    expect(await col(c)).toMatchObject({ organizationId: to, parentId: null, ancestorIds: [], position: 1 });
    expect(await col(sub)).toMatchObject({ organizationId: to, ancestorIds: [c] });
    expect(await spc(s)).toMatchObject({ organizationId: to, ancestorIds: [c, sub] });
    expect(await t.app.prisma.contentGrant.count({ where: { collectionId: sub } })).toBe(0);
    expect(await children(from, parent)).toEqual([]);
    expect((await t.rest('POST', `/v1/collections/${c}/transfer`, { organization: to })).status).toBe(409);
  });

  it('412 when a space inside is published in a site; 400, 401, 403, 404', async () => {
    const from = await newOrg('From 2');
    const to = await newOrg('To 2');
    const c = await collection(from, { title: 'Published inside' });
    const s = await space(from, { parent: c });
    const site = await t.app.prisma.site.create({ data: { id: newId('Site'), organizationId: from, title: 'Docs' } });
    await t.app.prisma.siteSpace.create({ data: { id: newId('SiteSpace'), siteId: site.id, spaceId: s, path: 'docs' } });
    const r = await t.rest('POST', `/v1/collections/${c}/transfer`, { organization: to });
    expect(r.status).toBe(412);
    expect(r.body.error.message).toContain('published');
    expect((await col(c))!.organizationId).toBe(from);

    expect((await t.rest('POST', `/v1/collections/${c}/transfer`, {})).body.error.message).toContain('organization');
    await expectAccess(t, { method: 'POST', path: `/v1/collections/${c}/transfer`, body: { organization: to } }, { editor: 403, outsider: 404, anonymous: 401 }, { organizationId: from });
    expect((await t.rest('POST', `/v1/collections/${c}/transfer`, { organization: 'org_missing' })).status).toBe(404);
    expect((await t.rest('POST', `/v1/collections/col_missing/transfer`, { organization: to })).status).toBe(404);
  });
});
