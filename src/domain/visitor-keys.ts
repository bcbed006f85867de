// Visitor authentication keys and settings of a site. A site
// verifies visitor tokens (src/auth/visitor-tokens.ts) with its keys in `SiteVisitorKey`: a
// generated HS256 secret, or a public key the owner supplies (RS256/ES256, SPKI PEM). One key is
// current (`retiresAt` null); rotating (regenerate, or setting a public key) makes the new key
// current and gives every previously current key `retiresAt = now + VISITOR_KEY_OVERLAP_SECONDS`,
// so tokens signed with it keep verifying while the owner's backend switches over. Expired
// retired keys are deleted when a later rotation runs (a bounded batch each time).
//
// `Site.visitorAuth` (Json) holds the publishing-auth settings of the official API:
// `{ backend: 'custom' | 'integration', integration?, fallbackURL? }`.
//
// Everything here is the site admins' (`site:write`): the secret is a credential.
import crypto from 'node:crypto';
import { importSPKI } from 'jose';
import { z } from 'zod';
import type { DomainContext } from './context.ts';
import type { Tx } from '../db/client.ts';
import type { Prisma } from '../generated/prisma/client.ts';
import { newId } from '../lib/ids.ts';
import { badRequest, conflict, parseInput } from '../lib/errors.ts';
import { transaction } from '../db/transaction.ts';
import { lockSite } from '../db/locks.ts';
import { requireSite } from './sites.ts';
import { recordEvent } from '../events/log.ts';
import type { VisitorKeyAlgorithm } from '../auth/visitor-tokens.ts';

export const VISITOR_AUTH_BACKENDS = ['custom', 'integration'] as const;
export type VisitorAuthBackend = (typeof VISITOR_AUTH_BACKENDS)[number];
export const PUBLIC_KEY_ALGORITHMS = ['RS256', 'ES256'] as const;
/** Longest public key PEM accepted (an RSA-8192 SPKI PEM is about 1.5 KiB). */
export const MAX_PUBLIC_KEY_PEM_CHARS = 8192;
export const MIN_RSA_BITS = 2048;
/** Expired retired keys deleted per rotation at most (the rest go on the next one). */
const CLEANUP_BATCH = 100;

