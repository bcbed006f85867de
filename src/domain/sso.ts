// SAML single sign-on providers of an organization, and the sign-in they allow.
//
// A provider is `active` when its identity provider's entity ID, SSO URL and a valid signing
// certificate are all set, else `pending`. Its service-provider side (what the admin configures
// in the identity provider) is derived from the public URL:
//   ACS       ${publicUrl}/sso/saml/{id}/acs       (POST, HTTP-POST binding)
//   start     ${publicUrl}/sso/saml/{id}/start     (redirects to the provider's SSO URL)
//   entity ID ${publicUrl}/sso/saml/{id}/metadata  (serves the SP metadata)
// A signed SAML response posted to the ACS signs the user in: the user (by e-mail) and the
// membership are created or updated (new members get the provider's default role and team),
// the membership is marked `sso`, and an API token is issued.
//
// Access: reads for members with a role (not guests), writes for organization admins; the
// login list (`GET ORG/sso`) for any member.
import crypto from 'node:crypto';
import { z } from 'zod';
import type { DomainContext } from './context.ts';
import type { Tx } from '../db/client.ts';
import type { SamlProvider } from '../generated/prisma/client.ts';
import { parseInput, notFound, badRequest, forbidden, AppError } from '../lib/errors.ts';
import { newId } from '../lib/ids.ts';
import { RoleOrGuest } from './users.ts';
import { issueToken } from '../auth/tokens.ts';
import { parseCertificate } from '../lib/x509.ts';
import { validateSamlResponse } from '../lib/saml-response.ts';
import { transaction } from '../db/transaction.ts';
import { recordEvent } from '../events/log.ts';

