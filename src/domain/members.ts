// Organization members: listing with filters, roles (never without an admin), removal, last-seen
// pings with signed visitor claims, SSO, adding people by e-mail, and what a member can reach
// (spaces, teams) with the counters the Member resource carries.
import { z } from 'zod';
import { SignJWT, jwtVerify } from 'jose';
import type { DomainContext } from './context.ts';
import type { Db, Tx } from '../db/client.ts';
import type { Prisma, Role, User } from '../generated/prisma/client.ts';
import { Access } from '../auth/access.ts';
import { orgAllows } from '../auth/org-actions.ts';
import { ROLES } from '../auth/roles.ts';
import { newId } from '../lib/ids.ts';
import { parseInput, notFound, conflict } from '../lib/errors.ts';
import { CreateUserInput, RoleOrGuest, findOrCreateUser } from './users.ts';
import { transaction } from '../db/transaction.ts';
import { recordEvent } from '../events/log.ts';
import { lockOrganization } from '../db/locks.ts';

export const ListOrder = z.enum(['asc', 'desc']);

export const MemberListFilters = z.strictObject({
  order: ListOrder.optional(),
  role: z.enum([...ROLES, 'guest']).optional(),
  search: z.string().trim().max(256).optional(),
  sort: z.enum(['joinedAt', 'lastSeenAt']).optional(),
});

export const UpdateMemberInput = z.strictObject({ role: RoleOrGuest.optional() });

export const AddMemberInput = z.strictObject({
  email: CreateUserInput.shape.email,
  displayName: CreateUserInput.shape.displayName.optional(),
  role: RoleOrGuest.optional(),
});

/** `where` and `orderBy` of a member listing (the caller checks access). */
export function memberListQuery(raw: unknown) {
  const f = parseInput(MemberListFilters, raw);
  const order = f.order ?? 'desc';
  const sort = f.sort ?? 'joinedAt';
  const where: Prisma.MemberWhereInput = {};
  if (f.role) where.role = f.role === 'guest' ? null : f.role;
  if (f.search) {
    const contains = { contains: f.search, mode: 'insensitive' as const };
    where.user = { OR: [{ displayName: contains }, { email: contains }] };
  }
  // Sorting by last-seen lists only members who have been seen (the contract's "active members").
  if (sort === 'lastSeenAt') where.lastSeenAt = { not: null };
  const orderBy: Prisma.MemberOrderByWithRelationInput[] = [{ [sort]: order }, { id: order }];
  return { where, orderBy };
}

/** Listing members needs a non-guest membership (guests: 403, outsiders: 404). */
export function requireListMembers(ctx: DomainContext, organizationId: string) {
  return ctx.access.requireOrg(organizationId, 'member:read');
}

/** Members can always see themselves; others need the right to list members. */
async function requireViewMember(ctx: DomainContext, organizationId: string, userId: string) {
  await ctx.access.requireMemberView(organizationId, userId);
}

async function findMember(db: Tx, organizationId: string, userId: string) {
  const member = await db.member.findUnique({ where: { organizationId_userId: { organizationId, userId } } });
  if (!member) throw notFound('Member');
  return member;
}

export async function getMember(ctx: DomainContext, organizationId: string, userId: string) {
  await requireViewMember(ctx, organizationId, userId);
  return findMember(ctx.prisma, organizationId, userId);
}

async function ensureAnotherAdmin(tx: Tx, organizationId: string, memberId: string) {
  const others = await tx.member.count({ where: { organizationId, role: 'admin', disabled: false, NOT: { id: memberId } } });
  if (others === 0) throw conflict('The organization must keep at least one admin: make another member admin first');
}

/** Change a member's role (null = guest). Refuses (409) to leave the organization without an admin. */
export async function updateMember(ctx: DomainContext, organizationId: string, userId: string, raw: unknown) {
  await ctx.access.requireOrg(organizationId, 'member:manage');
  const input = parseInput(UpdateMemberInput, raw);
  return transaction(ctx.prisma, async (tx) => {
    await lockOrganization(tx, organizationId);
    const member = await findMember(tx, organizationId, userId);
    if (input.role === undefined || input.role === member.role) return member;
    if (orgAllows(member, 'organization:admin') && !member.disabled) await ensureAnotherAdmin(tx, organizationId, member.id);
    const updated = await tx.member.update({ where: { id: member.id }, data: { role: input.role } });
    await recordEvent(tx, ctx, { type: 'member_role_updated', organizationId, objectId: userId, payload: { role: updated.role, previousRole: member.role } });
    return updated;
  });
}

