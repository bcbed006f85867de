// Collections: the Collection node (with its spaces and sub-collections), the organization's
// collection and space listings, the collection mutations, and the move/transfer inputs shared
// with spaces.
import { keysetConnection, type KeysetPage } from './cursors.ts';
import { builder } from './builder.ts';
import { visibleCollectionsWhere, visibleSpacesWhere } from '../auth/access.ts';
import { RoleEnum, DeletePayload, dropUndefined, loader, countsByKey } from './common.ts';
import type { Context } from './context.ts';
import type { Collection } from '../generated/prisma/client.ts';
import { notFound } from '../lib/errors.ts';
import {
  createCollection,
  deleteCollection,
  moveCollection,
  transferCollection,
  updateCollection,
} from '../domain/collections.ts';

const CollectionPermissions = builder.simpleObject('CollectionPermissions', {
  description: 'What the caller may do with the collection (computed by the access module that enforces it).',
  fields: (t) => ({
    view: t.boolean({ description: 'See the collection (any role on it).' }),
    admin: t.boolean({ description: 'Edit, move, transfer and delete the collection.' }),
    viewInviteLinks: t.boolean({ description: 'See its invite links (admin role on it).' }),
    create: t.boolean({ description: 'Create spaces and collections inside it.' }),
  }),
});

const CollectionUrls = builder.simpleObject('CollectionUrls', {
  description: 'Addresses of a collection.',
  fields: (t) => ({
    location: t.string({ description: 'Its REST address (GET /v1/collections/{collectionId}).' }),
    app: t.string({ description: 'Its page in the web app.' }),
  }),
});

// ------------------------------------------------------------------ children, batched

type ChildKind = 'spaces' | 'collections';
const CHILD_ORDER = [{ position: 'asc' as const }, { id: 'asc' as const }];

/**
 * A page of a collection's visible children for its connection. Every collection of the request
 * that asks with the same page arguments is answered by one statement: Prisma reads each
 * parent's page through the relation (a lateral join per parent), so a list of collections with
 * their spaces costs the same at 2 collections as at 200.
 */
function childPage(ctx: Context, kind: ChildKind, parent: Collection, page: KeysetPage): Promise<never[]> {
  const relation = kind === 'spaces' ? 'spaces' : 'children';
  // Validates the cursor before the batch, so a bad one fails this field alone.
  page.prisma({ orderBy: CHILD_ORDER });
  const key = JSON.stringify([page.selection, page.args.first, page.args.last, page.args.after, page.args.before]);
  return loader<string, never[]>(ctx, `collection.${kind}:${parent.organizationId}:${key}`, async (ids) => {
    const where = kind === 'spaces' ? await visibleSpacesWhere(ctx, parent.organizationId) : await visibleCollectionsWhere(ctx, parent.organizationId);
    const rows = (await ctx.prisma.collection.findMany({
      where: { id: { in: [...ids] } },
      select: { id: true, [relation]: page.prisma({ where, orderBy: CHILD_ORDER }) },
    })) as unknown as Array<{ id: string } & Record<string, never[]>>;
    const byParent = new Map(rows.map((r) => [r.id, r[relation]]));
    return ids.map((id) => byParent.get(id) ?? []);
  }).load(parent.id);
}

/** How many visible children a collection has (one grouped statement per request tick). */
function childCount(ctx: Context, kind: ChildKind, parent: Collection): Promise<number> {
  return loader<string, number>(ctx, `collection.${kind}.count:${parent.organizationId}`, async (ids) => {
    const inParents = { parentId: { in: [...ids] } };
    const rows =
      kind === 'spaces'
        ? await ctx.prisma.space.groupBy({ by: ['parentId'], where: await visibleSpacesWhere(ctx, parent.organizationId, inParents), _count: { _all: true } })
        : await ctx.prisma.collection.groupBy({ by: ['parentId'], where: await visibleCollectionsWhere(ctx, parent.organizationId, inParents), _count: { _all: true } });
    return countsByKey(ids, rows.map((r) => ({ key: r.parentId!, count: r._count._all })));
  }).load(parent.id);
}

