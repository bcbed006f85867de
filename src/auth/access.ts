// The one place that decides access. Every resolver asks this module, and every `permissions`
// object a client sees is computed by the same functions, so the flags can never disagree with
// what the API does. Rules (DESIGN.md "Access"):
//   - org admins are admin on everything in the org;
//   - otherwise a member's role on content is the highest of: grants to the user or one of its
//     teams on the space or an enclosing collection, and the content's defaultLevel (inherited
//     down from collections; when the whole chain is unset, the member's organization role);
//   - guests (org role null) get only explicit grants;
//   - public and unlisted spaces are readable by any authenticated caller.
// Not visible → NOT_FOUND; visible but not allowed → FORBIDDEN.
// Loads are batched per request with DataLoader so listing 100 spaces costs a constant number
// of statements.
import DataLoader from 'dataloader';
import type { Db } from '../db/client.ts';
import type { Prisma } from '../generated/prisma/client.ts';
import type { Member, Role, Space, Collection, User } from '../generated/prisma/client.ts';
import { AppError, notFound, forbidden, unauthenticated } from '../lib/errors.ts';
import { atLeast, highestRole } from './roles.ts';

export type Viewer = { user: User; tokenId: string };

type SpaceLike = Pick<Space, 'id' | 'organizationId' | 'ancestorIds' | 'visibility' | 'defaultLevel'> & { deletedAt?: Date | null };
type CollectionLike = Pick<Collection, 'id' | 'organizationId' | 'ancestorIds' | 'defaultLevel'>;

/** Membership lookups: undefined = not a member at all, Member with role null = guest. */
export class Access {
  private membershipLoader: DataLoader<string, Member | null>;
  private collectionLoader: DataLoader<string, Collection | null>;
  private grantLoader: DataLoader<string, Role | null>;
  private teamIdsPromise?: Promise<string[]>;
  /** Spaces this request read through a share key (`space(id:, shareKey:)`) without a role on them. */
  private readonly shareKeyReads = new Set<string>();

  constructor(
    private readonly prisma: Db,
    readonly viewer: Viewer | null,
  ) {
    this.membershipLoader = new DataLoader(async (orgIds) => {
      if (!viewer) return orgIds.map(() => null);
      const rows = await prisma.member.findMany({ where: { userId: viewer.user.id, organizationId: { in: [...orgIds] } } });
      const byOrg = new Map(rows.map((m) => [m.organizationId, m]));
      return orgIds.map((id) => byOrg.get(id) ?? null);
    });
    this.collectionLoader = new DataLoader(async (ids) => {
      const rows = await prisma.collection.findMany({ where: { id: { in: [...ids] } } });
      const byId = new Map(rows.map((c) => [c.id, c]));
      return ids.map((id) => byId.get(id) ?? null);
    });
    // Highest explicit grant for the viewer (directly or via a team) on each target id, where a
    // target is a space or a collection.
    this.grantLoader = new DataLoader(async (targetIds) => {
      if (!viewer) return targetIds.map(() => null);
      const teamIds = await this.teamIds();
      const rows = await prisma.contentGrant.findMany({
        where: {
          OR: [{ spaceId: { in: [...targetIds] } }, { collectionId: { in: [...targetIds] } }],
          AND: [{ OR: [{ userId: viewer.user.id }, ...(teamIds.length ? [{ teamId: { in: teamIds } }] : [])] }],
        },
        select: { spaceId: true, collectionId: true, role: true },
      });
      const best = new Map<string, Role>();
      for (const g of rows) {
        const key = (g.spaceId ?? g.collectionId)!;
        best.set(key, highestRole(best.get(key), g.role)!);
      }
      return targetIds.map((id) => best.get(id) ?? null);
    });
  }

  requireViewer(): Viewer {
    if (!this.viewer) throw unauthenticated();
    return this.viewer;
  }

  teamIds(): Promise<string[]> {
    if (!this.viewer) return Promise.resolve([]);
    this.teamIdsPromise ??= this.prisma.teamMember
      .findMany({ where: { userId: this.viewer.user.id }, select: { teamId: true } })
      .then((rows) => rows.map((r) => r.teamId));
    return this.teamIdsPromise;
  }

  membership(organizationId: string): Promise<Member | null> {
    return this.membershipLoader.load(organizationId);
  }

  /** Prime the membership cache when a query already loaded it (avoids a second statement). */
  primeMembership(member: Member) {
    if (this.viewer && member.userId === this.viewer.user.id) this.membershipLoader.prime(member.organizationId, member);
  }

  // ------------------------------------------------------------------ organizations

  async organizationPermissions(organizationId: string) {
    const m = await this.membership(organizationId);
    const role = m && !m.disabled ? m.role : undefined;
    const member = m != null && !m.disabled;
    const admin = atLeast(role, 'admin');
    return {
      view: member,
      admin,
      ownTeam: member && role != null,
      createContent: atLeast(role, 'create'),
      createOpenAPISpec: atLeast(role, 'create'),
      ingestConversations: admin,
      viewBilling: admin,
      listMembers: member && role != null,
      listTeams: member && role != null,
      listIntegrations: admin,
    };
  }

