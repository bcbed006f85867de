// Users, the viewer, and identity mutations beyond the seeds: createOrganization,
// createApiToken, createPublishedReadToken, revokeApiToken.
import { builder } from './builder.ts';
import { DeletePayload } from './common.ts';
import { createOrganizationWithAdmin, createOwnApiToken, requireTokenSites, requireVisibleUser } from '../domain/users.ts';
import { badRequest, notFound } from '../lib/errors.ts';

export const UserRef = builder.prismaNode('User', {
  id: { field: 'id' },
  description: 'A person with an account.',
  // node(id:) finds yourself and people who share an organization with you.
  findUnique: async (id, ctx) => {
    await requireVisibleUser(ctx, id);
    return { id };
  },
  fields: (t) => ({
    displayName: t.exposeString('displayName'),
    email: t.exposeString('email', { nullable: true }),
    photoURL: t.exposeString('photoURL', { nullable: true }),
    urls: t.field({
      type: UserUrls,
      description: 'Addresses of the user.',
      resolve: (u, _a, ctx) => ({ location: `${ctx.config.publicUrl}/v1/users/${u.id}` }),
    }),
  }),
});

const UserUrls = builder.simpleObject('UserUrls', {
  description: 'Addresses of a user.',
  fields: (t) => ({ location: t.string({ description: 'Its REST address (GET /v1/users/{userId}).' }) }),
});

export const ApiTokenRef = builder.prismaObject('ApiToken', {
  description: 'An API token (its secret is shown once, when created).',
  fields: (t) => ({
    id: t.exposeID('id'),
    label: t.exposeString('label'),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    revokedAt: t.expose('revokedAt', { type: 'DateTime', nullable: true }),
    scope: t.string({
      description: '`full` (everything its user may do) or `published` (published reads only, as a reader who is not a member: a front end’s token).',
      resolve: (r) => r.scope,
    }),
    siteIds: t.exposeStringList('siteIds', { description: 'For a `published` token: the only sites it may read; empty: any published site it may open.' }),
  }),
});

/** The authenticated caller. */
export const Viewer = builder.objectRef<{ userId: string }>('Viewer');
Viewer.implement({
  description: 'The authenticated caller and what they belong to.',
  fields: (t) => ({
    user: t.prismaField({
      type: 'User',
      description: 'Your own user account. REST: GET /v1/user.',
      resolve: (query, v, _a, ctx) => ctx.prisma.user.findUniqueOrThrow({ ...query, where: { id: v.userId } }),
    }),
    apiTokens: t.prismaField({
      type: ['ApiToken'],
      description: 'Your API tokens that are not revoked.',
      resolve: (query, v, _a, ctx) =>
        ctx.prisma.apiToken.findMany({ ...query, where: { userId: v.userId, revokedAt: null }, orderBy: { createdAt: 'asc' }, take: 1000 }),
    }),
  }),
});

builder.queryField('viewer', (t) =>
  t.field({
    type: Viewer,
    description: 'The authenticated caller (UNAUTHENTICATED without a token). REST: GET /v1/user, GET /v1/orgs.',
    resolve: (_r, _a, ctx) => ({ userId: ctx.access.requireViewer().user.id }),
  }),
);

builder.queryField('user', (t) =>
  t.prismaField({
    type: 'User',
    nullable: true,
    description: 'A user by id: yourself, or someone who belongs to an organization you are an active member of (NOT_FOUND otherwise). REST: GET /v1/users/{userId}.',
    args: { id: t.arg.id({ required: true, description: 'User id (`user_…`).' }) },
    resolve: async (query, _r, args, ctx) => {
      const id = String(args.id);
      await requireVisibleUser(ctx, id);
      const user = await ctx.prisma.user.findUnique({ ...query, where: { id } });
      if (!user) throw notFound('User');
      return user;
    },
  }),
);

const CreateApiTokenPayload = builder.simpleObject('CreateApiTokenPayload', {
  description: 'Result of createApiToken.',
  fields: (t) => ({
    token: t.string({ description: 'The secret. It is not stored and cannot be shown again.' }),
    apiToken: t.field({ type: ApiTokenRef, description: 'The token’s record (label, dates), without the secret.' }),
  }),
});

