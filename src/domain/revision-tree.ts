// Revisions' page trees as content-addressed nodes shared between revisions (the trie itself:
// src/lib/page-trie.ts). A node is an immutable row of "RevisionTreeNode" (hash = sha256 of its
// canonical JSON), written with ON CONFLICT DO NOTHING; a revision keeps only its root hash
// ("Revision"."treeRoot"). A one-page edit writes the nodes on that page's path (depth + 1 rows,
// a few kB), whatever the size of the space.
//
// Nodes never change, so the process keeps a bounded cache of them (by bytes). It keeps only rows
// the database shows as written by an earlier transaction (`age(xmin) > 0`): a transaction may
// read nodes it wrote itself and then roll back, and a cached node that was never committed
// would let a later tree point at a missing row.
import { LRUCache } from 'lru-cache';
import type { Db, Tx } from '../db/client.ts';
import { Prisma } from '../generated/prisma/client.ts';
import type { TaskDeps } from './context.ts';
import { transaction } from '../db/transaction.ts';
import { treeCacheBytes } from '../config.ts';
import {
  buildTree,
  changesBetween,
  diffEntries,
  entriesFromNodes,
  idPathDigits,
  lookupEntries,
  parentPrefixDigits,
  nodesFromEntries,
  readChildren,
  readEntries,
  updateTree,
  type NodeContent,
  type NodeSource,
  type TreeChange,
  type TreeDiff,
  type TreeEntry,
  type TreeNode,
  type TreeWrite,
} from '../lib/page-trie.ts';

export { positionBetween, entriesFromNodes, nodesFromEntries, type TreeChange, type TreeDiff, type TreeEntry } from '../lib/page-trie.ts';

/** Bytes of decoded nodes the process keeps (about 2 × their stored size each). */
const NODE_CACHE_BYTES = treeCacheBytes();

const cache = new LRUCache<string, { content: NodeContent; bytes: number }>({
  maxSize: NODE_CACHE_BYTES,
  sizeCalculation: (v) => Math.max(1, v.bytes),
});

/** Forget every cached node (tests and the benchmark measure cold reads). */
export function clearTreeCache() {
  cache.clear();
}

/** What an operation did, for tests and the benchmark. */
export type TreeStats = { statements: number; nodesRead: number; nodesWritten: number; bytesWritten: number };

export function newTreeStats(): TreeStats {
  return { statements: 0, nodesRead: 0, nodesWritten: 0, bytesWritten: 0 };
}

/** A node as read, with its stored size and whether an earlier (so committed) transaction wrote it. */
type NodeRow = { hash: string; entries: NodeContent; size: number; committed: boolean };

function remember(rows: NodeRow[]) {
  for (const r of rows) if (r.committed) cache.set(r.hash, { content: r.entries, bytes: 2 * r.size });
}

/** Nodes from the cache, else one statement per call (one per level of a walk). */
class DbNodes implements NodeSource {
  constructor(
    private readonly db: Tx,
    private readonly stats?: TreeStats,
  ) {}
  async load(hashes: string[]) {
    const out = new Map<string, NodeContent>();
    const missing: string[] = [];
    for (const h of hashes) {
      const hit = cache.get(h);
      if (hit) out.set(h, hit.content);
      else missing.push(h);
    }
    if (missing.length) {
      const rows = await this.db.$queryRaw<NodeRow[]>`
        SELECT "hash", "entries", pg_column_size("entries")::int AS size, age(xmin) > 0 AS committed FROM "RevisionTreeNode" WHERE "hash" = ANY(${missing}::text[])`;
      if (this.stats) {
        this.stats.statements++;
        this.stats.nodesRead += rows.length;
      }
      remember(rows);
      for (const r of rows) out.set(r.hash, r.entries);
    }
    return out;
  }
}

/**
 * A node reused by a write (it exists already) gets its "lastUsed" refreshed when it is older than
 * this, so garbage collection (whose grace period is longer) never takes it; a fresher node is
 * only locked (ON CONFLICT DO UPDATE locks the row even when its WHERE is false), which makes a
 * concurrent delete wait for this transaction and then see the row in use.
 */
const TOUCH_AFTER = '10 minutes';

