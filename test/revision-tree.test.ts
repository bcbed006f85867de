// Revision trees stored as shared, content-addressed rows (src/domain/revision-tree.ts) on the
// real database: what a one-page change writes and what reads read, counted in rows, bytes and
// statements at 10, 1,000 and 20,000 pages; the node cache and rolled-back transactions; the
// backfill of revisions' JSON trees.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { transaction } from '../src/db/transaction.ts';
import { newId } from '../src/lib/ids.ts';
import {
  backfillRevisionTrees,
  backfillRevisionTreesTask,
  childPages,
  clearTreeCache,
  diffTrees,
  lookupPages,
  newTreeStats,
  readTree,
  treeFromNodes,
  writeTree,
  writeWholeTree,
} from '../src/domain/revision-tree.ts';
import type { TreeNode } from '../src/domain/revisions.ts';
import { startTestApp, type TestApp } from './helpers.ts';
import { depthOf } from './fixtures/tree.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t?.close());

/** A deterministic tree of `size` pages: a tenth at the top, each other page under an earlier one. */
function syntheticTree(size: number, tag: string): TreeNode[] {
  const roots: TreeNode[] = [];
  const all: TreeNode[] = [];
  for (let i = 0; i < size; i++) {
    const node: TreeNode = { id: `page_${tag}${i.toString(36)}x${size}`, v: `pv_${tag}${i.toString(36)}v1`, pages: [] };
    if (i % 10 === 0 || all.length === 0) roots.push(node);
    else all[((i * 2654435761) % 4294967296) % all.length].pages.push(node);
    all.push(node);
  }
  return roots;
}

const nodeRows = async () => Number((await t.app.prisma.$queryRaw<Array<{ n: bigint }>>`SELECT count(*) AS n FROM "RevisionTreeNode"`)[0].n);

describe('a one-page change costs its path, whatever the size of the space', () => {
  for (const size of [10, 1_000, 20_000]) {
    it(`at ${size} pages`, async () => {
      const tree = syntheticTree(size, `s${size}`);
      const base = await transaction(t.app.prisma, (tx) => writeWholeTree(tx, tree), { timeout: 60_000 });
      expect(base.root).toBe(treeFromNodes(tree).root);
      const depth = await depthOf(t.app.prisma, base.root);
      expect(depth).toBe(size <= 64 ? 1 : size <= 2_000 ? 2 : 3);

      // Reading the tree back gives the tree it was built from, in one statement.
      clearTreeCache();
      const stats = newTreeStats();
      expect(await readTree(t.app.prisma, base.root, stats)).toEqual(tree);
      expect(stats.statements).toBe(1);

      // Edit one page deep in the tree: a new version.
      const page = tree[tree.length - 1].pages[0] ?? tree[tree.length - 1];
      clearTreeCache();
      const before = await nodeRows();
      const writeStats = newTreeStats();
      const edit = await transaction(t.app.prisma, async (tx) => {
        const [entry] = (await lookupPages(tx, base.root, [page.id])).values();
        return writeTree(tx, base.root, [{ pageId: page.id, entry: { ...entry, v: 'pv_edited' } }], writeStats);
      });
      const written = (await nodeRows()) - before;
      expect(written).toBe(edit.nodesWritten);
      expect(written).toBeLessThanOrEqual(depth + 1);
      expect(edit.bytesWritten).toBeLessThan(16_000);
      // The root, one statement per level of its path, the insert.
      expect(writeStats.statements).toBeLessThanOrEqual(depth + 2);

      const edited = structuredClone(tree);
      const target = edited[edited.length - 1].pages[0] ?? edited[edited.length - 1];
      target.v = 'pv_edited';
      expect(await readTree(t.app.prisma, edit.root)).toEqual(edited);

      // The diff names that page only and reads the two paths.
      clearTreeCache();
      const diffStats = newTreeStats();
      const diff = await diffTrees(t.app.prisma, base.root, edit.root, diffStats);
      expect(diff).toEqual([{ pageId: page.id, before: expect.objectContaining({ v: page.v }), after: expect.objectContaining({ v: 'pv_edited' }) }]);
      expect(diffStats.nodesRead).toBeLessThanOrEqual(2 * (depth + 1));
      expect(diffStats.statements).toBeLessThanOrEqual(depth + 2);

      // A lookup reads the page's path only.
      clearTreeCache();
      const counted = newTreeStats();
      const found = await lookupPages(t.app.prisma, edit.root, [page.id, 'page_absent'], counted);
      expect([...found.keys()]).toEqual([page.id]);
      expect(found.get(page.id)!.v).toBe('pv_edited');
      // The root, then the two keys' paths (one level per statement).
      expect(counted.nodesRead).toBeLessThanOrEqual(1 + 2 * depth);
      expect(counted.statements).toBeLessThanOrEqual(depth + 1);

      // The same change again writes nothing.
      const again = await transaction(t.app.prisma, (tx) => writeTree(tx, edit.root, [{ pageId: page.id, entry: found.get(page.id)! }]));
      expect(again).toEqual({ root: edit.root, nodesWritten: 0, bytesWritten: 0 });
    });
  }
});

