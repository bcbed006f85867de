// What listings may show the caller: Prisma filters that mirror the access rules, so a list costs
// one query instead of one check per row.
import type { Db } from '../db/client.ts';
import type { Member, Prisma } from '../generated/prisma/client.ts';
import type { Viewer } from './tokens.ts';

/** What listing filters need: the caller's access (an `Access`) and the database. */
type ListingContext = { access: { viewer: Viewer | null; membership(organizationId: string): Promise<Member | null>; teamIds(): Promise<string[]> }; prisma: Db };

/**
 * What listings may show the caller in an organization, as Prisma filters that mirror
 * `Access.spaceRole` / `Access.collectionRole` (src/auth/access.ts): admins and members with a
 * role see everything (their inherited level is never below `read`); guests see content granted
 * to them or one of their teams, directly or through an enclosing collection, plus public and
 * unlisted spaces; non-members see nothing. `test/spaces.test.ts` checks the filters against the
 * access module, space by space.
 */
export type VisibilityScope = { kind: 'all' } | { kind: 'none' } | { kind: 'guest'; userId: string; teamIds: string[]; collectionIds: string[] };

export async function visibilityScope(ctx: ListingContext, organizationId: string): Promise<VisibilityScope> {
  const viewer = ctx.access.viewer;
  if (!viewer) return { kind: 'none' };
  const m = await ctx.access.membership(organizationId);
  if (!m || m.disabled) return { kind: 'none' };
  if (m.role !== null) return { kind: 'all' };
  const teamIds = await ctx.access.teamIds();
  const grants = await ctx.prisma.contentGrant.findMany({
    where: { organizationId, collectionId: { not: null }, OR: [{ userId: viewer.user.id }, ...(teamIds.length ? [{ teamId: { in: teamIds } }] : [])] },
    select: { collectionId: true },
  });
  return { kind: 'guest', userId: viewer.user.id, teamIds, collectionIds: [...new Set(grants.map((g) => g.collectionId!))] };
}

const grantToViewer = (scope: Extract<VisibilityScope, { kind: 'guest' }>): Prisma.ContentGrantWhereInput => ({
  OR: [{ userId: scope.userId }, ...(scope.teamIds.length ? [{ teamId: { in: scope.teamIds } }] : [])],
});

export function spacesWhereFor(scope: VisibilityScope): Prisma.SpaceWhereInput {
  if (scope.kind === 'all') return {};
  if (scope.kind === 'none') return { id: { in: [] } };
  return {
    OR: [
      { visibility: { in: ['public', 'unlisted'] } },
      { grants: { some: grantToViewer(scope) } },
      ...(scope.collectionIds.length ? [{ ancestorIds: { hasSome: scope.collectionIds } }] : []),
    ],
  };
}

export function collectionsWhereFor(scope: VisibilityScope): Prisma.CollectionWhereInput {
  if (scope.kind === 'all') return {};
  if (scope.kind === 'none' || scope.collectionIds.length === 0) return { id: { in: [] } };
  return { OR: [{ id: { in: scope.collectionIds } }, { ancestorIds: { hasSome: scope.collectionIds } }] };
}

/** Non-deleted spaces of an organization the caller may read. */
export async function visibleSpacesWhere(ctx: ListingContext, organizationId: string, extra: Prisma.SpaceWhereInput = {}): Promise<Prisma.SpaceWhereInput> {
  const scope = await visibilityScope(ctx, organizationId);
  return { AND: [{ organizationId, deletedAt: null }, spacesWhereFor(scope), extra] };
}

/** Collections of an organization the caller may see; `nested: false` keeps the top level only. */
export async function visibleCollectionsWhere(ctx: ListingContext, organizationId: string, extra: Prisma.CollectionWhereInput = {}): Promise<Prisma.CollectionWhereInput> {
  const scope = await visibilityScope(ctx, organizationId);
  return { AND: [{ organizationId }, collectionsWhereFor(scope), extra] };
}

