// REST routes for organization members, on the GraphQL operations of graphql/members.ts. The
// REST member's `id` is the user's id (the contract addresses members by user).
import { z } from 'zod';
import { type RestRoute, listQueryShape, pageVariables, listEnvelope, compact, CONNECTION_FIELDS } from './router.ts';
import { USER_FIELDS, toRestUser } from './users.ts';
import { SPACE_FIELDS, toRestSpace } from './spaces.ts';
import { MemberListFilters, UpdateMemberInput, ListOrder } from '../domain/members.ts';

export const MEMBER_FIELDS = `id role disabled joinedAt lastSeenAt sso spaces teams user { ${USER_FIELDS} }`;

export function toRestMember(m: any) {
  return compact(
    {
      object: 'member',
      id: m.user.id,
      role: m.role,
      user: toRestUser(m.user),
      disabled: m.disabled,
      joinedAt: m.joinedAt,
      lastSeenAt: m.lastSeenAt,
      sso: m.sso,
      spaces: m.spaces,
      teams: m.teams,
    },
    ['role'],
  );
}

const MEMBER_PATH = '/v1/orgs/:organizationId/members/:userId';
const target = (params: Record<string, string>) => ({ organizationId: params.organizationId, userId: params.userId });

export const routes: RestRoute[] = [
  {
    method: 'GET',
    path: '/v1/orgs/:organizationId/members',
    query: z.strictObject({ ...listQueryShape, ...MemberListFilters.shape }),
    document: `query($org: ID!, $first: Int, $after: String, $order: MemberListOrder, $role: MemberRoleFilter, $search: String, $sort: MemberSort) {
      members(organizationId: $org, first: $first, after: $after, order: $order, role: $role, search: $search, sort: $sort) {
        ${CONNECTION_FIELDS} nodes { ${MEMBER_FIELDS} }
      }
    }`,
    variables: ({ params, query }) => ({
      org: params.organizationId,
      ...pageVariables(query),
      order: query.order,
      role: query.role,
      search: query.search,
      sort: query.sort,
    }),
    result: (d) => listEnvelope(d.members, toRestMember),
  },
  {
    method: 'GET',
    path: MEMBER_PATH,
    document: `query($org: ID!, $user: ID!) { member(organizationId: $org, userId: $user) { ${MEMBER_FIELDS} } }`,
    variables: ({ params }) => ({ org: params.organizationId, user: params.userId }),
    result: (d) => toRestMember(d.member),
  },
  {
    method: 'PATCH',
    path: MEMBER_PATH,
    body: UpdateMemberInput,
    document: `mutation($input: UpdateMemberInput!) { updateMember(input: $input) { member { ${MEMBER_FIELDS} } } }`,
    variables: ({ params, body }) => ({ input: { ...target(params), ...body } }),
    result: (d) => toRestMember(d.updateMember.member),
  },
  {
    method: 'DELETE',
    path: MEMBER_PATH,
    document: `mutation($input: RemoveMemberInput!) { removeMember(input: $input) { deleted } }`,
    variables: ({ params }) => ({ input: target(params) }),
    // The seed answers 204 whether or not the member existed (contract notes).
    status: 204,
  },
  {
    method: 'POST',
    path: '/v1/orgs/:organizationId/ping',
    document: `mutation($input: PingOrganizationInput!) { pingOrganization(input: $input) { serviceVisitorClaims } }`,
    variables: ({ params }) => ({ input: { organizationId: params.organizationId } }),
    // The seed names the claims `serviceVisitorClaims`; the official document and client read
    // `gitbookVisitorClaims`. Both carry the same token.
    result: (d) => ({
      serviceVisitorClaims: d.pingOrganization.serviceVisitorClaims,
      gitbookVisitorClaims: d.pingOrganization.serviceVisitorClaims,
    }),
  },
  {
    method: 'GET',
    path: `${MEMBER_PATH}/spaces`,
    query: z.strictObject({ ...listQueryShape, order: ListOrder.optional() }),
    document: `query($org: ID!, $user: ID!, $first: Int, $after: String, $order: MemberListOrder) {
      member(organizationId: $org, userId: $user) {
        spacePermissions(first: $first, after: $after, order: $order) { ${CONNECTION_FIELDS} nodes { permission space { ${SPACE_FIELDS} } } }
      }
    }`,
    variables: ({ params, query }) => ({ org: params.organizationId, user: params.userId, ...pageVariables(query), order: query.order }),
    result: (d) => listEnvelope(d.member.spacePermissions, (n: any) => ({ permission: n.permission, space: toRestSpace(n.space) })),
  },
  {
    method: 'POST',
    path: `${MEMBER_PATH}/sso`,
    document: `mutation($input: SetMemberSsoInput!) { setMemberSso(input: $input) { member { ${MEMBER_FIELDS} } } }`,
    variables: ({ params }) => ({ input: target(params) }),
    result: (d) => toRestMember(d.setMemberSso.member),
  },
];
