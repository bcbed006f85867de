// Share links of a site: the ShareLink node, Site.shareLinks and the three share-link mutations.
// Share links are credentials: every field that reaches them needs the organization's admin role.
import { keysetConnection } from './cursors.ts';
import { builder } from './builder.ts';
import { DeletePayload, dropUndefined } from './common.ts';
import { SiteRef, publishedBaseUrl } from './sites.ts';
import { createShareLink, deleteShareLink, updateShareLink } from '../domain/share-links.ts';

const ShareLinkUrls = builder.simpleObject('ShareLinkUrls', {
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
      select: { site: { select: { id: true, hostname: true, basename: true, proxy: true } } },
      resolve: (l, _a, ctx) => ({ published: `${publishedBaseUrl(ctx.config.publicUrl, l.site)}?share=${encodeURIComponent(l.key)}` }),
    }),
  }),
});

builder.prismaObjectField(SiteRef, 'shareLinks', (t) =>
  keysetConnection(t, {
    type: ShareLinkRef,
    list: 'Site.shareLinks',
    description: 'Share links of the site, oldest first (organization admins only).',
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

const ShareLinkPayload = builder.simpleObject('ShareLinkPayload', { fields: (t) => ({ shareLink: t.field({ type: ShareLinkRef }) }) });

const CreateSiteShareLinkInput = builder.inputType('CreateSiteShareLinkInput', {
  fields: (t) => ({ organizationId: t.id({ required: true }), siteId: t.id({ required: true }), name: t.string({ required: true, description: 'At most 50 characters.' }) }),
});
const UpdateSiteShareLinkInput = builder.inputType('UpdateSiteShareLinkInput', {
  description: 'At least one of `active`, `name`.',
  fields: (t) => ({
    organizationId: t.id({ required: true }),
    siteId: t.id({ required: true }),
    shareLinkId: t.id({ required: true }),
    active: t.boolean(),
    name: t.string(),
  }),
});
const SiteShareLinkKeyInput = builder.inputType('SiteShareLinkKeyInput', {
  fields: (t) => ({ organizationId: t.id({ required: true }), siteId: t.id({ required: true }), shareLinkId: t.id({ required: true }) }),
});

builder.mutationFields((t) => ({
  createSiteShareLink: t.field({
    type: ShareLinkPayload,
    description: 'REST: POST …/sites/{siteId}/share-links (201). The key is 256 random bits.',
    args: { input: t.arg({ type: CreateSiteShareLinkInput, required: true }) },
    resolve: async (_r, { input }, ctx) => ({ shareLink: await createShareLink(ctx, String(input.organizationId), String(input.siteId), { name: input.name }) }),
  }),
  updateSiteShareLink: t.field({
    type: ShareLinkPayload,
    args: { input: t.arg({ type: UpdateSiteShareLinkInput, required: true }) },
    resolve: async (_r, { input }, ctx) => {
      const { organizationId, siteId, shareLinkId, ...rest } = input;
      return { shareLink: await updateShareLink(ctx, String(organizationId), String(siteId), String(shareLinkId), dropUndefined(rest)) };
    },
  }),
  deleteSiteShareLink: t.field({
    type: DeletePayload,
    args: { input: t.arg({ type: SiteShareLinkKeyInput, required: true }) },
    resolve: async (_r, { input }, ctx) => ({
      deleted: await deleteShareLink(ctx, String(input.organizationId), String(input.siteId), String(input.shareLinkId)),
      deletedId: String(input.shareLinkId),
    }),
  }),
}));
