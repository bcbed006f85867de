// `npm run bench:tree`: what a revision's page tree costs as shared, content-addressed nodes
// (src/domain/revision-tree.ts) against today's whole-tree JSON row, at 10 to 50,000 pages.
//
// Per size: the rows, stored bytes and WAL bytes of a one-page edit (a new version), a move and
// a no-op; the same edit stored the way revisions store it today (the JSON tree plus the
// `pageVersionIds` array behind its GIN index, in a table built like "Revision"); and the time
// of a cold and a warm whole-tree read, a one-page lookup and a diff. Options: --sizes=10,1000
// --edits=20.
import { performance } from 'node:perf_hooks';
import pino from 'pino';
import { createPrisma, type Tx } from '../src/db/client.ts';
import { transaction } from '../src/db/transaction.ts';
import { clearTreeCache, diffTrees, lookupPages, newTreeStats, positionBetween, readTree, treeFromNodes, writeTree, writeWholeTree } from '../src/domain/revision-tree.ts';
import type { TreeNode } from '../src/domain/revisions.ts';
import { startBenchDatabase } from './db.ts';

const arg = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
const SIZES = (arg('sizes') ?? '10,100,1000,10000,50000').split(',').map(Number);
const EDITS = Number(arg('edits') ?? 20);

function syntheticTree(size: number): { tree: TreeNode[]; all: TreeNode[] } {
  const tree: TreeNode[] = [];
  const all: TreeNode[] = [];
  for (let i = 0; i < size; i++) {
    const node: TreeNode = { id: `page_${i.toString(36).padStart(4, '0')}q7Xk2mP9sR4tW1`, v: `pv_${i.toString(36).padStart(4, '0')}Lb3nV8cZ5yH0j`, pages: [] };
    if (i % 10 === 0 || all.length === 0) tree.push(node);
    else all[((i * 2654435761) % 4294967296) % all.length].pages.push(node);
    all.push(node);
  }
  return { tree, all };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
const kb = (n: number) => (n / 1024).toFixed(1);
const ms = (n: number) => n.toFixed(n < 10 ? 2 : 0);

async function main() {
  const log = (m: string) => process.stderr.write(`${m}\n`);
  const db = await startBenchDatabase({ log });
  const { prisma, disconnect } = createPrisma(db.url, { poolSize: 2, log: pino({ level: 'silent' }) });
  const wal = async (tx: Tx = prisma) => (await tx.$queryRaw<Array<{ lsn: string }>>`SELECT pg_current_wal_insert_lsn()::text AS lsn`)[0].lsn;
  const walDiff = async (from: string) => Number((await prisma.$queryRaw<Array<{ d: number }>>`SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), ${from}::pg_lsn)::float8 AS d`)[0].d);
  // Today's storage of a revision's tree, for comparison: the JSON tree and the version ids behind a GIN index.
  await prisma.$executeRawUnsafe(`CREATE TABLE bench_json_revision (id serial PRIMARY KEY, tree jsonb NOT NULL, "pageVersionIds" text[] NOT NULL)`);
  await prisma.$executeRawUnsafe(`CREATE INDEX ON bench_json_revision USING GIN ("pageVersionIds")`);
  const versionIds = (t: TreeNode[]): string[] => t.flatMap((n) => [n.v, ...versionIds(n.pages)]);

  const rows: string[][] = [];
  for (const size of SIZES) {
    const { tree, all } = syntheticTree(size);
    const t0 = performance.now();
    const built = treeFromNodes(tree);
    const buildMs = performance.now() - t0;
    const base = await transaction(prisma, (tx) => writeWholeTree(tx, tree), { timeout: 600_000 });
    let root = base.root;

    const nodes: number[] = [];
    const bytes: number[] = [];
    const walBytes: number[] = [];
    const stmts: number[] = [];
    const jsonWal: number[] = [];
    const jsonBytes: number[] = [];
    for (let e = 0; e < EDITS; e++) {
      const page = all[(e * 7919 + 17) % all.length];
      page.v = `pv_edit${e}_${size}`;
      clearTreeCache();
      const stats = newTreeStats();
      const from = await wal();
      const w = await transaction(prisma, async (tx) => {
        const entry = (await lookupPages(tx, root, [page.id], stats)).get(page.id)!;
        return writeTree(tx, root, [{ pageId: page.id, entry: { ...entry, v: page.v } }], stats);
      });
      walBytes.push(await walDiff(from));
      nodes.push(w.nodesWritten);
      bytes.push(w.bytesWritten);
      stmts.push(stats.statements);
      root = w.root;

      const jfrom = await wal();
      const ins = await prisma.$queryRaw<Array<{ b: number }>>`
        INSERT INTO bench_json_revision (tree, "pageVersionIds") VALUES (${JSON.stringify(tree)}::jsonb, ${versionIds(tree)}::text[])
        RETURNING (pg_column_size(tree) + pg_column_size("pageVersionIds"))::int AS b`;
      jsonWal.push(await walDiff(jfrom));
      jsonBytes.push(ins[0].b);
    }
    await prisma.$executeRawUnsafe(`TRUNCATE bench_json_revision`);

    // A move: the last page to the front of the first top-level page's children.
    const moving = all[all.length - 1];
    const mfrom = await wal();
    const moved = await transaction(prisma, async (tx) => {
      const firstChild = tree[0].pages[0];
      const pos = firstChild ? (await lookupPages(tx, root, [firstChild.id])).get(firstChild.id)!.pos : null;
      return writeTree(tx, root, [{ pageId: moving.id, entry: { v: moving.v, parent: tree[0].id, pos: positionBetween(null, pos) } }]);
    });
    const moveWal = await walDiff(mfrom);
    // A no-op: the same entry again.
    const noop = await transaction(prisma, async (tx) => {
      const entry = (await lookupPages(tx, moved.root, [moving.id])).get(moving.id)!;
      return writeTree(tx, moved.root, [{ pageId: moving.id, entry }]);
    });

    clearTreeCache();
    let t = performance.now();
    await readTree(prisma, root);
    const coldRead = performance.now() - t;
    t = performance.now();
    await readTree(prisma, root);
    const warmRead = performance.now() - t;
    clearTreeCache();
    t = performance.now();
    await lookupPages(prisma, root, [all[all.length >> 1].id]);
    const lookup = performance.now() - t;
    clearTreeCache();
    const dstats = newTreeStats();
    t = performance.now();
    const diff = await diffTrees(prisma, base.root, root, dstats);
    const diffMs = performance.now() - t;

    rows.push([
      String(size),
      String(built.created.size),
      ms(buildMs),
      String(median(nodes)),
      kb(median(bytes)),
      kb(median(walBytes)),
      String(median(stmts)),
      `${moved.nodesWritten}/${kb(moveWal)}`,
      String(noop.nodesWritten),
      kb(median(jsonBytes)),
      kb(median(jsonWal)),
      ms(coldRead),
      ms(warmRead),
      ms(lookup),
      `${ms(diffMs)} (${diff.length} pages, ${dstats.nodesRead} nodes)`,
    ]);
    log(`${size} pages done`);
  }
  const head = ['pages', 'nodes', 'build ms', 'edit rows', 'edit kB', 'edit WAL kB', 'edit stmts', 'move rows/WAL kB', 'no-op rows', 'JSON row kB', 'JSON WAL kB', 'read cold ms', 'read warm ms', 'lookup ms', `diff ms after ${EDITS} edits`];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (r: string[]) => r.map((c, i) => c.padStart(widths[i])).join('  ');
  console.log(line(head));
  for (const r of rows) console.log(line(r));
  await disconnect();
  await db.stop();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
