// Revision-level three-way merge: `base` is the common ancestor, `target` the side whose tree the
// result starts from, `source` the side whose changes are applied on top. Merging a change
// request: target = main (the space's current revision), source = the change request's head.
// Updating a change request from main: the other way round.
//
// Per page (keyed by the stable page id), over {content version, parent}:
//   - changed on one side only → that side (inserted, deleted, edited, moved);
//   - changed on both sides → identical changes are taken once; otherwise each metadata field
//     and the parent merge three-way, and the markdown merges line by line (`mergeText`); a clean
//     merge becomes a NEW page version; overlapping edits, delete vs change, or a page left
//     without its parent conflict.
// Tree order: each sibling list starts from the target's order; pages the source inserted,
// moved in or reordered are placed after their nearest preceding sibling in the source's order.
// The result is a plan (tree + page versions to write); nothing is written here.
import { isDeepStrictEqual } from 'node:util';
import type { Prisma } from '../generated/prisma/client.ts';
import { mergePageMaps, mergeText } from '../lib/merge.ts';
import type { LoadedRevision, StoredPageVersion as PageVersion, TreeNode } from './revisions.ts';
import { newId } from '../lib/ids.ts';

export type MergeConflict = { pageId: string | null; reason: string };

export type MergePlan =
  | {
      clean: true;
      tree: TreeNode[];
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

function slotsOf(loaded: LoadedRevision): Map<string, Slot> {
  const out = new Map<string, Slot>();
  const visit = (nodes: TreeNode[], parent: string | null) => {
    for (const n of nodes) {
      const version = loaded.versions.get(n.v);
      if (!version) throw new Error(`revision ${loaded.revision.id} points at a missing page version ${n.v}`);
      out.set(n.id, { version, parent });
      visit(n.pages, n.id);
    }
  };
  visit(loaded.tree, null);
  return out;
}

/** Child page ids per parent (null = root), in tree order. */
function childrenOf(tree: TreeNode[]): Map<string | null, string[]> {
  const out = new Map<string | null, string[]>();
  const visit = (nodes: TreeNode[], parent: string | null) => {
    out.set(
      parent,
      nodes.map((n) => n.id),
    );
    for (const n of nodes) visit(n.pages, n.id);
  };
  visit(tree, null);
  return out;
}

/** Indices (into `seq`) of one longest strictly increasing subsequence. */
function longestIncreasing(seq: number[]): Set<number> {
  const tails: number[] = []; // index into seq of the smallest tail of each length
  const prev = new Array<number>(seq.length).fill(-1);
  for (let i = 0; i < seq.length; i++) {
    let lo = 0;
    let hi = tails.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (seq[tails[mid]] < seq[i]) lo = mid + 1;
      else hi = mid;
    }
    if (lo > 0) prev[i] = tails[lo - 1];
    tails[lo] = i;
  }
  const keep = new Set<number>();
  for (let i = tails.length ? tails[tails.length - 1] : -1; i >= 0; i = prev[i]) keep.add(i);
  return keep;
}

/** Three-way choice of one value; `undefined` result with conflict = true when both changed it differently. */
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

/**
 * Plan the merge of `source` into `target` given their common ancestor `base`. Pure: reads the
 * loaded revisions only, and returns either the resulting tree with the page versions to create,
 * or the list of conflicts.
 */
