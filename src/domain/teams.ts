// Teams and team members. Org admins and team owners manage a team; non-guest members (and the
// team's own members) view it. Non-guest members may create teams (the organization's `ownTeam`
// permission); a creator who is not an org admin becomes the team's owner.
import { z } from 'zod';
import type { DomainContext } from './context.ts';
import type { Tx } from '../db/client.ts';
import type { Prisma, TeamRole } from '../generated/prisma/client.ts';
import { newId } from '../lib/ids.ts';
import { parseInput, notFound, forbidden, badRequest } from '../lib/errors.ts';
import { orgAllows } from '../auth/org-actions.ts';
import { transaction } from '../db/transaction.ts';
import { recordEvent } from '../events/log.ts';

export const TeamTitle = z.string().trim().min(1).max(64);
export const TeamRoleSchema = z.enum(['owner', 'member']);
/** A user id or an e-mail address. */
const UserKey = z.string().trim().min(1).max(320);

export const CreateTeamInput = z.strictObject({ title: TeamTitle, members: z.array(UserKey).max(1000).optional() });
export const UpdateTeamInput = z.strictObject({ title: TeamTitle });
export const UpdateTeamMembersInput = z.strictObject({
  add: z.array(UserKey).max(1000).optional(),
  remove: z.array(UserKey).max(1000).optional(),
  memberships: z.record(UserKey, z.strictObject({ role: TeamRoleSchema })).optional(),
});
export const SetTeamMemberInput = z.strictObject({ role: TeamRoleSchema.optional() });
export const TeamListFilters = z.strictObject({
  owner: z.string().trim().max(100).optional(),
  title: z.string().trim().max(64).optional(),
});

/** `where`/`orderBy` of a team listing: `owner` keeps the teams that user owns, `title` is a contains filter. */
export function teamListQuery(raw: unknown) {
  const f = parseInput(TeamListFilters, raw);
  const where: Prisma.TeamWhereInput = {};
  if (f.owner) where.members = { some: { userId: f.owner, role: 'owner' } };
  if (f.title) where.title = { contains: f.title, mode: 'insensitive' };
  const orderBy: Prisma.TeamOrderByWithRelationInput[] = [{ createdAt: 'asc' }, { id: 'asc' }];
  return { where, orderBy };
}

/** Teams are listed by non-guest members (guests: 403, outsiders: 404). */
export function requireListTeams(ctx: DomainContext, organizationId: string) {
  return ctx.access.requireOrg(organizationId, 'team:read');
}

async function teamWithPermissions(ctx: DomainContext, organizationId: string, teamId: string) {
  const me = await ctx.access.requireOrg(organizationId, 'organization:view');
  const row = await ctx.prisma.team.findFirst({
    where: { id: teamId, organizationId },
    include: { members: { where: { userId: me.userId }, select: { role: true } } },
  });
  if (!row) return null;
  const { members, ...team } = row;
  return { team, permissions: await ctx.access.teamPermissions(organizationId, members[0]?.role ?? null) };
}

const MANAGE_ONLY = 'Only organization admins and team owners can manage this team';

/** The team (404 when absent or the organization is not visible), when the caller may `need` it (else 403). */
export async function requireTeam(ctx: DomainContext, organizationId: string, teamId: string, need: 'view' | 'admin') {
  const found = await teamWithPermissions(ctx, organizationId, teamId);
  if (!found) throw notFound('Team');
  if (!found.permissions[need]) throw forbidden(need === 'admin' ? MANAGE_ONLY : 'You cannot view this team');
  return found.team;
}

/**
 * User ids of organization members named by id or e-mail. A key that is not a member is a 400
 * naming `fieldOf(key, index)`.
 */