/** Store the nodes a write created; returns how many rows were new and their JSON bytes. */
async function storeNodes(tx: Tx, created: TreeWrite['created'], stats?: TreeStats) {
  let nodes = 0;
  let bytes = 0;
  const list = [...created];
  // About 2 MB of JSON per statement at most.
  for (let i = 0; i < list.length; i += 300) {
    const chunk = list.slice(i, i + 300);
    const rows = await tx.$queryRaw<Array<{ bytes: number; inserted: boolean }>>`
      INSERT INTO "RevisionTreeNode" AS n ("hash", "entries")
      SELECT x.h, x.j::jsonb FROM unnest(${chunk.map((c) => c[0])}::text[], ${chunk.map((c) => c[1].json)}::text[]) AS x(h, j)
      ON CONFLICT ("hash") DO UPDATE SET "lastUsed" = EXCLUDED."lastUsed" WHERE n."lastUsed" < now() - ${TOUCH_AFTER}::interval
      RETURNING pg_column_size(n."entries")::int AS bytes, n.xmax = 0 AS inserted`;
    const inserted = rows.filter((r) => r.inserted);
    nodes += inserted.length;
    bytes += inserted.reduce((s, r) => s + r.bytes, 0);
    if (stats) stats.statements++;
  }
  if (stats) {
    stats.nodesWritten += nodes;
    stats.bytesWritten += bytes;
  }
  return { nodes, bytes };
}

// ------------------------------------------------------------------ the one recursive walk

/**
 * One walk down a trie of a stored tree: from the `byId` ("i") or `byParent` ("p") trie under
 * `root`, following at depth d only the child whose bucket is digit d of `path` (one character
 * per digit, 65 + digit) and, past the end of `path`, every child: "" walks the whole trie, a page's
 * digits its path, a parent's prefix the subtree of its children.
 */
type PathWalk = { root: string; trie: 'i' | 'p'; path: string };

const walkCode = (digits: number[]) => String.fromCharCode(...digits.map((d) => 65 + d));

/** The recursive CTE `w("hash", …)` of the nodes `walks` visit (roots not included; UNION: a node several walks share is read once). */
function pathWalkCte(walks: PathWalk[]): Prisma.Sql {
  return Prisma.sql`w("hash", "depth", "path") AS (
      SELECT CASE WHEN x.t = 'i' THEN r."entries"->'r'->>0 ELSE r."entries"->'r'->>1 END, 0, x.p
      FROM unnest(${walks.map((w) => w.root)}::text[], ${walks.map((w) => w.trie)}::text[], ${walks.map((w) => w.path)}::text[]) AS x(root, t, p)
      JOIN "RevisionTreeNode" r ON r."hash" = x.root
      UNION
      SELECT c.child->>1, w."depth" + 1, w."path"
      FROM w JOIN "RevisionTreeNode" n ON n."hash" = w."hash"
      CROSS JOIN LATERAL jsonb_array_elements(n."entries"->'c') AS c(child)
      WHERE w."depth" >= length(w."path") OR (c.child->>0)::int = ascii(substr(w."path", w."depth" + 1, 1)) - 65
    )`;
}

/**
 * Every node of the store the recursive CTE `ctes` (whose last CTE, `w`, has a "hash" column)
 * names, plus the nodes `extra` (roots): ONE statement, counted in `stats`, committed nodes kept
 * in the process cache. Every multi-level read of the store goes through here.
 */
async function walkNodes(db: Tx, ctes: Prisma.Sql, extra: string[], stats?: TreeStats): Promise<NodeRow[]> {
  const rows = await db.$queryRaw<NodeRow[]>`
    WITH RECURSIVE ${ctes}
    SELECT n."hash", n."entries", pg_column_size(n."entries")::int AS size, age(n.xmin) > 0 AS committed
    FROM "RevisionTreeNode" n WHERE n."hash" IN (SELECT "hash" FROM w UNION SELECT unnest(${extra}::text[]))`;
  if (stats) {
    stats.statements++;
    stats.nodesRead += rows.length;
  }
  remember(rows);
  return rows;
}

/** The nodes on `walks` (and their roots), in one statement. */
function walkPaths(db: Tx, walks: PathWalk[], stats?: TreeStats): Promise<NodeRow[]> {
  return walkNodes(db, pathWalkCte(walks), [...new Set(walks.map((w) => w.root))], stats);
}

// ------------------------------------------------------------------ the API