builder.mutationField('createApiToken', (t) =>
  t.field({
    type: CreateApiTokenPayload,
    description: 'Issue an API token for yourself; send it as `Authorization: Bearer <token>`. Any signed-in user, at most `API_TOKENS_PER_HOUR` (default 20) per hour (RATE_LIMITED beyond). All of a user’s tokens share one rate-limit budget. No REST twin.',
    args: {
      input: t.arg({
        type: builder.inputType('CreateApiTokenInput', {
          description: 'The token to issue.',
          fields: (f) => ({ label: f.string({ required: true, description: 'A name to recognise the token by; not empty.' }) }),
        }),
        required: true,
        description: 'The token to issue.',
      }),
    },
    resolve: async (_r, { input }, ctx) => {
      ctx.access.requireViewer();
      if (!input.label.trim()) throw badRequest('input.label', 'must not be empty');
      const { token, record } = await createOwnApiToken(ctx, input.label.trim());
      return { token, apiToken: record };
    },
  }),
);

builder.mutationField('createPublishedReadToken', (t) =>
  t.field({
    type: CreateApiTokenPayload,
    description:
      'Issue a token for a front end that renders published sites: it runs published reads only (`publishedSite`, `publishedContentByUrl`, `searchSite`; REST published routes) and reads as a reader who is not a member (no unpublished site, no conditioned content), whatever its user may do; anything else is FORBIDDEN. `siteIds` limits it to sites you may read as a member (NOT_FOUND naming `input.siteIds.N` otherwise); omitted or empty: any published site. Counts against `API_TOKENS_PER_HOUR`. Revoke it with revokeApiToken. No REST twin.',
    args: {
      input: t.arg({
        type: builder.inputType('CreatePublishedReadTokenInput', {
          description: 'The published-read token to issue.',
          fields: (f) => ({
            label: f.string({ required: true, description: 'A name to recognise the token by; not empty.' }),
            siteIds: f.idList({ required: false, description: 'The only sites it may read (at most 100); each one you may read as a member.' }),
          }),
        }),
        required: true,
        description: 'The token to issue.',
      }),
    },
    resolve: async (_r, { input }, ctx) => {
      ctx.access.requireViewer();
      if (!input.label.trim()) throw badRequest('input.label', 'must not be empty');
      const siteIds = await requireTokenSites(ctx, (input.siteIds ?? []).map(String), 'input.siteIds');
      const { token, record } = await createOwnApiToken(ctx, input.label.trim(), { scope: 'published', siteIds });
      return { token, apiToken: record };
    },
  }),
);

builder.mutationField('revokeApiToken', (t) =>
  t.field({
    type: DeletePayload,
    description: 'Revoke one of your API tokens; it stops working at once. Idempotent: deleted is false when it was already revoked. No REST twin.',
    args: {
      input: t.arg({
        type: builder.inputType('RevokeApiTokenInput', {
          description: 'The token to revoke.',
          fields: (f) => ({ id: f.id({ required: true, description: 'Id of the token (`ApiToken.id`), not its secret.' }) }),
        }),
        required: true,
        description: 'The token to revoke.',
      }),
    },
    resolve: async (_r, { input }, ctx) => {
      const viewer = ctx.access.requireViewer();
      const id = String(input.id);
      const r = await ctx.prisma.apiToken.updateMany({
        where: { id, userId: viewer.user.id, revokedAt: null },
        data: { revokedAt: ctx.clock.now() },
      });
      // Other processes drop it on the database's notice; this one at once.
      if (r.count) ctx.services.tokens?.invalidate();
      if (r.count === 0) {
        const exists = await ctx.prisma.apiToken.findFirst({ where: { id, userId: viewer.user.id }, select: { id: true } });
        if (!exists) throw notFound('API token');
      }
      return { deleted: r.count > 0, deletedId: id };
    },
  }),
);

builder.mutationField('createOrganization', (t) =>
  t.prismaField({
    type: 'Organization',
    description: 'Create an organization; you become its admin. Any signed-in user. No REST twin.',
    args: {
      input: t.arg({
        type: builder.inputType('CreateOrganizationInput', {
          description: 'The organization to create.',
          fields: (f) => ({ title: f.string({ required: true, description: 'Its name.' }) }),
        }),
        required: true,
        description: 'The organization to create.',
      }),
    },
    resolve: async (query, _r, { input }, ctx) => {
      const viewer = ctx.access.requireViewer();
      const org = await ctx.prisma.$transaction((tx) => createOrganizationWithAdmin(tx, input.title, viewer.user.id));
      return ctx.prisma.organization.findUniqueOrThrow({ ...query, where: { id: org.id } });
    },
  }),
);
