// Spaces: the Space node (with counters and permissions), queries and mutations.
import { builder } from './builder.ts';
import { RoleEnum, loader, countsByKey, dropUndefined, DeletePayload, loadSpaceById } from './common.ts';
import {
  createSpace,
  updateSpace,
  deleteSpace,
  restoreSpace,
  duplicateSpace,
  moveSpace,
  transferSpace,
  spaceCountersSql,
  spaceFromRow,
  type SpaceRowWithCounters,
} from '../domain/spaces.ts';
import { notFound } from '../lib/errors.ts';
import type { Context } from './context.ts';
import { Kind, type GraphQLResolveInfo } from 'graphql';
import { Prisma, type Space } from '../generated/prisma/client.ts';
import { CollectionRef, ContentPositionInput, moveBody } from './collections.ts';
import { viewKeyOf, viewOf } from './sites.ts';
import { baseIdOf, viewScopedId } from './view-ids.ts';

export const ContentVisibilityEnum = builder.enumType('ContentVisibility', {
  description: 'Who can read a space or a site without being granted access. REST writes `share_link` as `share-link`, and so on.',
  values: {
    public: { description: 'Anyone, and search engines may index it.' },
    unlisted: { description: 'Anyone with the address; not indexed.' },
    share_link: { description: 'Anyone holding an active share link’s key.' },
    visitor_auth: { description: 'Visitors signed in through the site’s visitor authentication.' },
    in_collection: { description: 'Inherits the visibility of its parent collection.' },
    private: { description: 'Only members granted access.' },
  } as const,
});
export const EditModeEnum = builder.enumType('EditMode', {
  description: 'Whether the content of a space may be edited.',
  values: {
    live: { description: 'Editable (through change requests or directly).' },
    locked: { description: 'Every content edit is refused until unlocked.' },
  } as const,
});

export const SpacePermissions = builder.simpleObject('SpacePermissions', {
  description: 'What the caller may do with the space (computed by the access module that enforces it).',
  fields: (t) => ({
    view: t.boolean({ description: 'Read the content (any role, or a share key).' }),
    access: t.boolean({ description: 'Hold a role on the space (not just a share key).' }),
    admin: t.boolean({ description: 'Admin role: settings, move, delete and restore.' }),
    viewInviteLinks: t.boolean({ description: 'See its invite links (admin role).' }),
    edit: t.boolean({ description: 'Edit role or above: change content and open change requests.' }),
    triggerGitSync: t.boolean({ description: 'Edit role or above: start a Git synchronisation.' }),
    comment: t.boolean({ description: 'Comment role or above: post comments and replies.' }),
    merge: t.boolean({ description: 'Review role or above: merge change requests.' }),
    review: t.boolean({ description: 'Review role or above: review change requests.' }),
  }),
});

const SpaceUrls = builder.simpleObject('SpaceUrls', {
  description: 'Addresses of a space.',
  fields: (t) => ({
    location: t.string({ description: 'Its REST address (GET /v1/spaces/{spaceId}).' }),
    app: t.string({ description: 'Its page in the web app.' }),
    published: t.string({ nullable: true, description: 'Where readers see it; null when private.' }),
    public: t.string({ nullable: true, description: 'Its public address; null unless visibility is `public`.' }),
    icon: t.string({ nullable: true, description: 'URL of its icon image; null when none (or an emoji is used).' }),
  }),
});

/** Open top-level comments on the space itself (change request comments count on the change request). */
function openCommentCount(ctx: Context, spaceId: string) {
  return openCommentsLoader(ctx).load(spaceId);
}
function openCommentsLoader(ctx: Context) {
  return loader<string, number>(ctx, 'space.openComments', async (ids) => {
    const rows = await ctx.prisma.comment.groupBy({
      by: ['spaceId'],
      where: { spaceId: { in: [...ids] }, changeRequestId: null, parentId: null, status: 'open' },
      _count: { _all: true },
    });
    return countsByKey(ids, rows.map((r) => ({ key: r.spaceId, count: r._count._all })));
  });
}