/**
 * The tree `baseRoot` (null: empty) with `changes` applied (an entry upserts a page, null
 * removes it; removing a page does not remove its children: the caller lists them), stored.
 * Reads only the changed pages' paths and writes only nodes that are new; a batch that changes
 * nothing returns `baseRoot` and writes nothing.
 */
export async function writeTree(tx: Tx, baseRoot: string | null, changes: TreeChange[], stats?: TreeStats): Promise<{ root: string; nodesWritten: number; bytesWritten: number }> {
  const write = await updateTree(new DbNodes(tx, stats), baseRoot, changes);
  const stored = await storeNodes(tx, write.created, stats);
  return { root: write.root, nodesWritten: stored.nodes, bytesWritten: stored.bytes };
}

/**
 * Store the nested tree `tree` as the successor of `baseRoot` (null: no base tree) and return its
 * root. The base's entries come from the node cache (only the nodes not cached are read, level by
 * level); only the changed pages' paths are written. Without a base the whole tree is built.
 */
export async function writeTreeOf(tx: Tx, baseRoot: string | null, tree: TreeNode[], stats?: TreeStats): Promise<string> {
  if (!baseRoot) return (await writeWholeTree(tx, tree, stats)).root;
  const base = await readEntries(new DbNodes(tx, stats), baseRoot);
  return (await writeTree(tx, baseRoot, changesBetween(base, tree), stats)).root;
}

/** Store a whole tree built in memory (migration of a JSON tree, tests). */
export async function writeWholeTree(tx: Tx, tree: TreeNode[], stats?: TreeStats): Promise<{ root: string; nodesWritten: number; bytesWritten: number }> {
  const write = treeFromNodes(tree);
  const stored = await storeNodes(tx, write.created, stats);
  return { root: write.root, nodesWritten: stored.nodes, bytesWritten: stored.bytes };
}

/** A root (and its nodes, to store) for a tree in today's nested JSON shape. Pure. */
export function treeFromNodes(tree: TreeNode[]): TreeWrite {
  return buildTree(entriesFromNodes(tree));
}

/** Every page entry of a tree: one statement (a recursive walk in the database), none when its nodes are cached. */
export async function readEntriesOf(db: Tx, root: string | null, stats?: TreeStats): Promise<Map<string, TreeEntry>> {
  if (!root) return new Map();
  if (cache.has(root)) return readEntries(new DbNodes(db, stats), root);
  const rows = await walkPaths(db, [{ root, trie: 'i', path: '' }], stats);
  if (!rows.some((r) => r.hash === root)) throw new Error(`revision tree node ${root} is missing`);
  const byHash = new Map(rows.map((r) => [r.hash, r.entries]));
  return readEntries({ load: async (hashes) => new Map(hashes.filter((h) => byHash.has(h)).map((h) => [h, byHash.get(h)!])) }, root);
}

/** A revision's page tree in the nested shape revisions use (siblings by sort key). */
export async function readTree(db: Tx, root: string | null, stats?: TreeStats): Promise<TreeNode[]> {
  return nodesFromEntries(await readEntriesOf(db, root, stats));
}

/**
 * The page trees of several roots in the nested shape, by root: one statement for all the roots
 * whose nodes are not cached (a walk in the database that visits each node once), none when
 * they are. What a request listing many spaces' trees uses, so it costs the same for 2 or 20.
 */
export async function readTrees(db: Tx, roots: string[], stats?: TreeStats): Promise<Map<string, TreeNode[]>> {
  const unique = [...new Set(roots)];
  const cold = unique.filter((r) => !cache.has(r));
  const byHash = new Map<string, NodeContent>();
  if (cold.length) {
    const rows = await walkPaths(
      db,
      cold.map((root) => ({ root, trie: 'i' as const, path: '' })),
      stats,
    );
    for (const r of rows) byHash.set(r.hash, r.entries);
    for (const r of cold) if (!byHash.has(r)) throw new Error(`revision tree node ${r} is missing`);
  }
  // Nodes this statement did not return (cached roots whose children the cache let go) load as a walk does.
  const fallback = new DbNodes(db, stats);
  const source: NodeSource = {
    load: async (hashes) => {
      const out = new Map<string, NodeContent>();
      const missing = hashes.filter((h) => !byHash.has(h));
      for (const h of hashes) if (byHash.has(h)) out.set(h, byHash.get(h)!);
      if (missing.length) for (const [h, n] of await fallback.load(missing)) out.set(h, n);
      return out;
    },
  };
  const out = new Map<string, TreeNode[]>();
  for (const r of unique) out.set(r, nodesFromEntries(await readEntries(source, r)));
  return out;
}

