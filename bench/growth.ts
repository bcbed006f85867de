// `npm run bench:growth`: how the cost of each content operation grows with the size of a space.
// Not part of the test suite (it takes minutes); figures in docs/performance.md, "Growth".
//
// For each size (10, 100, 1,000, 10,000 pages; 50,000 with GROWTH_50K=1; or GROWTH_SIZES=10,100)
// one space is seeded with bulk SQL (pages of ~2 kB of markdown in a two-level tree, their
// sections, one revision; the Space trigger fills CurrentPage), then each operation runs a few
// times through the REST API of an in-process gateway (the production createApp):
//
//   page read    GET …/content/page/{pageId} of a leaf, on a cold process (caches emptied first)
//   page list    GET …/content/pages (the whole tree with bodies: the contract's page list)
//   search       GET …/search?query=<a word every page has>, cold (the search cache emptied first)
//   search, cached  the same again: the ranked candidates come from the cache (same revision)
//   edit         POST …/content, one update_page that changes a body
//   no-op edit   POST …/content, one update_page that changes nothing
//   CR batch     POST …/change-requests/{id}/content, one update_page
//   merge        POST …/change-requests/{id}/merge of that change request, after main changed
//                another page (a three-way merge)
//   merge + readers  the same, while 4 clients read pages of the space (their statements are
//                counted too); failed reads are reported under the table
//
// and prints per operation and size: SQL statements, rows (returned or written) and WAL bytes
// from pg_stat_statements (loaded into the embedded PostgreSQL it starts: shared_preload_libraries;
// with DATABASE_URL, when the server preloads it; else statements are counted from the client and
// rows are blank), the median latency, and the fitted growth exponent k of cost ∝ pages^k
// (least squares on log–log; 0 is flat, 1 linear).
//
// Options (environment): GROWTH_SIZES=10,100,1000  GROWTH_50K=1  GROWTH_REPS=5
//   GROWTH_ONLY=merge (or read, list, search, edit: run only those groups; merge = CR batch and merges)
//   GROWTH_TOP=1 (log the slowest statements of each merge)
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import pino from 'pino';
import { startEmbeddedPostgres, ensureDatabase } from '../src/db/embedded.ts';
import { migrate } from '../src/db/migrate.ts';
import { loadConfig } from '../src/config.ts';
import { createApp } from '../src/app.ts';
import { newId } from '../src/lib/ids.ts';
import { contentCaches } from '../src/graphql/content-loading.ts';
import { searchCache } from '../src/domain/search.ts';
import { freePort } from './db.ts';
import { treeFromNodes } from '../src/domain/revision-tree.ts';

const TOKEN = 'dg_bench_growth_token_0123456789abcdef';
const WORD = 'configuration';
const SIZES = (process.env.GROWTH_SIZES ?? '10,100,1000,10000').split(',').map(Number).concat(process.env.GROWTH_50K ? [50_000] : []);
const REPS = Number(process.env.GROWTH_REPS ?? 5);
const ONLY = process.env.GROWTH_ONLY ? new Set(process.env.GROWTH_ONLY.split(',')) : null;
const runs = (group: string) => !ONLY || ONLY.has(group);
const log = (m: string) => process.stderr.write(`${m}\n`);

// ------------------------------------------------------------------ database with pg_stat_statements