async function loadVisibleCollection(ctx: Context, id: string): Promise<Collection | null> {
  const c = await ctx.prisma.collection.findUnique({ where: { id } });
  return c && (await ctx.access.collectionRole(c)) ? c : null;
}

export const CollectionRef = builder.prismaNode('Collection', {
  id: { field: 'id' },
  description: 'A folder of spaces and collections in an organization.',
  // node(id:) finds only collections the caller may see.
  findUnique: async (id, ctx) => {
    if (!(await loadVisibleCollection(ctx, id))) throw notFound('Collection');
    return { id };
  },
  fields: (t) => ({
    title: t.exposeString('title'),
    description: t.exposeString('description', { nullable: true }),
    organizationId: t.exposeString('organizationId', { description: 'Id of the owning organization.' }),
    organization: t.relation('organization'),
    parentId: t.exposeString('parentId', { nullable: true, description: 'Id of the parent collection.' }),
    defaultLevel: t.expose('defaultLevel', { type: RoleEnum, nullable: true, description: 'null: inherited.' }),
    position: t.exposeInt('position', { description: 'Index among the siblings (collections and spaces of the same parent).' }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
    urls: t.field({
      type: CollectionUrls,
      description: 'REST and app addresses.',
      resolve: (c, _a, ctx) => ({ location: `${ctx.config.publicUrl}/v1/collections/${c.id}`, app: `${ctx.config.appUrl}/c/${c.id}` }),
    }),
    permissions: t.field({ type: CollectionPermissions, description: 'What you may do with the collection.', resolve: (c, _a, ctx) => ctx.access.collectionPermissions(c) }),
    spaces: keysetConnection(t, {
      type: 'Space',
      list: 'Collection.spaces',
      description: 'Spaces directly inside the collection that you may read, in order. REST: GET /v1/collections/{collectionId}/spaces.',
      resolve: (page, c, _a, ctx) => childPage(ctx, 'spaces', c, page),
      totalCount: (c, _a, ctx) => childCount(ctx, 'spaces', c),
    }),
    collections: keysetConnection(t, {
      type: 'Collection',
      list: 'Collection.collections',
      description: 'Collections directly inside the collection that you may see, in order.',
      resolve: (page, c, _a, ctx) => childPage(ctx, 'collections', c, page),
      totalCount: (c, _a, ctx) => childCount(ctx, 'collections', c),
    }),
  }),
});

builder.prismaObjectField(CollectionRef, 'parent', (t) =>
  t.field({
    type: CollectionRef,
    nullable: true,
    description: 'The parent collection, when you may see it.',
    select: { parent: true },
    resolve: async (c, _a, ctx) => (c.parent && (await ctx.access.collectionRole(c.parent)) ? c.parent : null),
  }),
);

// ------------------------------------------------------------------ organization listings

builder.prismaObjectField('Organization', 'collections', (t) =>
  keysetConnection(t, {
    type: 'Collection',
    list: 'Organization.collections',
    description: 'Collections you may see; `nested: false` lists the top level only (oldest first). REST: GET /v1/orgs/{organizationId}/collections.',
    args: { nested: t.arg.boolean({ defaultValue: true, description: 'Include collections nested in other collections (default true).' }) },
    resolve: async (page, org, args, ctx) =>
      ctx.prisma.collection.findMany(
        page.prisma({
          where: await visibleCollectionsWhere(ctx, org.id, args.nested === false ? { parentId: null } : {}),
          orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
        }) as never,
      ),
    totalCount: async (org, args, ctx) =>
      ctx.prisma.collection.count({ where: await visibleCollectionsWhere(ctx, org.id, args.nested === false ? { parentId: null } : {}) }),
  }),
);

builder.prismaObjectField('Organization', 'spaces', (t) =>
  keysetConnection(t, {
    type: 'Space',
    list: 'Organization.spaces',
    description: 'Spaces you may read (deleted ones excluded), oldest first. REST: GET /v1/orgs/{organizationId}/spaces.',
    resolve: async (page, org, _a, ctx) =>
      ctx.prisma.space.findMany(page.prisma({ where: await visibleSpacesWhere(ctx, org.id), orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] }) as never),
    totalCount: async (org, _a, ctx) => ctx.prisma.space.count({ where: await visibleSpacesWhere(ctx, org.id) }),
  }),
);

