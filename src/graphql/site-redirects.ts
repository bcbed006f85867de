// Site redirects: the SiteRedirect node, Site.redirects, the lookup by source and the four
// mutations (src/domain/site-redirects.ts holds the rules). `redirectTarget` turns a destination
// into the web address a reader is sent to; the URL lookup (published-url.ts) uses it too.
import { builder } from './builder.ts';
import { keysetConnection } from './cursors.ts';
import { DeletePayload, dropUndefined, OWN_ORGANIZATION_ID } from './common.ts';
import type { Context } from './context.ts';
import { SiteRef, publishedBaseUrl, ids } from './sites.ts';
import { loadRevisionContent } from './content-loading.ts';
import type { Site } from '../generated/prisma/client.ts';
import {
  createSiteRedirect,
  deleteSiteRedirect,
  getSiteRedirectBySource,
  siteSpacePrefix,
  updateSiteRedirect,
  upsertSiteRedirects,
  type RedirectDestination,
} from '../domain/site-redirects.ts';
import { isVisibleTo, siteSpaceVisibleTo, type VisitorClaims } from '../domain/site-order.ts';
import { contentForReader } from '../domain/content.ts';

export const SiteRedirectDestinationKindEnum = builder.enumType('SiteRedirectDestinationKind', {
  description: 'What a redirect leads to (REST writes them with `-`: `site-page`).',
  values: {
    site_section: { description: 'A section of the site (its default site space).' },
    site_space: { description: 'A site space (its first page).' },
    site_page: { description: 'A page of a site space.' },
  } as const,
});

const SiteRedirectDestinationRef = builder.simpleObject('SiteRedirectDestination', {
  description: 'Where a redirect leads: a section, a site space or a page of the same site.',
  fields: (t) => ({
    kind: t.field({ type: SiteRedirectDestinationKindEnum, description: 'What it leads to.' }),
    siteSectionId: t.string({ nullable: true, description: 'The section (`site_section`).' }),
    siteSpaceId: t.string({ nullable: true, description: 'The site space (`site_space`, and the page\'s for `site_page`).' }),
    pageId: t.string({ nullable: true, description: 'The page (`site_page`).' }),
  }),
});

/** node(id:) of a redirect: members of its site's organization. */
async function canSeeRedirect(id: string, ctx: Context): Promise<boolean> {
  const row = await ctx.prisma.siteRedirect.findUnique({ where: { id }, select: { siteId: true } });
  return row !== null && (await ctx.access.canSeeSite(row.siteId));
}

export const SiteRedirectRef = builder.prismaNode('SiteRedirect', {
  id: { field: 'id' },
  nullable: true,
  findUnique: async (id, ctx) => ({ id: (await canSeeRedirect(id, ctx)) ? id : '' }),
  description: 'An old path of a site that leads to a section, a site space or a page of the same site.',
  fields: (t) => ({
    siteId: t.exposeString('siteId', { description: 'The site (`site_…`).' }),
    source: t.exposeString('source', { description: 'The path on the site, normalized: a leading `/`, no trailing slash, no query.' }),
    destination: t.field({ type: SiteRedirectDestinationRef, description: 'Where it leads.', resolve: (r) => r.destination as RedirectDestination as never }),
    automatic: t.exposeBoolean('automatic', { description: 'Recorded by a merge that moved a page (false once someone changes it).' }),
    createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When it was created.' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime', description: 'When it last changed.' }),
  }),
});

builder.prismaObjectField(SiteRef, 'redirects', (t) =>
  keysetConnection(t, {
    type: SiteRedirectRef,
    list: 'Site.redirects',
    description: 'Redirects of the site by source (members with a role; FORBIDDEN for guests). REST: GET /v1/orgs/{organizationId}/sites/{siteId}/redirects.',
    resolve: async (page, site, _a, ctx) => {
      await ctx.access.requireSite(site, 'site:read');
      return ctx.prisma.siteRedirect.findMany(page.prisma({ where: { siteId: site.id }, orderBy: [{ source: 'asc' }, { id: 'asc' }] }) as never);
    },
    totalCount: async (site, _a, ctx) => {
      await ctx.access.requireSite(site, 'site:read');
      return ctx.prisma.siteRedirect.count({ where: { siteId: site.id } });
    },
  }),
);

