// Sites: the Site node, its queries, the site mutations (create, update, delete, publish) and the
// adaptive-content schema; sections, section groups, site spaces, `Site.structure` and the ordered
// lists, and the structure mutations are in `site-structure.ts`, on the helpers exported here.
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
// The reader (src/auth/audience.ts: a member, or an anonymous, outsider, share-link or visitor
// reader with its claims) travels with the rows a root field returns (a non-enumerable tag), and
// each list below filters by the conditions that reader fails; conditions and counters are shown
// to members only.
import { builder } from './builder.ts';
import { keysetConnection } from './cursors.ts';
import { DeletePayload, dropUndefined, loader, organizationOf, OWN_ORGANIZATION_ID } from './common.ts';
import type { Context } from './context.ts';
import type { Site } from '../generated/prisma/client.ts';
import { parseInput } from '../lib/errors.ts';
import { typeOfId } from '../lib/ids.ts';
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
import { isVisibleTo, siteSpaceVisibleTo, VisitorInput, type VisitorClaims } from '../domain/site-order.ts';
import { baseIdOf, viewKey, viewScopedId } from './view-ids.ts';

// ------------------------------------------------------------------ view tags and access memo

const VIEW = Symbol('docgraph.siteView');
/**
 * How rows of a site are read: `claims` every condition is evaluated against (null: everything,
 * the editor's view); `member` false hides conditions and counters. Untagged rows (a member's
 * `site(id:)`, node(id:) by a member) are the editor's view.
 */
export type View = { claims: VisitorClaims | null; shareKey: string | null; member: boolean };

export function viewOf(row: object): View | undefined {
  return (row as { [VIEW]?: View })[VIEW];
}
export function tag<T extends object>(rows: T[], view: View | undefined): T[] {
  if (view) for (const r of rows) Object.defineProperty(r, VIEW, { value: view, enumerable: false, configurable: true, writable: true });
  return rows;
}
export function visible<T extends { condition: string | null }>(rows: T[], view: View | undefined): T[] {
  return tag(
    rows.filter((r) => isVisibleTo(r.condition, view?.claims)),
    view,
  );
}

/** Sites this request has already been allowed to read (so node refetches and fallbacks need no second check). */
export const authorize = (ctx: Context, siteId: string) => ctx.access.noteSiteRead(siteId);

function parseVisitor(raw: unknown): { claims?: VisitorClaims } | undefined {
  if (raw == null) return undefined;
  return parseInput(VisitorInput, raw, 'visitor');
}

/** The editor's view (a member's `site(id:)` without a preview): everything, conditions shown. */
export const EDITOR_VIEW: View = Object.freeze({ claims: null, shareKey: null, member: true });

/**
 * How `row` is read in this request: its tag, else (a row reached through a relation or
 * node(id:)) the reader this request was on its site (`Access.siteReader`), else the editor's
 * view — only members reach untagged rows of a site they did not read as a reader (node guards,
 * `site(id:)`, mutation payloads). Fail-closed: a row whose site is unknown takes the most
 * restrictive reader of the request.
 */
export function viewFor(ctx: Context, row: object): View | undefined {
  const tagged = viewOf(row);
  if (tagged) return tagged;
  const r = row as { siteId?: unknown; id?: unknown };
  const siteId = typeof r.siteId === 'string' ? r.siteId : typeof r.id === 'string' && typeOfId(r.id) === 'Site' ? r.id : undefined;
  const reader = siteId ? ctx.access.readerOf(siteId) : ctx.access.anyReader();
  return reader ? { claims: reader.claims, shareKey: reader.shareKey, member: reader.member } : undefined;
}

/** A condition as a reader may see it: members only. */
export const conditionFor = (ctx: Context, row: { condition: string | null }) => (viewFor(ctx, row)?.member === false ? null : row.condition);

export type SiteRow = Pick<Site, 'id' | 'organizationId' | 'hostname' | 'basename' | 'proxy' | 'published'>;

/** Where the published site lives: its proxy, else its custom hostname, else under the gateway. */
export function publishedBaseUrl(publicUrl: string, site: Pick<Site, 'id' | 'hostname' | 'basename' | 'proxy'>): string {
  if (site.proxy) return `https://${site.proxy}/`;
  if (site.hostname) return `https://${site.hostname}/${site.basename ? `${site.basename}/` : ''}`;
  return `${publicUrl}/sites/${site.id}/`;
}
export function withShareKey(url: string, view: View | undefined) {
  return view?.shareKey ? `${url}?share=${encodeURIComponent(view.shareKey)}` : url;
}

