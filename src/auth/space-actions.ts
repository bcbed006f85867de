// What a caller may do with the content of a space (and of a collection): the second access
// table, beside the organization's (org-actions.ts). One row per content action, with the least
// role on the space it needs and, where the object decides too, the object's facts as params
// (its author, its state), the way Hive's `canPerformAction({ action, params })` reads.
//
// `Access.requireSpace(space, action, facts)` enforces a row (NOT_FOUND without a role,
// FORBIDDEN below it) and `Access.canSpace(space, action, facts)` answers the `permissions`
// flags; both call `spaceRoleAllows`, so a flag cannot disagree with the operation. A row's
// `state` names object states in which the action is impossible whatever the role (a merged
// change request, a locked space): the domain refuses them with a 409 under its row lock, and
// the flag is false.
import type { ChangeRequestStatus, EditMode, Role } from '../generated/prisma/enums.ts';
import { atLeast } from './roles.ts';

/** The object an action is on: facts the domain passes, never read by this module itself. */
export type SpaceFacts = {
  /** The author of the comment, reply or change request the action is on. */
  authorId?: string;
  /** The comment is a reply (which has no status of its own). */
  reply?: boolean;
  /** The change request's status. */
  changeRequestStatus?: ChangeRequestStatus;
  /** The space's edit mode. */
  editMode?: EditMode;
};

type SpaceActionRule = {
  /** The least role on the space. */
  role: Role;
  /** The object's own author may with this (lower) role. */
  author?: Role;
  /** States of the object in which the action is possible (else a 409 from the domain; the flag is false). */
  state?: (f: SpaceFacts) => boolean;
  /** The FORBIDDEN message (default: the role it needs). */
  refusal?: string;
};

const changeRequestOpen = (f: SpaceFacts) => f.changeRequestStatus !== 'merged';
const changeRequestWritable = (f: SpaceFacts) => f.changeRequestStatus !== 'merged' && f.changeRequestStatus !== 'archived' && f.editMode !== 'locked';

export const SPACE_ACTIONS = {
  'space:read': { role: 'read' },
  'space:admin': { role: 'admin' },
  'space:viewInviteLinks': { role: 'admin' },
  /** Edit the space's content directly, import into it, start a Git sync. */
  'space:editContent': { role: 'edit' },
  'space:triggerGitSync': { role: 'edit' },
  /** Post a comment, or reply to one. */
  'comment:post': { role: 'comment', refusal: 'Commenting needs the comment role on this space' },
  'comment:react': { role: 'comment', refusal: 'Reacting needs the comment role' },
  /** Resolve or reopen a thread (a reply has no status). */
  'comment:resolve': { role: 'edit', author: 'read', state: (f) => !f.reply, refusal: 'Resolving needs the author or the edit role' },
  /** Edit a comment's body: the author's own, any with `admin`. */
  'comment:edit': { role: 'admin', author: 'read', refusal: 'Only the author can edit this comment' },
  'comment:delete': { role: 'admin', author: 'read', refusal: 'Only the author can delete this comment' },
  'changeRequest:create': { role: 'edit' },
  /** Change its subject and status (close, reopen, mark draft): the author's own, any with `edit`. */
  'changeRequest:edit': { role: 'edit', author: 'read', state: changeRequestOpen, refusal: 'Only the author or an editor of the space can change a change request' },
  /** Author its content, update it from main. */
  'changeRequest:editContent': { role: 'edit', state: changeRequestWritable },
  'changeRequest:exportPdf': { role: 'edit', refusal: 'Exporting a PDF requires the edit role on the space' },
  'changeRequest:review': { role: 'review' },
  'changeRequest:merge': { role: 'review', state: changeRequestWritable },
  'collection:read': { role: 'read' },
  'collection:admin': { role: 'admin' },
  'collection:viewInviteLinks': { role: 'admin' },
  /** Create spaces and collections inside it (with `content:create` in the organization too). */
  'collection:create': { role: 'create' },
} as const satisfies Record<string, SpaceActionRule>;
export type SpaceAction = keyof typeof SPACE_ACTIONS;
export type CollectionAction = Extract<SpaceAction, `collection:${string}`>;

const rule = (action: SpaceAction): SpaceActionRule => SPACE_ACTIONS[action];

/** The least role `action` needs of this caller on this object (the author's own role where the row has one). */
export function leastRole(action: SpaceAction, facts: SpaceFacts, viewerId: string | undefined): Role {
  const r = rule(action);
  const own = r.author !== undefined && viewerId !== undefined && facts.authorId === viewerId;
  return own ? r.author! : r.role;
}

/** The one test behind requireSpace and canSpace: the caller's role (null: none) allows `action` on the object. */
export function spaceRoleAllows(role: Role | null, action: SpaceAction, facts: SpaceFacts, viewerId: string | undefined): boolean {
  return atLeast(role, leastRole(action, facts, viewerId));
}

/** The object's state allows `action` (rows without `state`: always). */
export function spaceStateAllows(action: SpaceAction, facts: SpaceFacts): boolean {
  const state = rule(action).state;
  return !state || state(facts);
}

/** The FORBIDDEN message of a refused `action`. */
export function refusalOf(action: SpaceAction, facts: SpaceFacts, viewerId: string | undefined, object = 'space'): string {
  return rule(action).refusal ?? `This requires the ${leastRole(action, facts, viewerId)} role on the ${object}`;
}

/** `canSpace` for a caller whose role is known: the role test and the object's state. */
export function spaceAllows(role: Role | null, action: SpaceAction, facts: SpaceFacts, viewerId: string | undefined): boolean {
  return spaceRoleAllows(role, action, facts, viewerId) && spaceStateAllows(action, facts);
}

// ------------------------------------------------------------------ the permission flags, from the table

export function spacePermissionsFor(role: Role | null) {
  const can = (action: SpaceAction) => spaceAllows(role, action, {}, undefined);
  return {
    view: can('space:read'),
    access: can('space:read'),
    admin: can('space:admin'),
    viewInviteLinks: can('space:viewInviteLinks'),
    edit: can('space:editContent'),
    triggerGitSync: can('space:triggerGitSync'),
    comment: can('comment:post'),
    merge: can('changeRequest:merge'),
    review: can('changeRequest:review'),
  };
}

/** The flags of a comment or reply for a caller with `role` on its space. */
export function commentPermissionsFor(role: Role | null, comment: { authorId: string; parentId: string | null }, viewerId: string | undefined) {
  const facts = { authorId: comment.authorId, reply: comment.parentId !== null };
  const can = (action: SpaceAction) => spaceAllows(role, action, facts, viewerId);
  return {
    view: can('space:read'),
    edit: can('comment:edit'),
    delete: can('comment:delete'),
    reply: can('comment:post'),
    // `react` is required by the OpenAPI document's permissions without being declared.
    react: can('comment:react'),
    resolve: can('comment:resolve'),
  };
}

/** The flags of a change request for a caller with `role` on its space (`editMode` of the space). */
export function changeRequestPermissionsFor(role: Role | null, cr: { createdById: string; status: ChangeRequestStatus }, editMode: EditMode, viewerId: string | undefined) {
  const facts: SpaceFacts = { authorId: cr.createdById, changeRequestStatus: cr.status, editMode };
  const can = (action: SpaceAction) => spaceAllows(role, action, facts, viewerId);
  return {
    view: can('space:read'),
    comment: can('comment:post'),
    edit: can('changeRequest:edit'),
    editContent: can('changeRequest:editContent'),
    review: can('changeRequest:review'),
    merge: can('changeRequest:merge'),
  };
}
