// Writes touch what changed: a one-page content edit (applyChanges, through the live-content
// REST batch) reads only the pages it edits and writes only the changed trie nodes, so it costs
// the same number of statements in a 10-page and a 5,000-page space; "CurrentPage" (kept by the
// trigger on "Space"."revisionId") changes only for the pages whose version or path changed, and
// always equals a full recompute, whoever moves the space (the API or plain SQL).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readTree } from '../src/domain/revision-tree.ts';
import { versionIdsOf, type TreeNode } from '../src/domain/revisions.ts';
import { startTestApp, type TestApp } from './helpers.ts';
import { depthOf, newSpace as newSpaceIn, seedRevision } from './fixtures/tree.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
  // Every row written to "CurrentPage", counted exactly (the statistics views report late).
  await t.app.prisma.$executeRawUnsafe(`CREATE TABLE "TestCurrentPageWrites" ("op" TEXT NOT NULL)`);
  await t.app.prisma.$executeRawUnsafe(`CREATE FUNCTION "test_count_current_page"() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN INSERT INTO "TestCurrentPageWrites" VALUES (TG_OP); RETURN NULL; END $$`);
  await t.app.prisma.$executeRawUnsafe(`CREATE TRIGGER "test_count_current_page" AFTER INSERT OR UPDATE OR DELETE ON "CurrentPage" FOR EACH ROW EXECUTE FUNCTION "test_count_current_page"()`);
});
afterAll(() => t?.close());

const edit = (spaceId: string, changes: unknown[]) => t.rest('POST', `/v1/spaces/${spaceId}/content`, { changes });

const newSpace = (title: string) => newSpaceIn(t, title);

/**
 * A space of `size` pages seeded in SQL (a tenth at the top, each other page under an earlier
 * one), its revision carrying the stored tree and the legacy copies readers still use.
 */
async function seedSpace(size: number, tag: string) {
  const spaceId = await newSpace(`Seeded ${size}`);
  const roots: TreeNode[] = [];
  const all: TreeNode[] = [];
  for (let i = 0; i < size; i++) {
    const node: TreeNode = { id: `page_${tag}${i}`, v: `pv_${tag}${i}`, pages: [] };
    if (i % 10 === 0 || all.length === 0) roots.push(node);
    else all[((i * 2654435761) % 4294967296) % all.length].pages.push(node);
    all.push(node);
  }
  await seedRevision(t, spaceId, roots, size, tag, { legacyJson: true });
  return { spaceId, roots, all };
}

const count = async (table: string) => Number((await t.app.prisma.$queryRawUnsafe<Array<{ n: bigint }>>(`SELECT count(*) AS n FROM "${table}"`))[0].n);

async function currentRoot(spaceId: string) {
  const s = await t.app.prisma.space.findUniqueOrThrow({ where: { id: spaceId }, select: { revision: { select: { id: true, treeRoot: true } } } });
  return s.revision!;
}

/** "CurrentPage" as a full walk of the current revision's tree would write it: pageId → [versionId, path]. */
async function expectedCurrentPages(spaceId: string) {
  const { treeRoot } = await currentRoot(spaceId);
  const tree = await readTree(t.app.prisma, treeRoot);
  const versions = await t.app.prisma.pageVersion.findMany({ where: { id: { in: versionIdsOf(tree) } }, select: { id: true, slug: true } });
  const slug = new Map(versions.map((v) => [v.id, v.slug]));
  const out = new Map<string, [string, string]>();
  const visit = (nodes: TreeNode[], prefix: string) => {
    for (const n of nodes) {
      const path = prefix ? `${prefix}/${slug.get(n.v)}` : slug.get(n.v)!;
      out.set(n.id, [n.v, path]);
      visit(n.pages, path);
    }
  };
  visit(tree, '');
  return out;
}

async function actualCurrentPages(spaceId: string) {
  const rows = await t.app.prisma.currentPage.findMany({ where: { spaceId }, select: { pageId: true, versionId: true, path: true } });
  return new Map(rows.map((r) => [r.pageId, [r.versionId, r.path] as [string, string]]));
}

