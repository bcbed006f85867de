// The structure of a published site: sections, section groups, site spaces, the moves (the
// deprecated per-item moves and `structure/sort`) and reading in order. Positions go through the
// one ordering model of `site-order.ts`; the site itself, publishing and adaptive content live in
// `sites.ts`. Every write here needs the organization's `admin` role (`site:write`, through
// `requireSite`), runs in one transaction with the site row locked (`structural`), and keeps a
// site either all sections or all root-level site spaces, with valid defaults in every container.
import { z } from 'zod';
import type { DomainContext } from './context.ts';
import type { Tx } from '../db/client.ts';
import type { Site, SiteSection, SiteSectionGroup, SiteSpace } from '../generated/prisma/client.ts';
import { recordEvent, type EventInput } from '../events/log.ts';
import type { EventPayload, EventType } from '../events/catalogue.ts';
import { newId } from '../lib/ids.ts';
import { badRequest, conflict, notFound, parseInput } from '../lib/errors.ts';
import { parseCondition } from '../lib/conditions.ts';
import { slugify } from './revisions.ts';
import { Id, requireSite, requireSiteContent, uniquePath } from './sites.ts';
import {
  type Container,
  type ItemRef,
  type MovePosition,
  type StructureItemType,
  type StructureSnapshot,
  ROOT,
  children,
  containerOf,
  hasSections,
  insertAt,
  loadSnapshot,
  lockSite,
  planMove,
  sameContainer,
  sectionsInOrder,
  siteSpacesInOrder,
  structural,
  writeOrder,
  ItemPointer,
  SortSiteStructureInput,
} from './site-order.ts';

/** An event of a change to a site's structure (the site's id in the payload). */
const structureEvent = <K extends StructureEventType>(site: Site, type: K, objectId: string, payload?: Omit<EventPayload<K>, 'siteId'>) =>
  ({ type, organizationId: site.organizationId, objectId, payload: { siteId: site.id, ...payload } }) as unknown as EventInput<K>;
type StructureEventType = Extract<EventType, `site_section_${string}` | `site_space_${string}`>;
const MOVED = { site_section: 'site_section_moved', site_section_group: 'site_section_group_moved', site_space: 'site_space_moved' } as const;

// ------------------------------------------------------------------ values and inputs

/** A section's or site space's path: one URL segment. */
export const SitePath = z
  .string()
  .min(1)
  .max(100)
  .regex(/^[A-Za-z0-9][A-Za-z0-9._~-]*$/, 'one URL segment: letters, digits, ".", "_", "~", "-", starting with a letter or digit');
export const SectionTitle = z.string().min(2).max(128);
export const SectionDescription = z.string().max(256);
export const GroupTitle = z.string().min(1).max(100);
export const Icon = z.string().max(50);
export const Condition = z.string().min(1).max(1024);

export const AddSectionInput = z.strictObject({
  spaceId: Id,
  title: SectionTitle.nullable().optional(),
  icon: Icon.nullable().optional(),
});
export const UpdateSectionInput = z.strictObject({
  title: SectionTitle.optional(),
  path: SitePath.optional(),
  defaultSiteSpace: Id.optional(),
  condition: Condition.nullable().optional(),
  icon: Icon.nullable().optional(),
  description: SectionDescription.nullable().optional(),
});
export const AddGroupInput = z.strictObject({
  title: GroupTitle,
  icon: Icon.nullable().optional(),
  sections: z.array(Id).max(1000).optional(),
});
export const UpdateGroupInput = z.strictObject({ title: GroupTitle.optional(), icon: Icon.nullable().optional() });
export const AddSectionToGroupInput = z.strictObject({ sectionId: Id });
export const AddSiteSpaceInput = z.strictObject({ spaceId: Id, sectionId: Id.optional() });
export const UpdateSiteSpaceInput = z.strictObject({
  path: SitePath.optional(),
  condition: Condition.nullable().optional(),
  spaceId: Id.optional(),
});
export { SortSiteStructureInput, ItemPointer };

