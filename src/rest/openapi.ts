// REST routes for OpenAPI specifications and their versions, on the GraphQL operations of
// graphql/openapi.ts.
import { z } from 'zod';
import { type RestRoute, listQuery, pageVariables, listEnvelope, compact, CONNECTION_FIELDS } from './router.ts';
import { CreateOpenApiSpecInput, UpsertOpenApiSpecInput } from '../domain/openapi.ts';

export const OPENAPI_SPEC_FIELDS = `
  id createdAt updatedAt slug sourceURL processingState lastVersion lastProcessedAt lastProcessErrorCode
  permissions { view edit delete } urls { location app }
`;

export const OPENAPI_SPEC_VERSION_FIELDS = `id createdAt url urls { location }`;

export function toRestOpenApiSpec(s: any) {
  return compact({ object: 'openapi-spec', ...s });
}

export function toRestOpenApiSpecVersion(v: any) {
  return compact({ object: 'openapi-spec-version', ...v });
}

const toRestContent = (v: any) => ({ filesystem: v.filesystem, url: v.url });

const ORG = '/v1/orgs/:organizationId/openapi';
const SPEC = `${ORG}/:specSlug`;
const noQuery = z.strictObject({});

const versionDocument = (fields: string) =>
  `query($org: ID!, $slug: String!, $version: String!) { openApiSpecVersion(organizationId: $org, slug: $slug, versionId: $version) { ${fields} } }`;

export const routes: RestRoute[] = [
  {
    method: 'GET',
    path: ORG,
    query: listQuery,
    document: `query($org: ID!, $first: Int, $after: String) { organization(id: $org) { openApiSpecs(first: $first, after: $after) { ${CONNECTION_FIELDS} nodes { ${OPENAPI_SPEC_FIELDS} } } } }`,
    variables: ({ params, query }) => ({ org: params.organizationId, ...pageVariables(query) }),
    result: (d) => listEnvelope(d.organization.openApiSpecs, toRestOpenApiSpec),
  },
  {
    method: 'POST',
    path: ORG,
    body: CreateOpenApiSpecInput,
    document: `mutation($input: CreateOpenApiSpecInput!) { createOpenApiSpec(input: $input) { openApiSpec { ${OPENAPI_SPEC_FIELDS} } } }`,
    variables: ({ params, body }) => ({ input: { organizationId: params.organizationId, ...body } }),
    result: (d) => toRestOpenApiSpec(d.createOpenApiSpec.openApiSpec),
    status: 201,
  },
  {
    method: 'GET',
    path: SPEC,
    query: noQuery,
    document: `query($org: ID!, $slug: String!) { openApiSpec(organizationId: $org, slug: $slug) { ${OPENAPI_SPEC_FIELDS} } }`,
    variables: ({ params }) => ({ org: params.organizationId, slug: params.specSlug }),
    result: (d) => toRestOpenApiSpec(d.openApiSpec),
  },
  {
    method: 'PUT',
    path: SPEC,
    body: UpsertOpenApiSpecInput,
    document: `mutation($input: UpsertOpenApiSpecInput!) { upsertOpenApiSpec(input: $input) { created openApiSpec { ${OPENAPI_SPEC_FIELDS} } } }`,
    variables: ({ params, body }) => ({ input: { organizationId: params.organizationId, slug: params.specSlug, ...body } }),
    result: (d) => toRestOpenApiSpec(d.upsertOpenApiSpec.openApiSpec),
    status: (d) => (d.upsertOpenApiSpec.created ? 201 : 200),
  },
  {
    method: 'DELETE',
    path: SPEC,
    document: `mutation($input: DeleteOpenApiSpecInput!) { deleteOpenApiSpec(input: $input) { deleted } }`,
    variables: ({ params }) => ({ input: { organizationId: params.organizationId, slug: params.specSlug } }),
    status: (d) => (d.deleteOpenApiSpec.deleted ? 205 : 204),
  },
  {
    method: 'GET',
    path: `${SPEC}/versions`,
    query: listQuery,
    document: `query($org: ID!, $slug: String!, $first: Int, $after: String) { openApiSpec(organizationId: $org, slug: $slug) { versions(first: $first, after: $after) { ${CONNECTION_FIELDS} nodes { ${OPENAPI_SPEC_VERSION_FIELDS} } } } }`,
    variables: ({ params, query }) => ({ org: params.organizationId, slug: params.specSlug, ...pageVariables(query) }),
    result: (d) => listEnvelope(d.openApiSpec.versions, toRestOpenApiSpecVersion),
  },
  {
    method: 'GET',
    path: `${SPEC}/versions/latest`,
    query: noQuery,
    document: versionDocument(OPENAPI_SPEC_VERSION_FIELDS),
    variables: ({ params }) => ({ org: params.organizationId, slug: params.specSlug, version: 'latest' }),
    result: (d) => toRestOpenApiSpecVersion(d.openApiSpecVersion),
  },
  {
    method: 'GET',
    path: `${SPEC}/versions/latest/content`,
    query: noQuery,
    document: versionDocument('filesystem url'),
    variables: ({ params }) => ({ org: params.organizationId, slug: params.specSlug, version: 'latest' }),
    result: (d) => toRestContent(d.openApiSpecVersion),
  },
  {
    method: 'GET',
    path: `${SPEC}/versions/:versionId`,
    query: noQuery,
    document: versionDocument(OPENAPI_SPEC_VERSION_FIELDS),
    variables: ({ params }) => ({ org: params.organizationId, slug: params.specSlug, version: params.versionId }),
    result: (d) => toRestOpenApiSpecVersion(d.openApiSpecVersion),
  },
  {
    method: 'GET',
    path: `${SPEC}/versions/:versionId/content`,
    query: noQuery,
    document: versionDocument('filesystem url'),
    variables: ({ params }) => ({ org: params.organizationId, slug: params.specSlug, version: params.versionId }),
    result: (d) => toRestContent(d.openApiSpecVersion),
  },
];
