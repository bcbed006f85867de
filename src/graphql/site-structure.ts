// Site structure: the SiteStructureItem interface, the SiteSection, SiteSectionGroup and SiteSpace
// nodes, `Site.structure` and the ordered lists and connections (added to the Site node of
// `sites.ts`), and the structure mutations: add, update, delete and the deprecated moves of each
// item, groups' sections, and `sortSiteStructure`.
//
// Everything here is planned into the site's one Prisma query as `sites.ts` explains (its header),
// and honours the visitor tag of the rows it is given (`viewOf`, `visible`, `tag`). The paged
// connections order by reading order through a snapshot of the structure (`readerSnapshot`).
import { builder } from './builder.ts';
import { keysetConnection } from './cursors.ts';
import { DeletePayload, dropUndefined, loader, OWN_ORGANIZATION_ID } from './common.ts';
import type { Context } from './context.ts';
import type { SiteSection, SiteSectionGroup, SiteSpace, Space } from '../generated/prisma/client.ts';
import { SpaceRef } from './spaces.ts';
import { isVisibleTo, siteSpaceVisibleTo } from '../domain/site-order.ts';
import type { SiteAction } from '../auth/access.ts';
import { typeOfId } from '../lib/ids.ts';
import {
  addSectionGroupToSite,
  addSectionToGroup,
  addSectionToSite,
  addSpaceToSite,
  deleteSiteSection,
  deleteSiteSectionGroup,
  deleteSiteSpace,
  moveStructureItem,
  orderedSectionIds,
  orderedSiteSpaceIds,
  readerSnapshot,
  removeSectionFromGroup,
  sortSiteStructure,
  updateSiteSection,
  updateSiteSectionGroup,
  updateSiteSpace,
} from '../domain/site-structure.ts';
import { orderSections, rootItems, type ItemRef, type StructureSnapshot } from '../domain/site-order.ts';
import { findManyInOrder, groupSections, levelKey, mergeQueries, sectionKey, siteSpaceKey, takeGroupSections, visibleGroups, withGroupSections } from './site-structure-plan.ts';
import {
  done,
  ensure,
  ids,
  LIST_COMPLEXITY,
  LIVE_SPACES,
  NEEDS,
  POS,
  publishedBaseUrl,
  ROOT_SPACES,
  SITE_URL_SELECT,
  conditionFor,
  siteViewKey,
  tag,
  viewFor,
  visible,
  withShareKey,
  type SiteRow,
  type View,
} from './sites.ts';
import { baseIdOf, viewScopedId } from './view-ids.ts';

// ------------------------------------------------------------------ node guards

type StructureModel = 'siteSection' | 'siteSectionGroup' | 'siteSpace' | 'shareLink';

function siteIdOf(ctx: Context, model: StructureModel, id: string): Promise<string | null> {
  return loader<string, string | null>(ctx, `${model}.siteId`, async (ids) => {
    const delegate = ctx.prisma[model] as unknown as { findMany(a: object): Promise<Array<{ id: string; siteId: string }>> };
    const rows = await delegate.findMany({ where: { id: { in: [...ids] } }, select: { id: true, siteId: true } });
    const m = new Map(rows.map((r) => [r.id, r.siteId]));
    return ids.map((i) => m.get(i) ?? null);
  }).load(id);
}

/**
 * node(id:) and fallback loads: sites this request already read, else organization members
 * allowed `action`; and for a request that read the site as a published reader, only the items
 * that reader sees (a conditioned item is not found, as in every list).
 */
const guard = (model: StructureModel, action: SiteAction = 'site:read') => async (raw: string, ctx: Context) => {
  // A view-scoped id (`sitesc_…~<view>`) names the item: it is read in this request's view.
  const id = baseIdOf(raw);
  const siteId = await siteIdOf(ctx, model, id);
  if (!siteId) return { id: '' };
  let reader = ctx.access.readerOf(siteId);
  if (!reader && !(await ctx.access.canSeeSite(siteId, action))) {
    // Not a member: a published reader of the site may refetch what it sees (share links stay admins').
    if (action !== 'site:read' || model === 'shareLink') return { id: '' };
    const site = await ctx.prisma.site.findUnique({ where: { id: siteId }, select: { id: true, organizationId: true, published: true, visibility: true } });
    reader = await ctx.access.siteReader(site, { visitorToken: ctx.visitorToken, now: ctx.clock.now() }).catch(() => undefined);
    if (!reader) return { id: '' };
  }
  if (reader?.claims && model !== 'shareLink' && !readerSees(await snapshotOf(ctx, siteId), model, id, reader.claims)) return { id: '' };
  return { id };
};

/** Whether a reader with `claims` sees a structure item (the lists' rule, for one item). */
function readerSees(snap: StructureSnapshot, model: Exclude<StructureModel, 'shareLink'>, id: string, claims: Record<string, unknown>): boolean {
  const view = { claims, shareKey: null, member: false };
  if (model === 'siteSection') return readerSectionIds(snap, view).includes(id);
  if (model === 'siteSectionGroup') return readerGroupIds(snap, view).includes(id);
  return readerSiteSpaceIds(snap, view, undefined).includes(id);
}