// ------------------------------------------------------------------ where a destination is

type UrlSite = Pick<Site, 'id' | 'hostname' | 'basename' | 'proxy'>;

/**
 * The web address of a redirect's destination for a reader with `claims` (null: the editor's view),
 * or null when it no longer exists or the reader may not see it (a failing condition on the
 * section, the site space or the page).
 */
export async function redirectTarget(ctx: Context, site: UrlSite, d: RedirectDestination, claims: VisitorClaims | null): Promise<string | null> {
  const base = publishedBaseUrl(ctx.config.publicUrl, site);
  if (d.kind === 'site_section') {
    const section = await ctx.prisma.siteSection.findFirst({ where: { id: d.siteSectionId, siteId: site.id }, select: { path: true, condition: true } });
    return section && isVisibleTo(section.condition, claims) ? `${base}${section.path}/` : null;
  }
  const ss = await ctx.prisma.siteSpace.findFirst({
    where: { id: d.siteSpaceId, siteId: site.id, space: { deletedAt: null } },
    select: { id: true, path: true, condition: true, section: { select: { path: true, defaultSiteSpaceId: true, condition: true } }, space: { select: { revisionId: true } } },
  });
  if (!ss || !siteSpaceVisibleTo(ss, ss.section, claims)) return null;
  const prefix = siteSpacePrefix(ss);
  if (d.kind === 'site_space') return `${base}${prefix}`;
  if (!ss.space.revisionId) return null;
  const all = await loadRevisionContent(ctx, ss.space.revisionId, { withMarkdown: false });
  const page = (claims ? contentForReader(all, claims) : all).byId.get(d.pageId);
  return page ? `${base}${prefix}${page.path}` : null;
}

// ------------------------------------------------------------------ the lookup by source

const SiteRedirectLookupRef = builder.simpleObject('SiteRedirectLookup', {
  description: 'A redirect found by its source, and where it leads.',
  fields: (t) => ({
    redirect: t.field({ type: SiteRedirectRef, description: 'The redirect.' }),
    target: t.string({ nullable: true, description: 'The web address of the destination; null when it no longer exists.' }),
  }),
});

builder.queryFields((t) => ({
  siteRedirectBySource: t.field({
    type: SiteRedirectLookupRef,
    nullable: true,
    description: 'The redirect of a site from a path (normalized first: a trailing slash or a query does not matter), for members with a role; NOT_FOUND when none. REST: GET /v1/orgs/{organizationId}/sites/{siteId}/redirect?source=….',
    args: {
      siteId: t.arg.id({ required: true, description: 'The site (`site_…`).' }),
      organizationId: t.arg.id({ description: 'When given, the site must belong to it (REST paths).' }),
      source: t.arg.string({ required: true, description: 'The path on the site, e.g. `/guides/old-page`.' }),
    },
    resolve: async (_r, args, ctx) => {
      const { org, site: siteId } = ids({ organizationId: args.organizationId, siteId: args.siteId });
      const redirect = await getSiteRedirectBySource(ctx, org, siteId, args.source);
      const site = (await ctx.prisma.site.findUnique({ where: { id: redirect.siteId }, select: { id: true, hostname: true, basename: true, proxy: true } }))!;
      return { redirect, target: await redirectTarget(ctx, site, redirect.destination as RedirectDestination, null) };
    },
  }),
}));

// ------------------------------------------------------------------ mutations

