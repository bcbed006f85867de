// Lists at the edges: every legal `limit` answers, every bad `page` is a 400 naming `page`, and
// keyset cursors survive deletes, inserts and edits between pages.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers.ts';

let t: TestApp;
let org: string;
let spaceId: string;
let collectionId: string;
const teamIds: string[] = [];

beforeAll(async () => {
  t = await startTestApp();
  org = t.org.id;
  for (let i = 0; i < 5; i++) teamIds.push((await t.rest('PUT', `/v1/orgs/${org}/teams`, { title: `Team ${i}` })).body.id);
  collectionId = (await t.rest('POST', `/v1/orgs/${org}/collections`, { title: 'C' })).body.id;
  for (let i = 0; i < 5; i++) await t.rest('POST', `/v1/orgs/${org}/spaces`, { title: `S${i}`, parent: collectionId });
  spaceId = (await t.rest('POST', `/v1/orgs/${org}/spaces`, { title: 'Discussed' })).body.id;
  // Enough comments that a page of 1,000 blew the old complexity budget (it failed above 110).
  for (let i = 0; i < 120; i += 10) {
    await Promise.all(Array.from({ length: 10 }, (_, j) => t.rest('POST', `/v1/spaces/${spaceId}/comments`, { body: { markdown: `Comment ${i + j}` } })));
  }
}, 120_000);
afterAll(() => t?.close());

const lists = () => [
  `/v1/orgs/${org}/teams`,
  `/v1/collections/${collectionId}/spaces`,
  `/v1/orgs/${org}/members`,
  `/v1/spaces/${spaceId}/comments`,
  `/v1/orgs/${org}/search?query=anything`,
  `/v1/spaces/${spaceId}/change-requests`,
  `/v1/orgs/${org}/collections`,
];
const withQuery = (path: string, q: string) => `${path}${path.includes('?') ? '&' : '?'}${q}`;

describe('limit', () => {
  it('0, 1 and 1000 answer 200 on every list; 1001, -1 and abc are 400s naming limit', async () => {
    for (const path of lists()) {
      for (const limit of [0, 1, 1000]) {
        const r = await t.rest('GET', withQuery(path, `limit=${limit}`));
        expect(r.status, `${path} limit=${limit}: ${r.text}`).toBe(200);
        expect(r.body.items.length).toBeLessThanOrEqual(limit);
      }
      for (const limit of ['1001', '-1', 'abc']) {
        const r = await t.rest('GET', withQuery(path, `limit=${limit}`));
        expect(r.status, `${path} limit=${limit}`).toBe(400);
        expect(r.body.error.message).toMatch(/limit/);
      }
    }
    // All 120 comments in one page.
    const all = await t.rest('GET', `/v1/spaces/${spaceId}/comments?limit=1000`);
    expect(all.body.items).toHaveLength(120);
    expect(all.body.next).toBeUndefined();
  });
});

describe('page', () => {
  it('a garbage, truncated, tampered or foreign cursor is a 400 naming page on every list', async () => {
    const teamsCursor = (await t.rest('GET', `/v1/orgs/${org}/teams?limit=1`)).body.next.page as string;
    const spacesCursor = (await t.rest('GET', `/v1/collections/${collectionId}/spaces?limit=1`)).body.next.page as string;
    const tampered = teamsCursor.slice(0, 5) + (teamsCursor[5] === 'A' ? 'B' : 'A') + teamsCursor.slice(6);
    const forgedBase64 = Buffer.from(JSON.stringify(['0.5', 'team_x'])).toString('base64url');
    for (const path of lists()) {
      const foreign = path.includes('/teams') ? spacesCursor : teamsCursor;
      for (const page of ['garbage', teamsCursor.slice(0, -3), tampered, foreign, forgedBase64, 'R1BDOlM6aWQ=']) {
        if (path.includes('/teams') && page === teamsCursor) continue;
        const r = await t.rest('GET', withQuery(path, `page=${encodeURIComponent(page)}`));
        expect(r.status, `${path} page=${page}: ${r.text}`).toBe(400);
        expect(r.body.error.message).toMatch(/^page: /);
      }
    }
  });

  it('GraphQL: a bad after is BAD_REQUEST naming after; first above 1000 names the maximum', async () => {
    const bad = await t.gql(`query($id: ID!) { teams(organizationId: $id, after: "garbage") { totalCount nodes { id } } }`, { id: org });
    expect(bad.errors?.[0].extensions).toMatchObject({ code: 'BAD_REQUEST', field: 'after' });
    const big = await t.gql(`query($id: ID!) { teams(organizationId: $id, first: 5000) { nodes { id } } }`, { id: org });
    expect(big.errors?.[0].extensions?.code).toBe('BAD_REQUEST');
    expect(big.errors?.[0].message).toMatch(/1000/);
    expect(big.errors?.[0].message).toMatch(/5000/);
    const nested = await t.gql(`query($id: ID!) { organization(id: $id) { teams(first: 5000) { nodes { id } } } }`, { id: org });
    expect(nested.errors?.[0].extensions?.code).toBe('BAD_REQUEST');
  });

  it('GraphQL: a bad after is BAD_REQUEST when only totalCount is selected, too', async () => {
    const count = `query($id: ID!, $after: String) { teams(organizationId: $id, after: $after) { totalCount } }`;
    const good = await t.gql(count, { id: org });
    expect(good.errors).toBeUndefined();
    const spacesCursor = (await t.rest('GET', `/v1/collections/${collectionId}/spaces?limit=1`)).body.next.page as string;
    for (const after of ['garbage', 'R1BDOlM6aWQ=', spacesCursor]) {
      const bad = await t.gql(count, { id: org, after });
      expect(bad.errors?.[0].extensions, after).toMatchObject({ code: 'BAD_REQUEST', field: 'after' });
      expect(bad.data?.teams ?? null).toBeNull();
    }
    // A cursor of this very list is fine with the count alone.
    const teamsCursor = (await t.rest('GET', `/v1/orgs/${org}/teams?limit=1`)).body.next.page as string;
    const ok = await t.gql(count, { id: org, after: teamsCursor });
    expect(ok.errors).toBeUndefined();
    expect(ok.data.teams.totalCount).toBe(good.data.teams.totalCount);
  });

  it('GraphQL: a query over the complexity budget is BAD_REQUEST naming the limit and the figure', async () => {
    const r = await t.gql(
      `query($id: ID!) { organization(id: $id) { teams(first: 1000) { nodes { members(first: 1000) { nodes { user { id } } } } } } }`,
      { id: org },
    );
    expect(r.errors?.[0].extensions?.code).toBe('BAD_REQUEST');
    expect(r.errors?.[0].message).toMatch(/complexity \d+ exceeds the limit of 100000/);
  });
});