describe('moves, inserts and children', () => {
  it('a move rewrites the page entry only and the children lists follow', async () => {
    const tree = syntheticTree(500, 'mv');
    const { root } = await transaction(t.app.prisma, (tx) => writeWholeTree(tx, tree), { timeout: 60_000 });
    const [a, b] = tree.filter((p) => p.pages.length > 1);
    const children = await childPages(t.app.prisma, root, a.id);
    expect(children.map((c) => c.pageId)).toEqual(a.pages.map((p) => p.id));
    expect((await childPages(t.app.prisma, root, null)).map((c) => c.pageId)).toEqual(tree.map((p) => p.id));

    // Move b's first child to the front of a's children.
    const moving = b.pages[0];
    const before = await nodeRows();
    const { positionBetween } = await import('../src/domain/revision-tree.ts');
    const moved = await transaction(t.app.prisma, (tx) =>
      writeTree(tx, root, [{ pageId: moving.id, entry: { v: moving.v, parent: a.id, pos: positionBetween(null, children[0]?.pos ?? null) } }]),
    );
    // byId: its path; byParent: the old and the new parent's paths; the root.
    expect((await nodeRows()) - before).toBeLessThanOrEqual(3 * 3 + 1);
    expect((await childPages(t.app.prisma, moved.root, a.id)).map((c) => c.pageId)).toEqual([moving.id, ...a.pages.map((p) => p.id)]);
    expect((await childPages(t.app.prisma, moved.root, b.id)).map((c) => c.pageId)).toEqual(b.pages.slice(1).map((p) => p.id));
    const expected = structuredClone(tree);
    expected[1].pages.shift();
    expected[0].pages.unshift(structuredClone(moving));
    expect(await readTree(t.app.prisma, moved.root)).toEqual(expected);
    expect((await diffTrees(t.app.prisma, root, moved.root)).map((d) => d.pageId)).toEqual([moving.id]);
  });
});

