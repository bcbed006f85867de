// Collections, and the content tree they form with spaces: creation, update, delete, move and
// transfer, the shared sibling ordering and the visibility filters used by listings.
//
// The tree: a collection or space has `parentId` (a collection or null for the org's root) and
// `ancestorIds` (enclosing collections, outermost first). Collections and (non-deleted) spaces of
// one parent share one ordering: `position` is dense (0..n-1) among those siblings and is rewritten
// in the transaction that changes the tree. Every structural change takes a per-organization
// advisory lock first, so concurrent moves cannot interleave (no cycles, no duplicate positions).
import { z } from 'zod';
import type { DomainContext } from './context.ts';
import type { Tx } from '../db/client.ts';
import type { Collection, ContentGrant, Prisma, Role } from '../generated/prisma/client.ts';
import { newId } from '../lib/ids.ts';
import { AppError, badRequest, conflict, notFound, parseInput } from '../lib/errors.ts';
import { ROLES } from '../auth/roles.ts';
import type { CollectionAction } from '../auth/space-actions.ts';
import { transaction } from '../db/transaction.ts';
import { recordEvent } from '../events/log.ts';
import { lockTree } from '../db/locks.ts';

// ------------------------------------------------------------------ inputs

export const CollectionTitle = z.string().trim().max(50);
export const CollectionDescription = z.string().max(100);

/**
 * `defaultLevel` as the contract types it: a role, null or `inherit`. In this model a content's
 * unset level inherits (from the enclosing collection, else the member's organization role), so
 * `inherit` and null mean the same thing and are both stored as null.
 */
export const DefaultLevelInput = z
  .union([z.enum(ROLES), z.literal('inherit'), z.null()])
  .transform((v): Role | null => (v === 'inherit' ? null : v));

export const CreateCollectionInput = z.strictObject({
  title: CollectionTitle.optional(),
  parent: z.string().min(1).optional(),
});

export const UpdateCollectionInput = z.strictObject({
  title: CollectionTitle.optional(),
  description: CollectionDescription.nullable().optional(),
  defaultLevel: DefaultLevelInput.optional(),
});

export const ContentPointer = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('space'), space: z.string().min(1) }),
  z.strictObject({ type: z.literal('collection'), collection: z.string().min(1) }),
]);
export type ContentPointer = z.infer<typeof ContentPointer>;

export const ContentPosition = z.strictObject({ before: ContentPointer.optional(), after: ContentPointer.optional() });

/** Body of the move operations: at least one of `parent` and `position`. */
export const MoveContentInput = z
  .strictObject({
    parent: z.string().min(1).nullable().optional(),
    position: ContentPosition.optional(),
  })
  .superRefine((v, c) => {
    if (v.parent === undefined && v.position === undefined) {
      c.addIssue({ code: 'custom', path: ['parent'], message: 'give parent, position or both' });
    }
  });
export type MoveContentInput = z.infer<typeof MoveContentInput>;

export const TransferContentInput = z.strictObject({ organization: z.string().min(1) });

// ------------------------------------------------------------------ locking and ordering

/** Serialize structural changes of an organization's tree (advisory lock, first in the lock order of db/locks.ts). */
export { lockTree };

export type TreeKind = 'space' | 'collection';
export type TreeItem = { kind: TreeKind; id: string; position: number; createdAt: Date };

const itemKey = (i: { kind: TreeKind; id: string }) => `${i.kind}:${i.id}`;

