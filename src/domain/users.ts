// Users, organizations creation, memberships and API tokens: what the admin CLI, the first-run
// bootstrap and the identity mutations share.
import { z } from 'zod';
import type { Tx } from '../db/client.ts';
import type { Role } from '../generated/prisma/enums.ts';
import { newId } from '../lib/ids.ts';
import { issueToken, type TokenScopeInput } from '../auth/tokens.ts';
import { AppError, parseInput, badRequest, rateLimited } from '../lib/errors.ts';
import { transaction } from '../db/transaction.ts';
import { lockBootstrap, lockUserTokens } from '../db/locks.ts';
import { ROLES } from '../auth/roles.ts';
import type { DomainContext } from './context.ts';
import { notFound } from '../lib/errors.ts';

export const CreateUserInput = z.strictObject({
  email: z.string().trim().toLowerCase().email().max(320),
  displayName: z.string().trim().min(1).max(255),
  photoURL: z.string().url().max(2048).optional(),
});

export async function findOrCreateUser(tx: Tx, input: z.input<typeof CreateUserInput>) {
  const data = parseInput(CreateUserInput, input);
  const existing = await tx.user.findUnique({ where: { email: data.email } });
  if (existing) return existing;
  return tx.user.create({ data: { id: newId('User'), ...data } });
}

export const OrganizationTitle = z.string().trim().min(2).max(255);

export async function createOrganizationWithAdmin(tx: Tx, title: string, adminUserId: string) {
  const parsedTitle = parseInput(OrganizationTitle, title, 'title');
  const org = await tx.organization.create({ data: { id: newId('Organization'), title: parsedTitle } });
  await tx.member.create({ data: { id: newId('Member'), organizationId: org.id, userId: adminUserId, role: 'admin' } });
  return org;
}

export const RoleOrGuest = z.enum(ROLES).nullable();

/** Add a user to an organization, or change nothing when they are already a member. */
export async function addMembership(tx: Tx, organizationId: string, userId: string, role: Role | null) {
  const existing = await tx.member.findUnique({ where: { organizationId_userId: { organizationId, userId } } });
  if (existing) return { member: existing, created: false };
  const member = await tx.member.create({ data: { id: newId('Member'), organizationId, userId, role } });
  return { member, created: true };
}

export async function createApiToken(tx: Tx, userId: string, label: string, plain?: string, createdAt?: Date, scope: TokenScopeInput = {}) {
  if (label.length > 100) throw badRequest('label', 'at most 100 characters');
  return issueToken(tx, userId, label || 'API token', plain, createdAt, scope);
}

/** Sites one `published` token may be limited to. */
export const MAX_TOKEN_SITES = 100;

/**
 * The sites a `published`-scoped token is limited to, checked: each one a site `userId`'s caller
 * may read as an organization member (`site:read`), else NOT_FOUND naming `<field>.N` (a site
 * the caller cannot see and a missing one answer alike). Duplicates are dropped, order kept.
 */
export async function requireTokenSites(ctx: Pick<DomainContext, 'access'>, siteIds: readonly string[], field = 'siteIds'): Promise<string[]> {
  if (siteIds.length > MAX_TOKEN_SITES) throw badRequest(field, `at most ${MAX_TOKEN_SITES} sites`);
  const unique: string[] = [];
  for (const [i, raw] of siteIds.entries()) {
    const id = raw.trim();
    if (!id || id.length > 64) throw badRequest(`${field}.${i}`, 'not a site id');
    if (unique.includes(id)) continue;
    if (!(await ctx.access.canSeeSite(id, 'site:read'))) throw new AppError('NOT_FOUND', `${field}.${i}: site not found`, `${field}.${i}`);
    unique.push(id);
  }
  return unique;
}

const HOUR_MS = 60 * 60 * 1000;

/**
 * The viewer's own new token (`createApiToken`): at most `config.apiTokensPerHour` in any rolling
 * hour, revoked ones included; beyond, RATE_LIMITED with the seconds until the oldest of them
 * leaves the hour. Rate limits count a user's tokens together, so this bounds only how fast the
 * token table grows. One transaction, serialized per user, so concurrent calls cannot all pass.
 */
export async function createOwnApiToken(ctx: DomainContext, label: string, scope: TokenScopeInput = {}) {
  const userId = ctx.access.requireViewer().user.id;
  const limit = ctx.config.apiTokensPerHour;
  return transaction(ctx.prisma, async (tx) => {
    await lockUserTokens(tx, userId);
    const now = ctx.clock.now();
    const recent = await tx.apiToken.findMany({
      where: { userId, createdAt: { gt: new Date(now.getTime() - HOUR_MS) } },
      select: { createdAt: true },
      orderBy: { createdAt: 'asc' },
      take: limit,
    });
    if (recent.length >= limit) {
      const retryAfter = (recent[0].createdAt.getTime() + HOUR_MS - now.getTime()) / 1000;
      throw rateLimited(`At most ${limit} API tokens may be created per hour; retry in ${Math.ceil(retryAfter)} s`, retryAfter);
    }
    return createApiToken(tx, userId, label, undefined, now, scope);
  });
}

/**
 * First run: an empty database gets an organization, an admin user and a token. With
 * DOCGRAPH_ADMIN_TOKEN set, that exact value becomes the admin's token (scripts and tests
 * know it); otherwise a random one is generated and returned once.
 */
export async function bootstrapIfEmpty(tx: Tx, opts: { adminEmail: string; adminToken?: string }) {
  await lockBootstrap(tx);
  const users = await tx.user.count();
  if (users > 0) return null;
  const user = await tx.user.create({ data: { id: newId('User'), email: opts.adminEmail, displayName: 'Administrator' } });
  const org = await createOrganizationWithAdmin(tx, 'My Organization', user.id);
  const { token } = await issueToken(tx, user.id, 'bootstrap', opts.adminToken);
  return { user, org, token };
}

/**
 * Who may read a user by id (`GET /v1/users/{userId}`, GraphQL `user(id:)` and `node(id:)`):
 * yourself, and anyone who is an active member (any role, guests included) of an organization the
 * user belongs to — the people whose names the caller already meets as authors, members and
 * commenters. Anyone else gets a 404, whether or not the user exists.
 */
export async function canSeeUser(ctx: Pick<DomainContext, 'prisma' | 'access'>, userId: string): Promise<boolean> {
  const viewer = ctx.access.requireViewer();
  if (userId === viewer.user.id) return true;
  const shared = await ctx.prisma.member.findFirst({
    where: { userId, organization: { members: { some: { userId: viewer.user.id, disabled: false } } } },
    select: { id: true },
  });
  return shared !== null;
}

export async function requireVisibleUser(ctx: Pick<DomainContext, 'prisma' | 'access'>, userId: string): Promise<void> {
  if (!(await canSeeUser(ctx, userId))) throw notFound('User');
}
