// How the site structure is planned and read (used by site-structure.ts): a group's sections are
// the site's own section rows, so each section, site space and space is loaded once; and the
// reading-order sort key behind the keyset cursors of the ordered structure lists.
import type { SiteSection, SiteSectionGroup } from '../generated/prisma/client.ts';
import { getDatamodel } from '../generated/pothos-prisma-types.ts';
import { isVisibleTo, type StructureSnapshot } from '../domain/site-order.ts';
import type { KeysetPage } from './cursors.ts';
import { POS, tag, viewOf, type View } from './sites.ts';

// ------------------------------------------------------------------ a group's sections, loaded once

/**
 * In `Site.structure`, a group's sections are the site's own section rows (`site.sections` loads
 * every section, grouped or not), so each section, its site spaces and their spaces are loaded
 * once. The structure's groups are copies carrying their sections under this key; a group row
 * from anywhere else resolves `sections` from its own relation as before.
 */
const GROUP_SECTIONS = Symbol('docgraph.groupSections');
export const groupSections = (g: object): SiteSection[] | undefined => (g as { [GROUP_SECTIONS]?: SiteSection[] })[GROUP_SECTIONS];

export function withGroupSections<G extends SiteSectionGroup>(groups: G[], sections: SiteSection[]): G[] {
  const view = groups.length ? viewOf(groups[0]) : undefined;
  const copies = groups.map((g) => {
    const copy = { ...g };
    Object.defineProperty(copy, GROUP_SECTIONS, { value: sections.filter((s) => s.groupId === g.id), enumerable: false });
    return copy;
  });
  return tag(copies, view);
}

export type Query = { select?: Record<string, unknown>; include?: Record<string, unknown>; [arg: string]: unknown };

/**
 * The planned selection of the groups' `sections`, taken out of the group query (the group keeps
 * only the section ids, which nothing reads) to be merged into the site's `sections`.
 */
export function takeGroupSections(groups: Query): [Query, Query | undefined] {
  const mode = groups.select ? 'select' : groups.include ? 'include' : undefined;
  const planned = mode && groups[mode]!.sections;
  if (!mode || !planned || typeof planned !== 'object') return [groups, undefined];
  return [{ ...groups, [mode]: { ...groups[mode], sections: { orderBy: POS, select: { id: true } } } }, planned as Query];
}

/** Relation fields of each model (name → related model), from the datamodel the builder uses. */
let relations: Map<string, Map<string, string>> | undefined;
function relationsOf(model: string): Map<string, string> {
  relations ??= new Map(
    Object.entries(getDatamodel().datamodel.models).map(([name, m]) => [name, new Map(m.fields.filter((f) => f.kind === 'object').map((f) => [f.name, f.type]))]),
  );
  return relations.get(model) ?? new Map();
}

/**
 * Two planned selections of the same relation of `model` (same arguments: both come from the
 * same fields' select functions) as one: every column and relation either asks for. A side
 * without `select` already loads every column, so the union is in include mode then (and keeps
 * only relations); a relation given as `true` is the related row with every column.
 */
export function mergeQueries(model: string, a: Query, b: Query | undefined): Query {
  if (!b) return a;
  const rel = relationsOf(model);
  // A relation query without `select` loads every column (with `include`, or with neither).
  const include = !a.select || !b.select;
  const fields: Record<string, unknown> = {};
  for (const side of [a.select ?? a.include ?? {}, b.select ?? b.include ?? {}]) {
    for (const [key, value] of Object.entries(side)) {
      const target = rel.get(key);
      if (!target) {
        // A column (or `_count`, planned by one field only): under include mode every column is loaded.
        if (key === '_count' || !include) fields[key] ??= value;
        continue;
      }
      const prev = fields[key];
      if (prev === undefined) fields[key] = value;
      else if (prev === true && value === true) fields[key] = true;
      else fields[key] = mergeQueries(target, prev === true ? { include: {} } : (prev as Query), value === true ? { include: {} } : (value as Query));
    }
  }
  const { select: _s, include: _i, ...args } = { ...b, ...a };
  return include ? { ...args, include: fields } : { ...args, select: fields };
}

/** With a visitor, a group shows when at least one of its sections does. */
export function visibleGroups<G extends SiteSectionGroup>(groups: G[], sections: Array<Pick<SiteSection, 'groupId' | 'condition'>>, view: View | undefined): G[] {
  if (!view?.claims) return tag(groups, view);
  const shown = new Set(sections.filter((s) => s.groupId && isVisibleTo(s.condition, view.claims)).map((s) => s.groupId));
  return tag(
    groups.filter((g) => shown.has(g.id)),
    view,
  );
}


// ------------------------------------------------------------------ reading order

/**
 * Reading order as a sort key: each level's (position, createdAt, id), outermost first, padded to
 * one width, so a cursor still finds its place after the item it names is moved or deleted.
 */
type Row = { id: string; position: number; createdAt: Date };
const PAD = [-1, 0, ''];
export const levelKey = (r: Row | undefined) => (r ? [r.position, r.createdAt.getTime(), r.id] : PAD);
const READING_ORDER = Array.from({ length: 10 }, (_, i) => [`k${i}`, 'asc'] as const);

export function sectionKey(snap: StructureSnapshot, id: string): unknown[] {
  const s = snap.sections.get(id)!;
  const group = s.groupId ? snap.groups.get(s.groupId) : undefined;
  return group ? [...levelKey(group), ...levelKey(s)] : [...levelKey(s), ...PAD];
}
export function siteSpaceKey(snap: StructureSnapshot, id: string): unknown[] {
  const ss = snap.siteSpaces.get(id)!;
  if (!ss.sectionId) return [0, ...levelKey(ss), ...PAD, ...PAD];
  return [1, ...sectionKey(snap, ss.sectionId), ...levelKey(ss)];
}
const padTo10 = (k: unknown[]) => [...k, ...Array(10 - k.length).fill('')];

/** The page of `ids` (keyed by `keyOf`), then one `findMany` with the planned selection for its rows. */
export async function findManyInOrder<T extends { id: string }>(findMany: (args: object) => Promise<T[]>, page: KeysetPage, ids: string[], keyOf: (id: string) => unknown[]): Promise<T[]> {
  const slice = page.array(ids, READING_ORDER, (id) => padTo10(keyOf(id)));
  if (slice.length === 0) return [];
  const { select, include } = page.selection as { select?: Record<string, unknown>; include?: unknown };
  const rows = await findMany({ ...(select ? { select: { ...select, id: true } } : {}), ...(include ? { include } : {}), where: { id: { in: slice } } });
  const byId = new Map(rows.map((r) => [r.id, r]));
  const keys = new Map(slice.map((id) => [id, padTo10(keyOf(id))]));
  page.keyOf((row: T) => keys.get(row.id)!);
  return slice.map((id) => byId.get(id)).filter((r): r is T => !!r);
}
