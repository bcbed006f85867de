// Sites: the Site, SiteSection, SiteSectionGroup and SiteSpace nodes, the published structure,
// queries and one mutation per documented operation.
//
// The whole structure in one request: `site(id:)` / `publishedSite(siteId:, shareKey:, visitor:)`
// are prisma fields, and every structural list below them (`sections`, `sectionGroups`,
// `siteSpaces`, `structure.items`, a section's `siteSpaces`, a group's `sections`, a site space's
// `space`) is planned into that one Prisma query with field-level `select`s (relationJoins: one
// SQL statement for the tree). Page trees come from the content area's batched revision loaders
// (`Space.revision { pages }`), so the statement count does not grow with the number of
// sections, site spaces or pages. Every relation of the site is selected with the same arguments
// wherever it appears, so the selections merge instead of falling back to extra queries.
//
// A visitor (`visitor: { claims }`) given to a root field travels with the rows it returns (a
// non-enumerable tag), and each list below filters by the conditions that visitor fails.
import { builder } from './builder.ts';
import { keysetConnection, type KeysetPage } from './cursors.ts';
import { DeletePayload, dropUndefined, loadById, loader, organizationOf, OWN_ORGANIZATION_ID } from './common.ts';
import type { Context } from './context.ts';
import type { Site, SiteSection, SiteSectionGroup, SiteSpace } from '../generated/prisma/client.ts';
import type { SiteAction } from '../auth/access.ts';
import { typeOfId } from '../lib/ids.ts';
import { parseInput } from '../lib/errors.ts';
import {
  createSite,
  deleteSite,
  getAdaptiveSchema,
  publishSite,
  putAdaptiveSchema,
  requireSiteList,
  siteListWhere,
  templateConditions,
  unpublishSite,
  updateSite,
} from '../domain/sites.ts';
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
import { isVisibleTo, orderSections, rootItems, VisitorInput, type VisitorClaims, type ItemRef, type StructureSnapshot } from '../domain/site-order.ts';

// ------------------------------------------------------------------ view tags and access memo

const VIEW = Symbol('docgraph.siteView');
type View = { claims?: VisitorClaims; shareKey?: string | null };

function viewOf(row: object): View | undefined {
  return (row as { [VIEW]?: View })[VIEW];
}
function tag<T extends object>(rows: T[], view: View | undefined): T[] {
  if (view) for (const r of rows) Object.defineProperty(r, VIEW, { value: view, enumerable: false, configurable: true, writable: true });
  return rows;
}
function visible<T extends { condition: string | null }>(rows: T[], view: View | undefined): T[] {
  return tag(
    rows.filter((r) => isVisibleTo(r.condition, view?.claims)),
    view,
  );
}

/** Sites this request has already been allowed to read (so node refetches and fallbacks need no second check). */
const authorize = (ctx: Context, siteId: string) => ctx.access.noteSiteRead(siteId);

function parseVisitor(raw: unknown): View | undefined {
  if (raw == null) return undefined;
  const v = parseInput(VisitorInput, raw, 'visitor');
  return { claims: v.claims ?? {} };
}

type SiteRow = Pick<Site, 'id' | 'organizationId' | 'hostname' | 'basename' | 'proxy' | 'published'>;

/** Where the published site lives: its proxy, else its custom hostname, else under the gateway. */
export function publishedBaseUrl(publicUrl: string, site: Pick<Site, 'id' | 'hostname' | 'basename' | 'proxy'>): string {
  if (site.proxy) return `https://${site.proxy}/`;
  if (site.hostname) return `https://${site.hostname}/${site.basename ? `${site.basename}/` : ''}`;
  return `${publicUrl}/sites/${site.id}/`;
}
function withShareKey(url: string, view: View | undefined) {
  return view?.shareKey ? `${url}?share=${encodeURIComponent(view.shareKey)}` : url;
}

const SITE_URL_SELECT = { id: true, organizationId: true, hostname: true, basename: true, proxy: true, published: true } as const;
const POS = { position: 'asc' } as const;
const ROOT_SPACES = { sectionId: null, space: { deletedAt: null } } as const;
const LIVE_SPACES = { space: { deletedAt: null } } as const;
const LIST_COMPLEXITY = { field: 1, multiplier: 2 };

/** The columns the list resolvers below read themselves (order, conditions), whatever the client selected. */
const NEEDS = {
  section: { id: true, siteId: true, groupId: true, position: true, createdAt: true, condition: true },
  group: { id: true, siteId: true, position: true, createdAt: true },
  siteSpace: { id: true, siteId: true, sectionId: true, position: true, createdAt: true, condition: true },
} as const;

/**
 * A planned relation query in select mode carries only what the client asked for (nothing, when
 * it asked for no field of that type): add the columns our resolvers need. Include mode loads
 * every column already.
 */
function ensure<Q>(query: Q, fields: Record<string, true>): Q {
  const q = query as { select?: Record<string, unknown> };
  return (q.select ? { ...q, select: { ...fields, ...q.select } } : query) as Q;
}

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

/** node(id:) and fallback loads: sites this request already read, else organization members allowed `action`. */
const guard = (model: StructureModel, action: SiteAction = 'site:read') => async (id: string, ctx: Context) => ({
  id: (await ctx.access.canSeeSite(await siteIdOf(ctx, model, id), action)) ? id : '',
});

// ------------------------------------------------------------------ enums and small types

