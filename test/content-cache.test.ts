// The page-tree cache (src/graphql/content.ts): only a complete load is kept — a load
// that timed out is a 503, and once the database recovers the next read shows every page — and
// the cache is bounded by (estimated) bytes, however many distinct large trees are read.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers.ts';
import { contentCaches } from '../src/graphql/content-loading.ts';
import { expectValidResponse } from './openapi.ts';
import { versionIdsOf } from '../src/domain/revisions.ts';
import { revisionTree } from '../src/domain/revision-tree.ts';

const CACHE_BYTES = 1024 * 1024;
const BODIES_BYTES = 64 * 1024;
let t: TestApp;

beforeAll(async () => {
  // A short statement timeout so a locked table times a read out quickly; a small cache so a
  // few hundred pages overflow it.
  t = await startTestApp({ config: { dbStatementTimeoutMs: 1000, contentCacheBytes: CACHE_BYTES, pageListBodiesMaxBytes: BODIES_BYTES } });
});
afterAll(async () => {
  await t?.close();
});

async function newSpace(title: string) {
  const r = await t.rest('POST', `/v1/orgs/${t.org.id}/spaces`, { title });
  expect(r.status).toBe(201);
  return r.body.id as string;
}

/** Add `count` pages in batches of 50 (the batch limit); one new revision per batch. */
async function addPages(spaceId: string, count: number, from = 0) {
  for (let i = from; i < from + count; i += 50) {
    const changes = Array.from({ length: Math.min(50, from + count - i) }, (_, k) => ({
      operation: 'insert_page',
      title: `Page number ${i + k} with a title of ordinary length`,
      document: { markdown: `Body ${i + k}` },
    }));
    const r = await t.rest('POST', `/v1/spaces/${spaceId}/content`, { changes });
    expect(r.status, r.text).toBe(200);
  }
}

const TREE = `query($id: ID!) { space(id: $id) { revision { id allPages { id: pageId title } } } }`;

describe('a tree load that fails is never cached', () => {
  it('a statement timeout during the load is a 503; after recovery every page shows (GraphQL and REST)', async () => {
    const spaceId = await newSpace('Locked');
    await addPages(spaceId, 20);
    const pages = (await t.gql(TREE, { id: spaceId })).data.space.revision.allPages as Array<{ id: string }>;
    expect(pages).toHaveLength(20);
    // Start from nothing cached, as a process that has not read this space yet.
    const caches = contentCaches(t.app.config);
    caches.trees!.clear();
    caches.rows!.clear();

    // An outside session holds the page versions: every read of them waits, then times out.
    const locker = new pg.Client({ connectionString: t.databaseUrl });
    await locker.connect();
    try {
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE "PageVersion" IN ACCESS EXCLUSIVE MODE');
      // Three readers at once (they share one load), and a REST page read.
      const reads = await Promise.all([
        t.gql(TREE, { id: spaceId }),
        t.gql(TREE, { id: spaceId }),
        t.gql(TREE, { id: spaceId }),
      ]);
      for (const r of reads) {
        expect(r.status).toBe(503);
        expect(r.errors?.[0].extensions?.code).toBe('SERVICE_UNAVAILABLE');
      }
      const page = await t.rest('GET', `/v1/spaces/${spaceId}/content/page/${pages[7].id}`);
      expect(page.status).toBe(503);
      expect(caches.trees!.size).toBe(0);
      expect(caches.loading.size).toBe(0);
    } finally {
      await locker.query('ROLLBACK').catch(() => {});
      await locker.end();
    }

    // The database is back: the very next reads answer every page, not an empty tree.
    const after = await t.gql(TREE, { id: spaceId });
    expect(after.status).toBe(200);
    expect(after.data.space.revision.allPages.map((p: { id: string }) => p.id)).toEqual(pages.map((p) => p.id));
    const page = await t.rest('GET', `/v1/spaces/${spaceId}/content/page/${pages[7].id}`);
    expect(page.status, page.text).toBe(200);
    expect(page.body.id).toBe(pages[7].id);
    const list = await t.rest('GET', `/v1/spaces/${spaceId}/content/pages`);
    expect(list.status).toBe(200);
    expect(list.body.pages).toHaveLength(20);
  });
});