type CrCounts = { total: number; open: number; draft: number };
function changeRequestCounts(ctx: Context, spaceId: string) {
  return crCountsLoader(ctx).load(spaceId);
}
function crCountsLoader(ctx: Context) {
  return loader<string, CrCounts>(ctx, 'space.changeRequestCounts', async (ids) => {
    const rows = await ctx.prisma.changeRequest.groupBy({
      by: ['spaceId', 'status'],
      where: { spaceId: { in: [...ids] } },
      _count: { _all: true },
    });
    const m = new Map<string, CrCounts>();
    for (const r of rows) {
      const c = m.get(r.spaceId) ?? { total: 0, open: 0, draft: 0 };
      c.total += r._count._all;
      if (r.status === 'open') c.open += r._count._all;
      if (r.status === 'draft') c.draft += r._count._all;
      m.set(r.spaceId, c);
    }
    return ids.map((id) => m.get(id) ?? { total: 0, open: 0, draft: 0 });
  });
}

const COUNT_FIELDS = new Set(['commentCount', 'changeRequests', 'changeRequestsOpen', 'changeRequestsDraft']);

/** Whether the field's own selection (fragments aside) names one of the space's counters. */
function wantsCounts(info: GraphQLResolveInfo): boolean {
  return info.fieldNodes.some((f) => f.selectionSet?.selections.some((s) => s.kind === Kind.FIELD && COUNT_FIELDS.has(s.name.value)));
}

/** Whether the Prisma plugin's query for the field loads relations (then the Prisma read is kept). */
function hasRelations(query: { include?: object; select?: object }): boolean {
  return (query.include != null && Object.keys(query.include).length > 0) || query.select != null;
}

/**
 * The space row and its counters in one statement: the same counts as `changeRequestCounts` and
 * `openCommentCount`, which it primes, so the counter fields issue no statement of their own.
 */
async function spaceWithCounts(ctx: Context, id: string): Promise<Space | null> {
  const counters = spaceCountersSql('s');
  const rows = await ctx.prisma.$queryRaw<SpaceRowWithCounters[]>(Prisma.sql`
    SELECT s.*, ${counters.columns} FROM "Space" s ${counters.joins} WHERE s.id = ${id}`);
  if (!rows[0]) return null;
  const { space, counters: read } = spaceFromRow(rows[0]);
  crCountsLoader(ctx).prime(space.id, read!.changeRequests);
  openCommentsLoader(ctx).prime(space.id, read!.openComments);
  return space;
}

