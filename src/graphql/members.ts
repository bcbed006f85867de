// Organization members: the Member node (REST addresses it by user id), member listings, and the
// member mutations (role, removal, ping, SSO, adding by e-mail).
import { keysetConnection, keysetRelation } from './cursors.ts';
import { builder } from './builder.ts';
import { RoleEnum, DeletePayload, dropUndefined, loadById, loader } from './common.ts';
import type { Context } from './context.ts';
import { ROLES } from '../auth/roles.ts';
import type { Member, Role, Space } from '../generated/prisma/client.ts';
import { notFound } from '../lib/errors.ts';
import {
  memberListQuery,
  requireListMembers,
  getMember,
  updateMember,
  removeMember,
  pingOrganization,
  setMemberSso,
  addMember,
  countMemberSpaces,
  countMemberTeams,
  memberSpaceRoles,
  memberKey,
  type MemberKey,
} from '../domain/members.ts';

export const ListOrderEnum = builder.enumType('MemberListOrder', {
  description: 'Direction of a listing.',
  values: {
    asc: { description: 'Oldest (or lowest) first.' },
    desc: { description: 'Newest (or highest) first.' },
  } as const,
});
const MemberRoleFilterEnum = builder.enumType('MemberRoleFilter', {
  description: 'A role, or `guest` for members without one.',
  values: {
    read: { description: 'Members with the read role.' },
    comment: { description: 'Members with the comment role.' },
    edit: { description: 'Members with the edit role.' },
    review: { description: 'Members with the review role.' },
    create: { description: 'Members with the create role.' },
    admin: { description: 'Organization admins.' },
    guest: { description: 'Guests: members without an organization role, who see only what is shared with them.' },
  } as const satisfies Record<(typeof ROLES)[number] | 'guest', { description: string }>,
});
const MemberSortEnum = builder.enumType('MemberSort', {
  description: '`lastSeenAt` lists only members who have been seen.',
  values: {
    joinedAt: { description: 'By the time the member joined the organization.' },
    lastSeenAt: { description: 'By the time the member was last active (pingOrganization); never-seen members are left out.' },
  } as const,
});

const parseKey = (k: string): MemberKey => {
  const [organizationId, userId] = k.split('|');
  return { organizationId, userId };
};

/** A per-request loader of one counter per (organization, user). */
const counter = (ctx: Context, name: string, count: typeof countMemberSpaces) => (m: Member) =>
  loader<string, number>(ctx, `member.${name}`, (keys) => count(ctx.prisma, keys.map(parseKey))).load(memberKey(m));

const MemberPermissions = builder.simpleObject('MemberPermissions', {
  description: 'What you may do with a member.',
  fields: (t) => ({
    view: t.boolean({ description: 'You can read this member by user id (`member`, REST GET …/members/{userId}): yourself, or anyone when you may list members.' }),
    admin: t.boolean({ description: "You can change this member's role and SSO, or remove them." }),
  }),
});

const loadMemberById = (ctx: Context, id: string) => loadById(ctx, 'member.byId', id, (ids) => ctx.prisma.member.findMany({ where: { id: { in: ids } } }));

export const MemberRef = builder.prismaNode('Member', {
  id: { field: 'id' },
  description: "A user's membership of an organization. The REST API addresses it by the user's id.",
  // node(id:) finds members of organizations you belong to. Guests included, as they see the
  // members of their teams and the commenters of their spaces (this is also the fallback load of
  // those embedded members); reading one by user id (`member`) lets guests read only themselves.
  findUnique: async (id, ctx) => {
    const m = await loadMemberById(ctx, id);
    if (!m || !(await ctx.access.canOrg(m.organizationId, 'organization:view'))) throw notFound('Member');
    return { id };
  },
  fields: (t) => ({
    role: t.expose('role', { type: RoleEnum, nullable: true, description: 'null for guests' }),
    user: t.relation('user'),
    organization: t.relation('organization'),
    disabled: t.exposeBoolean('disabled'),
    joinedAt: t.expose('joinedAt', { type: 'DateTime' }),
    lastSeenAt: t.expose('lastSeenAt', { type: 'DateTime', nullable: true }),
    sso: t.exposeBoolean('sso'),
    spaces: t.int({
      description: 'Spaces of the organization with a grant to this user directly (team and collection grants not counted).',
      resolve: (m, _a, ctx) => counter(ctx, 'spaces', countMemberSpaces)(m),
    }),
    teams: t.int({
      description: 'Teams of the organization this user belongs to.',
      resolve: (m, _a, ctx) => counter(ctx, 'teams', countMemberTeams)(m),
    }),
    permissions: t.field({
      type: MemberPermissions,
      description: 'What you may do with this member.',
      resolve: (m, _a, ctx) => ctx.access.memberPermissions(m.organizationId, m.userId),
    }),
  }),
});

