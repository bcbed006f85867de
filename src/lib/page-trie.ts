// A revision's page tree as immutable, content-addressed nodes shared between revisions
// (src/domain/revision-tree.ts stores them; this file is the pure part: no database).
//
// The tree is the map pageId → { v: version id, parent: page id | null, pos: sort key among
// siblings (fractional-indexing) }. It is stored twice, as two hash-array-mapped tries under one
// root node, both keyed by page:
//   - `byId`: item [pageId, v, parent, pos], path = the digits of sha256(pageId): finds a page;
//   - `byParent`: item [pageId, parent, pos], path = the first PARENT_DIGITS digits of
//     sha256(parent) then those of sha256(pageId): a parent's children sit under one small
//     subtree, so listing them (sibling order, slug checks) reads only that subtree.
// A new version of a page rewrites one path of `byId`; a move also one or two paths of
// `byParent`; nothing else is written. Sibling order lives in `pos`, so inserting or moving a
// page rewrites only that page's items.
//
// Canonical shape: a node over the item set S at depth d is a leaf of S sorted by page id when
// |S| <= LEAF_MAX (or d reaches MAX_DEPTH), else a branch of the nodes over S split by the
// path's digit at d (32 buckets, empty ones left out). The shape depends only on the set, never
// on the history, so equal trees have equal root hashes, and two trees share every subtree
// over an equal subset. A node's hash is sha256 (base64url) of its canonical JSON.
import crypto from 'node:crypto';
import { generateKeyBetween, generateNKeysBetween } from 'fractional-indexing';

/** Where a page sits in a revision: its version, its parent page (null: the root) and its sort key among its siblings. */
export type TreeEntry = { v: string; parent: string | null; pos: string };
/** The nested page tree as revisions have stored it (src/domain/revisions.ts TreeNode). */
export type TreeNode = { id: string; v: string; pages: TreeNode[] };

type Item = Array<string | null>;
export type LeafContent = { l: Item[] };
/** A branch: its depth and its children as [bucket, hash, item count], by bucket. */
export type BranchContent = { d: number; c: Array<[number, string, number]> };
/** The root of a revision's tree: the `byId` root, the `byParent` root, the page count. */
export type RootContent = { r: [string | null, string | null, number] };
export type NodeContent = LeafContent | BranchContent | RootContent;

/** Where nodes come from: one call per level of a walk, with every hash that level needs. */
export interface NodeSource {
  load(hashes: string[]): Promise<Map<string, NodeContent>>;
}

/** Bits per digit: 32 children per branch. */
const DIGIT_BITS = 5;
/** Items a leaf holds before it splits (a leaf of 64 `byId` items is about 6 kB). */
export const LEAF_MAX = 64;
/** Digits of sha256 (256 bits) a path may use; no two distinct ids share them. */
const MAX_DEPTH = 40;
/** Digits of the parent's hash at the top of a `byParent` path (20 bits: about a million subtrees). */
const PARENT_DIGITS = 4;

const EMPTY_ROOT: RootContent = { r: [null, null, 0] };

export function canonicalJson(content: NodeContent): string {
  return JSON.stringify(content);
}

export function nodeHash(json: string): string {
  return crypto.createHash('sha256').update(json).digest('base64url');
}

// ------------------------------------------------------------------ paths

type Path = (depth: number) => number;

const hashCache = new Map<string, Buffer>();
function sha(s: string): Buffer {
  let h = hashCache.get(s);
  if (!h) {
    if (hashCache.size > 100_000) hashCache.clear();
    h = crypto.createHash('sha256').update(s).digest();
    hashCache.set(s, h);
  }
  return h;
}

function digit(buf: Buffer, d: number): number {
  const bit = d * DIGIT_BITS;
  const byte = bit >> 3;
  const word = (buf[byte] << 8) | (buf[byte + 1] ?? 0);
  return (word >> (16 - DIGIT_BITS - (bit & 7))) & ((1 << DIGIT_BITS) - 1);
}

const idPath = (pageId: string): Path => {
  const h = sha(`i:${pageId}`);
  return (d) => digit(h, d);
};

const parentPath = (parent: string | null, pageId: string): Path => {
  const p = sha(`p:${parent ?? ''}`);
  const h = sha(`i:${pageId}`);
  return (d) => (d < PARENT_DIGITS ? digit(p, d) : digit(h, d - PARENT_DIGITS));
};

