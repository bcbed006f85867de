// Every reader of a revision's page tree reads the tree store (`treeRoot`), so revisions can stop
// carrying the legacy JSON `tree`; a revision the backfill has not reached (no `treeRoot`) still
// reads from its JSON. The same content is read through the API three ways: as written today
// (both copies), with only the JSON (every `treeRoot` set to NULL: an old revision), and with only
// the tree store (every JSON `tree` blanked to '[]'); the answers must be the same.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers.ts';
import { contentCaches } from '../src/graphql/content-loading.ts';
import { clearTreeCache, readTree, readTrees } from '../src/domain/revision-tree.ts';
import { renderPdfExportTask } from '../src/domain/pdf-exports.ts';
import { expectValidResponse } from './openapi.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.close();
});

const CR = (spaceId: string, cr: string) => `/v1/spaces/${spaceId}/change-requests/${cr}`;

type Mode = 'both' | 'json only' | 'store only';
/** Both copies of every revision's tree as written, to switch between the ways of reading. */
let saved = new Map<string, { tree: unknown; treeRoot: string | null }>();

async function snapshot() {
  const rows = await t.app.prisma.revision.findMany({ select: { id: true, tree: true, treeRoot: true } });
  for (const r of rows) {
    const had = saved.get(r.id);
    // Keep the copy a mode removed: a row already switched keeps its saved copy. Revisions are
    // written with the store only now: their JSON copy (what an old revision has) is built from it.
    const empty = Array.isArray(r.tree) && r.tree.length === 0;
    const tree = empty && had ? had.tree : empty && r.treeRoot ? await readTree(t.app.prisma, r.treeRoot) : r.tree;
    saved.set(r.id, { tree, treeRoot: r.treeRoot ?? had?.treeRoot ?? null });
  }
}

/** Store every revision's tree the way `mode` says, and forget what the process cached. */
async function use(mode: Mode) {
  await snapshot();
  for (const [id, s] of saved) {
    await t.app.prisma.$executeRaw`UPDATE "Revision" SET
      "tree" = ${mode === 'store only' ? '[]' : JSON.stringify(s.tree)}::jsonb,
      "treeRoot" = ${mode === 'json only' ? null : s.treeRoot}
      WHERE "id" = ${id}`;
  }
  const caches = contentCaches(t.app.config);
  caches.trees?.clear();
  caches.rows?.clear();
  clearTreeCache();
}

let spaceId: string;
let crId: string;
let siteId: string;
let siteSpaceId: string;
const ids: Record<string, string> = {};

async function edit(path: string, changes: unknown[]) {
  const r = await t.rest('POST', path, { changes });
  expect(r.status, r.text).toBe(200);
  return r.body;
}

beforeAll(async () => {
  const s = await t.rest('POST', `/v1/orgs/${t.org.id}/spaces`, { title: 'Manual' });
  spaceId = s.body.id;
  const first = await edit(`/v1/spaces/${spaceId}/content`, [
    { operation: 'insert_page', title: 'Intro', document: { markdown: 'Welcome.' } },
    { operation: 'insert_page', title: 'Guide', document: { markdown: 'The guide.' } },
    { operation: 'insert_page', title: 'FAQ', document: { markdown: 'Questions.' } },
  ]);
  [ids.intro, ids.guide, ids.faq] = first.changes.map((c: { page: { id: string } }) => c.page.id);
  ids.setup = (await edit(`/v1/spaces/${spaceId}/content`, [{ operation: 'insert_page', into: ids.guide, title: 'Setup', document: { markdown: 'Set up.' } }])).changes[0].page.id;
  ids.deep = (await edit(`/v1/spaces/${spaceId}/content`, [{ operation: 'insert_page', into: ids.setup, title: 'Deep', document: { markdown: 'Deep down.' } }])).changes[0].page.id;
  // A move, so sibling order is not insertion order.
  await edit(`/v1/spaces/${spaceId}/content`, [{ operation: 'update_page', page: ids.faq, at: 0 }]);

  const cr = await t.rest('POST', `/v1/spaces/${spaceId}/change-requests`, { subject: 'More' });
  crId = cr.body.id;
  await edit(`${CR(spaceId, crId)}/content`, [{ operation: 'insert_page', into: ids.guide, title: 'Extra', document: { markdown: 'More.' } }]);

  const site = await t.rest('POST', `/v1/orgs/${t.org.id}/sites`, { title: 'Docs', spaces: [spaceId] });
  expect(site.status, site.text).toBe(201);
  siteId = site.body.id;
  siteSpaceId = (await t.app.prisma.siteSpace.findFirstOrThrow({ where: { siteId } })).id;
}, 60_000);

