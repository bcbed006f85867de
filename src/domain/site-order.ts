// The one ordering model of a site's structure (the writes that use it are in `site-structure.ts`,
// and `sites.ts` for a site's defaults).
//
// A site's structure is a small tree of containers:
//   - the root level, holding either sections and section groups (a site "with sections") or
//     site spaces (a site without sections);
//   - a section group, holding sections;
//   - a section, holding site spaces.
// Every item has a dense integer `position` (0..n-1) among the siblings of its container. Every
// structural write (create, delete, move, sort, group/ungroup) recomputes the affected containers'
// orders here and rewrites the positions that changed, inside the caller's transaction, after
// `lockSite` has serialized structural writes on that site (`structural` does both). The deprecated move operations and
// `PATCH …/structure/sort` share `planMove`, so they cannot disagree.
//
// The reading side lives here too: the order of the published structure and the evaluation of
// section / site-space conditions against a visitor's claims.
import { z } from 'zod';
import type { Tx } from '../db/client.ts';
import type { DomainContext } from './context.ts';
import { lockSite } from '../db/locks.ts';
import { transaction } from '../db/transaction.ts';
import { badRequest, conflict, fromDatabaseError, notFound } from '../lib/errors.ts';

/** The model's values (GraphQL); REST's `site-space` spelling is translated in rest/. */
export const STRUCTURE_ITEM_TYPES = ['site_space', 'site_section', 'site_section_group'] as const;
export type StructureItemType = (typeof STRUCTURE_ITEM_TYPES)[number];
export type ItemRef = { type: StructureItemType; id: string };

export const ItemPointer = z.strictObject({ type: z.enum(STRUCTURE_ITEM_TYPES), id: z.string().min(1).max(200) });
export const MovePosition = z.strictObject({ before: ItemPointer.optional(), after: ItemPointer.optional() });
export type MovePosition = z.infer<typeof MovePosition>;
/** Body of `PATCH ORG/sites/{siteId}/structure/sort`. */
export const SortSiteStructureInput = z.strictObject({ item: ItemPointer, position: MovePosition });

const TYPE_LABEL: Record<StructureItemType, string> = {
  site_space: 'Site space',
  site_section: 'Site section',
  site_section_group: 'Site section group',
};
const word = (type: StructureItemType) => TYPE_LABEL[type].toLowerCase();

// ------------------------------------------------------------------ snapshot

type SectionRow = { id: string; groupId: string | null; position: number; path: string; defaultSiteSpaceId: string | null; createdAt: Date; condition: string | null };
type GroupRow = { id: string; position: number; createdAt: Date };
type SiteSpaceRow = { id: string; sectionId: string | null; position: number; path: string; spaceId: string; createdAt: Date; condition: string | null };

/** Everything the ordering model needs about one site, loaded in four small statements. */
export type StructureSnapshot = {
  siteId: string;
  defaultSiteSectionId: string | null;
  defaultSiteSpaceId: string | null;
  sections: Map<string, SectionRow>;
  groups: Map<string, GroupRow>;
  siteSpaces: Map<string, SiteSpaceRow>;
};

export type Container = { kind: 'root' } | { kind: 'group'; id: string } | { kind: 'section'; id: string };
export const ROOT: Container = { kind: 'root' };

/**
 * Serialize structural writes on one site: every transaction that changes positions takes this
 * row lock first, so two concurrent moves cannot both compute positions from the same snapshot
 * (db/locks.ts, where the lock order lives).
 */
export { lockSite };

export async function loadSnapshot(tx: Tx, siteId: string): Promise<StructureSnapshot> {
  const [site, sections, groups, siteSpaces] = await Promise.all([
    tx.site.findUnique({ where: { id: siteId }, select: { defaultSiteSectionId: true, defaultSiteSpaceId: true } }),
    tx.siteSection.findMany({ where: { siteId }, select: { id: true, groupId: true, position: true, path: true, defaultSiteSpaceId: true, createdAt: true, condition: true } }),
    tx.siteSectionGroup.findMany({ where: { siteId }, select: { id: true, position: true, createdAt: true } }),
    tx.siteSpace.findMany({ where: { siteId }, select: { id: true, sectionId: true, position: true, path: true, spaceId: true, createdAt: true, condition: true } }),
  ]);
  if (!site) throw notFound('Site');
  return {
    siteId,
    defaultSiteSectionId: site.defaultSiteSectionId,
    defaultSiteSpaceId: site.defaultSiteSpaceId,
    sections: new Map(sections.map((s) => [s.id, s])),
    groups: new Map(groups.map((g) => [g.id, g])),
    siteSpaces: new Map(siteSpaces.map((s) => [s.id, s])),
  };
}