export const SiteTypeEnum = builder.enumType('SiteType', {
  description: 'REST writes `legacy-basic` / `legacy-premium` with `-`.',
  values: {
    basic: { description: 'The free plan.' },
    premium: { description: 'Premium plan: custom domains, adaptive content, share links.' },
    ultimate: { description: 'Ultimate plan: everything premium has, plus visitor authentication.' },
    sponsored: { description: 'Sponsored (open-source) plan.' },
    legacy_basic: { description: 'A basic site of the former plans (REST `legacy-basic`).' },
    legacy_premium: { description: 'A premium site of the former plans (REST `legacy-premium`).' },
  } as const,
});
export const SiteVisibilityEnum = builder.enumType('SiteVisibility', {
  description: '`public` (open, indexed), `unlisted` (open, not indexed), `share_link` (REST `share-link`: a secret key), `visitor_auth` (REST `visitor-auth`: a visitor JWT).',
  values: {
    public: { description: 'Anyone may read it, and search engines index it.' },
    unlisted: { description: 'Anyone with the URL may read it; not indexed.' },
    share_link: { description: 'Readable with a share link key (REST `share-link`).' },
    visitor_auth: { description: 'Readable by visitors authenticated by the site owner (REST `visitor-auth`); members only here.' },
  } as const,
});
export const SiteAgentsContextEnum = builder.enumType('SiteAgentsContext', {
  description: 'Whether the site is offered to AI agents as context.',
  values: {
    excluded: { description: 'Not offered to agents.' },
    included: { description: 'Offered to agents.' },
  } as const,
});
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
const NewSiteContentEnum = builder.enumType('NewSiteContent', {
  description: 'Create a new space for the site: `sample` (with a few sample pages) or `empty`.',
  values: {
    sample: { description: 'A new space with a few sample pages.' },
    empty: { description: 'A new empty space.' },
  } as const,
});

const SiteProxy = builder.simpleObject('SiteProxy', {
  description: 'Where the site is served through a reverse proxy.',
  fields: (t) => ({
    origin: t.string({ description: 'Host and path the site is served at, e.g. `example.com/docs`.' }),
    target: t.string({ description: 'Where requests at the origin are proxied to.' }),
  }),
});
const SiteAdaptiveContent = builder.simpleObject('SiteAdaptiveContent', {
  description: 'Adaptive content: pages and sections shown by conditions on visitor claims.',
  fields: (t) => ({ enabled: t.boolean({ description: 'Whether conditions on visitor claims apply.' }) }),
});
const SiteUrls = builder.simpleObject('SiteUrls', {
  description: 'Where a site is: in this API, in the web app and, once published, on the web.',
  fields: (t) => ({
    location: t.string({ description: 'The site in the REST API (`/v1/orgs/{organizationId}/sites/{siteId}`).' }),
    app: t.string({ description: 'The site in the web app.' }),
    published: t.string({ nullable: true, description: 'Only when the site is published.' }),
  }),
});
const SiteItemUrls = builder.simpleObject('SiteItemUrls', {
  description: 'Where a section or site space is: in this API and, once the site is published, on the web.',
  fields: (t) => ({
    location: t.string({ description: 'The item in the REST API (a GET on it answers the item).' }),
    published: t.string({ nullable: true, description: 'Only when the site is published.' }),
  }),
});
export const SiteAdaptiveSchemaRef = builder.simpleObject('SiteAdaptiveSchema', {
  description: 'The visitor schema of a site with adaptive content: a JSON Schema (draft-07) of boolean claims.',
  fields: (t) => ({
    jsonSchema: t.field({ type: 'JSON', description: 'The JSON Schema of the visitor claims that conditions may use.' }),
    updatedAt: t.field({ type: 'DateTime', description: 'When the schema was last replaced.' }),
  }),
});
const SiteAdaptiveTemplateCondition = builder.simpleObject('SiteAdaptiveTemplateCondition', {
  description: 'A ready-made condition on the visitor claims of the site\'s schema.',
  fields: (t) => ({
    condition: t.string({ description: 'The condition expression, e.g. `visitor.claims.isBetaUser`.' }),
    description: t.string({ description: 'What the condition selects, in words.' }),
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
    id: t.exposeID('id', { description: 'Its id (`sitesp_…`, `sitesc_…` or `sitesg_…`).' }),
    siteId: t.exposeString('siteId', { description: 'The site it belongs to (`site_…`).' }),
    position: t.exposeInt('position', { description: 'Index among the siblings of its container (dense, from 0).' }),
  }),
});

// ------------------------------------------------------------------ SiteSpace

export const SiteSpaceRef = builder.prismaNode('SiteSpace', {
  id: { field: 'id' },
  interfaces: [SiteStructureItemRef],
  nullable: true,
  findUnique: guard('siteSpace'),
  description: 'A space shown on a site, at the root level or in a section (a "variant" of that section).',
  fields: (t) => ({
    site: t.relation('site'),
    sectionId: t.exposeString('sectionId', { nullable: true, description: 'Null at the root level.' }),
    section: t.relation('section', { nullable: true }),
    spaceId: t.exposeString('spaceId'),
    space: t.relation('space', { description: 'The content it shows; nest `revision { pages { … } }` for its page tree.' }),
    path: t.exposeString('path'),
    condition: t.exposeString('condition', { nullable: true, description: 'Expression over `visitor.claims` deciding who sees it.' }),
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
          published: site.published ? withShareKey(`${publishedBaseUrl(ctx.config.publicUrl, site)}${path}`, viewOf(s)) : null,
        };
      },
    }),
  }),
});

// ------------------------------------------------------------------ SiteSection

export const SiteSectionRef = builder.prismaNode('SiteSection', {
  id: { field: 'id' },
  interfaces: [SiteStructureItemRef],
  nullable: true,
  findUnique: guard('siteSection'),
  description: 'A section of a site: a top-level entry (or one in a section group) showing one or more site spaces.',
  fields: (t) => ({
    site: t.relation('site'),
    title: t.exposeString('title'),
    description: t.exposeString('description', { nullable: true }),
    path: t.exposeString('path'),
    condition: t.exposeString('condition', { nullable: true, description: 'Expression over `visitor.claims` deciding who sees it.' }),
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
      resolve: (s) => visible(s.siteSpaces as SiteSpace[], viewOf(s)),
    }),
    urls: t.field({
      description: 'Where the section is: this API and, once the site is published, the web.',
      type: SiteItemUrls,
      select: { site: { select: SITE_URL_SELECT } },
      resolve: (s, _a, ctx) => {
        const site = s.site as SiteRow;
        return {
          location: `${ctx.config.publicUrl}/v1/orgs/${site.organizationId}/sites/${site.id}/sections/${s.id}`,
          published: site.published ? withShareKey(`${publishedBaseUrl(ctx.config.publicUrl, site)}${s.path}/`, viewOf(s)) : null,
        };
      },
    }),
  }),
});