builder.queryField('collection', (t) =>
  t.prismaField({
    type: 'Collection',
    nullable: true,
    description: 'A collection you may see (NOT_FOUND otherwise). REST: GET /v1/collections/{collectionId}.',
    args: { id: t.arg.id({ required: true, description: 'Collection id (`col_…`).' }) },
    resolve: async (query, _r, { id }, ctx) => {
      // One read: the row with the selection's relations, then the access check on it.
      const collection = await ctx.prisma.collection.findUnique({ ...query, where: { id: String(id) } });
      await ctx.access.requireCollection(collection, 'collection:read');
      return collection!;
    },
  }),
);

// ------------------------------------------------------------------ move and transfer inputs (shared with spaces)

export const ContentPointerTypeEnum = builder.enumType('ContentPointerType', {
  description: 'Kind of item a content pointer names.',
  values: {
    space: { description: 'A space; set `space` to its id.' },
    collection: { description: 'A collection; set `collection` to its id.' },
  } as const,
});

const ContentPointerInput = builder.inputType('ContentPointerInput', {
  description: 'A sibling to position against: `{type: space, space: <id>}` or `{type: collection, collection: <id>}`.',
  fields: (t) => ({
    type: t.field({ type: ContentPointerTypeEnum, required: true, description: 'Whether the sibling is a space or a collection.' }),
    space: t.id({ description: 'The sibling space (`space_…`) when type is `space`.' }),
    collection: t.id({ description: 'The sibling collection (`col_…`) when type is `collection`.' }),
  }),
});

export const ContentPositionInput = builder.inputType('ContentPositionInput', {
  description: 'Where to put the item among its new siblings; by default at the end.',
  fields: (t) => ({
    before: t.field({ type: ContentPointerInput, description: 'Put the item just before this sibling.' }),
    after: t.field({ type: ContentPointerInput, description: 'Put the item just after this sibling.' }),
  }),
});

type PointerArg = { type: 'space' | 'collection'; space?: string | number | null; collection?: string | number | null } | null | undefined;
type PositionArg = { before?: PointerArg; after?: PointerArg } | null | undefined;

/** GraphQL move input → the domain's move body (absent fields stay absent, `parent: null` is the root). */
export function moveBody(input: { parent?: string | number | null; position?: PositionArg }) {
  const pointer = (p: PointerArg) => (p ? dropUndefined({ type: p.type, space: p.space ?? undefined, collection: p.collection ?? undefined }) : undefined);
  const position = input.position ? dropUndefined({ before: pointer(input.position.before), after: pointer(input.position.after) }) : undefined;
  return dropUndefined({ parent: input.parent === undefined ? undefined : input.parent === null ? null : String(input.parent), position });
}

// ------------------------------------------------------------------ mutations

const CollectionPayload = builder.simpleObject('CollectionPayload', {
  description: 'Result of a collection mutation.',
  fields: (t) => ({ collection: t.field({ type: CollectionRef, description: 'The collection after the change.' }) }),
});

const CreateCollectionInput = builder.inputType('CreateCollectionInput', {
  description: 'The collection to create.',
  fields: (t) => ({
    organizationId: t.id({ required: true, description: 'Organization (`org_…`).' }),
    title: t.string({ description: 'At most 50 characters; default `Untitled`.' }),
    parent: t.id({ description: 'Parent collection id (`col_…`); omitted creates it at the organization root.' }),
  }),
});

