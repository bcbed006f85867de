// Garbage collection of page tree nodes (src/domain/revision-tree.ts collectTreeGarbage, the
// sweepTreeNodes task): after a space is purged, the nodes only its revisions reached are
// deleted and nodes another revision still reaches stay; nodes used within the grace period are
// spared; a writer that reuses a node during the run (real concurrent requests, and a writer that
// rebuilds equal nodes) loses nothing; a run killed in the middle leaves the store as it was.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { transactionScope } from '../src/db/client.ts';
import { transaction } from '../src/db/transaction.ts';
import { purgeDeletedSpaces, sweepTreeNodes } from '../src/domain/cleanup.ts';
import { clearTreeCache, collectTreeGarbage, readTree, writeWholeTree } from '../src/domain/revision-tree.ts';
import type { TreeNode } from '../src/domain/revisions.ts';
import { DAY_MS } from '../src/lib/clock.ts';
import { startTestApp, type TestApp } from './helpers.ts';
import { newSpace as newSpaceIn } from './fixtures/tree.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t?.close());

const edit = (spaceId: string, changes: unknown[]) => t.rest('POST', `/v1/spaces/${spaceId}/content`, { changes });

const newSpace = (title: string) => newSpaceIn(t, title);

/** A space with a few pages written by several batches (so several revisions sharing nodes). */
async function spaceWithHistory(title: string) {
  const spaceId = await newSpace(title);
  const ids: string[] = [];
  for (const from of [0, 40]) {
    const r = await edit(
      spaceId,
      Array.from({ length: 40 }, (_, i) => ({ operation: 'insert_page', title: `${title} ${from + i}`, document: { markdown: `body ${from + i}` } })),
    );
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    ids.push(...r.body.changes.map((c: any) => c.page.id as string));
  }
  for (let i = 0; i < 3; i++) expect((await edit(spaceId, [{ operation: 'update_page', page: ids[i], document: { markdown: `edited ${i}` } }])).status).toBe(200);
  return { spaceId, ids };
}

/** Every node hash reachable from `roots`. */
async function reachable(roots: string[]): Promise<Set<string>> {
  const rows = await t.app.prisma.$queryRaw<Array<{ hash: string }>>`
    WITH RECURSIVE w("hash") AS (
      SELECT unnest(${roots}::text[])
      UNION
      SELECT c.h FROM w JOIN "RevisionTreeNode" n ON n."hash" = w."hash"
      CROSS JOIN LATERAL (
        SELECT jsonb_array_elements_text(CASE WHEN n."entries" ? 'r' THEN (n."entries"->'r') - 2 ELSE '[]'::jsonb END)
        UNION ALL SELECT e->>1 FROM jsonb_array_elements(CASE WHEN n."entries" ? 'c' THEN n."entries"->'c' ELSE '[]'::jsonb END) e
      ) c(h) WHERE c.h IS NOT NULL
    )
    SELECT "hash" FROM w`;
  return new Set(rows.map((r) => r.hash));
}

const liveRoots = async () => (await t.app.prisma.revision.findMany({ where: { treeRoot: { not: null } }, select: { treeRoot: true } })).map((r) => r.treeRoot!);
const allNodes = async () => new Set((await t.app.prisma.$queryRaw<Array<{ hash: string }>>`SELECT "hash" FROM "RevisionTreeNode"`).map((r) => r.hash));
/** Every node as if written two hours ago: past the grace period. */
const age = () => t.app.prisma.$executeRaw`UPDATE "RevisionTreeNode" SET "lastUsed" = now() - interval '2 hours'`;

/** Every live revision's tree, read cold from the store. */
async function liveTrees() {
  clearTreeCache();
  const out = new Map<string, TreeNode[]>();
  for (const root of new Set(await liveRoots())) out.set(root, await readTree(t.app.prisma, root));
  return out;
}