// ------------------------------------------------------------------ SiteSectionGroup

export const SiteSectionGroupRef = builder.prismaNode('SiteSectionGroup', {
  id: { field: 'id' },
  interfaces: [SiteStructureItemRef],
  nullable: true,
  findUnique: guard('siteSectionGroup'),
  description: 'A group of sections at the top level of a site.',
  fields: (t) => ({
    site: t.relation('site'),
    title: t.exposeString('title'),
    icon: t.exposeString('icon', { nullable: true }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    sections: t.field({
      type: [SiteSectionRef],
      description: 'Its sections in order (with a visitor: the ones that visitor sees).',
      complexity: LIST_COMPLEXITY,
      select: (_a, _c, nested) => ({ sections: ensure(nested({ orderBy: POS }), NEEDS.section) }),
      resolve: (g) => visible(g.sections as SiteSection[], viewOf(g)),
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

/** With a visitor, a group shows when at least one of its sections does. */
function visibleGroups<G extends SiteSectionGroup>(groups: G[], sections: Array<Pick<SiteSection, 'groupId' | 'condition'>>, view: View | undefined): G[] {
  if (!view?.claims) return tag(groups, view);
  const shown = new Set(sections.filter((s) => s.groupId && isVisibleTo(s.condition, view.claims)).map((s) => s.groupId));
  return tag(
    groups.filter((g) => shown.has(g.id)),
    view,
  );
}

// ------------------------------------------------------------------ Site

/** A site's snapshot for the ordered connections, once per request. */
function snapshotOf(ctx: Context, siteId: string): Promise<StructureSnapshot> {
  return loader<string, StructureSnapshot>(ctx, 'site.readerSnapshot', (ids) => Promise.all(ids.map((id) => readerSnapshot(ctx.prisma, id)))).load(siteId);
}

/** Default site space's space id of each site (the contract's `defaultSpace`); two statements per batch. */
function defaultSpaceIdOf(ctx: Context, site: Pick<Site, 'id' | 'defaultSiteSpaceId' | 'defaultSiteSectionId'>): Promise<string | null> {
  return loader<string, string | null>(ctx, 'site.defaultSpace', async (keys) => {
    const parsed = keys.map((k) => {
      const [, siteSpace, section] = k.split('|');
      return { siteSpace: siteSpace || null, section: section || null };
    });
    const sectionIds = parsed.map((p) => p.section).filter((x): x is string => !!x);
    const sections = sectionIds.length ? await ctx.prisma.siteSection.findMany({ where: { id: { in: sectionIds } }, select: { id: true, defaultSiteSpaceId: true } }) : [];
    const sectionDefault = new Map(sections.map((s) => [s.id, s.defaultSiteSpaceId]));
    const targets = parsed.map((p) => (p.section ? (sectionDefault.get(p.section) ?? null) : p.siteSpace));
    const ids = targets.filter((x): x is string => !!x);
    const rows = ids.length ? await ctx.prisma.siteSpace.findMany({ where: { id: { in: ids } }, select: { id: true, spaceId: true } }) : [];
    const spaceOf = new Map(rows.map((r) => [r.id, r.spaceId]));
    return targets.map((t) => (t ? (spaceOf.get(t) ?? null) : null));
  }).load(`${site.id}|${site.defaultSiteSpaceId ?? ''}|${site.defaultSiteSectionId ?? ''}`);
}

// ------------------------------------------------------------------ keyset pages in reading order

/**
 * Reading order as a sort key: each level's (position, createdAt, id), outermost first, padded to
 * one width, so a cursor still finds its place after the item it names is moved or deleted.
 */
type Row = { id: string; position: number; createdAt: Date };
const PAD = [-1, 0, ''];
const levelKey = (r: Row | undefined) => (r ? [r.position, r.createdAt.getTime(), r.id] : PAD);
const READING_ORDER = Array.from({ length: 10 }, (_, i) => [`k${i}`, 'asc'] as const);

function sectionKey(snap: StructureSnapshot, id: string): unknown[] {
  const s = snap.sections.get(id)!;
  const group = s.groupId ? snap.groups.get(s.groupId) : undefined;
  return group ? [...levelKey(group), ...levelKey(s)] : [...levelKey(s), ...PAD];
}
function siteSpaceKey(snap: StructureSnapshot, id: string): unknown[] {
  const ss = snap.siteSpaces.get(id)!;
  if (!ss.sectionId) return [0, ...levelKey(ss), ...PAD, ...PAD];
  return [1, ...sectionKey(snap, ss.sectionId), ...levelKey(ss)];
}
const padTo10 = (k: unknown[]) => [...k, ...Array(10 - k.length).fill('')];

/** The page of `ids` (keyed by `keyOf`), then one `findMany` with the planned selection for its rows. */
async function findManyInOrder<T extends { id: string }>(findMany: (args: object) => Promise<T[]>, page: KeysetPage, ids: string[], keyOf: (id: string) => unknown[]): Promise<T[]> {
  const slice = page.array(ids, READING_ORDER, (id) => padTo10(keyOf(id)));
  if (slice.length === 0) return [];
  const { select, include } = page.selection as { select?: Record<string, unknown>; include?: unknown };
  const rows = await findMany({ ...(select ? { select: { ...select, id: true } } : {}), ...(include ? { include } : {}), where: { id: { in: slice } } });
  const byId = new Map(rows.map((r) => [r.id, r]));
  const keys = new Map(slice.map((id) => [id, padTo10(keyOf(id))]));
  page.keyOf((row: T) => keys.get(row.id)!);
  return slice.map((id) => byId.get(id)).filter((r): r is T => !!r);
}

export const SiteRef = builder.prismaNode('Site', {
  id: { field: 'id' },
  nullable: true,
  findUnique: async (id, ctx) => ({ id: (await ctx.access.canSeeSite(id)) ? id : '' }),
  description: 'A published docs site: sections, section groups and site spaces, each showing a space.',
  fields: (t) => ({
    organizationId: t.exposeString('organizationId'),
    organization: t.relation('organization'),
    type: t.expose('type', { type: SiteTypeEnum }),
    title: t.exposeString('title'),
    visibility: t.expose('visibility', { type: SiteVisibilityEnum }),
    published: t.exposeBoolean('published', { description: 'Read-only: changed by publishSite / unpublishSite.' }),
    basename: t.exposeString('basename', { nullable: true }),
    hostname: t.exposeString('hostname', { nullable: true }),
    proxy: t.field({
      type: SiteProxy,
      nullable: true,
      description: 'The reverse proxy the site is served through; null without one.',
      resolve: (s, _a, ctx) => (s.proxy ? { origin: s.proxy, target: `${ctx.config.publicUrl}/sites/${s.id}/` } : null),
    }),
    adaptiveContent: t.field({ type: SiteAdaptiveContent, description: 'Adaptive content settings.', resolve: (s) => ({ enabled: s.adaptiveContentEnabled }) }),
    agentsContext: t.expose('agentsContext', { type: SiteAgentsContextEnum }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
    defaultSiteSectionId: t.exposeString('defaultSiteSectionId', { nullable: true }),
    defaultSiteSpaceId: t.exposeString('defaultSiteSpaceId', { nullable: true, description: 'Default root-level site space (sites without sections).' }),
    defaultSpaceId: t.string({
      nullable: true,
      description: 'Space id of the site\'s default site space (of the default section, for sites with sections).',
      resolve: (s, _a, ctx) => defaultSpaceIdOf(ctx, s),
    }),
    siteSpaceCount: t.relationCount('siteSpaces', { where: LIVE_SPACES, description: 'Number of site spaces, in all sections.' }),
    urls: t.field({
      type: SiteUrls,
      description: 'Where the site is: this API, the web app, and the published site.',
      resolve: (s, _a, ctx) => ({
        location: `${ctx.config.publicUrl}/v1/orgs/${s.organizationId}/sites/${s.id}`,
        app: `${ctx.config.appUrl}/o/${s.organizationId}/sites/${s.id}`,
        published: s.published ? withShareKey(publishedBaseUrl(ctx.config.publicUrl, s), viewOf(s)) : null,
      }),
    }),
    adaptiveSchema: t.field({
      type: SiteAdaptiveSchemaRef,
      nullable: true,
      description: 'The visitor schema (organization members only); null before one is set.',
      resolve: async (s, _a, ctx) => {
        await ctx.access.requireSite(s, 'site:read');
        return s.adaptiveSchema == null ? null : { jsonSchema: s.adaptiveSchema, updatedAt: s.adaptiveSchemaUpdatedAt ?? s.updatedAt };
      },
    }),
    templateConditions: t.field({
      type: [SiteAdaptiveTemplateCondition],
      description: 'One condition per boolean claim of the visitor schema (organization members only).',
      resolve: async (s, _a, ctx) => {
        await ctx.access.requireSite(s, 'site:read');
        return templateConditions(s.adaptiveSchema);
      },
    }),

    // The structure, planned into the parent query (see the header).
    structure: t.field({
      type: SiteStructureRef,
      description: 'The top level in order, as the published site shows it. With a visitor, what that visitor sees.',
      select: (_a, _c, nested) => ({
        sections: ensure(nested({ orderBy: POS }, ['items'], 'SiteSection'), NEEDS.section),
        sectionGroups: ensure(nested({ orderBy: POS }, ['items'], 'SiteSectionGroup'), NEEDS.group),
        siteSpaces: ensure(nested({ where: ROOT_SPACES, orderBy: POS }, ['items'], 'SiteSpace'), NEEDS.siteSpace),
      }),
      resolve: (site) => {
        const view = viewOf(site);
        const sections = site.sections as SiteSection[];
        const groups = site.sectionGroups as SiteSectionGroup[];
        const spaces = site.siteSpaces as SiteSpace[];
        const type = sections.length + groups.length > 0 ? 'sections' : 'siteSpaces';
        const items =
          type === 'sections'
            ? rootItems(visible(sections.filter((s) => !s.groupId), view), visibleGroups(groups, sections, view), []).map((e) => e.item)
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
      resolve: (site) => visible(orderSections(site.sections as SiteSection[], site.sectionGroups), viewOf(site)),
    }),
    sectionGroups: t.field({
      type: [SiteSectionGroupRef],
      description: 'Section groups in order. With a visitor, only groups with a section it sees.',
      complexity: LIST_COMPLEXITY,
      select: (_a, _c, nested) => ({
        sectionGroups: ensure(nested({ orderBy: POS }), NEEDS.group),
        sections: { orderBy: POS, select: { id: true, groupId: true, condition: true } },
      }),
      resolve: (site) => visibleGroups(site.sectionGroups as SiteSectionGroup[], site.sections, viewOf(site)),
    }),
    siteSpaces: t.field({
      type: [SiteSpaceRef],
      description: 'Root-level site spaces in order (sites without sections); sections carry their own.',
      complexity: LIST_COMPLEXITY,
      select: (_a, _c, nested) => ({ siteSpaces: ensure(nested({ where: ROOT_SPACES, orderBy: POS }), NEEDS.siteSpace) }),
      resolve: (site) => visible(site.siteSpaces as SiteSpace[], viewOf(site)),
    }),

    // Paged lists (the REST listings): reading order, cursors are item ids.
    sectionsConnection: keysetConnection(t, {
      type: SiteSectionRef,
      list: 'Site.sections',
      description: 'Every section in reading order, paged.',
      resolve: async (page, site, _a, ctx) => {
        const snap = await snapshotOf(ctx, site.id);
        return tag(await findManyInOrder((a) => ctx.prisma.siteSection.findMany(a), page, orderedSectionIds(snap), (id) => sectionKey(snap, id)), viewOf(site));
      },
      totalCount: async (site, _a, ctx) => orderedSectionIds(await snapshotOf(ctx, site.id)).length,
    }),
    sectionGroupsConnection: keysetConnection(t, {
      type: SiteSectionGroupRef,
      list: 'Site.sectionGroups',
      description: 'Section groups in order, paged.',
      resolve: async (page, site, _a, ctx) => {
        const snap = await snapshotOf(ctx, site.id);
        const ids = [...snap.groups.keys()];
        return tag(await findManyInOrder((a) => ctx.prisma.siteSectionGroup.findMany(a), page, ids, (id) => levelKey(snap.groups.get(id))), viewOf(site));
      },
      totalCount: async (site, _a, ctx) => (await snapshotOf(ctx, site.id)).groups.size,
    }),
    siteSpacesConnection: keysetConnection(t, {
      type: SiteSpaceRef,
      list: 'Site.siteSpaces',
      description: 'Every site space in reading order (root level, then section by section), paged.',
      args: { default: t.arg.boolean({ description: 'true: only default site spaces (one per section, or the root default); false: only the others.' }) },
      resolve: async (page, site, args, ctx) => {
        const snap = await snapshotOf(ctx, site.id);
        const ids = orderedSiteSpaceIds(snap, args.default ?? undefined);
        return tag(await findManyInOrder((a) => ctx.prisma.siteSpace.findMany(a), page, ids, (id) => siteSpaceKey(snap, id)), viewOf(site));
      },
      totalCount: async (site, args, ctx) => orderedSiteSpaceIds(await snapshotOf(ctx, site.id), args.default ?? undefined).length,
    }),
  }),
});

// ------------------------------------------------------------------ Organization.sites

type SiteFilterArgs = { space?: string | null; title?: string | null; published?: boolean | null; type?: readonly string[] | null };
const siteFilterOf = (args: SiteFilterArgs) => ({
  ...(args.space != null ? { space: args.space } : {}),
  ...(args.title != null ? { title: args.title } : {}),
  ...(args.published != null ? { published: args.published } : {}),
  ...(args.type != null ? { type: args.type } : {}),
});

builder.prismaObjectField('Organization', 'sites', (t) =>
  keysetConnection(t, {
    type: SiteRef,
    list: 'Organization.sites',
    description: 'Sites of the organization, oldest first (members with a role; FORBIDDEN for guests).',
    args: {
      space: t.arg.string({ description: 'Only sites showing this space.' }),
      title: t.arg.string({ description: 'Title contains (case-insensitive).' }),
      published: t.arg.boolean({ description: 'Only published (true) or unpublished (false) sites.' }),
      type: t.arg({ type: [SiteTypeEnum], description: 'Only sites of these types.' }),
    },
    resolve: async (page, org, args, ctx) => {
      const filter = await requireSiteList(ctx, org.id, siteFilterOf(args));
      return ctx.prisma.site.findMany(page.prisma({ where: siteListWhere(org.id, filter), orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] }) as never);
    },
    totalCount: async (org, args, ctx) => {
      const filter = await requireSiteList(ctx, org.id, siteFilterOf(args));
      return ctx.prisma.site.count({ where: siteListWhere(org.id, filter) });
    },
  }),
);

// ------------------------------------------------------------------ queries

builder.queryFields((t) => ({
  site: t.prismaField({
    type: SiteRef,
    description: 'A site, for members of its organization. `visitor: { claims }` previews what that visitor would see.',
    args: {
      id: t.arg.id({ required: true, description: 'The site (`site_…`).' }),
      organizationId: t.arg.id({ description: 'When given, the site must belong to it (REST paths).' }),
      visitor: t.arg({ type: 'JSON', description: 'Preview as this visitor: `{ claims: { … } }` for adaptive content.' }),
    },
    resolve: async (query, _r, args, ctx) => {
      const view = parseVisitor(args.visitor);
      const site = await ctx.prisma.site.findUnique({ ...query, where: { id: String(args.id) } });
      await ctx.access.requireSite(site, 'site:read', args.organizationId ? String(args.organizationId) : undefined);
      authorize(ctx, site!.id);
      return tag([site!], view)[0];
    },
  }),
  publishedSite: t.prismaField({
    type: SiteRef,
    description:
      'A site as its audience reads it: for organization members (a preview, published or not), or anyone when it is published and public/unlisted, or share-link with an active `shareKey`. A given `shareKey` must be an active key of the site. `visitor: { claims }` evaluates every condition and leaves out what that visitor would not see.',
    args: {
      siteId: t.arg.id({ required: true, description: 'The site (`site_…`).' }),
      organizationId: t.arg.id({ description: 'When given, the site must belong to it (REST paths).' }),
      shareKey: t.arg.string({ description: 'The key of an active share link, for a `share_link` site read by someone who is not a member.' }),
      visitor: t.arg({ type: 'JSON', description: 'The visitor: `{ claims: { … } }` deciding adaptive content (what they see).' }),
    },
    resolve: async (query, _r, args, ctx) => {
      const view = parseVisitor(args.visitor) ?? {};
      const site = await ctx.prisma.site.findUnique({ ...query, where: { id: String(args.siteId) } });
      const reader = await ctx.access.siteReader(site, { organizationId: args.organizationId ? String(args.organizationId) : undefined, shareKey: args.shareKey });
      authorize(ctx, site!.id);
      return tag([site!], { ...view, shareKey: reader.shareKey })[0];
    },
  }),
  siteAdaptiveSchema: t.field({
    type: SiteAdaptiveSchemaRef,
    description: 'The visitor schema of a site; NOT_FOUND before one is set.',
    args: {
      siteId: t.arg.id({ required: true, description: 'The site (`site_…`).' }),
      organizationId: t.arg.id({ description: 'When given, the site must belong to it (REST paths).' }),
    },
    resolve: (_r, args, ctx) => getAdaptiveSchema(ctx, args.organizationId ? String(args.organizationId) : undefined, String(args.siteId)),
  }),
}));

// ------------------------------------------------------------------ mutations

const SitePayload = builder.simpleObject('SitePayload', {
  description: 'The site a mutation created or changed.',
  fields: (t) => ({ site: t.field({ type: SiteRef, description: 'The site as it is now.' }) }),
});
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
const SiteAdaptiveSchemaPayload = builder.simpleObject('SiteAdaptiveSchemaPayload', {
  description: 'The visitor schema after the change.',
  fields: (t) => ({ adaptiveSchema: t.field({ type: SiteAdaptiveSchemaRef, description: 'The schema as it is now.' }) }),
});
const SortSiteStructurePayload = builder.simpleObject('SortSiteStructurePayload', {
  description: 'The item a sort moved.',
  fields: (t) => ({ item: t.field({ type: SiteStructureItemRef, description: 'The moved item.' }) }),
});

/** The site of a mutation, and the organization its REST path names (undefined from GraphQL callers who omit it). */
const ids = (input: { organizationId?: string | number | null; siteId: string | number }) => ({
  org: input.organizationId == null ? undefined : String(input.organizationId),
  site: String(input.siteId),
});

const CreateSiteInput = builder.inputType('CreateSiteInput', {
  description: 'The site to create.',
  fields: (t) => ({
    organizationId: t.id({ required: true, description: 'Organization of the site (`org_…`).' }),
    type: t.field({ type: SiteTypeEnum, description: 'Default basic.' }),
    title: t.string({ description: '2 to 128 characters; default "Untitled site".' }),
    visibility: t.field({ type: SiteVisibilityEnum, description: 'Who may read it once published.' }),
    spaceIds: t.idList({ description: 'Spaces to show at the root level, in order (REST `spaces: [ids]`).' }),
    newSpace: t.field({ type: NewSiteContentEnum, description: 'Create a new space for the site instead (REST `spaces: "sample" | "empty"`).' }),
  }),
});

const SiteAdaptiveContentInput = builder.inputType('SiteAdaptiveContentInput', { description: 'Adaptive content settings.', fields: (t) => ({ enabled: t.boolean({ required: true, description: 'Whether pages may vary with visitor claims.' }) }) });
const UpdateSiteInput = builder.inputType('UpdateSiteInput', {
  description: 'Omitted fields are kept. `published` is read-only (publishSite / unpublishSite).',
  fields: (t) => ({
    organizationId: t.id({ description: OWN_ORGANIZATION_ID }), siteId: t.id({ required: true, description: 'The site (`site_…`).' }),
    title: t.string({ description: '2 to 128 characters.' }),
    visibility: t.field({ type: SiteVisibilityEnum, description: 'Who may read the published site.' }),
    basename: t.string({ description: 'Path segment of the site under the organization’s address.' }),
    adaptiveContent: t.field({ type: SiteAdaptiveContentInput, description: 'Adaptive content on or off.' }),
    agentsContext: t.field({ type: SiteAgentsContextEnum, description: 'What AI agents may read of the site.' }),
    defaultSiteSpace: t.id({ description: 'Default root-level site space; with sections, the default of the default section.' }),
    defaultSiteSection: t.id({ description: 'Section shown first (`sitesc_…`).' }),
    proxy: t.string({ description: 'Host and path (e.g. `example.com/docs`); null removes the proxy.' }),
  }),
});
const SiteKeyInput = builder.inputType('SiteKeyInput', { description: 'Names one site.', fields: (t) => ({ organizationId: t.id({ description: OWN_ORGANIZATION_ID }), siteId: t.id({ required: true, description: 'The site (`site_…`).' }) }) });

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
const UpdateSiteAdaptiveSchemaInput = builder.inputType('UpdateSiteAdaptiveSchemaInput', {
  description: 'The site and its visitor schema.',
  fields: (t) => ({ organizationId: t.id({ description: OWN_ORGANIZATION_ID }), siteId: t.id({ required: true, description: 'The site (`site_…`).' }), jsonSchema: t.field({ type: 'JSON', required: true, description: 'A JSON Schema object describing visitor claims (`type: object` with `properties`).' }) }),
});

async function loadItem(ctx: Context, ref: ItemRef) {
  if (ref.type === 'site_section') return ctx.prisma.siteSection.findUniqueOrThrow({ where: { id: ref.id } });
  if (ref.type === 'site_section_group') return ctx.prisma.siteSectionGroup.findUniqueOrThrow({ where: { id: ref.id } });
  return ctx.prisma.siteSpace.findUniqueOrThrow({ where: { id: ref.id } });
}

/** Mark the site readable for this request and return `value` (mutation payloads resolve nested fields with fallbacks). */
function done<T>(ctx: Context, siteId: string, value: T): T {
  authorize(ctx, siteId);
  return value;
}

builder.mutationFields((t) => ({
  createSite: t.field({
    type: SitePayload,
    description: 'REST: POST /v1/orgs/{organizationId}/sites (201). Needs the admin role.',
    args: { input: t.arg({ type: CreateSiteInput, required: true, description: 'The site to create.' }) },
    resolve: async (_r, { input }, ctx) => {
      const { organizationId, spaceIds, newSpace, type, visibility, ...rest } = input;
      const site = await createSite(
        ctx,
        String(organizationId),
        dropUndefined({ ...rest, type: type ?? undefined, visibility: visibility ?? undefined, spaceIds: spaceIds?.map(String), newSpace: newSpace ?? undefined }),
      );
      return done(ctx, site.id, { site });
    },
  }),
  updateSite: t.field({
    type: SitePayload,
    description: 'Change a site’s settings (title, visibility, proxy, defaults…). Organization admins only. REST: PATCH /v1/orgs/{organizationId}/sites/{siteId}.',
    args: { input: t.arg({ type: UpdateSiteInput, required: true, description: 'The site and what to change.' }) },
    resolve: async (_r, { input }, ctx) => {
      const { organizationId, siteId, visibility, ...rest } = input;
      const k = ids({ organizationId, siteId });
      const site = await updateSite(ctx, k.org, k.site, dropUndefined({ ...rest, visibility: visibility ?? undefined }));
      return done(ctx, site.id, { site });
    },
  }),
  deleteSite: t.field({
    type: DeletePayload,
    description: 'Delete a site with its structure and share links (its spaces stay). Idempotent (deleted: false when already gone). Organization admins only. REST: DELETE /v1/orgs/{organizationId}/sites/{siteId}.',
    args: { input: t.arg({ type: SiteKeyInput, required: true, description: 'The site to delete.' }) },
    resolve: async (_r, { input }, ctx) => {
      const org = await organizationOf(ctx, input.organizationId, 'site', input.siteId);
      return { deleted: org !== null && (await deleteSite(ctx, org, String(input.siteId))), deletedId: String(input.siteId) };
    },
  }),
  publishSite: t.field({
    type: SitePayload,
    description: 'Make the site reachable by its audience (REST: POST …/sites/{siteId}/publish). BAD_REQUEST when it has no content. Organization admins only.',
    args: { input: t.arg({ type: SiteKeyInput, required: true, description: 'The site to publish.' }) },
    resolve: async (_r, { input }, ctx) => {
      const k = ids(input);
      return done(ctx, k.site, { site: await publishSite(ctx, k.org, k.site) });
    },
  }),
  unpublishSite: t.field({
    type: SitePayload,
    description: 'Take the site offline for its audience (members can still preview it). Organization admins only. REST: POST /v1/orgs/{organizationId}/sites/{siteId}/unpublish.',
    args: { input: t.arg({ type: SiteKeyInput, required: true, description: 'The site to unpublish.' }) },
    resolve: async (_r, { input }, ctx) => {
      const k = ids(input);
      return done(ctx, k.site, { site: await unpublishSite(ctx, k.org, k.site) });
    },
  }),
  updateSiteAdaptiveSchema: t.field({
    type: SiteAdaptiveSchemaPayload,
    description: 'Set the visitor schema (REST: PUT …/adaptive-schema). BAD_REQUEST with the reason for a schema of another shape. Organization admins only.',
    args: { input: t.arg({ type: UpdateSiteAdaptiveSchemaInput, required: true, description: 'The site and its visitor schema.' }) },
    resolve: async (_r, { input }, ctx) => {
      const k = ids(input);
      return { adaptiveSchema: await putAdaptiveSchema(ctx, k.org, k.site, { jsonSchema: input.jsonSchema }) };
    },
  }),

  addSectionToSite: t.field({
    type: SiteSectionPayload,
    description: 'Add a section showing a space (the section and its first site space). Organization admins only. REST: POST /v1/orgs/{organizationId}/sites/{siteId}/sections (201).',
    args: { input: t.arg({ type: AddSectionToSiteInput, required: true, description: 'The site, the space and the section’s settings.' }) },
    resolve: async (_r, { input }, ctx) => {
      const { organizationId, siteId, ...rest } = input;
      const k = ids({ organizationId, siteId });
      return done(ctx, k.site, { section: await addSectionToSite(ctx, k.org, k.site, dropUndefined(rest)) });
    },
  }),
  updateSiteSection: t.field({
    type: SiteSectionPayload,
    description: 'Change a section’s title, path, icon, description, condition or default site space. Organization admins only. REST: PATCH /v1/orgs/{organizationId}/sites/{siteId}/sections/{siteSectionId}.',
    args: { input: t.arg({ type: UpdateSiteSectionInput, required: true, description: 'The section and what to change.' }) },
    resolve: async (_r, { input }, ctx) => {
      const { organizationId, siteId, sectionId, ...rest } = input;
      const k = ids({ organizationId, siteId });
      return done(ctx, k.site, { section: await updateSiteSection(ctx, k.org, k.site, String(sectionId), dropUndefined(rest)) });
    },
  }),
  deleteSiteSection: t.field({
    type: DeletePayload,
    description: 'Remove a section and its site spaces from the site (the spaces stay). Organization admins only. Idempotent (deleted: false when already gone). REST: DELETE /v1/orgs/{organizationId}/sites/{siteId}/sections/{siteSectionId}.',
    args: { input: t.arg({ type: SiteSectionKeyInput, required: true, description: 'The section to remove.' }) },
    resolve: async (_r, { input }, ctx) => {
      const k = ids(input);
      return { deleted: await deleteSiteSection(ctx, k.org, k.site, String(input.sectionId)), deletedId: String(input.sectionId) };
    },
  }),
  moveSiteSection: t.field({
    type: SiteSectionPayload,
    deprecationReason: 'Use sortSiteStructure.',
    description: 'Anchors must be sections (`type: site_section`). Organization admins only. REST: POST /v1/orgs/{organizationId}/sites/{siteId}/sections/{siteSectionId}/move.',
    args: { input: t.arg({ type: MoveSiteItemInput, required: true, description: 'The section and where to put it.' }) },
    resolve: async (_r, { input }, ctx) => {
      const k = ids(input);
      const ref = await moveStructureItem(ctx, k.org, k.site, { type: 'site_section', id: String(input.id) }, movePosition(input.position), ['site_section']);
      return done(ctx, k.site, { section: (await loadItem(ctx, ref)) as SiteSection });
    },
  }),

  addSectionGroupToSite: t.field({
    type: SiteSectionGroupPayload,
    description: 'Add a group of sections to the site, with its first sections. Organization admins only. REST: POST /v1/orgs/{organizationId}/sites/{siteId}/section-groups (201).',
    args: { input: t.arg({ type: AddSectionGroupToSiteInput, required: true, description: 'The site and the group.' }) },
    resolve: async (_r, { input }, ctx) => {
      const { organizationId, siteId, sections, ...rest } = input;
      const k = ids({ organizationId, siteId });
      return done(ctx, k.site, { group: await addSectionGroupToSite(ctx, k.org, k.site, dropUndefined({ ...rest, sections: sections?.map(String) })) });
    },
  }),
  updateSiteSectionGroup: t.field({
    type: SiteSectionGroupPayload,
    description: 'Change a section group’s title or icon. Organization admins only. REST: PATCH /v1/orgs/{organizationId}/sites/{siteId}/section-groups/{siteSectionGroupId}.',
    args: { input: t.arg({ type: UpdateSiteSectionGroupInput, required: true, description: 'The group and what to change.' }) },
    resolve: async (_r, { input }, ctx) => {
      const { organizationId, siteId, groupId, ...rest } = input;
      const k = ids({ organizationId, siteId });
      return done(ctx, k.site, { group: await updateSiteSectionGroup(ctx, k.org, k.site, String(groupId), dropUndefined(rest)) });
    },
  }),
  deleteSiteSectionGroup: t.field({
    type: DeletePayload,
    description: 'Its sections return to the top level, in its place. Organization admins only. Idempotent. REST: DELETE /v1/orgs/{organizationId}/sites/{siteId}/section-groups/{siteSectionGroupId}.',
    args: { input: t.arg({ type: SiteSectionGroupKeyInput, required: true, description: 'The group to delete.' }) },
    resolve: async (_r, { input }, ctx) => {
      const k = ids(input);
      return { deleted: await deleteSiteSectionGroup(ctx, k.org, k.site, String(input.groupId)), deletedId: String(input.groupId) };
    },
  }),
  addSectionToGroup: t.field({
    type: SiteSectionGroupPayload,
    description: 'Put an existing section into a section group (at its end). Organization admins only. REST: POST /v1/orgs/{organizationId}/sites/{siteId}/section-groups/{siteSectionGroupId}/sections.',
    args: { input: t.arg({ type: SectionInGroupInput, required: true, description: 'The group and the section.' }) },
    resolve: async (_r, { input }, ctx) => {
      const k = ids(input);
      return done(ctx, k.site, { group: await addSectionToGroup(ctx, k.org, k.site, String(input.groupId), { sectionId: String(input.sectionId) }) });
    },
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
    resolve: async (_r, { input }, ctx) => {
      const k = ids(input);
      const ref = await moveStructureItem(ctx, k.org, k.site, { type: 'site_section_group', id: String(input.id) }, movePosition(input.position), ['site_section', 'site_section_group']);
      return done(ctx, k.site, { group: (await loadItem(ctx, ref)) as SiteSectionGroup });
    },
  }),

  addSpaceToSite: t.field({
    type: SiteSpacePayload,
    description: 'Show a space on the site as a site space (in a section, or at the root of a site without sections). Organization admins only. REST: POST /v1/orgs/{organizationId}/sites/{siteId}/site-spaces (201).',
    args: { input: t.arg({ type: AddSpaceToSiteInput, required: true, description: 'The site, the space and where.' }) },
    resolve: async (_r, { input }, ctx) => {
      const { organizationId, siteId, ...rest } = input;
      const k = ids({ organizationId, siteId });
      return done(ctx, k.site, { siteSpace: await addSpaceToSite(ctx, k.org, k.site, dropUndefined({ spaceId: String(rest.spaceId), sectionId: rest.sectionId ? String(rest.sectionId) : undefined })) });
    },
  }),
  updateSiteSpace: t.field({
    type: SiteSpacePayload,
    description: 'Change a site space’s path, condition or the space it shows. Organization admins only. REST: PATCH /v1/orgs/{organizationId}/sites/{siteId}/site-spaces/{siteSpaceId}.',
    args: { input: t.arg({ type: UpdateSiteSpaceInput, required: true, description: 'The site space and what to change.' }) },
    resolve: async (_r, { input }, ctx) => {
      const { organizationId, siteId, siteSpaceId, spaceId, ...rest } = input;
      const k = ids({ organizationId, siteId });
      return done(ctx, k.site, { siteSpace: await updateSiteSpace(ctx, k.org, k.site, String(siteSpaceId), dropUndefined({ ...rest, spaceId: spaceId == null ? undefined : String(spaceId) })) });
    },
  }),
  deleteSiteSpace: t.field({
    type: DeletePayload,
    description: 'Remove a site space from the site (the space stays). Organization admins only. Idempotent (deleted: false when already gone). REST: DELETE /v1/orgs/{organizationId}/sites/{siteId}/site-spaces/{siteSpaceId}.',
    args: { input: t.arg({ type: SiteSpaceKeyInput, required: true, description: 'The site space to remove.' }) },
    resolve: async (_r, { input }, ctx) => {
      const k = ids(input);
      return { deleted: await deleteSiteSpace(ctx, k.org, k.site, String(input.siteSpaceId)), deletedId: String(input.siteSpaceId) };
    },
  }),
  moveSiteSpace: t.field({
    type: SiteSpacePayload,
    deprecationReason: 'Use sortSiteStructure.',
    description: 'Anchors must be site spaces (the site space moves into the anchor\'s section). Organization admins only. REST: POST /v1/orgs/{organizationId}/sites/{siteId}/site-spaces/{siteSpaceId}/move.',
    args: { input: t.arg({ type: MoveSiteItemInput, required: true, description: 'The site space and where to put it.' }) },
    resolve: async (_r, { input }, ctx) => {
      const k = ids(input);
      const ref = await moveStructureItem(ctx, k.org, k.site, { type: 'site_space', id: String(input.id) }, movePosition(input.position), ['site_space']);
      return done(ctx, k.site, { siteSpace: (await loadItem(ctx, ref)) as SiteSpace });
    },
  }),
  sortSiteStructure: t.field({
    type: SortSiteStructurePayload,
    description: 'Move a site space, section or section group before or after a sibling (REST: PATCH …/structure/sort). BAD_REQUEST for a bad anchor, CONFLICT when nothing would change. Organization admins only.',
    args: { input: t.arg({ type: SortSiteStructureInput, required: true, description: 'The item and its anchor.' }) },
    resolve: async (_r, { input }, ctx) => {
      const k = ids(input);
      const ref = await sortSiteStructure(ctx, k.org, k.site, { item: pointer(input.item), position: movePosition(input.position) ?? {} });
      return done(ctx, k.site, { item: await loadItem(ctx, ref) });
    },
  }),
}));