/** The digits of a page's `byId` path (for walks done in SQL). */
export function idPathDigits(pageId: string): number[] {
  const p = idPath(pageId);
  return Array.from({ length: MAX_DEPTH }, (_, d) => p(d));
}

/** The digits of the top of a parent's `byParent` subtree (its children sit under it). */
export function parentPrefixDigits(parent: string | null): number[] {
  const p = parentPath(parent, '');
  return Array.from({ length: PARENT_DIGITS }, (_, d) => p(d));
}

type Trie = { pathOf(item: Item): Path };
const BY_ID: Trie = { pathOf: (item) => idPath(item[0]!) };
const BY_PARENT: Trie = { pathOf: (item) => parentPath(item[1], item[0]!) };

const idItem = (pageId: string, e: TreeEntry): Item => [pageId, e.v, e.parent, e.pos];
const parentItem = (pageId: string, e: Pick<TreeEntry, 'parent' | 'pos'>): Item => [pageId, e.parent, e.pos];
const entryOf = (item: Item): TreeEntry => ({ v: item[1]!, parent: item[2], pos: item[3]! });

// ------------------------------------------------------------------ the node store of one operation

export type CreatedNode = { content: NodeContent; json: string };

/** The nodes an operation has read (they exist) and created (to be written). */
class Nodes {
  readonly loaded = new Map<string, NodeContent>();
  readonly created = new Map<string, CreatedNode>();
  constructor(private readonly source: NodeSource | null) {}

  async fetch(hashes: Iterable<string>) {
    const missing = [...new Set(hashes)].filter((h) => !this.loaded.has(h) && !this.created.has(h));
    if (missing.length === 0) return;
    if (!this.source) throw new Error(`revision tree node ${missing[0]} is not available`);
    const got = await this.source.load(missing);
    for (const h of missing) {
      const n = got.get(h);
      if (!n) throw new Error(`revision tree node ${h} is missing`);
      this.loaded.set(h, n);
    }
  }

  get(hash: string): NodeContent {
    const n = this.created.get(hash)?.content ?? this.loaded.get(hash);
    if (!n) throw new Error(`revision tree node ${hash} was not loaded`);
    return n;
  }

  /** Store a node; one that exists already (read from the source) is not written again. */
  emit(content: NodeContent): string {
    const json = canonicalJson(content);
    const hash = nodeHash(json);
    if (!this.loaded.has(hash) && !this.created.has(hash)) this.created.set(hash, { content, json });
    return hash;
  }
}

type Ref = { hash: string; count: number };
type Change = { key: string; path: Path; item: Item | null };

const byKey = (a: Item, b: Item) => (a[0]! < b[0]! ? -1 : a[0]! > b[0]! ? 1 : 0);

/** The canonical node over `items` at `depth`. */
function build(nodes: Nodes, trie: Trie, items: Item[], depth: number): Ref | null {
  if (items.length === 0) return null;
  if (items.length <= LEAF_MAX || depth >= MAX_DEPTH) return { hash: nodes.emit({ l: [...items].sort(byKey) }), count: items.length };
  const buckets = new Map<number, Item[]>();
  for (const item of items) {
    const b = trie.pathOf(item)(depth);
    let list = buckets.get(b);
    if (!list) buckets.set(b, (list = []));
    list.push(item);
  }
  const children = new Map<number, Ref>();
  for (const [b, list] of buckets) children.set(b, build(nodes, trie, list, depth + 1)!);
  return emitBranch(nodes, depth, children);
}

function emitBranch(nodes: Nodes, depth: number, children: Map<number, Ref>): Ref {
  const c = [...children].sort((a, b) => a[0] - b[0]).map(([b, r]): [number, string, number] => [b, r.hash, r.count]);
  return { hash: nodes.emit({ d: depth, c }), count: c.reduce((s, x) => s + x[2], 0) };
}

function isBranch(n: NodeContent): n is BranchContent {
  return 'c' in n;
}
function isLeaf(n: NodeContent): n is LeafContent {
  return 'l' in n;
}

function groupBy<T>(list: T[], f: (x: T) => number): Map<number, T[]> {
  const out = new Map<number, T[]>();
  for (const x of list) {
    const k = f(x);
    let l = out.get(k);
    if (!l) out.set(k, (l = []));
    l.push(x);
  }
  return out;
}