export function planThreeWayMerge(base: LoadedRevision, target: LoadedRevision, source: LoadedRevision, opts: { spaceId: string; now?: Date }): MergePlan {
  const now = opts.now ?? new Date();
  // Nothing happened on one side: the other side wins wholesale, no new rows.
  if (source.revision.id === base.revision.id || target.revision.id === source.revision.id) return wholesale(target);
  if (target.revision.id === base.revision.id) return wholesale(source);

  const conflicts: MergeConflict[] = [];
  const newVersions: Prisma.PageVersionCreateManyInput[] = [];
  const conflictReasons = new Map<string, string>();

  const baseSlots = slotsOf(base);
  const targetSlots = slotsOf(target);
  const sourceSlots = slotsOf(source);

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
      let reason = conflictReasons.get(pageId);
      if (!reason) {
        const inBase = baseSlots.has(pageId);
        reason = inBase ? 'deleted on one side and changed on the other' : 'inserted differently on both sides';
      }
      conflicts.push({ pageId, reason });
    }
    return { clean: false, conflicts };
  }
  const result = merged.result;

  // A page whose parent disappeared on the other side.
  for (const [pageId, slot] of result) {
    if (slot.parent !== null && !result.has(slot.parent)) conflicts.push({ pageId, reason: 'its parent page was deleted on the other side' });
  }
  if (conflicts.length) return { clean: false, conflicts };

  // ---- tree order
  const targetChildren = childrenOf(target.tree);
  const sourceChildren = childrenOf(source.tree);
  const baseChildren = childrenOf(base.tree);
  const parents = new Set<string | null>([null, ...[...result.values()].map((s) => s.parent)]);
  const childLists = new Map<string | null, string[]>();
  for (const parent of parents) {
    const here = (id: string) => result.get(id)?.parent === parent;
    // Pages the source reordered among the siblings it shares with the base under this parent.
    const baseOrder = new Map((baseChildren.get(parent) ?? []).map((id, i) => [id, i]));
    const shared = (sourceChildren.get(parent) ?? []).filter((id) => baseOrder.has(id));
    const stable = longestIncreasing(shared.map((id) => baseOrder.get(id)!));
    const reordered = new Set(shared.filter((_, i) => !stable.has(i)));
    // ...unless the target reordered them too (then the target's order stands).
    const targetShared = (targetChildren.get(parent) ?? []).filter((id) => baseOrder.has(id));
    const targetStable = longestIncreasing(targetShared.map((id) => baseOrder.get(id)!));
    targetShared.forEach((id, i) => {
      if (!targetStable.has(i)) reordered.delete(id);
    });

    const list = (targetChildren.get(parent) ?? []).filter((id) => here(id) && !reordered.has(id));
    const placed = new Set(list);
    const fromSource = sourceChildren.get(parent) ?? [];
    fromSource.forEach((id, i) => {
      if (!here(id) || placed.has(id)) return;
      let at = 0;
      for (let j = i - 1; j >= 0; j--) {
        const k = list.indexOf(fromSource[j]);
        if (k >= 0) {
          at = k + 1;
          break;
        }
      }
      list.splice(at, 0, id);
      placed.add(id);
    });
    childLists.set(parent, list);
  }
  // Anything not placed yet (cannot happen in a consistent merge) goes to the end of its parent.
  for (const [id, slot] of result) {
    const list = childLists.get(slot.parent)!;
    if (!list.includes(id)) list.push(id);
  }

  // Build, detecting pages made unreachable by crossed moves (A into B on one side, B into A on the other).
  const reached = new Set<string>();
  const build = (parent: string | null): TreeNode[] =>
    (childLists.get(parent) ?? []).map((id) => {
      reached.add(id);
      return { id, v: result.get(id)!.version.id, pages: build(id) };
    });
  const tree = build(null);
  for (const id of result.keys()) if (!reached.has(id)) conflicts.push({ pageId: id, reason: 'moved into each other on both sides' });
  if (conflicts.length) return { clean: false, conflicts };

  // Sibling slugs stay unique: target pages keep theirs, pages coming from the source are renamed.
  const versionOf = (id: string) => result.get(id)!.version;
  const renameInto = (nodes: TreeNode[]) => {
    const fromTarget = (n: TreeNode) => targetSlots.get(n.id)?.version.id === n.v;
    const taken = new Set(nodes.filter(fromTarget).map((n) => versionOf(n.id).slug));
    for (const n of nodes) {
      if (!fromTarget(n)) {
        const v = versionOf(n.id);
        let slug = v.slug;
        if (taken.has(slug)) {
          for (let i = 2; ; i++) {
            if (!taken.has(`${v.slug}-${i}`)) {
              slug = `${v.slug}-${i}`;
              break;
            }
          }
          const pending = newVersions.find((r) => r.id === v.id);
          if (pending) pending.slug = slug;
          else {
            const row = versionRow(v, { id: newId('PageVersion'), slug } as Partial<PageVersion>, opts.spaceId);
            newVersions.push(row);
            n.v = row.id!;
          }
        }
        taken.add(slug);
      }
      renameInto(n.pages);
    }
  };
  renameInto(tree);

  // ---- files, variables, reusable content
  const baseFiles = new Set(base.revision.fileIds);
  const sourceFiles = new Set(source.revision.fileIds);
  const removedBySource = new Set([...baseFiles].filter((f) => !sourceFiles.has(f)));
  const fileIds = [...target.revision.fileIds.filter((f) => !removedBySource.has(f))];
  for (const f of source.revision.fileIds) if (!baseFiles.has(f) && !fileIds.includes(f)) fileIds.push(f);

  const vo = (base.revision.variables ?? {}) as Record<string, unknown>;
  const vm = (target.revision.variables ?? {}) as Record<string, unknown>;
  const vb = (source.revision.variables ?? {}) as Record<string, unknown>;
  const variables: Record<string, unknown> = {};
  for (const key of new Set([...Object.keys(vo), ...Object.keys(vm), ...Object.keys(vb)])) {
    const r = pick(vo[key], vm[key], vb[key]);
    if (!r.ok) conflicts.push({ pageId: null, reason: `variable "${key}" changed differently on both sides` });
    else if (r.value !== undefined) variables[key] = r.value;
  }
  const rc = pick(base.revision.reusableContents, target.revision.reusableContents, source.revision.reusableContents);
  if (!rc.ok) conflicts.push({ pageId: null, reason: 'reusable content changed on both sides' });
  if (conflicts.length || !rc.ok) return { clean: false, conflicts };

  return { clean: true, tree, newVersions, fileIds, variables: variables as Prisma.InputJsonValue, reusableContents: rc.value as Prisma.InputJsonValue };
}

function wholesale(side: LoadedRevision): MergePlan {
  const clone = (nodes: TreeNode[]): TreeNode[] => nodes.map((n) => ({ id: n.id, v: n.v, pages: clone(n.pages) }));
  return {
    clean: true,
    tree: clone(side.tree),
    newVersions: [],
    fileIds: [...side.revision.fileIds],
    variables: side.revision.variables as Prisma.InputJsonValue,
    reusableContents: side.revision.reusableContents as Prisma.InputJsonValue,
  };
}