/** No live revision points at a missing node. */
async function expectNoDangling() {
  const nodes = await allNodes();
  const missing = [...(await reachable(await liveRoots()))].filter((h) => !nodes.has(h));
  expect(missing).toEqual([]);
}

async function purge(spaceId: string) {
  expect([204, 205]).toContain((await t.rest('DELETE', `/v1/spaces/${spaceId}`)).status);
  t.clock.advance(8 * DAY_MS);
  expect(await purgeDeletedSpaces({ prisma: t.app.prisma, clock: t.clock, services: t.app.services, log: t.app.log })).toBeGreaterThanOrEqual(1);
}

const deps = () => ({ prisma: t.app.prisma, log: t.app.log, services: t.app.services });

describe('tree node garbage collection', () => {
  it('deletes the nodes only a purged space reached, keeps the shared ones, spares young nodes, and is idempotent', async () => {
    const gone = await spaceWithHistory('Gone');
    const kept = await spaceWithHistory('Kept');
    // Another space holds a revision with the purged space's current tree: those nodes are shared.
    const goneRoot = (await t.app.prisma.space.findUniqueOrThrow({ where: { id: gone.spaceId }, select: { revision: { select: { treeRoot: true } } } })).revision!.treeRoot!;
    await t.app.prisma.revision.create({ data: { id: 'rev_shared_copy', spaceId: kept.spaceId, parents: [], type: 'edits', treeRoot: goneRoot } });
    const goneRoots = (await t.app.prisma.revision.findMany({ where: { spaceId: gone.spaceId }, select: { treeRoot: true } })).map((r) => r.treeRoot!).filter(Boolean);
    expect(goneRoots.length).toBeGreaterThan(3);
    const goneNodes = await reachable(goneRoots);
    const shared = await reachable([goneRoot]);
    const before = await liveTrees();

    await purge(gone.spaceId);
    const live = await reachable(await liveRoots());
    const garbage = [...goneNodes].filter((h) => !live.has(h));
    expect(garbage.length).toBeGreaterThan(0);
    expect([...shared].every((h) => live.has(h))).toBe(true);

    // Young nodes (used within the grace period) are spared.
    expect(await collectTreeGarbage(t.app.prisma)).toEqual({ deleted: 0, more: false });
    expect((await allNodes()).size).toBeGreaterThanOrEqual(live.size + garbage.length);

    // Past the grace period, in runs of at most 5 nodes: the task enqueues itself while more remain.
    await age();
    expect(await sweepTreeNodes(deps(), { maxNodes: 5, batchSize: 2 })).toBe(5);
    const job = await t.app.prisma.$queryRaw<Array<{ n: bigint }>>`SELECT count(*) AS n FROM graphile_worker.jobs WHERE task_identifier = 'sweepTreeNodes'`;
    expect(Number(job[0].n)).toBe(1);
    let total = 5;
    for (let run = 0; run < 1000; run++) {
      const n = await sweepTreeNodes(deps(), { maxNodes: 50 });
      total += n;
      if (n === 0) break;
    }
    expect(total).toBe(garbage.length);
    const after = await allNodes();
    expect(garbage.filter((h) => after.has(h))).toEqual([]);
    expect([...shared].filter((h) => !after.has(h))).toEqual([]);
    expect(after).toEqual(live);
    // Every live tree reads as before (the purged space's revisions are gone from the list).
    const trees = await liveTrees();
    for (const [root, tree] of trees) expect(tree).toEqual(before.get(root));
    expect(trees.has(goneRoot)).toBe(true);
    // Idempotent: nothing more to do.
    expect(await collectTreeGarbage(t.app.prisma)).toEqual({ deleted: 0, more: false });
  }, 120_000);

  it('a writer reusing nodes during the run loses nothing: concurrent REST edits, and one rebuilding the garbage nodes', async () => {
    const gone = await spaceWithHistory('Rebuilt');
    const busy = await spaceWithHistory('Busy');
    const goneRoot = (await t.app.prisma.space.findUniqueOrThrow({ where: { id: gone.spaceId }, select: { revision: { select: { treeRoot: true } } } })).revision!.treeRoot!;
    const goneTree = await readTree(t.app.prisma, goneRoot);
    await purge(gone.spaceId);
    const garbage = [...(await reachable([goneRoot]))];
    const nodes = await allNodes();
    expect(garbage.every((h) => nodes.has(h))).toBe(true);
    await age();

    // Between the mark and the deletes: real requests edit a live space, and a writer builds the
    // purged tree again (equal nodes, so it inserts none: it reuses the garbage rows) in a
    // transaction still open when the deletes start, committing a second later.
    let writer: Promise<unknown> = Promise.resolve();
    let statuses: number[] = [];
    const result = await collectTreeGarbage(t.app.prisma, {
      afterMark: () =>
        transactionScope.exit(async () => {
          statuses = (
            await Promise.all([
              ...busy.ids.slice(0, 4).map((id, i) => edit(busy.spaceId, [{ operation: 'update_page', page: id, document: { markdown: `during ${i}` } }])),
              edit(busy.spaceId, [{ operation: 'insert_page', title: 'During', document: { markdown: 'new' } }]),
            ])
          ).map((r) => r.status);
          let touched!: () => void;
          const ready = new Promise<void>((r) => (touched = r));
          writer = transaction(t.app.prisma, async (tx) => {
            const { root, nodesWritten } = await writeWholeTree(tx, goneTree);
            expect(root).toBe(goneRoot);
            expect(nodesWritten).toBe(0);
            touched();
            await new Promise((r) => setTimeout(r, 1000));
            await tx.revision.create({ data: { id: 'rev_rebuilt', spaceId: busy.spaceId, parents: [], type: 'edits', treeRoot: root } });
          });
          await ready;
        }),
    });
    await writer;
    expect(statuses).toEqual([200, 200, 200, 200, 200]);
    // The purged space's older revisions' own nodes went; the rebuilt tree's rows were kept (the
    // writer locked and refreshed them); nothing live is missing.
    expect(result.deleted).toBeGreaterThan(0);
    const after = await allNodes();
    expect(garbage.filter((h) => !after.has(h))).toEqual([]);
    await expectNoDangling();
    clearTreeCache();
    expect(await readTree(t.app.prisma, goneRoot)).toEqual(goneTree);
    const pages = await t.rest('GET', `/v1/spaces/${busy.spaceId}/content/pages`);
    expect(pages.status).toBe(200);
    expect(pages.body.pages.map((p: any) => p.title)).toContain('During');
  }, 120_000);

  it('a run killed in the middle (its connection terminated) deletes nothing; the next run finishes', async () => {
    const gone = await spaceWithHistory('Killed');
    await purge(gone.spaceId);
    await age();
    const before = await allNodes();
    const trees = await liveTrees();
    const admin = new pg.Client({ connectionString: t.databaseUrl });
    await admin.connect();
    try {
      await expect(
        collectTreeGarbage(t.app.prisma, {
          batchSize: 3,
          afterBatch: async (deleted) => {
            expect(deleted).toBe(3);
            // The run's own session: the one holding the temporary table's lock.
            await admin.query(`SELECT pg_terminate_backend(l.pid) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation WHERE c.relname = 'tree_gc_live'`);
          },
        }),
      ).rejects.toThrow();
    } finally {
      await admin.end();
    }
    expect(await allNodes()).toEqual(before);
    const again = await liveTrees();
    for (const [root, tree] of trees) expect(again.get(root)).toEqual(tree);
    await expectNoDangling();
    const done = await collectTreeGarbage(t.app.prisma);
    expect(done.deleted).toBeGreaterThan(0);
    expect(done.more).toBe(false);
    await expectNoDangling();
    expect(await allNodes()).toEqual(await reachable(await liveRoots()));
  }, 120_000);
});
