// OpenAPI specifications: the OpenApiSpec and OpenApiSpecVersion nodes, Organization.openApiSpecs,
// queries by slug and version, and one mutation per operation (create, upsert, delete).
import { keysetConnection, keysetRelation } from './cursors.ts';
import { builder } from './builder.ts';
import { DeletePayload, dropUndefined } from './common.ts';
import {
  getOpenApiSpec,
  getOpenApiSpecVersion,
  createOpenApiSpec,
  upsertOpenApiSpec,
  deleteOpenApiSpec,
  requireOpenApiRead,
  openApiSpecPermissions,
  openApiVersionContentUrl,
} from '../domain/openapi.ts';
import type { Context } from './context.ts';

const ProcessingStateEnum = builder.enumType('OpenApiSpecProcessingState', {
  description: 'pending: waiting for the job; progress: being fetched and parsed; complete: done (see lastProcessErrorCode).',
  values: {
    pending: { description: 'Waiting for the background job.' },
    progress: { description: 'Being fetched and parsed.' },
    complete: { description: 'Done; lastProcessErrorCode tells whether it failed.' },
  } as const,
});

const ProcessErrorCodeEnum = builder.enumType('OpenApiSpecProcessErrorCode', {
  description: 'Why the last processing failed.',
  values: {
    FETCH_TIMEOUT: { description: 'The source URL did not answer in time.' },
    FETCH_ERROR: { description: 'The source URL could not be fetched (network error or non-2xx status).' },
    PARSE_ERROR: { description: 'The content is not a valid OpenAPI document (JSON or YAML).' },
  } as const,
});

const OpenApiSpecPermissions = builder.simpleObject('OpenApiSpecPermissions', {
  description: 'What the caller may do with the specification (computed by the rule that enforces it).',
  fields: (t) => ({
    view: t.boolean({ description: 'Read it and its versions (members with a role).' }),
    edit: t.boolean({ description: 'Replace its source (create role in the organization).' }),
    delete: t.boolean({ description: 'Delete it (create role in the organization).' }),
  }),
});

const OpenApiSpecUrls = builder.simpleObject('OpenApiSpecUrls', {
  description: 'Addresses of a specification.',
  fields: (t) => ({
    location: t.string({ description: 'Its REST address (GET /v1/orgs/{organizationId}/openapi/{specSlug}).' }),
    app: t.string({ description: 'Its page in the web app.' }),
  }),
});

const OpenApiSpecVersionUrls = builder.simpleObject('OpenApiSpecVersionUrls', {
  description: 'Addresses of a specification version.',
  fields: (t) => ({ location: t.string({ description: 'Its REST address (GET …/openapi/{specSlug}/versions/{versionId}).' }) }),
});

const visibleToMember = (ctx: Context) => ({
  organization: { members: { some: { userId: ctx.viewer?.user.id ?? '', disabled: false, role: { not: null } } } },
});

export const OpenApiSpecVersionRef = builder.prismaNode('OpenApiSpecVersion', {
  id: { field: 'id' },
  description: 'One processed content of a specification. A new version is recorded only when the content changes.',
  // Only what lists need; `filesystem` is loaded when selected.
  select: { id: true, specId: true },
  findUnique: (id, ctx) => ({ id, spec: visibleToMember(ctx) }),
  fields: (t) => ({
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    hash: t.exposeString('contentHash', { description: 'Hash of the parsed content.' }),
    filesystem: t.field({
      type: 'JSONObject',
      description: 'The specification files (entry file and resolved external references).',
      select: { filesystem: true },
      resolve: (v) => v.filesystem as Record<string, unknown>,
    }),
    url: t.string({
      description: 'Where the content of this version can be fetched.',
      select: { spec: { select: { organizationId: true, slug: true } } },
      resolve: (v, _a, ctx) => openApiVersionContentUrl(ctx.config.publicUrl, v.spec.organizationId, v.spec.slug, v.id),
    }),
    urls: t.field({
      type: OpenApiSpecVersionUrls,
      description: 'Its REST address.',
      select: { spec: { select: { organizationId: true, slug: true } } },
      resolve: (v, _a, ctx) => ({
        location: `${ctx.config.publicUrl}/v1/orgs/${v.spec.organizationId}/openapi/${v.spec.slug}/versions/${v.id}`,
      }),
    }),
    spec: t.relation('spec'),
  }),
});