const PAGE = 'id pageId title path depth parentId';

/** What users see of the content, through GraphQL and REST. */
async function answers() {
  const out: Record<string, unknown> = {};
  const g = await t.gql(
    `query($id: ID!, $deep: String!, $guide: String!, $missing: String!) { space(id: $id) { revision {
      deep: page(id: $deep) { ${PAGE} markdown }
      guide: page(id: $guide) { ${PAGE} pages { ${PAGE} pages { ${PAGE} } } descendants { pageId } }
      missing: page(id: $missing) { pageId }
      byPath: pageByPath(path: "guide/setup/deep") { ${PAGE} }
      byBadPath: pageByPath(path: "guide/nope") { pageId }
      pages { ${PAGE} pages { ${PAGE} pages { ${PAGE} } } }
      allPages { ${PAGE} }
    } } }`,
    { id: spaceId, deep: ids.deep, guide: ids.guide, missing: 'page_missing' },
  );
  expect(g.errors).toBeUndefined();
  out.graphql = g.data;
  const cr = await t.gql(`query($id: ID!, $n: String!) { space(id: $id) { changeRequest(id: $n) { revision { allPages { ${PAGE} } } } } }`, { id: spaceId, n: crId });
  out.changeRequest = cr.data ?? cr.errors;

  const list = await t.rest('GET', `/v1/spaces/${spaceId}/content/pages`);
  expectValidResponse('GET', '/spaces/{spaceId}/content/pages', 200, list.body);
  out.restPages = list.body;
  const page = await t.rest('GET', `/v1/spaces/${spaceId}/content/page/${ids.guide}`);
  expectValidResponse('GET', '/spaces/{spaceId}/content/page/{pageId}', 200, page.body);
  out.restPage = page.body;
  out.restMissing = (await t.rest('GET', `/v1/spaces/${spaceId}/content/page/page_missing`)).status;
  out.restCrPages = (await t.rest('GET', `${CR(spaceId, crId)}/content/pages`)).body;
  return out;
}