  /**
   * Require membership of an organization (NOT_FOUND otherwise) and, when `min` is given, at least
   * that organization role (FORBIDDEN otherwise). Returns the membership.
   */
  async requireOrganization(organizationId: string, min?: Role): Promise<Member> {
    this.requireViewer();
    const m = await this.membership(organizationId);
    if (!m || m.disabled) throw notFound('Organization');
    if (min && !atLeast(m.role, min)) throw forbidden(`This requires the ${min} role in the organization`);
    return m;
  }

  async isOrganizationAdmin(organizationId: string): Promise<boolean> {
    const m = await this.membership(organizationId);
    return !!m && !m.disabled && m.role === 'admin';
  }

  // ------------------------------------------------------------------ content

  /** Inherited default level: the content's own, else the nearest enclosing collection's. */
  private async inheritedDefaultLevel(own: Role | null, ancestorIds: string[]): Promise<Role | null | undefined> {
    if (own) return own;
    if (ancestorIds.length === 0) return undefined;
    const chain = await this.collectionLoader.loadMany(ancestorIds);
    for (let i = chain.length - 1; i >= 0; i--) {
      const c = chain[i];
      if (c && !(c instanceof Error) && c.defaultLevel) return c.defaultLevel;
    }
    return undefined;
  }

  private async contentRole(target: { id: string; organizationId: string; ancestorIds: string[]; defaultLevel: Role | null }) {
    if (!this.viewer) return null;
    const [m, grants, inherited] = await Promise.all([
      this.membership(target.organizationId),
      this.grantLoader.loadMany([target.id, ...target.ancestorIds]),
      this.inheritedDefaultLevel(target.defaultLevel, target.ancestorIds),
    ]);
    const granted = highestRole(...grants.map((g) => (g instanceof Error ? null : g)));
    if (!m || m.disabled) return granted;
    if (m.role === 'admin') return 'admin' as Role;
    if (m.role === null) return granted; // guests: explicit grants only
    const base = inherited === undefined ? m.role : inherited;
    return highestRole(granted, base);
  }

  /** The caller's role on a space, or null when they cannot see it. */
  async spaceRole(space: SpaceLike): Promise<Role | null> {
    const role = await this.contentRole(space);
    if (role) return role;
    if (space.visibility === 'public' || space.visibility === 'unlisted') return this.viewer ? 'read' : null;
    return null;
  }

  async collectionRole(collection: CollectionLike): Promise<Role | null> {
    return this.contentRole(collection);
  }

  /**
   * Record that this request read the space through a valid share key. Only the flags learn it:
   * the key opens the space's own reading operation, nothing else, so `spaceRole` is unchanged.
   */
  noteShareKeyRead(spaceId: string) {
    this.shareKeyReads.add(spaceId);
  }

  async spacePermissions(space: SpaceLike) {
    const role = await this.spaceRole(space);
    // A share-key reader may view the space (that is what the request just did) and nothing else.
    if (!role && this.shareKeyReads.has(space.id)) return { ...spacePermissionsFor(null), view: true };
    return spacePermissionsFor(role);
  }

  async collectionPermissions(collection: CollectionLike) {
    const [role, m] = await Promise.all([this.collectionRole(collection), this.membership(collection.organizationId)]);
    // Creating inside a collection also needs `create` in the organization (requireContentContainer's
    // caller, createCollection/createSpace), so a guest's or reader's grant alone does not allow it.
    const orgCreate = !!m && !m.disabled && atLeast(m.role, 'create');
    return { view: role != null, admin: atLeast(role, 'admin'), viewInviteLinks: atLeast(role, 'admin'), create: atLeast(role, 'create') && orgCreate };
  }

  /**
   * Require the caller to see the space (NOT_FOUND otherwise, deleted spaces included unless
   * `includeDeleted`) and hold at least `min` on it (FORBIDDEN otherwise). Returns the role.
   */
  async requireSpace(space: SpaceLike | null | undefined, min: Role = 'read', opts: { includeDeleted?: boolean } = {}): Promise<Role> {
    this.requireViewer();
    if (!space || (space.deletedAt && !opts.includeDeleted)) throw notFound('Space');
    const role = await this.spaceRole(space);
    if (!role) throw notFound('Space');
    if (!atLeast(role, min)) throw forbidden(`This requires the ${min} role on the space`);
    return role;
  }

  async requireCollection(collection: CollectionLike | null | undefined, min: Role = 'read'): Promise<Role> {
    this.requireViewer();
    if (!collection) throw notFound('Collection');
    const role = await this.collectionRole(collection);
    if (!role) throw notFound('Collection');
    if (!atLeast(role, min)) throw forbidden(`This requires the ${min} role on the collection`);
    return role;
  }
}

export function spacePermissionsFor(role: Role | null) {
  return {
    view: role != null,
    access: role != null,
    admin: atLeast(role, 'admin'),
    viewInviteLinks: atLeast(role, 'admin'),
    edit: atLeast(role, 'edit'),
    triggerGitSync: atLeast(role, 'edit'),
    comment: atLeast(role, 'comment'),
    merge: atLeast(role, 'review'),
    review: atLeast(role, 'review'),
  };
}

export function isAppError(e: unknown): e is AppError {
  return e instanceof AppError;
}

// ------------------------------------------------------------------ visibility filters for listings

/** What listing filters need: the caller's access and the database. */
type ListingContext = { access: Access; prisma: Db };

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