/** Reads, one level at a time, every node on the paths of `changes` under `root`. */
async function fetchPaths(nodes: Nodes, root: string | null, changes: Change[]) {
  let level = root ? [{ hash: root, depth: 0, changes }] : [];
  while (level.length) {
    await nodes.fetch(level.map((t) => t.hash));
    const next: typeof level = [];
    for (const t of level) {
      const n = nodes.get(t.hash);
      if (!isBranch(n)) continue;
      for (const [b, group] of groupBy(t.changes, (c) => c.path(t.depth))) {
        const child = n.c.find((c) => c[0] === b);
        if (child) next.push({ hash: child[1], depth: t.depth + 1, changes: group });
      }
    }
    level = next;
  }
}

/** Every item under `roots`, one level at a time. */
async function collect(nodes: Nodes, roots: Array<string | null>): Promise<Item[]> {
  const out: Item[] = [];
  let level = roots.filter((h): h is string => h !== null);
  while (level.length) {
    await nodes.fetch(level);
    const next: string[] = [];
    for (const h of level) {
      const n = nodes.get(h);
      if (isLeaf(n)) out.push(...n.l);
      else if (isBranch(n)) next.push(...n.c.map((c) => c[1]));
    }
    level = next;
  }
  return out;
}

/** Removals first, so a move whose old and new paths meet in one leaf ends with the new item. */
function applyToItems(items: Item[], changes: Change[]): Item[] {
  const map = new Map(items.map((i) => [i[0]!, i]));
  for (const c of changes) if (!c.item) map.delete(c.key);
  for (const c of changes) if (c.item) map.set(c.key, c.item);
  return [...map.values()];
}

/** The node over (items under `hash`) with `changes` applied; paths already fetched. */
async function rebuild(nodes: Nodes, trie: Trie, hash: string | null, depth: number, changes: Change[]): Promise<Ref | null> {
  if (!hash) return build(nodes, trie, applyToItems([], changes), depth);
  const n = nodes.get(hash);
  if (isLeaf(n)) return build(nodes, trie, applyToItems(n.l, changes), depth);
  if (!isBranch(n)) throw new Error(`revision tree node ${hash} is not a trie node`);
  const children = new Map(n.c.map(([b, h, count]) => [b, { hash: h, count }]));
  for (const [b, group] of groupBy(changes, (c) => c.path(depth))) {
    const r = await rebuild(nodes, trie, children.get(b)?.hash ?? null, depth + 1, group);
    if (r) children.set(b, r);
    else children.delete(b);
  }
  const total = [...children.values()].reduce((s, r) => s + r.count, 0);
  if (total === 0) return null;
  // Few enough left to be one leaf again (a canonical node does not depend on the history).
  if (total <= LEAF_MAX) return build(nodes, trie, await collect(nodes, [...children.values()].map((r) => r.hash)), depth);
  return emitBranch(nodes, depth, children);
}

async function updateTrie(nodes: Nodes, trie: Trie, root: string | null, changes: Change[]): Promise<Ref | null> {
  if (changes.length === 0) return root ? { hash: root, count: -1 } : null;
  await fetchPaths(nodes, root, changes);
  return rebuild(nodes, trie, root, 0, changes);
}

/** Items of `keys` found under `root` (paths already fetched or fetched here). */
async function lookup(nodes: Nodes, root: string | null, wanted: Array<{ key: string; path: Path }>): Promise<Map<string, Item>> {
  const out = new Map<string, Item>();
  let level = root ? [{ hash: root, depth: 0, wanted }] : [];
  while (level.length) {
    await nodes.fetch(level.map((t) => t.hash));
    const next: typeof level = [];
    for (const t of level) {
      const n = nodes.get(t.hash);
      if (isLeaf(n)) {
        const keys = new Set(t.wanted.map((w) => w.key));
        for (const item of n.l) if (keys.has(item[0]!)) out.set(item[0]!, item);
      } else if (isBranch(n)) {
        for (const [b, group] of groupBy(t.wanted, (w) => w.path(t.depth))) {
          const child = n.c.find((c) => c[0] === b);
          if (child) next.push({ hash: child[1], depth: t.depth + 1, wanted: group });
        }
      }
    }
    level = next;
  }
  return out;
}

async function rootOf(nodes: Nodes, root: string | null): Promise<RootContent> {
  if (!root) return EMPTY_ROOT;
  await nodes.fetch([root]);
  const n = nodes.get(root);
  if (!('r' in n)) throw new Error(`revision tree node ${root} is not a root`);
  return n;
}

// ------------------------------------------------------------------ the operations

/** An upsert (entry) or a removal (null) of one page's entry. Removing a page does not remove its children: the caller removes them too. */
export type TreeChange = { pageId: string; entry: TreeEntry | null };