async function expectCurrentPagesExact(spaceId: string) {
  expect(await actualCurrentPages(spaceId)).toEqual(await expectedCurrentPages(spaceId));
}

/** Statements, tree node rows and CurrentPage row writes of one request. */
async function measure(fn: () => Promise<{ status: number }>) {
  const [nodes, cpWrites] = [await count('RevisionTreeNode'), await count('TestCurrentPageWrites')];
  const { result, count: statements, statements: sql } = await t.countQueries(fn);
  expect(result.status).toBe(200);
  if (process.env.SHOW_SQL) console.log(sql.map((q) => q.replace(/\s+/g, ' ').slice(0, 140)).join('\n'));
  return { statements, nodesWritten: (await count('RevisionTreeNode')) - nodes, currentPageWrites: (await count('TestCurrentPageWrites')) - cpWrites };
}

describe('a one-page edit costs the same at 10 and at 5,000 pages', () => {
  it('same statements; at most depth + 1 tree nodes; one CurrentPage row; a no-op writes no revision', async () => {
    const sizes = [10, 5_000];
    const seen: Array<{ size: number; depth: number; edit: Awaited<ReturnType<typeof measure>>; noop: number; rename: Awaited<ReturnType<typeof measure>> }> = [];
    for (const size of sizes) {
      const { spaceId, all } = await seedSpace(size, `w${size}x`);
      await expectCurrentPagesExact(spaceId);
      const page = all[all.length - 1];
      const depth = await depthOf(t.app.prisma, (await currentRoot(spaceId)).treeRoot!);

      // A body edit of one page.
      const body = await measure(() => edit(spaceId, [{ operation: 'update_page', page: page.id, document: { markdown: 'A new body' } }]));
      expect(body.nodesWritten).toBeLessThanOrEqual(depth + 1);
      expect(body.currentPageWrites).toBe(1);
      await expectCurrentPagesExact(spaceId);

      // A rename (its siblings' slugs are checked) of a page with descendants: its path changes, and theirs.
      const parent = all.find((p, i) => i % 10 !== 0 && p.pages.length > 0)!;
      const below = (n: TreeNode): number => n.pages.reduce((s, c) => s + 1 + below(c), 0);
      expect(below(parent)).toBeGreaterThan(0);
      const rename = await measure(() => edit(spaceId, [{ operation: 'update_page', page: parent.id, title: `Renamed ${size}` }]));
      expect(rename.nodesWritten).toBeLessThanOrEqual(depth + 1);
      expect(rename.currentPageWrites).toBe(1 + below(parent));
      await expectCurrentPagesExact(spaceId);
      const read = await t.rest('GET', `/v1/spaces/${spaceId}/content/page/${parent.id}`);
      expect(read.body).toMatchObject({ title: `Renamed ${size}`, slug: `renamed-${size}` });

      // The same again changes nothing: no revision, no tree node, no CurrentPage row.
      const revisions = await count('Revision');
      const { treeRoot } = await currentRoot(spaceId);
      const again = await measure(() => edit(spaceId, [{ operation: 'update_page', page: parent.id, title: `Renamed ${size}` }]));
      expect(await count('Revision')).toBe(revisions);
      expect((await currentRoot(spaceId)).treeRoot).toBe(treeRoot);
      expect(again.nodesWritten).toBe(0);
      expect(again.currentPageWrites).toBe(0);
      seen.push({ size, depth, edit: body, noop: again.statements, rename });
    }
    // The deeper trie of the large space costs rows on the path, never a statement more.
    expect(seen[1].depth).toBeGreaterThan(seen[0].depth);
    expect(seen[1].edit.statements).toBe(seen[0].edit.statements);
    expect(seen[1].rename.statements).toBe(seen[0].rename.statements);
    expect(seen[1].noop).toBe(seen[0].noop);
    console.log(JSON.stringify(seen));
  }, 300_000);
});

