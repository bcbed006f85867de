// Visitor authentication of a site (src/domain/visitor-keys.ts): the `sitePublishingAuth` query
// and its four mutations, for site admins (they carry the HS256 secret), and `Site.visitorAuth`,
// the settings and keys without any secret, for the site's organization members.
import { builder } from './builder.ts';
import { dropUndefined, loader, OWN_ORGANIZATION_ID } from './common.ts';
import type { Context } from './context.ts';
import { SiteRef, ids, viewOf as siteViewOf } from './sites.ts';
import {
  activeKeysBySite,
  getPublishingAuth,
  regenerateVisitorKey,
  removeVisitorPublicKey,
  setVisitorPublicKey,
  settingsOf,
  updatePublishingAuth,
  viewOf,
  type KeyRow,
  type PublishingAuth,
  type VisitorAuthView,
  type VisitorKeyInfo,
} from '../domain/visitor-keys.ts';

const VisitorKeyAlgorithmEnum = builder.enumType('VisitorKeyAlgorithm', {
  description: 'How a visitor key signs visitor tokens (the JWT `alg`).',
  values: {
    HS256: { description: 'HMAC-SHA256 with the secret the gateway generates (regenerateSiteVisitorKey).' },
    RS256: { description: 'RSA (2048 bits or more) with SHA-256: the owner signs with its private key, the site holds the public key.' },
    ES256: { description: 'ECDSA on P-256 with SHA-256: the owner signs with its private key, the site holds the public key.' },
  } as const,
});

const VisitorAuthBackendEnum = builder.enumType('VisitorAuthBackend', {
  description: 'Who authenticates the visitors of a visitor-auth site and signs their tokens.',
  values: {
    custom: { description: 'The owner’s own backend.' },
    integration: { description: 'An installed integration (named by `integration`).' },
  } as const,
});

const SiteVisitorKeyRef = builder.objectRef<VisitorKeyInfo>('SiteVisitorKey').implement({
  description: 'A key that verifies the site’s visitor tokens: the current one, or a rotated-out one still in its overlap window. Never the secret.',
  fields: (t) => ({
    id: t.exposeID('id', { description: 'The key (`svk_…`).' }),
    algorithm: t.field({ type: VisitorKeyAlgorithmEnum, description: 'The JWT `alg` the key verifies.', resolve: (k) => k.algorithm }),
    createdAt: t.field({ type: 'DateTime', description: 'When the key was generated or set.', resolve: (k) => k.createdAt }),
    retiresAt: t.field({ type: 'DateTime', nullable: true, description: 'When a rotated-out key stops verifying; null for the current key.', resolve: (k) => k.retiresAt }),
    current: t.exposeBoolean('current', { description: 'Whether this is the site’s current key (new tokens should be signed with it).' }),
    publicKey: t.exposeString('publicKey', { nullable: true, description: 'The owner’s public key (SPKI PEM) for RS256/ES256; null for HS256 secrets.' }),
  }),
});

type Types = typeof builder extends PothosSchemaTypes.SchemaBuilder<infer T> ? T : never;

/** The fields the members' view and the admins' one share. */
function visitorAuthFields(t: PothosSchemaTypes.ObjectFieldBuilder<Types, VisitorAuthView>) {
  return {
    backend: t.field({ type: VisitorAuthBackendEnum, description: 'Who authenticates visitors (`custom` when never set).', resolve: (v) => v.backend }),
    integration: t.string({ nullable: true, description: 'The integration used as the backend, if any.', resolve: (v) => v.integration }),
    fallbackURL: t.string({ nullable: true, description: 'Where visitors go when their token is missing or invalid.', resolve: (v) => v.fallbackURL }),
    keys: t.field({ type: [SiteVisitorKeyRef], description: 'Keys that verify tokens now, newest first: the current key and rotated-out ones in their overlap.', resolve: (v) => v.keys }),
  };
}

const SiteVisitorAuthRef = builder.objectRef<VisitorAuthView>('SiteVisitorAuth').implement({
  description: 'Visitor authentication of a site as its members see it: settings and keys, no secret.',
  fields: (t) => visitorAuthFields(t),
});

