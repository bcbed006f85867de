// One page read loads one page: a page's answer reads that page's row, its ancestors' and (when
// asked) its subtree's, never the other pages of the revision and never their bodies; link
// listings read stored links, not bodies. Measured in statements and in the page-version ids the
// statements ask for (Prisma's query event carries the parameters), which do not depend on the
// machine's speed: the same read in a 10-page and a 60-page space costs the same.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers.ts';
import { contentCaches } from '../src/graphql/content-loading.ts';
import { expectValidResponse } from './openapi.ts';

let t: TestApp;
const BODIES_MAX = 200 * 1024;
beforeAll(async () => {
  t = await startTestApp({ config: { pageListBodiesMaxBytes: BODIES_MAX } });
});
afterAll(async () => {
  await t?.close();
});

const BODY = 'Lorem ipsum dolor sit amet. '.repeat(400); // ~11 kB a page

type Space = { id: string; parent: string; child: string; leaf: string; others: string[] };

/** A space with `n` large root pages, and a parent → child → leaf chain. */
async function seed(n: number): Promise<Space> {
  const r = await t.rest('POST', `/v1/orgs/${t.org.id}/spaces`, { title: `Space of ${n}` });
  const id = r.body.id as string;
  for (let i = 0; i < n; i += 50) {
    const changes = Array.from({ length: Math.min(50, n - i) }, (_, k) => ({ operation: 'insert_page', title: `Page ${i + k}`, document: { markdown: `${BODY} ${i + k}` } }));
    const res = await t.rest('POST', `/v1/spaces/${id}/content`, { changes });
    expect(res.status, res.text).toBe(200);
  }
  const chain = await t.rest('POST', `/v1/spaces/${id}/content`, { changes: [{ operation: 'insert_page', title: 'Guide', document: { markdown: `Parent body ${BODY}` } }] });
  const parent = chain.body.changes[0].page.id as string;
  const c2 = await t.rest('POST', `/v1/spaces/${id}/content`, { changes: [{ operation: 'insert_page', into: parent, title: 'Setup', document: { markdown: `Child body, see [faq](./faq.md) ${BODY}` } }] });
  const child = c2.body.changes[0].page.id as string;
  const c3 = await t.rest('POST', `/v1/spaces/${id}/content`, { changes: [{ operation: 'insert_page', into: child, title: 'Deep', document: { markdown: `Leaf body ${BODY}` } }] });
  const leaf = c3.body.changes[0].page.id as string;
  const tree = await t.gql(`query($id: ID!) { space(id: $id) { revision { allPages { pageId } } } }`, { id });
  const others = (tree.data.space.revision.allPages as Array<{ pageId: string }>).map((p) => p.pageId).filter((p) => ![parent, child, leaf].includes(p));
  return { id, parent, child, leaf, others };
}

/**
 * Run `fn` on a cold process (no cached tree or revision row) and report the statements and the
 * page-version ids they asked for, by kind of statement: with bodies (`markdown`) or without.
 */
async function measure<T>(fn: () => Promise<T>) {
  const caches = contentCaches(t.app.config);
  caches.trees?.clear();
  caches.rows?.clear();
  const events: Array<{ query: string; params: string }> = [];
  let on = true;
  (t.app.prisma as any).$on('query', (e: { query: string; params: string }) => on && events.push(e));
  try {
    const result = await fn();
    const pageVersionReads = events.filter((e) => /FROM "PageVersion"/.test(e.query) || /"public"\."PageVersion"/.test(e.query));
    const idsIn = (e: { params: string }) => (e.params.match(/pv_[0-9A-Za-z]+/g) ?? []).length;
    return {
      result,
      statements: events.length,
      pageVersionReads: pageVersionReads.length,
      /** Page-version ids asked for with a body (`markdown`, not only its size). */
      bodyIds: pageVersionReads.filter((e) => /\bmarkdown\b/.test(e.query.replace(/octet_length\((pv\.)?"?markdown"?\)|CASE WHEN links IS NULL THEN markdown END AS markdown/g, ''))).reduce((n, e) => n + idsIn(e), 0),
      /** Page-version ids asked for at all. */
      ids: pageVersionReads.reduce((n, e) => n + idsIn(e), 0),
    };
  } finally {
    on = false;
  }
}

