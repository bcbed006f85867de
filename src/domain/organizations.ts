// Organization rules: reading, updating (with the contract's length and enum rules), invite
// links and lookup by e-mail domain.
import { z } from 'zod';
import type { DomainContext } from './context.ts';
import { parseInput, badRequest } from '../lib/errors.ts';
import { OrganizationTitle, RoleOrGuest } from './users.ts';
import { transaction } from '../db/transaction.ts';
import { recordEvent } from '../events/log.ts';

const Hostname = z
  .string()
  .min(3)
  .max(32)
  .regex(/^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/, 'lower-case letters, digits and hyphens, starting and ending with a letter or digit');

export const UpdateOrganizationInput = z.strictObject({
  title: OrganizationTitle.optional(),
  emailDomains: z
    .array(z.string().trim().toLowerCase().min(3).max(253).regex(/^[a-z0-9.-]+\.[a-z]{2,}$/, 'not a domain name'))
    .max(100)
    .optional(),
  hostname: Hostname.optional(),
  defaultRole: RoleOrGuest.optional(),
  defaultContent: z.strictObject({ type: z.literal('site'), site: z.string().min(1) }).nullable().optional(),
  logo: z.string().url().max(2048).nullable().optional(),
  sso: z.boolean().optional(),
  ai: z.boolean().optional(),
  inviteLinks: z.boolean().optional(),
});
export type UpdateOrganizationInput = z.infer<typeof UpdateOrganizationInput>;

export async function updateOrganization(ctx: DomainContext, id: string, rawInput: unknown) {
  await ctx.access.requireOrg(id, 'organization:admin');
  const input = parseInput(UpdateOrganizationInput, rawInput);
  return transaction(ctx.prisma, async (tx) => {
    if (input.defaultContent) {
      const site = await tx.site.findFirst({ where: { id: input.defaultContent.site, organizationId: id }, select: { id: true } });
      if (!site) throw badRequest('defaultContent.site', 'no such site in this organization');
    }
    if (input.hostname) {
      const taken = await tx.organization.findFirst({ where: { hostname: input.hostname, NOT: { id } }, select: { id: true } });
      if (taken) throw badRequest('hostname', 'already taken');
    }
    const { defaultContent, ...rest } = input;
    const updated = await tx.organization.update({
      where: { id },
      data: {
        ...rest,
        ...(defaultContent !== undefined ? { defaultContent: defaultContent ?? (null as never) } : {}),
      },
    });
    await recordEvent(tx, ctx, { type: 'organization_updated', organizationId: id, objectId: id, payload: { title: updated.title, fields: Object.keys(input) } });
    return updated;
  });
}

/** Idempotent: true when an invite was deleted, false when it did not exist. */
export async function deleteLinkInvite(ctx: DomainContext, organizationId: string, inviteId: string) {
  await ctx.access.requireOrg(organizationId, 'organization:admin');
  return transaction(ctx.prisma, async (tx) => {
    const r = await tx.linkInvite.deleteMany({ where: { id: inviteId, organizationId } });
    if (r.count > 0) await recordEvent(tx, ctx, { type: 'invite_deleted', organizationId, objectId: inviteId });
    return r.count > 0;
  });
}

/**
 * Organizations that claim an e-mail domain: those the caller belongs to, and, when the caller's
 * own e-mail is at that domain, those they could join. Never a list of strangers' organizations.
 */
export async function organizationsForEmailDomain(ctx: DomainContext, domain: string) {
  const viewer = ctx.access.requireViewer();
  const d = domain.trim().toLowerCase();
  if (!d || d.length > 253) throw badRequest('emailDomain', 'not a domain name (1–253 characters)');
  if (!/^[a-z0-9.-]+$/.test(d)) throw badRequest('emailDomain', 'not a domain name (letters, digits, dots and hyphens)');
  return ctx.prisma.organization.findMany({
    where: {
      emailDomains: { has: d },
      ...(viewer.user.email.toLowerCase().endsWith(`@${d}`) ? {} : { members: { some: { userId: viewer.user.id, disabled: false } } }),
    },
    orderBy: { createdAt: 'asc' },
    take: 100,
  });
}