describe('readers give the same answers from the tree store, from the JSON tree, and from both', () => {
  it('page reads by id and path, the pages list and allPages, REST content/pages and content/page', async () => {
    await use('both');
    const both = await answers();
    expect((both.graphql as any).space.revision.allPages.map((p: { title: string }) => p.title)).toEqual(['FAQ', 'Intro', 'Guide', 'Setup', 'Deep']);
    expect((both.graphql as any).space.revision.byPath).toMatchObject({ pageId: ids.deep, path: 'guide/setup/deep', depth: 2, parentId: ids.setup });
    await use('json only');
    expect(await answers()).toEqual(both);
    await use('store only');
    expect(await t.app.prisma.revision.count({ where: { NOT: { tree: { equals: [] } } } })).toBe(0);
    expect(await answers()).toEqual(both);
  });

  it('an edit on a base with only the tree store (or only the JSON) reads its base and keeps the other pages', async () => {
    for (const mode of ['store only', 'json only'] as const) {
      await use(mode);
      const markdown = `Welcome (${mode}).`;
      await edit(`/v1/spaces/${spaceId}/content`, [{ operation: 'update_page', page: ids.intro, document: { markdown } }]);
      await use(mode);
      const g = await t.gql(`query($id: ID!) { space(id: $id) { revision { allPages { title path markdown } } } }`, { id: spaceId });
      expect(g.data.space.revision.allPages.map((p: { title: string }) => p.title)).toEqual(['FAQ', 'Intro', 'Guide', 'Setup', 'Deep']);
      expect(g.data.space.revision.allPages[1].markdown.trim()).toBe(markdown);
      expect(g.data.space.revision.allPages[3].markdown.trim()).toBe('Set up.');
      expect(g.data.space.revision.allPages.map((p: { path: string }) => p.path)).toEqual(['faq', 'intro', 'guide', 'guide/setup', 'guide/setup/deep']);
    }
  });

  it('comments on a page: posting finds the page, its target reads it; a missing page is a 400', async () => {
    const results: unknown[] = [];
    for (const mode of ['both', 'json only', 'store only'] as const) {
      await use(mode);
      const posted = await t.rest('POST', `/v1/spaces/${spaceId}/comments`, { page: ids.setup, body: { markdown: `on setup, ${mode}` } });
      expect(posted.status, posted.text).toBe(200);
      const bad = await t.rest('POST', `/v1/spaces/${spaceId}/comments`, { page: 'page_missing', body: { markdown: 'x' } });
      expect(bad.status).toBe(400);
      expect(JSON.stringify(bad.body)).toMatch(/page/);
      const read = await t.rest('GET', `/v1/spaces/${spaceId}/comments/${posted.body.id}`);
      expect(read.status).toBe(200);
      const row = await t.app.prisma.comment.findUniqueOrThrow({ where: { id: posted.body.id } });
      results.push({ page: read.body.target.page, pageId: row.pageId, hasVersion: row.pageVersionId !== null });
    }
    expect(results[0]).toMatchObject({ page: { id: ids.setup, path: 'guide/setup' }, pageId: ids.setup, hasVersion: true });
    expect(results[1]).toEqual(results[0]);
    expect(results[2]).toEqual(results[0]);
  });

  it("a PDF export's page list: whole content, a page with its subtree, one page; a missing page is a 400", async () => {
    const results: unknown[] = [];
    for (const mode of ['both', 'json only', 'store only'] as const) {
      await use(mode);
      await t.app.prisma.pdfExport.deleteMany({});
      const counts: Record<string, unknown> = {};
      for (const [name, query] of [['all', ''], ['guide', `?page=${ids.guide}`], ['only', `?page=${ids.setup}&only=true`]] as const) {
        const started = await t.rest('POST', `${CR(spaceId, crId)}/pdf${query}`);
        expect(started.status, started.text).toBe(200);
        await renderPdfExportTask({ exportId: started.body.id }, { prisma: t.app.prisma, config: t.app.config, clock: t.clock, log: t.app.log, services: t.app.services });
        const exp = await t.app.prisma.pdfExport.findUniqueOrThrow({ where: { id: started.body.id } });
        counts[name] = { state: exp.state, pageCount: exp.pageCount };
      }
      const bad = await t.rest('POST', `${CR(spaceId, crId)}/pdf?page=page_missing`);
      expect(bad.status).toBe(400);
      counts.missing = bad.body;
      results.push(counts);
    }
    // The change request's head: FAQ, Intro, Guide (Setup (Deep), Extra).
    expect(results[0]).toMatchObject({ all: { state: 'complete', pageCount: 6 }, guide: { state: 'complete', pageCount: 4 }, only: { state: 'complete', pageCount: 1 } });
    expect(results[1]).toEqual(results[0]);
    expect(results[2]).toEqual(results[0]);
  }, 120_000);

  it("a duplicated space's pages", async () => {
    const results: unknown[] = [];
    for (const mode of ['both', 'json only', 'store only'] as const) {
      await use(mode);
      const dup = await t.rest('POST', `/v1/spaces/${spaceId}/duplicate`);
      expect(dup.status, dup.text).toBe(201);
      await use(mode);
      const g = await t.gql(`query($id: ID!) { space(id: $id) { revision { allPages { pageId title path depth markdown } } } }`, { id: dup.body.id });
      expect(g.errors).toBeUndefined();
      const original = await t.gql(`query($id: ID!) { space(id: $id) { revision { allPages { pageId title path depth markdown } } } }`, { id: spaceId });
      expect(g.data.space.revision.allPages).toEqual(original.data.space.revision.allPages);
      results.push(g.data.space.revision.allPages.map((p: { path: string }) => p.path));
    }
    expect(results[0]).toEqual(['faq', 'intro', 'guide', 'guide/setup', 'guide/setup/deep']);
    expect(results[1]).toEqual(results[0]);
    expect(results[2]).toEqual(results[0]);
  });

  it('site redirects to a page: a page of the content is accepted, one outside it is a 400 naming pageId', async () => {
    for (const mode of ['both', 'json only', 'store only'] as const) {
      await use(mode);
      const ok = await t.rest('POST', `/v1/orgs/${t.org.id}/sites/${siteId}/redirects`, { source: `/old/deep-${mode.replace(' ', '-')}`, destination: { kind: 'site-page', siteSpaceId, pageId: ids.deep } });
      expect(ok.status, ok.text).toBe(201);
      // A page only in the change request is not in the site space's content.
      const extra = (await t.app.prisma.pageVersion.findFirstOrThrow({ where: { spaceId, title: 'Extra' } })).pageId;
      const before = await t.app.prisma.siteRedirect.count({ where: { siteId } });
      for (const pageId of [extra, 'page_missing']) {
        const bad = await t.rest('POST', `/v1/orgs/${t.org.id}/sites/${siteId}/redirects`, { source: `/old/bad-${mode.replace(' ', '-')}`, destination: { kind: 'site-page', siteSpaceId, pageId } });
        expect(bad.status).toBe(400);
        expect(JSON.stringify(bad.body)).toMatch(/destination\.pageId/);
      }
      expect(await t.app.prisma.siteRedirect.count({ where: { siteId } })).toBe(before);
    }
  });

  it('a page read with only the tree store reads the paths of the page and its ancestors, not the whole tree', async () => {
    await use('store only');
    const read = await t.countQueries(() => t.rest('GET', `/v1/spaces/${spaceId}/content/page/${ids.deep}`));
    expect(read.result.status).toBe(200);
    expect(read.result.body).toMatchObject({ id: ids.deep, path: 'guide/setup/deep', pages: [] });
    // No whole-tree walk (recursive statement), and no revision row other than the space's.
    expect(read.statements.filter((s) => /WITH RECURSIVE/.test(s))).toEqual([]);
    expect(read.statements.filter((s) => /"RevisionTreeNode"/.test(s)).length).toBeGreaterThan(0);
    // The page with children nests its subtree, from the store.
    const guide = await t.rest('GET', `/v1/spaces/${spaceId}/content/page/${ids.guide}`);
    expect(guide.body).toMatchObject({ id: ids.guide, pages: [{ id: ids.setup, pages: [{ id: ids.deep }] }] });
  });

  it('readTrees reads several trees in one statement, each equal to readTree', async () => {
    await use('both');
    const roots = (await t.app.prisma.revision.findMany({ where: { treeRoot: { not: null } }, select: { treeRoot: true } })).map((r) => r.treeRoot!);
    expect(roots.length).toBeGreaterThan(5);
    clearTreeCache();
    const together = await t.countQueries(() => readTrees(t.app.prisma, roots));
    expect(together.count).toBe(1);
    for (const root of roots) expect(together.result.get(root)).toEqual(await readTree(t.app.prisma, root));
  });
});
