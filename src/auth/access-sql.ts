// The statements access is decided from: the access statement (one SQL for a batch of spaces and
// collections) and the published-structure cache's gate. Pure loading: the rules live in
// access.ts and the tables beside it.
import type { Tx } from '../db/client.ts';
import { Prisma } from '../generated/prisma/client.ts';
import type { Member, Role, Site } from '../generated/prisma/client.ts';
import { highestRole } from './roles.ts';

/** The caller's memberships in `orgIds`, in their order (null: not a member). */
export async function loadMemberships(prisma: Tx, userId: string, orgIds: readonly string[]): Promise<Array<Member | null>> {
  const rows = await prisma.member.findMany({ where: { userId, organizationId: { in: [...orgIds] } } });
  const byOrg = new Map(rows.map((m) => [m.organizationId, m]));
  return orgIds.map((id) => byOrg.get(id) ?? null);
}

/** The organization of each site or share link, in the order of `ids` (null: none). */
export async function loadOrganizationsOf(prisma: Tx, kind: 'site' | 'shareLink', ids: readonly string[]): Promise<Array<string | null>> {
  const where = { id: { in: [...ids] } };
  const rows =
    kind === 'site'
      ? await prisma.site.findMany({ where, select: { id: true, organizationId: true } })
      : (await prisma.shareLink.findMany({ where, select: { id: true, site: { select: { organizationId: true } } } })).map((r) => ({ id: r.id, organizationId: r.site.organizationId }));
  const byId = new Map(rows.map((r) => [r.id, r.organizationId]));
  return ids.map((id) => byId.get(id) ?? null);
}

/** A space or collection as the access statement reads it. */
export type ContentTarget = { id: string; organizationId: string; ancestorIds: string[]; defaultLevel: Role | null };

/** What the access statement learns about one space or collection for the caller. */
export type ContentFacts = {
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

/**
 * The facts of a batch of targets for `userId`, from one access statement, with what it learned
 * on the way: the caller's memberships (by organization, null: none) and team ids.
 */
export async function loadContentFacts(prisma: Tx, userId: string, targets: readonly ContentTarget[]) {
  const orgIds = [...new Set(targets.map((t) => t.organizationId))];
  const collectionIds = [...new Set(targets.flatMap((t) => t.ancestorIds))];
  const targetIds = [...new Set([...targets.map((t) => t.id), ...collectionIds])];
  const row = await loadAccessRow(prisma, userId, orgIds, targetIds, collectionIds);
  const members = new Map<string, Member | null>(orgIds.map((id) => [id, null]));
  for (const m of row.members) {
    members.set(m.organizationId, { ...m, joinedAt: new Date(m.joinedAt), lastSeenAt: m.lastSeenAt == null ? null : new Date(m.lastSeenAt) });
  }
  const best = new Map<string, Role>();
  for (const g of row.grants) best.set(g.t, highestRole(best.get(g.t), g.r)!);
  const defaults = new Map(row.collections.map((c) => [c.id, c.d]));
  const facts = targets.map((t): ContentFacts => {
    let ancestorDefault: Role | undefined;
    for (let i = t.ancestorIds.length - 1; i >= 0 && !ancestorDefault; i--) ancestorDefault = defaults.get(t.ancestorIds[i]!) ?? undefined;
    return {
      member: members.get(t.organizationId) ?? null,
      granted: highestRole(...[t.id, ...t.ancestorIds].map((id) => best.get(id))),
      ancestorDefault,
    };
  });
  return { facts, members, teamIds: row.teamIds };
}

/**
 * A member's role on content from its facts: org admins are admin on everything; guests (org role
 * null) and disabled members get only explicit grants; otherwise the highest of the grants and the
 * inherited default level (the content's own, else the nearest enclosing collection's, else the
 * member's organization role).
 */
export function contentRoleOf(target: Pick<ContentTarget, 'defaultLevel'>, { member: m, granted, ancestorDefault }: ContentFacts): Role | null {
  if (!m || m.disabled) return granted;
  if (m.role === 'admin') return 'admin';
  if (m.role === null) return granted;
  return highestRole(granted, target.defaultLevel ?? ancestorDefault ?? m.role);
}

export type GateRow = { id: string; organizationId: string; published: boolean; visibility: Site['visibility']; version: string; role: Role | null; disabled: boolean | null; keyValid: boolean | null };

/** The published-structure cache's gate: the site, its structure version, the caller's membership and the share key's validity, in one statement. */
export async function loadGateRow(prisma: Tx, siteId: string, userId: string | null, shareKey: string | null): Promise<GateRow | undefined> {
  const rows = await prisma.$queryRaw<GateRow[]>(Prisma.sql`
    SELECT s."id", s."organizationId", s."published", s."visibility"::text AS "visibility", v."version"::text AS "version",
           m."role"::text AS "role", m."disabled",
           (SELECT l."active" AND l."siteId" = s."id" FROM "ShareLink" l WHERE l."key" = ${shareKey}) AS "keyValid"
    FROM "Site" s
    JOIN "SiteStructureVersion" v ON v."siteId" = s."id"
    LEFT JOIN "Member" m ON m."organizationId" = s."organizationId" AND m."userId" = ${userId}
    WHERE s."id" = ${siteId}`);
  return rows[0];
}
