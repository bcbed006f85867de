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
  values: ['active', 'pending'] as const,
});

const SamlProviderService = builder.simpleObject('SamlProviderService', {
  description: 'The service-provider values to configure in the identity provider.',
  fields: (t) => ({
    acsURL: t.string({ description: 'Assertion Consumer Service URL (HTTP-POST binding).' }),
    startURL: t.string({ description: 'Starts a sign-in with this provider.' }),
    entityID: t.string({ description: 'Entity ID (audience) of this service; serves its metadata.' }),
  }),
});

const SamlProviderUrls = builder.simpleObject('SamlProviderUrls', { fields: (t) => ({ location: t.string() }) });

const SamlProviderPermissions = builder.simpleObject('SamlProviderPermissions', {
  fields: (t) => ({ view: t.boolean(), edit: t.boolean() }),
});

const SsoProviderLogin = builder.simpleObject('SsoProviderLogin', {
  description: 'An active provider members can sign in with.',
  fields: (t) => ({ id: t.id(), label: t.string(), startURL: t.string() }),
});

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
      resolve: (p) => certificateInfo(p.certificate).expiresAt,
    }),
    defaultTeamId: t.exposeString('defaultTeamId', { nullable: true }),
    defaultTeam: t.relation('defaultTeam', { nullable: true }),
    defaultRole: t.expose('defaultRole', { type: RoleEnum, nullable: true, description: 'Role of new members; null for guests.' }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    status: t.field({ type: SamlProviderStatusEnum, resolve: (p) => samlProviderStatus(p) }),
    service: t.field({ type: SamlProviderService, resolve: (p, _a, ctx) => samlServiceUrls(ctx.config.publicUrl, p.id) }),
    organizationId: t.exposeString('organizationId'),
    organization: t.relation('organization'),
    permissions: t.field({ type: SamlProviderPermissions, resolve: (p, _a, ctx) => samlProviderPermissions(ctx, p.organizationId) }),
    urls: t.field({
      type: SamlProviderUrls,
      resolve: (p, _a, ctx) => ({ location: `${ctx.config.publicUrl}/v1/orgs/${p.organizationId}/saml/${p.id}` }),
    }),
  }),
});

builder.prismaObjectFields('Organization', (t) => ({
  samlProviders: keysetConnection(t, {
    type: 'SamlProvider',
    list: 'Organization.samlProviders',
    description: 'SAML providers, oldest first (members with a role only).',
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
    description: 'Active SSO providers to sign in with (any member).',
    resolve: (org, _a, ctx) => listSsoLogins(ctx, org.id),
  }),
}));

builder.queryField('samlProvider', (t) =>
  t.prismaField({
    type: 'SamlProvider',
    args: { organizationId: t.arg.id({ required: true }), id: t.arg.id({ required: true }) },
    resolve: async (query, _r, args, ctx) => {
      const p = await getSamlProvider(ctx, String(args.organizationId), String(args.id));
      return ctx.prisma.samlProvider.findUniqueOrThrow({ ...query, where: { id: p.id } });
    },
  }),
);

const SamlProviderPayload = builder.simpleObject('SamlProviderPayload', {
  fields: (t) => ({ samlProvider: t.field({ type: SamlProviderRef }) }),
});

const CreateSamlProviderInput = builder.inputType('CreateSamlProviderInput', {
  fields: (t) => ({
    organizationId: t.id({ required: true }),
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
    id: t.id({ required: true }),
    label: t.string(),
    entityID: t.string(),
    certificate: t.string(),
    ssoURL: t.string(),
    defaultTeam: t.id(),
    defaultRole: t.field({ type: RoleEnum }),
  }),
});

const DeleteSamlProviderInput = builder.inputType('DeleteSamlProviderInput', {
  fields: (t) => ({ organizationId: t.id({ description: OWN_ORGANIZATION_ID }), id: t.id({ required: true }) }),
});

builder.mutationFields((t) => ({
  createSamlProvider: t.field({
    type: SamlProviderPayload,
    description: 'REST: POST /v1/orgs/{organizationId}/saml',
    args: { input: t.arg({ type: CreateSamlProviderInput, required: true }) },
    resolve: async (_r, { input }, ctx) => {
      const { organizationId, ...fields } = input;
      return { samlProvider: await createSamlProvider(ctx, String(organizationId), dropUndefined(fields)) };
    },
  }),
  updateSamlProvider: t.field({
    type: SamlProviderPayload,
    description: 'REST: PATCH /v1/orgs/{organizationId}/saml/{samlProviderId}',
    args: { input: t.arg({ type: UpdateSamlProviderInput, required: true }) },
    resolve: async (_r, { input }, ctx) => {
      const { organizationId, id, ...fields } = input;
      const org = await requireOrganizationOf(ctx, organizationId, 'samlProvider', id, 'SAML provider');
      return { samlProvider: await updateSamlProvider(ctx, org, String(id), dropUndefined(fields)) };
    },
  }),
  deleteSamlProvider: t.field({
    type: DeletePayload,
    description: 'REST: DELETE /v1/orgs/{organizationId}/saml/{samlProviderId} (204 whether or not it existed).',
    args: { input: t.arg({ type: DeleteSamlProviderInput, required: true }) },
    resolve: async (_r, { input }, ctx) => {
      const org = await organizationOf(ctx, input.organizationId, 'samlProvider', input.id);
      return { deleted: org !== null && (await deleteSamlProvider(ctx, org, String(input.id))), deletedId: String(input.id) };
    },
  }),
}));