const SamlLabel = z.string().trim().min(1).max(30);
const SamlFields = {
  label: SamlLabel,
  /** The identity provider's entity ID (issuer). Empty clears it. */
  entityID: z.string().trim().max(1024),
  /** The identity provider's signing certificate (PEM, or the bare base64 body). Empty clears it. */
  certificate: z.string().trim().max(10000),
  ssoURL: z
    .string()
    .trim()
    .max(2048)
    .url()
    .refine((u) => /^https?:\/\//i.test(u), 'must be an http(s) URL'),
  /** A team of this organization that new SSO members join. Empty or null clears it. */
  defaultTeam: z.string().trim().max(100).nullable(),
  /** Role of new SSO members; null makes them guests. */
  defaultRole: RoleOrGuest,
};

export const CreateSamlProviderInput = z.strictObject({
  label: SamlFields.label,
  entityID: SamlFields.entityID.optional(),
  certificate: SamlFields.certificate.optional(),
  ssoURL: SamlFields.ssoURL.optional(),
  defaultTeam: SamlFields.defaultTeam.optional(),
  defaultRole: SamlFields.defaultRole.optional(),
});
export type CreateSamlProviderInput = z.infer<typeof CreateSamlProviderInput>;

export const UpdateSamlProviderInput = CreateSamlProviderInput.partial();
export type UpdateSamlProviderInput = z.infer<typeof UpdateSamlProviderInput>;

// ------------------------------------------------------------------ derived values

export function certificateInfo(cert: string | null): { valid: boolean; expiresAt: Date | null } {
  if (!cert) return { valid: false, expiresAt: null };
  const parsed = parseCertificate(cert);
  if (!parsed.ok) return { valid: false, expiresAt: null };
  return { valid: true, expiresAt: parsed.validTo };
}

export type SamlProviderStatus = 'active' | 'pending';

export function samlProviderStatus(p: Pick<SamlProvider, 'entityID' | 'ssoURL' | 'certificate'>): SamlProviderStatus {
  return p.entityID && p.ssoURL && certificateInfo(p.certificate).valid ? 'active' : 'pending';
}

export function samlServiceUrls(publicUrl: string, providerId: string) {
  const base = `${publicUrl}/sso/saml/${providerId}`;
  return { acsURL: `${base}/acs`, startURL: `${base}/start`, entityID: `${base}/metadata` };
}

// ------------------------------------------------------------------ access

export async function samlProviderPermissions(ctx: DomainContext, organizationId: string) {
  const [view, edit] = await Promise.all([ctx.access.canOrg(organizationId, 'samlProvider:read'), ctx.access.canOrg(organizationId, 'samlProvider:write')]);
  return { view, edit };
}

export async function requireSamlRead(ctx: DomainContext, organizationId: string) {
  await ctx.access.requireOrg(organizationId, 'samlProvider:read');
}

// ------------------------------------------------------------------ reads

export async function getSamlProvider(ctx: DomainContext, organizationId: string, id: string) {
  await requireSamlRead(ctx, organizationId);
  const provider = await ctx.prisma.samlProvider.findFirst({ where: { id, organizationId } });
  if (!provider) throw notFound('SAML provider');
  return provider;
}

/** Active providers a member can sign in with (`GET ORG/sso`): any member, guests included. */
export async function listSsoLogins(ctx: DomainContext, organizationId: string) {
  await ctx.access.requireOrg(organizationId, 'organization:view');
  const rows = await ctx.prisma.samlProvider.findMany({
    where: { organizationId, entityID: { not: null }, ssoURL: { not: null }, certificate: { not: null } },
    orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
    take: 1000,
  });
  return rows
    .filter((p) => samlProviderStatus(p) === 'active')
    .map((p) => ({ id: p.id, label: p.label, startURL: samlServiceUrls(ctx.config.publicUrl, p.id).startURL }));
}

// ------------------------------------------------------------------ writes

/** Input fields → columns, validating the certificate and the default team. */
async function providerColumns(tx: Tx, organizationId: string, input: UpdateSamlProviderInput) {
  const data: Partial<Pick<SamlProvider, 'label' | 'entityID' | 'certificate' | 'ssoURL' | 'defaultTeamId' | 'defaultRole'>> = {};
  if (input.label !== undefined) data.label = input.label;
  if (input.entityID !== undefined) data.entityID = input.entityID || null;
  if (input.ssoURL !== undefined) data.ssoURL = input.ssoURL;
  if (input.defaultRole !== undefined) data.defaultRole = input.defaultRole;
  if (input.certificate !== undefined) {
    if (input.certificate === '') data.certificate = null;
    else {
      // PEM, or the bare base64 body identity providers often show; stored as PEM.
      const parsed = parseCertificate(input.certificate);
      if (!parsed.ok) throw badRequest('certificate', parsed.message || 'not a valid X.509 certificate');
      data.certificate = parsed.pem.trim();
    }
  }
  if (input.defaultTeam !== undefined) {
    if (!input.defaultTeam) data.defaultTeamId = null;
    else {
      const team = await tx.team.findFirst({ where: { id: input.defaultTeam, organizationId }, select: { id: true } });
      if (!team) throw badRequest('defaultTeam', 'no such team in this organization');
      data.defaultTeamId = team.id;
    }
  }
  return data;
}

export async function createSamlProvider(ctx: DomainContext, organizationId: string, rawInput: unknown) {
  await ctx.access.requireOrg(organizationId, 'samlProvider:write');
  const input = parseInput(CreateSamlProviderInput, rawInput);
  return transaction(ctx.prisma, async (tx) => {
    const data = await providerColumns(tx, organizationId, input);
    const provider = await tx.samlProvider.create({
      data: { id: newId('SamlProvider'), organizationId, label: input.label, ...data, createdAt: ctx.clock.now() },
    });
    await recordEvent(tx, ctx, { type: 'saml_provider_created', organizationId, objectId: provider.id, payload: { title: provider.label } });
    return provider;
  });
}

export async function updateSamlProvider(ctx: DomainContext, organizationId: string, id: string, rawInput: unknown) {
  await ctx.access.requireOrg(organizationId, 'samlProvider:write');
  const input = parseInput(UpdateSamlProviderInput, rawInput);
  return transaction(ctx.prisma, async (tx) => {
    const existing = await tx.samlProvider.findFirst({ where: { id, organizationId }, select: { id: true } });
    if (!existing) throw notFound('SAML provider');
    const data = await providerColumns(tx, organizationId, input);
    const provider = await tx.samlProvider.update({ where: { id }, data });
    await recordEvent(tx, ctx, { type: 'saml_provider_updated', organizationId, objectId: id, payload: { title: provider.label, fields: Object.keys(input) } });
    return provider;
  });
}

/** Idempotent: true when deleted, false when it did not exist (the organization must). */
export async function deleteSamlProvider(ctx: DomainContext, organizationId: string, id: string) {
  await ctx.access.requireOrg(organizationId, 'samlProvider:write');
  return transaction(ctx.prisma, async (tx) => {
    const r = await tx.samlProvider.deleteMany({ where: { id, organizationId } });
    if (r.count > 0) await recordEvent(tx, ctx, { type: 'saml_provider_deleted', organizationId, objectId: id });
    return r.count > 0;
  });
}

// ------------------------------------------------------------------ sign-in

/** Where `GET /sso/saml/{id}/start` sends the browser. */
export async function samlStartUrl(ctx: DomainContext, providerId: string) {
  const provider = await ctx.prisma.samlProvider.findUnique({ where: { id: providerId } });
  if (!provider) throw notFound('SAML provider');
  if (samlProviderStatus(provider) !== 'active') throw new AppError('BAD_REQUEST', 'This SAML provider is not fully configured yet');
  return provider.ssoURL!;
}

const AssertedEmail = z.string().trim().toLowerCase().email().max(320);

/**
 * Sign in with a SAML response posted to a provider's ACS URL. The response must be signed with
 * the provider's certificate, issued by its entity ID, for this service (audience, destination)
 * and currently valid. Then, in one transaction: the user is found by e-mail or created; a new
 * membership gets the provider's default role and joins its default team (an existing one keeps
 * its role and teams, so signing in never demotes an admin); the membership is marked `sso`; an
 * API token is issued. A disabled membership cannot sign in.
 */
export async function samlSignIn(ctx: DomainContext, providerId: string, samlResponseB64: string) {
  const provider = await ctx.prisma.samlProvider.findUnique({ where: { id: providerId }, include: { organization: true } });
  if (!provider) throw notFound('SAML provider');
  if (samlProviderStatus(provider) !== 'active') throw new AppError('BAD_REQUEST', 'This SAML provider is not fully configured yet');
  const service = samlServiceUrls(ctx.config.publicUrl, provider.id);
  const result = await validateSamlResponse({
    samlResponseB64,
    idpCertPem: provider.certificate!,
    idpEntityId: provider.entityID!,
    spEntityId: service.entityID,
    acsUrl: service.acsURL,
    ssoUrl: provider.ssoURL!,
  });
  if (!result.ok) throw forbidden(`SAML response rejected: ${result.message}`);
  const email = AssertedEmail.safeParse(result.email);
  if (!email.success) throw forbidden('SAML response rejected: the assertion carries no valid e-mail address');

  return transaction(ctx.prisma, async (tx) => {
    const now = ctx.clock.now();
    await refuseReplay(tx, provider.id, samlResponseB64, now);
    const displayName = result.displayName?.trim().slice(0, 255) || email.data.split('@')[0];
    let user = await tx.user.findUnique({ where: { email: email.data } });
    if (!user) {
      user = await tx.user.create({ data: { id: newId('User'), email: email.data, displayName, createdAt: now } });
    } else if (result.displayName?.trim() && user.displayName !== displayName) {
      user = await tx.user.update({ where: { id: user.id }, data: { displayName } });
    }

    let member = await tx.member.findUnique({ where: { organizationId_userId: { organizationId: provider.organizationId, userId: user.id } } });
    if (member?.disabled) throw forbidden('Your membership of this organization is disabled');
    if (!member) {
      member = await tx.member.create({
        data: { id: newId('Member'), organizationId: provider.organizationId, userId: user.id, role: provider.defaultRole, sso: true, joinedAt: now, lastSeenAt: now },
      });
      if (provider.defaultTeamId) {
        await tx.teamMember.upsert({
          where: { teamId_userId: { teamId: provider.defaultTeamId, userId: user.id } },
          create: { teamId: provider.defaultTeamId, userId: user.id, role: 'member', createdAt: now },
          update: {},
        });
      }
    } else {
      member = await tx.member.update({ where: { id: member.id }, data: { sso: true, lastSeenAt: now } });
    }

    const { token } = await issueToken(tx, user.id, `SAML sign-in (${provider.label})`);
    return { user, member, organization: provider.organization, token };
  });
}

/** A signed response is good for one sign-in: remember it for longer than its validity window. */
const REPLAY_WINDOW_MS = 24 * 60 * 60 * 1000;

async function refuseReplay(tx: Tx, providerId: string, samlResponseB64: string, now: Date) {
  const digest = crypto.createHash('sha256').update(samlResponseB64.replace(/\s+/g, '')).digest('hex');
  await tx.samlResponseUse.deleteMany({ where: { expiresAt: { lt: now } } });
  const inserted = await tx.samlResponseUse.createMany({
    data: [{ digest, providerId, expiresAt: new Date(now.getTime() + REPLAY_WINDOW_MS) }],
    skipDuplicates: true,
  });
  if (inserted.count === 0) throw forbidden('SAML response rejected: it was already used');
}
