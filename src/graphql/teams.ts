// Teams: the Team node with its members connection, team listings, a member's teams, and the team
// mutations.
import { builder } from './builder.ts';
import { keysetConnection, keysetRelation } from './cursors.ts';
import { DeletePayload, dropUndefined, loadById, loader, organizationOf, requireOrganizationOf, OWN_ORGANIZATION_ID } from './common.ts';
import type { Context } from './context.ts';
import { MemberRef } from './members.ts';
import type { Member, Team, TeamMember } from '../generated/prisma/client.ts';
import { memberKey, requireMemberTeamsAccess } from '../domain/members.ts';
import { notFound } from '../lib/errors.ts';
import {
  teamListQuery,
  requireListTeams,
  requireTeam,
  createTeam,
  updateTeam,
  deleteTeam,
  updateTeamMembers,
  setTeamMember,
  removeTeamMember,
  countTeamSpaces,
  teamRolesOfUser,
} from '../domain/teams.ts';

export const TeamRoleEnum = builder.enumType('TeamRole', {
  description: '`owner` can manage the team; `member` belongs to it.',
  values: {
    owner: { description: 'Manages the team: renames or deletes it and adds or removes members.' },
    member: { description: 'Belongs to the team and gets its access grants.' },
  } as const,
});

const TeamPermissions = builder.simpleObject('TeamPermissions', {
  description: 'What you may do with the team.',
  fields: (t) => ({
    admin: t.boolean({ description: 'You can rename or delete the team and manage its members.' }),
    view: t.boolean({ description: 'You can see the team and list its members.' }),
  }),
});

async function teamPermissions(ctx: Context, team: Pick<Team, 'id' | 'organizationId'>) {
  const viewerId = ctx.access.requireViewer().user.id;
  const role = await loader(ctx, 'team.viewerRole', (ids: readonly string[]) => teamRolesOfUser(ctx.prisma, viewerId, ids)).load(team.id);
  return ctx.access.teamPermissions(team.organizationId, role);
}

const loadTeamById = (ctx: Context, id: string) => loadById(ctx, 'team.byId', id, (ids) => ctx.prisma.team.findMany({ where: { id: { in: ids } } }));

export const TeamRef = builder.prismaNode('Team', {
  id: { field: 'id' },
  description: 'A group of organization members, granted access to content together.',
  // node(id:) finds only teams you may view.
  findUnique: async (id, ctx) => {
    const team = await loadTeamById(ctx, id);
    if (!team || !(await teamPermissions(ctx, team)).view) throw notFound('Team');
    return { id };
  },
  fields: (t) => ({
    title: t.exposeString('title'),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    organization: t.relation('organization'),
    members: keysetRelation(t, 'members', {
      list: 'Team.members',
      description: 'The members of the team with their team role, oldest membership first (REST: GET /v1/orgs/{organizationId}/teams/{teamId}/members).',
      query: () => ({ orderBy: [{ createdAt: 'asc' }, { userId: 'asc' }] }),
    }),
    spaces: t.int({
      description: 'Spaces with a grant to this team.',
      resolve: (team, _a, ctx) => loader(ctx, 'team.spaces', (ids: readonly string[]) => countTeamSpaces(ctx.prisma, ids)).load(team.id),
    }),
    permissions: t.field({ type: TeamPermissions, description: 'What you may do with the team.', resolve: (team, _a, ctx) => teamPermissions(ctx, team) }),
  }),
});

/** The organization membership behind a team membership. */
function memberOf(ctx: Context, organizationId: string, userId: string) {
  return loader<string, Member>(ctx, 'team.member', async (keys) => {
    const pairs = keys.map((k) => k.split('|'));
    const rows = await ctx.prisma.member.findMany({
      where: { organizationId: { in: [...new Set(pairs.map((p) => p[0]))] }, userId: { in: [...new Set(pairs.map((p) => p[1]))] } },
    });
    const byKey = new Map(rows.map((m) => [memberKey(m), m]));
    return keys.map((k) => byKey.get(k) ?? new Error('Member not found'));
  }).load(`${organizationId}|${userId}`);
}

