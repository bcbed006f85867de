// The one place that decides access. Every resolver asks this module, and every `permissions`
// object a client sees is computed by the same functions, so the flags can never disagree with
// what the API does. Rules (DESIGN.md "Access"):
//   - org admins are admin on everything in the org;
//   - otherwise a member's role on content is the highest of: grants to the user or one of its
//     teams on the space or an enclosing collection, and the content's defaultLevel (inherited
//     down from collections; when the whole chain is unset, the member's organization role);
//   - guests (org role null) get only explicit grants;
//   - public and unlisted spaces are readable by any authenticated caller.
// Organization-scoped resources (sites, share links, SAML providers, OpenAPI specs, translation
// settings, members, teams) are decided by one table, ORG_ACTIONS: `requireOrg` enforces a row and
// `canOrg` answers the `permissions` flags. Who reads a site's published view, and what a share
// key opens, is decided here too (`siteReader`, `resolveShareKey`); no other module reads a
// membership.
// Not visible → NOT_FOUND; visible but not allowed → FORBIDDEN.
// Loads are batched per request with DataLoader so listing 100 spaces costs a constant number
// of statements.
import DataLoader from 'dataloader';
import type { Db, Tx } from '../db/client.ts';
import { Prisma } from '../generated/prisma/client.ts';
import type { Member, Role, Space, Collection, Site, TeamRole, User } from '../generated/prisma/client.ts';
import { AppError, notFound, forbidden, unauthenticated } from '../lib/errors.ts';
import { atLeast, highestRole } from './roles.ts';
import { assertsSignedClaims, decideReader, requireUnsignedOnly, type SiteReader, type VisitorClaims } from './audience.ts';
import { verifyVisitorToken } from './visitor-tokens.ts';
import { evaluateCondition } from '../lib/conditions.ts';

/** A visitor token's refusal as the caller may read it: expired, not yet valid, or invalid. */
const publicReason = (reason: string) => (reason === 'expired' ? 'expired' : reason.startsWith('claim nbf') ? 'not yet valid' : 'invalid');

/** How a published read names its reader: the REST path's organization, a share key, a visitor token, a preview. */
export type ReaderOptions = {
  organizationId?: string;
  shareKey?: string | null;
  /** A visitor token (argument or `X-Visitor-Token`). */
  visitorToken?: string | null;
  /** The `visitor: { claims }` argument, validated (VisitorInput). */
  visitor?: { claims?: VisitorClaims };
  /** Now, for the visitor token's `exp`/`nbf`. */
  now: Date;
};

/**
 * The caller of a request. `scope` is set for a `published`-scoped token (a front-end renderer's):
 * it reads published content as an outsider (never as a member), of `siteIds` only when not empty.
 */
export type Viewer = { user: User; tokenId: string; scope?: { published: true; siteIds: string[] } };

/**
 * What a caller may do in an organization, and the least organization role each action needs
 * (`null`: any active member, guests included). Non-members and disabled members get NOT_FOUND for
 * every action; members below the role get FORBIDDEN. `requireOrg` enforces a row and `canOrg`
 * computes the `permissions` flags from the same row, so the two never disagree.
 */
export const ORG_ACTIONS = {
  'organization:view': null,
  'organization:admin': 'admin',
  'content:create': 'create',
  'content:transfer': 'admin',
  'site:read': 'read',
  'site:write': 'admin',
  'shareLink:manage': 'admin',
  'samlProvider:read': 'read',
  'samlProvider:write': 'admin',
  'openApiSpec:read': 'read',
  'openApiSpec:write': 'create',
  'translations:read': 'read',
  'translations:write': 'admin',
  'member:read': 'read',
  'member:manage': 'admin',
  'team:read': 'read',
  'integration:read': 'admin',
  'billing:read': 'admin',
  'conversations:ingest': 'admin',
  'auditEvent:read': 'admin',
  'webhook:manage': 'admin',
} as const satisfies Record<string, Role | null>;
export type OrgAction = keyof typeof ORG_ACTIONS;
/** The actions that open a site's settings, structure or share links. */
export type SiteAction = 'site:read' | 'site:write' | 'shareLink:manage';

/** The one test behind requireOrg and canOrg, on an active membership (null: none). */
function orgAllows(m: Member | null, action: OrgAction): boolean {
  if (!m) return false;
  const min = ORG_ACTIONS[action];
  return min === null || atLeast(m.role, min);
}

/**
 * The one rule for another member of the organization: you see yourself, and anyone when you may
 * list members; you change their role, SSO or membership when you may manage members.
 */