const SitePublishingAuthRef = builder.objectRef<PublishingAuth>('SitePublishingAuth').implement({
  description: 'Visitor authentication of a site as its admins see it, with the HS256 secret. REST: GET /v1/orgs/{organizationId}/sites/{siteId}/publishing/auth.',
  fields: (t) => ({
    siteId: t.exposeID('siteId', { description: 'The site (`site_…`).' }),
    ...visitorAuthFields(t),
    privateKey: t.exposeString('privateKey', {
      nullable: true,
      description: 'The current HS256 secret (base64url) that signs visitor tokens; null when the current key is a public key, or before the first key.',
    }),
  }),
});

builder.prismaObjectField(SiteRef, 'visitorAuth', (t) =>
  t.field({
    type: SiteVisitorAuthRef,
    nullable: true,
    description: 'Visitor authentication: backend, fallback URL and the keys that verify visitor tokens (never a secret). Organization members only; null for other readers.',
    select: { id: true, organizationId: true, visitorAuth: true },
    resolve: async (site, _a, ctx) => {
      if (siteViewOf(site)?.member === false) return null;
      if (!(await ctx.access.canOrg(site.organizationId, 'site:read'))) return null;
      return viewOf(site.id, settingsOf(site.visitorAuth), await keysOf(ctx, site.id));
    },
  }),
);

/** The site's active keys, batched per request. */
function keysOf(ctx: Context, siteId: string) {
  return loader<string, KeyRow[]>(ctx, 'site.visitorKeys', async (siteIds) => {
    const bySite = await activeKeysBySite(ctx.prisma, siteIds, ctx.clock.now());
    return siteIds.map((id) => bySite.get(id) ?? []);
  }).load(siteId);
}

builder.queryFields((t) => ({
  sitePublishingAuth: t.field({
    type: SitePublishingAuthRef,
    nullable: true,
    description: 'Visitor authentication of a site with its current HS256 secret (organization admins; FORBIDDEN for other members). REST: GET /v1/orgs/{organizationId}/sites/{siteId}/publishing/auth.',
    args: {
      siteId: t.arg.id({ required: true, description: 'The site (`site_…`).' }),
      organizationId: t.arg.id({ description: 'When given, the site must belong to it (REST paths).' }),
    },
    resolve: (_r, args, ctx) => getPublishingAuth(ctx, args.organizationId ? String(args.organizationId) : undefined, String(args.siteId)),
  }),
}));

// ------------------------------------------------------------------ mutations

const SitePublishingAuthPayload = builder.simpleObject('SitePublishingAuthPayload', {
  description: 'Visitor authentication of the site after the change.',
  fields: (t) => ({ publishingAuth: t.field({ type: SitePublishingAuthRef, description: 'Settings, keys and the current HS256 secret.' }) }),
});
const RemoveSiteVisitorPublicKeyPayload = builder.simpleObject('RemoveSiteVisitorPublicKeyPayload', {
  description: 'Result of removing a site’s public keys (idempotent).',
  fields: (t) => ({
    deleted: t.boolean({ description: 'True when a public key was removed, false when the site had none.' }),
    publishingAuth: t.field({ type: SitePublishingAuthRef, description: 'Settings and keys after the removal.' }),
  }),
});

const SiteVisitorKeyInput = builder.inputType('SiteVisitorKeyInput', {
  description: 'Names the site whose visitor key to change.',
  fields: (t) => ({
    organizationId: t.id({ description: OWN_ORGANIZATION_ID }),
    siteId: t.id({ required: true, description: 'The site (`site_…`).' }),
  }),
});
const UpdateSitePublishingAuthInput = builder.inputType('UpdateSitePublishingAuthInput', {
  description: 'Omitted fields are kept; null unsets `integration` and `fallbackURL`. At least one of backend, integration, fallbackURL.',
  fields: (t) => ({
    organizationId: t.id({ description: OWN_ORGANIZATION_ID }),
    siteId: t.id({ required: true, description: 'The site (`site_…`).' }),
    backend: t.field({ type: VisitorAuthBackendEnum, description: 'Who authenticates visitors; `integration` needs `integration`.' }),
    integration: t.string({ description: 'The integration used as the backend (1 to 100 characters); null removes it.' }),
    fallbackURL: t.string({ description: 'An http(s) URL visitors are sent to when their token is missing or invalid; null removes it.' }),
    requirePrivateKey: t.boolean({
      description: 'When true, refuse with CONFLICT (nothing changed) if the current key is a public key, so the answer always carries a private key (the REST PATCH sets it).',
    }),
  }),
});
const SetSiteVisitorPublicKeyInput = builder.inputType('SetSiteVisitorPublicKeyInput', {
  description: 'The owner’s public key that verifies the site’s visitor tokens from now on.',
  fields: (t) => ({
    organizationId: t.id({ description: OWN_ORGANIZATION_ID }),
    siteId: t.id({ required: true, description: 'The site (`site_…`).' }),
    algorithm: t.field({ type: VisitorKeyAlgorithmEnum, required: true, description: '`RS256` or `ES256` (HS256 secrets are generated by regenerateSiteVisitorKey).' }),
    publicKey: t.string({ required: true, description: 'The public key, SPKI PEM (`-----BEGIN PUBLIC KEY-----`); RSA keys of 2048 bits or more, EC keys on P-256.' }),
  }),
});