function checkCondition(field: string, condition: string | null | undefined) {
  if (condition == null) return;
  const parsed = parseCondition(condition);
  if (!parsed.ok) throw badRequest(field, `invalid condition: ${parsed.message}`);
}

const sectionPaths = (snap: StructureSnapshot, exceptId?: string) => new Set([...snap.sections.values()].filter((s) => s.id !== exceptId).map((s) => s.path));
const siteSpacesIn = (snap: StructureSnapshot, container: Container) =>
  [...snap.siteSpaces.values()].filter((s) => (container.kind === 'section' ? s.sectionId === container.id : s.sectionId === null));

// ------------------------------------------------------------------ sections

/**
 * Add a section showing `spaceId` (the section and its first site space), at the end of the top
 * level. The first section of a site that still shows site spaces at its root level first gathers
 * those into a section of their own (titled after the site), so a site is either all sections or
 * all root-level site spaces.
 */
export async function addSectionToSite(ctx: DomainContext, organizationId: string | undefined, siteId: string, raw: unknown): Promise<SiteSection> {
  const site = await requireSite(ctx, organizationId, siteId, 'site:write');
  const input = parseInput(AddSectionInput, raw);
  const space = await requireSiteContent(ctx, site.organizationId, input.spaceId, 'spaceId');
  return structural(ctx, siteId, async (tx, snap) => {
    const now = ctx.clock.now();
    const taken = sectionPaths(snap);
    let defaultSectionId = snap.defaultSiteSectionId && snap.sections.has(snap.defaultSiteSectionId) ? snap.defaultSiteSectionId : null;
    const rootSpaces = children(snap, ROOT).filter((r) => r.type === 'site_space');
    if (!hasSections(snap) && rootSpaces.length > 0) {
      const wrapperId = newId('SiteSection');
      const path = uniquePath(taken, slugify(site.title));
      taken.add(path);
      const defaultSiteSpaceId = snap.defaultSiteSpaceId && snap.siteSpaces.has(snap.defaultSiteSpaceId) ? snap.defaultSiteSpaceId : rootSpaces[0].id;
      await tx.siteSection.create({
        data: { id: wrapperId, siteId, title: site.title, path, position: 0, defaultSiteSpaceId, createdAt: now },
      });
      snap.sections.set(wrapperId, { id: wrapperId, groupId: null, position: 0, path, defaultSiteSpaceId, createdAt: now, condition: null });
      await writeOrder(tx, snap, { kind: 'section', id: wrapperId }, rootSpaces);
      await tx.site.update({ where: { id: siteId }, data: { defaultSiteSpaceId: null } });
      defaultSectionId = wrapperId;
    }
    const sectionId = newId('SiteSection');
    const siteSpaceId = newId('SiteSpace');
    const title = input.title ?? (space.title.trim().length >= 2 ? space.title.trim().slice(0, 128) : 'Untitled section');
    const path = uniquePath(taken, slugify(title));
    const position = children(snap, ROOT).length;
    const section = await tx.siteSection.create({
      data: { id: sectionId, siteId, title, icon: input.icon ?? null, path, position, defaultSiteSpaceId: siteSpaceId, createdAt: now },
    });
    await tx.siteSpace.create({
      data: { id: siteSpaceId, siteId, sectionId, spaceId: space.id, path: uniquePath(new Set(), slugify(space.title)), position: 0, createdAt: now },
    });
    if (defaultSectionId !== snap.defaultSiteSectionId || !defaultSectionId) {
      await tx.site.update({ where: { id: siteId }, data: { defaultSiteSectionId: defaultSectionId ?? sectionId } });
    }
    await recordEvent(tx, ctx, structureEvent(site, 'site_section_created', sectionId, { title, spaceId: space.id, siteSpaceId }));
    return section;
  });
}

async function requireSection(tx: Tx, snap: StructureSnapshot, sectionId: string): Promise<SiteSection> {
  if (!snap.sections.has(sectionId)) throw notFound('Site section');
  return tx.siteSection.findUniqueOrThrow({ where: { id: sectionId } });
}