async function resolveMembers(tx: Tx, organizationId: string, keys: Array<{ key: string; field: string }>) {
  if (keys.length === 0) return new Map<string, string>();
  const ids = keys.filter((k) => !k.key.includes('@')).map((k) => k.key);
  const emails = keys.filter((k) => k.key.includes('@')).map((k) => k.key.toLowerCase());
  const rows = await tx.member.findMany({
    where: { organizationId, user: { OR: [{ id: { in: ids } }, { email: { in: emails } }] } },
    select: { userId: true, user: { select: { email: true } } },
  });
  const byKey = new Map<string, string>();
  for (const r of rows) {
    byKey.set(r.userId, r.userId);
    byKey.set(r.user.email.toLowerCase(), r.userId);
  }
  const out = new Map<string, string>();
  for (const { key, field } of keys) {
    const userId = byKey.get(key.includes('@') ? key.toLowerCase() : key);
    if (!userId) throw badRequest(field, `"${key}" is not a member of the organization`);
    out.set(key, userId);
  }
  return out;
}

export async function createTeam(ctx: DomainContext, organizationId: string, raw: unknown) {
  const me = await requireListTeams(ctx, organizationId);
  const input = parseInput(CreateTeamInput, raw);
  return transaction(ctx.prisma, async (tx) => {
    const keys = (input.members ?? []).map((key, i) => ({ key, field: `members.${i}` }));
    const userIds = new Set((await resolveMembers(tx, organizationId, keys)).values());
    const now = ctx.clock.now();
    const team = await tx.team.create({ data: { id: newId('Team'), organizationId, title: input.title, createdAt: now } });
    const roles = new Map<string, TeamRole>([...userIds].map((id) => [id, 'member']));
    if (!orgAllows(me, 'organization:admin')) roles.set(me.userId, 'owner');
    if (roles.size) {
      await tx.teamMember.createMany({ data: [...roles].map(([userId, role]) => ({ teamId: team.id, userId, role, createdAt: now })) });
    }
    await recordEvent(tx, ctx, { type: 'team_created', organizationId, objectId: team.id, payload: { title: team.title, members: [...roles.keys()] } });
    return team;
  });
}

export async function updateTeam(ctx: DomainContext, organizationId: string, teamId: string, raw: unknown) {
  await requireTeam(ctx, organizationId, teamId, 'admin');
  const input = parseInput(UpdateTeamInput, raw);
  return transaction(ctx.prisma, async (tx) => {
    const team = await tx.team.update({ where: { id: teamId }, data: { title: input.title } });
    await recordEvent(tx, ctx, { type: 'team_updated', organizationId, objectId: teamId, payload: { title: team.title } });
    return team;
  });
}

/** True when deleted, false when there was no such team. Its grants go with it. */
export async function deleteTeam(ctx: DomainContext, organizationId: string, teamId: string) {
  const found = await teamWithPermissions(ctx, organizationId, teamId);
  if (!found) return false;
  if (!found.permissions.admin) throw forbidden(MANAGE_ONLY);
  const r = await transaction(ctx.prisma, async (tx) => {
    const deleted = await tx.team.deleteMany({ where: { id: teamId, organizationId } });
    if (deleted.count > 0) await recordEvent(tx, ctx, { type: 'team_deleted', organizationId, objectId: teamId, payload: { title: found.team.title } });
    return deleted;
  });
  return r.count > 0;
}

/**
 * Bulk change: `add` and `remove` name users by id or e-mail, `memberships` sets roles (adding the
 * user when needed). A user named in `remove` ends up removed, whatever else names them.
 */