export const SpaceRef = builder.prismaNode('Space', {
  // One object, one id: a space reached through a filtered view of a site (`SiteSpace.space`, the
  // row carries the view) shows that view's pages, so it answers `space_…~<view>`; `spaceId` is the space.
  id: {
    description: 'This space as read here: `space_…`, or `space_…~<view>` when reached through a filtered view of a site (a `visitor` preview, a published reader who is not a member), whose pages differ, so client caches keep the views apart. The space itself is `spaceId`.',
    resolve: (s) => viewScopedId(s.id, viewKeyOf(viewOf(s))),
  },
  description: 'A space of content: a page tree with revisions, change requests and comments.',
  // node(id:) finds only spaces the caller may read (never deleted ones); a view-scoped id names the space.
  findUnique: async (raw, ctx) => {
    const id = baseIdOf(raw);
    const space = await loadSpaceById(ctx, id);
    if (!space || space.deletedAt || !(await ctx.access.spaceRole(space))) throw notFound('Space');
    return { id };
  },
  fields: (t) => ({
    spaceId: t.exposeString('id', { description: 'The space id (`space_…`), the same wherever it is read: what REST and the `spaceId` arguments take.' }),
    title: t.exposeString('title'),
    emoji: t.exposeString('emoji', { nullable: true }),
    icon: t.exposeString('icon', { nullable: true }),
    visibility: t.expose('visibility', { type: ContentVisibilityEnum }),
    editMode: t.expose('editMode', { type: EditModeEnum }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
    deletedAt: t.expose('deletedAt', { type: 'DateTime', nullable: true }),
    organizationId: t.exposeString('organizationId', { description: 'Id of the owning organization.' }),
    organization: t.relation('organization'),
    parentId: t.exposeString('parentId', { nullable: true, description: 'Id of the parent collection.' }),
    parent: t.field({
      type: CollectionRef,
      nullable: true,
      description: 'The parent collection, when you may see it.',
      select: { parent: true },
      resolve: async (s, _a, ctx) => (s.parent && (await ctx.access.collectionRole(s.parent)) ? s.parent : null),
    }),
    position: t.exposeInt('position', { description: 'Index among the siblings (collections and spaces of the same parent).' }),
    revisionId: t.string({ description: 'Id of the current revision.', resolve: (s) => s.revisionId ?? '' }),
    defaultLevel: t.expose('defaultLevel', { type: RoleEnum, nullable: true }),
    // Counters of what only a role opens: null for a caller without one (a published reader, a share key).
    commentCount: t.int({
      nullable: true,
      description: 'Open top-level comments on the space itself (REST `comments`); the threads are the `comments` connection. Null without a role on the space.',
      resolve: async (s, _a, ctx) => ((await ctx.access.spaceRole(s)) ? openCommentCount(ctx, s.id) : null),
    }),
    changeRequests: t.int({ nullable: true, description: 'Change requests of the space, in any status. Null without a role on the space.', resolve: async (s, _a, ctx) => ((await ctx.access.spaceRole(s)) ? (await changeRequestCounts(ctx, s.id)).total : null) }),
    changeRequestsOpen: t.int({ nullable: true, description: 'Change requests with status `open`. Null without a role on the space.', resolve: async (s, _a, ctx) => ((await ctx.access.spaceRole(s)) ? (await changeRequestCounts(ctx, s.id)).open : null) }),
    changeRequestsDraft: t.int({ nullable: true, description: 'Change requests with status `draft`. Null without a role on the space.', resolve: async (s, _a, ctx) => ((await ctx.access.spaceRole(s)) ? (await changeRequestCounts(ctx, s.id)).draft : null) }),
    urls: t.field({
      type: SpaceUrls,
      description: 'REST, app and published addresses.',
      resolve: (s, _a, ctx) => ({
        location: `${ctx.config.publicUrl}/v1/spaces/${s.id}`,
        app: `${ctx.config.appUrl}/s/${s.id}`,
        published: s.visibility !== 'private' ? `${ctx.config.publicUrl}/s/${s.id}` : null,
        public: s.visibility === 'public' ? `${ctx.config.publicUrl}/s/${s.id}` : null,
        icon: s.icon,
      }),
    }),
    permissions: t.field({ type: SpacePermissions, description: 'What you may do with the space.', resolve: (s, _a, ctx) => ctx.access.spacePermissions(s) }),
  }),
});

builder.queryField('space', (t) =>
  t.prismaField({
    type: 'Space',
    nullable: true,
    description: 'A space you may read, or one readable with `shareKey` (NOT_FOUND otherwise; deleted spaces are not found). REST: GET /v1/spaces/{spaceId}.',
    args: {
      id: t.arg.id({ required: true, description: 'Space id (`space_…`).' }),
      shareKey: t.arg.string({ required: false, description: "An active share link's key of a published site that shows this space lets anyone read it." }),
    },
    resolve: async (query, _r, { id, shareKey }, ctx, info) => {
      const visibleByKey = shareKey ? await ctx.access.spaceVisibleWithShareKey(String(id), shareKey) : false;
      // One read: the row with the selection's relations (all scalars included), then the access
      // check on that row. When the selection asks for counters and no relation, the row and its
      // counters come from one statement (spaceWithCounts) instead of three.
      const space = wantsCounts(info) && !hasRelations(query) ? await spaceWithCounts(ctx, String(id)) : await ctx.prisma.space.findUnique({ ...query, where: { id: String(id) } });
      if (!visibleByKey) await ctx.access.requireSpace(space, 'space:read');
      else if (!space || space.deletedAt) throw notFound('Space');
      else ctx.access.noteShareKeyRead(space.id);
      return space!;
    },
  }),
);

const CreateSpaceInput = builder.inputType('CreateSpaceInput', {
  description: 'The space to create.',
  fields: (t) => ({
    organizationId: t.id({ required: true, description: 'Organization (`org_…`).' }),
    title: t.string({ description: 'At most 50 characters; default `Untitled`.' }),
    emoji: t.string({ description: 'An emoji, or its code point(s) in hex (`1f389`).' }),
    visibility: t.field({ type: ContentVisibilityEnum, description: 'Default `private`; `in_collection` needs `parent`.' }),
    parent: t.id({ description: 'Parent collection id (`col_…`); omitted creates it at the organization root.' }),
    defaultLevel: t.field({ type: RoleEnum, description: 'Role every organization member gets on it; omitted inherits.' }),
  }),
});

const CreateSpacePayload = builder.simpleObject('CreateSpacePayload', {
  description: 'Result of createSpace.',
  fields: (t) => ({ space: t.field({ type: SpaceRef, description: 'The new space.' }) }),
});

builder.mutationField('createSpace', (t) =>
  t.field({
    type: CreateSpacePayload,
    description: 'Create an empty space (create role in the organization, and on the parent collection when given). REST: POST /v1/orgs/{organizationId}/spaces (201).',
    args: { input: t.arg({ type: CreateSpaceInput, required: true, description: 'The space to create.' }) },
    resolve: async (_r, { input }, ctx) => {
      const { organizationId, visibility, ...rest } = input;
      const space = await createSpace(ctx, String(organizationId), dropUndefined({ ...rest, visibility: visibility ?? undefined }));
      return { space };
    },
  }),
);

// ------------------------------------------------------------------ update, delete, restore, duplicate, move, transfer

const SpacePayload = builder.simpleObject('SpacePayload', {
  description: 'Result of a space mutation.',
  fields: (t) => ({ space: t.field({ type: SpaceRef, description: 'The space after the change.' }) }),
});

const UpdateSpaceInput = builder.inputType('UpdateSpaceInput', {
  description: 'Omitted fields are kept. Setting emoji clears icon and the reverse; null clears either; null defaultLevel inherits.',
  fields: (t) => ({
    id: t.id({ required: true, description: 'Space to update (`space_…`).' }),
    editMode: t.field({ type: EditModeEnum, description: '`locked` refuses every content edit.' }),
    title: t.string({ description: 'At most 50 characters.' }),
    defaultLevel: t.field({ type: RoleEnum, description: 'Role every organization member gets on it; null inherits.' }),
    emoji: t.string({ description: 'An emoji or its code point(s) in hex; clears icon; null clears it.' }),
    icon: t.string({ description: 'An http(s) URL of an image.' }),
  }),
});

const SpaceIdInput = (name: string) =>
  builder.inputType(name, {
    description: 'Names one space.',
    fields: (t) => ({ id: t.id({ required: true, description: 'Space id (`space_…`).' }) }),
  });

const MoveSpaceInput = builder.inputType('MoveSpaceInput', {
  description: 'The space and where to put it.',
  fields: (t) => ({
    id: t.id({ required: true, description: 'Space to move (`space_…`).' }),
    parent: t.id({ description: 'New parent collection; null for the organization root; omitted keeps the parent.' }),
    position: t.field({ type: ContentPositionInput, description: 'Where among its new siblings; omitted puts it at the end.' }),
  }),
});

const TransferSpaceInput = builder.inputType('TransferSpaceInput', {
  description: 'The space and the organization to transfer it to.',
  fields: (t) => ({
    id: t.id({ required: true, description: 'Space to transfer (`space_…`).' }),
    organization: t.id({ required: true, description: 'Target organization id (`org_…`); it lands at that organization’s root.' }),
  }),
});

builder.mutationFields((t) => ({
  updateSpace: t.field({
    type: SpacePayload,
    description: 'Change a space’s title, icon or emoji, edit mode or default level (admin role on the space). REST: PATCH /v1/spaces/{spaceId}.',
    args: { input: t.arg({ type: UpdateSpaceInput, required: true, description: 'The space and what to change.' }) },
    resolve: async (_r, { input }, ctx, info) => {
      const { id, ...rest } = input;
      // The answer's counters come with the write (one statement); the loaders are primed with them.
      const withCounters = info.fieldNodes.some((f) =>
        f.selectionSet?.selections.some((s) => s.kind === Kind.FIELD && s.name.value === 'space' && wantsCounts({ fieldNodes: [s] } as unknown as GraphQLResolveInfo)),
      );
      const { counters, ...space } = await updateSpace(ctx, String(id), dropUndefined(rest), { withCounters });
      if (counters) {
        crCountsLoader(ctx).prime(space.id, counters.changeRequests);
        openCommentsLoader(ctx).prime(space.id, counters.openComments);
      }
      return { space };
    },
  }),
  deleteSpace: t.field({
    type: DeletePayload,
    description: 'Soft-delete a space: restorable for 7 days, then purged (admin role on the space). Idempotent (deleted: false when already deleted). REST: DELETE /v1/spaces/{spaceId}.',
    args: { input: t.arg({ type: SpaceIdInput('DeleteSpaceInput'), required: true, description: 'The space to delete.' }) },
    resolve: async (_r, { input }, ctx) => ({ deleted: await deleteSpace(ctx, String(input.id)), deletedId: String(input.id) }),
  }),
  restoreSpace: t.field({
    type: SpacePayload,
    description: 'Restore a space deleted less than 7 days ago (admin role on the space). REST: POST /v1/spaces/{spaceId}/restore.',
    args: { input: t.arg({ type: SpaceIdInput('RestoreSpaceInput'), required: true, description: 'The deleted space.' }) },
    resolve: async (_r, { input }, ctx) => ({ space: await restoreSpace(ctx, String(input.id)) }),
  }),
  duplicateSpace: t.field({
    type: SpacePayload,
    description: 'Copy a space (current content, grants) next to it, titled "<title> (copy)" (read role on it, create on its container). REST: POST /v1/spaces/{spaceId}/duplicate.',
    args: { input: t.arg({ type: SpaceIdInput('DuplicateSpaceInput'), required: true, description: 'The space to copy.' }) },
    resolve: async (_r, { input }, ctx) => ({ space: await duplicateSpace(ctx, String(input.id)) }),
  }),
  moveSpace: t.field({
    type: SpacePayload,
    description: 'Move a space to another collection and/or position in the same organization (admin role on it, create on the new parent). REST: POST /v1/spaces/{spaceId}/move.',
    args: { input: t.arg({ type: MoveSpaceInput, required: true, description: 'The space and where to put it.' }) },
    resolve: async (_r, { input }, ctx) => ({ space: await moveSpace(ctx, String(input.id), moveBody(input)) }),
  }),
  transferSpace: t.field({
    type: SpacePayload,
    description: 'Move a space to another organization’s root (admin of both organizations). REST: POST /v1/spaces/{spaceId}/transfer.',
    args: { input: t.arg({ type: TransferSpaceInput, required: true, description: 'The space and the target organization.' }) },
    resolve: async (_r, { input }, ctx) => ({ space: await transferSpace(ctx, String(input.id), { organization: String(input.organization) }) }),
  }),
}));