function memberRights(me: Member | null, userId: string) {
  return {
    view: me != null && (me.userId === userId || orgAllows(me, 'member:read')),
    admin: orgAllows(me, 'member:manage'),
  };
}

type GateRow = { id: string; organizationId: string; published: boolean; visibility: Site['visibility']; version: string; role: Role | null; disabled: boolean | null; keyValid: boolean | null };

/** The shape check `resolveShareKey` applies before any lookup. */
const plausibleShareKey = (key: string) => typeof key === 'string' && key.startsWith(`${SHARE_KEY_PREFIX}_`) && key.length <= 200;

type SiteReaderRow = Pick<Site, 'id' | 'organizationId' | 'published' | 'visibility'>;

/** Share keys are `newSecret(SHARE_KEY_PREFIX)`: 256 random bits, never derived from anything guessable. */
export const SHARE_KEY_PREFIX = 'shk';

export type ResolvedShareKey = {
  shareLinkId: string;
  siteId: string;
  organizationId: string;
  /** The site's state, so a caller can apply the published-site rules without another read. */
  site: SiteReaderRow;
};

/** See `Access.resolveShareKey`. */
export async function resolveShareKey(prisma: Tx, siteId: string | null, key: string): Promise<ResolvedShareKey | null> {
  if (!plausibleShareKey(key)) return null;
  const link = await prisma.shareLink.findUnique({
    where: { key },
    select: { id: true, active: true, siteId: true, site: { select: { id: true, organizationId: true, published: true, visibility: true } } },
  });
  if (!link || !link.active || (siteId !== null && link.siteId !== siteId)) return null;
  return { shareLinkId: link.id, siteId: link.siteId, organizationId: link.site.organizationId, site: link.site };
}

type SpaceLike = Pick<Space, 'id' | 'organizationId' | 'ancestorIds' | 'visibility' | 'defaultLevel'> & { deletedAt?: Date | null };
type CollectionLike = Pick<Collection, 'id' | 'organizationId' | 'ancestorIds' | 'defaultLevel'>;
type ContentTarget = { id: string; organizationId: string; ancestorIds: string[]; defaultLevel: Role | null };

/** What the access statement learns about one space or collection for the caller. */
type ContentFacts = {
  member: Member | null;
  /** Highest explicit grant to the caller or one of their teams on the target or an enclosing collection. */
  granted: Role | null;
  /** The default level of the nearest enclosing collection that sets one (undefined: none). */
  ancestorDefault: Role | undefined;
};

type AccessRow = {
  members: Array<{ id: string; organizationId: string; userId: string; role: Role | null; disabled: boolean; sso: boolean; joinedAt: number; lastSeenAt: number | null }>;
  teamIds: string[];
  grants: Array<{ t: string; r: Role }>;
  collections: Array<{ id: string; d: Role | null }>;
};

/**
 * The access statement: one SQL for a batch of spaces and collections, answering the caller's
 * memberships in their organizations, their team ids, their grants (directly or through a team) on
 * the targets and every enclosing collection, and the default levels of those collections.
 */
