// What a caller may do in an organization: the first access table. One row per
// organization-scoped action with the least organization role it needs (`null`: any active member,
// guests included). Non-members and disabled members get NOT_FOUND for every action; members below
// the role get FORBIDDEN. `Access.requireOrg` enforces a row and `Access.canOrg` computes the
// `permissions` flags from the same row (`orgAllows`), so the two never disagree.
import type { Member, Role, TeamRole } from '../generated/prisma/client.ts';
import { atLeast } from './roles.ts';

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

/**
 * The one test behind requireOrg and canOrg, on an active membership (null: none). Also the
 * domain's question about another member ("may this member administer the organization?", for
 * the last-admin rule), so no role is compared outside this folder.
 */
export function orgAllows(m: Pick<Member, 'role'> | null, action: OrgAction): boolean {
  if (!m) return false;
  const min = ORG_ACTIONS[action];
  return min === null || atLeast(m.role, min);
}

/**
 * The one rule for another member of the organization: you see yourself, and anyone when you may
 * list members; you change their role, SSO or membership when you may manage members.
 */
export function memberRights(me: Member | null, userId: string) {
  return {
    view: me != null && (me.userId === userId || orgAllows(me, 'member:read')),
    admin: orgAllows(me, 'member:manage'),
  };
}

/** The `Organization.permissions` flags of an active membership (null: none). */
export function organizationPermissionsFor(m: Member | null) {
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
 * The rights on a team, from an active membership and the role in the team: members with a role
 * see every team, guests the teams they belong to; org admins and the team's owners administer it.
 */
export function teamRights(m: Member | null, teamRole: TeamRole | null) {
  return {
    view: m != null && (m.role != null || teamRole != null),
    admin: m != null && (orgAllows(m, 'organization:admin') || teamRole === 'owner'),
  };
}