describe('the node cache', () => {
  it('serves a second read without statements, and never keeps what a rolled-back transaction wrote', async () => {
    const tree = syntheticTree(300, 'cache');
    const { root } = await transaction(t.app.prisma, (tx) => writeWholeTree(tx, tree), { timeout: 60_000 });
    clearTreeCache();
    await readTree(t.app.prisma, root);
    const warm = newTreeStats();
    expect(await readTree(t.app.prisma, root, warm)).toEqual(tree);
    expect(warm.statements).toBe(0);

    // A tree written and read inside a transaction that rolls back.
    const ghost = syntheticTree(80, 'ghost');
    let ghostRoot = '';
    await expect(
      transaction(t.app.prisma, async (tx) => {
        ghostRoot = (await writeWholeTree(tx, ghost)).root;
        expect(await readTree(tx, ghostRoot)).toEqual(ghost);
        await lookupPages(tx, ghostRoot, [ghost[0].id]);
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    await expect(readTree(t.app.prisma, ghostRoot)).rejects.toThrow(/missing/);
    await expect(lookupPages(t.app.prisma, ghostRoot, [ghost[0].id])).rejects.toThrow(/missing/);
  });
});

describe('backfill of JSON trees', () => {
  it('converts every revision, in batches, shares nodes between similar trees, and may be re-run', async () => {
    const r = await t.rest('POST', `/v1/orgs/${t.org.id}/spaces`, { title: 'Backfill' });
    expect(r.status).toBe(201);
    const spaceId = r.body.id as string;
    // Three revisions: a tree, the same with one page edited, the same with one page more.
    const first = syntheticTree(400, 'bf');
    const second = structuredClone(first);
    second[3].v = 'pv_bf_edited';
    const third = structuredClone(second);
    third.push({ id: 'page_bf_last', v: 'pv_bf_last', pages: [] });
    const ids: string[] = [];
    for (const tree of [first, second, third]) {
      const id = newId('Revision');
      ids.push(id);
      await t.app.prisma.revision.create({ data: { id, spaceId, tree: tree as never, parents: ids.length > 1 ? [ids[ids.length - 2]] : [] } });
    }
    const pending = async () => Number((await t.app.prisma.$queryRaw<Array<{ n: bigint }>>`SELECT count(*) AS n FROM "Revision" WHERE "treeRoot" IS NULL`)[0].n);
    const total = await pending();
    expect(total).toBeGreaterThanOrEqual(3);

    const nodesBefore = await nodeRows();
    // Stopped after one batch: that batch is converted, the rest is not.
    const part = await backfillRevisionTrees(t.app.prisma, { batchSize: 2, maxBatches: 1 });
    expect(part).toEqual({ converted: 2, done: false });
    expect(await pending()).toBe(total - 2);

    const rest = await backfillRevisionTrees(t.app.prisma, { batchSize: 2 });
    expect(rest).toEqual({ converted: total - 2, done: true });
    expect(await pending()).toBe(0);
    expect(await backfillRevisionTrees(t.app.prisma)).toEqual({ converted: 0, done: true });

    const rows = await t.app.prisma.revision.findMany({ where: { id: { in: ids } }, select: { id: true, treeRoot: true } });
    const rootOf = new Map(rows.map((x) => [x.id, x.treeRoot!]));
    for (const [i, tree] of [first, second, third].entries()) {
      expect(rootOf.get(ids[i])).toBe(treeFromNodes(tree).root);
      expect(await readTree(t.app.prisma, rootOf.get(ids[i])!)).toEqual(tree);
    }
    // The three trees of 400 pages share their nodes: far fewer rows than three separate trees.
    const oneTree = treeFromNodes(first).created.size;
    expect((await nodeRows()) - nodesBefore).toBeLessThan(oneTree * 2);
    expect((await diffTrees(t.app.prisma, rootOf.get(ids[0])!, rootOf.get(ids[2])!)).map((d) => d.pageId).sort()).toEqual(['page_bf_last', first[3].id].sort());
  });
});

describe('every write stores its revision tree', () => {
  /** Each revision of the space (and of its change requests) has a root whose tree is its JSON tree. */
  /** Every revision has a root; one that also has a JSON tree (written before trees were stored) has the root of that tree. */
  async function expectRootsMatch(spaceId: string) {
    const revisions = await t.app.prisma.revision.findMany({ where: { spaceId }, select: { id: true, tree: true, treeRoot: true } });
    expect(revisions.length).toBeGreaterThan(0);
    for (const r of revisions) {
      expect(r.treeRoot, r.id).toBeTruthy();
      if (Array.isArray(r.tree) && r.tree.length) expect(await readTree(t.app.prisma, r.treeRoot)).toEqual(r.tree);
    }
    // The current revision's stored tree is the tree the API answers.
    const space = await t.app.prisma.space.findUniqueOrThrow({ where: { id: spaceId } });
    const current = revisions.find((r) => r.id === space.revisionId)!;
    const listed = (await t.rest('GET', `/v1/spaces/${spaceId}/content/pages`)).body.pages as Array<{ id: string; pages?: unknown[] }>;
    const shape = (list: Array<{ id: string; pages?: unknown[] }>): unknown[] => list.map((p) => [p.id, shape((p.pages ?? []) as never)]);
    const stored = (list: Array<{ id: string; pages: unknown[] }>): unknown[] => list.map((p) => [p.id, stored(p.pages as never)]);
    expect(stored((await readTree(t.app.prisma, current.treeRoot)) as never)).toEqual(shape(listed));
    return revisions.length;
  }
  /** Make a space's revisions look written before trees were stored: the JSON tree only, no root. */
  async function makeLegacy(spaceId: string) {
    for (const r of await t.app.prisma.revision.findMany({ where: { spaceId }, select: { id: true, treeRoot: true } })) {
      const tree = r.treeRoot ? await readTree(t.app.prisma, r.treeRoot) : [];
      await t.app.prisma.revision.update({ where: { id: r.id }, data: { tree: tree as never, treeRoot: null } });
    }
    clearTreeCache();
  }
  const edit = async (spaceId: string, changes: unknown[]) => {
    const r = await t.rest('POST', `/v1/spaces/${spaceId}/content`, { changes });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return r.body as { changes: Array<{ page: { id: string } }> };
  };

  it('live edits, change requests, merges, updates from main and duplicates', async () => {
    const s = await t.rest('POST', `/v1/orgs/${t.org.id}/spaces`, { title: 'Roots' });
    const spaceId = s.body.id as string;
    const made = await edit(spaceId, [
      { operation: 'insert_page', ref: 'a', title: 'A', document: { markdown: 'a' } },
      { operation: 'insert_page', ref: 'b', title: 'B', document: { markdown: 'b' } },
      { operation: 'insert_page', ref: 'd', title: 'D', document: { markdown: 'd' } },
    ]);
    const [a, b, d] = made.changes.map((x) => x.page.id);
    const c = (await edit(spaceId, [{ operation: 'insert_page', title: 'C', into: a, document: { markdown: 'c' } }])).changes[0].page.id;
    await edit(spaceId, [{ operation: 'update_page', page: d, at: 0 }]);
    await edit(spaceId, [{ operation: 'update_page', page: c, into: b, at: 0, document: { markdown: 'c2' } }]);
    await edit(spaceId, [{ operation: 'delete_page', page: a }]);
    const cr = (await t.rest('POST', `/v1/spaces/${spaceId}/change-requests`, { subject: 'x' })).body;
    expect((await t.rest('POST', `/v1/spaces/${spaceId}/change-requests/${cr.id}/content?compat=false`, { changes: [{ operation: 'insert_page', title: 'E', into: b, document: { markdown: 'e' } }] })).status).toBe(200);
    await edit(spaceId, [{ operation: 'update_page', page: b, document: { markdown: 'b2' } }]);
    expect((await t.rest('POST', `/v1/spaces/${spaceId}/change-requests/${cr.id}/update`)).status).toBe(200);
    expect((await t.rest('POST', `/v1/spaces/${spaceId}/change-requests/${cr.id}/merge`)).body.result).toBe('merge');
    expect(await expectRootsMatch(spaceId)).toBeGreaterThanOrEqual(8);

    // A one-page edit of a stored tree writes only that page's path.
    const before = await nodeRows();
    await edit(spaceId, [{ operation: 'update_page', page: d, document: { markdown: 'd2' } }]);
    expect((await nodeRows()) - before).toBeLessThanOrEqual(3);

    const dup = await t.rest('POST', `/v1/spaces/${spaceId}/duplicate`);
    expect(dup.status).toBe(201);
    await expectRootsMatch(dup.body.id);
  });

  it('a batch that changes nothing writes no revision, moves nothing and says so', async () => {
    const s = await t.rest('POST', `/v1/orgs/${t.org.id}/spaces`, { title: 'No-op' });
    const spaceId = s.body.id as string;
    const page = (await edit(spaceId, [{ operation: 'insert_page', title: 'A', document: { markdown: 'same' } }])).changes[0].page.id;
    const space = await t.app.prisma.space.findUniqueOrThrow({ where: { id: spaceId } });
    const count = () => t.app.prisma.revision.count({ where: { spaceId } });
    const events = () => t.app.prisma.event.count({ where: { objectId: spaceId } });
    const [revisions, evts, nodes] = [await count(), await events(), await nodeRows()];
    const live = await t.gql(
      `mutation($input: ApplySpaceContentChangesInput!) { applySpaceContentChanges(input: $input) { changed revision { id } changes { __typename } } }`,
      { input: { spaceId, changes: [{ operation: 'update_page', page, title: 'A', document: { markdown: 'same' } }] } },
    );
    expect(live.errors).toBeUndefined();
    expect(live.data.applySpaceContentChanges).toMatchObject({ changed: false, revision: { id: space.revisionId } });
    expect(await count()).toBe(revisions);
    expect(await events()).toBe(evts);
    expect(await nodeRows()).toBe(nodes);
    expect((await t.app.prisma.space.findUniqueOrThrow({ where: { id: spaceId } })).revisionId).toBe(space.revisionId);

    const cr = (await t.rest('POST', `/v1/spaces/${spaceId}/change-requests`, { subject: 'x' })).body;
    const before = await t.app.prisma.changeRequest.findUniqueOrThrow({ where: { id: cr.id } });
    const inCr = await t.gql(
      `mutation($input: ApplyChangeRequestContentChangesInput!) { applyChangeRequestContentChanges(input: $input) { changed revision { id } } }`,
      { input: { spaceId, changeRequestId: cr.id, changes: [{ operation: 'update_page', page, at: 0 }] } },
    );
    expect(inCr.errors).toBeUndefined();
    expect(inCr.data.applyChangeRequestContentChanges).toEqual({ changed: false, revision: { id: before.revisionId } });
    expect(await t.app.prisma.changeRequest.findUniqueOrThrow({ where: { id: cr.id } })).toEqual(before);
    // A real change still writes one.
    const beforeReal = await count();
    const real = await t.gql(
      `mutation($input: ApplySpaceContentChangesInput!) { applySpaceContentChanges(input: $input) { changed revision { id } } }`,
      { input: { spaceId, changes: [{ operation: 'update_page', page, document: { markdown: 'other' } }] } },
    );
    expect(real.data.applySpaceContentChanges.changed).toBe(true);
    expect(await count()).toBe(beforeReal + 1);
  });

  it('the backfill task gives older revisions their roots and enqueues itself while some remain', async () => {
    const s = await t.rest('POST', `/v1/orgs/${t.org.id}/spaces`, { title: 'Old' });
    const spaceId = s.body.id as string;
    await edit(spaceId, [{ operation: 'insert_page', title: 'A', document: { markdown: 'a' } }]);
    await makeLegacy(spaceId);
    // An edit on a base without a root writes its whole tree.
    await edit(spaceId, [{ operation: 'insert_page', title: 'B', document: { markdown: 'b' } }]);
    const enqueued: string[] = [];
    const deps = { prisma: t.app.prisma, log: { info: () => {} }, services: { jobs: { enqueue: async (_db: unknown, name: string) => void enqueued.push(name) } } };
    await backfillRevisionTreesTask(deps as never, { runLimitMs: 60_000 });
    expect(enqueued).toEqual([]);
    await expectRootsMatch(spaceId);
    // A run cut short leaves work behind and enqueues the next run.
    await makeLegacy(spaceId);
    await backfillRevisionTreesTask(deps as never, { runLimitMs: 0 });
    expect(enqueued).toEqual(['backfillRevisionTrees']);
    await backfillRevisionTreesTask(deps as never);
    await expectRootsMatch(spaceId);
    // Done: a scheduled run is one statement, on the partial index of revisions without a root, and enqueues nothing.
    enqueued.length = 0;
    const idle = await t.countQueries(() => backfillRevisionTreesTask(deps as never));
    expect(idle.result).toBe(0);
    expect(idle.count).toBe(1);
    expect(enqueued).toEqual([]);
    const plan = await transaction(t.app.prisma, async (tx) => {
      await tx.$executeRawUnsafe('SET LOCAL enable_seqscan = off');
      return tx.$queryRawUnsafe<Array<{ 'QUERY PLAN': string }>>(`EXPLAIN SELECT EXISTS (SELECT 1 FROM "Revision" WHERE "treeRoot" IS NULL)`);
    });
    expect(plan.map((r) => r['QUERY PLAN']).join('\n')).toContain('Revision_treeRoot_missing_idx');
  });
});
