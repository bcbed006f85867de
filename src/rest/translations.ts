// REST routes for translation settings, on the GraphQL operations of graphql/translations.ts.
//
// The seeds define TranslationSettings (`title`, `languages`); the OpenAPI document of
// @gitbook/api@0.130.0 describes a different "Translation" object under the same paths
// (`source`, `language`, `instructions`, `status`, `stats`). We serve the seeds' resource (see
// docs/decisions.md); `languages` is accepted in the bodies as a documented extension.
import { z } from 'zod';
import { type RestRoute, listQuery, pageVariables, listEnvelope, compact, CONNECTION_FIELDS } from './router.ts';
import { CreateTranslationSettingsInput, UpdateTranslationSettingsInput } from '../domain/translations.ts';

export const TRANSLATION_SETTINGS_FIELDS = `id title languages createdAt updatedAt permissions { view edit } urls { location }`;

export function toRestTranslationSettings(s: any) {
  return compact({ object: 'translation-settings', ...s });
}

const ORG = '/v1/orgs/:organizationId/translations';

export const routes: RestRoute[] = [
  {
    method: 'GET',
    path: ORG,
    query: listQuery,
    document: `query($org: ID!, $first: Int, $after: String) { organization(id: $org) { translations(first: $first, after: $after) { ${CONNECTION_FIELDS} nodes { ${TRANSLATION_SETTINGS_FIELDS} } } } }`,
    variables: ({ params, query }) => ({ org: params.organizationId, ...pageVariables(query) }),
    result: (d) => listEnvelope(d.organization.translations, toRestTranslationSettings),
  },
  {
    method: 'POST',
    path: ORG,
    body: CreateTranslationSettingsInput,
    document: `mutation($input: CreateTranslationSettingsInput!) { createTranslationSettings(input: $input) { translationSettings { ${TRANSLATION_SETTINGS_FIELDS} } } }`,
    variables: ({ params, body }) => ({ input: { organizationId: params.organizationId, ...body } }),
    result: (d) => toRestTranslationSettings(d.createTranslationSettings.translationSettings),
    status: 201,
  },
  {
    method: 'GET',
    path: `${ORG}/:translationSettingsId`,
    query: z.strictObject({}),
    document: `query($org: ID!, $id: ID!) { translationSettings(organizationId: $org, id: $id) { ${TRANSLATION_SETTINGS_FIELDS} } }`,
    variables: ({ params }) => ({ org: params.organizationId, id: params.translationSettingsId }),
    result: (d) => toRestTranslationSettings(d.translationSettings),
  },
  {
    method: 'PUT',
    path: `${ORG}/:translationSettingsId`,
    body: UpdateTranslationSettingsInput,
    document: `mutation($input: UpdateTranslationSettingsInput!) { updateTranslationSettings(input: $input) { translationSettings { ${TRANSLATION_SETTINGS_FIELDS} } } }`,
    variables: ({ params, body }) => ({ input: { organizationId: params.organizationId, id: params.translationSettingsId, ...body } }),
    result: (d) => toRestTranslationSettings(d.updateTranslationSettings.translationSettings),
  },
  {
    method: 'DELETE',
    path: `${ORG}/:translationSettingsId`,
    document: `mutation($input: DeleteTranslationSettingsInput!) { deleteTranslationSettings(input: $input) { deleted } }`,
    variables: ({ params }) => ({ input: { organizationId: params.organizationId, id: params.translationSettingsId } }),
    status: (d) => (d.deleteTranslationSettings.deleted ? 205 : 204),
  },
];
