// Revision-level three-way merge: `base` is the common ancestor, `target` the side whose tree the
// result starts from, `source` the side whose changes are applied on top. Merging a change
// request: target = main (the space's current revision), source = the change request's head.
// Updating a change request from main: the other way round.
//
// It costs what changed, not the space: the pages compared are those whose tree entry (version,
// parent or sort key) differs from the base on either side (two diffs of the stored trees, which
// skip every shared subtree), and only their versions are loaded. A page changed on neither side
// is the same in all three revisions and stays as the target has it.
//
// Per page (keyed by the stable page id), over {content version, parent}:
//   - changed on one side only → that side (inserted, deleted, edited, moved);
//   - changed on both sides → identical changes are taken once; otherwise each metadata field
//     and the parent merge three-way, and the markdown merges line by line (`mergeText`); a clean
//     merge becomes a NEW page version; overlapping edits, delete vs change, or a page left
//     without its parent conflict.
// Sibling order lives in each page's sort key (`pos`): a page takes the key of the side whose
// parent it takes; when both sides keep the same parent and both changed the key, the target's
// stands. Keys two sides made independently can be equal: the later pages (by id) get new keys
// just after, so the order is the order of (key, page id) either way.
// Sibling slugs stay unique: where a page from the source lands with a new slug or parent, the
// pages from the source under that parent are renamed when a sibling from the target has the slug.
// The result is a plan (tree changes against the target + page versions to write); nothing is
// written here.
import { isDeepStrictEqual } from 'node:util';
import { generateNKeysBetween } from 'fractional-indexing';
import type { Prisma, Revision } from '../generated/prisma/client.ts';
import type { Tx } from '../db/client.ts';
import { mergePageMaps, mergeText } from '../lib/merge.ts';
import type { LoadedRevision, StoredPageVersion as PageVersion, TreeNode } from './revisions.ts';
import { newId } from '../lib/ids.ts';
import { childPages, diffTrees, lookupPages, type TreeChange, type TreeDiff, type TreeEntry } from './revision-tree.ts';
import {
  buildTree,
  changesBetween,
  diffEntries,
  entriesFromNodes,
  lookupEntries,
  MemoryNodes,
  nodesFromEntries,
  readChildren,
  readEntries,
  updateTree,
} from '../lib/page-trie.ts';

export type MergeConflict = { pageId: string | null; reason: string };

/** What a merge reads of a revision (not its legacy JSON tree). */
export type MergeRevision = Pick<Revision, 'id' | 'treeRoot' | 'fileIds' | 'variables' | 'reusableContents'>;

/** Where the planner reads trees and page versions (the database in a transaction, or memory). */
export interface MergeReader {
  diff(a: string | null, b: string | null): Promise<TreeDiff[]>;
  lookup(root: string | null, pageIds: string[]): Promise<Map<string, TreeEntry>>;
  children(root: string | null, parent: string | null): Promise<Array<{ pageId: string; pos: string }>>;
  /** Page versions by id, with their markdown. */
  versions(ids: string[]): Promise<Map<string, PageVersion>>;
  /** Version id → slug only. */
  slugs(ids: string[]): Promise<Map<string, string>>;
}

export type MergePlan =
  | {
      clean: true;
      /** The result as changes to the target's tree (writeTree(target.treeRoot, changes)). */
      changes: TreeChange[];
      /** Page versions the merge created (merged content, renamed slugs); to be written first. */
      newVersions: Prisma.PageVersionCreateManyInput[];
      fileIds: string[];
      variables: Prisma.InputJsonValue;
      reusableContents: Prisma.InputJsonValue;
    }
  | { clean: false; conflicts: MergeConflict[] };

type Slot = { version: PageVersion; parent: string | null };

/** Page fields a merge compares and merges, besides the markdown. */
const META_FIELDS = ['kind', 'title', 'slug', 'emoji', 'icon', 'description', 'href', 'hidden', 'noIndex', 'noRobotsIndex', 'condition', 'layout'] as const;