describe('inserts and moves land where asked', () => {
  it('insert at an index, move into a page at an index, move back to the top: read back through the API', async () => {
    const spaceId = await newSpace('Places');
    const r = await edit(spaceId, ['A', 'B', 'C', 'D'].map((title, i) => ({ operation: 'insert_page', title, ref: `p${i}`, document: { markdown: `${title} body` } })));
    expect(r.status).toBe(200);
    const ids = r.body.changes.map((c: any) => c.page.id as string);
    const titles = async () => {
      const pages = await t.rest('GET', `/v1/spaces/${spaceId}/content/pages`);
      expect(pages.status).toBe(200);
      const walk = (list: any[]): unknown[] => list.map((p) => (p.pages?.length ? { [p.title]: walk(p.pages) } : p.title));
      return walk(pages.body.pages);
    };
    expect(await titles()).toEqual(['A', 'B', 'C', 'D']);

    expect((await edit(spaceId, [{ operation: 'insert_page', title: 'X', at: 1, document: { markdown: 'x' } }])).status).toBe(200);
    expect(await titles()).toEqual(['A', 'X', 'B', 'C', 'D']);
    expect((await edit(spaceId, [{ operation: 'insert_page', title: 'Y', at: 0, document: { markdown: 'y' } }])).status).toBe(200);
    expect(await titles()).toEqual(['Y', 'A', 'X', 'B', 'C', 'D']);

    // D into B, first; C into B, after D; A to the end of the top level.
    expect((await edit(spaceId, [{ operation: 'update_page', page: ids[3], into: ids[1], at: 0 }])).status).toBe(200);
    expect((await edit(spaceId, [{ operation: 'update_page', page: ids[2], into: ids[1], at: 1 }])).status).toBe(200);
    expect((await edit(spaceId, [{ operation: 'update_page', page: ids[0], at: 99 }])).status).toBe(200);
    expect(await titles()).toEqual(['Y', 'X', { B: ['D', 'C'] }, 'A']);
    // C before D inside B, then D back to the top at index 1.
    expect((await edit(spaceId, [{ operation: 'update_page', page: ids[2], at: 0 }])).status).toBe(200);
    expect((await edit(spaceId, [{ operation: 'update_page', page: ids[3], into: null, at: 1 }])).status).toBe(200);
    expect(await titles()).toEqual(['Y', 'D', 'X', { B: ['C'] }, 'A']);
    // A move to where the page is changes nothing.
    const before = await count('Revision');
    const same = await edit(spaceId, [{ operation: 'update_page', page: ids[3], into: null, at: 1 }]);
    expect(same.status).toBe(200);
    expect(await count('Revision')).toBe(before);

    // Errors keep naming the field, and change nothing.
    const bad = await edit(spaceId, [{ operation: 'update_page', page: ids[1], into: ids[2] }]);
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toContain('changes.0.into');
    const missing = await edit(spaceId, [{ operation: 'delete_page', page: 'page_nope' }]);
    expect(missing.status).toBe(400);
    expect(missing.body.error.message).toContain('changes.0.page');
    expect(await titles()).toEqual(['Y', 'D', 'X', { B: ['C'] }, 'A']);

    // Deleting B deletes C with it.
    expect((await edit(spaceId, [{ operation: 'delete_page', page: ids[1] }])).status).toBe(200);
    expect(await titles()).toEqual(['Y', 'D', 'X', 'A']);
    await expectCurrentPagesExact(spaceId);
  }, 120_000);
});