export async function updateSiteSection(ctx: DomainContext, organizationId: string | undefined, siteId: string, sectionId: string, raw: unknown): Promise<SiteSection> {
  const site = await requireSite(ctx, organizationId, siteId, 'site:write');
  const input = parseInput(UpdateSectionInput, raw);
  checkCondition('condition', input.condition);
  return structural(ctx, siteId, async (tx, snap) => {
    await requireSection(tx, snap, sectionId);
    if (input.path !== undefined && sectionPaths(snap, sectionId).has(input.path)) {
      throw conflict(`path: "${input.path}" is already the path of another section of this site`);
    }
    if (input.defaultSiteSpace !== undefined && snap.siteSpaces.get(input.defaultSiteSpace)?.sectionId !== sectionId) {
      throw badRequest('defaultSiteSpace', 'not a site space of this section');
    }
    const { defaultSiteSpace, ...rest } = input;
    const updated = await tx.siteSection.update({
      where: { id: sectionId },
      data: { ...rest, ...(defaultSiteSpace !== undefined ? { defaultSiteSpaceId: defaultSiteSpace } : {}) },
    });
    await recordEvent(tx, ctx, structureEvent(site, 'site_section_updated', sectionId, { title: updated.title, fields: Object.keys(input) }));
    return updated;
  });
}

/** Idempotent. The section's site spaces go with it; the next section becomes the default. */
export async function deleteSiteSection(ctx: DomainContext, organizationId: string | undefined, siteId: string, sectionId: string): Promise<boolean> {
  const site = await requireSite(ctx, organizationId, siteId, 'site:write');
  return structural(ctx, siteId, async (tx, snap) => {
    if (!snap.sections.has(sectionId)) return false;
    const container = containerOf(snap, { type: 'site_section', id: sectionId });
    await tx.siteSection.delete({ where: { id: sectionId } });
    snap.sections.delete(sectionId);
    for (const [id, s] of snap.siteSpaces) if (s.sectionId === sectionId) snap.siteSpaces.delete(id);
    await writeOrder(tx, snap, container, children(snap, container));
    if (snap.defaultSiteSectionId === sectionId) {
      await tx.site.update({ where: { id: siteId }, data: { defaultSiteSectionId: sectionsInOrder(snap)[0] ?? null } });
    }
    await recordEvent(tx, ctx, structureEvent(site, 'site_section_deleted', sectionId));
    return true;
  });
}

// ------------------------------------------------------------------ section groups

export async function addSectionGroupToSite(ctx: DomainContext, organizationId: string | undefined, siteId: string, raw: unknown): Promise<SiteSectionGroup> {
  const site = await requireSite(ctx, organizationId, siteId, 'site:write');
  const input = parseInput(AddGroupInput, raw);
  return structural(ctx, siteId, async (tx, snap) => {
    const listed = input.sections ?? [];
    const seen = new Set<string>();
    listed.forEach((id, i) => {
      if (!snap.sections.has(id)) throw badRequest(`sections.${i}`, 'no such section in this site');
      if (seen.has(id)) throw badRequest(`sections.${i}`, 'listed twice');
      seen.add(id);
    });
    if (!hasSections(snap) && children(snap, ROOT).length > 0) {
      throw badRequest('sections', 'this site shows its spaces without sections; add a section before grouping');
    }
    const id = newId('SiteSectionGroup');
    const now = ctx.clock.now();
    const group = await tx.siteSectionGroup.create({ data: { id, siteId, title: input.title, icon: input.icon ?? null, position: 0, createdAt: now } });
    const rootBefore = children(snap, ROOT);
    const oldGroups = new Set(listed.map((s) => snap.sections.get(s)!.groupId).filter((g): g is string => g !== null));
    // The group takes the place of the first listed section that was at the top level, else the end.
    const remaining = rootBefore.filter((r) => !(r.type === 'site_section' && seen.has(r.id)));
    const firstAtRoot = rootBefore.findIndex((r) => r.type === 'site_section' && seen.has(r.id));
    const index = firstAtRoot < 0 ? remaining.length : rootBefore.slice(0, firstAtRoot).filter((r) => !(r.type === 'site_section' && seen.has(r.id))).length;
    snap.groups.set(id, { id, position: -1, createdAt: now });
    await writeOrder(tx, snap, { kind: 'group', id }, listed.map((s) => ({ type: 'site_section' as const, id: s })));
    await writeOrder(tx, snap, ROOT, insertAt(remaining, { type: 'site_section_group', id }, index));
    for (const g of oldGroups) await writeOrder(tx, snap, { kind: 'group', id: g }, children(snap, { kind: 'group', id: g }));
    await recordEvent(tx, ctx, structureEvent(site, 'site_section_group_created', id, { title: group.title, sections: listed }));
    return { ...group, position: snap.groups.get(id)!.position };
  });
}