/**
 * Remove a member with their team memberships and content grants in the organization (grants
 * would otherwise still open content to a non-member). True when removed, false when absent.
 */
export async function removeMember(ctx: DomainContext, organizationId: string, userId: string) {
  await ctx.access.requireOrg(organizationId, 'member:manage');
  return transaction(ctx.prisma, async (tx) => {
    await lockOrganization(tx, organizationId);
    const member = await tx.member.findUnique({ where: { organizationId_userId: { organizationId, userId } } });
    if (!member) return false;
    if (orgAllows(member, 'organization:admin') && !member.disabled) await ensureAnotherAdmin(tx, organizationId, member.id);
    await tx.teamMember.deleteMany({ where: { userId, team: { organizationId } } });
    await tx.contentGrant.deleteMany({ where: { userId, organizationId } });
    await tx.member.delete({ where: { id: member.id } });
    await recordEvent(tx, ctx, { type: 'member_removed', organizationId, objectId: userId, payload: { role: member.role } });
    return true;
  });
}

export async function setMemberSso(ctx: DomainContext, organizationId: string, userId: string) {
  await ctx.access.requireOrg(organizationId, 'member:manage');
  return transaction(ctx.prisma, async (tx) => {
    const member = await findMember(tx, organizationId, userId);
    const updated = await tx.member.update({ where: { id: member.id }, data: { sso: true } });
    await recordEvent(tx, ctx, { type: 'member_sso_updated', organizationId, objectId: userId, payload: { sso: true } });
    return updated;
  });
}

/** Add someone by e-mail (creating the user when needed). Role omitted = the organization's default role. */
export async function addMember(ctx: DomainContext, organizationId: string, raw: unknown) {
  await ctx.access.requireOrg(organizationId, 'member:manage');
  const input = parseInput(AddMemberInput, raw);
  return transaction(ctx.prisma, async (tx) => {
    const user = await findOrCreateUser(tx, { email: input.email, displayName: input.displayName ?? input.email.split('@')[0] });
    const existing = await tx.member.findUnique({ where: { organizationId_userId: { organizationId, userId: user.id } } });
    if (existing) throw conflict(`${input.email} is already a member of the organization`);
    const org = await tx.organization.findUniqueOrThrow({ where: { id: organizationId }, select: { defaultRole: true } });
    const role = input.role === undefined ? org.defaultRole : input.role;
    const member = await tx.member.create({ data: { id: newId('Member'), organizationId, userId: user.id, role, joinedAt: ctx.clock.now() } });
    await recordEvent(tx, ctx, { type: 'member_added', organizationId, objectId: user.id, payload: { role } });
    return member;
  });
}

// ------------------------------------------------------------------ ping and visitor claims

const CLAIMS_TTL_SECONDS = 3600;

const claimsKey = (ctx: Pick<DomainContext, 'config'>) => new TextEncoder().encode(ctx.config.claimsSecret);

/** A compact HS256 JWT (jose), valid for an hour. */
export function signVisitorClaims(ctx: Pick<DomainContext, 'config' | 'clock'>, claims: Record<string, unknown>) {
  const iat = Math.floor(ctx.clock.now().getTime() / 1000);
  return new SignJWT(claims).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).setIssuedAt(iat).setExpirationTime(iat + CLAIMS_TTL_SECONDS).sign(claimsKey(ctx));
}

/** The claims of a token signed here, or null when the signature is wrong or it expired. */
export async function verifyVisitorClaims(ctx: Pick<DomainContext, 'config' | 'clock'>, token: string): Promise<Record<string, unknown> | null> {
  try {
    const { payload } = await jwtVerify(token, claimsKey(ctx), { algorithms: ['HS256'], currentDate: ctx.clock.now() });
    return payload as Record<string, unknown>;
  } catch {
    return null;
  }
}