async function loadAccessRow(prisma: Tx, userId: string, orgIds: string[], targetIds: string[], collectionIds: string[]): Promise<AccessRow> {
  const rows = await prisma.$queryRaw<AccessRow[]>(Prisma.sql`
    WITH teams AS (SELECT tm."teamId" FROM "TeamMember" tm WHERE tm."userId" = ${userId})
    SELECT
      (SELECT coalesce(json_agg(json_build_object(
          'id', m.id, 'organizationId', m."organizationId", 'userId', m."userId", 'role', m.role, 'disabled', m.disabled, 'sso', m.sso,
          'joinedAt', floor(extract(epoch FROM m."joinedAt") * 1000), 'lastSeenAt', floor(extract(epoch FROM m."lastSeenAt") * 1000))), '[]'::json)
        FROM "Member" m WHERE m."userId" = ${userId} AND m."organizationId" = ANY(${orgIds}::text[])) AS members,
      (SELECT coalesce(array_agg(teams."teamId"), '{}'::text[]) FROM teams) AS "teamIds",
      (SELECT coalesce(json_agg(json_build_object('t', coalesce(g."spaceId", g."collectionId"), 'r', g.role)), '[]'::json)
        FROM "ContentGrant" g
        WHERE (g."spaceId" = ANY(${targetIds}::text[]) OR g."collectionId" = ANY(${targetIds}::text[]))
          AND (g."userId" = ${userId} OR g."teamId" IN (SELECT teams."teamId" FROM teams))) AS grants,
      (SELECT coalesce(json_agg(json_build_object('id', c.id, 'd', c."defaultLevel")), '[]'::json)
        FROM "Collection" c WHERE c.id = ANY(${collectionIds}::text[])) AS collections
  `);
  return rows[0]!;
}

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
    this.membershipLoader = new DataLoader(async (orgIds) => {
      // A `published`-scoped token is never a member: it reads as an outsider, whatever its user is.
      if (!viewer || viewer.scope) return orgIds.map(() => null);
      const rows = await prisma.member.findMany({ where: { userId: viewer.user.id, organizationId: { in: [...orgIds] } } });
      const byOrg = new Map(rows.map((m) => [m.organizationId, m]));
      return orgIds.map((id) => byOrg.get(id) ?? null);
    });
    this.siteOrgLoader = new DataLoader(async (ids) => {
      const rows = await prisma.site.findMany({ where: { id: { in: [...ids] } }, select: { id: true, organizationId: true } });
      const byId = new Map(rows.map((r) => [r.id, r.organizationId]));
      return ids.map((id) => byId.get(id) ?? null);
    });
    this.shareLinkOrgLoader = new DataLoader(async (ids) => {
      const rows = await prisma.shareLink.findMany({ where: { id: { in: [...ids] } }, select: { id: true, site: { select: { organizationId: true } } } });
      const byId = new Map(rows.map((r) => [r.id, r.site.organizationId]));
      return ids.map((id) => byId.get(id) ?? null);
    });
    // The access statement (loadAccessRow), batched across the spaces and collections of a
    // request: one statement whatever the number of targets and the depth of their collections.
    // It also primes the membership and team caches, so later organization checks cost nothing.
    this.contentLoader = new DataLoader(
      async (targets) => {
        if (!viewer || viewer.scope) return targets.map(() => ({ member: null, granted: null, ancestorDefault: undefined }));
        const orgIds = [...new Set(targets.map((t) => t.organizationId))];
        const collectionIds = [...new Set(targets.flatMap((t) => t.ancestorIds))];
        const targetIds = [...new Set([...targets.map((t) => t.id), ...collectionIds])];
        const row = await loadAccessRow(prisma, viewer.user.id, orgIds, targetIds, collectionIds);
        const members = new Map<string, Member>();
        for (const m of row.members) {
          members.set(m.organizationId, { ...m, joinedAt: new Date(m.joinedAt), lastSeenAt: m.lastSeenAt == null ? null : new Date(m.lastSeenAt) });
        }
        for (const id of orgIds) this.membershipLoader.prime(id, members.get(id) ?? null);
        this.teamIdsPromise ??= Promise.resolve(row.teamIds);
        const best = new Map<string, Role>();
        for (const g of row.grants) best.set(g.t, highestRole(best.get(g.t), g.r)!);
        const defaults = new Map(row.collections.map((c) => [c.id, c.d]));
        return targets.map((t) => {
          let ancestorDefault: Role | undefined;
          for (let i = t.ancestorIds.length - 1; i >= 0 && !ancestorDefault; i--) ancestorDefault = defaults.get(t.ancestorIds[i]!) ?? undefined;
          return {
            member: members.get(t.organizationId) ?? null,
            granted: highestRole(...[t.id, ...t.ancestorIds].map((id) => best.get(id))),
            ancestorDefault,
          };
        });
      },
      { cacheKeyFn: (t) => `${t.id}|${t.ancestorIds.join(',')}` },
    );
  }

  /**
   * The same caller's checks read through `tx`, for checks inside a transaction: they see what
   * the transaction locked and wrote, and use its connection instead of a second one from the
   * pool (db/client.ts). Fresh loaders: nothing cached before the transaction is trusted.
   */
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

  // ------------------------------------------------------------------ organizations

  /** The caller's active membership, or null (not a member, or disabled). */
  private async activeMember(organizationId: string): Promise<Member | null> {
    const m = await this.membership(organizationId);
    return m && !m.disabled ? m : null;
  }

  /**
   * Require that the caller may perform `action` in the organization: NOT_FOUND to non-members
   * (and disabled members), FORBIDDEN below the action's role (ORG_ACTIONS). Returns the membership.
   */
  async requireOrg(organizationId: string, action: OrgAction): Promise<Member> {
    this.requireViewer();
    const m = await this.activeMember(organizationId);
    if (!m) throw notFound('Organization');
    const min = ORG_ACTIONS[action];
    if (min && !atLeast(m.role, min)) throw forbidden(`This requires the ${min} role in the organization`);
    return m;
  }

  /** Whether `requireOrg(organizationId, action)` would pass: the same rule, for `permissions` flags. */
  async canOrg(organizationId: string, action: OrgAction): Promise<boolean> {
    return orgAllows(await this.activeMember(organizationId), action);
  }

  async organizationPermissions(organizationId: string) {
    const m = await this.activeMember(organizationId);
    const can = (action: OrgAction) => orgAllows(m, action);
    return {
      view: can('organization:view'),
      admin: can('organization:admin'),
      ownTeam: can('team:read'),
      createContent: can('content:create'),
      createOpenAPISpec: can('openApiSpec:write'),
      ingestConversations: can('conversations:ingest'),
      viewBilling: can('billing:read'),
      listMembers: can('member:read'),
      listTeams: can('team:read'),
      listIntegrations: can('integration:read'),
    };
  }

  /**
   * The caller's rights on a team, from their organization membership and their role in the team:
   * members with a role see every team, guests the teams they belong to; org admins and the
   * team's owners administer it.
   */
  async teamPermissions(organizationId: string, teamRole: TeamRole | null) {
    const m = await this.activeMember(organizationId);
    return {
      view: m != null && (m.role != null || teamRole != null),
      admin: m != null && (m.role === 'admin' || teamRole === 'owner'),
    };
  }

  /** The caller's rights on the member `userId` (the `Member.permissions` flags). */
  async memberPermissions(organizationId: string, userId: string) {
    return memberRights(await this.activeMember(organizationId), userId);
  }

  /**
   * Require that the caller may read the member `userId` (REST `GET …/members/{userId}`,
   * `member`, `node(id:)`): NOT_FOUND to non-members, FORBIDDEN to guests reading someone else.
   */
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

  /**
   * Require an organization member allowed `action` on the site (NOT_FOUND for a missing site, or
   * one of another organization than `organizationId` when given, the REST path's; then as
   * requireOrg). Used for the site's settings and structure, and for every site write.
   */
  async requireSite(site: Pick<Site, 'organizationId'> | null | undefined, action: SiteAction = 'site:read', organizationId?: string): Promise<void> {
    this.requireViewer();
    if (!site || (organizationId && site.organizationId !== organizationId)) throw notFound('Site');
    await this.requireOrg(site.organizationId, action);
  }

  /**
   * The reader of `site`'s published view (src/auth/audience.ts decides): a member (a preview,
   * published or not), or a reader the site's visibility opens to, with the claims its conditions
   * are evaluated against. NOT_FOUND otherwise (a missing site, another organization's, an invalid
   * share key, a visitor-auth site without a valid visitor token). A caller who is not a member
   * and asserts signed claims gets a 400 naming the claim.
   */
  async siteReader(site: SiteReaderRow | null | undefined, opts: ReaderOptions): Promise<SiteReader> {
    if (!site || (opts.organizationId && site.organizationId !== opts.organizationId)) throw notFound('Site');
    if (!this.scopeOpens(site.id)) throw notFound('Site');
    const shareKey = opts.shareKey ?? null;
    const [keyValid, member, token] = await Promise.all([
      shareKey === null ? null : this.resolveShareKey(site.id, shareKey).then((r) => r !== null),
      this.canOrg(site.organizationId, 'site:read'),
      opts.visitorToken ? verifyVisitorToken(this.prisma, site.id, opts.visitorToken, opts.now) : null,
    ]);
    if (!member) requireUnsignedOnly(opts.visitor);
    const reader = decideReader({
      site,
      member: keyValid === false ? false : member,
      authenticated: this.viewer !== null,
      shareKey,
      keyValid,
      tokenClaims: token?.ok ? token.claims : null,
      requested: opts.visitor,
    });
    if (!reader) {
      // Say why a token failed only in words that reveal nothing of the site's keys.
      if (token && !token.ok && site.visibility === 'visitor_auth') throw notFound('Site', `the visitor token is not valid for it (${publicReason(token.reason)})`);
      throw notFound('Site');
    }
    this.siteReaders.set(site.id, reader);
    return reader;
  }

  /** A `published`-scoped token limited to some sites opens only those; any other caller, every site. */
  private scopeOpens(siteId: string): boolean {
    const sites = this.viewer?.scope?.siteIds;
    return !sites || sites.length === 0 || sites.includes(siteId);
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

  /**
   * The published-structure cache's gate (src/http/published-cache.ts): the site's structure
   * version and the caller's reader, by the same rule as `siteReader`, in one statement (two with
   * a visitor token). Null when the answer is "no", a 400, or unknown: then the request runs
   * uncached and `siteReader` gives the error, so a stored answer only reaches a reader the
   * uncached path would serve the same answer.
   */
  async publishedSiteGate(siteId: string, opts: ReaderOptions): Promise<{ version: string; reader: SiteReader } | null> {
    const shareKey = opts.shareKey ?? null;
    if (shareKey !== null && !plausibleShareKey(shareKey)) return null;
    if (!this.scopeOpens(siteId)) return null;
    const scoped = this.viewer?.scope;
    const userId = this.viewer && !scoped ? this.viewer.user.id : null;
    const rows = await this.prisma.$queryRaw<GateRow[]>(Prisma.sql`
      SELECT s."id", s."organizationId", s."published", s."visibility"::text AS "visibility", v."version"::text AS "version",
             m."role"::text AS "role", m."disabled",
             (SELECT l."active" AND l."siteId" = s."id" FROM "ShareLink" l WHERE l."key" = ${shareKey}) AS "keyValid"
      FROM "Site" s
      JOIN "SiteStructureVersion" v ON v."siteId" = s."id"
      LEFT JOIN "Member" m ON m."organizationId" = s."organizationId" AND m."userId" = ${userId}
      WHERE s."id" = ${siteId}`);
    const row = rows[0];
    if (!row || (opts.organizationId && row.organizationId !== opts.organizationId)) return null;
    const keyValid = shareKey === null ? null : row.keyValid === true;
    if (keyValid === false) return null;
    const member = row.role !== null && !row.disabled && orgAllows({ role: row.role } as Member, 'site:read');
    if (!member && assertsSignedClaims(opts.visitor)) return null;
    const token = opts.visitorToken ? await verifyVisitorToken(this.prisma, siteId, opts.visitorToken, opts.now) : null;
    if (token && !token.ok) return null;
    // Raw rows carry the database's enum spelling (`share-link`): the rule reads the model's.
    const site = { id: row.id, published: row.published, visibility: row.visibility.replace(/-/g, '_') as Site['visibility'] };
    const reader = decideReader({ site, member, authenticated: this.viewer !== null, shareKey, keyValid, tokenClaims: token?.ok ? token.claims : null, requested: opts.visitor });
    return reader ? { version: row.version, reader } : null;
  }

  /** Record that this request was allowed to read the site (node refetches and payload fallbacks need no second check). */
  noteSiteRead(siteId: string) {
    this.readSites.add(siteId);
  }

  /**
   * node(id:) and fallback loads of a site or of its structure: sites this request already read
   * (`noteSiteRead`), else organization members allowed `action`.
   */
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

  /**
   * Resolve a share key: the active share link with this key, of site `siteId` when given (of any
   * site when null, for `GET /v1/spaces/{spaceId}?shareKey`). Null for an unknown, inactive or
   * other-site key. Never cached: a deactivated key fails on the next request.
   */
  resolveShareKey(siteId: string | null, key: string): Promise<ResolvedShareKey | null> {
    return resolveShareKey(this.prisma, siteId, key);
  }

  /**
   * For the spaces area (`GET /v1/spaces/{spaceId}?shareKey`): true when `key` is an active link of
   * a published site that shows this space to its share-link readers — a site space of it (not
   * deleted) whose condition, and its section's, pass without claims (a share key carries none).
   */
  async spaceVisibleWithShareKey(spaceId: string, key: string): Promise<boolean> {
    const resolved = await this.resolveShareKey(null, key);
    if (!resolved || !resolved.site.published) return false;
    const siteSpaces = await this.prisma.siteSpace.findMany({
      where: { siteId: resolved.siteId, spaceId, space: { deletedAt: null } },
      select: { condition: true, section: { select: { condition: true } } },
      take: 100,
    });
    const open = (condition: string | null | undefined) => !condition || evaluateCondition(condition, {});
    return siteSpaces.some((ss) => open(ss.condition) && open(ss.section?.condition));
  }

  // ------------------------------------------------------------------ content

  private async contentRole(target: ContentTarget) {
    if (!this.viewer) return null;
    const { member: m, granted, ancestorDefault } = await this.contentLoader.load(target);
    if (!m || m.disabled) return granted;
    if (m.role === 'admin') return 'admin' as Role;
    if (m.role === null) return granted; // guests: explicit grants only
    // Inherited default level: the content's own, else the nearest enclosing collection's, else the org role.
    const base = target.defaultLevel ?? ancestorDefault ?? m.role;
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
    const [role, orgCreate] = await Promise.all([this.collectionRole(collection), this.canOrg(collection.organizationId, 'content:create')]);
    // Creating inside a collection also needs `create` in the organization (requireContentContainer's
    // caller, createCollection/createSpace), so a guest's or reader's grant alone does not allow it.
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