async function requireGroup(tx: Tx, snap: StructureSnapshot, groupId: string): Promise<SiteSectionGroup> {
  if (!snap.groups.has(groupId)) throw notFound('Site section group');
  return tx.siteSectionGroup.findUniqueOrThrow({ where: { id: groupId } });
}

export async function updateSiteSectionGroup(ctx: DomainContext, organizationId: string | undefined, siteId: string, groupId: string, raw: unknown): Promise<SiteSectionGroup> {
  const site = await requireSite(ctx, organizationId, siteId, 'site:write');
  const input = parseInput(UpdateGroupInput, raw);
  return structural(ctx, siteId, async (tx, snap) => {
    await requireGroup(tx, snap, groupId);
    const updated = await tx.siteSectionGroup.update({ where: { id: groupId }, data: input });
    await recordEvent(tx, ctx, structureEvent(site, 'site_section_group_updated', groupId, { title: updated.title, fields: Object.keys(input) }));
    return updated;
  });
}

/** Idempotent. The group's sections return to the top level, in place of the group. */
export async function deleteSiteSectionGroup(ctx: DomainContext, organizationId: string | undefined, siteId: string, groupId: string): Promise<boolean> {
  const site = await requireSite(ctx, organizationId, siteId, 'site:write');
  return structural(ctx, siteId, async (tx, snap) => {
    if (!snap.groups.has(groupId)) return false;
    const members = children(snap, { kind: 'group', id: groupId });
    const root = children(snap, ROOT).flatMap((r) => (r.type === 'site_section_group' && r.id === groupId ? members : [r]));
    await writeOrder(tx, snap, ROOT, root);
    await tx.siteSectionGroup.delete({ where: { id: groupId } });
    await recordEvent(tx, ctx, structureEvent(site, 'site_section_group_deleted', groupId));
    return true;
  });
}

/** Put a section into a group (at its end). Idempotent when it is already there. */
export async function addSectionToGroup(ctx: DomainContext, organizationId: string | undefined, siteId: string, groupId: string, raw: unknown): Promise<SiteSectionGroup> {
  const site = await requireSite(ctx, organizationId, siteId, 'site:write');
  const input = parseInput(AddSectionToGroupInput, raw);
  return structural(ctx, siteId, async (tx, snap) => {
    const group = await requireGroup(tx, snap, groupId);
    const section = snap.sections.get(input.sectionId);
    if (!section) throw badRequest('sectionId', 'no such section in this site');
    if (section.groupId === groupId) return group;
    const item: ItemRef = { type: 'site_section', id: section.id };
    const from = containerOf(snap, item);
    const target: Container = { kind: 'group', id: groupId };
    await writeOrder(tx, snap, target, [...children(snap, target), item]);
    await writeOrder(tx, snap, from, children(snap, from));
    await recordEvent(tx, ctx, structureEvent(site, 'site_section_moved', section.id, { groupId, fromGroupId: section.groupId }));
    return group;
  });
}