export async function updateTeamMembers(ctx: DomainContext, organizationId: string, teamId: string, raw: unknown) {
  const team = await requireTeam(ctx, organizationId, teamId, 'admin');
  const input = parseInput(UpdateTeamMembersInput, raw);
  return transaction(ctx.prisma, async (tx) => {
    const add = input.add ?? [];
    const remove = input.remove ?? [];
    const memberships = Object.entries(input.memberships ?? {});
    const ids = await resolveMembers(tx, organizationId, [
      ...add.map((key, i) => ({ key, field: `add.${i}` })),
      ...remove.map((key, i) => ({ key, field: `remove.${i}` })),
      ...memberships.map(([key]) => ({ key, field: `memberships.${key}` })),
    ]);
    const removed = new Set(remove.map((k) => ids.get(k)!));
    const roles = new Map<string, TeamRole | undefined>();
    for (const k of add) roles.set(ids.get(k)!, undefined);
    for (const [k, m] of memberships) roles.set(ids.get(k)!, m.role);
    for (const id of removed) roles.delete(id);

    const now = ctx.clock.now();
    if (roles.size) {
      await tx.teamMember.createMany({
        data: [...roles].map(([userId, role]) => ({ teamId, userId, role: role ?? 'member', createdAt: now })),
        skipDuplicates: true,
      });
    }
    for (const role of ['owner', 'member'] as const) {
      const userIds = [...roles].filter(([, r]) => r === role).map(([id]) => id);
      if (userIds.length) await tx.teamMember.updateMany({ where: { teamId, userId: { in: userIds } }, data: { role } });
    }
    if (removed.size) await tx.teamMember.deleteMany({ where: { teamId, userId: { in: [...removed] } } });
    await recordEvent(tx, ctx, { type: 'team_members_updated', organizationId, objectId: teamId, payload: { added: [...roles].map(([userId, role]) => ({ userId, role })), removed: [...removed] } });
    return team;
  });
}

/** Add a member to the team or change their role (role omitted: `member` for a newcomer, unchanged otherwise). */
export async function setTeamMember(ctx: DomainContext, organizationId: string, teamId: string, userId: string, raw: unknown) {
  await requireTeam(ctx, organizationId, teamId, 'admin');
  const input = parseInput(SetTeamMemberInput, raw);
  return transaction(ctx.prisma, async (tx) => {
    const member = await tx.member.findUnique({ where: { organizationId_userId: { organizationId, userId } }, select: { id: true } });
    if (!member) throw notFound('Member');
    const membership = await tx.teamMember.upsert({
      where: { teamId_userId: { teamId, userId } },
      create: { teamId, userId, role: input.role ?? 'member', createdAt: ctx.clock.now() },
      update: input.role ? { role: input.role } : {},
    });
    await recordEvent(tx, ctx, { type: 'team_members_updated', organizationId, objectId: teamId, payload: { added: [{ userId, role: membership.role }], removed: [] } });
    return membership;
  });
}

/** True when removed, false when the user was not in the team. */
export async function removeTeamMember(ctx: DomainContext, organizationId: string, teamId: string, userId: string) {
  await requireTeam(ctx, organizationId, teamId, 'admin');
  const r = await transaction(ctx.prisma, async (tx) => {
    const deleted = await tx.teamMember.deleteMany({ where: { teamId, userId } });
    if (deleted.count > 0) await recordEvent(tx, ctx, { type: 'team_members_updated', organizationId, objectId: teamId, payload: { added: [], removed: [userId] } });
    return deleted;
  });
  return r.count > 0;
}

/** Team `spaces` counter: non-deleted spaces with a grant made to the team. */
export async function countTeamSpaces(db: Tx, teamIds: readonly string[]): Promise<number[]> {
  const rows = await db.contentGrant.findMany({
    where: { teamId: { in: [...teamIds] }, spaceId: { not: null }, space: { deletedAt: null } },
    select: { teamId: true },
    distinct: ['teamId', 'spaceId'],
  });
  const counts = new Map<string, number>();
  for (const r of rows) counts.set(r.teamId!, (counts.get(r.teamId!) ?? 0) + 1);
  return teamIds.map((id) => counts.get(id) ?? 0);
}

/** The user's role in each of the teams (null when not a member). */
export async function teamRolesOfUser(db: Tx, userId: string, teamIds: readonly string[]): Promise<Array<TeamRole | null>> {
  const rows = await db.teamMember.findMany({ where: { userId, teamId: { in: [...teamIds] } }, select: { teamId: true, role: true } });
  const m = new Map(rows.map((r) => [r.teamId, r.role]));
  return teamIds.map((id) => m.get(id) ?? null);
}
