// REST routes for teams, team members and a member's teams, on the GraphQL operations of
// graphql/teams.ts.
import { z } from 'zod';
import { type RestRoute, listQuery, listQueryShape, pageVariables, listEnvelope, CONNECTION_FIELDS } from './router.ts';
import { MEMBER_FIELDS, toRestMember } from './members.ts';
import { CreateTeamInput, UpdateTeamInput, UpdateTeamMembersInput, SetTeamMemberInput, TeamListFilters } from '../domain/teams.ts';

// `members { totalCount }` is folded into the team query as a count; no member rows are read.
export const TEAM_FIELDS = 'id title createdAt spaces members { totalCount } permissions { admin view }';

export function toRestTeam(t: any) {
  return {
    object: 'team',
    id: t.id,
    title: t.title,
    members: t.members.totalCount,
    spaces: t.spaces,
    createdAt: t.createdAt,
    permissions: t.permissions,
  };
}

const TEAM_PATH = '/v1/orgs/:organizationId/teams/:teamId';
const team = (params: Record<string, string>) => ({ organizationId: params.organizationId, teamId: params.teamId });

export const routes: RestRoute[] = [
  {
    method: 'GET',
    path: '/v1/orgs/:organizationId/teams',
    query: z.strictObject({ ...listQueryShape, ...TeamListFilters.shape }),
    document: `query($org: ID!, $first: Int, $after: String, $owner: ID, $title: String) {
      teams(organizationId: $org, first: $first, after: $after, owner: $owner, title: $title) { ${CONNECTION_FIELDS} nodes { ${TEAM_FIELDS} } }
    }`,
    variables: ({ params, query }) => ({ org: params.organizationId, ...pageVariables(query), owner: query.owner, title: query.title }),
    result: (d) => listEnvelope(d.teams, toRestTeam),
  },
  {
    method: 'PUT',
    path: '/v1/orgs/:organizationId/teams',
    body: CreateTeamInput,
    document: `mutation($input: CreateTeamInput!) { createTeam(input: $input) { team { ${TEAM_FIELDS} } } }`,
    variables: ({ params, body }) => ({ input: { organizationId: params.organizationId, ...body } }),
    result: (d) => toRestTeam(d.createTeam.team),
    status: 201,
  },
  {
    method: 'GET',
    path: TEAM_PATH,
    document: `query($org: ID!, $id: ID!) { team(organizationId: $org, id: $id) { ${TEAM_FIELDS} } }`,
    variables: ({ params }) => ({ org: params.organizationId, id: params.teamId }),
    result: (d) => toRestTeam(d.team),
  },
  {
    method: 'PATCH',
    path: TEAM_PATH,
    body: UpdateTeamInput,
    document: `mutation($input: UpdateTeamInput!) { updateTeam(input: $input) { team { ${TEAM_FIELDS} } } }`,
    variables: ({ params, body }) => ({ input: { ...team(params), ...body } }),
    result: (d) => toRestTeam(d.updateTeam.team),
  },
  {
    method: 'DELETE',
    path: TEAM_PATH,
    document: `mutation($input: DeleteTeamInput!) { deleteTeam(input: $input) { deleted } }`,
    variables: ({ params }) => ({ input: team(params) }),
    // The seed answers 204 whether or not the team existed (contract notes).
    status: 204,
  },
  {
    method: 'GET',
    path: `${TEAM_PATH}/members`,
    query: listQuery,
    document: `query($org: ID!, $id: ID!, $first: Int, $after: String) {
      team(organizationId: $org, id: $id) {
        members(first: $first, after: $after) { ${CONNECTION_FIELDS} nodes { role permissions { view } member { ${MEMBER_FIELDS} } } }
      }
    }`,
    variables: ({ params, query }) => ({ org: params.organizationId, id: params.teamId, ...pageVariables(query) }),
    result: (d) =>
      listEnvelope(d.team.members, (n: any) => ({ organization: toRestMember(n.member), team: { role: n.role }, permissions: n.permissions })),
  },
  {
    method: 'PUT',
    path: `${TEAM_PATH}/members`,
    body: UpdateTeamMembersInput,
    document: `mutation($input: UpdateTeamMembersInput!) { updateTeamMembers(input: $input) { team { id } } }`,
    variables: ({ params, body }) => ({
      input: {
        ...team(params),
        add: body.add,
        remove: body.remove,
        memberships: body.memberships && Object.entries(body.memberships).map(([user, m]: [string, any]) => ({ user, role: m.role })),
      },
    }),
    status: 204,
  },
  {
    method: 'PUT',
    path: `${TEAM_PATH}/members/:userId`,
    body: SetTeamMemberInput,
    document: `mutation($input: SetTeamMemberInput!) { setTeamMember(input: $input) { teamMember { role } } }`,
    variables: ({ params, body }) => ({ input: { ...team(params), userId: params.userId, ...body } }),
    status: 204,
  },
  {
    method: 'DELETE',
    path: `${TEAM_PATH}/members/:userId`,
    document: `mutation($input: RemoveTeamMemberInput!) { removeTeamMember(input: $input) { deleted } }`,
    variables: ({ params }) => ({ input: { ...team(params), userId: params.userId } }),
    status: 204,
  },
  {
    method: 'GET',
    path: '/v1/orgs/:organizationId/members/:userId/teams',
    query: z.strictObject({ ...listQueryShape, title: z.string().max(64).optional() }),
    document: `query($org: ID!, $user: ID!, $first: Int, $after: String, $title: String) {
      member(organizationId: $org, userId: $user) {
        teamMemberships(first: $first, after: $after, title: $title) { ${CONNECTION_FIELDS} nodes { role team { ${TEAM_FIELDS} } } }
      }
    }`,
    variables: ({ params, query }) => ({ org: params.organizationId, user: params.userId, ...pageVariables(query), title: query.title }),
    result: (d) => listEnvelope(d.member.teamMemberships, (n: any) => ({ team: toRestTeam(n.team), member: { role: n.role } })),
  },
];