describe('the tree cache is bounded by bytes', () => {
  it('reading many distinct large trees keeps its counted size under the bound', async () => {
    // One space, 600 pages in 12 batches: 12 revisions of 50, 100, … 600 pages, each a distinct tree.
    const spaceId = await newSpace('Big');
    await addPages(spaceId, 600);
    const rows = await t.app.prisma.revision.findMany({ where: { spaceId }, select: { id: true, treeRoot: true, tree: true }, orderBy: { createdAt: 'asc' } });
    const revisions = await Promise.all(rows.map(async (r) => ({ id: r.id, pages: versionIdsOf(await revisionTree(t.app.prisma, r)).length })));
    const withPages = revisions.filter((r) => r.pages > 0);
    expect(withPages).toHaveLength(12);

    const caches = contentCaches(t.app.config);
    const trees = caches.trees!;
    const bound = trees.maxSize;
    expect(bound).toBeLessThanOrEqual(CACHE_BYTES);
    let largest = 0;
    for (const rev of withPages) {
      const r = await t.gql(`query($id: ID!) { node(id: $id) { ... on Revision { allPages { id } } } }`, { id: rev.id });
      expect(r.errors).toBeUndefined();
      expect(r.data.node.allPages).toHaveLength(rev.pages);
      expect(trees.calculatedSize).toBeLessThanOrEqual(bound);
      expect(caches.rows!.calculatedSize).toBeLessThanOrEqual(caches.rows!.maxSize);
      largest = Math.max(largest, trees.calculatedSize);
    }
    // The cache was used (it held trees) and had to let go of some: 12 trees of 50–600 pages
    // (3,900 pages, about 4 MB by the estimate) do not fit in 768 KiB.
    expect(largest).toBeGreaterThan(bound / 4);
    expect(trees.size).toBeGreaterThan(0);
    expect(trees.size).toBeLessThan(withPages.length);
    // The estimate is per page, not per tree: each kept tree counts at least 800 bytes a page.
    const cachedSizes = [...trees.keys()].map((k) => [trees.get(k)!.ordered.length, trees.info(k)?.size ?? 0] as const);
    for (const [count, size] of cachedSizes) expect(size).toBeGreaterThan(count * 800);
    // The same figures on /metrics, for operators.
    const metrics = await (await fetch(`${t.baseUrl}/metrics`)).text();
    const gauge = (name: string) => Number(new RegExp(`^${name}\\{cache="page_trees"\\} (\\d+)$`, 'm').exec(metrics)?.[1]);
    expect(gauge('docgraph_cache_bytes')).toBe(trees.calculatedSize);
    expect(gauge('docgraph_cache_max_bytes')).toBe(bound);
  });
});

describe('GET …/content/pages carries bodies (the contract), bounded', () => {
  it('lists with bodies up to the bound; above it a 400 that says what to do, while each page still reads alone', async () => {
    const body = (n: number) => `Part ${n}: ${'Lorem ipsum dolor sit amet. '.repeat(1100)}`; // about 30 KB
    const small = await newSpace('Small bodies');
    expect((await t.rest('POST', `/v1/spaces/${small}/content`, { changes: [{ operation: 'insert_page', title: 'One', document: { markdown: body(1) } }] })).status).toBe(200);
    const ok = await t.rest('GET', `/v1/spaces/${small}/content/pages`);
    expect(ok.status).toBe(200);
    expectValidResponse('GET', '/spaces/{spaceId}/content/pages', 200, ok.body);
    expect(ok.body.pages[0].markdown).toBe(body(1));

    const big = await newSpace('Big bodies');
    const changes = [1, 2, 3].map((n) => ({ operation: 'insert_page', title: `Part ${n}`, document: { markdown: body(n) } }));
    expect((await t.rest('POST', `/v1/spaces/${big}/content`, { changes })).status).toBe(200);
    for (const path of [`/v1/spaces/${big}/content/pages`, `/v1/spaces/${big}/content`]) {
      const r = await t.rest('GET', path);
      expect(r.status, path).toBe(400);
      expect(r.body.error.message).toMatch(/bodies total 0\.\d MiB, more than one answer carries \(0\.1 MiB\).*content\/page/);
    }
    const gql = await t.gql(`query($id: ID!) { space(id: $id) { revision { allPages { id markdown } } } }`, { id: big });
    expect(gql.errors?.[0].extensions?.code).toBe('BAD_REQUEST');
    // Without bodies the list is fine; and every page reads alone, its own body only.
    const tree = await t.gql(`query($id: ID!) { space(id: $id) { revision { allPages { id: pageId title } } } }`, { id: big });
    expect(tree.data.space.revision.allPages).toHaveLength(3);
    for (const [i, p] of tree.data.space.revision.allPages.entries()) {
      const r = await t.rest('GET', `/v1/spaces/${big}/content/page/${p.id}`);
      expect(r.status).toBe(200);
      expectValidResponse('GET', '/spaces/{spaceId}/content/page/{pageId}', 200, r.body);
      expect(r.body.markdown).toBe(body(i + 1));
    }
  });
});

describe("yoga's parsed-document cache is bounded by bytes", () => {
  it('hundreds of distinct padded documents, posted without a token, fill it no further than its bound', async () => {
    const { documentCache, errorCache } = t.app.server.documentCaches;
    const post = (query: string) => fetch(`${t.baseUrl}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query }) });
    // 60,000 characters of comment each: a valid document of one field.
    for (let i = 0; i < 320; i += 4) {
      await Promise.all([0, 1, 2, 3].map((k) => post(`{ __typename } # ${i + k} ${'x'.repeat(60_000)}`)));
      expect(documentCache.calculatedSize).toBeLessThanOrEqual(documentCache.maxSize);
    }
    expect(documentCache.calculatedSize).toBeGreaterThan(documentCache.maxSize / 2);
    // Documents too large for one entry are parsed and not kept; so are broken ones.
    const before = documentCache.calculatedSize;
    for (let i = 0; i < 5; i++) await post(`{ __typename } # ${i} ${'y'.repeat(2_000_000)}`);
    expect(documentCache.calculatedSize).toBeLessThanOrEqual(before);
    for (let i = 0; i < 100; i++) await post(`{ __typename  # ${i} ${'z'.repeat(60_000)}`);
    expect(errorCache.calculatedSize).toBeLessThanOrEqual(errorCache.maxSize);
  }, 120_000);
});