const HttpUrl = z
  .string()
  .max(2048)
  .url()
  .refine((v) => /^https?:\/\//i.test(v), 'must be an http(s) URL');

/** PATCH …/publishing/auth and `updateSitePublishingAuth`: omitted fields are kept, null unsets. */
export const UpdatePublishingAuthInput = z.strictObject({
  backend: z.enum(VISITOR_AUTH_BACKENDS).optional(),
  /** The integration used as the backend (`backend: integration` needs one). */
  integration: z.string().trim().min(1).max(100).nullable().optional(),
  fallbackURL: HttpUrl.nullable().optional(),
});
export type UpdatePublishingAuth = z.infer<typeof UpdatePublishingAuthInput>;

/** PUT …/publishing/auth/public-key and `setSiteVisitorPublicKey`. */
export const SetPublicKeyInput = z.strictObject({
  algorithm: z.enum(PUBLIC_KEY_ALGORITHMS, { message: 'must be RS256 or ES256 (HS256 secrets are generated: regenerate)' }),
  publicKey: z.string().max(MAX_PUBLIC_KEY_PEM_CHARS),
});

/** The stored settings (`Site.visitorAuth`). */
export type VisitorAuthSettings = { backend: VisitorAuthBackend; integration?: string; fallbackURL?: string };

/** A key as its site's members see it: never the secret. */
export type VisitorKeyInfo = { id: string; algorithm: VisitorKeyAlgorithm; createdAt: Date; retiresAt: Date | null; current: boolean; publicKey: string | null };

/** The settings and the keys that verify now (current, and retired ones in their overlap). */
export type VisitorAuthView = { siteId: string; backend: VisitorAuthBackend; integration: string | null; fallbackURL: string | null; keys: VisitorKeyInfo[] };

/** What the site's admins read: the view and the current HS256 secret (null when the current key is a public key, or there is none). */
export type PublishingAuth = VisitorAuthView & { privateKey: string | null };

/** The settings stored in `Site.visitorAuth` (defaults for a site without any). */
export function settingsOf(json: Prisma.JsonValue | null | undefined): VisitorAuthSettings {
  const o = json && typeof json === 'object' && !Array.isArray(json) ? (json as Record<string, unknown>) : {};
  return {
    backend: o.backend === 'integration' ? 'integration' : 'custom',
    ...(typeof o.integration === 'string' ? { integration: o.integration } : {}),
    ...(typeof o.fallbackURL === 'string' ? { fallbackURL: o.fallbackURL } : {}),
  };
}

/** A key row (with its secret: domain and access code only). */
export type KeyRow = { id: string; siteId: string; algorithm: string; secret: string | null; publicKey: string | null; createdAt: Date; retiresAt: Date | null };

/** Keys of these sites that verify at `now`, newest first, grouped by site. */
export async function activeKeysBySite(db: Tx, siteIds: readonly string[], now: Date): Promise<Map<string, KeyRow[]>> {
  const rows = await db.siteVisitorKey.findMany({
    where: { siteId: { in: [...siteIds] }, OR: [{ retiresAt: null }, { retiresAt: { gt: now } }] },
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
  });
  const bySite = new Map<string, KeyRow[]>(siteIds.map((id) => [id, []]));
  for (const r of rows) bySite.get(r.siteId)?.push(r);
  return bySite;
}

export function viewOf(siteId: string, settings: VisitorAuthSettings, keys: KeyRow[]): VisitorAuthView {
  return {
    siteId,
    backend: settings.backend,
    integration: settings.integration ?? null,
    fallbackURL: settings.fallbackURL ?? null,
    keys: keys.map((k) => ({ id: k.id, algorithm: k.algorithm as VisitorKeyAlgorithm, createdAt: k.createdAt, retiresAt: k.retiresAt, current: k.retiresAt === null, publicKey: k.publicKey })),
  };
}

function publishingAuthOf(siteId: string, settings: VisitorAuthSettings, keys: KeyRow[]): PublishingAuth {
  const current = keys.find((k) => k.retiresAt === null);
  return { ...viewOf(siteId, settings, keys), privateKey: current?.algorithm === 'HS256' ? current.secret : null };
}

/** Lock the site row (rotations and settings changes of one site run one at a time) and read its settings. */
async function lockSettings(tx: Tx, siteId: string): Promise<Prisma.JsonValue | null> {
  await lockSite(tx, siteId);
  return (await tx.site.findUniqueOrThrow({ where: { id: siteId }, select: { visitorAuth: true } })).visitorAuth;
}

async function readPublishingAuth(db: Tx, siteId: string, json: Prisma.JsonValue | null, now: Date): Promise<PublishingAuth> {
  const keys = (await activeKeysBySite(db, [siteId], now)).get(siteId) ?? [];
  return publishingAuthOf(siteId, settingsOf(json), keys);
}

// ------------------------------------------------------------------ reads

/** The settings, keys and current secret of a site (site admins). */
export async function getPublishingAuth(ctx: DomainContext, organizationId: string | undefined, siteId: string): Promise<PublishingAuth> {
  const site = await requireSite(ctx, organizationId, siteId, 'site:write');
  return readPublishingAuth(ctx.prisma, site.id, site.visitorAuth, ctx.clock.now());
}

// ------------------------------------------------------------------ rotation

/**
 * Make `key` the site's current key: every current key retires after the overlap, and expired
 * retired keys go (a bounded batch). The caller holds the site lock.
 */
async function rotateTo(tx: Tx, ctx: DomainContext, siteId: string, key: { algorithm: VisitorKeyAlgorithm; secret?: string; publicKey?: string }, now: Date) {
  const retiresAt = new Date(now.getTime() + ctx.config.visitorKeyOverlapSeconds * 1000);
  await tx.siteVisitorKey.updateMany({ where: { siteId, retiresAt: null }, data: { retiresAt } });
  const expired = await tx.siteVisitorKey.findMany({ where: { siteId, retiresAt: { lte: now } }, select: { id: true }, take: CLEANUP_BATCH });
  if (expired.length) await tx.siteVisitorKey.deleteMany({ where: { id: { in: expired.map((k) => k.id) } } });
  return tx.siteVisitorKey.create({
    data: { id: newId('SiteVisitorKey'), siteId, algorithm: key.algorithm, secret: key.secret ?? null, publicKey: key.publicKey ?? null, createdAt: now },
  });
}

/** 32 random bytes, base64url: the HS256 secret. */
const newHmacSecret = () => crypto.randomBytes(32).toString('base64url');

/** A new HS256 secret becomes the site's current key; the previous current key retires after the overlap. */
export async function regenerateVisitorKey(ctx: DomainContext, organizationId: string | undefined, siteId: string): Promise<PublishingAuth> {
  const site = await requireSite(ctx, organizationId, siteId, 'site:write');
  return transaction(ctx.prisma, async (tx) => {
    const settings = await lockSettings(tx, site.id);
    const now = ctx.clock.now();
    const key = await rotateTo(tx, ctx, site.id, { algorithm: 'HS256', secret: newHmacSecret() }, now);
    // Never the secret: it is a credential.
    await recordEvent(tx, ctx, { type: 'site_visitor_key_regenerated', organizationId: site.organizationId, objectId: site.id, payload: { keyId: key.id, algorithm: 'HS256' } });
    return readPublishingAuth(tx, site.id, settings, now);
  });
}

/**
 * The owner's public key (SPKI PEM) becomes the site's current key, for tokens signed with its
 * private key; the previous current key, of any algorithm, retires after the overlap.
 */
export async function setVisitorPublicKey(ctx: DomainContext, organizationId: string | undefined, siteId: string, raw: unknown): Promise<PublishingAuth> {
  const site = await requireSite(ctx, organizationId, siteId, 'site:write');
  const input = parseInput(SetPublicKeyInput, raw);
  const publicKey = input.publicKey.trim();
  await requireUsablePublicKey(publicKey, input.algorithm);
  return transaction(ctx.prisma, async (tx) => {
    const settings = await lockSettings(tx, site.id);
    const now = ctx.clock.now();
    const key = await rotateTo(tx, ctx, site.id, { algorithm: input.algorithm, publicKey }, now);
    await recordEvent(tx, ctx, { type: 'site_visitor_public_key_set', organizationId: site.organizationId, objectId: site.id, payload: { keyId: key.id, algorithm: input.algorithm } });
    return readPublishingAuth(tx, site.id, settings, now);
  });
}

/** A PEM jose imports as an SPKI key of `algorithm` (the right key type and curve), RSA of 2048 bits at least. */
async function requireUsablePublicKey(pem: string, algorithm: (typeof PUBLIC_KEY_ALGORITHMS)[number]) {
  let key: CryptoKey;
  try {
    key = (await importSPKI(pem, algorithm)) as CryptoKey;
  } catch {
    // Never echo the input: a private key pasted by mistake would end up in logs.
    throw badRequest('publicKey', `not an ${algorithm} public key in SPKI PEM form (-----BEGIN PUBLIC KEY-----, ${algorithm === 'ES256' ? 'EC P-256' : 'RSA'})`);
  }
  const bits = (key.algorithm as { modulusLength?: number }).modulusLength;
  if (algorithm === 'RS256' && (bits ?? 0) < MIN_RSA_BITS) throw badRequest('publicKey', `an RSA key of ${bits} bits; at least ${MIN_RSA_BITS} are required`);
}

/**
 * Remove the site's public keys, the current one and any still in its overlap: tokens signed with
 * them stop verifying at once (a removal is usually a compromised or abandoned key). Idempotent:
 * false when the site had none.
 */
export async function removeVisitorPublicKey(ctx: DomainContext, organizationId: string | undefined, siteId: string): Promise<{ deleted: boolean; auth: PublishingAuth }> {
  const site = await requireSite(ctx, organizationId, siteId, 'site:write');
  return transaction(ctx.prisma, async (tx) => {
    const settings = await lockSettings(tx, site.id);
    const r = await tx.siteVisitorKey.deleteMany({ where: { siteId: site.id, algorithm: { in: [...PUBLIC_KEY_ALGORITHMS] } } });
    if (r.count > 0) await recordEvent(tx, ctx, { type: 'site_visitor_public_key_removed', organizationId: site.organizationId, objectId: site.id, payload: { keys: r.count } });
    return { deleted: r.count > 0, auth: await readPublishingAuth(tx, site.id, settings, ctx.clock.now()) };
  });
}

// ------------------------------------------------------------------ settings

/**
 * Change the publishing-auth settings. A site without any current key gets its HS256 secret in
 * the same transaction (the official answer carries it). `requirePrivateKey` (the REST PATCH,
 * whose answer must carry the secret): CONFLICT, nothing changed, when the current key is a
 * public key.
 */
export async function updatePublishingAuth(
  ctx: DomainContext,
  organizationId: string | undefined,
  siteId: string,
  raw: unknown,
  opts: { requirePrivateKey?: boolean } = {},
): Promise<PublishingAuth> {
  const site = await requireSite(ctx, organizationId, siteId, 'site:write');
  const input = parseInput(UpdatePublishingAuthInput, raw);
  if (input.backend === undefined && input.integration === undefined && input.fallbackURL === undefined) throw badRequest('input', 'give at least one of backend, integration, fallbackURL');
  return transaction(ctx.prisma, async (tx) => {
    // Read under the lock: the settings are merged, not replaced.
    const before = settingsOf(await lockSettings(tx, site.id));
    const now = ctx.clock.now();
    const next: VisitorAuthSettings = { backend: input.backend ?? before.backend };
    const integration = input.integration === undefined ? before.integration : (input.integration ?? undefined);
    const fallbackURL = input.fallbackURL === undefined ? before.fallbackURL : (input.fallbackURL ?? undefined);
    if (integration !== undefined) next.integration = integration;
    if (fallbackURL !== undefined) next.fallbackURL = fallbackURL;
    if (next.backend === 'integration' && !next.integration) throw badRequest('integration', 'the integration backend needs the name of the integration');
    const current = await tx.siteVisitorKey.findFirst({ where: { siteId: site.id, retiresAt: null }, orderBy: { createdAt: 'desc' }, select: { algorithm: true } });
    if (opts.requirePrivateKey && current && current.algorithm !== 'HS256') {
      throw conflict(`the site verifies visitor tokens with its ${current.algorithm} public key, so there is no private key to answer with: change the settings through GraphQL (updateSitePublishingAuth), or regenerate an HS256 secret first`);
    }
    await tx.site.update({ where: { id: site.id }, data: { visitorAuth: next as Prisma.InputJsonValue } });
    if (!current) await rotateTo(tx, ctx, site.id, { algorithm: 'HS256', secret: newHmacSecret() }, now);
    await recordEvent(tx, ctx, { type: 'site_publishing_auth_updated', organizationId: site.organizationId, objectId: site.id, payload: { backend: next.backend, fields: Object.keys(input), keyCreated: !current } });
    return readPublishingAuth(tx, site.id, next as Prisma.JsonValue, now);
  });
}