builder.mutationFields((t) => ({
  regenerateSiteVisitorKey: t.field({
    type: SitePublishingAuthPayload,
    description:
      'Generate a new HS256 secret (32 random bytes) that becomes the site’s current visitor key; the previous current key keeps verifying for VISITOR_KEY_OVERLAP_SECONDS. Organization admins only. REST: POST /v1/orgs/{organizationId}/sites/{siteId}/publishing/auth/regenerate.',
    args: { input: t.arg({ type: SiteVisitorKeyInput, required: true, description: 'The site.' }) },
    resolve: async (_r, { input }, ctx) => {
      const k = ids(input);
      return { publishingAuth: await regenerateVisitorKey(ctx, k.org, k.site) };
    },
  }),
  updateSitePublishingAuth: t.field({
    type: SitePublishingAuthPayload,
    description:
      'Change the visitor authentication settings (backend, integration, fallback URL). A site without a visitor key gets its HS256 secret in the same transaction. Organization admins only. REST: PATCH /v1/orgs/{organizationId}/sites/{siteId}/publishing/auth.',
    args: { input: t.arg({ type: UpdateSitePublishingAuthInput, required: true, description: 'The site and what to change.' }) },
    resolve: async (_r, { input }, ctx) => {
      const { organizationId, siteId, requirePrivateKey, backend, ...rest } = input;
      const k = ids({ organizationId, siteId });
      return { publishingAuth: await updatePublishingAuth(ctx, k.org, k.site, dropUndefined({ ...rest, backend: backend ?? undefined }), { requirePrivateKey: requirePrivateKey === true }) };
    },
  }),
  setSiteVisitorPublicKey: t.field({
    type: SitePublishingAuthPayload,
    description:
      'Make the owner’s RS256 or ES256 public key the site’s current visitor key (tokens are then signed with the owner’s private key); the previous current key keeps verifying for VISITOR_KEY_OVERLAP_SECONDS. BAD_REQUEST naming `publicKey` for a key that is not SPKI PEM of that algorithm, or RSA under 2048 bits. Organization admins only. REST: PUT /v1/orgs/{organizationId}/sites/{siteId}/publishing/auth/public-key.',
    args: { input: t.arg({ type: SetSiteVisitorPublicKeyInput, required: true, description: 'The site, the algorithm and the public key.' }) },
    resolve: async (_r, { input }, ctx) => {
      const k = ids(input);
      return { publishingAuth: await setVisitorPublicKey(ctx, k.org, k.site, { algorithm: input.algorithm, publicKey: input.publicKey }) };
    },
  }),
  removeSiteVisitorPublicKey: t.field({
    type: RemoveSiteVisitorPublicKeyPayload,
    description:
      'Remove the site’s public keys (the current one and any in its overlap): tokens signed with them stop verifying at once. Idempotent (deleted: false when there was none). Organization admins only. REST: DELETE /v1/orgs/{organizationId}/sites/{siteId}/publishing/auth/public-key.',
    args: { input: t.arg({ type: SiteVisitorKeyInput, required: true, description: 'The site.' }) },
    resolve: async (_r, { input }, ctx) => {
      const k = ids(input);
      const r = await removeVisitorPublicKey(ctx, k.org, k.site);
      return { deleted: r.deleted, publishingAuth: r.auth };
    },
  }),
}));