/** Take a section out of a group; it goes to the top level right after the group. Idempotent. */
export async function removeSectionFromGroup(ctx: DomainContext, organizationId: string | undefined, siteId: string, groupId: string, sectionId: string): Promise<boolean> {
  const site = await requireSite(ctx, organizationId, siteId, 'site:write');
  return structural(ctx, siteId, async (tx, snap) => {
    await requireGroup(tx, snap, groupId);
    if (snap.sections.get(sectionId)?.groupId !== groupId) return false;
    const root = children(snap, ROOT);
    const at = root.findIndex((r) => r.type === 'site_section_group' && r.id === groupId) + 1;
    await writeOrder(tx, snap, ROOT, insertAt(root, { type: 'site_section', id: sectionId }, at));
    const group: Container = { kind: 'group', id: groupId };
    await writeOrder(tx, snap, group, children(snap, group));
    await recordEvent(tx, ctx, structureEvent(site, 'site_section_moved', sectionId, { groupId: null, fromGroupId: groupId }));
    return true;
  });
}

// ------------------------------------------------------------------ site spaces

/**
 * Show a space on the site: in `sectionId`, else in the default section, else at the root level
 * (a site without sections). The first site space of a container becomes its default.
 */
export async function addSpaceToSite(ctx: DomainContext, organizationId: string | undefined, siteId: string, raw: unknown): Promise<SiteSpace> {
  const site = await requireSite(ctx, organizationId, siteId, 'site:write');
  const input = parseInput(AddSiteSpaceInput, raw);
  const space = await requireSiteContent(ctx, site.organizationId, input.spaceId, 'spaceId');
  return structural(ctx, siteId, async (tx, snap) => {
    let container: Container = ROOT;
    if (input.sectionId !== undefined) {
      if (!snap.sections.has(input.sectionId)) throw badRequest('sectionId', 'no such section in this site');
      container = { kind: 'section', id: input.sectionId };
    } else if (hasSections(snap)) {
      const sectionId = snap.defaultSiteSectionId && snap.sections.has(snap.defaultSiteSectionId) ? snap.defaultSiteSectionId : sectionsInOrder(snap)[0];
      if (!sectionId) throw badRequest('sectionId', 'the site has section groups but no section to add the space to');
      container = { kind: 'section', id: sectionId };
    }
    const siblings = siteSpacesIn(snap, container);
    if (siblings.some((s) => s.spaceId === space.id)) throw conflict(`spaceId: the space is already shown ${container.kind === 'section' ? 'in this section' : 'on this site'}`);
    const id = newId('SiteSpace');
    const row = await tx.siteSpace.create({
      data: {
        id,
        siteId,
        sectionId: container.kind === 'section' ? container.id : null,
        spaceId: space.id,
        path: uniquePath(new Set(siblings.map((s) => s.path)), slugify(space.title)),
        position: children(snap, container).length,
        createdAt: ctx.clock.now(),
      },
    });
    await ensureDefault(tx, snap, container, id);
    await recordEvent(tx, ctx, structureEvent(site, 'site_space_created', id, { spaceId: space.id, sectionId: row.sectionId }));
    return row;
  });
}

/** Give a container a default site space when it has none (or a stale one). */
async function ensureDefault(tx: Tx, snap: StructureSnapshot, container: Container, candidate: string | null) {
  if (container.kind === 'section') {
    const section = snap.sections.get(container.id)!;
    if (section.defaultSiteSpaceId && snap.siteSpaces.get(section.defaultSiteSpaceId)?.sectionId === container.id) return;
    section.defaultSiteSpaceId = candidate;
    await tx.siteSection.update({ where: { id: container.id }, data: { defaultSiteSpaceId: candidate } });
  } else if (container.kind === 'root') {
    const current = snap.defaultSiteSpaceId ? snap.siteSpaces.get(snap.defaultSiteSpaceId) : undefined;
    if (current && current.sectionId === null) return;
    if (candidate === null && hasSections(snap) && snap.defaultSiteSpaceId === null) return;
    snap.defaultSiteSpaceId = candidate;
    await tx.site.update({ where: { id: snap.siteId }, data: { defaultSiteSpaceId: candidate } });
  }
}

