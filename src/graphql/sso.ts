// SAML single sign-on: the SamlProvider node, Organization.samlProviders and
// Organization.ssoProviderLogins, the query by id and one mutation per operation.
import { keysetConnection } from './cursors.ts';
import { builder } from './builder.ts';
import { RoleEnum, DeletePayload, dropUndefined, organizationOf, requireOrganizationOf, OWN_ORGANIZATION_ID } from './common.ts';
import {
  getSamlProvider,
  createSamlProvider,
  updateSamlProvider,
  deleteSamlProvider,
  requireSamlRead,
  listSsoLogins,
  samlProviderPermissions,
  samlProviderStatus,
  samlServiceUrls,
  certificateInfo,
} from '../domain/sso.ts';

const SamlProviderStatusEnum = builder.enumType('SamlProviderStatus', {
  description: 'active: entity ID, SSO URL and a valid certificate are set; pending: not fully configured.',
  values: {
    active: { description: 'Fully configured: members can sign in with it.' },
    pending: { description: 'Missing an entity ID, SSO URL or valid certificate; sign-in is not offered.' },
  } as const,
});

const SamlProviderService = builder.simpleObject('SamlProviderService', {
  description: 'The service-provider values to configure in the identity provider.',
  fields: (t) => ({
    acsURL: t.string({ description: 'Assertion Consumer Service URL (HTTP-POST binding).' }),
    startURL: t.string({ description: 'Starts a sign-in with this provider.' }),
    entityID: t.string({ description: 'Entity ID (audience) of this service; serves its metadata.' }),
  }),
});

const SamlProviderUrls = builder.simpleObject('SamlProviderUrls', {
  description: 'Addresses of a SAML provider.',
  fields: (t) => ({ location: t.string({ description: 'Its REST address (GET /v1/orgs/{organizationId}/saml/{samlProviderId}).' }) }),
});

const SamlProviderPermissions = builder.simpleObject('SamlProviderPermissions', {
  description: 'What you may do with the organization’s SAML providers.',
  fields: (t) => ({
    view: t.boolean({ description: 'Read them (members with a role).' }),
    edit: t.boolean({ description: 'Create, change and delete them (organization admins).' }),
  }),
});

const SsoProviderLogin = builder.simpleObject('SsoProviderLogin', {
  description: 'An active provider members can sign in with.',
  fields: (t) => ({
    id: t.id({ description: 'The SAML provider id (`saml_…`).', deprecationReason: 'Not this object\'s own id (client caches key objects by `id`): use `samlProviderId`.' }),
    label: t.string({ description: 'Its label, to show on the sign-in button.' }),
    startURL: t.string({ description: 'Open this URL to sign in with it.' }),
  }),
});

// The provider's id, named for what it is: the login's own `id` would reuse the SamlProvider's
// (docs/decisions.md, "One object, one id").
builder.objectField(SsoProviderLogin, 'samlProviderId', (t) => t.string({ description: 'The SAML provider id (`saml_…`).', resolve: (l) => String(l.id) }));

export const SamlProviderRef = builder.prismaNode('SamlProvider', {
  id: { field: 'id' },
  description: 'A SAML identity provider members can sign in with.',
  findUnique: (id, ctx) => ({
    id,
    organization: { members: { some: { userId: ctx.viewer?.user.id ?? '', disabled: false, role: { not: null } } } },
  }),
  fields: (t) => ({
    label: t.exposeString('label'),
    entityID: t.exposeString('entityID', { nullable: true, description: "The identity provider's entity ID (issuer)." }),
    ssoURL: t.exposeString('ssoURL', { nullable: true, description: "The identity provider's sign-in URL." }),
    certificate: t.exposeString('certificate', { nullable: true, description: "The identity provider's signing certificate (PEM)." }),
    certificateExpiresAt: t.field({
      type: 'DateTime',
      nullable: true,
      description: 'When the certificate expires; null without a readable certificate.',
      resolve: (p) => certificateInfo(p.certificate).expiresAt,
    }),
    defaultTeamId: t.exposeString('defaultTeamId', { nullable: true }),
    defaultTeam: t.relation('defaultTeam', { nullable: true }),
    defaultRole: t.expose('defaultRole', { type: RoleEnum, nullable: true, description: 'Role of new members; null for guests.' }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    status: t.field({ type: SamlProviderStatusEnum, description: 'Whether it is ready for sign-in.', resolve: (p) => samlProviderStatus(p) }),
    service: t.field({ type: SamlProviderService, description: 'Values to enter in the identity provider.', resolve: (p, _a, ctx) => samlServiceUrls(ctx.config.publicUrl, p.id) }),
    organizationId: t.exposeString('organizationId'),
    organization: t.relation('organization'),
    permissions: t.field({ type: SamlProviderPermissions, description: 'What you may do with it.', resolve: (p, _a, ctx) => samlProviderPermissions(ctx, p.organizationId) }),
    urls: t.field({
      type: SamlProviderUrls,
      description: 'Its REST address.',
      resolve: (p, _a, ctx) => ({ location: `${ctx.config.publicUrl}/v1/orgs/${p.organizationId}/saml/${p.id}` }),
    }),
  }),
});

builder.prismaObjectFields('Organization', (t) => ({
  samlProviders: keysetConnection(t, {
    type: 'SamlProvider',
    list: 'Organization.samlProviders',
    description: 'SAML providers, oldest first (members with a role only; FORBIDDEN for guests). REST: GET /v1/orgs/{organizationId}/saml.',
    resolve: async (page, org, _a, ctx) => {
      await requireSamlRead(ctx, org.id);
      return ctx.prisma.samlProvider.findMany(page.prisma({ where: { organizationId: org.id }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] }) as never);
    },
    // Also runs alone (`samlProviders { totalCount }` skips `resolve`): the same access rule.
    totalCount: async (org, _a, ctx) => {
      await requireSamlRead(ctx, org.id);
      return ctx.prisma.samlProvider.count({ where: { organizationId: org.id } });
    },
  }),
  ssoProviderLogins: t.field({
    type: [SsoProviderLogin],
    description: 'Active SSO providers to sign in with (any member). REST: GET /v1/orgs/{organizationId}/sso.',
    resolve: (org, _a, ctx) => listSsoLogins(ctx, org.id),
  }),
}));