describe('CurrentPage follows the tree difference', () => {
  it('after random inserts, edits, moves, renames and deletes, and after plain SQL moves of the space, it equals a full recompute', async () => {
    const spaceId = await newSpace('Random');
    let seed = 42;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    const first = await edit(spaceId, Array.from({ length: 30 }, (_, i) => ({ operation: 'insert_page', title: `Page ${i}`, document: { markdown: `body ${i}` } })));
    expect(first.status).toBe(200);
    const revisions: string[] = [(await currentRoot(spaceId)).id];
    for (let round = 0; round < 40; round++) {
      const pages = (await t.app.prisma.currentPage.findMany({ where: { spaceId }, select: { pageId: true }, orderBy: { pageId: 'asc' } })).map((p) => p.pageId);
      const pick = () => pages[rand(pages.length)];
      const op = rand(6);
      const change =
        op === 0
          ? { operation: 'insert_page', title: `New ${round}`, into: rand(2) ? pick() : undefined, at: rand(4), document: { markdown: `new ${round}` } }
          : op === 1
            ? { operation: 'update_page', page: pick(), title: `Title ${round}` }
            : op === 2
              ? { operation: 'update_page', page: pick(), into: rand(3) ? pick() : null, at: rand(5) }
              : op === 3
                ? { operation: 'delete_page', page: pick() }
                : op === 4
                  ? { operation: 'update_page', page: pick(), slug: `slug-${round}` }
                  : { operation: 'update_page', page: pick(), document: { markdown: `edited ${round}` } };
      const r = await edit(spaceId, [change]);
      // A move into its own subtree is refused (400); everything else applies.
      expect([200, 400]).toContain(r.status);
      revisions.push((await currentRoot(spaceId)).id);
      await expectCurrentPagesExact(spaceId);
    }
    // Plain SQL moves of the space (a restore to any earlier revision, and back) keep it exact.
    for (const i of [0, 7, 3, revisions.length - 1]) {
      await t.app.prisma.$executeRaw`UPDATE "Space" SET "revisionId" = ${revisions[i]} WHERE "id" = ${spaceId}`;
      await expectCurrentPagesExact(spaceId);
    }
  }, 300_000);

  it('a revision without a stored tree (not yet converted) falls back to its JSON tree', async () => {
    const spaceId = await newSpace('Legacy');
    expect((await edit(spaceId, [{ operation: 'insert_page', title: 'One', document: { markdown: 'one' } }])).status).toBe(200);
    const current = await currentRoot(spaceId);
    const legacy = await t.app.prisma.revision.findUniqueOrThrow({ where: { id: current.id } });
    // A revision as written before trees were stored: the JSON tree only.
    const json = await readTree(t.app.prisma, legacy.treeRoot);
    await t.app.prisma.revision.create({ data: { id: `rev_legacy_${spaceId}`, spaceId, parents: [current.id], type: 'edits', tree: json as never } });
    await t.app.prisma.$executeRaw`UPDATE "Space" SET "revisionId" = ${`rev_legacy_${spaceId}`} WHERE "id" = ${spaceId}`;
    expect([...(await actualCurrentPages(spaceId)).values()].map((v) => v[1])).toEqual(['one']);
    // An edit on it stores its tree first, then goes on by difference.
    expect((await edit(spaceId, [{ operation: 'insert_page', title: 'Two', document: { markdown: 'two' } }])).status).toBe(200);
    await expectCurrentPagesExact(spaceId);
    expect((await actualCurrentPages(spaceId)).size).toBe(2);
  }, 60_000);
});