export const TeamMemberRef = builder.prismaObject('TeamMember', {
  description: "A user's membership of a team.",
  findUnique: (tm) => ({ teamId_userId: { teamId: tm.teamId, userId: tm.userId } }),
  fields: (t) => ({
    role: t.expose('role', { type: TeamRoleEnum }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    team: t.relation('team'),
    user: t.relation('user'),
    member: t.field({
      type: MemberRef,
      description: 'The same user as a member of the organization.',
      select: { team: { select: { organizationId: true } } },
      resolve: (tm, _a, ctx) => memberOf(ctx, tm.team.organizationId, tm.userId),
    }),
    permissions: t.field({
      type: builder.simpleObject('TeamMemberPermissions', {
        description: 'What you may do with a team membership.',
        fields: (f) => ({ view: f.boolean({ description: 'You can see the team and its members.' }) }),
      }),
      description: 'What you may do with this membership.',
      select: { team: { select: { id: true, organizationId: true } } },
      resolve: async (tm, _a, ctx) => ({ view: (await teamPermissions(ctx, tm.team)).view }),
    }),
  }),
});

const teamListArgs = (t: any) => ({
  owner: t.arg.id({ description: 'A user id: only the teams that user owns.' }),
  title: t.arg.string({ description: 'Case-insensitive contains filter on the title.' }),
});
const filtersOf = (args: object) => {
  const a = args as Record<string, unknown>;
  return Object.fromEntries(['owner', 'title'].filter((k) => a[k] != null).map((k) => [k, a[k]]));
};

builder.prismaObjectField('Organization', 'teams', (t) =>
  keysetRelation(t, 'teams', {
    list: 'Organization.teams',
    description: 'Teams you can view: all of them for non-guest members, your own for guests.',
    args: teamListArgs(t),
    // Folded into the organization query, so access is a filter here; the top-level `teams`
    // query answers FORBIDDEN instead.
    query: (args, ctx) => {
      const { where, orderBy } = teamListQuery(filtersOf(args));
      const viewerId = ctx.access.requireViewer().user.id;
      return {
        where: {
          AND: [
            where,
            {
              OR: [
                { organization: { members: { some: { userId: viewerId, disabled: false, role: { not: null } } } } },
                { members: { some: { userId: viewerId } } },
              ],
            },
          ],
        },
        orderBy,
      };
    },
  }),
);

builder.queryFields((t) => ({
  teams: keysetConnection(t, {
    type: 'Team',
    list: 'teams',
    description: 'Teams of an organization, oldest first (FORBIDDEN for guests). REST: GET /v1/orgs/{organizationId}/teams.',
    args: { organizationId: t.arg.id({ required: true, description: 'Organization (`org_…`).' }), ...teamListArgs(t) },
    resolve: async (page, _r, args, ctx) => {
      await requireListTeams(ctx, String(args.organizationId));
      const { where, orderBy } = teamListQuery(filtersOf(args));
      return ctx.prisma.team.findMany(page.prisma({ where: { ...where, organizationId: String(args.organizationId) }, orderBy }) as never);
    },
    // Runs without `resolve` when only totalCount is asked for, so it checks access too.
    totalCount: async (_r, args, ctx) => {
      await requireListTeams(ctx, String(args.organizationId));
      const { where } = teamListQuery(filtersOf(args));
      return ctx.prisma.team.count({ where: { ...where, organizationId: String(args.organizationId) } });
    },
  }),
  team: t.prismaField({
    type: 'Team',
    nullable: true,
    description: 'A team you may view (NOT_FOUND otherwise). REST: GET /v1/orgs/{organizationId}/teams/{teamId}.',
    args: {
      organizationId: t.arg.id({ required: true, description: 'Organization of the team (`org_…`).' }),
      id: t.arg.id({ required: true, description: 'Team id (`team_…`).' }),
    },
    resolve: async (query, _r, args, ctx) => {
      const team = await requireTeam(ctx, String(args.organizationId), String(args.id), 'view');
      return ctx.prisma.team.findUniqueOrThrow({ ...query, where: { id: team.id } });
    },
  }),
}));

// ------------------------------------------------------------------ a member's teams

type Membership = TeamMember & { team: Team };

/** A member's team memberships in the organization (pageOf orders them); batched over members. */
function membershipsOf(ctx: Context, m: Member, title?: string) {
  return loader<string, Membership[]>(ctx, `member.teamMemberships:${title ?? ''}`, async (keys) => {
    const pairs = keys.map((k) => k.split('|'));
    const rows = await ctx.prisma.teamMember.findMany({
      where: {
        userId: { in: [...new Set(pairs.map((p) => p[1]))] },
        team: {
          organizationId: { in: [...new Set(pairs.map((p) => p[0]))] },
          ...(title ? { title: { contains: title, mode: 'insensitive' as const } } : {}),
        },
      },
      include: { team: true },
    });
    return keys.map((k) => rows.filter((r) => `${r.team.organizationId}|${r.userId}` === k));
  }).load(memberKey(m));
}

// Keyset over the in-memory list: team creation time, then team id.
const MEMBERSHIP_ORDER = [['createdAt', 'asc'], ['teamId', 'asc']] as const;

builder.prismaObjectField('Member', 'teamMemberships', (t) =>
  keysetConnection(t, {
    type: TeamMemberRef,
    prisma: false,
    list: 'Member.teamMemberships',
    defaultSize: 1000,
    description: "This member's teams with their role in each.",
    args: { title: t.arg.string({ description: 'Case-insensitive contains filter on the team title.' }) },
    resolve: async (page, m, args, ctx) => {
      // Queued before the access check so the rows of every member load in one batch.
      const rows = membershipsOf(ctx, m, args.title?.trim() || undefined);
      await requireMemberTeamsAccess(ctx, m.organizationId, m.userId);
      const all = await rows;
      return page.array(all, MEMBERSHIP_ORDER, (x: Membership) => [x.team.createdAt, x.teamId]);
    },
    totalCount: async (m, args, ctx) => {
      const rows = membershipsOf(ctx, m, args.title?.trim() || undefined);
      await requireMemberTeamsAccess(ctx, m.organizationId, m.userId);
      return (await rows).length;
    },
  }),
);

// ------------------------------------------------------------------ mutations

const TeamPayload = builder.simpleObject('TeamPayload', {
  description: 'Result of a team mutation.',
  fields: (t) => ({ team: t.field({ type: TeamRef, description: 'The team after the change.' }) }),
});

const TeamTargetInput = (name: string) =>
  builder.inputType(name, {
    description: 'Names one team.',
    fields: (f) => ({
      organizationId: f.id({ description: OWN_ORGANIZATION_ID }),
      teamId: f.id({ required: true, description: 'The team (`team_…`).' }),
    }),
  });

const TeamMemberTargetInput = (name: string, extra = false) =>
  builder.inputType(name, {
    description: 'Names one user of a team.',
    fields: (f) => ({
      organizationId: f.id({ description: OWN_ORGANIZATION_ID }),
      teamId: f.id({ required: true, description: 'The team (`team_…`).' }),
      userId: f.id({ required: true, description: 'The user (`user_…`); must be a member of the organization.' }),
      ...(extra ? { role: f.field({ type: TeamRoleEnum, description: 'Role in the team. Omitted: `member` for a newcomer, unchanged for a current member.' }) } : {}),
    }),
  });

const TeamMembershipInput = builder.inputType('TeamMembershipInput', {
  description: 'A role to set for one user of the team.',
  fields: (f) => ({
    user: f.string({ required: true, description: 'A user id or e-mail address.' }),
    role: f.field({ type: TeamRoleEnum, required: true, description: 'The role to give.' }),
  }),
});

builder.mutationFields((t) => ({
  createTeam: t.field({
    type: TeamPayload,
    description: 'Create a team (non-guest members; a creator who is not an org admin becomes its owner). REST: PUT /v1/orgs/{organizationId}/teams.',
    args: {
      input: t.arg({
        description: 'The team to create.',
        type: builder.inputType('CreateTeamInput', {
          description: 'The team to create.',
          fields: (f) => ({
            organizationId: f.id({ required: true, description: 'Organization (`org_…`).' }),
            title: f.string({ required: true, description: 'Team name.' }),
            members: f.stringList({ description: 'User ids (or e-mail addresses) of organization members.' }),
          }),
        }),
        required: true,
      }),
    },
    resolve: async (_r, { input }, ctx) => {
      const { organizationId, ...fields } = input;
      return { team: await createTeam(ctx, String(organizationId), dropUndefined(fields)) };
    },
  }),
  updateTeam: t.field({
    type: TeamPayload,
    description: 'Rename a team (org admins and team owners). REST: PATCH /v1/orgs/{organizationId}/teams/{teamId}.',
    args: {
      input: t.arg({
        description: 'The team and its new name.',
        type: builder.inputType('UpdateTeamInput', {
          description: 'The team and its new name.',
          fields: (f) => ({
            organizationId: f.id({ description: OWN_ORGANIZATION_ID }),
            teamId: f.id({ required: true, description: 'The team (`team_…`).' }),
            title: f.string({ required: true, description: 'New team name.' }),
          }),
        }),
        required: true,
      }),
    },
    resolve: async (_r, { input }, ctx) => {
      const org = await requireOrganizationOf(ctx, input.organizationId, 'team', input.teamId, 'Team');
      return { team: await updateTeam(ctx, org, String(input.teamId), { title: input.title }) };
    },
  }),
  deleteTeam: t.field({
    type: DeletePayload,
    description: 'Delete a team and its grants (org admins and team owners). Idempotent (deleted: false when already gone). REST: DELETE /v1/orgs/{organizationId}/teams/{teamId}.',
    args: { input: t.arg({ type: TeamTargetInput('DeleteTeamInput'), required: true, description: 'The team to delete.' }) },
    resolve: async (_r, { input }, ctx) => {
      const org = await organizationOf(ctx, input.organizationId, 'team', input.teamId);
      return { deleted: org !== null && (await deleteTeam(ctx, org, String(input.teamId))), deletedId: String(input.teamId) };
    },
  }),
  updateTeamMembers: t.field({
    type: TeamPayload,
    description: 'Add, remove and set roles of team members in one step (org admins and team owners). A user both added and removed is removed. REST: PUT /v1/orgs/{organizationId}/teams/{teamId}/members.',
    args: {
      input: t.arg({
        description: 'The team and the membership changes.',
        type: builder.inputType('UpdateTeamMembersInput', {
          description: 'The team and the membership changes.',
          fields: (f) => ({
            organizationId: f.id({ description: OWN_ORGANIZATION_ID }),
            teamId: f.id({ required: true, description: 'The team (`team_…`).' }),
            add: f.stringList({ description: 'Users to add as `member`: user ids or e-mail addresses of organization members.' }),
            remove: f.stringList({ description: 'Users to remove: user ids or e-mail addresses.' }),
            memberships: f.field({ type: [TeamMembershipInput], description: 'Roles to set (adds the user when needed).' }),
          }),
        }),
        required: true,
      }),
    },
    resolve: async (_r, { input }, ctx) => {
      const { organizationId, teamId, memberships, ...rest } = input;
      const body = dropUndefined({
        ...rest,
        memberships: memberships ? Object.fromEntries(memberships.map((m) => [m.user, { role: m.role }])) : undefined,
      });
      const org = await requireOrganizationOf(ctx, organizationId, 'team', teamId, 'Team');
      return { team: await updateTeamMembers(ctx, org, String(teamId), body) };
    },
  }),
  setTeamMember: t.field({
    type: builder.simpleObject('SetTeamMemberPayload', {
      description: 'Result of setTeamMember.',
      fields: (f) => ({ teamMember: f.field({ type: TeamMemberRef, description: 'The membership after the change.' }) }),
    }),
    description: 'Add a member to a team or change their role (org admins and team owners). REST: PUT /v1/orgs/{organizationId}/teams/{teamId}/members/{userId}.',
    args: { input: t.arg({ type: TeamMemberTargetInput('SetTeamMemberInput', true), required: true, description: 'The team, the user and the role.' }) },
    resolve: async (_r, { input }, ctx) => {
      const { organizationId, teamId, userId, ...fields } = input as typeof input & { role?: 'owner' | 'member' | null };
      const org = await requireOrganizationOf(ctx, organizationId, 'team', teamId, 'Team');
      return { teamMember: await setTeamMember(ctx, org, String(teamId), String(userId), dropUndefined(fields)) };
    },
  }),
  removeTeamMember: t.field({
    type: DeletePayload,
    description: 'Remove a member from a team (org admins and team owners). Idempotent (deleted: false when not in the team). REST: DELETE /v1/orgs/{organizationId}/teams/{teamId}/members/{userId}.',
    args: { input: t.arg({ type: TeamMemberTargetInput('RemoveTeamMemberInput'), required: true, description: 'The team and the user to remove.' }) },
    resolve: async (_r, { input }, ctx) => ({
      deleted: await removeTeamMember(ctx, await requireOrganizationOf(ctx, input.organizationId, 'team', input.teamId, 'Team'), String(input.teamId), String(input.userId)),
      deletedId: String(input.userId),
    }),
  }),
}));
