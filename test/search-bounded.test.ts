// Search is bounded (docs/performance.md, "Search is bounded"): a query answers at most the best
// SEARCH_CANDIDATES results, says when more matched (`totalCountIsCapped`, REST `countIsCapped`),
// pages a screen of results by default, and takes any text safely.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers.ts';
import { expectValidResponse } from './openapi.ts';
import { SEARCH_CANDIDATES, SEARCH_PAGE_SIZE } from '../src/domain/search.ts';

let t: TestApp;
let spaceId: string;
let bestId: string;
const MATCHES = SEARCH_CANDIDATES + 30;

beforeAll(async () => {
  t = await startTestApp();
  const r = await t.rest('POST', `/v1/orgs/${t.org.id}/spaces`, { title: 'Birds' });
  spaceId = r.body.id;
  for (let i = 0; i < MATCHES; i += 50) {
    const changes = Array.from({ length: Math.min(50, MATCHES - i) }, (_, k) => ({
      operation: 'insert_page',
      title: `Marsh notes ${i + k}`,
      document: { markdown: `A long walk by the marsh, where a heron was seen once among many other birds, reeds and water (${i + k}).` },
    }));
    expect((await t.rest('POST', `/v1/spaces/${spaceId}/content`, { changes })).status).toBe(200);
  }
  const best = await t.rest('POST', `/v1/spaces/${spaceId}/content`, {
    changes: [{ operation: 'insert_page', title: 'Heron', document: { markdown: 'The grey heron: heron habits, heron nests.' } }],
  });
  bestId = best.body.changes[0].page.id;
  await t.rest('POST', `/v1/spaces/${spaceId}/content`, { changes: [{ operation: 'insert_page', title: 'Kingfisher', document: { markdown: 'A kingfisher dives.' } }] });
}, 300_000);
afterAll(async () => {
  await t?.close();
});

const SEARCH = `query($id: ID!, $q: String!, $first: Int, $after: String) { space(id: $id) { search(query: $q, first: $first, after: $after) {
  totalCount totalCountIsCapped pageInfo { hasNextPage endCursor } nodes { pageId title }
} } }`;

describe('more matches than the answer carries', () => {
  it('REST: the best page first, a screen of results, a count that says it is capped', async () => {
    const r = await t.rest('GET', `/v1/spaces/${spaceId}/search?query=heron`);
    expect(r.status).toBe(200);
    expectValidResponse('get', '/spaces/{spaceId}/search', 200, r.body);
    expect(r.body.items).toHaveLength(SEARCH_PAGE_SIZE);
    expect(r.body.items[0].id).toBe(bestId);
    expect(r.body.count).toBe(SEARCH_CANDIDATES);
    expect(r.body.countIsCapped).toBe(true);
    expect(r.body.next?.page).toBeTruthy();
  });

  it('GraphQL: totalCount is the capped number, and paging ends after it, every result once', async () => {
    const seen = new Set<string>();
    let after: string | null = null;
    let pages = 0;
    for (;;) {
      const res: any = await t.gql(SEARCH, { id: spaceId, q: 'heron', first: 200, after });
      const s = res.data.space.search;
      expect(s.totalCount).toBe(SEARCH_CANDIDATES);
      expect(s.totalCountIsCapped).toBe(true);
      if (pages === 0) expect(s.nodes[0].pageId).toBe(bestId);
      for (const n of s.nodes) seen.add(n.pageId);
      pages++;
      if (!s.pageInfo.hasNextPage) break;
      after = s.pageInfo.endCursor;
    }
    expect(pages).toBe(3);
    expect(seen.size).toBe(SEARCH_CANDIDATES);
  });

  it('few matches: exact count, not capped', async () => {
    const r = await t.rest('GET', `/v1/spaces/${spaceId}/search?query=kingfisher`);
    expect(r.body).toMatchObject({ count: 1 });
    expect(r.body.countIsCapped).toBeUndefined();
    const g = await t.gql(SEARCH, { id: spaceId, q: 'kingfisher' });
    expect(g.data.space.search).toMatchObject({ totalCount: 1, totalCountIsCapped: false });
  });

  it('organization search answers the same bound', async () => {
    const r = await t.rest('GET', `/v1/orgs/${t.org.id}/search?query=heron`);
    expect(r.status).toBe(200);
    expectValidResponse('get', '/orgs/{organizationId}/search', 200, r.body);
    expect(r.body.items[0].pages[0].id).toBe(bestId);
    expect(r.body.items[0].pages.length).toBeLessThanOrEqual(10);
    expect(r.body.countIsCapped).toBeUndefined(); // one space: not capped
  });
});

