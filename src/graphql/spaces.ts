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
} from '../domain/spaces.ts';
import { notFound } from '../lib/errors.ts';
import { restEnum } from '../rest/router.ts';
import type { Context } from './context.ts';
import { CollectionRef, ContentPositionInput, moveBody } from './collections.ts';

export const ContentVisibilityEnum = builder.enumType('ContentVisibility', {
  values: ['public', 'unlisted', 'share_link', 'visitor_auth', 'in_collection', 'private'] as const,
});
export const EditModeEnum = builder.enumType('EditMode', { values: ['live', 'locked'] as const });

export const SpacePermissions = builder.simpleObject('SpacePermissions', {
  description: 'What the caller may do with the space (computed by the access module that enforces it).',
  fields: (t) => ({
    view: t.boolean(),
    access: t.boolean(),
    admin: t.boolean(),
    viewInviteLinks: t.boolean(),
    edit: t.boolean(),
    triggerGitSync: t.boolean(),
    comment: t.boolean(),
    merge: t.boolean(),
    review: t.boolean(),
  }),
});

const SpaceUrls = builder.simpleObject('SpaceUrls', {
  fields: (t) => ({
    location: t.string(),
    app: t.string(),
    published: t.string({ nullable: true }),
    public: t.string({ nullable: true }),
    icon: t.string({ nullable: true }),
  }),
});

/** Open top-level comments on the space itself (change request comments count on the change request). */
function openCommentCount(ctx: Context, spaceId: string) {
  return loader<string, number>(ctx, 'space.openComments', async (ids) => {
    const rows = await ctx.prisma.comment.groupBy({
      by: ['spaceId'],
      where: { spaceId: { in: [...ids] }, changeRequestId: null, parentId: null, status: 'open' },
      _count: { _all: true },
    });
    return countsByKey(ids, rows.map((r) => ({ key: r.spaceId, count: r._count._all })));
  }).load(spaceId);
}

type CrCounts = { total: number; open: number; draft: number };
function changeRequestCounts(ctx: Context, spaceId: string) {
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
  }).load(spaceId);
}

export const SpaceRef = builder.prismaNode('Space', {
  id: { field: 'id' },
  description: 'A space of content: a page tree with revisions, change requests and comments.',
  // node(id:) finds only spaces the caller may read (never deleted ones).
  findUnique: async (id, ctx) => {
    const space = await loadSpaceById(ctx, id);
    if (!space || space.deletedAt || !(await ctx.access.spaceRole(space))) throw notFound('Space');
    return { id };
  },
  fields: (t) => ({
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
    commentCount: t.int({
      description: 'Open top-level comments on the space itself (REST `comments`); the threads are the `comments` connection.',
      resolve: (s, _a, ctx) => openCommentCount(ctx, s.id),
    }),
    changeRequests: t.int({ resolve: async (s, _a, ctx) => (await changeRequestCounts(ctx, s.id)).total }),
    changeRequestsOpen: t.int({ resolve: async (s, _a, ctx) => (await changeRequestCounts(ctx, s.id)).open }),
    changeRequestsDraft: t.int({ resolve: async (s, _a, ctx) => (await changeRequestCounts(ctx, s.id)).draft }),
    urls: t.field({
      type: SpaceUrls,
      resolve: (s, _a, ctx) => ({
        location: `${ctx.config.publicUrl}/v1/spaces/${s.id}`,
        app: `${ctx.config.appUrl}/s/${s.id}`,
        published: s.visibility !== 'private' ? `${ctx.config.publicUrl}/s/${s.id}` : null,
        public: s.visibility === 'public' ? `${ctx.config.publicUrl}/s/${s.id}` : null,
        icon: s.icon,
      }),
    }),
    permissions: t.field({ type: SpacePermissions, resolve: (s, _a, ctx) => ctx.access.spacePermissions(s) }),
  }),
});

builder.queryField('space', (t) =>
  t.prismaField({
    type: 'Space',
    args: {
      id: t.arg.id({ required: true }),
      shareKey: t.arg.string({ required: false, description: "An active share link's key of a published site that shows this space lets anyone read it." }),
    },
    resolve: async (query, _r, { id, shareKey }, ctx) => {
      const visibleByKey = shareKey ? await ctx.access.spaceVisibleWithShareKey(String(id), shareKey) : false;
      // One read: the row with the selection's relations (all scalars included), then the access
      // check on that row.
      const space = await ctx.prisma.space.findUnique({ ...query, where: { id: String(id) } });
      if (!visibleByKey) await ctx.access.requireSpace(space, 'read');
      else if (!space || space.deletedAt) throw notFound('Space');
      else ctx.access.noteShareKeyRead(space.id);
      return space!;
    },
  }),
);

