// Organizations: the Organization node, queries and the seed's organization mutations.
import { keysetConnection } from './cursors.ts';
import { builder } from './builder.ts';
import { RoleEnum, DeletePayload, dropUndefined } from './common.ts';
import { Viewer } from './users.ts';
import { notFound } from '../lib/errors.ts';
import {
  updateOrganization,
  deleteLinkInvite,
  organizationsForEmailDomain,
} from '../domain/organizations.ts';

const OrganizationTypeEnum = builder.enumType('OrganizationType', { values: ['business', 'community'] as const });

const OrganizationPermissions = builder.simpleObject('OrganizationPermissions', {
  description: 'What the caller may do with the organization (computed by the access module that enforces it).',
  fields: (t) => ({
    view: t.boolean(),
    admin: t.boolean(),
    ownTeam: t.boolean(),
    createContent: t.boolean(),
    createOpenAPISpec: t.boolean(),
    ingestConversations: t.boolean(),
    viewBilling: t.boolean(),
    listMembers: t.boolean(),
    listTeams: t.boolean(),
    listIntegrations: t.boolean(),
  }),
});

const OrganizationUrls = builder.simpleObject('OrganizationUrls', {
  fields: (t) => ({ location: t.string(), app: t.string(), logo: t.string({ nullable: true }) }),
});

const OrganizationTrial = builder.simpleObject('OrganizationTrial', {
  fields: (t) => ({ status: t.string() }),
});

const DefaultContent = builder.simpleObject('OrganizationDefaultContent', {
  fields: (t) => ({ type: t.string(), site: t.string() }),
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
      resolve: (o) => (o.defaultContent as { type: string; site: string } | null) ?? null,
    }),
    sso: t.exposeBoolean('sso'),
    ai: t.exposeBoolean('ai'),
    inviteLinks: t.exposeBoolean('inviteLinks'),
    plan: t.exposeString('plan'),
    trial: t.field({ type: OrganizationTrial, resolve: () => ({ status: 'notapplicable' }) }),
    urls: t.field({
      type: OrganizationUrls,
      resolve: (o, _a, ctx) => ({
        location: `${ctx.config.publicUrl}/v1/orgs/${o.id}`,
        app: `${ctx.config.appUrl}/o/${o.id}`,
        logo: o.logo,
      }),
    }),
    permissions: t.field({
      type: OrganizationPermissions,
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
    args: { id: t.arg.id({ required: true }) },
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
    description: 'Organizations claiming an e-mail domain that you belong to or could join.',
    args: { emailDomain: t.arg.string({ required: true }) },
    resolve: (_query, _r, { emailDomain }, ctx) => organizationsForEmailDomain(ctx, emailDomain),
  }),
}));

const DefaultContentInput = builder.inputType('OrganizationDefaultContentInput', {
  fields: (t) => ({ type: t.string({ required: true }), site: t.string({ required: true }) }),
});

const UpdateOrganizationInput = builder.inputType('UpdateOrganizationInput', {
  description: 'Omitted fields are kept; null clears the nullable ones.',
  fields: (t) => ({
    id: t.id({ required: true }),
    title: t.string(),
    emailDomains: t.stringList(),
    hostname: t.string(),
    defaultRole: t.field({ type: RoleEnum, description: 'null makes new members guests' }),
    defaultContent: t.field({ type: DefaultContentInput }),
    logo: t.string(),
    sso: t.boolean(),
    ai: t.boolean(),
    inviteLinks: t.boolean(),
  }),
});

const UpdateOrganizationPayload = builder.simpleObject('UpdateOrganizationPayload', {
  fields: (t) => ({ organization: t.field({ type: OrganizationRef }) }),
});

builder.mutationFields((t) => ({
  updateOrganization: t.field({
    type: UpdateOrganizationPayload,
    args: { input: t.arg({ type: UpdateOrganizationInput, required: true }) },
    resolve: async (_r, { input }, ctx) => {
      const { id, ...fields } = input;
      const organization = await updateOrganization(ctx, String(id), dropUndefined(fields));
      return { organization };
    },
  }),
  deleteLinkInvite: t.field({
    type: DeletePayload,
    args: {
      input: t.arg({
        type: builder.inputType('DeleteLinkInviteInput', {
          fields: (f) => ({ organizationId: f.id({ required: true }), inviteId: f.id({ required: true }) }),
        }),
        required: true,
      }),
    },
    resolve: async (_r, { input }, ctx) => ({
      deleted: await deleteLinkInvite(ctx, String(input.organizationId), String(input.inviteId)),
      deletedId: String(input.inviteId),
    }),
  }),
}));