const UpdateCollectionInput = builder.inputType('UpdateCollectionInput', {
  description: 'Omitted fields are kept; null clears description and makes defaultLevel inherited.',
  fields: (t) => ({
    id: t.id({ required: true, description: 'Collection to update (`col_…`).' }),
    title: t.string({ description: 'New title; empty becomes `Untitled`.' }),
    description: t.string({ description: 'New description; null or empty clears it.' }),
    defaultLevel: t.field({ type: RoleEnum, description: 'Role every organization member gets on its content; null inherits from the parent.' }),
  }),
});

const MoveCollectionInput = builder.inputType('MoveCollectionInput', {
  description: 'The collection and where to put it.',
  fields: (t) => ({
    id: t.id({ required: true, description: 'Collection to move (`col_…`).' }),
    parent: t.id({ description: 'New parent collection; null for the organization root; omitted keeps the parent.' }),
    position: t.field({ type: ContentPositionInput, description: 'Where among its new siblings; omitted puts it at the end.' }),
  }),
});

const TransferCollectionInput = builder.inputType('TransferCollectionInput', {
  description: 'The collection and the organization to transfer it to.',
  fields: (t) => ({
    id: t.id({ required: true, description: 'Collection to transfer (`col_…`).' }),
    organization: t.id({ required: true, description: 'Target organization id (`org_…`); it lands at that organization’s root.' }),
  }),
});

builder.mutationFields((t) => ({
  createCollection: t.field({
    type: CollectionPayload,
    description: 'Create a collection (create role in the organization, and on the parent collection when given). REST: POST /v1/orgs/{organizationId}/collections (201).',
    args: { input: t.arg({ type: CreateCollectionInput, required: true, description: 'The collection to create.' }) },
    resolve: async (_r, { input }, ctx) => {
      const { organizationId, ...rest } = input;
      return { collection: await createCollection(ctx, String(organizationId), dropUndefined({ ...rest, parent: rest.parent == null ? rest.parent : String(rest.parent) })) };
    },
  }),
  updateCollection: t.field({
    type: CollectionPayload,
    description: 'Change a collection’s title, description or default level (admin role on the collection). REST: PATCH /v1/collections/{collectionId}.',
    args: { input: t.arg({ type: UpdateCollectionInput, required: true, description: 'The collection and what to change.' }) },
    resolve: async (_r, { input }, ctx) => {
      const { id, ...rest } = input;
      return { collection: await updateCollection(ctx, String(id), dropUndefined(rest)) };
    },
  }),
  deleteCollection: t.field({
    type: DeletePayload,
    description: 'Delete a collection; what it contains moves up to its parent (see docs/decisions.md). Admin role on the collection. Idempotent (deleted: false when already gone). REST: DELETE /v1/collections/{collectionId}.',
    args: {
      input: t.arg({
        type: builder.inputType('DeleteCollectionInput', {
          description: 'The collection to delete.',
          fields: (f) => ({ id: f.id({ required: true, description: 'Collection id (`col_…`).' }) }),
        }),
        required: true,
        description: 'The collection to delete.',
      }),
    },
    resolve: async (_r, { input }, ctx) => ({ deleted: await deleteCollection(ctx, String(input.id)), deletedId: String(input.id) }),
  }),
  moveCollection: t.field({
    type: CollectionPayload,
    description: 'Move a collection to another parent and/or position in the same organization (admin role on it, create on the new parent). REST: POST /v1/collections/{collectionId}/move.',
    args: { input: t.arg({ type: MoveCollectionInput, required: true, description: 'The collection and where to put it.' }) },
    resolve: async (_r, { input }, ctx) => ({ collection: await moveCollection(ctx, String(input.id), moveBody(input)) }),
  }),
  transferCollection: t.field({
    type: CollectionPayload,
    description: 'Move a collection and everything in it to another organization’s root (admin of both organizations). REST: POST /v1/collections/{collectionId}/transfer.',
    args: { input: t.arg({ type: TransferCollectionInput, required: true, description: 'The collection and the target organization.' }) },
    resolve: async (_r, { input }, ctx) => ({ collection: await transferCollection(ctx, String(input.id), { organization: String(input.organization) }) }),
  }),
}));