/** The entries of `pageIds` in a tree (absent pages left out), reading only the nodes on their paths: at most depth + 1 statements. */
export function lookupPages(db: Tx, root: string | null, pageIds: string[], stats?: TreeStats): Promise<Map<string, TreeEntry>> {
  return lookupEntries(new DbNodes(db, stats), root, pageIds);
}

/** The children of `parentId` (null: top-level pages), in order, reading only that parent's part of the tree. */
export function childPages(db: Tx, root: string | null, parentId: string | null, stats?: TreeStats): Promise<Array<{ pageId: string; pos: string }>> {
  return readChildren(new DbNodes(db, stats), root, parentId);
}

/**
 * Put in the node cache, with one statement whatever the depth, every node where the trees of
 * each pair differ: the `byId` tries are walked side by side and subtrees with equal hashes are
 * left out. diffTrees of those pairs, and writeTree or lookupPages on the changed pages' paths of
 * either tree, then read nothing more (nodes an earlier transaction committed; others are read
 * again as usual). Returns the number of nodes read.
 */
export async function prefetchDiffNodes(db: Tx, pairs: Array<[string | null, string | null]>, stats?: TreeStats): Promise<number> {
  const todo = pairs.filter(([a, b]) => a !== b);
  if (todo.length === 0) return 0;
  // The two tries side by side; `w`: the nodes of either side.
  const rows = await walkNodes(
    db,
    Prisma.sql`p("a", "b") AS (
      SELECT x.a, x.b FROM unnest(${todo.map((t) => t[0])}::text[], ${todo.map((t) => t[1])}::text[]) AS x(a, b)
      UNION ALL
      SELECT k.a, k.b
      FROM p
      LEFT JOIN "RevisionTreeNode" na ON na."hash" = p."a"
      LEFT JOIN "RevisionTreeNode" nb ON nb."hash" = p."b"
      CROSS JOIN LATERAL (
        SELECT na."entries"->'r'->>0 AS a, nb."entries"->'r'->>0 AS b WHERE na."entries" ? 'r' AND nb."entries" ? 'r'
        UNION ALL
        SELECT ca.c->>1, cb.c->>1
        FROM (SELECT c FROM jsonb_array_elements(CASE WHEN na."entries" ? 'c' AND nb."entries" ? 'c' THEN na."entries"->'c' ELSE '[]'::jsonb END) AS e(c)) ca
        FULL JOIN (SELECT c FROM jsonb_array_elements(CASE WHEN na."entries" ? 'c' AND nb."entries" ? 'c' THEN nb."entries"->'c' ELSE '[]'::jsonb END) AS e(c)) cb
          ON (ca.c->>0)::int = (cb.c->>0)::int
      ) k
      WHERE k.a IS DISTINCT FROM k.b
    ),
    w("hash") AS (SELECT "a" FROM p UNION SELECT "b" FROM p)`,
    [],
    stats,
  );
  return rows.length;
}

/** Pages whose entry (version, parent or position) differs between two trees; subtrees with equal hashes are not read. */
export function diffTrees(db: Tx, rootA: string | null, rootB: string | null, stats?: TreeStats): Promise<TreeDiff[]> {
  return diffEntries(new DbNodes(db, stats), rootA, rootB);
}

// ------------------------------------------------------------------ a revision's tree, whichever way it is stored

/** What a reader needs of a revision row to find its page tree. */
export type StoredTreeOf = { treeRoot: string | null; tree?: unknown };

/**
 * What `revisionTree` and `revisionPages` need of a revision, by id: its root, and its JSON tree
 * only when it has no root (so a revision that has one never loads the legacy copy). Null: no
 * such revision.
 */
export async function storedTreeOf(db: Tx, revisionId: string): Promise<StoredTreeOf | null> {
  const [row] = await db.$queryRaw<Array<{ treeRoot: string | null; tree: unknown }>>`
    SELECT "treeRoot", CASE WHEN "treeRoot" IS NULL THEN "tree" END AS "tree" FROM "Revision" WHERE "id" = ${revisionId}`;
  return row ?? null;
}

