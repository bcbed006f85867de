// Organizations: the Organization node, queries and the seed's organization mutations.
import { keysetConnection } from './cursors.ts';
import { builder } from './builder.ts';
import { RoleEnum, DeletePayload, dropUndefined, organizationOf, OWN_ORGANIZATION_ID } from './common.ts';
import { Viewer } from './users.ts';
import { notFound } from '../lib/errors.ts';
import {
  updateOrganization,
  deleteLinkInvite,
  organizationsForEmailDomain,
} from '../domain/organizations.ts';

const OrganizationTypeEnum = builder.enumType('OrganizationType', {
  description: 'What the organization is for.',
  values: {
    business: { description: 'A company or team documenting its own products.' },
    community: { description: 'An open-source project, non-profit or other community.' },
  } as const,
});

const OrganizationPermissions = builder.simpleObject('OrganizationPermissions', {
  description: 'What the caller may do with the organization (computed by the access module that enforces it).',
  fields: (t) => ({
    view: t.boolean({ description: 'True for every active member (guests included).' }),
    admin: t.boolean({ description: 'True with the admin role: settings, members, SSO, deletion.' }),
    ownTeam: t.boolean({ description: 'True for members with a role (not guests): may own a team.' }),
    createContent: t.boolean({ description: 'True with the create role or above: may create spaces, collections and sites.' }),
    createOpenAPISpec: t.boolean({ description: 'True with the create role or above: may add OpenAPI specifications.' }),
    ingestConversations: t.boolean({ description: 'True for admins: may send conversations for AI ingestion.' }),
    viewBilling: t.boolean({ description: 'True for admins: may see the plan and billing.' }),
    listMembers: t.boolean({ description: 'True for members with a role (not guests): may list the members.' }),
    listTeams: t.boolean({ description: 'True for members with a role (not guests): may list the teams.' }),
    listIntegrations: t.boolean({ description: 'True for admins: may list installed integrations.' }),
  }),
});

const OrganizationUrls = builder.simpleObject('OrganizationUrls', {
  description: 'Addresses of the organization.',
  fields: (t) => ({
    location: t.string({ description: 'Its REST address (GET /v1/orgs/{organizationId}).' }),
    app: t.string({ description: 'Its page in the web app.' }),
    logo: t.string({ nullable: true, description: 'URL of its logo image; null when none is set.' }),
  }),
});

const OrganizationTrial = builder.simpleObject('OrganizationTrial', {
  description: 'Trial state of the subscription.',
  fields: (t) => ({ status: t.string({ description: 'Always `notapplicable`: this server has no paid plans or trials.' }) }),
});

const DefaultContent = builder.simpleObject('OrganizationDefaultContent', {
  description: 'The content shown when someone opens the organization.',
  fields: (t) => ({
    type: t.string({ description: 'Kind of default content; `site` is the only kind.' }),
    site: t.string({ description: 'Id of the site shown (`site_…`).' }),
  }),
});

export const OrganizationRef = builder.prismaNode('Organization', {
  id: { field: 'id' },
  description: 'An organization: members, teams, content and sites.',
  // node(id:) finds only organizations you belong to.
  findUnique: async (id, ctx) => {
    await ctx.access.requireOrg(id, 'organization:view');
    return { id };
  },
  fields: (t) => ({
    title: t.exposeString('title'),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    emailDomains: t.exposeStringList('emailDomains'),
    hostname: t.exposeString('hostname', { nullable: true }),
    type: t.expose('type', { type: OrganizationTypeEnum }),
    useCase: t.exposeString('useCase', { nullable: true }),
    communityType: t.exposeString('communityType', { nullable: true }),
    defaultRole: t.expose('defaultRole', { type: RoleEnum, nullable: true, description: 'Role of new members; null for guests.' }),
    defaultContent: t.field({
      type: DefaultContent,
      nullable: true,
      description: 'The site shown when someone opens the organization; null when none is set.',
      resolve: (o) => (o.defaultContent as { type: string; site: string } | null) ?? null,
    }),
    sso: t.exposeBoolean('sso'),
    ai: t.exposeBoolean('ai'),
    inviteLinks: t.exposeBoolean('inviteLinks'),
    plan: t.exposeString('plan'),
    trial: t.field({ type: OrganizationTrial, description: 'Trial state (always `notapplicable` here).', resolve: () => ({ status: 'notapplicable' }) }),
    urls: t.field({
      type: OrganizationUrls,
      description: 'REST, app and logo addresses.',
      resolve: (o, _a, ctx) => ({
        location: `${ctx.config.publicUrl}/v1/orgs/${o.id}`,
        app: `${ctx.config.appUrl}/o/${o.id}`,
        logo: o.logo,
      }),
    }),
    permissions: t.field({
      type: OrganizationPermissions,
      description: 'What you may do in this organization.',
      resolve: (o, _a, ctx) => ctx.access.organizationPermissions(o.id),
    }),
  }),
});