export const SiteStructureTypeEnum = builder.enumType('SiteStructureType', {
  description: '`sections`: the top level holds sections and section groups; `siteSpaces`: it holds site spaces.',
  values: {
    sections: { description: 'The top level holds sections and section groups.' },
    siteSpaces: { description: 'The top level holds site spaces (a site without sections).' },
  } as const,
});
export const SiteStructureItemTypeEnum = builder.enumType('SiteStructureItemType', {
  description: 'REST writes `site-space`, `site-section`, `site-section-group`.',
  values: {
    site_space: { description: 'A space published in the site (REST `site-space`).' },
    site_section: { description: 'A section: a tab of the site with its own site spaces (REST `site-section`).' },
    site_section_group: { description: 'A group of sections (REST `site-section-group`).' },
  } as const,
});
const SiteItemUrls = builder.simpleObject('SiteItemUrls', {
  description: 'Where a section or site space is: in this API and, once the site is published, on the web.',
  fields: (t) => ({
    location: t.string({ description: 'The item in the REST API (a GET on it answers the item).' }),
    published: t.string({ nullable: true, description: 'Only when the site is published.' }),
  }),
});

// ------------------------------------------------------------------ the structure item interface

/**
 * What sections, section groups and site spaces share. An interface (not a union) so that
 * `structure.items` can be planned into the parent query per implementation.
 */
export const SiteStructureItemRef = builder.interfaceRef<{ id: string; siteId: string; position: number }>('SiteStructureItem').implement({
  description: 'An item of a site\'s structure: a section, a section group or a site space.',
  resolveType: (item) => {
    const type = typeOfId(item.id);
    if (type === 'SiteSection' || type === 'SiteSectionGroup' || type === 'SiteSpace') return type;
    throw new Error(`not a structure item: ${item.id}`);
  },
  fields: (t) => ({
    id: t.exposeID('id', { description: 'This item as read here: its id (`sitesp_…`, `sitesc_…` or `sitesg_…`) in the editor\'s view, `…~<view>` in a filtered view of its site (as `Site.id`). The item itself is `siteSpaceId`, `siteSectionId` or `siteSectionGroupId`.' }),
    siteId: t.exposeString('siteId', { description: 'The site it belongs to (`site_…`).' }),
    position: t.exposeInt('position', { description: 'Index among the siblings of its container (dense, from 0).' }),
  }),
});

// ------------------------------------------------------------------ SiteSpace