function sameValue(a: unknown, b: unknown) {
  return a === b || isDeepStrictEqual(a ?? null, b ?? null);
}

/** Two versions carry the same content (the same row, or equal fields). */
export function sameContent(a: PageVersion, b: PageVersion) {
  return a.id === b.id || (a.markdown === b.markdown && META_FIELDS.every((f) => sameValue(a[f], b[f])));
}

/** Three-way choice of one value; not ok when both sides changed it differently. */
function pick<T>(o: T, m: T, b: T): { ok: true; value: T } | { ok: false } {
  if (sameValue(o, b)) return { ok: true, value: m };
  if (sameValue(o, m)) return { ok: true, value: b };
  if (sameValue(m, b)) return { ok: true, value: m };
  return { ok: false };
}

function versionRow(v: PageVersion, overrides: Partial<PageVersion>, spaceId: string): Prisma.PageVersionCreateManyInput {
  const merged = { ...v, ...overrides };
  return {
    id: merged.id,
    pageId: merged.pageId,
    spaceId,
    kind: merged.kind,
    title: merged.title,
    slug: merged.slug,
    emoji: merged.emoji,
    icon: merged.icon,
    description: merged.description,
    markdown: merged.markdown,
    href: merged.href,
    hidden: merged.hidden,
    noIndex: merged.noIndex,
    noRobotsIndex: merged.noRobotsIndex,
    condition: merged.condition,
    layout: (merged.layout ?? undefined) as Prisma.InputJsonValue | undefined,
    pageCreatedAt: merged.pageCreatedAt,
  };
}

const bySortKey = (a: { pageId: string; pos: string }, b: { pageId: string; pos: string }) =>
  a.pos < b.pos ? -1 : a.pos > b.pos ? 1 : a.pageId < b.pageId ? -1 : a.pageId > b.pageId ? 1 : 0;

const sameEntry = (a: TreeEntry | null | undefined, b: TreeEntry | null | undefined) => (a && b ? a.v === b.v && a.parent === b.parent && a.pos === b.pos : !a && !b);

/** One page's entry in the base, the target and the source (null: absent there). */
type Three = { o: TreeEntry | null; m: TreeEntry | null; b: TreeEntry | null };

/** A page of the result: its version, parent and sort key. */
type Placed = Slot & { pos: string };

/**
 * Plan the merge of `source` into `target` given their common ancestor `base`. Reads, through
 * `reader`, the pages changed on either side and their versions (plus, only when pages move or
 * get new slugs, the parents they land under); writes nothing.
 */