const CreateSpaceInput = builder.inputType('CreateSpaceInput', {
  fields: (t) => ({
    organizationId: t.id({ required: true }),
    title: t.string(),
    emoji: t.string(),
    visibility: t.field({ type: ContentVisibilityEnum }),
    parent: t.id({ description: 'Parent collection id.' }),
    defaultLevel: t.field({ type: RoleEnum }),
  }),
});

const CreateSpacePayload = builder.simpleObject('CreateSpacePayload', { fields: (t) => ({ space: t.field({ type: SpaceRef }) }) });

builder.mutationField('createSpace', (t) =>
  t.field({
    type: CreateSpacePayload,
    description: 'Create a space (not in the seeds; REST: POST /v1/orgs/{organizationId}/spaces).',
    args: { input: t.arg({ type: CreateSpaceInput, required: true }) },
    resolve: async (_r, { input }, ctx) => {
      const { organizationId, visibility, ...rest } = input;
      const space = await createSpace(ctx, String(organizationId), dropUndefined({ ...rest, visibility: restEnum(visibility ?? undefined) ?? undefined }));
      return { space };
    },
  }),
);

// ------------------------------------------------------------------ update, delete, restore, duplicate, move, transfer

const SpacePayload = builder.simpleObject('SpacePayload', { fields: (t) => ({ space: t.field({ type: SpaceRef }) }) });

const UpdateSpaceInput = builder.inputType('UpdateSpaceInput', {
  description: 'Omitted fields are kept. Setting emoji clears icon and the reverse; null clears either; null defaultLevel inherits.',
  fields: (t) => ({
    id: t.id({ required: true }),
    editMode: t.field({ type: EditModeEnum, description: '`locked` refuses every content edit.' }),
    title: t.string({ description: 'At most 50 characters.' }),
    defaultLevel: t.field({ type: RoleEnum }),
    emoji: t.string(),
    icon: t.string({ description: 'An http(s) URL of an image.' }),
  }),
});

const SpaceIdInput = (name: string) => builder.inputType(name, { fields: (t) => ({ id: t.id({ required: true }) }) });

const MoveSpaceInput = builder.inputType('MoveSpaceInput', {
  fields: (t) => ({
    id: t.id({ required: true }),
    parent: t.id({ description: 'New parent collection; null for the organization root; omitted keeps the parent.' }),
    position: t.field({ type: ContentPositionInput }),
  }),
});

const TransferSpaceInput = builder.inputType('TransferSpaceInput', {
  fields: (t) => ({ id: t.id({ required: true }), organization: t.id({ required: true, description: 'Target organization id.' }) }),
});

builder.mutationFields((t) => ({
  updateSpace: t.field({
    type: SpacePayload,
    args: { input: t.arg({ type: UpdateSpaceInput, required: true }) },
    resolve: async (_r, { input }, ctx) => {
      const { id, ...rest } = input;
      return { space: await updateSpace(ctx, String(id), dropUndefined(rest)) };
    },
  }),
  deleteSpace: t.field({
    type: DeletePayload,
    description: 'Soft delete: restorable for 7 days, then purged.',
    args: { input: t.arg({ type: SpaceIdInput('DeleteSpaceInput'), required: true }) },
    resolve: async (_r, { input }, ctx) => ({ deleted: await deleteSpace(ctx, String(input.id)), deletedId: String(input.id) }),
  }),
  restoreSpace: t.field({
    type: SpacePayload,
    description: 'Restore a space deleted less than 7 days ago.',
    args: { input: t.arg({ type: SpaceIdInput('RestoreSpaceInput'), required: true }) },
    resolve: async (_r, { input }, ctx) => ({ space: await restoreSpace(ctx, String(input.id)) }),
  }),
  duplicateSpace: t.field({
    type: SpacePayload,
    description: 'Copy a space (current content, grants) next to it, titled "<title> (copy)".',
    args: { input: t.arg({ type: SpaceIdInput('DuplicateSpaceInput'), required: true }) },
    resolve: async (_r, { input }, ctx) => ({ space: await duplicateSpace(ctx, String(input.id)) }),
  }),
  moveSpace: t.field({
    type: SpacePayload,
    args: { input: t.arg({ type: MoveSpaceInput, required: true }) },
    resolve: async (_r, { input }, ctx) => ({ space: await moveSpace(ctx, String(input.id), moveBody(input)) }),
  }),
  transferSpace: t.field({
    type: SpacePayload,
    args: { input: t.arg({ type: TransferSpaceInput, required: true }) },
    resolve: async (_r, { input }, ctx) => ({ space: await transferSpace(ctx, String(input.id), { organization: String(input.organization) }) }),
  }),
}));
