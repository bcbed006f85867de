// REST routes for SAML providers and SSO logins, on the GraphQL operations of graphql/sso.ts.
// The sign-in endpoints themselves (`/sso/saml/{id}/…`) are served by http/sso.ts.
import { z } from 'zod';
import { type RestRoute, listQuery, pageVariables, listEnvelope, CONNECTION_FIELDS } from './router.ts';
import { TEAM_FIELDS, toRestTeam } from './teams.ts';
import { CreateSamlProviderInput, UpdateSamlProviderInput } from '../domain/sso.ts';

export const SAML_PROVIDER_FIELDS = `
  id label entityID certificate ssoURL defaultRole createdAt status
  defaultTeam { ${TEAM_FIELDS} }
  service { acsURL startURL entityID }
  urls { location }
`;

/**
 * The contract requires `entityID`, `certificate` and `ssoURL` even on a provider that is not
 * configured yet (`pending`): unset values are given as empty strings. `defaultRole` is required
 * and nullable (null = new members are guests). `defaultTeam` is omitted when unset.
 */
export function toRestSamlProvider(p: any) {
  const { defaultTeam, ...rest } = p;
  return {
    object: 'saml-provider',
    ...rest,
    entityID: p.entityID ?? '',
    certificate: p.certificate ?? '',
    ssoURL: p.ssoURL ?? '',
    defaultRole: p.defaultRole ?? null,
    ...(defaultTeam ? { defaultTeam: toRestTeam(defaultTeam) } : {}),
  };
}

const ORG = '/v1/orgs/:organizationId';
const noQuery = z.strictObject({});

export const routes: RestRoute[] = [
  {
    method: 'GET',
    path: `${ORG}/saml`,
    query: listQuery,
    document: `query($org: ID!, $first: Int, $after: String) { organization(id: $org) { samlProviders(first: $first, after: $after) { ${CONNECTION_FIELDS} nodes { ${SAML_PROVIDER_FIELDS} } } } }`,
    variables: ({ params, query }) => ({ org: params.organizationId, ...pageVariables(query) }),
    result: (d) => listEnvelope(d.organization.samlProviders, toRestSamlProvider),
  },
  {
    method: 'POST',
    path: `${ORG}/saml`,
    body: CreateSamlProviderInput,
    document: `mutation($input: CreateSamlProviderInput!) { createSamlProvider(input: $input) { samlProvider { ${SAML_PROVIDER_FIELDS} } } }`,
    variables: ({ params, body }) => ({ input: { organizationId: params.organizationId, ...body } }),
    result: (d) => toRestSamlProvider(d.createSamlProvider.samlProvider),
    status: 201,
  },
  {
    method: 'GET',
    path: `${ORG}/saml/:samlProviderId`,
    query: noQuery,
    document: `query($org: ID!, $id: ID!) { samlProvider(organizationId: $org, id: $id) { ${SAML_PROVIDER_FIELDS} } }`,
    variables: ({ params }) => ({ org: params.organizationId, id: params.samlProviderId }),
    result: (d) => toRestSamlProvider(d.samlProvider),
  },
  {
    method: 'PATCH',
    path: `${ORG}/saml/:samlProviderId`,
    body: UpdateSamlProviderInput,
    document: `mutation($input: UpdateSamlProviderInput!) { updateSamlProvider(input: $input) { samlProvider { ${SAML_PROVIDER_FIELDS} } } }`,
    variables: ({ params, body }) => ({ input: { organizationId: params.organizationId, id: params.samlProviderId, ...body } }),
    result: (d) => toRestSamlProvider(d.updateSamlProvider.samlProvider),
  },
  {
    // The seed answers 204 whether or not the provider existed (the document also allows 205).
    method: 'DELETE',
    path: `${ORG}/saml/:samlProviderId`,
    document: `mutation($input: DeleteSamlProviderInput!) { deleteSamlProvider(input: $input) { deleted } }`,
    variables: ({ params }) => ({ input: { organizationId: params.organizationId, id: params.samlProviderId } }),
    status: 204,
  },
  {
    method: 'GET',
    path: `${ORG}/sso`,
    query: noQuery,
    document: `query($org: ID!) { organization(id: $org) { ssoProviderLogins { id: samlProviderId label startURL } } }`,
    variables: ({ params }) => ({ org: params.organizationId }),
    result: (d) => ({ items: d.organization.ssoProviderLogins }),
  },
];