export type TreeWrite = {
  /** The new root (the base itself when nothing changed). */
  root: string;
  /** Nodes to store: those the new tree has and the source did not show on the paths it read. */
  created: Map<string, CreatedNode>;
};

/** The tree `base` (null: empty) with `changes` applied; the last change of a page wins. Reads only the paths of the changed pages. */
export async function updateTree(source: NodeSource | null, base: string | null, changes: TreeChange[]): Promise<TreeWrite> {
  const nodes = new Nodes(source);
  const last = new Map<string, TreeEntry | null>();
  for (const c of changes) last.set(c.pageId, c.entry);
  const rootContent = await rootOf(nodes, base);
  const [idRoot, parentRoot] = rootContent.r;

  // The pages' current items (for their old place in `byParent`), read on the paths `byId` rewrites anyway.
  const idChanges: Change[] = [...last].map(([pageId, e]) => ({ key: pageId, path: idPath(pageId), item: e ? idItem(pageId, e) : null }));
  await fetchPaths(nodes, idRoot, idChanges);
  const old = await lookup(nodes, idRoot, idChanges);
  const unchanged = (pageId: string, e: TreeEntry | null) => {
    const o = old.get(pageId);
    return o ? e !== null && o[1] === e.v && o[2] === e.parent && o[3] === e.pos : e === null;
  };
  const real = idChanges.filter((c) => !unchanged(c.key, last.get(c.key)!));
  if (real.length === 0 && base) return { root: base, created: nodes.created };

  const parentChanges: Change[] = [];
  for (const c of real) {
    const o = old.get(c.key);
    const e = last.get(c.key)!;
    if (o && e && o[2] === e.parent && o[3] === e.pos) continue; // a new version only
    if (o) parentChanges.push({ key: c.key, path: parentPath(o[2], c.key), item: null });
    if (e) parentChanges.push({ key: c.key, path: parentPath(e.parent, c.key), item: parentItem(c.key, e) });
  }
  const ids = await updateTrie(nodes, BY_ID, idRoot, real);
  const parents = await updateTrie(nodes, BY_PARENT, parentRoot, parentChanges);
  const count = ids ? (ids.count >= 0 ? ids.count : rootContent.r[2]) : 0;
  const root = nodes.emit({ r: [ids?.hash ?? null, parents?.hash ?? null, count] });
  return { root, created: nodes.created };
}

/** The tree over `entries`, built from nothing (no reads). */
export function buildTree(entries: Map<string, TreeEntry>): TreeWrite {
  const nodes = new Nodes(null);
  const list = [...entries];
  const ids = build(
    nodes,
    BY_ID,
    list.map(([id, e]) => idItem(id, e)),
    0,
  );
  const parents = build(
    nodes,
    BY_PARENT,
    list.map(([id, e]) => parentItem(id, e)),
    0,
  );
  const root = nodes.emit({ r: [ids?.hash ?? null, parents?.hash ?? null, list.length] });
  return { root, created: nodes.created };
}

/** Every page's entry (reads every `byId` node, one level at a time). */
export async function readEntries(source: NodeSource, root: string | null): Promise<Map<string, TreeEntry>> {
  const nodes = new Nodes(source);
  const r = await rootOf(nodes, root);
  return new Map((await collect(nodes, [r.r[0]])).map((i) => [i[0]!, entryOf(i)]));
}

/** The entries of `pageIds` (absent pages are left out), reading only their paths. */
export async function lookupEntries(source: NodeSource, root: string | null, pageIds: string[]): Promise<Map<string, TreeEntry>> {
  const nodes = new Nodes(source);
  const r = await rootOf(nodes, root);
  const found = await lookup(
    nodes,
    r.r[0],
    [...new Set(pageIds)].map((key) => ({ key, path: idPath(key) })),
  );
  return new Map([...found].map(([k, i]) => [k, entryOf(i)]));
}

/** The children of `parent` (null: the root's pages) in order: [pageId, pos]. Reads the parent's subtree of `byParent` only. */
export async function readChildren(source: NodeSource, root: string | null, parent: string | null): Promise<Array<{ pageId: string; pos: string }>> {
  const nodes = new Nodes(source);
  const r = await rootOf(nodes, root);
  let hash = r.r[1];
  const path = parentPath(parent, '');
  for (let d = 0; hash && d < PARENT_DIGITS; d++) {
    await nodes.fetch([hash]);
    const n = nodes.get(hash);
    if (!isBranch(n)) break;
    hash = n.c.find((c) => c[0] === path(d))?.[1] ?? null;
  }
  const items = (await collect(nodes, [hash])).filter((i) => i[1] === parent);
  return items.map((i) => ({ pageId: i[0]!, pos: i[2]! })).sort(bySortKey);
}