const memberListArgs = (t: any) => ({
  order: t.arg({ type: ListOrderEnum, description: 'Direction of `sort`; default desc (newest first).' }),
  role: t.arg({ type: MemberRoleFilterEnum, description: 'Only members with this role (`guest`: without a role).' }),
  search: t.arg.string({ description: 'Case-insensitive, in display name and e-mail.' }),
  sort: t.arg({ type: MemberSortEnum, description: 'What to order by; default joinedAt.' }),
});
/** The listing filters among GraphQL args (null = absent); the domain validates them. */
const filtersOf = (args: object) => {
  const a = args as Record<string, unknown>;
  return Object.fromEntries(['order', 'role', 'search', 'sort'].filter((k) => a[k] != null).map((k) => [k, a[k]]));
};

builder.prismaObjectField('Organization', 'members', (t) =>
  keysetRelation(t, 'members', {
    list: 'Organization.members',
    description: 'Members, for callers who may list them (permissions.listMembers); empty for others. REST: GET /v1/orgs/{organizationId}/members.',
    args: memberListArgs(t),
    // Folded into the organization query (no statement per organization), so access is a filter
    // here; the top-level `members` query answers FORBIDDEN instead.
    query: (args, ctx) => {
      const { where, orderBy } = memberListQuery(filtersOf(args));
      const viewerId = ctx.access.requireViewer().user.id;
      return {
        where: { ...where, organization: { members: { some: { userId: viewerId, disabled: false, role: { not: null } } } } },
        orderBy,
      };
    },
  }),
);

builder.queryFields((t) => ({
  members: keysetConnection(t, {
    type: 'Member',
    list: 'members',
    description: 'Members of an organization (FORBIDDEN for guests). REST: GET /v1/orgs/{organizationId}/members.',
    args: { organizationId: t.arg.id({ required: true, description: 'Organization (`org_…`).' }), ...memberListArgs(t) },
    resolve: async (page, _r, args, ctx) => {
      await requireListMembers(ctx, String(args.organizationId));
      const { where, orderBy } = memberListQuery(filtersOf(args));
      return ctx.prisma.member.findMany(page.prisma({ where: { ...where, organizationId: String(args.organizationId) }, orderBy }) as never);
    },
    // Runs without `resolve` when only totalCount is asked for, so it checks access too.
    totalCount: async (_r, args, ctx) => {
      await requireListMembers(ctx, String(args.organizationId));
      const { where } = memberListQuery(filtersOf(args));
      return ctx.prisma.member.count({ where: { ...where, organizationId: String(args.organizationId) } });
    },
  }),
  member: t.prismaField({
    type: 'Member',
    nullable: true,
    description: 'A member of an organization, by user id (guests may read only themselves). REST: GET /v1/orgs/{organizationId}/members/{userId}.',
    args: {
      organizationId: t.arg.id({ required: true, description: 'Organization (`org_…`).' }),
      userId: t.arg.id({ required: true, description: 'The member’s user id (`user_…`), not the `mem_…` id.' }),
    },
    resolve: async (query, _r, args, ctx) => {
      const m = await getMember(ctx, String(args.organizationId), String(args.userId));
      return ctx.prisma.member.findUniqueOrThrow({ ...query, where: { id: m.id } });
    },
  }),
}));

// ------------------------------------------------------------------ a member's spaces

type SpaceWithPermission = Space & { memberPermission?: Role };

const MemberSpacePermissionRef = builder.prismaObject('Space', {
  variant: 'MemberSpacePermission',
  description: "A space a member can access, with the member's role on it.",
  fields: (t) => ({
    permission: t.field({ type: RoleEnum, description: 'The member’s effective role on the space (direct, team, collection and organization grants combined).', resolve: (s) => (s as SpaceWithPermission).memberPermission! }),
    space: t.variant('Space', { description: 'The space.' }),
  }),
});

/** Per request and member: computing the roles loads every space of the organization once. */
const spaceRolesOf = (ctx: Context, m: Member) =>
  loader<string, Map<string, Role>>(ctx, 'member.spaceRoles', (keys) =>
    Promise.all(keys.map((k) => memberSpaceRoles(ctx, parseKey(k).organizationId, parseKey(k).userId).catch((e: Error) => e))),
  ).load(memberKey(m));

builder.prismaObjectField('Member', 'spacePermissions', (t) =>
  keysetConnection(t, {
    type: MemberSpacePermissionRef,
    list: 'Member.spacePermissions',
    description: "The spaces this member can access and their role on each, by space creation time (org admins and the member). The same rules as the caller's own access. REST: GET /v1/orgs/{organizationId}/members/{userId}/spaces.",
    args: { order: t.arg({ type: ListOrderEnum, description: 'By space creation time; default desc (newest first).' }) },
    resolve: async (page, m, args, ctx) => {
      const roles = await spaceRolesOf(ctx, m);
      const order = args.order ?? 'desc';
      const rows = await ctx.prisma.space.findMany(
        page.prisma({
          where: { id: { in: [...roles.keys()] } },
          orderBy: [{ createdAt: order }, { id: order }],
        }) as never,
      );
      return rows.map((r) => Object.assign(r, { memberPermission: roles.get(r.id) }));
    },
    totalCount: async (m, _a, ctx) => (await spaceRolesOf(ctx, m)).size,
  }),
);