export async function planThreeWayMerge(reader: MergeReader, base: MergeRevision, target: MergeRevision, source: MergeRevision, opts: { spaceId: string; now?: Date }): Promise<MergePlan> {
  const now = opts.now ?? new Date();
  // Nothing happened on one side: the other side wins wholesale, no new rows.
  if (source.id === base.id || target.id === source.id) return wholesale(target, []);
  if (target.id === base.id) {
    const d = await reader.diff(target.treeRoot, source.treeRoot);
    return wholesale(
      source,
      d.map((x) => ({ pageId: x.pageId, entry: x.after })),
    );
  }

  // ---- the pages changed on either side, and their versions
  const pages = new Map<string, Three>();
  for (const d of await reader.diff(base.treeRoot, target.treeRoot)) pages.set(d.pageId, { o: d.before, m: d.after, b: d.before });
  for (const d of await reader.diff(base.treeRoot, source.treeRoot)) {
    const p = pages.get(d.pageId);
    if (p) p.b = d.after;
    else pages.set(d.pageId, { o: d.before, m: d.before, b: d.after });
  }
  const versionIds = new Set<string>();
  for (const p of pages.values()) for (const e of [p.o, p.m, p.b]) if (e) versionIds.add(e.v);
  const versions = await reader.versions([...versionIds]);
  const slotsOf = (side: 'o' | 'm' | 'b') => {
    const out = new Map<string, Slot>();
    for (const [pageId, p] of pages) {
      const e = p[side];
      if (!e) continue;
      const version = versions.get(e.v);
      if (!version) throw new Error(`a revision points at a missing page version ${e.v}`);
      out.set(pageId, { version, parent: e.parent });
    }
    return out;
  };
  const baseSlots = slotsOf('o');
  const targetSlots = slotsOf('m');
  const sourceSlots = slotsOf('b');

  // ---- per page, over {version, parent}
  const conflicts: MergeConflict[] = [];
  const newVersions: Prisma.PageVersionCreateManyInput[] = [];
  const conflictReasons = new Map<string, string>();
  const merged = mergePageMaps<Slot>(baseSlots, targetSlots, sourceSlots, {
    equals: (a, b) => a.parent === b.parent && sameContent(a.version, b.version),
    mergeValue: (o, m, b) => {
      const pageId = o.version.pageId;
      const parent = pick(o.parent, m.parent, b.parent);
      if (!parent.ok) {
        conflictReasons.set(pageId, 'moved to different parents on both sides');
        return { clean: false };
      }
      let version: PageVersion;
      if (sameContent(o.version, b.version) || sameContent(m.version, b.version)) version = m.version;
      else if (sameContent(o.version, m.version)) version = b.version;
      else {
        const overrides: Record<string, unknown> = {};
        for (const f of META_FIELDS) {
          const r = pick(o.version[f], m.version[f], b.version[f]);
          if (!r.ok) {
            conflictReasons.set(pageId, `"${f}" changed differently on both sides`);
            return { clean: false };
          }
          overrides[f] = r.value;
        }
        const text = mergeText(o.version.markdown, m.version.markdown, b.version.markdown);
        if (!text.clean) {
          conflictReasons.set(pageId, `overlapping edits of the page content (${text.conflicts} conflicting region${text.conflicts === 1 ? '' : 's'})`);
          return { clean: false };
        }
        const row = versionRow(m.version, { ...overrides, markdown: text.text, id: newId('PageVersion'), pageCreatedAt: o.version.pageCreatedAt } as Partial<PageVersion>, opts.spaceId);
        newVersions.push(row);
        version = { ...(row as unknown as PageVersion), createdAt: now };
      }
      return { clean: true, value: { version, parent: parent.value } };
    },
  });
  if (!merged.clean) {
    for (const pageId of merged.conflicts) {
      const reason = conflictReasons.get(pageId) ?? (baseSlots.has(pageId) ? 'deleted on one side and changed on the other' : 'inserted differently on both sides');
      conflicts.push({ pageId, reason });
    }
    return { clean: false, conflicts };
  }

  // ---- sort keys: those of the side whose parent the page takes
  const result = new Map<string, Placed>();
  for (const [pageId, slot] of merged.result) {
    const { o, m, b } = pages.get(pageId)!;
    let pos: string;
    if (m && b && m.parent === slot.parent && b.parent === slot.parent) {
      const r = pick(o && o.parent === slot.parent ? o.pos : undefined, m.pos, b.pos);
      pos = r.ok ? r.value! : m.pos;
    } else if (b && b.parent === slot.parent && !(m && m.parent === slot.parent)) pos = b.pos;
    else pos = (m ?? b)!.pos;
    result.set(pageId, { ...slot, pos });
  }

  // ---- a page whose parent disappeared on the other side
  for (const [pageId, slot] of result) {
    if (slot.parent !== null && pages.has(slot.parent) && !result.has(slot.parent)) conflicts.push({ pageId, reason: 'its parent page was deleted on the other side' });
  }
  if (conflicts.length) return { clean: false, conflicts };

  // ---- crossed moves (A into B on one side, B into A on the other): walk up from each page
  // that has a parent the target did not give it; unchanged pages' parents are the target's.
  const parentOf = new Map<string, string | null>([...result].map(([id, s]) => [id, s.parent]));
  const walks = [...result]
    .filter(([id, s]) => s.parent !== null && pages.get(id)!.m?.parent !== s.parent)
    .map(([id, s]) => ({ path: [id], cur: s.parent as string | null }));
  const cycle = new Set<string>();
  for (let step = 0; walks.some((w) => w.cur !== null) && step < 10_000; step++) {
    const unknown = [...new Set(walks.filter((w) => w.cur !== null && !parentOf.has(w.cur)).map((w) => w.cur!))];
    if (unknown.length) {
      const found = await reader.lookup(target.treeRoot, unknown);
      for (const id of unknown) parentOf.set(id, found.get(id)?.parent ?? null);
    }
    for (const w of walks) {
      if (w.cur === null) continue;
      const at = w.path.indexOf(w.cur);
      if (at >= 0) {
        for (const id of w.path.slice(at)) cycle.add(id);
        w.cur = null;
      } else {
        w.path.push(w.cur);
        w.cur = parentOf.get(w.cur) ?? null;
      }
    }
  }
  if (cycle.size) {
    // Everything under the cycle is unreachable from the root too.
    const lost = new Set(cycle);
    let frontier = [...cycle];
    while (frontier.length) {
      const next: string[] = [];
      for (const id of frontier) {
        const kids = (await reader.children(target.treeRoot, id)).map((c) => c.pageId).filter((k) => !pages.has(k));
        for (const [k, s] of result) if (s.parent === id) kids.push(k);
        for (const k of kids) if (!lost.has(k)) lost.add(k), next.push(k);
      }
      frontier = next;
    }
    for (const id of lost) conflicts.push({ pageId: id, reason: 'moved into each other on both sides' });
    return { clean: false, conflicts };
  }

  // ---- siblings of the result under `parent`, in order (read only for parents that need them)
  const siblingsCache = new Map<string | null, Array<{ pageId: string; pos: string }>>();
  const siblingsOf = async (parent: string | null) => {
    let list = siblingsCache.get(parent);
    if (!list) {
      list = (await reader.children(target.treeRoot, parent)).filter((c) => !pages.has(c.pageId));
      for (const [pageId, s] of result) if (s.parent === parent) list.push({ pageId, pos: s.pos });
      siblingsCache.set(parent, list.sort(bySortKey));
    }
    return list;
  };

  // ---- equal sort keys made independently on the two sides: the later pages get new keys
  const byKey = new Map<string, string[]>();
  for (const [pageId, s] of result) {
    const k = JSON.stringify([s.parent, s.pos]);
    byKey.set(k, [...(byKey.get(k) ?? []), pageId]);
  }
  for (const group of byKey.values()) {
    if (group.length < 2) continue;
    const { parent, pos } = result.get(group[0])!;
    const list = await siblingsOf(parent);
    const next = list.find((c) => c.pos > pos)?.pos ?? null;
    const later = group.sort().slice(1);
    const keys = generateNKeysBetween(pos, next, later.length);
    later.forEach((id, i) => {
      result.get(id)!.pos = keys[i]!;
      list.find((c) => c.pageId === id)!.pos = keys[i]!;
    });
    list.sort(bySortKey);
  }

  // ---- sibling slugs stay unique: target pages keep theirs, pages from the source are renamed
  const fromTarget = (pageId: string, s: Slot) => pages.get(pageId)!.m?.v === s.version.id;
  const landed = new Set<string | null>();
  const hasSource = new Set<string | null>();
  for (const [pageId, s] of result) {
    const m = pages.get(pageId)!.m;
    if (!m || m.parent !== s.parent || versions.get(m.v)!.slug !== s.version.slug) landed.add(s.parent);
    if (!fromTarget(pageId, s)) hasSource.add(s.parent);
  }
  for (const parent of [...landed].filter((p) => hasSource.has(p))) {
    const list = await siblingsOf(parent);
    const others = list.filter((c) => !result.has(c.pageId)).map((c) => c.pageId);
    const found = others.length ? await reader.lookup(target.treeRoot, others) : new Map<string, TreeEntry>();
    const slugs = others.length ? await reader.slugs([...found.values()].map((e) => e.v)) : new Map<string, string>();
    const slugOf = (pageId: string) => result.get(pageId)?.version.slug ?? slugs.get(found.get(pageId)?.v ?? '') ?? pageId;
    const isTarget = (pageId: string) => !result.has(pageId) || fromTarget(pageId, result.get(pageId)!);
    const taken = new Set(list.filter((c) => isTarget(c.pageId)).map((c) => slugOf(c.pageId)));
    for (const { pageId } of list) {
      if (isTarget(pageId)) continue;
      const placed = result.get(pageId)!;
      const v = placed.version;
      let slug = v.slug;
      if (taken.has(slug)) {
        for (let i = 2; ; i++) {
          if (!taken.has(`${v.slug}-${i}`)) {
            slug = `${v.slug}-${i}`;
            break;
          }
        }
        const pending = newVersions.find((r) => r.id === v.id);
        if (pending) {
          pending.slug = slug;
          placed.version = { ...v, slug };
        } else {
          const row = versionRow(v, { id: newId('PageVersion'), slug } as Partial<PageVersion>, opts.spaceId);
          newVersions.push(row);
          placed.version = { ...(row as unknown as PageVersion), createdAt: now };
        }
      }
      taken.add(slug);
    }
  }

  // ---- files, variables, reusable content
  const baseFiles = new Set(base.fileIds);
  const sourceFiles = new Set(source.fileIds);
  const removedBySource = new Set([...baseFiles].filter((f) => !sourceFiles.has(f)));
  const fileIds = [...target.fileIds.filter((f) => !removedBySource.has(f))];
  for (const f of source.fileIds) if (!baseFiles.has(f) && !fileIds.includes(f)) fileIds.push(f);

  const vo = (base.variables ?? {}) as Record<string, unknown>;
  const vm = (target.variables ?? {}) as Record<string, unknown>;
  const vb = (source.variables ?? {}) as Record<string, unknown>;
  const variables: Record<string, unknown> = {};
  for (const key of new Set([...Object.keys(vo), ...Object.keys(vm), ...Object.keys(vb)])) {
    const r = pick(vo[key], vm[key], vb[key]);
    if (!r.ok) conflicts.push({ pageId: null, reason: `variable "${key}" changed differently on both sides` });
    else if (r.value !== undefined) variables[key] = r.value;
  }
  const rc = pick(base.reusableContents, target.reusableContents, source.reusableContents);
  if (!rc.ok) conflicts.push({ pageId: null, reason: 'reusable content changed on both sides' });
  if (conflicts.length || !rc.ok) return { clean: false, conflicts };

  // ---- the result as changes to the target's tree
  const changes: TreeChange[] = [];
  for (const [pageId, p] of pages) {
    const r = result.get(pageId);
    const entry = r ? { v: r.version.id, parent: r.parent, pos: r.pos } : null;
    if (!sameEntry(p.m, entry)) changes.push({ pageId, entry });
  }
  return { clean: true, changes, newVersions, fileIds, variables: variables as Prisma.InputJsonValue, reusableContents: rc.value as Prisma.InputJsonValue };
}