const SiteRedirectDestinationInput = builder.inputType('SiteRedirectDestinationInput', {
  description: 'Where a redirect leads: `kind` and the ids that kind needs (`siteSectionId`; `siteSpaceId`; `siteSpaceId` and `pageId`).',
  fields: (t) => ({
    kind: t.field({ type: SiteRedirectDestinationKindEnum, required: true, description: 'What it leads to.' }),
    siteSectionId: t.id({ description: 'For `site_section`: a section of the same site.' }),
    siteSpaceId: t.id({ description: 'For `site_space` and `site_page`: a site space of the same site.' }),
    pageId: t.id({ description: 'For `site_page`: a page of the site space\'s current content.' }),
  }),
});

const destinationOf = (d: { kind: string; siteSectionId?: string | number | null; siteSpaceId?: string | number | null; pageId?: string | number | null }) =>
  dropUndefined({
    kind: d.kind,
    siteSectionId: d.siteSectionId == null ? undefined : String(d.siteSectionId),
    siteSpaceId: d.siteSpaceId == null ? undefined : String(d.siteSpaceId),
    pageId: d.pageId == null ? undefined : String(d.pageId),
  });

const CreateSiteRedirectInputRef = builder.inputType('CreateSiteRedirectInput', {
  description: 'The redirect to create.',
  fields: (t) => ({
    organizationId: t.id({ description: OWN_ORGANIZATION_ID }),
    siteId: t.id({ required: true, description: 'The site (`site_…`).' }),
    source: t.string({ required: true, description: 'The path on the site (at most 512 characters; normalized: leading `/`, no trailing slash, query or fragment).' }),
    destination: t.field({ type: SiteRedirectDestinationInput, required: true, description: 'Where it leads.' }),
  }),
});
const SiteRedirectEntryInput = builder.inputType('SiteRedirectEntryInput', {
  description: 'One redirect of a bulk upsert: `destination: null` deletes the redirect from `source`.',
  fields: (t) => ({
    source: t.string({ required: true, description: 'The path on the site.' }),
    destination: t.field({ type: SiteRedirectDestinationInput, required: false, description: 'Where it leads; null deletes the redirect.' }),
  }),
});
const UpsertSiteRedirectsInputRef = builder.inputType('UpsertSiteRedirectsInput', {
  description: 'Redirects to create, replace or delete by source (1 to 500).',
  fields: (t) => ({
    organizationId: t.id({ description: OWN_ORGANIZATION_ID }),
    siteId: t.id({ required: true, description: 'The site (`site_…`).' }),
    redirects: t.field({ type: [SiteRedirectEntryInput], required: true, description: 'The redirects, by source.' }),
  }),
});
const UpdateSiteRedirectInputRef = builder.inputType('UpdateSiteRedirectInput', {
  description: 'At least one of `source`, `destination`.',
  fields: (t) => ({
    organizationId: t.id({ description: OWN_ORGANIZATION_ID }),
    siteId: t.id({ required: true, description: 'The site (`site_…`).' }),
    siteRedirectId: t.id({ required: true, description: 'The redirect (`sitered_…`).' }),
    source: t.string({ description: 'A new source path.' }),
    destination: t.field({ type: SiteRedirectDestinationInput, description: 'A new destination.' }),
  }),
});
const SiteRedirectKeyInput = builder.inputType('SiteRedirectKeyInput', {
  description: 'Names one redirect of a site.',
  fields: (t) => ({
    organizationId: t.id({ description: OWN_ORGANIZATION_ID }),
    siteId: t.id({ required: true, description: 'The site (`site_…`).' }),
    siteRedirectId: t.id({ required: true, description: 'The redirect (`sitered_…`).' }),
  }),
});

