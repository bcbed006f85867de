import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.close();
});

describe('GraphQL foundation', () => {
  it('node and nodes resolve prefixed ids of any type', async () => {
    const r = await t.gql(`query($ids: [ID!]!) { nodes(ids: $ids) { id __typename } }`, { ids: [t.org.id, t.adminUser.id] });
    expect(r.errors).toBeUndefined();
    expect(r.data.nodes).toEqual([
      { id: t.org.id, __typename: 'Organization' },
      { id: t.adminUser.id, __typename: 'User' },
    ]);
    // An id that names nothing is NOT_FOUND, like a missing one (test/node-access.test.ts).
    const bad = await t.gql(`{ node(id: "garbage") { id } }`);
    expect(bad.data.node).toBeNull();
    expect(bad.errors?.[0].extensions?.code).toBe('NOT_FOUND');
  });

  it('connections carry totalCount, pageInfo, edges and nodes with opaque cursors', async () => {
    for (let i = 0; i < 3; i++) await t.gql(`mutation { createOrganization(input: { title: "Org ${i}" }) { id } }`);
    const first = await t.gql(`{ viewer { organizations(first: 2) { totalCount pageInfo { hasNextPage endCursor } edges { cursor node { id } } nodes { id } } } }`);
    const c = first.data.viewer.organizations;
    expect(c.totalCount).toBe(4);
    expect(c.nodes).toHaveLength(2);
    expect(c.pageInfo.hasNextPage).toBe(true);
    expect(c.edges[0].cursor).not.toContain('org_');
    const next = await t.gql(`query($after: String) { viewer { organizations(first: 2, after: $after) { nodes { id } pageInfo { hasNextPage } } } }`, { after: c.pageInfo.endCursor });
    const ids = [...c.nodes, ...next.data.viewer.organizations.nodes].map((n: { id: string }) => n.id);
    expect(new Set(ids).size).toBe(4);
    expect(next.data.viewer.organizations.pageInfo.hasNextPage).toBe(false);
  });

  it('REST pages map to cursors: limit and next.page walk the whole list', async () => {
    const page1 = await t.rest('GET', '/v1/orgs?limit=3');
    expect(page1.body.items).toHaveLength(3);
    expect(page1.body.count).toBe(4);
    const page2 = await t.rest('GET', `/v1/orgs?limit=3&page=${encodeURIComponent(page1.body.next.page)}`);
    expect(page2.body.items).toHaveLength(1);
    expect(page2.body.next).toBeUndefined();
    expect((await t.rest('GET', '/v1/orgs?limit=1001')).status).toBe(400);
    expect((await t.rest('GET', '/v1/orgs?limit=abc')).body.error.message).toContain('limit');
    expect((await t.rest('GET', '/v1/orgs?bogus=1')).body.error.message).toContain('bogus');
  });

  it('refuses queries that are too costly, pricing connections by page size', async () => {
    const small = await t.gql(`{ viewer { organizations(first: 10) { nodes { id title } } } }`);
    expect(small.errors).toBeUndefined();
    const aliases = Array.from({ length: 20 }, (_, i) => `a${i}: organizations(first: 1000) { nodes { id title permissions { admin view } } }`).join(' ');
    const costly = await t.gql(`{ viewer { ${aliases} } }`);
    expect(costly.errors?.[0].message).toMatch(/complexity/i);
  });

  it('refuses queries nested deeper than the limit', async () => {
    let inner = 'id';
    for (let i = 0; i < 14; i++) inner = `organization { spaces(first: 1) { nodes { ${inner} } } }`;
    const space = await t.rest('POST', `/v1/orgs/${t.org.id}/spaces`, { title: 'Deep' });
    const r = await t.gql(`query($id: ID!) { space(id: $id) { ${inner} } }`, { id: space.body.id });
    expect(r.errors?.[0].message).toMatch(/depth/i);
    const shallow = await t.gql(`query($id: ID!) { space(id: $id) { organization { spaces(first: 1) { nodes { id } } } } }`, { id: space.body.id });
    expect(shallow.errors).toBeUndefined();
  });
});
