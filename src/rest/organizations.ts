// REST routes for organizations, on the GraphQL operations of graphql/organizations.ts.
import { z } from 'zod';
import { type RestRoute, listQuery, pageVariables, listEnvelope, compact, CONNECTION_FIELDS } from './router.ts';
import { UpdateOrganizationInput } from '../domain/organizations.ts';

export const ORGANIZATION_FIELDS = `
  id title createdAt emailDomains hostname type useCase communityType defaultRole
  defaultContent { type site } sso ai inviteLinks plan trial { status }
  urls { location app logo }
  permissions { view admin ownTeam createContent createOpenAPISpec ingestConversations viewBilling listMembers listTeams listIntegrations }
`;

export function toRestOrganization(o: any) {
  return compact({
    object: 'organization',
    ...o,
    urls: compact(o.urls),
    defaultContent: o.defaultContent ?? undefined,
    internal_isOnNewTrial: true,
  });
}

export const routes: RestRoute[] = [
  {
    method: 'GET',
    path: '/v1/orgs',
    query: listQuery,
    document: `query($first: Int, $after: String) { viewer { organizations(first: $first, after: $after) { ${CONNECTION_FIELDS} nodes { ${ORGANIZATION_FIELDS} } } } }`,
    variables: ({ query }) => pageVariables(query),
    result: (d) => listEnvelope(d.viewer.organizations, toRestOrganization),
  },
  {
    method: 'GET',
    path: '/v1/orgs/:organizationId',
    document: `query($id: ID!) { organization(id: $id) { ${ORGANIZATION_FIELDS} } }`,
    variables: ({ params }) => ({ id: params.organizationId }),
    result: (d) => toRestOrganization(d.organization),
  },
  {
    method: 'PATCH',
    path: '/v1/orgs/:organizationId',
    body: UpdateOrganizationInput,
    document: `mutation($input: UpdateOrganizationInput!) { updateOrganization(input: $input) { organization { ${ORGANIZATION_FIELDS} } } }`,
    variables: ({ params, body }) => ({ input: { id: params.organizationId, ...body } }),
    result: (d) => toRestOrganization(d.updateOrganization.organization),
  },
  {
    method: 'DELETE',
    path: '/v1/orgs/:organizationId/link-invites/:inviteId',
    document: `mutation($input: DeleteLinkInviteInput!) { deleteLinkInvite(input: $input) { deleted } }`,
    variables: ({ params }) => ({ input: { organizationId: params.organizationId, inviteId: params.inviteId } }),
    status: (d) => (d.deleteLinkInvite.deleted ? 205 : 204),
  },
  {
    method: 'GET',
    path: '/v1/email-domains/:emailDomain/orgs',
    query: z.strictObject({}),
    document: `query($d: String!) { organizationsByEmailDomain(emailDomain: $d) { ${ORGANIZATION_FIELDS} } }`,
    variables: ({ params }) => ({ d: params.emailDomain }),
    // The contract's schema requires the misspelled `organizaitons` key too (see contract notes).
    result: (d) => {
      const organizations = d.organizationsByEmailDomain.map(toRestOrganization);
      return { organizations, organizaitons: organizations };
    },
  },
];