/** The ordered siblings under `parentId` (null: the organization's root); deleted spaces excluded. */
export async function siblingsOf(tx: Tx, organizationId: string, parentId: string | null): Promise<TreeItem[]> {
  const select = { id: true, position: true, createdAt: true } as const;
  const [collections, spaces] = await Promise.all([
    tx.collection.findMany({ where: { organizationId, parentId }, select }),
    tx.space.findMany({ where: { organizationId, parentId, deletedAt: null }, select }),
  ]);
  const items: TreeItem[] = [
    ...collections.map((c) => ({ kind: 'collection' as const, ...c })),
    ...spaces.map((s) => ({ kind: 'space' as const, ...s })),
  ];
  return items.sort(
    (a, b) =>
      a.position - b.position ||
      (a.kind === b.kind ? 0 : a.kind === 'collection' ? -1 : 1) ||
      a.createdAt.getTime() - b.createdAt.getTime() ||
      (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
  );
}

/** Position for a new item appended under `parentId`. */
export async function nextPosition(tx: Tx, organizationId: string, parentId: string | null): Promise<number> {
  const [c, s] = await Promise.all([
    tx.collection.aggregate({ where: { organizationId, parentId }, _max: { position: true } }),
    tx.space.aggregate({ where: { organizationId, parentId, deletedAt: null }, _max: { position: true } }),
  ]);
  return Math.max(c._max.position ?? -1, s._max.position ?? -1) + 1;
}

/** Write dense positions 0..n-1 in list order (only the rows whose position changes). */
export async function writeOrder(tx: Tx, items: TreeItem[]) {
  const changed = items.map((item, index) => ({ item, index })).filter(({ item, index }) => item.position !== index);
  const spaces = changed.filter((c) => c.item.kind === 'space');
  const collections = changed.filter((c) => c.item.kind === 'collection');
  if (spaces.length) {
    await tx.$executeRaw`UPDATE "Space" AS s SET "position" = v.p FROM unnest(${spaces.map((c) => c.item.id)}::text[], ${spaces.map((c) => c.index)}::int[]) AS v(id, p) WHERE s."id" = v.id`;
  }
  if (collections.length) {
    await tx.$executeRaw`UPDATE "Collection" AS c SET "position" = v.p FROM unnest(${collections.map((c) => c.item.id)}::text[], ${collections.map((c) => c.index)}::int[]) AS v(id, p) WHERE c."id" = v.id`;
  }
  for (const { item, index } of changed) item.position = index;
}

const pointerKey = (p: ContentPointer) => (p.type === 'space' ? `space:${p.space}` : `collection:${p.collection}`);

/**
 * Where `position` puts an item among `list` (the target siblings without the item itself):
 * the index to insert at. No position: the end. A bad anchor is a 400 naming it.
 */
export function resolveIndex(list: TreeItem[], self: { kind: TreeKind; id: string }, position: z.infer<typeof ContentPosition> | undefined): number {
  if (!position || (!position.before && !position.after)) return list.length;
  const indexOf = (p: ContentPointer, field: string) => {
    if (pointerKey(p) === itemKey(self)) throw badRequest(field, 'an item cannot be placed relative to itself');
    const i = list.findIndex((item) => itemKey(item) === pointerKey(p));
    if (i < 0) throw badRequest(field, `${pointerKey(p).replace(':', ' ')} is not a sibling in the target parent`);
    return i;
  };
  const before = position.before ? indexOf(position.before, 'position.before') : undefined;
  const after = position.after ? indexOf(position.after, 'position.after') : undefined;
  if (before !== undefined && after !== undefined && after !== before - 1) {
    throw badRequest('position', 'before and after are not adjacent siblings');
  }
  return before ?? after! + 1;
}

// ------------------------------------------------------------------ reads

export async function getCollection(ctx: DomainContext, id: string, action: CollectionAction = 'collection:read'): Promise<Collection> {
  const collection = await ctx.prisma.collection.findUnique({ where: { id } });
  await ctx.access.requireCollection(collection, action);
  return collection!;
}

// ------------------------------------------------------------------ create and update

/** The container a new or moved item goes into: checks it and the caller's `create` role there. */
async function requireContainer(ctx: DomainContext, tx: Tx, organizationId: string, parentId: string | null, field = 'parent') {
  // Checked through the transaction: under its tree lock, on its connection.
  const access = ctx.access.within(tx);
  if (parentId === null) {
    await access.requireOrg(organizationId, 'content:create');
    return null;
  }
  const parent = await tx.collection.findFirst({ where: { id: parentId, organizationId } });
  if (!parent || !(await access.collectionRole(parent))) throw badRequest(field, 'no such collection in this organization');
  await access.requireCollection(parent, 'collection:create');
  return parent;
}

export { requireContainer as requireContentContainer };

/** Create a collection at the end of its parent. Needs `create` in the organization (and the parent). */
export async function createCollection(ctx: DomainContext, organizationId: string, raw: unknown): Promise<Collection> {
  ctx.access.requireViewer();
  await ctx.access.requireOrg(organizationId, 'content:create');
  const input = parseInput(CreateCollectionInput, raw);
  return transaction(ctx.prisma, async (tx) => {
    await lockTree(tx, organizationId);
    const parent = await requireContainer(ctx, tx, organizationId, input.parent ?? null);
    const created = await tx.collection.create({
      data: {
        id: newId('Collection'),
        organizationId,
        parentId: parent?.id ?? null,
        ancestorIds: parent ? [...parent.ancestorIds, parent.id] : [],
        title: input.title || 'Untitled',
        position: await nextPosition(tx, organizationId, parent?.id ?? null),
      },
    });
    await recordEvent(tx, ctx, { type: 'collection_created', organizationId, objectId: created.id, payload: { title: created.title, parentId: created.parentId } });
    return created;
  });
}

export async function updateCollection(ctx: DomainContext, id: string, raw: unknown): Promise<Collection> {
  const collection = await getCollection(ctx, id, 'collection:admin');
  const input = parseInput(UpdateCollectionInput, raw);
  return transaction(ctx.prisma, async (tx) => {
    const updated = await tx.collection.update({
      where: { id: collection.id },
      data: {
        ...(input.title !== undefined ? { title: input.title || 'Untitled' } : {}),
        ...(input.description !== undefined ? { description: input.description || null } : {}),
        ...(input.defaultLevel !== undefined ? { defaultLevel: input.defaultLevel } : {}),
      },
    });
    await recordEvent(tx, ctx, { type: 'collection_updated', organizationId: updated.organizationId, objectId: updated.id, payload: { title: updated.title, fields: Object.keys(input) } });
    return updated;
  });
}

// ------------------------------------------------------------------ delete

/**
 * Delete a collection. Nothing inside is lost: its sub-collections and spaces (deleted ones
 * included) move up to the collection's parent, taking its place in the ordering, and keep the
 * access they had — the collection's grants are copied onto them and its `defaultLevel` onto those
 * without their own. Idempotent: false when the collection does not exist.
 */
export async function deleteCollection(ctx: DomainContext, id: string): Promise<boolean> {
  const existing = await ctx.prisma.collection.findUnique({ where: { id } });
  if (!existing) {
    ctx.access.requireViewer();
    return false;
  }
  await ctx.access.requireCollection(existing, 'collection:admin');
  return transaction(ctx.prisma, async (tx) => {
    await lockTree(tx, existing.organizationId);
    const c = await tx.collection.findUnique({ where: { id }, include: { grants: true } });
    if (!c) return false;
    const parentId = c.parentId;
    const [parentList, children, childItems, deletedSpaces] = await Promise.all([
      siblingsOf(tx, c.organizationId, parentId),
      tx.collection.findMany({ where: { parentId: c.id }, select: { id: true, defaultLevel: true } }),
      siblingsOf(tx, c.organizationId, c.id),
      tx.space.findMany({ where: { parentId: c.id, deletedAt: { not: null } }, select: { id: true, defaultLevel: true } }),
    ]);
    const liveSpaces = await tx.space.findMany({ where: { parentId: c.id, deletedAt: null }, select: { id: true, defaultLevel: true } });

    // Subtree: drop the collection from every descendant's ancestors.
    await tx.$executeRaw`UPDATE "Collection" SET "ancestorIds" = array_remove("ancestorIds", ${c.id}) WHERE "ancestorIds" @> ARRAY[${c.id}]::text[]`;
    await tx.$executeRaw`UPDATE "Space" SET "ancestorIds" = array_remove("ancestorIds", ${c.id}) WHERE "ancestorIds" @> ARRAY[${c.id}]::text[]`;

    // Direct children: new parent, inherited access made explicit.
    const spaceChildren = [...liveSpaces, ...deletedSpaces];
    await tx.collection.updateMany({ where: { parentId: c.id }, data: { parentId } });
    await tx.space.updateMany({ where: { parentId: c.id }, data: { parentId } });
    if (parentId === null) {
      await tx.space.updateMany({ where: { id: { in: spaceChildren.map((s) => s.id) }, visibility: 'in_collection' }, data: { visibility: 'private' } });
    }
    if (c.defaultLevel) {
      await tx.collection.updateMany({ where: { id: { in: children.filter((x) => !x.defaultLevel).map((x) => x.id) } }, data: { defaultLevel: c.defaultLevel } });
      await tx.space.updateMany({ where: { id: { in: spaceChildren.filter((x) => !x.defaultLevel).map((x) => x.id) } }, data: { defaultLevel: c.defaultLevel } });
    }
    if (c.grants.length) {
      const copy = (g: ContentGrant, target: { spaceId?: string; collectionId?: string }) => ({
        id: newId('ContentGrant'),
        organizationId: g.organizationId,
        userId: g.userId,
        teamId: g.teamId,
        role: g.role,
        spaceId: target.spaceId ?? null,
        collectionId: target.collectionId ?? null,
      });
      await tx.contentGrant.createMany({
        data: c.grants.flatMap((g) => [
          ...children.map((x) => copy(g, { collectionId: x.id })),
          ...spaceChildren.map((x) => copy(g, { spaceId: x.id })),
        ]),
      });
    }

    // Ordering: the children take the collection's slot among its siblings.
    const index = parentList.findIndex((i) => i.kind === 'collection' && i.id === c.id);
    const merged = [...parentList.slice(0, index), ...childItems, ...parentList.slice(index + 1)];
    await writeOrder(tx, merged);

    await tx.collection.delete({ where: { id: c.id } });
    await recordEvent(tx, ctx, { type: 'collection_deleted', organizationId: c.organizationId, objectId: c.id, payload: { title: c.title } });
    return true;
  });
}

// ------------------------------------------------------------------ move

type Movable = { kind: TreeKind; id: string; organizationId: string; parentId: string | null };

/**
 * Move a space or a collection to a new parent and/or position (the caller already holds admin
 * on the item). 400 for a bad target or anchor, 409 when nothing would change. Rewrites the dense
 * order of the old and new parents and the ancestors of the whole subtree, in one transaction.
 */
export async function moveContent(ctx: DomainContext, item: Movable, raw: unknown): Promise<void> {
  const input = parseInput(MoveContentInput, raw);
  await transaction(ctx.prisma, async (tx) => {
    await lockTree(tx, item.organizationId);
    const fresh =
      item.kind === 'space'
        ? await tx.space.findUnique({ where: { id: item.id }, select: { parentId: true, ancestorIds: true, organizationId: true, deletedAt: true } })
        : await tx.collection.findUnique({ where: { id: item.id }, select: { parentId: true, ancestorIds: true, organizationId: true } });
    if (!fresh || fresh.organizationId !== item.organizationId || ('deletedAt' in fresh && fresh.deletedAt)) {
      throw notFound(item.kind === 'space' ? 'Space' : 'Collection');
    }
    const fromParent = fresh.parentId;
    const toParent = input.parent === undefined ? fromParent : input.parent;
    const parentChanges = toParent !== fromParent;

    let target: Collection | null = null;
    if (parentChanges) {
      target = await requireContainer(ctx, tx, item.organizationId, toParent);
      if (item.kind === 'collection' && target && (target.id === item.id || target.ancestorIds.includes(item.id))) {
        throw badRequest('parent', 'a collection cannot move into itself or one of its descendants');
      }
    }

    const self = { kind: item.kind, id: item.id };
    const fromList = await siblingsOf(tx, item.organizationId, fromParent);
    const current = fromList.find((i) => itemKey(i) === itemKey(self))!;
    const fromWithout = fromList.filter((i) => i !== current);
    const toList = parentChanges ? await siblingsOf(tx, item.organizationId, toParent) : fromWithout;
    const index = resolveIndex(toList, self, input.position);
    if (!parentChanges && index === fromList.indexOf(current)) {
      throw conflict(`The ${item.kind} is already at that place`);
    }
    const placed = [...toList.slice(0, index), current, ...toList.slice(index)];
    await writeOrder(tx, placed);
    await recordEvent(tx, ctx, { type: item.kind === 'space' ? 'space_moved' : 'collection_moved', organizationId: item.organizationId, objectId: item.id, payload: { fromParentId: fromParent, parentId: toParent, position: index } });
    if (!parentChanges) return;
    await writeOrder(tx, fromWithout);

    const prefix = target ? [...target.ancestorIds, target.id] : [];
    if (item.kind === 'space') {
      await tx.space.update({
        where: { id: item.id },
        data: { parentId: toParent, ancestorIds: prefix },
      });
      if (toParent === null) await tx.space.updateMany({ where: { id: item.id, visibility: 'in_collection' }, data: { visibility: 'private' } });
    } else {
      await tx.collection.update({ where: { id: item.id }, data: { parentId: toParent, ancestorIds: prefix } });
      await rewriteSubtreeAncestors(tx, item.id, prefix);
    }
  });
}

/** Descendants of collection `id`: their ancestors become `prefix ++ [id, …what was below id]`. */
async function rewriteSubtreeAncestors(tx: Tx, id: string, prefix: string[], organizationId?: string) {
  if (organizationId) {
    await tx.$executeRaw`UPDATE "Collection" SET "ancestorIds" = ${prefix}::text[] || "ancestorIds"[array_position("ancestorIds", ${id}):], "organizationId" = ${organizationId} WHERE "ancestorIds" @> ARRAY[${id}]::text[]`;
    await tx.$executeRaw`UPDATE "Space" SET "ancestorIds" = ${prefix}::text[] || "ancestorIds"[array_position("ancestorIds", ${id}):], "organizationId" = ${organizationId} WHERE "ancestorIds" @> ARRAY[${id}]::text[]`;
  } else {
    await tx.$executeRaw`UPDATE "Collection" SET "ancestorIds" = ${prefix}::text[] || "ancestorIds"[array_position("ancestorIds", ${id}):] WHERE "ancestorIds" @> ARRAY[${id}]::text[]`;
    await tx.$executeRaw`UPDATE "Space" SET "ancestorIds" = ${prefix}::text[] || "ancestorIds"[array_position("ancestorIds", ${id}):] WHERE "ancestorIds" @> ARRAY[${id}]::text[]`;
  }
}

// ------------------------------------------------------------------ transfer

/**
 * Transfer a space or a collection (with everything inside, deleted spaces included) to the root
 * of another organization, at the end. The caller must be admin of both organizations.
 * 409 when the target is the current organization; 412 when a space of the subtree is published
 * in a site of the current organization (remove it from the site first). Grants follow when they
 * still make sense: user grants of members of the target organization are kept, team grants and
 * grants of non-members are dropped (teams belong to the old organization).
 */
export async function transferContent(ctx: DomainContext, item: Movable, raw: unknown): Promise<void> {
  const input = parseInput(TransferContentInput, raw);
  const from = item.organizationId;
  const to = input.organization;
  await ctx.access.requireOrg(from, 'content:transfer');
  if (to === from) throw conflict(`The ${item.kind} already belongs to this organization`);
  await ctx.access.requireOrg(to, 'content:transfer');
  await transaction(ctx.prisma, async (tx) => {
    await lockTree(tx, from, to);
    const fresh =
      item.kind === 'space'
        ? await tx.space.findFirst({ where: { id: item.id, organizationId: from, deletedAt: null }, select: { parentId: true } })
        : await tx.collection.findFirst({ where: { id: item.id, organizationId: from }, select: { parentId: true } });
    if (!fresh) throw notFound(item.kind === 'space' ? 'Space' : 'Collection');

    const collectionIds =
      item.kind === 'collection'
        ? [item.id, ...(await tx.collection.findMany({ where: { ancestorIds: { has: item.id } }, select: { id: true } })).map((c) => c.id)]
        : [];
    const spaceIds =
      item.kind === 'space' ? [item.id] : (await tx.space.findMany({ where: { ancestorIds: { has: item.id } }, select: { id: true } })).map((s) => s.id);

    const published = spaceIds.length
      ? await tx.siteSpace.findFirst({ where: { spaceId: { in: spaceIds }, site: { organizationId: from } }, select: { spaceId: true } })
      : null;
    if (published) {
      throw new AppError('PRECONDITION_FAILED', `Space ${published.spaceId} is published in a site of this organization; remove it from the site before transferring`);
    }

    const fromList = await siblingsOf(tx, from, fresh.parentId);
    const position = await nextPosition(tx, to, null);
    if (item.kind === 'space') {
      await tx.space.update({ where: { id: item.id }, data: { organizationId: to, parentId: null, ancestorIds: [], position } });
      await tx.space.updateMany({ where: { id: item.id, visibility: 'in_collection' }, data: { visibility: 'private' } });
    } else {
      await tx.collection.update({ where: { id: item.id }, data: { organizationId: to, parentId: null, ancestorIds: [], position } });
      await rewriteSubtreeAncestors(tx, item.id, [], to);
    }
    await writeOrder(tx, fromList.filter((i) => !(i.kind === item.kind && i.id === item.id)));

    // Grants on the moved content.
    const onMoved: Prisma.ContentGrantWhereInput = { OR: [{ spaceId: { in: spaceIds } }, { collectionId: { in: collectionIds } }] };
    const targetMembers = await tx.member.findMany({ where: { organizationId: to }, select: { userId: true } });
    await tx.contentGrant.deleteMany({
      where: { AND: [onMoved, { OR: [{ teamId: { not: null } }, { userId: { notIn: targetMembers.map((m) => m.userId) } }] }] },
    });
    await tx.contentGrant.updateMany({ where: onMoved, data: { organizationId: to } });
    const transferred = { type: item.kind === 'space' ? 'space_transferred' : 'collection_transferred', objectId: item.id, payload: { fromOrganizationId: from, organizationId: to, spaceIds } } as const;
    await recordEvent(tx, ctx, { ...transferred, organizationId: from }, { ...transferred, organizationId: to });
  });
}

/** Move a collection (admin on it; `create` in the target parent when it changes). */
export async function moveCollection(ctx: DomainContext, id: string, raw: unknown): Promise<Collection> {
  const c = await getCollection(ctx, id, 'collection:admin');
  await moveContent(ctx, { kind: 'collection', id: c.id, organizationId: c.organizationId, parentId: c.parentId }, raw);
  return ctx.prisma.collection.findUniqueOrThrow({ where: { id: c.id } });
}

/** Transfer a collection and everything inside to another organization's root (admin of both). */
export async function transferCollection(ctx: DomainContext, id: string, raw: unknown): Promise<Collection> {
  const c = await getCollection(ctx, id);
  await transferContent(ctx, { kind: 'collection', id: c.id, organizationId: c.organizationId, parentId: c.parentId }, raw);
  return ctx.prisma.collection.findUniqueOrThrow({ where: { id: c.id } });
}