export const SITE_URL_SELECT = { id: true, organizationId: true, hostname: true, basename: true, proxy: true, published: true } as const;
export const POS = { position: 'asc' } as const;
export const ROOT_SPACES = { sectionId: null, space: { deletedAt: null } } as const;
export const LIVE_SPACES = { space: { deletedAt: null } } as const;
export const LIST_COMPLEXITY = { field: 1, multiplier: 2 };

/** The columns the list resolvers below read themselves (order, conditions), whatever the client selected. */
export const NEEDS = {
  section: { id: true, siteId: true, groupId: true, position: true, createdAt: true, condition: true },
  group: { id: true, siteId: true, position: true, createdAt: true },
  siteSpace: { id: true, siteId: true, sectionId: true, position: true, createdAt: true, condition: true },
} as const;

/**
 * A planned relation query in select mode carries only what the client asked for (nothing, when
 * it asked for no field of that type): add the columns our resolvers need. Include mode loads
 * every column already.
 */
export function ensure<Q>(query: Q, fields: Record<string, true>): Q {
  const q = query as { select?: Record<string, unknown> };
  return (q.select ? { ...q, select: { ...fields, ...q.select } } : query) as Q;
}

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
    visitor_auth: { description: 'Readable by visitors holding a visitor token (JWT) signed with one of the site\'s visitor keys (REST `visitor-auth`).' },
  } as const,
});
export const SiteAgentsContextEnum = builder.enumType('SiteAgentsContext', {
  description: 'Whether the site is offered to AI agents as context.',
  values: {
    excluded: { description: 'Not offered to agents.' },
    included: { description: 'Offered to agents.' },
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

// ------------------------------------------------------------------ Site

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

/**
 * The key of the view a site row is read in: undefined for the editor's view (everything,
 * conditions shown), else a digest of the claims, share key and membership it is filtered by.
 */
export function siteViewKey(ctx: Context, row: object): string | undefined {
  return viewKeyOf(viewFor(ctx, row));
}

const viewKeys = new WeakMap<View, string>();
/** The key of a view (see `siteViewKey`), once per view object: every row of a view carries the same one. */
export function viewKeyOf(view: View | undefined): string | undefined {
  if (!view || (view.claims == null && view.shareKey == null && view.member)) return undefined;
  let key = viewKeys.get(view);
  if (key === undefined) viewKeys.set(view, (key = viewKey({ claims: view.claims, shareKey: view.shareKey, member: view.member })));
  return key;
}

export const SiteRef = builder.prismaNode('Site', {
  // One object, one id: a filtered view (a visitor preview, a reader who is not a member) shows
  // other sections than the editor's view, so it answers `site_…~<view>`; `siteId` is the site.
  id: {
    description: 'This site as read here: the site id (`site_…`) in the editor\'s view, `site_…~<view>` in a filtered view (a `visitor` preview, a published reader who is not a member), so client caches keep the views apart. The site itself is `siteId`.',
    resolve: (s, ctx) => viewScopedId(s.id, siteViewKey(ctx, s)),
  },
  nullable: true,
  findUnique: async (raw, ctx) => {
    const id = baseIdOf(raw);
    return { id: (await ctx.access.canSeeSite(id)) ? id : '' };
  },
  description: 'A published docs site: sections, section groups and site spaces, each showing a space.',
  fields: (t) => ({
    siteId: t.exposeString('id', { description: 'The site id (`site_…`), the same in every view: what REST and the `siteId` arguments take.' }),
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
    siteSpaceCount: t.int({
      description: 'Number of site spaces, in all sections (a reader counts the ones it sees).',
      select: { siteSpaces: { where: LIVE_SPACES, select: { condition: true, section: { select: { condition: true } } } } },
      resolve: (s, _a, ctx) => {
        const claims = viewFor(ctx, s)?.claims;
        return (s.siteSpaces as Array<{ condition: string | null; section: { condition: string | null } | null }>).filter(
          (ss) => siteSpaceVisibleTo(ss, ss.section, claims),
        ).length;
      },
    }),
    urls: t.field({
      type: SiteUrls,
      description: 'Where the site is: this API, the web app, and the published site.',
      resolve: (s, _a, ctx) => ({
        location: `${ctx.config.publicUrl}/v1/orgs/${s.organizationId}/sites/${s.id}`,
        app: `${ctx.config.appUrl}/o/${s.organizationId}/sites/${s.id}`,
        published: s.published ? withShareKey(publishedBaseUrl(ctx.config.publicUrl, s), viewFor(ctx, s)) : null,
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
    nullable: true,
    description: 'A site, for members of its organization. `visitor: { claims }` previews what that visitor would see.',
    args: {
      id: t.arg.id({ required: true, description: 'The site (`site_…`).' }),
      organizationId: t.arg.id({ description: 'When given, the site must belong to it (REST paths).' }),
      visitor: t.arg({ type: 'JSON', description: 'Preview as this visitor: `{ claims: { … } }` for adaptive content.' }),
    },
    resolve: async (query, _r, args, ctx) => {
      const preview = parseVisitor(args.visitor);
      const site = await ctx.prisma.site.findUnique({ ...query, where: { id: String(args.id) } });
      await ctx.access.requireSite(site, 'site:read', args.organizationId ? String(args.organizationId) : undefined);
      authorize(ctx, site!.id);
      return tag([site!], preview ? { claims: preview.claims ?? {}, shareKey: null, member: true } : EDITOR_VIEW)[0];
    },
  }),
  publishedSite: t.prismaField({
    type: SiteRef,
    nullable: true,
    description:
      'A published site as its reader sees it, with or without a token: organization members (a preview, published or not, everything unless `visitor` or a visitor token is given); anyone when it is published and public/unlisted; share-link sites with an active `shareKey`; visitor-auth sites with a valid visitor token. Conditions are evaluated for every reader who is not a member: signed claims come from the visitor token only, `visitor: { claims: { unsigned: { … } } }` from the caller; a missing claim is false. NOT_FOUND otherwise.',
    args: {
      siteId: t.arg.id({ required: true, description: 'The site (`site_…`).' }),
      organizationId: t.arg.id({ description: 'When given, the site must belong to it (REST paths).' }),
      shareKey: t.arg.string({ description: 'The key of an active share link, for a `share_link` site read by someone who is not a member.' }),
      visitorToken: t.arg.string({ description: 'A visitor token (JWT) signed with one of the site\'s visitor keys; the `X-Visitor-Token` header does the same.' }),
      visitor: t.arg({ type: 'JSON', description: 'The visitor: `{ claims: { unsigned: { … } } }` (anyone), or any claims for a member\'s preview.' }),
    },
    resolve: async (query, _r, args, ctx) => {
      const visitor = parseVisitor(args.visitor);
      const site = await ctx.prisma.site.findUnique({ ...query, where: { id: String(args.siteId) } });
      const reader = await ctx.access.siteReader(site, {
        organizationId: args.organizationId ? String(args.organizationId) : undefined,
        shareKey: args.shareKey,
        visitorToken: args.visitorToken ?? ctx.visitorToken,
        visitor,
        now: ctx.clock.now(),
      });
      authorize(ctx, site!.id);
      return tag([site!], { claims: reader.claims, shareKey: reader.shareKey, member: reader.member })[0];
    },
  }),
  siteAdaptiveSchema: t.field({
    type: SiteAdaptiveSchemaRef,
    nullable: true,
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
const SiteAdaptiveSchemaPayload = builder.simpleObject('SiteAdaptiveSchemaPayload', {
  description: 'The visitor schema after the change.',
  fields: (t) => ({ adaptiveSchema: t.field({ type: SiteAdaptiveSchemaRef, description: 'The schema as it is now.' }) }),
});

/** The site of a mutation, and the organization its REST path names (undefined from GraphQL callers who omit it). */
export const ids = (input: { organizationId?: string | number | null; siteId: string | number }) => ({
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

const UpdateSiteAdaptiveSchemaInput = builder.inputType('UpdateSiteAdaptiveSchemaInput', {
  description: 'The site and its visitor schema.',
  fields: (t) => ({ organizationId: t.id({ description: OWN_ORGANIZATION_ID }), siteId: t.id({ required: true, description: 'The site (`site_…`).' }), jsonSchema: t.field({ type: 'JSON', required: true, description: 'A JSON Schema object describing visitor claims (`type: object` with `properties`).' }) }),
});

/** Mark the site readable for this request and return `value` (mutation payloads resolve nested fields with fallbacks). */
export function done<T>(ctx: Context, siteId: string, value: T): T {
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
}));