describe('hostile queries', () => {
  it('empty, blank and over-long queries are 400 naming `query`', async () => {
    for (const q of ['', '%20%20', 'x'.repeat(10_000)]) {
      const r = await t.rest('GET', `/v1/spaces/${spaceId}/search?query=${q}`);
      expect(r.status, q.slice(0, 10)).toBe(400);
      expect(r.body.error.message).toMatch(/query/);
    }
    const g = await t.gql(SEARCH, { id: spaceId, q: 'x'.repeat(10_000) });
    expect(g.errors?.[0].extensions?.code).toBe('BAD_REQUEST');
  });

  it('operators, quotes, tsquery syntax and stop words are text, never an error', async () => {
    for (const q of ['heron & | ! <-> :*', '"grey heron" -nests', "'; DROP TABLE \"Space\"; --", '(((heron', 'the', ':*', '\\', 'heron OR OR or -', '🦩 héron']) {
      const r = await t.rest('GET', `/v1/spaces/${spaceId}/search?query=${encodeURIComponent(q)}`);
      expect(r.status, q).toBe(200);
      expectValidResponse('get', '/spaces/{spaceId}/search', 200, r.body);
    }
    expect(await t.app.prisma.space.count({ where: { id: spaceId } })).toBe(1);
  });

  it('organization search takes the same hostile text: an answer or a 400 naming `query`, never a 500', async () => {
    for (const q of ['heron & | ! <-> :*', '🦩 héron 北京', ':*', '"((', 'heron '.repeat(85)]) {
      const r = await t.rest('GET', `/v1/orgs/${t.org.id}/search?query=${encodeURIComponent(q)}`);
      expect(r.status, JSON.stringify(q.slice(0, 12))).toBe(200);
      expectValidResponse('get', '/orgs/{organizationId}/search', 200, r.body);
    }
    for (const q of ['', '  ', 'x'.repeat(513), '北'.repeat(513), '\u0000heron']) {
      const r = await t.rest('GET', `/v1/orgs/${t.org.id}/search?query=${encodeURIComponent(q)}`);
      expect(r.status, q.slice(0, 10)).toBe(400);
      expect(r.body.error.message).toMatch(/query/);
    }
  });

  it('cursors: a cursor of another query answers from its position; of another list, or garbage: a 400 naming it', async () => {
    const heron = await t.gql(SEARCH, { id: spaceId, q: 'heron', first: 5 });
    const cursor = heron.data.space.search.pageInfo.endCursor;
    const other = await t.gql(SEARCH, { id: spaceId, q: 'kingfisher', after: cursor });
    expect(other.errors).toBeUndefined();
    const r = await t.rest('GET', `/v1/spaces/${spaceId}/search?query=marsh&page=${encodeURIComponent(cursor)}`);
    expect(r.status).toBe(200);
    const org = await t.gql(`query($id: ID!, $after: String) { organization(id: $id) { search(query: "heron", after: $after) { totalCount } } }`, { id: t.org.id, after: cursor });
    expect(org.errors?.[0].extensions).toMatchObject({ code: 'BAD_REQUEST', field: 'after' });
    for (const page of ['%00', 'bm90IGEgY3Vyc29y', 'x'.repeat(5000)]) {
      const bad = await t.rest('GET', `/v1/spaces/${spaceId}/search?query=heron&page=${page}`);
      expect(bad.status, page.slice(0, 10)).toBe(400);
      expect(bad.body.error.message).toMatch(/page/);
    }
  });

  it('page sizes out of range are 400 naming the field', async () => {
    expect((await t.rest('GET', `/v1/spaces/${spaceId}/search?query=heron&limit=1001`)).status).toBe(400);
    const g = await t.gql(SEARCH, { id: spaceId, q: 'heron', first: -1 });
    expect(g.errors?.[0].extensions?.code).toBe('BAD_REQUEST');
  });
});
