// Share links: secret keys that open a `share-link` site to whoever holds one. A key is
// `newSecret('shk')` (256 random bits) and is never derived from anything guessable. Reading
// operations that take `shareKey` accept only an ACTIVE link's key of the same site, checked on
// every request (no cache), so a deactivated or deleted link stops working at once.
//
// Share links are credentials, like invite links: listing, creating, changing and deleting them
// needs the organization's `admin` role (the same rule as the other site writes).
import { z } from 'zod';
import type { DomainContext } from './context.ts';
import type { ShareLink, Site } from '../generated/prisma/client.ts';
import { newId, newSecret } from '../lib/ids.ts';
import { badRequest, notFound, parseInput } from '../lib/errors.ts';
import { requireSite } from './sites.ts';
import { transaction } from '../db/transaction.ts';

export const ShareLinkName = z.string().max(50);
export const CreateShareLinkInput = z.strictObject({ name: ShareLinkName });
export const UpdateShareLinkInput = z.strictObject({ active: z.boolean().optional(), name: ShareLinkName.optional() });

export const SHARE_KEY_PREFIX = 'shk';

export async function createShareLink(ctx: DomainContext, organizationId: string | undefined, siteId: string, raw: unknown): Promise<ShareLink> {
  const site = await requireSite(ctx, organizationId, siteId, 'admin');
  const input = parseInput(CreateShareLinkInput, raw);
  return ctx.prisma.shareLink.create({
    data: { id: newId('ShareLink'), siteId: site.id, name: input.name, key: newSecret(SHARE_KEY_PREFIX), active: true, createdAt: ctx.clock.now() },
  });
}

export async function updateShareLink(ctx: DomainContext, organizationId: string | undefined, siteId: string, shareLinkId: string, raw: unknown): Promise<ShareLink> {
  const site = await requireSite(ctx, organizationId, siteId, 'admin');
  const input = parseInput(UpdateShareLinkInput, raw);
  if (input.active === undefined && input.name === undefined) throw badRequest('body', 'give at least one of active, name');
  return transaction(ctx.prisma, async (tx) => {
    const link = await tx.shareLink.findFirst({ where: { id: shareLinkId, siteId: site.id } });
    if (!link) throw notFound('Share link');
    return tx.shareLink.update({ where: { id: link.id }, data: input });
  });
}

/** Idempotent: true when the link was deleted, false when it did not exist. */
export async function deleteShareLink(ctx: DomainContext, organizationId: string | undefined, siteId: string, shareLinkId: string): Promise<boolean> {
  const site = await requireSite(ctx, organizationId, siteId, 'admin');
  const r = await ctx.prisma.shareLink.deleteMany({ where: { id: shareLinkId, siteId: site.id } });
  return r.count > 0;
}

export type ResolvedShareKey = {
  shareLinkId: string;
  siteId: string;
  organizationId: string;
  /** The site's state, so a caller can apply the published-site rules without another read. */
  site: Pick<Site, 'id' | 'organizationId' | 'published' | 'visibility'>;
};

/**
 * Resolve a share key: the active share link with this key, of site `siteId` when given (of any
 * site when null, for `GET /v1/spaces/{spaceId}?shareKey`). Null for an unknown, inactive or
 * other-site key. Never cached: a deactivated key fails on the next request.
 */
export async function resolveShareKey(ctx: Pick<DomainContext, 'prisma'>, siteId: string | null, key: string): Promise<ResolvedShareKey | null> {
  if (typeof key !== 'string' || !key.startsWith(`${SHARE_KEY_PREFIX}_`) || key.length > 200) return null;
  const link = await ctx.prisma.shareLink.findUnique({
    where: { key },
    select: { id: true, active: true, siteId: true, site: { select: { id: true, organizationId: true, published: true, visibility: true } } },
  });
  if (!link || !link.active || (siteId !== null && link.siteId !== siteId)) return null;
  return { shareLinkId: link.id, siteId: link.siteId, organizationId: link.site.organizationId, site: link.site };
}

/**
 * For the spaces area (`GET /v1/spaces/{spaceId}?shareKey`): true when `key` is an active link of
 * a published site that shows this space (the space is one of its site spaces and not deleted).
 */
export async function spaceVisibleWithShareKey(ctx: Pick<DomainContext, 'prisma'>, spaceId: string, key: string): Promise<boolean> {
  const resolved = await resolveShareKey(ctx, null, key);
  if (!resolved || !resolved.site.published) return false;
  const siteSpace = await ctx.prisma.siteSpace.findFirst({
    where: { siteId: resolved.siteId, spaceId, space: { deletedAt: null } },
    select: { id: true },
  });
  return siteSpace !== null;
}