/** Record that the caller was active in the organization now; returns signed claims about them. */
export async function pingOrganization(ctx: DomainContext, organizationId: string) {
  const me = await ctx.access.requireOrg(organizationId, 'organization:view');
  const member = await ctx.prisma.member.update({ where: { id: me.id }, data: { lastSeenAt: ctx.clock.now() } });
  const serviceVisitorClaims = await signVisitorClaims(ctx, { sub: me.userId, org: organizationId, role: member.role });
  return { member, serviceVisitorClaims };
}

// ------------------------------------------------------------------ what a member can reach

/** A member's spaces are visible to org admins and to the member. */
async function requireMemberSpacesAccess(ctx: DomainContext, organizationId: string, userId: string) {
  await ctx.access.requireMemberSpaces(organizationId, userId);
}

/**
 * The role a user holds on every space of the organization they can access, computed by the
 * same access rules that enforce it (an `Access` acting as that user; its loaders batch the
 * grant, team and collection lookups, so the cost does not grow with the number of spaces).
 */
export async function spaceRolesForUser(db: Db, organizationId: string, user: User): Promise<Map<string, Role>> {
  const as = Access.asUser(db, user);
  const spaces = await db.space.findMany({
    where: { organizationId, deletedAt: null },
    select: { id: true, organizationId: true, ancestorIds: true, visibility: true, defaultLevel: true },
  });
  const roles = await Promise.all(spaces.map((s) => as.spaceRole(s)));
  const out = new Map<string, Role>();
  spaces.forEach((s, i) => roles[i] && out.set(s.id, roles[i]!));
  return out;
}

/** The spaces a member can access with their role on each, for org admins and the member. */
export async function memberSpaceRoles(ctx: DomainContext, organizationId: string, userId: string) {
  await requireMemberSpacesAccess(ctx, organizationId, userId);
  const member = await ctx.prisma.member.findUnique({
    where: { organizationId_userId: { organizationId, userId } },
    include: { user: true },
  });
  if (!member) throw notFound('Member');
  return spaceRolesForUser(ctx.prisma, organizationId, member.user);
}

/** Members' teams listing: members of the organization see each other's teams (guests their own). */
export function requireMemberTeamsAccess(ctx: DomainContext, organizationId: string, userId: string) {
  return requireViewMember(ctx, organizationId, userId);
}

export type MemberKey = { organizationId: string; userId: string };
export const memberKey = (k: MemberKey) => `${k.organizationId}|${k.userId}`;

/**
 * Member `spaces` counter: the number of (non-deleted) spaces of the organization with a grant
 * made to the user directly. Team grants, collection grants and default levels are not counted.
 */
export async function countMemberSpaces(db: Tx, keys: readonly MemberKey[]): Promise<number[]> {
  const rows = await db.contentGrant.findMany({
    where: {
      userId: { in: [...new Set(keys.map((k) => k.userId))] },
      organizationId: { in: [...new Set(keys.map((k) => k.organizationId))] },
      spaceId: { not: null },
      space: { deletedAt: null },
    },
    select: { userId: true, organizationId: true, spaceId: true },
    distinct: ['organizationId', 'userId', 'spaceId'],
  });
  return countPerKey(keys, rows.map((r) => ({ organizationId: r.organizationId, userId: r.userId! })));
}

/** Member `teams` counter: teams of the organization the user belongs to. */
export async function countMemberTeams(db: Tx, keys: readonly MemberKey[]): Promise<number[]> {
  const rows = await db.teamMember.findMany({
    where: {
      userId: { in: [...new Set(keys.map((k) => k.userId))] },
      team: { organizationId: { in: [...new Set(keys.map((k) => k.organizationId))] } },
    },
    select: { userId: true, team: { select: { organizationId: true } } },
  });
  return countPerKey(keys, rows.map((r) => ({ organizationId: r.team.organizationId, userId: r.userId })));
}

function countPerKey(keys: readonly MemberKey[], rows: MemberKey[]) {
  const counts = new Map<string, number>();
  for (const r of rows) counts.set(memberKey(r), (counts.get(memberKey(r)) ?? 0) + 1);
  return keys.map((k) => counts.get(memberKey(k)) ?? 0);
}