describe('a change request batch checks a new slug without reading the sibling list', () => {
  /** A space of `size` top-level pages (slugs page-0 … page-<size-1>), seeded in SQL. */
  async function seedFlat(size: number, tag: string) {
    const spaceId = await newSpace(`Flat ${size}`);
    const roots: TreeNode[] = Array.from({ length: size }, (_, i) => ({ id: `page_${tag}${i}`, v: `pv_${tag}${i}`, pages: [] }));
    await seedRevision(t, spaceId, roots, size, tag);
    const cr = await t.rest('POST', `/v1/spaces/${spaceId}/change-requests`, { subject: 'Renames' });
    expect(cr.status).toBe(201);
    return { spaceId, cr: cr.body.id as string, pages: roots.map((r) => r.id) };
  }

  /** Statements of one request, and the characters of the values they sent (what the sibling list would be: its ids). */
  async function sent(fn: () => Promise<{ status: number; body: any }>) {
    const params: string[] = [];
    (t.app.prisma as any).$on('query', (e: { params: string }) => params.push(e.params));
    const before = params.length;
    const { result, count: statements } = await t.countQueries(fn);
    return { result, statements, paramChars: params.slice(before).reduce((s, p) => s + p.length, 0) };
  }

  it('a title change costs the same statements and sends a bounded amount at 10 and 3,000 siblings; slugs deduplicate as before', async () => {
    const seen: Array<{ size: number; statements: number; paramChars: number }> = [];
    for (const size of [10, 3_000]) {
      const { spaceId, cr, pages } = await seedFlat(size, `f${size}x`);
      const batch = (changes: unknown[]) => t.rest('POST', `/v1/spaces/${spaceId}/change-requests/${cr}/content?compat=false`, { changes });
      const page = async (id: string) => (await t.rest('GET', `/v1/spaces/${spaceId}/change-requests/${cr}/content/page/${id}`)).body;

      // `page` is free at first; then `page`, `page-1` … `page-<size-1>` are all taken: the first free one after them.
      expect((await batch([{ operation: 'update_page', page: pages[0], title: 'Page' }])).status).toBe(200);
      expect((await page(pages[0])).slug).toBe('page');
      const after = await batch([{ operation: 'insert_page', title: 'Page', document: { markdown: 'x' } }]);
      expect(after.status).toBe(200);
      expect((await page(after.body.changes[0].page.id)).slug).toBe(`page-${size}`);

      const r = await sent(() => batch([{ operation: 'update_page', page: pages[5], title: 'Renamed' }]));
      expect(r.result.status).toBe(200);
      expect(await page(pages[5])).toMatchObject({ title: 'Renamed', slug: 'renamed' });
      seen.push({ size, statements: r.statements, paramChars: r.paramChars });

      // A sibling's slug: the next free `-n` (page-1 is taken by a sibling, "page-1-2" is free).
      expect((await batch([{ operation: 'update_page', page: pages[6], title: 'Page 1' }])).status).toBe(200);
      expect((await page(pages[6])).slug).toBe('page-1-2');
      // Its own slug is not a clash; a page the same batch renamed away frees its slug, one it inserts takes one.
      expect((await batch([{ operation: 'update_page', page: pages[3], slug: 'page-3', title: 'Three' }])).status).toBe(200);
      const swap = await batch([
        { operation: 'update_page', page: pages[4], slug: 'moved-away' },
        { operation: 'update_page', page: pages[8], title: 'Page 4' },
        { operation: 'insert_page', title: 'Fresh', document: { markdown: 'x' } },
        { operation: 'insert_page', title: 'Fresh', document: { markdown: 'y' } },
      ]);
      expect(swap.status).toBe(200);
      expect((await page(pages[8])).slug).toBe('page-4');
      const inserted = swap.body.changes.filter((c: any) => c.object === 'created_page').map((c: any) => c.page.id);
      expect(await Promise.all(inserted.map(async (id: string) => (await page(id)).slug))).toEqual(['fresh', 'fresh-2']);
      // A page under another parent with the slug is no clash.
      expect((await batch([{ operation: 'update_page', page: pages[9], into: inserted[0], slug: 'renamed' }])).status).toBe(200);
      expect((await page(pages[9])).slug).toBe('renamed');
      // An explicit slug a sibling has: 400 naming the field, nothing changed.
      const head = (await t.rest('GET', `/v1/spaces/${spaceId}/change-requests/${cr}`)).body.revision;
      const clash = await batch([{ operation: 'update_page', page: pages[2], slug: 'page-1' }]);
      expect(clash.status).toBe(400);
      expect(clash.body.error.message).toContain('changes.0.slug');
      expect((await t.rest('GET', `/v1/spaces/${spaceId}/change-requests/${cr}`)).body.revision).toBe(head);
      expect((await page(pages[2])).slug).toBe('page-2');
    }
    // Reading 3,000 siblings' entries and slugs sends their paths and version ids (about 200 kB);
    // the lookup by slug does not. What grows is the nodes written on the page's path (depth + 1, a leaf up to ~6 kB).
    expect(seen[1].statements).toBe(seen[0].statements);
    expect(seen[1].paramChars).toBeLessThan(seen[0].paramChars + 12_000);
    console.log(JSON.stringify(seen));
  }, 300_000);
});