/**
 * A revision's page tree in the nested shape: from the shared tree store (`treeRoot`), or, for a
 * revision written before trees were stored and not yet reached by the backfill, from its legacy
 * JSON `tree`. Every reader of a whole tree goes through here.
 */
export async function revisionTree(db: Tx, revision: StoredTreeOf, stats?: TreeStats): Promise<TreeNode[]> {
  if (revision.treeRoot) return readTree(db, revision.treeRoot, stats);
  return Array.isArray(revision.tree) ? (revision.tree as TreeNode[]) : [];
}

/**
 * The entries of `pageIds` in a revision's tree (absent pages left out), reading only their paths
 * in the tree store; a revision without a stored tree walks its JSON. Positions are not compared
 * by callers of the JSON fallback: `pos` is the index among siblings there.
 */
export async function revisionPages(db: Tx, revision: StoredTreeOf, pageIds: string[], stats?: TreeStats): Promise<Map<string, TreeEntry>> {
  if (revision.treeRoot) return lookupPages(db, revision.treeRoot, pageIds, stats);
  const wanted = new Set(pageIds);
  const out = new Map<string, TreeEntry>();
  const visit = (list: TreeNode[], parent: string | null) =>
    list.forEach((n, i) => {
      if (wanted.has(n.id) && !out.has(n.id)) out.set(n.id, { v: n.v, parent, pos: String(i) });
      visit(n.pages ?? [], n.id);
    });
  visit(Array.isArray(revision.tree) ? (revision.tree as TreeNode[]) : [], null);
  return out;
}

// ------------------------------------------------------------------ one operation's reads

/**
 * The tree reads and writes of one operation (a change batch): nodes read once are kept for the
 * rest of the operation, and `preload` reads every node on the paths the next steps walk in ONE
 * statement (a recursive walk in the database), so an edit costs the same number of statements
 * whatever the depth of the trie.
 */
export class TreeSession {
  private readonly memo = new Map<string, NodeContent>();
  private readonly preloaded = new Set<string>();
  readonly source: NodeSource;

  constructor(
    private readonly tx: Tx,
    readonly stats?: TreeStats,
  ) {
    const db = new DbNodes(tx, stats);
    this.source = {
      load: async (hashes) => {
        const out = new Map<string, NodeContent>();
        const missing: string[] = [];
        for (const h of hashes) {
          const n = this.memo.get(h);
          if (n) out.set(h, n);
          else missing.push(h);
        }
        if (missing.length) {
          for (const [h, n] of await db.load(missing)) {
            this.memo.set(h, n);
            out.set(h, n);
          }
        }
        return out;
      },
    };
  }

  /**
   * Reads, in one statement, the nodes on the `byId` paths of `pageIds` and the whole `byParent`
   * subtrees holding the children of `parents` (null: the top-level pages), and the `byParent`
   * paths of the pages `placed` under those parents, under `root`; paths read before by this
   * session are skipped.
   */
  async preload(root: string | null, pageIds: string[], parents: Array<string | null> = [], placed: Array<{ pageId: string; parent: string | null }> = []): Promise<void> {
    if (!root) return;
    const walks: PathWalk[] = [];
    const keys: string[] = [];
    for (const id of new Set(pageIds)) {
      const key = `${root} i ${id}`;
      if (!this.preloaded.has(key)) keys.push(key), walks.push({ root, trie: 'i', path: walkCode(idPathDigits(id)) });
    }
    for (const parent of new Set(parents)) {
      const key = `${root} p ${parent ?? ''}`;
      if (!this.preloaded.has(key)) keys.push(key), walks.push({ root, trie: 'p', path: walkCode(parentPrefixDigits(parent)) });
    }
    for (const p of placed) {
      const key = `${root} q ${p.parent ?? ''} ${p.pageId}`;
      if (!this.preloaded.has(key)) keys.push(key), walks.push({ root, trie: 'p', path: walkCode([...parentPrefixDigits(p.parent), ...idPathDigits(p.pageId)]) });
    }
    if (walks.length === 0) return;
    const rows = await walkPaths(this.tx, walks, this.stats);
    for (const r of rows) this.memo.set(r.hash, r.entries);
    for (const k of keys) this.preloaded.add(k);
  }