builder.objectField(Viewer, 'organizations', (t) =>
  keysetConnection(t, {
    type: 'Organization',
    list: 'Viewer.organizations',
    description: 'Organizations you are a member of.',
    resolve: (page, v, _a, ctx) =>
      ctx.prisma.organization.findMany(page.prisma({ where: { members: { some: { userId: v.userId, disabled: false } } },
        orderBy: { id: 'asc' }, }) as never),
    totalCount: (v, _a, ctx) => ctx.prisma.organization.count({ where: { members: { some: { userId: v.userId, disabled: false } } } }),
  }),
);

builder.queryFields((t) => ({
  organization: t.prismaField({
    type: 'Organization',
    nullable: true,
    description: 'An organization you are a member of (NOT_FOUND otherwise). REST: GET /v1/orgs/{organizationId}.',
    args: { id: t.arg.id({ required: true, description: 'Organization id (`org_…`).' }) },
    resolve: async (query, _r, { id }, ctx) => {
      // Membership decides visibility; the row is then read once, with the selection's relations.
      await ctx.access.requireOrg(String(id), 'organization:view');
      const org = await ctx.prisma.organization.findUnique({ ...query, where: { id: String(id) } });
      if (!org) throw notFound('Organization');
      return org;
    },
  }),
  organizationsByEmailDomain: t.prismaField({
    type: ['Organization'],
    description: 'Organizations claiming an e-mail domain that you belong to or could join. REST: GET /v1/email-domains/{emailDomain}/orgs.',
    args: { emailDomain: t.arg.string({ required: true, description: 'E-mail domain, e.g. `example.com`.' }) },
    resolve: (_query, _r, { emailDomain }, ctx) => organizationsForEmailDomain(ctx, emailDomain),
  }),
}));

const DefaultContentInput = builder.inputType('OrganizationDefaultContentInput', {
  description: 'The content to show when someone opens the organization.',
  fields: (t) => ({
    type: t.string({ required: true, description: 'Kind of default content: `site`.' }),
    site: t.string({ required: true, description: 'Id of a site of the organization (`site_…`).' }),
  }),
});

const UpdateOrganizationInput = builder.inputType('UpdateOrganizationInput', {
  description: 'Omitted fields are kept; null clears the nullable ones.',
  fields: (t) => ({
    id: t.id({ required: true, description: 'Organization to update (`org_…`).' }),
    title: t.string({ description: 'New name.' }),
    emailDomains: t.stringList({ description: 'E-mail domains (up to 100) whose users may find and join the organization; replaces the list.' }),
    hostname: t.string({ description: 'Custom hostname: 3–32 lower-case letters, digits and hyphens, unused by other organizations.' }),
    defaultRole: t.field({ type: RoleEnum, description: 'Role given to new members; null makes new members guests.' }),
    defaultContent: t.field({ type: DefaultContentInput, description: 'Site shown when the organization is opened; null clears it.' }),
    logo: t.string({ description: 'URL of the logo image; null clears it.' }),
    sso: t.boolean({ description: 'Whether SAML single sign-on is enabled.' }),
    ai: t.boolean({ description: 'Whether AI features are enabled.' }),
    inviteLinks: t.boolean({ description: 'Whether invite links may be used to join.' }),
  }),
});

const UpdateOrganizationPayload = builder.simpleObject('UpdateOrganizationPayload', {
  description: 'Result of updateOrganization.',
  fields: (t) => ({ organization: t.field({ type: OrganizationRef, description: 'The organization after the update.' }) }),
});

builder.mutationFields((t) => ({
  updateOrganization: t.field({
    type: UpdateOrganizationPayload,
    description: 'Change an organization’s settings. Admins only. REST: PATCH /v1/orgs/{organizationId}.',
    args: { input: t.arg({ type: UpdateOrganizationInput, required: true, description: 'The organization and the settings to change.' }) },
    resolve: async (_r, { input }, ctx) => {
      const { id, ...fields } = input;
      const organization = await updateOrganization(ctx, String(id), dropUndefined(fields));
      return { organization };
    },
  }),
  deleteLinkInvite: t.field({
    type: DeletePayload,
    description: 'Revoke an invite link; deleting one already gone answers deleted: false. Admins only. REST: DELETE /v1/orgs/{organizationId}/link-invites/{inviteId}.',
    args: {
      input: t.arg({
        type: builder.inputType('DeleteLinkInviteInput', {
          description: 'The invite link to revoke.',
          fields: (f) => ({
            organizationId: f.id({ description: OWN_ORGANIZATION_ID }),
            inviteId: f.id({ required: true, description: 'Invite link id (`inv_…`).' }),
          }),
        }),
        required: true,
        description: 'The invite link to revoke.',
      }),
    },
    resolve: async (_r, { input }, ctx) => {
      const org = await organizationOf(ctx, input.organizationId, 'linkInvite', input.inviteId);
      return { deleted: org !== null && (await deleteLinkInvite(ctx, org, String(input.inviteId))), deletedId: String(input.inviteId) };
    },
  }),
}));