export async function updateSiteSpace(ctx: DomainContext, organizationId: string | undefined, siteId: string, siteSpaceId: string, raw: unknown): Promise<SiteSpace> {
  const site = await requireSite(ctx, organizationId, siteId, 'site:write');
  const input = parseInput(UpdateSiteSpaceInput, raw);
  checkCondition('condition', input.condition);
  const space = input.spaceId !== undefined ? await requireSiteContent(ctx, site.organizationId, input.spaceId, 'spaceId') : undefined;
  return structural(ctx, siteId, async (tx, snap) => {
    const current = snap.siteSpaces.get(siteSpaceId);
    if (!current) throw notFound('Site space');
    const container: Container = current.sectionId ? { kind: 'section', id: current.sectionId } : ROOT;
    const siblings = siteSpacesIn(snap, container).filter((s) => s.id !== siteSpaceId);
    if (input.path !== undefined && siblings.some((s) => s.path === input.path)) {
      throw conflict(`path: "${input.path}" is already the path of another site space ${container.kind === 'section' ? 'in this section' : 'of this site'}`);
    }
    if (space && siblings.some((s) => s.spaceId === space.id)) throw conflict(`spaceId: the space is already shown ${container.kind === 'section' ? 'in this section' : 'on this site'}`);
    const updated = await tx.siteSpace.update({
      where: { id: siteSpaceId },
      data: {
        ...(input.path !== undefined ? { path: input.path } : {}),
        ...(input.condition !== undefined ? { condition: input.condition } : {}),
        ...(space ? { spaceId: space.id } : {}),
      },
    });
    await recordEvent(tx, ctx, structureEvent(site, 'site_space_updated', siteSpaceId, { spaceId: updated.spaceId, sectionId: updated.sectionId, fields: Object.keys(input) }));
    return updated;
  });
}

/** Idempotent. When the default site space goes, the next one in its container becomes default. */
export async function deleteSiteSpace(ctx: DomainContext, organizationId: string | undefined, siteId: string, siteSpaceId: string): Promise<boolean> {
  const site = await requireSite(ctx, organizationId, siteId, 'site:write');
  return structural(ctx, siteId, async (tx, snap) => {
    const current = snap.siteSpaces.get(siteSpaceId);
    if (!current) return false;
    const container: Container = current.sectionId ? { kind: 'section', id: current.sectionId } : ROOT;
    await tx.siteSpace.delete({ where: { id: siteSpaceId } });
    snap.siteSpaces.delete(siteSpaceId);
    const rest = children(snap, container);
    await writeOrder(tx, snap, container, rest);
    await ensureDefault(tx, snap, container, rest[0]?.id ?? null);
    await recordEvent(tx, ctx, structureEvent(site, 'site_space_deleted', siteSpaceId, { spaceId: current.spaceId, sectionId: current.sectionId }));
    return true;
  });
}

// ------------------------------------------------------------------ moving and sorting

/**
 * Move one structure item (the deprecated moves and `structure/sort` all come here). A site space
 * moving to another container must not clash there by path or space (409), and the defaults of
 * both containers stay valid. `anchorTypes` narrows the anchors a deprecated move accepts (a
 * section move: sections only; a group move: sections and groups; a site space move: site spaces).
 */
export async function moveStructureItem(
  ctx: DomainContext,
  organizationId: string | undefined,
  siteId: string,
  item: ItemRef,
  position: MovePosition | undefined,
  anchorTypes?: readonly StructureItemType[],
): Promise<ItemRef> {
  const site = await requireSite(ctx, organizationId, siteId, 'site:write');
  for (const side of ['before', 'after'] as const) {
    const anchor = position?.[side];
    if (anchor && anchorTypes && !anchorTypes.includes(anchor.type)) throw badRequest(`position.${side}.type`, `must be ${anchorTypes.join(' or ')}`);
  }
  return structural(ctx, siteId, async (tx, snap) => {
    const plan = planMove(snap, item, position);
    if (item.type === 'site_space' && !sameContainer(plan.from, plan.to)) {
      const moving = snap.siteSpaces.get(item.id)!;
      const there = siteSpacesIn(snap, plan.to);
      if (there.some((s) => s.path === moving.path)) throw conflict(`path: "${moving.path}" is already the path of a site space in the target container`);
      if (there.some((s) => s.spaceId === moving.spaceId)) throw conflict('the space is already shown in the target container');
    }
    await writeOrder(tx, snap, plan.to, plan.toOrder);
    if (plan.fromOrder) await writeOrder(tx, snap, plan.from, plan.fromOrder);
    if (item.type === 'site_space' && !sameContainer(plan.from, plan.to)) {
      const fromDefault = plan.from.kind === 'section' ? snap.sections.get(plan.from.id)!.defaultSiteSpaceId : snap.defaultSiteSpaceId;
      if (fromDefault === item.id) {
        // Force a new default in the source container.
        if (plan.from.kind === 'section') snap.sections.get(plan.from.id)!.defaultSiteSpaceId = null;
        else snap.defaultSiteSpaceId = null;
        await ensureDefault(tx, snap, plan.from, plan.fromOrder?.[0]?.id ?? null);
      }
      await ensureDefault(tx, snap, plan.to, item.id);
    }
    await recordEvent(tx, ctx, structureEvent(site, MOVED[item.type], item.id, { position: position ?? null }));
    return item;
  });
}