export const SiteSpaceRef = builder.prismaNode('SiteSpace', {
  // One object, one id: read through a filtered view of its site it answers `sitesp_…~<view>` (as Site).
  id: {
    description: 'This site space as read here: `sitesp_…` in the editor\'s view, `sitesp_…~<view>` in a filtered view of its site (a `visitor` preview, a published reader who is not a member), so client caches keep the views apart. The site space itself is `siteSpaceId`.',
    resolve: (s, ctx) => viewScopedId(s.id, siteViewKey(ctx, s)),
  },
  interfaces: [SiteStructureItemRef],
  nullable: true,
  findUnique: guard('siteSpace'),
  description: 'A space shown on a site, at the root level or in a section (a "variant" of that section).',
  fields: (t) => ({
    siteSpaceId: t.exposeString('id', { description: 'The site space id (`sitesp_…`), the same in every view: what REST and the `siteSpaceId` arguments take.' }),
    site: t.relation('site'),
    sectionId: t.exposeString('sectionId', { nullable: true, description: 'Null at the root level.' }),
    section: t.relation('section', { nullable: true }),
    spaceId: t.exposeString('spaceId'),
    space: t.field({
      type: SpaceRef,
      description: 'The content it shows; nest `revision { pages { … } }` for its page tree (a published reader gets the pages it may see).',
      // Planned into the parent query like a relation; the row carries the reader on (its pages are filtered by it).
      select: (_a, _c, nested) => ({ space: nested() }),
      resolve: (s, _a, ctx) => tag([s.space as Space], viewFor(ctx, s))[0]!,
    }),
    path: t.exposeString('path'),
    condition: t.string({ nullable: true, description: 'Expression over `visitor.claims` deciding who sees it (organization members only; null for published readers).', resolve: (row, _a, ctx) => conditionFor(ctx, row) }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    title: t.string({
      description: 'The title readers see (the space\'s title).',
      select: { space: { select: { title: true } } },
      resolve: (s) => s.space.title,
    }),
    default: t.boolean({
      description: 'Whether this is the default site space of its section (or of the site, at the root level).',
      select: { section: { select: { defaultSiteSpaceId: true } }, site: { select: { defaultSiteSpaceId: true } } },
      resolve: (s) => (s.sectionId ? s.section?.defaultSiteSpaceId === s.id : s.site.defaultSiteSpaceId === s.id),
    }),
    urls: t.field({
      description: 'Where the site space is: this API and, once the site is published, the web.',
      type: SiteItemUrls,
      select: { site: { select: SITE_URL_SELECT }, section: { select: { path: true, defaultSiteSpaceId: true } } },
      resolve: (s, _a, ctx) => {
        const site = s.site as SiteRow;
        const isDefault = s.sectionId ? s.section?.defaultSiteSpaceId === s.id : false;
        const path = `${s.section ? `${s.section.path}/` : ''}${isDefault ? '' : `${s.path}/`}`;
        return {
          location: `${ctx.config.publicUrl}/v1/orgs/${site.organizationId}/sites/${site.id}/site-spaces/${s.id}`,
          published: site.published ? withShareKey(`${publishedBaseUrl(ctx.config.publicUrl, site)}${path}`, viewFor(ctx, s)) : null,
        };
      },
    }),
  }),
});

// ------------------------------------------------------------------ SiteSection

export const SiteSectionRef = builder.prismaNode('SiteSection', {
  // One object, one id: read through a filtered view of its site it answers `sitesc_…~<view>` (as Site).
  id: {
    description: 'This section as read here: `sitesc_…` in the editor\'s view, `sitesc_…~<view>` in a filtered view of its site (a `visitor` preview, a published reader who is not a member), so client caches keep the views apart. The section itself is `siteSectionId`.',
    resolve: (s, ctx) => viewScopedId(s.id, siteViewKey(ctx, s)),
  },
  interfaces: [SiteStructureItemRef],
  nullable: true,
  findUnique: guard('siteSection'),
  description: 'A section of a site: a top-level entry (or one in a section group) showing one or more site spaces.',
  fields: (t) => ({
    siteSectionId: t.exposeString('id', { description: 'The section id (`sitesc_…`), the same in every view: what REST and the `sectionId` arguments take.' }),
    site: t.relation('site'),
    title: t.exposeString('title'),
    description: t.exposeString('description', { nullable: true }),
    path: t.exposeString('path'),
    condition: t.string({ nullable: true, description: 'Expression over `visitor.claims` deciding who sees it (organization members only; null for published readers).', resolve: (row, _a, ctx) => conditionFor(ctx, row) }),
    icon: t.exposeString('icon', { nullable: true }),
    groupId: t.exposeString('groupId', { nullable: true, description: 'Id of its section group.' }),
    group: t.relation('group', { nullable: true }),
    defaultSiteSpaceId: t.exposeString('defaultSiteSpaceId', { nullable: true }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    default: t.boolean({
      description: 'Whether this is the default section of the site.',
      select: { site: { select: { defaultSiteSectionId: true } } },
      resolve: (s) => s.site.defaultSiteSectionId === s.id,
    }),
    siteSpaces: t.field({
      type: [SiteSpaceRef],
      description: 'Its site spaces in order (with a visitor: the ones that visitor sees).',
      complexity: LIST_COMPLEXITY,
      select: (_a, _c, nested) => ({ siteSpaces: ensure(nested({ where: LIVE_SPACES, orderBy: POS }), NEEDS.siteSpace) }),
      resolve: (s, _a, ctx) => visible(s.siteSpaces as SiteSpace[], viewFor(ctx, s)),
    }),
    urls: t.field({
      description: 'Where the section is: this API and, once the site is published, the web.',
      type: SiteItemUrls,
      select: { site: { select: SITE_URL_SELECT } },
      resolve: (s, _a, ctx) => {
        const site = s.site as SiteRow;
        return {
          location: `${ctx.config.publicUrl}/v1/orgs/${site.organizationId}/sites/${site.id}/sections/${s.id}`,
          published: site.published ? withShareKey(`${publishedBaseUrl(ctx.config.publicUrl, site)}${s.path}/`, viewFor(ctx, s)) : null,
        };
      },
    }),
  }),
});

// ------------------------------------------------------------------ SiteSectionGroup

export const SiteSectionGroupRef = builder.prismaNode('SiteSectionGroup', {
  // One object, one id: read through a filtered view of its site it answers `sitesg_…~<view>` (as Site).
  id: {
    description: 'This section group as read here: `sitesg_…` in the editor\'s view, `sitesg_…~<view>` in a filtered view of its site (a `visitor` preview, a published reader who is not a member), so client caches keep the views apart. The section group itself is `siteSectionGroupId`.',
    resolve: (s, ctx) => viewScopedId(s.id, siteViewKey(ctx, s)),
  },
  interfaces: [SiteStructureItemRef],
  nullable: true,
  findUnique: guard('siteSectionGroup'),
  description: 'A group of sections at the top level of a site.',
  fields: (t) => ({
    siteSectionGroupId: t.exposeString('id', { description: 'The section group id (`sitesg_…`), the same in every view: what REST and the `groupId` arguments take.' }),
    site: t.relation('site'),
    title: t.exposeString('title'),
    icon: t.exposeString('icon', { nullable: true }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    sections: t.field({
      type: [SiteSectionRef],
      description: 'Its sections in order (with a visitor: the ones that visitor sees).',
      complexity: LIST_COMPLEXITY,
      select: (_a, _c, nested) => ({ sections: ensure(nested({ orderBy: POS }), NEEDS.section) }),
      resolve: (g, _a, ctx) => visible(groupSections(g) ?? (g.sections as SiteSection[]), viewFor(ctx, g)),
    }),
  }),
});

// ------------------------------------------------------------------ structure

type Structure = { type: 'sections' | 'siteSpaces'; items: Array<SiteSection | SiteSectionGroup | SiteSpace> };
const SiteStructureRef = builder.objectRef<Structure>('SiteStructure').implement({
  description: 'A site\'s top level in order: sections and section groups (`type: sections`), or site spaces (`type: siteSpaces`).',
  fields: (t) => ({
    type: t.field({ type: SiteStructureTypeEnum, description: 'What the top level holds.', resolve: (s) => s.type }),
    items: t.field({ type: [SiteStructureItemRef], description: 'The top-level items in reading order (with a visitor: the ones that visitor sees).', complexity: LIST_COMPLEXITY, resolve: (s) => s.items }),
  }),
});

// ------------------------------------------------------------------ keyset pages in reading order

/** A site's snapshot for the ordered connections, once per request. */
function snapshotOf(ctx: Context, siteId: string): Promise<StructureSnapshot> {
  return loader<string, StructureSnapshot>(ctx, 'site.readerSnapshot', (ids) => Promise.all(ids.map((id) => readerSnapshot(ctx.prisma, id)))).load(siteId);
}

// The paged lists filter like the nested ones: a reader gets the items its claims open (a site
// space only when its section shows too; a group when one of its sections shows).
const readerSectionIds = (snap: StructureSnapshot, view: View | undefined) =>
  orderedSectionIds(snap).filter((id) => isVisibleTo(snap.sections.get(id)!.condition, view?.claims));
const readerGroupIds = (snap: StructureSnapshot, view: View | undefined) => {
  if (!view?.claims) return [...snap.groups.keys()];
  const shown = new Set(readerSectionIds(snap, view).map((id) => snap.sections.get(id)!.groupId));
  return [...snap.groups.keys()].filter((id) => shown.has(id));
};
const readerSiteSpaceIds = (snap: StructureSnapshot, view: View | undefined, onlyDefault: boolean | undefined) =>
  orderedSiteSpaceIds(snap, onlyDefault).filter((id) => {
    const ss = snap.siteSpaces.get(id)!;
    return siteSpaceVisibleTo(ss, ss.sectionId ? snap.sections.get(ss.sectionId) : null, view?.claims);
  });

// ------------------------------------------------------------------ Site.structure and the ordered lists

builder.prismaObjectFields('Site', (t) => ({
    // The structure, planned into the parent query (see the header).
    structure: t.field({
      type: SiteStructureRef,
      description: 'The top level in order, as the published site shows it. With a visitor, what that visitor sees.',
      select: (_a, _c, nested) => {
        // `site.sections` holds every section, the grouped ones too: a group's sections are taken
        // from it (`groupSections`) rather than loaded a second time beneath the group.
        const sections = ensure(nested({ orderBy: POS }, ['items'], 'SiteSection'), NEEDS.section);
        const [groups, groupSectionsQuery] = takeGroupSections(ensure(nested({ orderBy: POS }, ['items'], 'SiteSectionGroup'), NEEDS.group));
        return {
          sections: mergeQueries('SiteSection', sections, groupSectionsQuery),
          sectionGroups: groups,
          siteSpaces: ensure(nested({ where: ROOT_SPACES, orderBy: POS }, ['items'], 'SiteSpace'), NEEDS.siteSpace),
        };
      },
      resolve: (site, _a, ctx) => {
        const view = viewFor(ctx, site);
        const sections = site.sections as SiteSection[];
        const groups = site.sectionGroups as SiteSectionGroup[];
        const spaces = site.siteSpaces as SiteSpace[];
        const type = sections.length + groups.length > 0 ? 'sections' : 'siteSpaces';
        const items =
          type === 'sections'
            ? rootItems(visible(sections.filter((s) => !s.groupId), view), withGroupSections(visibleGroups(groups, sections, view), sections), []).map((e) => e.item)
            : rootItems([], [], visible(spaces, view)).map((e) => e.item);
        return { type, items } as Structure;
      },
    }),
    sections: t.field({
      type: [SiteSectionRef],
      description: 'Every section in reading order: top-level sections and groups by position, each group\'s sections in place. With a visitor, only those it sees.',
      complexity: LIST_COMPLEXITY,
      select: (_a, _c, nested) => ({
        sections: ensure(nested({ orderBy: POS }), NEEDS.section),
        sectionGroups: { orderBy: POS, select: { id: true, position: true, createdAt: true } },
      }),
      resolve: (site, _a, ctx) => visible(orderSections(site.sections as SiteSection[], site.sectionGroups), viewFor(ctx, site)),
    }),
    sectionGroups: t.field({
      type: [SiteSectionGroupRef],
      description: 'Section groups in order. With a visitor, only groups with a section it sees.',
      complexity: LIST_COMPLEXITY,
      select: (_a, _c, nested) => ({
        sectionGroups: ensure(nested({ orderBy: POS }), NEEDS.group),
        sections: { orderBy: POS, select: { id: true, groupId: true, condition: true } },
      }),
      resolve: (site, _a, ctx) => visibleGroups(site.sectionGroups as SiteSectionGroup[], site.sections, viewFor(ctx, site)),
    }),
    siteSpaces: t.field({
      type: [SiteSpaceRef],
      description: 'Root-level site spaces in order (sites without sections); sections carry their own.',
      complexity: LIST_COMPLEXITY,
      select: (_a, _c, nested) => ({ siteSpaces: ensure(nested({ where: ROOT_SPACES, orderBy: POS }), NEEDS.siteSpace) }),
      resolve: (site, _a, ctx) => visible(site.siteSpaces as SiteSpace[], viewFor(ctx, site)),
    }),

    // Paged lists (the REST listings): reading order, cursors are item ids.
    sectionsConnection: keysetConnection(t, {
      type: SiteSectionRef,
      list: 'Site.sections',
      description: 'Every section in reading order, paged.',
      resolve: async (page, site, _a, ctx) => {
        const snap = await snapshotOf(ctx, site.id);
        return tag(await findManyInOrder((a) => ctx.prisma.siteSection.findMany(a), page, readerSectionIds(snap, viewFor(ctx, site)), (id) => sectionKey(snap, id)), viewFor(ctx, site));
      },
      totalCount: async (site, _a, ctx) => readerSectionIds(await snapshotOf(ctx, site.id), viewFor(ctx, site)).length,
    }),
    sectionGroupsConnection: keysetConnection(t, {
      type: SiteSectionGroupRef,
      list: 'Site.sectionGroups',
      description: 'Section groups in order, paged.',
      resolve: async (page, site, _a, ctx) => {
        const snap = await snapshotOf(ctx, site.id);
        const ids = readerGroupIds(snap, viewFor(ctx, site));
        return tag(await findManyInOrder((a) => ctx.prisma.siteSectionGroup.findMany(a), page, ids, (id) => levelKey(snap.groups.get(id))), viewFor(ctx, site));
      },
      totalCount: async (site, _a, ctx) => readerGroupIds(await snapshotOf(ctx, site.id), viewFor(ctx, site)).length,
    }),
    siteSpacesConnection: keysetConnection(t, {
      type: SiteSpaceRef,
      list: 'Site.siteSpaces',
      description: 'Every site space in reading order (root level, then section by section), paged.',
      args: { default: t.arg.boolean({ description: 'true: only default site spaces (one per section, or the root default); false: only the others.' }) },
      resolve: async (page, site, args, ctx) => {
        const snap = await snapshotOf(ctx, site.id);
        const ids = readerSiteSpaceIds(snap, viewFor(ctx, site), args.default ?? undefined);
        return tag(await findManyInOrder((a) => ctx.prisma.siteSpace.findMany(a), page, ids, (id) => siteSpaceKey(snap, id)), viewFor(ctx, site));
      },
      totalCount: async (site, args, ctx) => readerSiteSpaceIds(await snapshotOf(ctx, site.id), viewFor(ctx, site), args.default ?? undefined).length,
    }),
}));

// ------------------------------------------------------------------ mutations

const SiteSectionPayload = builder.simpleObject('SiteSectionPayload', {
  description: 'The section a mutation created or changed.',
  fields: (t) => ({ section: t.field({ type: SiteSectionRef, description: 'The section as it is now.' }) }),
});
const SiteSectionGroupPayload = builder.simpleObject('SiteSectionGroupPayload', {
  description: 'The section group a mutation created or changed.',
  fields: (t) => ({ group: t.field({ type: SiteSectionGroupRef, description: 'The section group as it is now.' }) }),
});
const SiteSpacePayload = builder.simpleObject('SiteSpacePayload', {
  description: 'The site space a mutation created or changed.',
  fields: (t) => ({ siteSpace: t.field({ type: SiteSpaceRef, description: 'The site space as it is now.' }) }),
});
const SortSiteStructurePayload = builder.simpleObject('SortSiteStructurePayload', {
  description: 'The item a sort moved.',
  fields: (t) => ({ item: t.field({ type: SiteStructureItemRef, description: 'The moved item.' }) }),
});

const ItemPointerInput = builder.inputType('SiteStructureItemPointerInput', {
  description: 'Names one item of a site’s structure.',
  fields: (t) => ({ type: t.field({ type: SiteStructureItemTypeEnum, required: true, description: 'Kind of item.' }), id: t.id({ required: true, description: 'Its id.' }) }),
});
const MovePositionInput = builder.inputType('SiteStructureMovePositionInput', {
  description: 'Either `before` or `after` an item that can sit beside the moved one; empty: the end of its container.',
  fields: (t) => ({ before: t.field({ type: ItemPointerInput, description: 'Put it just before this item.' }), after: t.field({ type: ItemPointerInput, description: 'Put it just after this item.' }) }),
});
type PointerArg = { type: ItemRef['type']; id: string | number } | null | undefined;
const pointer = (p: PointerArg) => (p ? { type: p.type, id: String(p.id) } : undefined);
const movePosition = (p: { before?: PointerArg; after?: PointerArg } | null | undefined) =>
  p ? dropUndefined({ before: pointer(p.before), after: pointer(p.after) }) : undefined;

const AddSectionToSiteInput = builder.inputType('AddSectionToSiteInput', {
  description: 'The site, the space the section shows, and its settings.',
  fields: (t) => ({ organizationId: t.id({ description: OWN_ORGANIZATION_ID }), siteId: t.id({ required: true, description: 'The site (`site_…`).' }), spaceId: t.id({ required: true, description: 'Space to show (`space_…`), of the same organization.' }), title: t.string({ description: 'Title shown in the navigation; default: the space title.' }), icon: t.string({ description: 'Icon name or URL.' }) }),
});
const UpdateSiteSectionInput = builder.inputType('UpdateSiteSectionInput', {
  description: 'Omitted fields are kept; null removes `condition`, `icon`, `description`.',
  fields: (t) => ({
    organizationId: t.id({ description: OWN_ORGANIZATION_ID }), siteId: t.id({ required: true, description: 'The site (`site_…`).' }),
    sectionId: t.id({ required: true, description: 'The section (`sitesc_…`).' }),
    title: t.string({ description: 'New title.' }),
    path: t.string({ description: 'URL path segment of the section.' }),
    defaultSiteSpace: t.id({ description: 'Site space shown first in the section (`sitesp_…`).' }),
    condition: t.string({ description: 'Adaptive-content expression deciding who sees it.' }),
    icon: t.string({ description: 'Icon name or URL.' }),
    description: t.string({ description: 'Short text shown with the section.' }),
  }),
});
const SiteSectionKeyInput = builder.inputType('SiteSectionKeyInput', { description: 'Names one section of a site.', fields: (t) => ({ organizationId: t.id({ description: OWN_ORGANIZATION_ID }), siteId: t.id({ required: true, description: 'The site (`site_…`).' }), sectionId: t.id({ required: true, description: 'The section (`sitesc_…`).' }) }) });
const MoveSiteItemInput = builder.inputType('MoveSiteStructureItemInput', {
  description: 'The deprecated moves: `id` is the moved item (of the mutation\'s type).',
  fields: (t) => ({ organizationId: t.id({ description: OWN_ORGANIZATION_ID }), siteId: t.id({ required: true, description: 'The site (`site_…`).' }), id: t.id({ required: true, description: 'The item to move.' }), position: t.field({ type: MovePositionInput, description: 'Where to put it; omitted: the end of its container.' }) }),
});
const AddSectionGroupToSiteInput = builder.inputType('AddSectionGroupToSiteInput', {
  description: 'The site and the group to add.',
  fields: (t) => ({ organizationId: t.id({ description: OWN_ORGANIZATION_ID }), siteId: t.id({ required: true, description: 'The site (`site_…`).' }), title: t.string({ required: true, description: 'Title of the group.' }), icon: t.string({ description: 'Icon name or URL.' }), sections: t.idList({ description: 'Existing sections to move into the group, in order.' }) }),
});
const UpdateSiteSectionGroupInput = builder.inputType('UpdateSiteSectionGroupInput', {
  description: 'The group and what to change; omitted fields are kept.',
  fields: (t) => ({ organizationId: t.id({ description: OWN_ORGANIZATION_ID }), siteId: t.id({ required: true, description: 'The site (`site_…`).' }), groupId: t.id({ required: true, description: 'The section group (`sitesg_…`).' }), title: t.string({ description: 'New title.' }), icon: t.string({ description: 'Icon name or URL; null removes it.' }) }),
});
const SiteSectionGroupKeyInput = builder.inputType('SiteSectionGroupKeyInput', { description: 'Names one section group of a site.', fields: (t) => ({ organizationId: t.id({ description: OWN_ORGANIZATION_ID }), siteId: t.id({ required: true, description: 'The site (`site_…`).' }), groupId: t.id({ required: true, description: 'The section group (`sitesg_…`).' }) }) });
const SectionInGroupInput = builder.inputType('SiteSectionInGroupInput', {
  description: 'A section and a group of the same site.',
  fields: (t) => ({ organizationId: t.id({ description: OWN_ORGANIZATION_ID }), siteId: t.id({ required: true, description: 'The site (`site_…`).' }), groupId: t.id({ required: true, description: 'The section group (`sitesg_…`).' }), sectionId: t.id({ required: true, description: 'The section (`sitesc_…`).' }) }),
});
const AddSpaceToSiteInput = builder.inputType('AddSpaceToSiteInput', {
  description: 'The site, the space to show and where.',
  fields: (t) => ({ organizationId: t.id({ description: OWN_ORGANIZATION_ID }), siteId: t.id({ required: true, description: 'The site (`site_…`).' }), spaceId: t.id({ required: true, description: 'Space to show (`space_…`), of the same organization.' }), sectionId: t.id({ description: 'Default: the default section, or the root level of a site without sections.' }) }),
});
const UpdateSiteSpaceInput = builder.inputType('UpdateSiteSpaceInput', {
  description: 'Omitted fields are kept; null removes `condition`.',
  fields: (t) => ({ organizationId: t.id({ description: OWN_ORGANIZATION_ID }), siteId: t.id({ required: true, description: 'The site (`site_…`).' }), siteSpaceId: t.id({ required: true, description: 'The site space (`sitesp_…`).' }), path: t.string({ description: 'URL path segment of the site space.' }), condition: t.string({ description: 'Adaptive-content expression deciding who sees it; null removes it.' }), spaceId: t.id({ description: 'Show another space (`space_…`) in its place.' }) }),
});
const SiteSpaceKeyInput = builder.inputType('SiteSpaceKeyInput', { description: 'Names one site space.', fields: (t) => ({ organizationId: t.id({ description: OWN_ORGANIZATION_ID }), siteId: t.id({ required: true, description: 'The site (`site_…`).' }), siteSpaceId: t.id({ required: true, description: 'The site space (`sitesp_…`).' }) }) });
const SortSiteStructureInput = builder.inputType('SortSiteStructureInput', {
  description: 'The item to move and its anchor.',
  fields: (t) => ({ organizationId: t.id({ description: OWN_ORGANIZATION_ID }), siteId: t.id({ required: true, description: 'The site (`site_…`).' }), item: t.field({ type: ItemPointerInput, required: true, description: 'The item to move.' }), position: t.field({ type: MovePositionInput, required: true, description: 'The sibling to put it before or after.' }) }),
});

async function loadItem(ctx: Context, ref: ItemRef) {
  if (ref.type === 'site_section') return ctx.prisma.siteSection.findUniqueOrThrow({ where: { id: ref.id } });
  if (ref.type === 'site_section_group') return ctx.prisma.siteSectionGroup.findUniqueOrThrow({ where: { id: ref.id } });
  return ctx.prisma.siteSpace.findUniqueOrThrow({ where: { id: ref.id } });
}

type SiteKeyArgs = { organizationId?: string | number | null; siteId: string | number };

/** A structure write on the input's site (`write` gets the rest of the input); the site is then readable for the payload. */
async function onSite<I extends SiteKeyArgs, T>(ctx: Context, input: I, write: (org: string | undefined, site: string, rest: Omit<I, keyof SiteKeyArgs>) => Promise<T>): Promise<T> {
  const { organizationId, siteId, ...rest } = input;
  const k = ids({ organizationId, siteId });
  return done(ctx, k.site, await write(k.org, k.site, rest));
}

/** A delete: `deleted` false when the item was already gone; the payload names it either way. */
async function deletion(ctx: Context, input: SiteKeyArgs, id: string | number, remove: (ctx: Context, org: string | undefined, site: string, id: string) => Promise<boolean>) {
  const k = ids(input);
  return { deleted: await remove(ctx, k.org, k.site, String(id)), deletedId: String(id) };
}

/** The deprecated per-item moves: the input's item (of `type`), anchors of `anchors` only; the moved row for the payload. */
async function moveItem(ctx: Context, input: SiteKeyArgs & { id: string | number; position?: Parameters<typeof movePosition>[0] }, type: ItemRef['type'], anchors: ItemRef['type'][]) {
  const k = ids(input);
  const ref = await moveStructureItem(ctx, k.org, k.site, { type, id: String(input.id) }, movePosition(input.position), anchors);
  return done(ctx, k.site, await loadItem(ctx, ref));
}

builder.mutationFields((t) => ({
  addSectionToSite: t.field({
    type: SiteSectionPayload,
    description: 'Add a section showing a space (the section and its first site space). Organization admins only. REST: POST /v1/orgs/{organizationId}/sites/{siteId}/sections (201).',
    args: { input: t.arg({ type: AddSectionToSiteInput, required: true, description: 'The site, the space and the section’s settings.' }) },
    resolve: (_r, { input }, ctx) => onSite(ctx, input, async (org, site, rest) => ({ section: await addSectionToSite(ctx, org, site, dropUndefined(rest)) })),
  }),
  updateSiteSection: t.field({
    type: SiteSectionPayload,
    description: 'Change a section’s title, path, icon, description, condition or default site space. Organization admins only. REST: PATCH /v1/orgs/{organizationId}/sites/{siteId}/sections/{siteSectionId}.',
    args: { input: t.arg({ type: UpdateSiteSectionInput, required: true, description: 'The section and what to change.' }) },
    resolve: (_r, { input }, ctx) =>
      onSite(ctx, input, async (org, site, { sectionId, ...rest }) => ({ section: await updateSiteSection(ctx, org, site, String(sectionId), dropUndefined(rest)) })),
  }),
  deleteSiteSection: t.field({
    type: DeletePayload,
    description: 'Remove a section and its site spaces from the site (the spaces stay). Organization admins only. Idempotent (deleted: false when already gone). REST: DELETE /v1/orgs/{organizationId}/sites/{siteId}/sections/{siteSectionId}.',
    args: { input: t.arg({ type: SiteSectionKeyInput, required: true, description: 'The section to remove.' }) },
    resolve: (_r, { input }, ctx) => deletion(ctx, input, input.sectionId, deleteSiteSection),
  }),
  moveSiteSection: t.field({
    type: SiteSectionPayload,
    deprecationReason: 'Use sortSiteStructure.',
    description: 'Anchors must be sections (`type: site_section`). Organization admins only. REST: POST /v1/orgs/{organizationId}/sites/{siteId}/sections/{siteSectionId}/move.',
    args: { input: t.arg({ type: MoveSiteItemInput, required: true, description: 'The section and where to put it.' }) },
    resolve: async (_r, { input }, ctx) => ({ section: (await moveItem(ctx, input, 'site_section', ['site_section'])) as SiteSection }),
  }),

  addSectionGroupToSite: t.field({
    type: SiteSectionGroupPayload,
    description: 'Add a group of sections to the site, with its first sections. Organization admins only. REST: POST /v1/orgs/{organizationId}/sites/{siteId}/section-groups (201).',
    args: { input: t.arg({ type: AddSectionGroupToSiteInput, required: true, description: 'The site and the group.' }) },
    resolve: (_r, { input }, ctx) =>
      onSite(ctx, input, async (org, site, { sections, ...rest }) => ({ group: await addSectionGroupToSite(ctx, org, site, dropUndefined({ ...rest, sections: sections?.map(String) })) })),
  }),
  updateSiteSectionGroup: t.field({
    type: SiteSectionGroupPayload,
    description: 'Change a section group’s title or icon. Organization admins only. REST: PATCH /v1/orgs/{organizationId}/sites/{siteId}/section-groups/{siteSectionGroupId}.',
    args: { input: t.arg({ type: UpdateSiteSectionGroupInput, required: true, description: 'The group and what to change.' }) },
    resolve: (_r, { input }, ctx) =>
      onSite(ctx, input, async (org, site, { groupId, ...rest }) => ({ group: await updateSiteSectionGroup(ctx, org, site, String(groupId), dropUndefined(rest)) })),
  }),
  deleteSiteSectionGroup: t.field({
    type: DeletePayload,
    description: 'Its sections return to the top level, in its place. Organization admins only. Idempotent. REST: DELETE /v1/orgs/{organizationId}/sites/{siteId}/section-groups/{siteSectionGroupId}.',
    args: { input: t.arg({ type: SiteSectionGroupKeyInput, required: true, description: 'The group to delete.' }) },
    resolve: (_r, { input }, ctx) => deletion(ctx, input, input.groupId, deleteSiteSectionGroup),
  }),
  addSectionToGroup: t.field({
    type: SiteSectionGroupPayload,
    description: 'Put an existing section into a section group (at its end). Organization admins only. REST: POST /v1/orgs/{organizationId}/sites/{siteId}/section-groups/{siteSectionGroupId}/sections.',
    args: { input: t.arg({ type: SectionInGroupInput, required: true, description: 'The group and the section.' }) },
    resolve: (_r, { input }, ctx) =>
      onSite(ctx, input, async (org, site) => ({ group: await addSectionToGroup(ctx, org, site, String(input.groupId), { sectionId: String(input.sectionId) }) })),
  }),
  removeSectionFromGroup: t.field({
    type: DeletePayload,
    description: 'The section goes to the top level, right after the group. `deleted` false when it was not in the group. Organization admins only. REST: DELETE /v1/orgs/{organizationId}/sites/{siteId}/section-groups/{siteSectionGroupId}/sections/{siteSectionId}.',
    args: { input: t.arg({ type: SectionInGroupInput, required: true, description: 'The group and the section.' }) },
    resolve: async (_r, { input }, ctx) => {
      const k = ids(input);
      return { deleted: await removeSectionFromGroup(ctx, k.org, k.site, String(input.groupId), String(input.sectionId)), deletedId: String(input.sectionId) };
    },
  }),
  moveSiteSectionGroup: t.field({
    type: SiteSectionGroupPayload,
    deprecationReason: 'Use sortSiteStructure.',
    description: 'Anchors must be top-level sections or groups. Organization admins only. REST: POST /v1/orgs/{organizationId}/sites/{siteId}/section-groups/{siteSectionGroupId}/move.',
    args: { input: t.arg({ type: MoveSiteItemInput, required: true, description: 'The group and where to put it.' }) },
    resolve: async (_r, { input }, ctx) => ({ group: (await moveItem(ctx, input, 'site_section_group', ['site_section', 'site_section_group'])) as SiteSectionGroup }),
  }),

  addSpaceToSite: t.field({
    type: SiteSpacePayload,
    description: 'Show a space on the site as a site space (in a section, or at the root of a site without sections). Organization admins only. REST: POST /v1/orgs/{organizationId}/sites/{siteId}/site-spaces (201).',
    args: { input: t.arg({ type: AddSpaceToSiteInput, required: true, description: 'The site, the space and where.' }) },
    resolve: (_r, { input }, ctx) =>
      onSite(ctx, input, async (org, site, rest) => ({
        siteSpace: await addSpaceToSite(ctx, org, site, dropUndefined({ spaceId: String(rest.spaceId), sectionId: rest.sectionId ? String(rest.sectionId) : undefined })),
      })),
  }),
  updateSiteSpace: t.field({
    type: SiteSpacePayload,
    description: 'Change a site space’s path, condition or the space it shows. Organization admins only. REST: PATCH /v1/orgs/{organizationId}/sites/{siteId}/site-spaces/{siteSpaceId}.',
    args: { input: t.arg({ type: UpdateSiteSpaceInput, required: true, description: 'The site space and what to change.' }) },
    resolve: (_r, { input }, ctx) =>
      onSite(ctx, input, async (org, site, { siteSpaceId, spaceId, ...rest }) => ({
        siteSpace: await updateSiteSpace(ctx, org, site, String(siteSpaceId), dropUndefined({ ...rest, spaceId: spaceId == null ? undefined : String(spaceId) })),
      })),
  }),
  deleteSiteSpace: t.field({
    type: DeletePayload,
    description: 'Remove a site space from the site (the space stays). Organization admins only. Idempotent (deleted: false when already gone). REST: DELETE /v1/orgs/{organizationId}/sites/{siteId}/site-spaces/{siteSpaceId}.',
    args: { input: t.arg({ type: SiteSpaceKeyInput, required: true, description: 'The site space to remove.' }) },
    resolve: (_r, { input }, ctx) => deletion(ctx, input, input.siteSpaceId, deleteSiteSpace),
  }),
  moveSiteSpace: t.field({
    type: SiteSpacePayload,
    deprecationReason: 'Use sortSiteStructure.',
    description: 'Anchors must be site spaces (the site space moves into the anchor\'s section). Organization admins only. REST: POST /v1/orgs/{organizationId}/sites/{siteId}/site-spaces/{siteSpaceId}/move.',
    args: { input: t.arg({ type: MoveSiteItemInput, required: true, description: 'The site space and where to put it.' }) },
    resolve: async (_r, { input }, ctx) => ({ siteSpace: (await moveItem(ctx, input, 'site_space', ['site_space'])) as SiteSpace }),
  }),
  sortSiteStructure: t.field({
    type: SortSiteStructurePayload,
    description: 'Move a site space, section or section group before or after a sibling (REST: PATCH …/structure/sort). BAD_REQUEST for a bad anchor, CONFLICT when nothing would change. Organization admins only.',
    args: { input: t.arg({ type: SortSiteStructureInput, required: true, description: 'The item and its anchor.' }) },
    resolve: (_r, { input }, ctx) =>
      onSite(ctx, input, async (org, site) => ({ item: await loadItem(ctx, await sortSiteStructure(ctx, org, site, { item: pointer(input.item), position: movePosition(input.position) ?? {} })) })),
  }),
}));
