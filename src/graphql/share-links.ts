// Share links of a site: the ShareLink node, Site.shareLinks and the three share-link mutations.
// Share links are credentials: every field that reaches them needs the organization's admin role.
import { keysetConnection } from './cursors.ts';
import { builder } from './builder.ts';
import { DeletePayload, dropUndefined, loader, OWN_ORGANIZATION_ID } from './common.ts';
import type { Context } from './context.ts';
import { SiteRef, publishedBaseUrl } from './sites.ts';
import { createShareLink, deleteShareLink, updateShareLink } from '../domain/share-links.ts';

const ShareLinkUrls = builder.simpleObject('ShareLinkUrls', {
  description: 'Addresses of a share link.',
  fields: (t) => ({ published: t.string({ description: 'The published site with this link\'s key.' }) }),
});

export const ShareLinkRef = builder.prismaNode('ShareLink', {
  id: { field: 'id' },
  nullable: true,
  // node(id:) answers only for admins of the link's organization.
  findUnique: async (id, ctx) => ({ id: (await ctx.access.canSeeShareLink(id)) ? id : '' }),
  description: 'A secret key that opens a share-link site. Deactivated links stop working at once.',
  fields: (t) => ({
    siteId: t.exposeString('siteId'),
    name: t.exposeString('name'),
    active: t.exposeBoolean('active'),
    key: t.exposeString('key', { description: 'The secret (`shareKey` of the reading operations).' }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    urls: t.field({
      type: ShareLinkUrls,
      description: 'Where the link opens the published site.',
      select: { site: { select: { id: true, hostname: true, basename: true, proxy: true } } },
      resolve: (l, _a, ctx) => ({ published: `${publishedBaseUrl(ctx.config.publicUrl, l.site)}?share=${encodeURIComponent(l.key)}` }),
    }),
  }),
});

builder.prismaObjectField(SiteRef, 'shareLinks', (t) =>
  keysetConnection(t, {
    type: ShareLinkRef,
    list: 'Site.shareLinks',
    description: 'Share links of the site, oldest first (organization admins only; FORBIDDEN for other members). REST: GET /v1/orgs/{organizationId}/sites/{siteId}/share-links.',
    resolve: async (page, site, _a, ctx) => {
      await ctx.access.requireSite(site, 'shareLink:manage');
      return ctx.prisma.shareLink.findMany(page.prisma({ where: { siteId: site.id }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] }) as never);
    },
    totalCount: async (site, _a, ctx) => {
      await ctx.access.requireSite(site, 'shareLink:manage');
      return ctx.prisma.shareLink.count({ where: { siteId: site.id } });
    },
  }),
);

const ShareLinkPayload = builder.simpleObject('ShareLinkPayload', {
  description: 'Result of a share-link mutation.',
  fields: (t) => ({ shareLink: t.field({ type: ShareLinkRef, description: 'The share link after the change.' }) }),
});

const CreateSiteShareLinkInput = builder.inputType('CreateSiteShareLinkInput', {
  description: 'The share link to create.',
  fields: (t) => ({
    organizationId: t.id({ description: OWN_ORGANIZATION_ID }),
    siteId: t.id({ required: true, description: 'Site to share (`site_…`); its visibility should be `share_link`.' }),
    name: t.string({ required: true, description: 'A label for the link, at most 50 characters.' }),
  }),
});
const UpdateSiteShareLinkInput = builder.inputType('UpdateSiteShareLinkInput', {
  description: 'At least one of `active`, `name`.',
  fields: (t) => ({
    organizationId: t.id({ description: OWN_ORGANIZATION_ID }),
    siteId: t.id({ required: true, description: 'Site of the link (`site_…`).' }),
    shareLinkId: t.id({ required: true, description: 'Share link to update (`shl_…`).' }),
    active: t.boolean({ description: 'false deactivates the link (it stops opening the site at once); true reactivates it.' }),
    name: t.string({ description: 'New label, at most 50 characters.' }),
  }),
});
const SiteShareLinkKeyInput = builder.inputType('SiteShareLinkKeyInput', {
  description: 'Names one share link of a site.',
  fields: (t) => ({
    organizationId: t.id({ description: OWN_ORGANIZATION_ID }),
    siteId: t.id({ required: true, description: 'Site of the link (`site_…`).' }),
    shareLinkId: t.id({ required: true, description: 'The share link (`shl_…`).' }),
  }),
});

builder.mutationFields((t) => ({
  createSiteShareLink: t.field({
    type: ShareLinkPayload,
    description: 'Create an active share link for a site; its key is 256 random bits. Organization admins only. REST: POST /v1/orgs/{organizationId}/sites/{siteId}/share-links (201).',
    args: { input: t.arg({ type: CreateSiteShareLinkInput, required: true, description: 'The site and the link’s name.' }) },
    resolve: async (_r, { input }, ctx) => ({ shareLink: await createShareLink(ctx, input.organizationId == null ? undefined : String(input.organizationId), String(input.siteId), { name: input.name }) }),
  }),
  updateSiteShareLink: t.field({
    type: ShareLinkPayload,
    description: 'Rename, deactivate or reactivate a share link. Organization admins only. REST: PATCH /v1/orgs/{organizationId}/sites/{siteId}/share-links/{shareLinkId}.',
    args: { input: t.arg({ type: UpdateSiteShareLinkInput, required: true, description: 'The link and what to change.' }) },
    resolve: async (_r, { input }, ctx) => {
      const { organizationId, siteId, shareLinkId, ...rest } = input;
      return { shareLink: await updateShareLink(ctx, organizationId == null ? undefined : String(organizationId), String(siteId), String(shareLinkId), dropUndefined(rest)) };
    },
  }),
  deleteSiteShareLink: t.field({
    type: DeletePayload,
    description: 'Delete a share link; it stops working at once. Idempotent (deleted: false when already gone). Organization admins only. REST: DELETE /v1/orgs/{organizationId}/sites/{siteId}/share-links/{shareLinkId}.',
    args: { input: t.arg({ type: SiteShareLinkKeyInput, required: true, description: 'The share link to delete.' }) },
    resolve: async (_r, { input }, ctx) => ({
      deleted: await deleteShareLink(ctx, input.organizationId == null ? undefined : String(input.organizationId), String(input.siteId), String(input.shareLinkId)),
      deletedId: String(input.shareLinkId),
    }),
  }),
}));