export const OpenApiSpecRef = builder.prismaNode('OpenApiSpec', {
  id: { field: 'id' },
  description: 'An OpenAPI specification of an organization, processed in the background into versions.',
  findUnique: (id, ctx) => ({ id, ...visibleToMember(ctx) }),
  // Never the source text (up to 10 MB) unless asked for.
  select: { id: true, organizationId: true, slug: true, lastVersionId: true, lastProcessErrorCode: true },
  fields: (t) => ({
    slug: t.exposeString('slug'),
    sourceURL: t.exposeString('sourceURL', { nullable: true, description: 'The URL the specification is fetched from (null for text sources).' }),
    processingState: t.expose('processingState', { type: ProcessingStateEnum }),
    lastVersion: t.exposeString('lastVersionId', { nullable: true, description: 'Id of the latest version.' }),
    latestVersion: t.prismaField({
      type: 'OpenApiSpecVersion',
      nullable: true,
      description: 'The latest version; null until the first successful processing.',
      resolve: (query, spec, _a, ctx) =>
        spec.lastVersionId ? ctx.prisma.openApiSpecVersion.findUnique({ ...query, where: { id: spec.lastVersionId } }) : null,
    }),
    lastProcessedAt: t.expose('lastProcessedAt', { type: 'DateTime', nullable: true }),
    lastProcessErrorCode: t.field({
      type: ProcessErrorCodeEnum,
      nullable: true,
      description: 'Why the last processing failed; null when it succeeded or has not run.',
      resolve: (s) => s.lastProcessErrorCode as 'FETCH_TIMEOUT' | 'FETCH_ERROR' | 'PARSE_ERROR' | null,
    }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
    organizationId: t.exposeString('organizationId'),
    organization: t.relation('organization'),
    versions: keysetRelation(t, 'versions', {
      list: 'OpenApiSpec.versions',
      description: 'Versions, newest first. REST: GET /v1/orgs/{organizationId}/openapi/{specSlug}/versions.',
      query: () => ({ orderBy: [{ createdAt: 'desc' }, { id: 'desc' }] }),
    }),
    permissions: t.field({ type: OpenApiSpecPermissions, description: 'What you may do with it.', resolve: (s, _a, ctx) => openApiSpecPermissions(ctx, s.organizationId) }),
    urls: t.field({
      type: OpenApiSpecUrls,
      description: 'REST and app addresses.',
      resolve: (s, _a, ctx) => ({
        location: `${ctx.config.publicUrl}/v1/orgs/${s.organizationId}/openapi/${s.slug}`,
        app: `${ctx.config.appUrl}/o/${s.organizationId}/openapi/${s.slug}`,
      }),
    }),
  }),
});

builder.prismaObjectField('Organization', 'openApiSpecs', (t) =>
  keysetConnection(t, {
    type: 'OpenApiSpec',
    list: 'Organization.openApiSpecs',
    description: 'OpenAPI specifications, oldest first (members with a role only; FORBIDDEN for guests). REST: GET /v1/orgs/{organizationId}/openapi.',
    resolve: async (page, org, _a, ctx) => {
      await requireOpenApiRead(ctx, org.id);
      return ctx.prisma.openApiSpec.findMany(page.prisma({ where: { organizationId: org.id }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] }) as never);
    },
    // Also runs alone (`openApiSpecs { totalCount }` skips `resolve`): the same access rule.
    totalCount: async (org, _a, ctx) => {
      await requireOpenApiRead(ctx, org.id);
      return ctx.prisma.openApiSpec.count({ where: { organizationId: org.id } });
    },
  }),
);

builder.queryFields((t) => ({
  openApiSpec: t.prismaField({
    type: 'OpenApiSpec',
    nullable: true,
    description: 'A specification by slug (members with a role). REST: GET /v1/orgs/{organizationId}/openapi/{specSlug}.',
    args: {
      organizationId: t.arg.id({ required: true, description: 'Organization (`org_…`).' }),
      slug: t.arg.string({ required: true, description: 'The specification’s slug.' }),
    },
    resolve: async (query, _r, args, ctx) => {
      const spec = await getOpenApiSpec(ctx, String(args.organizationId), args.slug);
      return ctx.prisma.openApiSpec.findUniqueOrThrow({ ...query, where: { id: spec.id } });
    },
  }),
  openApiSpecVersion: t.prismaField({
    type: 'OpenApiSpecVersion',
    nullable: true,
    description: 'A version of a specification; `versionId` may be `latest` (members with a role). REST: GET /v1/orgs/{organizationId}/openapi/{specSlug}/versions/{versionId} (and …/content).',
    args: {
      organizationId: t.arg.id({ required: true, description: 'Organization (`org_…`).' }),
      slug: t.arg.string({ required: true, description: 'The specification’s slug.' }),
      versionId: t.arg.string({ required: true, description: 'Version id (`oasv_…`) or `latest`.' }),
    },
    resolve: async (query, _r, args, ctx) => {
      const { version } = await getOpenApiSpecVersion(ctx, String(args.organizationId), args.slug, args.versionId);
      return ctx.prisma.openApiSpecVersion.findUniqueOrThrow({ ...query, where: { id: version.id } });
    },
  }),
}));