async function database(): Promise<{ url: string; stop: () => Promise<void> }> {
  if (process.env.DATABASE_URL) {
    const url = process.env.DATABASE_URL;
    await migrate(url);
    return { url, stop: async () => {} };
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'docgraph-growth-'));
  const port = await freePort();
  let db = await startEmbeddedPostgres({ dataDir: path.join(dir, 'pg'), port });
  // The extension must be preloaded: set it, restart on the same data directory.
  const c = new pg.Client({ connectionString: db.url('postgres') });
  await c.connect();
  await c.query(`ALTER SYSTEM SET shared_preload_libraries = 'pg_stat_statements'`);
  await c.query(`ALTER SYSTEM SET pg_stat_statements.track = 'all'`);
  await c.end();
  await db.stop();
  db = await startEmbeddedPostgres({ dataDir: path.join(dir, 'pg'), port });
  await ensureDatabase(db.url('postgres'), 'docgraph');
  const url = db.url('docgraph');
  await migrate(url);
  log(`database: embedded PostgreSQL on port ${port} (${dir})`);
  return {
    url,
    stop: async () => {
      await db.stop().catch(() => {});
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

// ------------------------------------------------------------------ seeding one space of n pages

const SENTENCES = [
  `The ${WORD} of this page applies to every space that uses it.`,
  'Readers find the steps below in the order they run, with the commands to type.',
  'A table lists the options, their defaults and what each changes.',
  'When something fails, the log says which step and why; retry after fixing it.',
  'Links point to the pages that explain each concept in more depth.',
];
const body = (i: number) =>
  Array.from({ length: 6 }, (_, s) => `## Section ${s + 1} of page ${i}\n\n${Array.from({ length: 5 }, (_, k) => SENTENCES[(i + s + k) % SENTENCES.length]).join(' ')}\n`).join('\n');

type Seeded = { spaceId: string; leafIds: string[]; editPageId: string };

async function seedSpace(db: pg.Client, base: string, orgId: string, userId: string, n: number): Promise<Seeded> {
  const created = await call('POST', `${base}/v1/orgs/${orgId}/spaces`, { title: `Growth ${n}` });
  const spaceId = created.body.id as string;
  const space = await db.query(`SELECT "revisionId" FROM "Space" WHERE id = $1`, [spaceId]);
  const parentRevision = space.rows[0].revisionId as string;
  // Two levels: ~√n sections of ~√n pages each.
  const width = Math.max(1, Math.round(Math.sqrt(n)));
  type Node = { id: string; v: string; pages: Node[] };
  const tree: Node[] = [];
  const rows: Array<[string, string, string, string, string]> = [];
  for (let i = 0; i < n; i++) {
    const node = { id: newId('Page'), v: newId('PageVersion'), pages: [] };
    rows.push([node.v, node.id, `Page ${i}`, `page-${i}`, body(i)]);
    if (i % width === 0 || tree.length === 0) tree.push(node);
    else tree[tree.length - 1].pages.push(node);
  }
  for (let i = 0; i < rows.length; i += 2000) {
    const chunk = rows.slice(i, i + 2000);
    await db.query(
      `INSERT INTO "PageVersion" (id, "pageId", "spaceId", kind, title, slug, markdown, links, "createdAt", "pageCreatedAt")
       SELECT v, p, $1, 'document', t, s, m, '[]'::json, now(), now() FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[]) AS x(v, p, t, s, m)`,
      [spaceId, ...[0, 1, 2, 3, 4].map((k) => chunk.map((r) => r[k]))],
    );
    await db.query(
      `INSERT INTO "PageSection" ("versionId", position, anchor, title, depth, body)
       SELECT v, 0, '', t, 1, m FROM unnest($1::text[], $2::text[], $3::text[]) AS x(v, t, m)`,
      [chunk.map((r) => r[0]), chunk.map((r) => r[2]), chunk.map((r) => r[4])],
    );
  }
  const revisionId = newId('Revision');
  // The stored page tree too, as every revision written by the application has one.
  const stored = treeFromNodes(tree);
  const nodes = [...stored.created];
  for (let i = 0; i < nodes.length; i += 300) {
    const chunk = nodes.slice(i, i + 300);
    await db.query(`INSERT INTO "RevisionTreeNode" (hash, entries) SELECT h, j::jsonb FROM unnest($1::text[], $2::text[]) AS x(h, j) ON CONFLICT DO NOTHING`, [chunk.map((n) => n[0]), chunk.map((n) => n[1].json)]);
  }
  await db.query(
    `INSERT INTO "Revision" (id, "spaceId", parents, type, tree, "fileIds", "createdById", "createdAt", "treeRoot") VALUES ($1, $2, $3, 'edits', $4, '{}', $5, now(), $6)`,
    [revisionId, spaceId, [parentRevision], JSON.stringify(tree), userId, stored.root],
  );
  await db.query(`UPDATE "Space" SET "revisionId" = $1 WHERE id = $2`, [revisionId, spaceId]);
  await db.query(`ANALYZE "PageVersion"; ANALYZE "CurrentPage"; ANALYZE "PageSection"`);
  const leaves = tree.flatMap((r) => (r.pages.length ? r.pages : [r])).map((p) => p.id);
  // Spread the reads over the space: distinct leaves, so no read is served by a previous one.
  const leafIds = Array.from({ length: REPS }, (_, i) => leaves[Math.floor(((i + 0.5) * leaves.length) / REPS)]);
  return { spaceId, leafIds, editPageId: leaves[Math.floor(leaves.length / 2)] };
}

// ------------------------------------------------------------------ measuring

let base = '';
async function call(method: string, url: string, body?: unknown) {
  const res = await fetch(url, { method, headers: { authorization: `Bearer ${TOKEN}`, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined });
  const text = await res.text();
  return { status: res.status, bytes: text.length, body: text ? JSON.parse(text) : null };
}

type Sample = { ms: number; statements: number; rows: number | null; wal: number | null; bytes: number; status: number };

let stats: pg.Client | null = null;
let counted = 0;

async function measure(fn: () => Promise<{ status: number; bytes: number }>, label?: string): Promise<Sample> {
  if (stats) await stats.query('SELECT pg_stat_statements_reset()');
  counted = 0;
  const t0 = performance.now();
  const r = await fn();
  const ms = performance.now() - t0;
  if (!stats) return { ms, statements: counted, rows: null, wal: null, bytes: r.bytes, status: r.status };
  const s = await stats.query(
    `SELECT coalesce(sum(calls), 0)::bigint AS calls, coalesce(sum(rows), 0)::bigint AS rows, coalesce(sum(wal_bytes), 0)::bigint AS wal
     FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
       AND query NOT ILIKE '%pg_stat_statements%' AND query NOT IN ('BEGIN', 'COMMIT', 'ROLLBACK') AND query NOT ILIKE 'LISTEN%'`,
  );
  if (process.env.GROWTH_TOP && label) {
    // Where the time of this request went: its slowest statements (nested ones, in triggers, included).
    const top = await stats.query(
      `SELECT calls, round(total_exec_time)::int AS ms, rows, wal_bytes AS wal, left(regexp_replace(query, '\\s+', ' ', 'g'), 110) AS q
       FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) AND query NOT ILIKE '%pg_stat_statements%'
       ORDER BY total_exec_time DESC LIMIT 6`,
    );
    log(`  ${label}: ${ms.toFixed(0)} ms; slowest statements:`);
    for (const x of top.rows) log(`    ${x.ms} ms, ${x.calls} calls, ${x.rows} rows, ${Math.round(Number(x.wal) / 1024)} kB WAL: ${x.q}`);
  }
  return { ms, statements: Number(s.rows[0].calls), rows: Number(s.rows[0].rows), wal: Number(s.rows[0].wal), bytes: r.bytes, status: r.status };
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.floor(s.length / 2)] : NaN;
};

/** k in cost ∝ n^k, least squares over log–log; null when a cost is zero or missing. */
function exponent(points: Array<[number, number | null]>): number | null {
  const ok = points.filter((p): p is [number, number] => p[1] != null && p[1] > 0);
  if (ok.length < 2) return null;
  const xs = ok.map((p) => Math.log(p[0]));
  const ys = ok.map((p) => Math.log(p[1]));
  const mx = xs.reduce((a, b) => a + b) / xs.length;
  const my = ys.reduce((a, b) => a + b) / ys.length;
  const num = xs.reduce((a, x, i) => a + (x - mx) * (ys[i] - my), 0);
  const den = xs.reduce((a, x) => a + (x - mx) ** 2, 0);
  return num / den;
}

// ------------------------------------------------------------------ main

const db = await database();
const filesDir = fs.mkdtempSync(path.join(os.tmpdir(), 'docgraph-growth-files-'));
const config = {
  ...loadConfig({ DATABASE_URL: db.url, DOCGRAPH_ADMIN_TOKEN: TOKEN, LOG_LEVEL: 'error', RUN_WORKER: 'false', RATE_LIMIT_POINTS: '1000000000', PAGE_LIST_BODIES_MB: '1024' }),
  filesDir,
};
const app = await createApp({ config, databaseUrl: db.url, log: pino({ level: 'error' }), worker: false });
const stopCounting = app.onQuery(() => counted++);
base = `http://127.0.0.1:${await app.listen(0, '127.0.0.1')}`;
const orgId = app.bootstrap!.org.id;
const userId = app.bootstrap!.user.id;
const seedDb = new pg.Client({ connectionString: db.url });
await seedDb.connect();
try {
  const s = new pg.Client({ connectionString: db.url });
  await s.connect();
  await s.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
  await s.query('SELECT pg_stat_statements_reset()');
  stats = s;
  log('pg_stat_statements: loaded (statements, rows and WAL bytes from the server)');
} catch (e) {
  log(`pg_stat_statements unavailable (${(e as Error).message}): statements counted by the client, rows and WAL blank`);
}

const OPS = ['page read', 'page list', 'search', 'search, cached', 'edit', 'no-op edit', 'CR batch', 'merge', 'merge + readers'] as const;
/** Page readers running while the last merge of each size runs. */
const READERS = 4;
const readerFailures = new Map<number, { reads: number; failed: number }>();
type Op = (typeof OPS)[number];
const results = new Map<Op, Map<number, Sample[]>>(OPS.map((o) => [o, new Map()]));
const record = (op: Op, n: number, s: Sample) => {
  if (s.status >= 300) log(`  ${op} at ${n}: HTTP ${s.status}`);
  const m = results.get(op)!;
  m.set(n, [...(m.get(n) ?? []), s]);
};

for (const n of SIZES) {
  const t0 = performance.now();
  const seeded = await seedSpace(seedDb, base, orgId, userId, n);
  log(`seeded ${n} pages in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  const space = `${base}/v1/spaces/${seeded.spaceId}`;
  const caches = contentCaches(app.config);
  for (let i = 0; i < (runs('read') ? REPS : 0); i++) {
    caches.trees?.clear();
    caches.rows?.clear();
    record('page read', n, await measure(() => call('GET', `${space}/content/page/${seeded.leafIds[i]}`)));
  }
  for (let i = 0; i < (runs('list') ? Math.min(REPS, n >= 10_000 ? 2 : REPS) : 0); i++) {
    caches.trees?.clear();
    caches.rows?.clear();
    record('page list', n, await measure(() => call('GET', `${space}/content/pages`)));
  }
  for (let i = 0; i < (runs('search') ? REPS : 0); i++) {
    searchCache(app.config)?.clear();
    record('search', n, await measure(() => call('GET', `${space}/search?query=${WORD}`)));
    record('search, cached', n, await measure(() => call('GET', `${space}/search?query=${WORD}`)));
  }
  for (let i = 0; i < (runs('edit') ? REPS : 0); i++) {
    record('edit', n, await measure(() => call('POST', `${space}/content`, { changes: [{ operation: 'update_page', page: seeded.editPageId, document: { markdown: `${body(i)}\n\nEdit ${i}.` } }] })));
    record('no-op edit', n, await measure(() => call('POST', `${space}/content`, { changes: [{ operation: 'update_page', page: seeded.editPageId }] })));
  }
  for (let i = 0; i < (runs('merge') ? Math.min(REPS, 3) + 1 : 0); i++) {
    const cr = await call('POST', `${space}/change-requests`, { subject: `Growth ${i}` });
    const crUrl = `${space}/change-requests/${cr.body.id}`;
    const batch = await measure(() => call('POST', `${crUrl}/content`, { changes: [{ operation: 'update_page', page: seeded.leafIds[i % seeded.leafIds.length], title: `Renamed ${i}` }] }));
    // Main moves on meanwhile (another page), so the merge is a real three-way merge.
    const moved = await call('POST', `${space}/content`, { changes: [{ operation: 'update_page', page: seeded.editPageId, document: { markdown: `${body(i)}\n\nMain ${i}.` } }] });
    if (moved.status >= 300) log(`  main edit before merge at ${n}: HTTP ${moved.status}`);
    if (i < Math.min(REPS, 3)) {
      record('CR batch', n, batch);
      record('merge', n, await measure(() => call('POST', `${crUrl}/merge`), `merge at ${n}`));
      continue;
    }
    // The last one merges while readers read pages of the space (statements include theirs).
    let merging = true;
    const readerStatuses: number[] = [];
    const readers = Array.from({ length: READERS }, async (_, r) => {
      for (let k = 0; merging; k++) readerStatuses.push((await call('GET', `${space}/content/page/${seeded.leafIds[(r + k) % seeded.leafIds.length]}`)).status);
    });
    const sample = await measure(() => call('POST', `${crUrl}/merge`));
    merging = false;
    await Promise.all(readers);
    const failed = readerStatuses.filter((st) => st >= 300).length;
    if (failed) log(`  readers during the merge at ${n}: ${failed} of ${readerStatuses.length} failed`);
    readerFailures.set(n, { reads: readerStatuses.length, failed });
    record('merge + readers', n, sample);
  }
  log(`measured ${n} pages`);
}

// ------------------------------------------------------------------ report

const fmt = (x: number | null, digits = 0) => (x == null || Number.isNaN(x) ? '—' : x.toFixed(digits));
const lines: string[] = [];
lines.push(`Growth of one space (median of ${REPS} runs; statements, rows and WAL bytes per request; k: fitted exponent of cost ∝ pages^k)`);
lines.push('');
lines.push(`| operation | ${SIZES.map((n) => `${n.toLocaleString('en')} pages`).join(' | ')} | k (ms) | k (rows) |`);
lines.push(`|---|${SIZES.map(() => '---').join('|')}|---|---|`);
for (const op of OPS) {
  const per = SIZES.map((n) => {
    const ss = results.get(op)!.get(n) ?? [];
    return {
      n,
      ms: median(ss.map((s) => s.ms)),
      statements: median(ss.map((s) => s.statements)),
      rows: ss.some((s) => s.rows == null) ? null : median(ss.map((s) => s.rows!)),
      wal: ss.some((s) => s.wal == null) ? null : median(ss.map((s) => s.wal!)),
      bytes: median(ss.map((s) => s.bytes)),
    };
  });
  const cells = per.map((p) => `${fmt(p.ms, 1)} ms, ${fmt(p.statements)} st, ${fmt(p.rows)} rows, ${p.wal == null ? '—' : `${(p.wal / 1024).toFixed(0)} kB`} WAL, ${(p.bytes / 1024).toFixed(0)} kB out`);
  lines.push(`| ${op} | ${cells.join(' | ')} | ${fmt(exponent(per.map((p) => [p.n, p.ms])), 2)} | ${fmt(exponent(per.map((p) => [p.n, p.rows])), 2)} |`);
}
lines.push('');
lines.push(`Readers during 'merge + readers' (${READERS} clients reading pages): ${SIZES.map((n) => `${n.toLocaleString('en')}: ${readerFailures.get(n)?.failed ?? '—'} failed of ${readerFailures.get(n)?.reads ?? '—'}`).join('; ')}`);
process.stdout.write(`${lines.join('\n')}\n`);
const out = path.join(path.dirname(new URL(import.meta.url).pathname), 'results', `${new Date().toISOString().replace(/[:.]/g, '-')}-growth.json`);
fs.mkdirSync(path.dirname(out), { recursive: true });
const raw = Object.fromEntries([...results].map(([op, m]) => [op, Object.fromEntries(m)]));
fs.writeFileSync(out, JSON.stringify({ sizes: SIZES, reps: REPS, pgStatStatements: !!stats, table: lines, samples: raw }, null, 2));
log(`written to ${out}`);

stopCounting();
await stats?.end();
await seedDb.end();
await app.close();
await db.stop();
fs.rmSync(filesDir, { recursive: true, force: true });