export type TreeDiff = { pageId: string; before: TreeEntry | null; after: TreeEntry | null };

/** Pages whose entry differs between two trees, by page id; equal subtrees (equal hashes) are skipped unread. */
export async function diffEntries(source: NodeSource, a: string | null, b: string | null): Promise<TreeDiff[]> {
  if (a === b) return [];
  const nodes = new Nodes(source);
  const [ra, rb] = [await rootOf(nodes, a), await rootOf(nodes, b)];
  let level: Array<[string | null, string | null]> = [[ra.r[0], rb.r[0]]];
  const sideA: Array<string | null> = [];
  const sideB: Array<string | null> = [];
  while (level.length) {
    await nodes.fetch(level.flat().filter((h): h is string => h !== null));
    const next: typeof level = [];
    for (const [x, y] of level) {
      if (x === y) continue;
      const nx = x ? nodes.get(x) : null;
      const ny = y ? nodes.get(y) : null;
      if (nx && ny && isBranch(nx) && isBranch(ny)) {
        const cx = new Map(nx.c.map((c) => [c[0], c[1]]));
        const cy = new Map(ny.c.map((c) => [c[0], c[1]]));
        for (const bucket of new Set([...cx.keys(), ...cy.keys()])) {
          const pair: [string | null, string | null] = [cx.get(bucket) ?? null, cy.get(bucket) ?? null];
          if (pair[0] !== pair[1]) next.push(pair);
        }
      } else {
        // A leaf (or nothing) on one side: compare the items of both subtrees. A page's path is
        // the same in both trees, so each page is compared in exactly one such pair.
        sideA.push(x);
        sideB.push(y);
      }
    }
    level = next;
  }
  const [ia, ib] = [await collect(nodes, sideA), await collect(nodes, sideB)];
  const ma = new Map(ia.map((i) => [i[0]!, i]));
  const mb = new Map(ib.map((i) => [i[0]!, i]));
  const out: TreeDiff[] = [];
  for (const id of new Set([...ma.keys(), ...mb.keys()])) {
    const x = ma.get(id);
    const y = mb.get(id);
    if (x && y && x[1] === y[1] && x[2] === y[2] && x[3] === y[3]) continue;
    out.push({ pageId: id, before: x ? entryOf(x) : null, after: y ? entryOf(y) : null });
  }
  return out.sort((p, q) => (p.pageId < q.pageId ? -1 : p.pageId > q.pageId ? 1 : 0));
}

// ------------------------------------------------------------------ nested trees

const bySortKey = (a: { pageId: string; pos: string }, b: { pageId: string; pos: string }) =>
  a.pos < b.pos ? -1 : a.pos > b.pos ? 1 : a.pageId < b.pageId ? -1 : a.pageId > b.pageId ? 1 : 0;

/** Entries of a nested tree: each sibling list gets the sort keys generateNKeysBetween(null, null, n) (deterministic). */
export function entriesFromNodes(tree: TreeNode[]): Map<string, TreeEntry> {
  const out = new Map<string, TreeEntry>();
  const visit = (list: TreeNode[], parent: string | null) => {
    const keys = generateNKeysBetween(null, null, list.length);
    list.forEach((n, i) => {
      out.set(n.id, { v: n.v, parent, pos: keys[i] });
      visit(n.pages, n.id);
    });
  };
  visit(tree, null);
  return out;
}

/**
 * The changes that turn the tree `base` into the nested tree `tree`. Sort keys of the base are
 * kept for the longest run of each sibling list whose base order still holds (a longest
 * increasing subsequence), so an insert or a move re-keys only the pages that moved, and a
 * page whose version, parent and key are unchanged is not listed.
 */