function wholesale(side: MergeRevision, changes: TreeChange[]): MergePlan {
  return {
    clean: true,
    changes,
    newVersions: [],
    fileIds: [...side.fileIds],
    variables: side.variables as Prisma.InputJsonValue,
    reusableContents: side.reusableContents as Prisma.InputJsonValue,
  };
}

// ------------------------------------------------------------------ readers

/** Page versions read per statement (a merge of a large import reads them in chunks). */
const VERSIONS_PER_STATEMENT = 5000;

/** The planner's reads in a transaction: tree nodes (cached, see revision-tree.ts) and page versions by id. */
export function dbMergeReader(tx: Tx): MergeReader {
  return {
    diff: (a, b) => diffTrees(tx, a, b),
    lookup: (root, ids) => lookupPages(tx, root, ids),
    children: (root, parent) => childPages(tx, root, parent),
    versions: async (ids) => {
      const out = new Map<string, PageVersion>();
      for (let i = 0; i < ids.length; i += VERSIONS_PER_STATEMENT) {
        const rows = await tx.pageVersion.findMany({ where: { id: { in: ids.slice(i, i + VERSIONS_PER_STATEMENT) } }, omit: { document: true, links: true } });
        for (const r of rows) out.set(r.id, r as PageVersion);
      }
      return out;
    },
    slugs: async (ids) => {
      const out = new Map<string, string>();
      for (let i = 0; i < ids.length; i += VERSIONS_PER_STATEMENT) {
        const rows = await tx.pageVersion.findMany({ where: { id: { in: ids.slice(i, i + VERSIONS_PER_STATEMENT) } }, select: { id: true, slug: true } });
        for (const r of rows) out.set(r.id, r.slug);
      }
      return out;
    },
  };
}