const OpenApiSpecSourceInput = builder.inputType('OpenApiSpecSourceInput', {
  description: 'Exactly one of `url` (fetched by the server) or `text`.',
  fields: (t) => ({
    url: t.string({ description: 'An http(s) URL the server fetches the specification from (and refetches on update); at most 2048 characters.' }),
    text: t.string({ description: 'The specification itself, JSON or YAML, at most 10 MB.' }),
  }),
});

const CreateOpenApiSpecInput = builder.inputType('CreateOpenApiSpecInput', {
  description: 'The specification to add.',
  fields: (t) => ({
    organizationId: t.id({ required: true, description: 'Organization (`org_…`).' }),
    slug: t.string({ required: true, description: 'URL-safe name, unique in the organization: lower-case letters and digits in words separated by hyphens, at most 100 characters.' }),
    source: t.field({ type: OpenApiSpecSourceInput, required: true, description: 'Where its content comes from.' }),
  }),
});

const UpsertOpenApiSpecInput = builder.inputType('UpsertOpenApiSpecInput', {
  description: 'The specification to create or replace.',
  fields: (t) => ({
    organizationId: t.id({ required: true, description: 'Organization (`org_…`).' }),
    slug: t.string({ required: true, description: 'URL-safe name, unique in the organization: lower-case letters and digits in words separated by hyphens, at most 100 characters.' }),
    source: t.field({ type: OpenApiSpecSourceInput, required: true, description: 'Its new source.' }),
  }),
});

const DeleteOpenApiSpecInput = builder.inputType('DeleteOpenApiSpecInput', {
  description: 'The specification to delete.',
  fields: (t) => ({
    organizationId: t.id({ required: true, description: 'Organization (`org_…`).' }),
    slug: t.string({ required: true, description: 'The specification’s slug.' }),
  }),
});

const CreateOpenApiSpecPayload = builder.simpleObject('CreateOpenApiSpecPayload', {
  description: 'Result of createOpenApiSpec.',
  fields: (t) => ({ openApiSpec: t.field({ type: OpenApiSpecRef, description: 'The new specification, `pending` until processed.' }) }),
});

const UpsertOpenApiSpecPayload = builder.simpleObject('UpsertOpenApiSpecPayload', {
  description: 'Result of upsertOpenApiSpec.',
  fields: (t) => ({
    openApiSpec: t.field({ type: OpenApiSpecRef, description: 'The specification, queued for processing.' }),
    created: t.boolean({ description: 'True when the specification did not exist (REST answers 201, else 200).' }),
  }),
});

builder.mutationFields((t) => ({
  createOpenApiSpec: t.field({
    type: CreateOpenApiSpecPayload,
    description: 'Add an OpenAPI specification (create role in the organization; CONFLICT when the slug is taken). Processing runs in the background. REST: POST /v1/orgs/{organizationId}/openapi (201).',
    args: { input: t.arg({ type: CreateOpenApiSpecInput, required: true, description: 'The specification to add.' }) },
    resolve: async (_r, { input }, ctx) => ({
      openApiSpec: await createOpenApiSpec(ctx, String(input.organizationId), { slug: input.slug, source: dropUndefined(input.source) }),
    }),
  }),
  upsertOpenApiSpec: t.field({
    type: UpsertOpenApiSpecPayload,
    description: 'REST: PUT /v1/orgs/{organizationId}/openapi/{specSlug}. Creates or replaces the source and reprocesses (create role in the organization).',
    args: { input: t.arg({ type: UpsertOpenApiSpecInput, required: true, description: 'The specification and its source.' }) },
    resolve: async (_r, { input }, ctx) => {
      const { spec, created } = await upsertOpenApiSpec(ctx, String(input.organizationId), input.slug, { source: dropUndefined(input.source) });
      return { openApiSpec: spec, created };
    },
  }),
  deleteOpenApiSpec: t.field({
    type: DeletePayload,
    description: 'Delete a specification with its versions (create role in the organization). Idempotent; deletedId is always null. REST: DELETE /v1/orgs/{organizationId}/openapi/{specSlug} (205 deleted, 204 absent).',
    args: { input: t.arg({ type: DeleteOpenApiSpecInput, required: true, description: 'The specification to delete.' }) },
    resolve: async (_r, { input }, ctx) => ({
      deleted: await deleteOpenApiSpec(ctx, String(input.organizationId), input.slug),
      deletedId: null,
    }),
  }),
}));