/** `PATCH ORG/sites/{siteId}/structure/sort`. */
export async function sortSiteStructure(ctx: DomainContext, organizationId: string | undefined, siteId: string, raw: unknown) {
  const body = parseInput(SortSiteStructureInput, raw);
  return moveStructureItem(ctx, organizationId, siteId, body.item, body.position);
}

/**
 * For the spaces area: take spaces off every site before they are removed for good (the purge of
 * deleted spaces), inside the caller's transaction, so the containers they leave keep dense
 * positions and valid defaults. (The foreign key would delete the rows anyway, leaving gaps.)
 * Returns the number of site spaces removed.
 */
export async function removeSpacesFromSites(tx: Tx, spaceIds: string[]): Promise<number> {
  if (spaceIds.length === 0) return 0;
  const rows = await tx.siteSpace.findMany({ where: { spaceId: { in: spaceIds } }, select: { siteId: true } });
  const siteIds = [...new Set(rows.map((r) => r.siteId))].sort();
  let removed = 0;
  for (const siteId of siteIds) {
    if (!(await lockSite(tx, siteId))) continue;
    const snap = await loadSnapshot(tx, siteId);
    const gone = [...snap.siteSpaces.values()].filter((s) => spaceIds.includes(s.spaceId));
    await tx.siteSpace.deleteMany({ where: { id: { in: gone.map((s) => s.id) } } });
    const containers = new Map<string, Container>();
    for (const s of gone) {
      snap.siteSpaces.delete(s.id);
      containers.set(s.sectionId ?? '', s.sectionId ? { kind: 'section', id: s.sectionId } : ROOT);
    }
    for (const container of containers.values()) {
      const rest = children(snap, container);
      await writeOrder(tx, snap, container, rest);
      await ensureDefault(tx, snap, container, rest.find((r) => r.type === 'site_space')?.id ?? null);
    }
    removed += gone.length;
  }
  return removed;
}

// ------------------------------------------------------------------ reading in order

/** The snapshot readers page over (site spaces of deleted spaces left out). */
export async function readerSnapshot(db: Tx, siteId: string): Promise<StructureSnapshot> {
  const snap = await loadSnapshot(db, siteId);
  const deleted = await db.siteSpace.findMany({ where: { siteId, space: { deletedAt: { not: null } } }, select: { id: true } });
  for (const d of deleted) snap.siteSpaces.delete(d.id);
  return snap;
}

export function orderedSectionIds(snap: StructureSnapshot): string[] {
  return sectionsInOrder(snap);
}

/** Site spaces in reading order; `onlyDefault` true keeps the default of each container, false the others. */
export function orderedSiteSpaceIds(snap: StructureSnapshot, onlyDefault?: boolean): string[] {
  const ids = siteSpacesInOrder(snap);
  if (onlyDefault === undefined) return ids;
  const isDefault = (id: string) => {
    const s = snap.siteSpaces.get(id)!;
    return s.sectionId ? snap.sections.get(s.sectionId)?.defaultSiteSpaceId === id : snap.defaultSiteSpaceId === id;
  };
  return ids.filter((id) => isDefault(id) === onlyDefault);
}
