// The one place that decides access (DESIGN.md "Access"). Every resolver asks an `Access`, and
// every `permissions` object a client sees is computed by the same tests, so the flags can never
// disagree with what the API does. Its rooms:
//   - org-actions.ts: ORG_ACTIONS, what a caller may do in an organization (requireOrg / canOrg);
//   - space-actions.ts: SPACE_ACTIONS, what a caller may do with a space's content, comments and
//     change requests, and in a collection (requireSpace / canSpace, requireCollection);
//   - access-sql.ts: the access statement and a member's role on content;
//   - published-gate.ts (with audience.ts): who reads a published site, share keys, the cache gate;
//   - listing.ts: the listing filters that mirror these rules.
// Public and unlisted spaces are readable by any authenticated caller. No other module reads a
// membership. Not visible → NOT_FOUND; visible but not allowed → FORBIDDEN. Loads are batched per
// request with DataLoader, so listing 100 spaces costs a constant number of statements.
import DataLoader from 'dataloader';
import type { Tx } from '../db/client.ts';
import type { Member, Role, Space, Collection, Site, TeamRole, User, ChangeRequest, Comment } from '../generated/prisma/client.ts';
import { notFound, forbidden, unauthenticated } from '../lib/errors.ts';
import { loadContentFacts, loadMemberships, loadOrganizationsOf, contentRoleOf, type ContentFacts, type ContentTarget } from './access-sql.ts';
import { ORG_ACTIONS, orgAllows, memberRights, organizationPermissionsFor, teamRights, type OrgAction, type SiteAction } from './org-actions.ts';
import { changeRequestPermissionsFor, commentPermissionsFor, refusalOf, spaceAllows, spacePermissionsFor, spaceRoleAllows } from './space-actions.ts';
import type { CollectionAction, SpaceAction, SpaceFacts } from './space-actions.ts';
import * as published from './published-gate.ts';
import type { ReaderOptions, ResolvedShareKey, SiteReaderRow } from './published-gate.ts';
import type { SiteReader } from './audience.ts';
import type { Viewer } from './tokens.ts';

export type { Viewer } from './tokens.ts';
// What callers imported from here before the rooms: they keep working unchanged.
export type { SiteAction } from './org-actions.ts';
export { SHARE_KEY_PREFIX } from './published-gate.ts';
export { visibilityScope, visibleSpacesWhere, visibleCollectionsWhere } from './listing.ts';

type SpaceLike = Pick<Space, 'id' | 'organizationId' | 'ancestorIds' | 'visibility' | 'defaultLevel'> & { deletedAt?: Date | null };
type CollectionLike = Pick<Collection, 'id' | 'organizationId' | 'ancestorIds' | 'defaultLevel'>;

/** Membership lookups: undefined = not a member at all, Member with role null = guest. */
export class Access {
  private membershipLoader: DataLoader<string, Member | null>;
  private contentLoader: DataLoader<ContentTarget, ContentFacts, string>;
  private siteOrgLoader: DataLoader<string, string | null>;
  private shareLinkOrgLoader: DataLoader<string, string | null>;
  private teamIdsPromise?: Promise<string[]>;
  /** Sites this request has already been allowed to read (`noteSiteRead`). */
  private readonly readSites = new Set<string>();
  /** The reader this request is on each published site it read (`siteReader`). */
  private readonly siteReaders = new Map<string, SiteReader>();
  /** Spaces this request read through a share key (`space(id:, shareKey:)`) without a role on them. */
  private readonly shareKeyReads = new Set<string>();

  constructor(
    private readonly prisma: Tx,
    readonly viewer: Viewer | null,
  ) {
    // A `published`-scoped token is never a member: it reads as an outsider, whatever its user is.
    this.membershipLoader = new DataLoader(async (orgIds) => (!viewer || viewer.scope ? orgIds.map(() => null) : loadMemberships(prisma, viewer.user.id, orgIds)));
    this.siteOrgLoader = new DataLoader((ids) => loadOrganizationsOf(prisma, 'site', ids));
    this.shareLinkOrgLoader = new DataLoader((ids) => loadOrganizationsOf(prisma, 'shareLink', ids));
    // The access statement, batched across the spaces and collections of a request: one statement
    // whatever the number of targets and the depth of their collections. It also primes the
    // membership and team caches, so later organization checks cost nothing.
    this.contentLoader = new DataLoader(
      async (targets) => {
        if (!viewer || viewer.scope) return targets.map(() => ({ member: null, granted: null, ancestorDefault: undefined }));
        const { facts, members, teamIds } = await loadContentFacts(prisma, viewer.user.id, targets);
        for (const [id, m] of members) this.membershipLoader.prime(id, m);
        this.teamIdsPromise ??= Promise.resolve(teamIds);
        return facts;
      },
      { cacheKeyFn: (t) => `${t.id}|${t.ancestorIds.join(',')}` },
    );
  }

