// Share links: secret keys that open a `share-link` site to whoever holds one. A key is
// `newSecret('shk')` (256 random bits) and is never derived from anything guessable. Reading
// operations that take `shareKey` accept only an ACTIVE link's key of the same site, checked on
// every request (no cache), so a deactivated or deleted link stops working at once: that rule
// (`Access.resolveShareKey`, `Access.siteReader`) lives in src/auth/access.ts.
//
// Share links are credentials, like invite links: listing, creating, changing and deleting them
// is the `shareLink:manage` action, the organization's `admin` role (as the other site writes).
import { z } from 'zod';
import type { DomainContext } from './context.ts';
import type { ShareLink } from '../generated/prisma/client.ts';
import { SHARE_KEY_PREFIX } from '../auth/access.ts';
import { newId, newSecret } from '../lib/ids.ts';
import { badRequest, notFound, parseInput } from '../lib/errors.ts';
import { requireSite } from './sites.ts';
import { transaction } from '../db/transaction.ts';
import { recordEvent } from '../events/log.ts';

export const ShareLinkName = z.string().max(50);
export const CreateShareLinkInput = z.strictObject({ name: ShareLinkName });
export const UpdateShareLinkInput = z.strictObject({ active: z.boolean().optional(), name: ShareLinkName.optional() });

export async function createShareLink(ctx: DomainContext, organizationId: string | undefined, siteId: string, raw: unknown): Promise<ShareLink> {
  const site = await requireSite(ctx, organizationId, siteId, 'shareLink:manage');
  const input = parseInput(CreateShareLinkInput, raw);
  return transaction(ctx.prisma, async (tx) => {
    const link = await tx.shareLink.create({
      data: { id: newId('ShareLink'), siteId: site.id, name: input.name, key: newSecret(SHARE_KEY_PREFIX), active: true, createdAt: ctx.clock.now() },
    });
    // Never the key: it is a credential.
    await recordEvent(tx, ctx, { type: 'share_link_created', organizationId: site.organizationId, objectId: link.id, payload: { siteId: site.id, name: link.name } });
    return link;
  });
}

export async function updateShareLink(ctx: DomainContext, organizationId: string | undefined, siteId: string, shareLinkId: string, raw: unknown): Promise<ShareLink> {
  const site = await requireSite(ctx, organizationId, siteId, 'shareLink:manage');
  const input = parseInput(UpdateShareLinkInput, raw);
  if (input.active === undefined && input.name === undefined) throw badRequest('body', 'give at least one of active, name');
  return transaction(ctx.prisma, async (tx) => {
    const link = await tx.shareLink.findFirst({ where: { id: shareLinkId, siteId: site.id } });
    if (!link) throw notFound('Share link');
    const updated = await tx.shareLink.update({ where: { id: link.id }, data: input });
    await recordEvent(tx, ctx, { type: 'share_link_updated', organizationId: site.organizationId, objectId: link.id, payload: { siteId: site.id, name: updated.name, active: updated.active } });
    return updated;
  });
}

/** Idempotent: true when the link was deleted, false when it did not exist. */
export async function deleteShareLink(ctx: DomainContext, organizationId: string | undefined, siteId: string, shareLinkId: string): Promise<boolean> {
  const site = await requireSite(ctx, organizationId, siteId, 'shareLink:manage');
  return transaction(ctx.prisma, async (tx) => {
    const r = await tx.shareLink.deleteMany({ where: { id: shareLinkId, siteId: site.id } });
    if (r.count > 0) await recordEvent(tx, ctx, { type: 'share_link_deleted', organizationId: site.organizationId, objectId: shareLinkId, payload: { siteId: site.id } });
    return r.count > 0;
  });
}