  /** The entries of `pageIds` under `root` (absent pages left out). */
  async lookup(root: string | null, pageIds: string[]): Promise<Map<string, TreeEntry>> {
    await this.preload(root, pageIds);
    return lookupEntries(this.source, root, pageIds);
  }

  /** The children of `parent` under `root`, in order. */
  async children(root: string | null, parent: string | null): Promise<Array<{ pageId: string; pos: string }>> {
    await this.preload(root, [], [parent]);
    return readChildren(this.source, root, parent);
  }

  /** writeTree through this session's nodes (the paths read before are not read again). */
  async write(base: string | null, changes: TreeChange[]): Promise<{ root: string; nodesWritten: number; bytesWritten: number }> {
    const write = await updateTree(this.source, base, changes);
    const stored = await storeNodes(this.tx, write.created, this.stats);
    return { root: write.root, nodesWritten: stored.nodes, bytesWritten: stored.bytes };
  }
}

// ------------------------------------------------------------------ migration of existing revisions

/**
 * Give every revision without a `treeRoot` the root of its JSON tree, `batchSize` revisions per
 * transaction. Safe to re-run and to stop anywhere: a batch either commits whole or not at all,
 * nodes are content-addressed (a node written by a batch that died is the same row the next run
 * writes), and only revisions still without a root are updated. Returns the number converted.
 */
export async function backfillRevisionTrees(db: Db, opts: { batchSize?: number; maxBatches?: number } = {}): Promise<{ converted: number; done: boolean }> {
  const batchSize = opts.batchSize ?? 20;
  let converted = 0;
  for (let batch = 0; opts.maxBatches === undefined || batch < opts.maxBatches; batch++) {
    const rows = await db.$queryRaw<Array<{ id: string; tree: TreeNode[] }>>`
      SELECT "id", "tree" FROM "Revision" WHERE "treeRoot" IS NULL ORDER BY "id" LIMIT ${batchSize}`;
    if (rows.length === 0) return { converted, done: true };
    const created: TreeWrite['created'] = new Map();
    const roots = rows.map((r) => {
      const write = treeFromNodes(Array.isArray(r.tree) ? r.tree : []);
      for (const [h, n] of write.created) created.set(h, n);
      return write.root;
    });
    converted += await transaction(db, async (tx) => {
      await storeNodes(tx, created);
      return tx.$executeRaw`
        UPDATE "Revision" r SET "treeRoot" = x.root
        FROM unnest(${rows.map((r) => r.id)}::text[], ${roots}::text[]) AS x(id, root)
        WHERE r."id" = x.id AND r."treeRoot" IS NULL`;
    });
  }
  return { converted, done: false };
}

/**
 * The task (src/tasks.ts): revisions written before trees were stored get their root, in batches,
 * for up to `runLimitMs`; it enqueues itself again while revisions remain, and only then. Every
 * revision written since carries its root, so the backlog only shrinks; once it is empty a run is
 * one statement on an empty partial index ("Revision_treeRoot_missing_idx").
 */
export async function backfillRevisionTreesTask(deps: Pick<TaskDeps, 'prisma' | 'log' | 'services'>, opts: { runLimitMs?: number } = {}): Promise<number> {
  // Nothing left (the usual case once converted): one look at an empty partial index, nothing else.
  const [{ pending }] = await deps.prisma.$queryRaw<Array<{ pending: boolean }>>`SELECT EXISTS (SELECT 1 FROM "Revision" WHERE "treeRoot" IS NULL) AS pending`;
  if (!pending) return 0;
  const until = Date.now() + (opts.runLimitMs ?? 120_000);
  let converted = 0;
  let done = false;
  while (!done && Date.now() < until) {
    const r = await backfillRevisionTrees(deps.prisma, { maxBatches: 1 });
    converted += r.converted;
    done = r.done;
  }
  if (!done) await deps.services.jobs.enqueue(deps.prisma, 'backfillRevisionTrees', {}, { jobKey: 'backfillRevisionTrees' });
  if (converted) deps.log.info({ converted, more: !done }, 'stored the page trees of older revisions');
  return converted;
}

// ------------------------------------------------------------------ garbage collection

/** Nodes used (written or reused) more recently than this are never collected: longer than any transaction. */
export const TREE_GC_GRACE = '1 hour';