let small: Space;
let large: Space;
beforeAll(async () => {
  small = await seed(10);
  large = await seed(60);
});

describe('one page read loads one page', () => {
  it('the version id prefix is what the measure counts', async () => {
    const r = await t.gql(`query($id: ID!) { space(id: $id) { revision { allPages { versionId } } } }`, { id: small.id });
    expect(r.data.space.revision.allPages[0].versionId).toMatch(/^pv_/);
  });

  it('REST GET …/content/page/{pageId} of a leaf reads its row and its ancestors\', one body, whatever the size of the space', async () => {
    const readLeaf = (s: Space) => measure(() => t.rest('GET', `/v1/spaces/${s.id}/content/page/${s.leaf}`));
    const a = await readLeaf(small);
    const b = await readLeaf(large);
    for (const m of [a, b]) {
      expect(m.result.status).toBe(200);
      expectValidResponse('get', '/spaces/{spaceId}/content/page/{pageId}', 200, m.result.body);
      expect(m.result.body.markdown).toContain('Leaf body');
      expect(m.result.body.path).toBe('guide/setup/deep');
      expect(m.bodyIds).toBe(1); // the leaf's body, nothing else
      expect(m.ids).toBeLessThanOrEqual(4); // leaf + 2 ancestors (+ the body read)
    }
    expect(b.statements).toBe(a.statements);
    expect(b.ids).toBe(a.ids);
  });

  it('a page with children reads its subtree (the contract nests them with their bodies), not its siblings', async () => {
    const m = await measure(() => t.rest('GET', `/v1/spaces/${large.id}/content/page/${large.parent}`));
    expect(m.result.status).toBe(200);
    expectValidResponse('get', '/spaces/{spaceId}/content/page/{pageId}', 200, m.result.body);
    expect(m.result.body.pages[0].pages[0].markdown).toContain('Leaf body');
    expect(m.bodyIds).toBe(3);
    expect(m.ids).toBeLessThanOrEqual(8); // 3 rows, their 3 bodies, the 2 descendants' sizes
  });

  it('GraphQL page(id:) and pageByPath answer as the whole tree does, reading only that page', async () => {
    const Q = `query($id: ID!, $page: String!, $path: String!) { space(id: $id) { revision {
      page(id: $page) { id pageId title path depth parentId markdown }
      pageByPath(path: $path) { id pageId title path depth parentId markdown }
    } } }`;
    const one = await measure(() => t.gql(`query($id: ID!, $page: String!) { space(id: $id) { revision { page(id: $page) { pageId markdown } } } }`, { id: large.id, page: large.child }));
    expect(one.result.data.space.revision.page.markdown).toContain('Child body');
    expect(one.bodyIds).toBe(1);
    expect(one.ids).toBeLessThanOrEqual(3);
    // By path: one statement per segment, each returning the sibling with that slug (it probes
    // the siblings on the path by primary key), then the page as by id.
    const m = await measure(() => t.gql(Q, { id: large.id, page: large.child, path: '/guide/setup/deep/' }));
    const rev = m.result.data.space.revision;
    expect(rev.page).toMatchObject({ pageId: large.child, path: 'guide/setup', depth: 1, parentId: large.parent });
    expect(rev.pageByPath).toMatchObject({ pageId: large.leaf, path: 'guide/setup/deep', depth: 2, parentId: large.child });
    expect(rev.pageByPath.markdown).toContain('Leaf body');
    expect(m.bodyIds).toBe(2);
    // The same answers from the whole tree (warm: the tree is at hand).
    const all = await t.gql(`query($id: ID!) { space(id: $id) { revision { allPages { id pageId path depth parentId } } } }`, { id: large.id });
    const byId = new Map((all.data.space.revision.allPages as any[]).map((p) => [p.pageId, p]));
    expect(byId.get(large.child)).toMatchObject({ id: rev.page.id, path: rev.page.path, depth: 1, parentId: large.parent });
    const warm = await t.gql(Q, { id: large.id, page: large.child, path: 'guide/setup/deep' });
    expect(warm.data).toEqual(m.result.data);
  });

  it('unknown ids and paths are null (REST 404); hostile paths cost at most one statement per tree level', async () => {
    const r = await t.rest('GET', `/v1/spaces/${large.id}/content/page/page_doesnotexist`);
    expect(r.status).toBe(404);
    const deep = Array.from({ length: 2000 }, () => 'guide').join('/');
    const m = await measure(() => t.gql(`query($id: ID!, $p: String!) { space(id: $id) { revision { pageByPath(path: $p) { pageId } } } }`, { id: large.id, p: deep }));
    expect(m.result.data.space.revision.pageByPath).toBeNull();
    expect(m.pageVersionReads).toBeLessThanOrEqual(3);
    for (const p of ['', '/', 'guide//setup', 'guide/setup/deep/none']) {
      const x = await t.gql(`query($id: ID!, $p: String!) { space(id: $id) { revision { pageByPath(path: $p) { pageId } } } }`, { id: large.id, p });
      expect(x.data.space.revision.pageByPath, p).toBeNull();
    }
  });

  it('a page\'s links read that page\'s links and the tree, no body of another page', async () => {
    const m = await measure(() => t.rest('GET', `/v1/spaces/${large.id}/content/page/${large.child}/links`));
    expect(m.result.status).toBe(200);
    expectValidResponse('get', '/spaces/{spaceId}/content/page/{pageId}/links', 200, m.result.body);
    expect(m.result.body.items.map((i: any) => i.status)).toEqual(['broken']);
    expect(m.bodyIds).toBeLessThanOrEqual(1);
  });

  it('the space\'s link listing reads stored links, no bodies', async () => {
    const m = await measure(() => t.rest('GET', `/v1/spaces/${large.id}/links`));
    expect(m.result.status).toBe(200);
    expectValidResponse('get', '/spaces/{spaceId}/links', 200, m.result.body);
    expect(m.result.body.count).toBe(1);
    // The location (one page) is shown with its body: one body.
    expect(m.bodyIds).toBeLessThanOrEqual(1);
  });

  it('a page whose subtree carries more bodies than one answer may is a 400 saying what to do; each page still reads alone', async () => {
    const r = await t.rest('POST', `/v1/spaces/${large.id}/content`, { changes: [{ operation: 'insert_page', title: 'Big section', document: { markdown: 'Intro' } }] });
    const big = r.body.changes[0].page.id as string;
    const kids = Array.from({ length: 25 }, (_, i) => ({ operation: 'insert_page', into: big, title: `Part ${i}`, document: { markdown: `${BODY} ${i}` } }));
    const k = await t.rest('POST', `/v1/spaces/${large.id}/content`, { changes: kids });
    const m = await measure(() => t.rest('GET', `/v1/spaces/${large.id}/content/page/${big}`));
    expect(m.result.status).toBe(400);
    expect(m.result.body.error.message).toMatch(/one at a time/);
    expect(m.bodyIds).toBeLessThanOrEqual(1); // the page's own body at most: no descendant's loads
    const one = await t.rest('GET', `/v1/spaces/${large.id}/content/page/${k.body.changes[3].page.id}`);
    expect(one.status).toBe(200);
    expect(one.body.markdown).toContain('Lorem');
    // Without bodies (GraphQL), the subtree lists.
    const g = await t.gql(`query($id: ID!, $p: String!) { space(id: $id) { revision { page(id: $p) { descendants { title } } } } }`, { id: large.id, p: big });
    expect(g.data.space.revision.page.descendants).toHaveLength(25);
  });
});