/** Run a structural write: one transaction, the site row locked, a fresh snapshot. */
export async function structural<T>(ctx: DomainContext, siteId: string, fn: (tx: Tx, snap: StructureSnapshot) => Promise<T>): Promise<T> {
  try {
    return await transaction(ctx.prisma, async (tx) => {
      if (!(await lockSite(tx, siteId))) throw notFound('Site');
      return fn(tx, await loadSnapshot(tx, siteId));
    });
  } catch (err) {
    throw fromDatabaseError(err) ?? err;
  }
}

export function sameContainer(a: Container, b: Container): boolean {
  return a.kind === b.kind && (a.kind === 'root' || a.id === (b as { id: string }).id);
}

export function containerOf(snap: StructureSnapshot, item: ItemRef): Container {
  switch (item.type) {
    case 'site_section_group':
      return ROOT;
    case 'site_section': {
      const s = snap.sections.get(item.id)!;
      return s.groupId ? { kind: 'group', id: s.groupId } : ROOT;
    }
    case 'site_space': {
      const s = snap.siteSpaces.get(item.id)!;
      return s.sectionId ? { kind: 'section', id: s.sectionId } : ROOT;
    }
  }
}

export function exists(snap: StructureSnapshot, item: ItemRef): boolean {
  if (item.type === 'site_section') return snap.sections.has(item.id);
  if (item.type === 'site_section_group') return snap.groups.has(item.id);
  return snap.siteSpaces.has(item.id);
}