// ------------------------------------------------------------------ mutations

const MemberPayload = builder.simpleObject('MemberPayload', {
  description: 'Result of a member mutation.',
  fields: (t) => ({ member: t.field({ type: MemberRef, description: 'The member after the change.' }) }),
});

const MemberTargetInput = (name: string) =>
  builder.inputType(name, {
    description: 'Names one member of an organization.',
    fields: (f) => ({
      organizationId: f.id({ required: true, description: 'Organization (`org_…`).' }),
      userId: f.id({ required: true, description: 'The member’s user id (`user_…`).' }),
    }),
  });

const UpdateMemberInput = builder.inputType('UpdateMemberInput', {
  description: 'The member and their new role.',
  fields: (f) => ({
    organizationId: f.id({ required: true, description: 'Organization (`org_…`).' }),
    userId: f.id({ required: true, description: 'The member’s user id (`user_…`).' }),
    role: f.field({ type: RoleEnum, description: 'null makes the member a guest; omitted keeps the role.' }),
  }),
});

const AddMemberInput = builder.inputType('AddMemberInput', {
  description: 'The person to add.',
  fields: (f) => ({
    organizationId: f.id({ required: true, description: 'Organization (`org_…`).' }),
    email: f.string({ required: true, description: 'Their e-mail address; an existing user with it is reused.' }),
    displayName: f.string({ description: 'For a new user; default: the part of the e-mail before @.' }),
    role: f.field({ type: RoleEnum, description: "null adds a guest; omitted uses the organization's defaultRole." }),
  }),
});

const PingOrganizationPayload = builder.simpleObject('PingOrganizationPayload', {
  description: 'Result of pingOrganization.',
  fields: (t) => ({
    member: t.field({ type: MemberRef, description: 'Your membership, with lastSeenAt set to now.' }),
    serviceVisitorClaims: t.string({ description: 'A signed JWT (HS256, one hour) of claims about you to attach to visitor sessions.' }),
  }),
});

builder.mutationFields((t) => ({
  updateMember: t.field({
    type: MemberPayload,
    description: "Change a member's role (org admins). The last admin cannot be demoted (CONFLICT). REST: PATCH /v1/orgs/{organizationId}/members/{userId}.",
    args: { input: t.arg({ type: UpdateMemberInput, required: true, description: 'The member and their new role.' }) },
    resolve: async (_r, { input }, ctx) => {
      const { organizationId, userId, ...fields } = input;
      return { member: await updateMember(ctx, String(organizationId), String(userId), dropUndefined(fields)) };
    },
  }),
  removeMember: t.field({
    type: DeletePayload,
    description: 'Remove a member with their team memberships and grants (org admins). The last admin cannot be removed (CONFLICT). Idempotent (deleted: false when not a member). REST: DELETE /v1/orgs/{organizationId}/members/{userId}.',
    args: { input: t.arg({ type: MemberTargetInput('RemoveMemberInput'), required: true, description: 'The member to remove.' }) },
    resolve: async (_r, { input }, ctx) => ({
      deleted: await removeMember(ctx, String(input.organizationId), String(input.userId)),
      deletedId: String(input.userId),
    }),
  }),
  setMemberSso: t.field({
    type: MemberPayload,
    description: 'Mark a member as an SSO member: they must then sign in through the organization’s SAML provider (org admins). REST: POST /v1/orgs/{organizationId}/members/{userId}/sso.',
    args: { input: t.arg({ type: MemberTargetInput('SetMemberSsoInput'), required: true, description: 'The member to mark.' }) },
    resolve: async (_r, { input }, ctx) => ({ member: await setMemberSso(ctx, String(input.organizationId), String(input.userId)) }),
  }),
  pingOrganization: t.field({
    type: PingOrganizationPayload,
    description: 'Record that you are active in the organization now (sets your lastSeenAt). Any member. REST: POST /v1/orgs/{organizationId}/ping.',
    args: {
      input: t.arg({
        type: builder.inputType('PingOrganizationInput', {
          description: 'The organization you are active in.',
          fields: (f) => ({ organizationId: f.id({ required: true, description: 'Organization (`org_…`).' }) }),
        }),
        required: true,
        description: 'The organization you are active in.',
      }),
    },
    resolve: (_r, { input }, ctx) => pingOrganization(ctx, String(input.organizationId)),
  }),
  addMember: t.field({
    type: MemberPayload,
    description: 'Add a person to the organization by e-mail, creating their user when needed (org admins). No REST twin.',
    args: { input: t.arg({ type: AddMemberInput, required: true, description: 'The person to add and their role.' }) },
    resolve: async (_r, { input }, ctx) => {
      const { organizationId, ...fields } = input;
      return { member: await addMember(ctx, String(organizationId), dropUndefined(fields)) };
    },
  }),
}));