const SiteRedirectPayload = builder.simpleObject('SiteRedirectPayload', {
  description: 'Result of a redirect mutation.',
  fields: (t) => ({ redirect: t.field({ type: SiteRedirectRef, description: 'The redirect after the change.' }) }),
});
const SiteRedirectUpsertStatusEnum = builder.enumType('SiteRedirectUpsertStatus', {
  description: 'What a bulk upsert did with one source.',
  values: { created: { description: 'A new redirect.' }, updated: { description: 'The existing redirect now leads to the new destination.' }, deleted: { description: 'No redirect from this source any more.' } } as const,
});
const SiteRedirectUpsertResultRef = builder.simpleObject('SiteRedirectUpsertResult', {
  description: 'The outcome for one source of a bulk upsert.',
  fields: (t) => ({
    status: t.field({ type: SiteRedirectUpsertStatusEnum, description: 'What was done.' }),
    source: t.string({ description: 'The source, normalized.' }),
    redirect: t.field({ type: SiteRedirectRef, nullable: true, description: 'The redirect written; null when deleted.' }),
  }),
});
const SiteRedirectsPayload = builder.simpleObject('SiteRedirectsPayload', {
  description: 'Result of a bulk upsert.',
  fields: (t) => ({ results: t.field({ type: [SiteRedirectUpsertResultRef], description: 'One per distinct source, in input order.' }) }),
});

builder.mutationFields((t) => ({
  createSiteRedirect: t.field({
    type: SiteRedirectPayload,
    description: 'Create a redirect (a 400 naming `source` when the site has one from that path already). Organization admins only. REST: POST /v1/orgs/{organizationId}/sites/{siteId}/redirects (201).',
    args: { input: t.arg({ type: CreateSiteRedirectInputRef, required: true, description: 'The site, the source and the destination.' }) },
    resolve: async (_r, { input }, ctx) => {
      const { org, site } = ids(input);
      return { redirect: await createSiteRedirect(ctx, org, site, { source: input.source, destination: destinationOf(input.destination) }) };
    },
  }),
  upsertSiteRedirects: t.field({
    type: SiteRedirectsPayload,
    description: 'Create, replace or delete (`destination: null`) redirects by source, in one transaction (a later entry for the same source wins). Organization admins only. REST: PUT /v1/orgs/{organizationId}/sites/{siteId}/redirects.',
    args: { input: t.arg({ type: UpsertSiteRedirectsInputRef, required: true, description: 'The site and its redirects.' }) },
    resolve: async (_r, { input }, ctx) => {
      const { org, site } = ids(input);
      const redirects = input.redirects.map((r) => ({ source: r.source, destination: r.destination ? destinationOf(r.destination) : null }));
      return { results: await upsertSiteRedirects(ctx, org, site, { redirects }) };
    },
  }),
  updateSiteRedirect: t.field({
    type: SiteRedirectPayload,
    description: 'Change a redirect\'s source or destination. Organization admins only. REST: PATCH /v1/orgs/{organizationId}/sites/{siteId}/redirects/{siteRedirectId}.',
    args: { input: t.arg({ type: UpdateSiteRedirectInputRef, required: true, description: 'The redirect and what to change.' }) },
    resolve: async (_r, { input }, ctx) => {
      const { org, site } = ids(input);
      const raw = dropUndefined({ source: input.source ?? undefined, destination: input.destination ? destinationOf(input.destination) : undefined });
      return { redirect: await updateSiteRedirect(ctx, org, site, String(input.siteRedirectId), raw) };
    },
  }),
  deleteSiteRedirect: t.field({
    type: DeletePayload,
    description: 'Delete a redirect. Idempotent (deleted: false when already gone). Organization admins only. REST: DELETE /v1/orgs/{organizationId}/sites/{siteId}/redirects/{siteRedirectId}.',
    args: { input: t.arg({ type: SiteRedirectKeyInput, required: true, description: 'The redirect to delete.' }) },
    resolve: async (_r, { input }, ctx) => {
      const { org, site } = ids(input);
      return { deleted: await deleteSiteRedirect(ctx, org, site, String(input.siteRedirectId)), deletedId: String(input.siteRedirectId) };
    },
  }),
}));