builder.queryField('samlProvider', (t) =>
  t.prismaField({
    type: 'SamlProvider',
    nullable: true,
    description: 'A SAML provider of an organization (members with a role). REST: GET /v1/orgs/{organizationId}/saml/{samlProviderId}.',
    args: {
      organizationId: t.arg.id({ required: true, description: 'Organization (`org_…`).' }),
      id: t.arg.id({ required: true, description: 'SAML provider id (`saml_…`).' }),
    },
    resolve: async (query, _r, args, ctx) => {
      const p = await getSamlProvider(ctx, String(args.organizationId), String(args.id));
      return ctx.prisma.samlProvider.findUniqueOrThrow({ ...query, where: { id: p.id } });
    },
  }),
);

const SamlProviderPayload = builder.simpleObject('SamlProviderPayload', {
  description: 'Result of a SAML provider mutation.',
  fields: (t) => ({ samlProvider: t.field({ type: SamlProviderRef, description: 'The provider after the change.' }) }),
});

const CreateSamlProviderInput = builder.inputType('CreateSamlProviderInput', {
  description: 'The provider to add; it stays `pending` until entityID, ssoURL and certificate are set.',
  fields: (t) => ({
    organizationId: t.id({ required: true, description: 'Organization (`org_…`).' }),
    label: t.string({ required: true, description: '1 to 30 characters.' }),
    entityID: t.string({ description: "The identity provider's entity ID (max 1024)." }),
    certificate: t.string({ description: "The identity provider's signing certificate, PEM (max 10000)." }),
    ssoURL: t.string({ description: "The identity provider's sign-in URL." }),
    defaultTeam: t.id({ description: 'Team of this organization new SSO members join.' }),
    defaultRole: t.field({ type: RoleEnum, description: 'Role of new SSO members; null for guests.' }),
  }),
});

const UpdateSamlProviderInput = builder.inputType('UpdateSamlProviderInput', {
  description: 'Omitted fields are kept; an empty entityID/certificate or a null defaultTeam clears it.',
  fields: (t) => ({
    organizationId: t.id({ description: OWN_ORGANIZATION_ID }),
    id: t.id({ required: true, description: 'Provider to update (`saml_…`).' }),
    label: t.string({ description: '1 to 30 characters.' }),
    entityID: t.string({ description: "The identity provider's entity ID (max 1024); empty clears it." }),
    certificate: t.string({ description: "The identity provider's signing certificate, PEM (max 10000); empty clears it." }),
    ssoURL: t.string({ description: "The identity provider's sign-in URL." }),
    defaultTeam: t.id({ description: 'Team new SSO members join (`team_…`); null clears it.' }),
    defaultRole: t.field({ type: RoleEnum, description: 'Role of new SSO members; null for guests.' }),
  }),
});

const DeleteSamlProviderInput = builder.inputType('DeleteSamlProviderInput', {
  description: 'The provider to delete.',
  fields: (t) => ({
    organizationId: t.id({ description: OWN_ORGANIZATION_ID }),
    id: t.id({ required: true, description: 'SAML provider id (`saml_…`).' }),
  }),
});

builder.mutationFields((t) => ({
  createSamlProvider: t.field({
    type: SamlProviderPayload,
    description: 'Add a SAML identity provider (organization admins). REST: POST /v1/orgs/{organizationId}/saml (201).',
    args: { input: t.arg({ type: CreateSamlProviderInput, required: true, description: 'The provider to add.' }) },
    resolve: async (_r, { input }, ctx) => {
      const { organizationId, ...fields } = input;
      return { samlProvider: await createSamlProvider(ctx, String(organizationId), dropUndefined(fields)) };
    },
  }),
  updateSamlProvider: t.field({
    type: SamlProviderPayload,
    description: 'Change a SAML provider (organization admins). REST: PATCH /v1/orgs/{organizationId}/saml/{samlProviderId}.',
    args: { input: t.arg({ type: UpdateSamlProviderInput, required: true, description: 'The provider and what to change.' }) },
    resolve: async (_r, { input }, ctx) => {
      const { organizationId, id, ...fields } = input;
      const org = await requireOrganizationOf(ctx, organizationId, 'samlProvider', id, 'SAML provider');
      return { samlProvider: await updateSamlProvider(ctx, org, String(id), dropUndefined(fields)) };
    },
  }),
  deleteSamlProvider: t.field({
    type: DeletePayload,
    description: 'Delete a SAML provider (organization admins). Idempotent (deleted: false when already gone). REST: DELETE /v1/orgs/{organizationId}/saml/{samlProviderId} (204 whether or not it existed).',
    args: { input: t.arg({ type: DeleteSamlProviderInput, required: true, description: 'The provider to delete.' }) },
    resolve: async (_r, { input }, ctx) => {
      const org = await organizationOf(ctx, input.organizationId, 'samlProvider', input.id);
      return { deleted: org !== null && (await deleteSamlProvider(ctx, org, String(input.id))), deletedId: String(input.id) };
    },
  }),
}));