export type TreeGcOptions = {
  /** Rows deleted per statement. */
  batchSize?: number;
  /** Rows deleted per run at most; the task enqueues itself again when it reaches it. */
  maxNodes?: number;
  /** Postgres interval: nodes used within it are spared. */
  grace?: string;
  /** Test hooks: after the live set is known, after each batch. */
  afterMark?: () => Promise<void>;
  afterBatch?: (deleted: number) => Promise<void>;
};

/**
 * Delete tree nodes no revision reaches any more (revisions go with their space's purge), at most
 * `maxNodes` per run. One transaction: the nodes reachable from every "Revision"."treeRoot" are
 * marked (one recursive walk into a temporary table), then unmarked nodes whose "lastUsed" is
 * older than the grace period are deleted in batches. A run that dies rolls back whole (nothing
 * half-deleted); a re-run starts over, so the task is idempotent.
 *
 * Why a concurrent writer loses nothing: a writer references an existing node either because it
 * read it from its base revision (alive, so marked; a space being purged takes the writer's
 * revision with it), or because it built an equal node, which it then "inserts": ON CONFLICT DO
 * UPDATE locks the row and refreshes "lastUsed" when stale. A row the writer inserted or touched
 * in a transaction that started less than the grace period before the mark is younger than the
 * cutoff; a row it locked makes the delete wait and then re-check "lastUsed" on the row as the
 * writer left it; a row deleted first makes the writer's insert wait for this commit and insert
 * it again.
 */
export async function collectTreeGarbage(db: Db, opts: TreeGcOptions = {}): Promise<{ deleted: number; more: boolean }> {
  const batchSize = opts.batchSize ?? 1000;
  const maxNodes = opts.maxNodes ?? 20_000;
  const grace = opts.grace ?? TREE_GC_GRACE;
  return transaction(
    db,
    async (tx) => {
      // The walk reads the whole live store: not bound by the request statement timeout.
      await tx.$executeRawUnsafe(`SET LOCAL statement_timeout = '10min'`);
      await tx.$executeRawUnsafe(`CREATE TEMPORARY TABLE "tree_gc_live" ("hash" text PRIMARY KEY) ON COMMIT DROP`);
      // Taken before the mark: a node used after (cutoff + grace) is spared whatever the mark saw.
      const [{ cutoff }] = await tx.$queryRaw<Array<{ cutoff: string }>>`SELECT (clock_timestamp() - ${grace}::interval)::timestamp(3)::text AS cutoff`;
      await tx.$executeRaw`
        INSERT INTO "tree_gc_live" ("hash")
        WITH RECURSIVE t("hash") AS (
          SELECT DISTINCT "treeRoot" FROM "Revision" WHERE "treeRoot" IS NOT NULL
          UNION
          SELECT c.h FROM t JOIN "RevisionTreeNode" n ON n."hash" = t."hash"
          CROSS JOIN LATERAL (
            SELECT jsonb_array_elements_text(CASE WHEN n."entries" ? 'r' THEN (n."entries"->'r') - 2 ELSE '[]'::jsonb END)
            UNION ALL
            SELECT e->>1 FROM jsonb_array_elements(CASE WHEN n."entries" ? 'c' THEN n."entries"->'c' ELSE '[]'::jsonb END) AS e
          ) AS c(h)
          WHERE c.h IS NOT NULL
        )
        SELECT "hash" FROM t`;
      await opts.afterMark?.();
      let deleted = 0;
      while (deleted < maxNodes) {
        // The outer "lastUsed" condition is re-checked on a row a writer locked and refreshed meanwhile.
        const n = await tx.$executeRaw`
          DELETE FROM "RevisionTreeNode" d
          WHERE d."hash" IN (
            SELECT n."hash" FROM "RevisionTreeNode" n
            WHERE n."lastUsed" < ${cutoff}::timestamp(3) AND NOT EXISTS (SELECT 1 FROM "tree_gc_live" l WHERE l."hash" = n."hash")
            LIMIT ${Math.min(batchSize, maxNodes - deleted)}
          )
          AND d."lastUsed" < ${cutoff}::timestamp(3)`;
        deleted += n;
        await opts.afterBatch?.(deleted);
        if (n === 0) return { deleted, more: false };
      }
      return { deleted, more: true };
    },
    { timeout: 15 * 60_000 },
  );
}