export function changesBetween(base: Map<string, TreeEntry>, tree: TreeNode[]): TreeChange[] {
  const out: TreeChange[] = [];
  const seen = new Set<string>();
  const visit = (list: TreeNode[], parent: string | null) => {
    // Candidates: pages already under this parent, with their base key; keep a longest increasing
    // run of the pages that are otherwise unchanged (a page whose version changed is written anyway,
    // so re-keying it costs nothing, while re-keying an unchanged neighbour would cost a write).
    const cand: number[] = [];
    const edited: number[] = [];
    list.forEach((n, i) => {
      const b = base.get(n.id);
      if (b && b.parent === parent) (b.v === n.v ? cand : edited).push(i);
    });
    const key = (i: number) => base.get(list[i]!.id)!.pos;
    const tails: number[] = [];
    const prev = new Map<number, number>();
    for (const i of cand) {
      let lo = 0;
      let hi = tails.length;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (key(tails[mid]!) < key(i)) lo = mid + 1;
        else hi = mid;
      }
      if (lo > 0) prev.set(i, tails[lo - 1]!);
      tails[lo] = i;
    }
    const kept = new Set<number>();
    for (let i: number | undefined = tails[tails.length - 1]; i !== undefined; i = prev.get(i)) kept.add(i);
    // An edited page keeps its key too when the key still fits between the kept keys around it.
    if (edited.length) {
      const nextKept: Array<string | null> = new Array(list.length + 1).fill(null);
      for (let i = list.length - 1; i >= 0; i--) nextKept[i] = kept.has(i) ? key(i) : nextKept[i + 1]!;
      const isEdited = new Set(edited);
      let last: string | null = null;
      for (let i = 0; i < list.length; i++) {
        if (kept.has(i)) last = key(i);
        else if (isEdited.has(i) && (last === null || last < key(i)) && (nextKept[i + 1] === null || key(i) < nextKept[i + 1]!)) {
          kept.add(i);
          last = key(i);
        }
      }
    }
    const pos: string[] = new Array(list.length);
    let lastKey: string | null = null;
    for (let i = 0; i < list.length; ) {
      if (kept.has(i)) {
        lastKey = pos[i] = key(i);
        i++;
        continue;
      }
      let j = i;
      while (j < list.length && !kept.has(j)) j++;
      const keys = generateNKeysBetween(lastKey, j < list.length ? key(j) : null, j - i);
      for (let k = i; k < j; k++) pos[k] = keys[k - i]!;
      i = j;
    }
    list.forEach((n, i) => {
      seen.add(n.id);
      const b = base.get(n.id);
      if (!b || b.v !== n.v || b.parent !== parent || b.pos !== pos[i]) out.push({ pageId: n.id, entry: { v: n.v, parent, pos: pos[i]! } });
      visit(n.pages, n.id);
    });
  };
  visit(tree, null);
  for (const id of base.keys()) if (!seen.has(id)) out.push({ pageId: id, entry: null });
  return out;
}

/**
 * The nested tree of `entries`, siblings by sort key (then page id). A page whose parent is
 * missing (or that sits on a cycle) is put at the root, after the others, so nothing a
 * revision holds is ever hidden.
 */
export function nodesFromEntries(entries: Map<string, TreeEntry>): TreeNode[] {
  const children = new Map<string | null, Array<{ pageId: string; pos: string }>>();
  for (const [pageId, e] of entries) {
    let l = children.get(e.parent);
    if (!l) children.set(e.parent, (l = []));
    l.push({ pageId, pos: e.pos });
  }
  for (const l of children.values()) l.sort(bySortKey);
  const seen = new Set<string>();
  const make = (pageId: string): TreeNode => {
    seen.add(pageId);
    const kids = (children.get(pageId) ?? []).filter((c) => !seen.has(c.pageId));
    return { id: pageId, v: entries.get(pageId)!.v, pages: kids.map((c) => make(c.pageId)) };
  };
  const roots = (children.get(null) ?? []).map((c) => make(c.pageId));
  if (seen.size < entries.size) {
    const orphans = [...entries].filter(([id]) => !seen.has(id)).map(([pageId, e]) => ({ pageId, pos: e.pos }));
    for (const o of orphans.sort(bySortKey)) if (!seen.has(o.pageId)) roots.push(make(o.pageId));
  }
  return roots;
}

/** A sort key between two siblings' keys (null: the start or the end of the list). */
export function positionBetween(before: string | null, after: string | null): string {
  return generateKeyBetween(before, after);
}

/** An in-memory node source (tests, and building before writing). */
export class MemoryNodes implements NodeSource {
  readonly map = new Map<string, NodeContent>();
  loads = 0;
  read = 0;
  async load(hashes: string[]) {
    this.loads++;
    const out = new Map<string, NodeContent>();
    for (const h of hashes) {
      const n = this.map.get(h);
      if (n) {
        out.set(h, n);
        this.read++;
      }
    }
    return out;
  }
  add(write: TreeWrite) {
    for (const [h, n] of write.created) this.map.set(h, n.content);
    return write.root;
  }
}