  /** The access of `user` acting as themself (a full token), to ask what they may do: a member's spaces, say. */
  static asUser(db: Tx, user: User): Access {
    return new Access(db, { user, tokenId: 'as-user' });
  }

  /** The same caller's checks through `tx` (its locks and writes, its connection: db/client.ts), with fresh loaders. */
  within(tx: Tx): Access {
    return new Access(tx, this.viewer);
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

  // ------------------------------------------------------------------ organizations (ORG_ACTIONS)

  /** The caller's active membership, or null (not a member, or disabled). */
  private async activeMember(organizationId: string): Promise<Member | null> {
    const m = await this.membership(organizationId);
    return m && !m.disabled ? m : null;
  }

  /** Require `action` in the organization: NOT_FOUND to (disabled) non-members, FORBIDDEN below its ORG_ACTIONS role. */
  async requireOrg(organizationId: string, action: OrgAction): Promise<Member> {
    this.requireViewer();
    const m = await this.activeMember(organizationId);
    if (!m) throw notFound('Organization');
    if (!orgAllows(m, action)) throw forbidden(`This requires the ${ORG_ACTIONS[action]} role in the organization`);
    return m;
  }

  /** Whether `requireOrg(organizationId, action)` would pass: the same rule, for `permissions` flags. */
  async canOrg(organizationId: string, action: OrgAction): Promise<boolean> {
    return orgAllows(await this.activeMember(organizationId), action);
  }

  async organizationPermissions(organizationId: string) {
    return organizationPermissionsFor(await this.activeMember(organizationId));
  }

  /** The caller's rights on a team in which they hold `teamRole` (null: not in it). */
  async teamPermissions(organizationId: string, teamRole: TeamRole | null) {
    return teamRights(await this.activeMember(organizationId), teamRole);
  }

  /** The caller's rights on the member `userId` (the `Member.permissions` flags). */
  async memberPermissions(organizationId: string, userId: string) {
    return memberRights(await this.activeMember(organizationId), userId);
  }

  /** Require reading the member `userId`: NOT_FOUND to non-members, FORBIDDEN to guests reading someone else. */
  async requireMemberView(organizationId: string, userId: string): Promise<Member> {
    const me = await this.requireOrg(organizationId, 'organization:view');
    if (!memberRights(me, userId).view) throw forbidden(`This requires the ${ORG_ACTIONS['member:read']} role in the organization`);
    return me;
  }

  /** The caller may list another member's spaces (org admins), or their own (any member). */
  async requireMemberSpaces(organizationId: string, userId: string): Promise<void> {
    const me = await this.requireOrg(organizationId, 'organization:view');
    if (me.userId !== userId && !orgAllows(me, 'member:manage')) throw forbidden('Only organization admins can list the spaces of another member');
  }

  // ------------------------------------------------------------------ sites

  /** Settings, structure and writes of a site: NOT_FOUND when missing or of another `organizationId`, then requireOrg. */
  async requireSite(site: Pick<Site, 'organizationId'> | null | undefined, action: SiteAction = 'site:read', organizationId?: string): Promise<void> {
    this.requireViewer();
    if (!site || (organizationId && site.organizationId !== organizationId)) throw notFound('Site');
    await this.requireOrg(site.organizationId, action);
  }

  /** The reader of `site`'s published view (published-gate.ts `decideSiteReader`), remembered for `readerOf`. */
  async siteReader(site: SiteReaderRow | null | undefined, opts: ReaderOptions): Promise<SiteReader> {
    const reader = await published.decideSiteReader(this.prisma, this.viewer, site, opts, (orgId) => this.canOrg(orgId, 'site:read'));
    this.siteReaders.set(reader.siteId, reader);
    return reader;
  }

  /** The reader this request was decided to be on a site (`siteReader`), if it read it. */
  readerOf(siteId: string): SiteReader | undefined {
    return this.siteReaders.get(siteId);
  }

  /** The most restrictive reader this request was on any site (a non-member first), for rows whose site is unknown. */
  anyReader(): SiteReader | undefined {
    const readers = [...this.siteReaders.values()];
    return readers.find((r) => !r.member) ?? readers.find((r) => r.claims !== null) ?? readers[0];
  }

  /** The published-structure cache's gate (published-gate.ts `publishedSiteGate`). */
  publishedSiteGate(siteId: string, opts: ReaderOptions): Promise<{ version: string; reader: SiteReader } | null> {
    return published.publishedSiteGate(this.prisma, this.viewer, siteId, opts);
  }

  /** Record that this request was allowed to read the site (node refetches and payload fallbacks need no second check). */
  noteSiteRead(siteId: string) {
    this.readSites.add(siteId);
  }

  /** node(id:) and fallback loads of a site: sites this request read (`noteSiteRead`), else members allowed `action`. */
  async canSeeSite(siteId: string | null, action: SiteAction = 'site:read'): Promise<boolean> {
    if (!siteId) return false;
    // A site this request read (an anonymous reader's too: its fields reload the row).
    if (action === 'site:read' && this.readSites.has(siteId)) return true;
    if (!this.viewer) return false;
    const orgId = await this.siteOrgLoader.load(siteId);
    return orgId != null && (await this.canOrg(orgId, action));
  }

  /** node(id:) of a share link: organization admins only (share links are credentials). */
  async canSeeShareLink(shareLinkId: string): Promise<boolean> {
    if (!this.viewer) return false;
    const orgId = await this.shareLinkOrgLoader.load(shareLinkId);
    return orgId != null && (await this.canOrg(orgId, 'shareLink:manage'));
  }

  /** The active share link with this key (published-gate.ts `resolveShareKey`); never cached. */
  resolveShareKey(siteId: string | null, key: string): Promise<ResolvedShareKey | null> {
    return published.resolveShareKey(this.prisma, siteId, key);
  }

  /** `GET /v1/spaces/{spaceId}?shareKey`: the key opens this space (published-gate.ts). */
  spaceVisibleWithShareKey(spaceId: string, key: string): Promise<boolean> {
    return published.spaceVisibleWithShareKey(this.prisma, spaceId, key);
  }

  // ------------------------------------------------------------------ content (SPACE_ACTIONS)

  private async contentRole(target: ContentTarget): Promise<Role | null> {
    if (!this.viewer) return null;
    return contentRoleOf(target, await this.contentLoader.load(target));
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

  /** This request read the space through a valid share key: only the flags learn it (`spaceRole` is unchanged). */
  noteShareKeyRead(spaceId: string) {
    this.shareKeyReads.add(spaceId);
  }

  async spacePermissions(space: SpaceLike) {
    const role = await this.spaceRole(space);
    // A share-key reader may view the space (that is what the request just did) and nothing else.
    if (!role && this.shareKeyReads.has(space.id)) return { ...spacePermissionsFor(null), view: true };
    return spacePermissionsFor(role);
  }

  /** The flags of a comment or reply in `space` (null: a space the caller cannot see). */
  async commentPermissions(space: SpaceLike | null, comment: Pick<Comment, 'authorId' | 'parentId'>) {
    return commentPermissionsFor(space ? await this.spaceRole(space) : null, comment, this.viewer?.user.id);
  }

  /** The flags of a change request in `space` (null: a space the caller cannot see). */
  async changeRequestPermissions(space: (SpaceLike & Pick<Space, 'editMode'>) | null, cr: Pick<ChangeRequest, 'createdById' | 'status'>) {
    return changeRequestPermissionsFor(space ? await this.spaceRole(space) : null, cr, space?.editMode ?? 'locked', this.viewer?.user.id);
  }

  async collectionPermissions(collection: CollectionLike) {
    const [role, orgCreate] = await Promise.all([this.collectionRole(collection), this.canOrg(collection.organizationId, 'content:create')]);
    const can = (action: CollectionAction) => spaceAllows(role, action, {}, undefined);
    // Creating inside a collection also needs `create` in the organization (requireContentContainer's
    // caller, createCollection/createSpace), so a guest's or reader's grant alone does not allow it.
    return { view: can('collection:read'), admin: can('collection:admin'), viewInviteLinks: can('collection:viewInviteLinks'), create: can('collection:create') && orgCreate };
  }

  /**
   * Require the caller to see the space (NOT_FOUND otherwise, deleted spaces included unless
   * `includeDeleted`) and to be allowed `action` on it, or on the object `facts` describe
   * (FORBIDDEN otherwise). Returns the role. The object's state (`SPACE_ACTIONS[action].state`)
   * is the domain's to refuse, under its row lock.
   */
  async requireSpace(space: SpaceLike | null | undefined, action: SpaceAction = 'space:read', facts: SpaceFacts = {}, opts: { includeDeleted?: boolean } = {}): Promise<Role> {
    const viewer = this.requireViewer();
    if (!space || (space.deletedAt && !opts.includeDeleted)) throw notFound('Space');
    const role = await this.spaceRole(space);
    if (!role) throw notFound('Space');
    if (!spaceRoleAllows(role, action, facts, viewer.user.id)) throw forbidden(refusalOf(action, facts, viewer.user.id));
    return role;
  }

  /** Whether the caller may perform `action` on the space (or the object of `facts`) in its state: the flags' answer. */
  async canSpace(space: SpaceLike | null | undefined, action: SpaceAction, facts: SpaceFacts = {}): Promise<boolean> {
    if (!this.viewer || !space || space.deletedAt) return false;
    return spaceAllows(await this.spaceRole(space), action, facts, this.viewer.user.id);
  }

  async requireCollection(collection: CollectionLike | null | undefined, action: CollectionAction = 'collection:read'): Promise<Role> {
    this.requireViewer();
    if (!collection) throw notFound('Collection');
    const role = await this.collectionRole(collection);
    if (!role) throw notFound('Collection');
    if (!spaceRoleAllows(role, action, {}, undefined)) throw forbidden(refusalOf(action, {}, undefined, 'collection'));
    return role;
  }
}