/**
 * The planner on three nested trees in memory (tests): each side's tree is stored as the
 * application stores it (its changes against the base's tree), and the result is read back as a
 * nested tree.
 */
export async function planThreeWayMergeOfTrees(
  base: LoadedRevision,
  target: LoadedRevision,
  source: LoadedRevision,
  opts: { spaceId: string; now?: Date },
): Promise<({ clean: true; tree: TreeNode[] } & Omit<Extract<MergePlan, { clean: true }>, 'clean'>) | { clean: false; conflicts: MergeConflict[] }> {
  const mem = new MemoryNodes();
  const baseEntries = entriesFromNodes(base.tree);
  const baseRoot = mem.add(buildTree(baseEntries));
  // A page whose content a side did not change keeps the base's version (as an edit would).
  const keep = (side: LoadedRevision, nodes: TreeNode[]): TreeNode[] =>
    nodes.map((n) => {
      const was = baseEntries.get(n.id);
      const same = was && side.versions.get(n.v) && base.versions.get(was.v) && sameContent(side.versions.get(n.v)!, base.versions.get(was.v)!);
      return { id: n.id, v: same ? was.v : n.v, pages: keep(side, n.pages) };
    });
  const rootOf = async (side: LoadedRevision) => (side === base ? baseRoot : mem.add(await updateTree(mem, baseRoot, changesBetween(baseEntries, keep(side, side.tree)))));
  const targetRoot = await rootOf(target);
  const sourceRoot = await rootOf(source);
  const versions = new Map<string, PageVersion>([...base.versions, ...target.versions, ...source.versions]);
  const reader: MergeReader = {
    diff: (a, b) => diffEntries(mem, a, b),
    lookup: (root, ids) => lookupEntries(mem, root, ids),
    children: (root, parent) => readChildren(mem, root, parent),
    versions: async (ids) => new Map(ids.filter((id) => versions.has(id)).map((id) => [id, versions.get(id)!])),
    slugs: async (ids) => new Map(ids.filter((id) => versions.has(id)).map((id) => [id, versions.get(id)!.slug])),
  };
  const rev = (side: LoadedRevision, treeRoot: string): MergeRevision => ({ ...side.revision, treeRoot });
  const plan = await planThreeWayMerge(reader, rev(base, baseRoot), rev(target, targetRoot), rev(source, sourceRoot), opts);
  if (!plan.clean) return plan;
  const root = mem.add(await updateTree(mem, targetRoot, plan.changes));
  return { ...plan, tree: nodesFromEntries(await readEntries(mem, root)) };
}
