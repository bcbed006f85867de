// Translation settings: the TranslationSettings node, Organization.translations, the query by id
// and one mutation per operation (create, update, delete).
import { keysetConnection } from './cursors.ts';
import { builder } from './builder.ts';
import { DeletePayload, dropUndefined, organizationOf, requireOrganizationOf, OWN_ORGANIZATION_ID } from './common.ts';
import {
  getTranslationSettings,
  createTranslationSettings,
  updateTranslationSettings,
  deleteTranslationSettings,
  requireTranslationsRead,
  translationSettingsPermissions,
} from '../domain/translations.ts';

const TranslationSettingsPermissions = builder.simpleObject('TranslationSettingsPermissions', {
  description: 'What the caller may do with the translation settings (computed by the rule that enforces it).',
  fields: (t) => ({
    view: t.boolean({ description: 'Read them (members with a role).' }),
    edit: t.boolean({ description: 'Create, change and delete them (organization admins).' }),
  }),
});

const TranslationSettingsUrls = builder.simpleObject('TranslationSettingsUrls', {
  description: 'Addresses of translation settings.',
  fields: (t) => ({ location: t.string({ description: 'Its REST address (GET /v1/orgs/{organizationId}/translations/{translationSettingsId}).' }) }),
});

export const TranslationSettingsRef = builder.prismaNode('TranslationSettings', {
  id: { field: 'id' },
  description: 'Translation settings of an organization: a title and target languages (BCP 47 tags).',
  // node(id:) only finds settings of organizations where the caller is a member with a role.
  findUnique: (id, ctx) => ({
    id,
    organization: { members: { some: { userId: ctx.viewer?.user.id ?? '', disabled: false, role: { not: null } } } },
  }),
  fields: (t) => ({
    title: t.exposeString('title'),
    languages: t.exposeStringList('languages', { description: 'Canonical BCP 47 language tags.' }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
    organizationId: t.exposeString('organizationId'),
    organization: t.relation('organization'),
    permissions: t.field({
      type: TranslationSettingsPermissions,
      description: 'What you may do with them.',
      resolve: (s, _a, ctx) => translationSettingsPermissions(ctx, s.organizationId),
    }),
    urls: t.field({
      type: TranslationSettingsUrls,
      description: 'Its REST address.',
      resolve: (s, _a, ctx) => ({ location: `${ctx.config.publicUrl}/v1/orgs/${s.organizationId}/translations/${s.id}` }),
    }),
  }),
});

builder.prismaObjectField('Organization', 'translations', (t) =>
  keysetConnection(t, {
    type: 'TranslationSettings',
    list: 'Organization.translations',
    description: 'Translation settings, oldest first (members with a role only; FORBIDDEN for guests). REST: GET /v1/orgs/{organizationId}/translations.',
    resolve: async (page, org, _a, ctx) => {
      await requireTranslationsRead(ctx, org.id);
      return ctx.prisma.translationSettings.findMany(page.prisma({ where: { organizationId: org.id }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] }) as never);
    },
    // Also runs alone (`translations { totalCount }` skips `resolve`): the same access rule.
    totalCount: async (org, _a, ctx) => {
      await requireTranslationsRead(ctx, org.id);
      return ctx.prisma.translationSettings.count({ where: { organizationId: org.id } });
    },
  }),
);

builder.queryField('translationSettings', (t) =>
  t.prismaField({
    type: 'TranslationSettings',
    nullable: true,
    description: 'Translation settings of an organization (members with a role). REST: GET /v1/orgs/{organizationId}/translations/{translationSettingsId}.',
    args: {
      organizationId: t.arg.id({ required: true, description: 'Organization (`org_…`).' }),
      id: t.arg.id({ required: true, description: 'Translation settings id (`trs_…`).' }),
    },
    resolve: async (query, _r, args, ctx) => {
      const s = await getTranslationSettings(ctx, String(args.organizationId), String(args.id));
      return ctx.prisma.translationSettings.findUniqueOrThrow({ ...query, where: { id: s.id } });
    },
  }),
);

const TranslationSettingsPayload = builder.simpleObject('TranslationSettingsPayload', {
  description: 'Result of a translation settings mutation.',
  fields: (t) => ({ translationSettings: t.field({ type: TranslationSettingsRef, description: 'The settings after the change.' }) }),
});

const CreateTranslationSettingsInput = builder.inputType('CreateTranslationSettingsInput', {
  description: 'The translation settings to create.',
  fields: (t) => ({
    organizationId: t.id({ required: true, description: 'Organization (`org_…`).' }),
    title: t.string({ required: true, description: '1 to 100 characters.' }),
    languages: t.stringList({ description: 'BCP 47 language tags; canonicalized.' }),
  }),
});

const UpdateTranslationSettingsInput = builder.inputType('UpdateTranslationSettingsInput', {
  description: 'Replaces the title; `languages`, when given, replaces the list.',
  fields: (t) => ({
    organizationId: t.id({ description: OWN_ORGANIZATION_ID }),
    id: t.id({ required: true, description: 'Settings to replace (`trs_…`).' }),
    title: t.string({ required: true, description: '1 to 100 characters.' }),
    languages: t.stringList({ description: 'BCP 47 language tags; canonicalized. Omitted keeps the list.' }),
  }),
});

const DeleteTranslationSettingsInput = builder.inputType('DeleteTranslationSettingsInput', {
  description: 'The translation settings to delete.',
  fields: (t) => ({
    organizationId: t.id({ description: OWN_ORGANIZATION_ID }),
    id: t.id({ required: true, description: 'Translation settings id (`trs_…`).' }),
  }),
});

builder.mutationFields((t) => ({
  createTranslationSettings: t.field({
    type: TranslationSettingsPayload,
    description: 'Create translation settings (organization admins). REST: POST /v1/orgs/{organizationId}/translations (201).',
    args: { input: t.arg({ type: CreateTranslationSettingsInput, required: true, description: 'The settings to create.' }) },
    resolve: async (_r, { input }, ctx) => {
      const { organizationId, ...fields } = input;
      return { translationSettings: await createTranslationSettings(ctx, String(organizationId), dropUndefined(fields)) };
    },
  }),
  updateTranslationSettings: t.field({
    type: TranslationSettingsPayload,
    description: 'Replace translation settings (organization admins). REST: PUT /v1/orgs/{organizationId}/translations/{translationSettingsId}.',
    args: { input: t.arg({ type: UpdateTranslationSettingsInput, required: true, description: 'The settings and their new values.' }) },
    resolve: async (_r, { input }, ctx) => {
      const { organizationId, id, ...fields } = input;
      const org = await requireOrganizationOf(ctx, organizationId, 'translationSettings', id, 'Translation settings');
      return { translationSettings: await updateTranslationSettings(ctx, org, String(id), dropUndefined(fields)) };
    },
  }),
  deleteTranslationSettings: t.field({
    type: DeletePayload,
    description: 'Delete translation settings. REST: DELETE /v1/orgs/{organizationId}/translations/{translationSettingsId} (205 deleted, 204 absent). Organization admins; idempotent (deleted: false when already gone).',
    args: { input: t.arg({ type: DeleteTranslationSettingsInput, required: true, description: 'The settings to delete.' }) },
    resolve: async (_r, { input }, ctx) => {
      const org = await organizationOf(ctx, input.organizationId, 'translationSettings', input.id);
      return { deleted: org !== null && (await deleteTranslationSettings(ctx, org, String(input.id))), deletedId: String(input.id) };
    },
  }),
}));