/** Page through `path` with limit=2, running `between(pageNumber, lastItemIds)` after each page. */
async function pageThrough(path: string, between: (n: number, ids: string[]) => Promise<void>) {
  const seen: string[] = [];
  let page: string | undefined;
  for (let n = 0; n < 50; n++) {
    const r = await t.rest('GET', withQuery(path, `limit=2${page ? `&page=${encodeURIComponent(page)}` : ''}`));
    expect(r.status, r.text).toBe(200);
    const ids = r.body.items.map((i: { id: string }) => i.id);
    seen.push(...ids);
    page = r.body.next?.page;
    if (!page) return seen;
    await between(n, ids);
  }
  throw new Error('did not finish');
}

describe('paging while the list changes', () => {
  it('teams: deleting the cursor item, inserting and renaming never loses or repeats a surviving team', async () => {
    const deleted = new Set<string>();
    const seen = await pageThrough(`/v1/orgs/${org}/teams`, async (n, ids) => {
      if (n === 0) {
        // Delete the item the cursor names, and rename the next one.
        expect((await t.rest('DELETE', `/v1/orgs/${org}/teams/${ids[1]}`)).status).toBe(204);
        deleted.add(ids[1]);
        expect((await t.rest('PATCH', `/v1/orgs/${org}/teams/${teamIds[3]}`, { title: 'Renamed' })).status).toBe(200);
      }
      if (n === 1) await t.rest('PUT', `/v1/orgs/${org}/teams`, { title: 'Late' });
    });
    const now = (await t.rest('GET', `/v1/orgs/${org}/teams?limit=1000`)).body.items.map((i: { id: string }) => i.id);
    for (const id of deleted) expect(now).not.toContain(id);
    expect(now).toHaveLength(5); // 5 - 1 deleted + 1 inserted
    expect(new Set(seen).size).toBe(seen.length);
    for (const id of now) expect(seen).toContain(id); // every survivor (and the late insert, which sorts last)
    for (const id of seen) expect(now.includes(id) || deleted.has(id)).toBe(true);
  });

  it("a collection's spaces: deleting the cursor item and inserting between pages", async () => {
    const path = `/v1/collections/${collectionId}/spaces`;
    const deleted = new Set<string>();
    const seen = await pageThrough(path, async (n, ids) => {
      if (n === 0) {
        expect((await t.rest('DELETE', `/v1/spaces/${ids[1]}`)).status).toBeLessThan(300);
        deleted.add(ids[1]);
        await t.rest('PATCH', `/v1/spaces/${ids[0]}`, { title: 'Edited' });
        await t.rest('POST', `/v1/orgs/${org}/spaces`, { title: 'Appended', parent: collectionId });
      }
    });
    const now = (await t.rest('GET', `${path}?limit=1000`)).body.items.map((i: { id: string }) => i.id);
    for (const id of deleted) expect(now).not.toContain(id);
    expect(new Set(seen).size).toBe(seen.length);
    for (const id of now) expect(seen).toContain(id);
    for (const id of seen) expect(now.includes(id) || deleted.has(id)).toBe(true);
    expect(now.length).toBeGreaterThanOrEqual(5);
  });
});
