// Three-way merges for content: `base` is the common ancestor, `ours`/`main` and `theirs`/`branch`
// the two edited versions (e.g. a change request merged into the main revision).
import { diff3Merge } from 'node-diff3';

export type TextMergeResult = { clean: true; text: string } | { clean: false; conflicts: number };

/** Line-based three-way merge; the same edit made on both sides is not a conflict. */
export function mergeText(base: string, ours: string, theirs: string): TextMergeResult {
  if (ours === theirs) return { clean: true, text: ours };
  if (ours === base) return { clean: true, text: theirs };
  if (theirs === base) return { clean: true, text: ours };
  // Split ourselves: given strings, node-diff3 would split on every whitespace, not on lines.
  const regions = diff3Merge(ours.split('\n'), base.split('\n'), theirs.split('\n'), { excludeFalseConflicts: true });
  const lines: string[] = [];
  let conflicts = 0;
  for (const region of regions) {
    if (region.ok) lines.push(...region.ok);
    else if (region.conflict) conflicts++;
  }
  return conflicts > 0 ? { clean: false, conflicts } : { clean: true, text: lines.join('\n') };
}

export interface MergeMapOptions<T> {
  equals(a: T, b: T): boolean;
  /** Merge a value modified on both sides (called only when both sides still have it). */
  mergeValue(base: T, main: T, branch: T): { clean: true; value: T } | { clean: false };
}

export type MapMergeResult<T> = { clean: true; result: Map<string, T> } | { clean: false; conflicts: string[] };

/**
 * Three-way merge of keyed values (e.g. pages by id). Per key: a change on one side only wins
 * (insertions and deletions included); the same change on both sides is taken once; delete on one
 * side vs modify on the other, or different values inserted on both sides, conflict; values
 * modified on both sides go through `mergeValue`.
 */
export function mergePageMaps<T>(
  base: Map<string, T>,
  main: Map<string, T>,
  branch: Map<string, T>,
  opts: MergeMapOptions<T>,
): MapMergeResult<T> {
  // Absent (deleted / not yet created) is `undefined`; `has` keeps values that are themselves undefined.
  type Slot = { present: true; value: T } | { present: false };
  const slot = (map: Map<string, T>, key: string): Slot => (map.has(key) ? { present: true, value: map.get(key) as T } : { present: false });
  const same = (a: Slot, b: Slot) => (a.present && b.present ? opts.equals(a.value, b.value) : a.present === b.present);

  const result = new Map<string, T>();
  const conflicts: string[] = [];
  const keys = new Set([...base.keys(), ...main.keys(), ...branch.keys()]);
  for (const key of keys) {
    const o = slot(base, key);
    const m = slot(main, key);
    const b = slot(branch, key);
    let merged: Slot;
    if (same(o, b)) merged = m; // unchanged on the branch (or on neither side)
    else if (same(o, m)) merged = b; // changed on the branch only
    else if (same(m, b)) merged = m; // same change on both sides
    else if (!o.present || !m.present || !b.present) {
      conflicts.push(key); // delete vs modify, or two different insertions
      continue;
    } else {
      const r = opts.mergeValue(o.value, m.value, b.value);
      if (!r.clean) {
        conflicts.push(key);
        continue;
      }
      merged = { present: true, value: r.value };
    }
    if (merged.present) result.set(key, merged.value);
  }
  return conflicts.length > 0 ? { clean: false, conflicts } : { clean: true, result };
}