/** Position, then creation time, then id: a total order even over rows written out of order. */
function byPosition(a: { position: number; createdAt: Date; id: string }, b: { position: number; createdAt: Date; id: string }) {
  return a.position - b.position || a.createdAt.getTime() - b.createdAt.getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

/** The items of a container in their current order. */
export function children(snap: StructureSnapshot, container: Container): ItemRef[] {
  type Entry = { ref: ItemRef; position: number; createdAt: Date; id: string };
  const entries: Entry[] = [];
  const push = (type: StructureItemType, row: { id: string; position: number; createdAt: Date }) =>
    entries.push({ ref: { type, id: row.id }, position: row.position, createdAt: row.createdAt, id: row.id });
  if (container.kind === 'root') {
    for (const s of snap.sections.values()) if (!s.groupId) push('site_section', s);
    for (const g of snap.groups.values()) push('site_section_group', g);
    for (const s of snap.siteSpaces.values()) if (!s.sectionId) push('site_space', s);
  } else if (container.kind === 'group') {
    for (const s of snap.sections.values()) if (s.groupId === container.id) push('site_section', s);
  } else {
    for (const s of snap.siteSpaces.values()) if (s.sectionId === container.id) push('site_space', s);
  }
  return entries.sort(byPosition).map((e) => e.ref);
}

/** Whether the site is organized in sections (any section or group) or as root-level site spaces. */
export function hasSections(snap: StructureSnapshot): boolean {
  return snap.sections.size > 0 || snap.groups.size > 0;
}

/** Every section in the order a reader meets them: root level, groups expanded in place. */
export function sectionsInOrder(snap: StructureSnapshot): string[] {
  const out: string[] = [];
  for (const ref of children(snap, ROOT)) {
    if (ref.type === 'site_section') out.push(ref.id);
    else if (ref.type === 'site_section_group') for (const s of children(snap, { kind: 'group', id: ref.id })) out.push(s.id);
  }
  return out;
}

/** Every site space in reading order: root level first, then section by section. */
export function siteSpacesInOrder(snap: StructureSnapshot): string[] {
  const out = children(snap, ROOT)
    .filter((r) => r.type === 'site_space')
    .map((r) => r.id);
  for (const sectionId of sectionsInOrder(snap)) for (const s of children(snap, { kind: 'section', id: sectionId })) out.push(s.id);
  return out;
}

const sameRef = (a: ItemRef, b: ItemRef) => a.type === b.type && a.id === b.id;

// ------------------------------------------------------------------ planning a move

export type MovePlan = {
  item: ItemRef;
  from: Container;
  to: Container;
  /** The new order of the target container (the item included). */
  toOrder: ItemRef[];
  /** The new order of the source container when the item leaves it. */
  fromOrder?: ItemRef[];
};

/**
 * Where an item goes. `position` omitted or empty: the end of its current container. An anchor
 * must be another item of the same site that the item can sit beside: a section beside a section
 * (root level or in a group) or, at the root level, beside a group; a group beside root-level items
 * only; a site space beside a site space (in any section, or at the root level). The item moves
 * into the anchor's container. Bad anchors are 400 naming `field`; a move that changes nothing is
 * 409.
 */
export function planMove(snap: StructureSnapshot, item: ItemRef, position: MovePosition | undefined, field = 'position'): MovePlan {
  if (!exists(snap, item)) throw notFound(TYPE_LABEL[item.type]);
  const from = containerOf(snap, item);
  const fromCurrent = children(snap, from);
  const before = position?.before;
  const after = position?.after;
  if (before && after) throw badRequest(field, 'give either before or after, not both');
  const anchor = before ?? after;
  const anchorField = before ? `${field}.before` : `${field}.after`;

  let to: Container = from;
  if (anchor) {
    if (!exists(snap, anchor)) throw badRequest(anchorField, `no ${word(anchor.type)} ${anchor.id} in this site`);
    if (sameRef(anchor, item)) throw badRequest(anchorField, 'an item cannot be placed relative to itself');
    to = containerOf(snap, anchor);
    switch (item.type) {
      case 'site_space':
        if (anchor.type !== 'site_space') throw badRequest(anchorField, 'a site space can only be placed beside another site space');
        break;
      case 'site_section':
        if (anchor.type === 'site_space') throw badRequest(anchorField, 'a section can only be placed beside a section or a section group');
        break;
      case 'site_section_group':
        if (anchor.type === 'site_space' || to.kind !== 'root') throw badRequest(anchorField, 'a section group can only be placed at the top level, beside a top-level section or another group');
        break;
    }
  }

  const target = (sameContainer(from, to) ? fromCurrent : children(snap, to)).filter((r) => !sameRef(r, item));
  let index = target.length;
  if (anchor) {
    const i = target.findIndex((r) => sameRef(r, anchor));
    index = before ? i : i + 1;
  }
  const toOrder = [...target.slice(0, index), item, ...target.slice(index)];
  if (sameContainer(from, to) && toOrder.every((r, i) => sameRef(r, fromCurrent[i]))) {
    throw conflict(`The ${word(item.type)} is already at this position`);
  }
  return {
    item,
    from,
    to,
    toOrder,
    fromOrder: sameContainer(from, to) ? undefined : fromCurrent.filter((r) => !sameRef(r, item)),
  };
}

/** `order` with `item` inserted at `index` (clamped), or appended. */
export function insertAt(order: ItemRef[], item: ItemRef, index?: number): ItemRef[] {
  const i = index === undefined ? order.length : Math.max(0, Math.min(index, order.length));
  return [...order.slice(0, i), item, ...order.slice(i)];
}

// ------------------------------------------------------------------ writing orders

/**
 * Give the items of `order` the positions 0..n-1 inside `container` (moving them into it when they
 * were elsewhere), writing only rows whose position or parent changes, with one statement per
 * table. Updates the snapshot to match.
 */
export async function writeOrder(tx: Tx, snap: StructureSnapshot, container: Container, order: ItemRef[]): Promise<void> {
  const sections: Array<{ id: string; position: number; groupId: string | null }> = [];
  const groups: Array<{ id: string; position: number }> = [];
  const siteSpaces: Array<{ id: string; position: number; sectionId: string | null }> = [];
  order.forEach((ref, position) => {
    if (ref.type === 'site_section') {
      if (container.kind === 'section') throw new Error('a section cannot be placed in a section');
      const groupId = container.kind === 'group' ? container.id : null;
      const row = snap.sections.get(ref.id);
      if (row && row.position === position && row.groupId === groupId) return;
      sections.push({ id: ref.id, position, groupId });
      if (row) Object.assign(row, { position, groupId });
    } else if (ref.type === 'site_section_group') {
      if (container.kind !== 'root') throw new Error('a group can only be placed at the root level');
      const row = snap.groups.get(ref.id);
      if (row && row.position === position) return;
      groups.push({ id: ref.id, position });
      if (row) row.position = position;
    } else {
      if (container.kind === 'group') throw new Error('a site space cannot be placed in a group');
      const sectionId = container.kind === 'section' ? container.id : null;
      const row = snap.siteSpaces.get(ref.id);
      if (row && row.position === position && row.sectionId === sectionId) return;
      siteSpaces.push({ id: ref.id, position, sectionId });
      if (row) Object.assign(row, { position, sectionId });
    }
  });
  if (sections.length) {
    await tx.$executeRaw`
      UPDATE "SiteSection" AS t SET "position" = v.position, "groupId" = v.group_id
      FROM unnest(${sections.map((s) => s.id)}::text[], ${sections.map((s) => s.position)}::int[], ${sections.map((s) => s.groupId)}::text[]) AS v(id, position, group_id)
      WHERE t."id" = v.id AND t."siteId" = ${snap.siteId}`;
  }
  if (groups.length) {
    await tx.$executeRaw`
      UPDATE "SiteSectionGroup" AS t SET "position" = v.position
      FROM unnest(${groups.map((g) => g.id)}::text[], ${groups.map((g) => g.position)}::int[]) AS v(id, position)
      WHERE t."id" = v.id AND t."siteId" = ${snap.siteId}`;
  }
  if (siteSpaces.length) {
    await tx.$executeRaw`
      UPDATE "SiteSpace" AS t SET "position" = v.position, "sectionId" = v.section_id
      FROM unnest(${siteSpaces.map((s) => s.id)}::text[], ${siteSpaces.map((s) => s.position)}::int[], ${siteSpaces.map((s) => s.sectionId)}::text[]) AS v(id, position, section_id)
      WHERE t."id" = v.id AND t."siteId" = ${snap.siteId}`;
  }
}

/** Close the gap an item leaves when it is deleted (or leaves its container). */
export async function compactAfterRemoval(tx: Tx, snap: StructureSnapshot, container: Container, removed: ItemRef): Promise<void> {
  await writeOrder(
    tx,
    snap,
    container,
    children(snap, container).filter((r) => !sameRef(r, removed)),
  );
}

// ------------------------------------------------------------------ reading: order and visibility

/** The root level of a published structure, merged from its three kinds of rows. */
export function rootItems<S extends { id: string; position: number; createdAt: Date }, G extends { id: string; position: number; createdAt: Date }, P extends { id: string; position: number; createdAt: Date }>(
  sections: S[],
  groups: G[],
  siteSpaces: P[],
): Array<{ type: 'site_section'; item: S } | { type: 'site_section_group'; item: G } | { type: 'site_space'; item: P }> {
  const all = [
    ...sections.map((item) => ({ type: 'site_section' as const, item })),
    ...groups.map((item) => ({ type: 'site_section_group' as const, item })),
    ...siteSpaces.map((item) => ({ type: 'site_space' as const, item })),
  ];
  return all.sort((a, b) => byPosition(a.item, b.item));
}

/**
 * All sections of a site in reading order, from the rows a reader loaded: root-level sections
 * and groups by position, each group's sections in place.
 */
export function orderSections<S extends { id: string; groupId: string | null; position: number; createdAt: Date }>(
  sections: S[],
  groups: Array<{ id: string; position: number; createdAt: Date }>,
): S[] {
  const byGroup = new Map<string, S[]>();
  for (const s of sections) if (s.groupId) byGroup.set(s.groupId, [...(byGroup.get(s.groupId) ?? []), s]);
  const knownGroups = new Set(groups.map((g) => g.id));
  const root = sections.filter((s) => !s.groupId || !knownGroups.has(s.groupId));
  const out: S[] = [];
  for (const entry of rootItems(root, groups, [])) {
    if (entry.type === 'site_section') out.push(entry.item);
    else if (entry.type === 'site_section_group') out.push(...(byGroup.get(entry.item.id) ?? []).sort(byPosition));
  }
  return out;
}

export type { VisitorClaims } from '../auth/audience.ts';

/**
 * Bounds on visitor claims: claims are part of the published cache's key and walked by
 * every condition, so a caller may not send megabytes of them. Serialized JSON size (UTF-16
 * units), properties and array items counted at every level, and nesting below `claims`.
 */
export const VISITOR_CLAIMS_LIMITS = { maxBytes: 8 * 1024, maxEntries: 64, maxDepth: 5 } as const;

/** Why these claims exceed VISITOR_CLAIMS_LIMITS, or null. Stops walking at the first excess. */
export function claimsExcess(claims: unknown): string | null {
  const { maxBytes, maxEntries, maxDepth } = VISITOR_CLAIMS_LIMITS;
  let bytes = 0;
  let entries = 0;
  const walk = (v: unknown, depth: number): string | null => {
    if (typeof v === 'string') bytes += v.length + 2;
    else if (v === null || typeof v !== 'object') bytes += String(v).length;
    else {
      if (depth > maxDepth) return `nested deeper than ${maxDepth} levels`;
      const items: Array<[string | null, unknown]> = Array.isArray(v) ? v.map((x) => [null, x]) : Object.entries(v);
      bytes += 2;
      for (const [key, item] of items) {
        entries += 1;
        if (entries > maxEntries) return `more than ${maxEntries} properties and items in all`;
        bytes += key == null ? 1 : key.length + 4;
        if (bytes > maxBytes) break;
        const deeper = walk(item, depth + 1);
        if (deeper) return deeper;
      }
    }
    return bytes > maxBytes ? `larger than ${maxBytes / 1024} KiB as JSON` : null;
  };
  return walk(claims, 1);
}

/** Visitor input of the GraphQL preview: `{ claims: {...} }`, read by `visitor.claims.x`. */
export const VisitorInput = z.strictObject({
  claims: z
    .record(z.string(), z.unknown())
    .superRefine((claims, ctx) => {
      const excess = claimsExcess(claims);
      if (excess) ctx.addIssue({ code: 'custom', message: `visitor claims may not be ${excess}` });
    })
    .optional(),
});

// The rule lives in lib/ so the access module (auth/) applies the same one to share keys.
export { isVisibleTo, siteSpaceVisibleTo } from '../lib/conditions.ts';
