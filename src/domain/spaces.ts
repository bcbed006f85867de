// Spaces: creation (not in the seeds: `createSpace` / `POST ORG/spaces`), reading with access
// checks, update, soft delete / restore, duplicate, move and transfer, and the edit lock
// (`requireEditable`) that every content edit goes through. The purge of spaces deleted long ago
// is in cleanup.ts.
import { z } from 'zod';
import type { DomainContext } from './context.ts';
import { enumFromRow, type Tx } from '../db/client.ts';
import { Prisma, type Space } from '../generated/prisma/client.ts';
import { newId } from '../lib/ids.ts';
import { AppError, parseInput, notFound, badRequest, conflict } from '../lib/errors.ts';
import { createInitialRevision, insertPageVersions, loadRevision, writeRevision, type TreeNode } from './revisions.ts';
import { RoleOrGuest } from './users.ts';
import { DAY_MS } from '../lib/clock.ts';
import { statement, transaction } from '../db/transaction.ts';
import { eventInsertSql, recordEvent } from '../events/log.ts';
import {
  DefaultLevelInput,
  lockTree,
  moveContent,
  nextPosition,
  requireContentContainer,
  siblingsOf,
  transferContent,
  writeOrder,
} from './collections.ts';

/** The model's values (GraphQL and Prisma); REST's `share-link` spelling is translated in rest/. */
export const SPACE_VISIBILITIES = ['public', 'unlisted', 'share_link', 'visitor_auth', 'in_collection', 'private'] as const satisfies readonly Space['visibility'][];

/** Deleted spaces can be restored for this long, and are purged after it. */
export const RESTORE_WINDOW_MS = 7 * DAY_MS;

export const SpaceTitle = z.string().trim().max(50);
/** An emoji character (sequence) or its code point(s) in hex (`1f389`, `1f1eb-1f1f7`). */
export const SpaceEmoji = z
  .string()
  .max(50)
  .regex(
    /^(?:(?=.*[\p{Extended_Pictographic}\p{Regional_Indicator}\u20e3])[\p{Extended_Pictographic}\p{Emoji_Component}\u200d\ufe0f\u20e3]+|[0-9a-fA-F]{4,6}(?:-[0-9a-fA-F]{4,6})*)$/u,
    'an emoji or its code point',
  );
export const SpaceIconUrl = z.url({ protocol: /^https?$/, error: 'an http(s) URL' }).max(2048);

export const CreateSpaceInput = z.strictObject({
  title: SpaceTitle.optional(),
  emoji: SpaceEmoji.optional(),
  visibility: z.enum(SPACE_VISIBILITIES).optional(),
  parent: z.string().min(1).optional(),
  defaultLevel: RoleOrGuest.optional(),
});

/**
 * The update body: `editMode`, `title`, `defaultLevel` (a role, null or `inherit`) and one of
 * `emoji`, `icon` (URL) or `{emoji: null, icon: null}` to clear them. A space shows an emoji or an
 * icon: setting one clears the other.
 */
export const UpdateSpaceInput = z
  .strictObject({
    editMode: z.enum(['live', 'locked']).optional(),
    title: SpaceTitle.optional(),
    defaultLevel: DefaultLevelInput.optional(),
    emoji: SpaceEmoji.nullable().optional(),
    icon: SpaceIconUrl.nullable().optional(),
  })
  .superRefine((v, c) => {
    if (typeof v.emoji === 'string' && typeof v.icon === 'string') {
      c.addIssue({ code: 'custom', path: ['icon'], message: 'set either emoji or icon, not both' });
    }
  });

/** Load a space the caller may see (404 otherwise, deleted ones included only on request). */
export async function requireSpaceById(ctx: DomainContext, id: string, action: Parameters<DomainContext['access']['requireSpace']>[1] = 'space:read') {
  const space = await ctx.prisma.space.findUnique({ where: { id } });
  if (!space) throw notFound('Space');
  await ctx.access.requireSpace(space, action);
  return space;
}

/**
 * Refuse content edits on a locked space. Every path that writes a space's content (live edits,
 * change request content, merges, imports) calls this first: 409 CONFLICT "space is locked".
 */
export function requireEditable(space: Pick<Space, 'id' | 'editMode'> & { deletedAt?: Date | null }) {
  if (space.deletedAt) throw notFound('Space');
  if (space.editMode === 'locked') {
    throw new AppError('CONFLICT', `Space ${space.id} is locked (editMode: locked): content edits are refused until an admin sets editMode to live`);
  }
}

/** Create a space with an empty first revision, at the end of its parent. Needs `create` in the org. */
export async function createSpace(ctx: DomainContext, organizationId: string, raw: unknown): Promise<Space> {
  return transaction(ctx.prisma, (tx) => createSpaceInTransaction(ctx, tx, organizationId, raw));
}

/** `createSpace` inside the caller's transaction (a site created with a new space, say). */
export async function createSpaceInTransaction(ctx: DomainContext, tx: Tx, organizationId: string, raw: unknown): Promise<Space> {
  const viewer = ctx.access.requireViewer();
  await ctx.access.within(tx).requireOrg(organizationId, 'content:create');
  const input = parseInput(CreateSpaceInput, raw);
  if (input.visibility === 'in_collection' && !input.parent) throw badRequest('visibility', 'a space in a collection needs a parent collection');
  {
    await lockTree(tx, organizationId);
    const parent = input.parent ? await requireContentContainer(ctx, tx, organizationId, input.parent) : null;
    const id = newId('Space');
    await tx.space.create({
      data: {
        id,
        organizationId,
        parentId: parent?.id ?? null,
        ancestorIds: parent ? [...parent.ancestorIds, parent.id] : [],
        title: input.title || 'Untitled',
        emoji: input.emoji ?? null,
        visibility: input.visibility ?? 'private',
        defaultLevel: input.defaultLevel ?? null,
        position: await nextPosition(tx, organizationId, parent?.id ?? null),
      },
    });
    const revision = await createInitialRevision(tx, id, viewer.user.id);
    const created = await tx.space.update({ where: { id }, data: { revisionId: revision.id } });
    await recordEvent(tx, ctx, { type: 'space_created', organizationId, objectId: id, payload: { title: created.title, parentId: created.parentId, revisionId: revision.id } });
    return created;
  }
}

// ------------------------------------------------------------------ update

/** The space's counters as `SpaceRef` shows them, read with the write so the answer needs no more statements. */
export type SpaceCounters = { changeRequests: { total: number; open: number; draft: number }; openComments: number };

/** A raw `Space` row with the counters `spaceCountersSql` adds (names prefixed `_`). */
export type SpaceRowWithCounters = Space & { _crTotal?: number; _crOpen?: number; _crDraft?: number; _openComments?: number };

/**
 * The counters `SpaceRef` shows, as SQL over a space row aliased `alias`: `columns` for the select
 * list, `joins` after its FROM. One statement then reads (or writes) a space and its counters.
 */
export function spaceCountersSql(alias: string): { columns: Prisma.Sql; joins: Prisma.Sql } {
  const a = Prisma.raw(alias);
  return {
    columns: Prisma.sql`cr.total AS "_crTotal", cr.open AS "_crOpen", cr.draft AS "_crDraft", cm.open AS "_openComments"`,
    joins: Prisma.sql`CROSS JOIN LATERAL (
        SELECT count(*)::int AS total,
               (count(*) FILTER (WHERE c.status = 'open'))::int AS open,
               (count(*) FILTER (WHERE c.status = 'draft'))::int AS draft
        FROM "ChangeRequest" c WHERE c."spaceId" = ${a}.id) cr
      CROSS JOIN LATERAL (
        SELECT count(*)::int AS open FROM "Comment" k
        WHERE k."spaceId" = ${a}.id AND k."changeRequestId" IS NULL AND k."parentId" IS NULL AND k.status = 'open') cm`,
  };
}

/** A raw row as the model's `Space` (enum values mapped: `share-link` → `share_link`) and its counters, when read. */
export function spaceFromRow(row: SpaceRowWithCounters): { space: Space; counters?: SpaceCounters } {
  const { _crTotal, _crOpen, _crDraft, _openComments, ...raw } = row;
  const space = { ...raw, visibility: enumFromRow<Space['visibility']>(raw.visibility) };
  if (_crTotal === undefined) return { space };
  return { space, counters: { changeRequests: { total: _crTotal, open: _crOpen!, draft: _crDraft! }, openComments: _openComments! } };
}

/** Columns `updateSpace` may set whose type needs a cast from a text parameter. */
const UPDATE_CASTS: Record<string, string> = { editMode: 'EditMode', defaultLevel: 'Role' };

/**
 * Change a space's settings (admin). The write is one statement: the UPDATE, the event row (the
 * outbox) and, with `withCounters`, the counters of the answer, in a data-modifying WITH that
 * commits as a whole, so it needs no BEGIN/COMMIT and no re-read of the row it wrote
 * (docs/performance.md, "A one-row write, statement by statement").
 */
export async function updateSpace(ctx: DomainContext, id: string, raw: unknown, opts: { withCounters?: boolean } = {}): Promise<Space & { counters?: SpaceCounters }> {
  const space = await requireSpaceById(ctx, id, 'space:admin');
  const input = parseInput(UpdateSpaceInput, raw);
  const data: Record<string, string | null> = {};
  if (input.editMode !== undefined) data.editMode = input.editMode;
  if (input.title !== undefined) data.title = input.title || 'Untitled';
  if (input.defaultLevel !== undefined) data.defaultLevel = input.defaultLevel;
  if (typeof input.emoji === 'string') Object.assign(data, { emoji: input.emoji, icon: null });
  else if (input.emoji === null) data.emoji = null;
  if (typeof input.icon === 'string') Object.assign(data, { icon: input.icon, emoji: null });
  else if (input.icon === null) data.icon = null;
  const fields = Object.keys(data);
  // Prisma's @updatedAt: the process's time, as every other Prisma write of the row sets it.
  const sets = [
    ...Object.entries(data).map(([column, value]) =>
      UPDATE_CASTS[column] ? Prisma.sql`${Prisma.raw(`"${column}"`)} = ${value}::${Prisma.raw(`"${UPDATE_CASTS[column]}"`)}` : Prisma.sql`${Prisma.raw(`"${column}"`)} = ${value}`,
    ),
    Prisma.sql`"updatedAt" = ${new Date()}`,
  ];
  const counters = spaceCountersSql('u');
  const tail = opts.withCounters ? Prisma.sql`, ${counters.columns} FROM u ${counters.joins}` : Prisma.sql` FROM u`;
  // The event is recordEvent's row (events/log.ts eventInsertSql), its payload's title the one just written.
  const rows = await statement(() =>
    ctx.prisma.$queryRaw<SpaceRowWithCounters[]>(Prisma.sql`
      WITH u AS (
        UPDATE "Space" SET ${Prisma.join(sets, ', ')}
        WHERE id = ${space.id} AND "deletedAt" IS NULL
        RETURNING *
      ), e AS (
        ${eventInsertSql(ctx, {
          type: 'space_updated',
          from: 'u',
          organizationId: Prisma.sql`u."organizationId"`,
          objectId: Prisma.sql`u.id`,
          payload: Prisma.sql`jsonb_build_object('title', u.title, 'fields', ${JSON.stringify(fields)}::jsonb)`,
        })}
      )
      SELECT u.*${tail}`),
  );
  const row = rows[0];
  if (!row) throw notFound('Space');
  const { space: updated, counters: read } = spaceFromRow(row);
  return read ? { ...updated, counters: read } : updated;
}

// ------------------------------------------------------------------ delete, restore, purge

/**
 * Soft delete (admin): the space leaves listings and reads until restored or purged.
 * Idempotent: false when the space does not exist or is already deleted.
 */
export async function deleteSpace(ctx: DomainContext, id: string): Promise<boolean> {
  const viewer = ctx.access.requireViewer();
  const space = await ctx.prisma.space.findUnique({ where: { id } });
  if (!space) return false;
  await ctx.access.requireSpace(space, 'space:admin', {}, { includeDeleted: true });
  if (space.deletedAt) return false;
  return transaction(ctx.prisma, async (tx) => {
    await lockTree(tx, space.organizationId);
    const r = await tx.space.updateMany({ where: { id, deletedAt: null }, data: { deletedAt: ctx.clock.now(), deletedById: viewer.user.id } });
    // The siblings keep their positions (a gap is fine): renumbering them would move the sort
    // key under every keyset cursor into this list (docs/decisions.md, cursors).
    if (r.count > 0) await recordEvent(tx, ctx, { type: 'space_deleted', organizationId: space.organizationId, objectId: id, payload: { title: space.title } });
    return r.count > 0;
  });
}

/** Restore a space deleted less than 7 days ago (by `ctx.clock`), at the end of its parent. */
export async function restoreSpace(ctx: DomainContext, id: string): Promise<Space> {
  const space = await ctx.prisma.space.findUnique({ where: { id } });
  await ctx.access.requireSpace(space, 'space:admin', {}, { includeDeleted: true });
  if (!space!.deletedAt) throw conflict('The space is not deleted');
  if (ctx.clock.now().getTime() - space!.deletedAt.getTime() >= RESTORE_WINDOW_MS) {
    throw new AppError('BAD_REQUEST', 'The space was deleted more than 7 days ago and can no longer be restored');
  }
  return transaction(ctx.prisma, async (tx) => {
    await lockTree(tx, space!.organizationId);
    const fresh = await tx.space.findUnique({ where: { id } });
    if (!fresh) throw notFound('Space');
    if (!fresh.deletedAt) throw conflict('The space is not deleted');
    const restored = await tx.space.update({
      where: { id },
      data: { deletedAt: null, deletedById: null, position: await nextPosition(tx, fresh.organizationId, fresh.parentId) },
    });
    await recordEvent(tx, ctx, { type: 'space_restored', organizationId: fresh.organizationId, objectId: id, payload: { title: restored.title } });
    return restored;
  });
}


// ------------------------------------------------------------------ duplicate

const COPY_SUFFIX = ' (copy)';

/**
 * Duplicate a space (read on it, `create` where it lives): a new space right after it with the
 * title "<title> (copy)", the current content as its first revision, and the same explicit
 * grants. Page versions and files are copied as new rows owned by the new space (page ids are
 * kept, so links between its pages still resolve; file ids are new and references to them in the
 * pages are rewritten); history, change requests and comments are not copied. The copy starts
 * in `live` edit mode.
 */
export async function duplicateSpace(ctx: DomainContext, id: string): Promise<Space> {
  const viewer = ctx.access.requireViewer();
  const source = await requireSpaceById(ctx, id, 'space:read');
  return transaction(ctx.prisma, async (tx) => {
    await lockTree(tx, source.organizationId);
    const fresh = await tx.space.findUnique({ where: { id } });
    if (!fresh || fresh.deletedAt) throw notFound('Space');
    await requireContentContainer(ctx, tx, fresh.organizationId, fresh.parentId);
    const newSpaceId = newId('Space');
    const title = `${fresh.title.slice(0, 50 - COPY_SUFFIX.length)}${COPY_SUFFIX}`;

    const siblings = await siblingsOf(tx, fresh.organizationId, fresh.parentId);
    await tx.space.create({
      data: {
        id: newSpaceId,
        organizationId: fresh.organizationId,
        parentId: fresh.parentId,
        ancestorIds: fresh.ancestorIds,
        title,
        emoji: fresh.emoji,
        icon: fresh.icon,
        visibility: fresh.visibility,
        defaultLevel: fresh.defaultLevel,
        editMode: 'live',
        position: siblings.length,
      },
    });
    const at = siblings.findIndex((s) => s.kind === 'space' && s.id === fresh.id);
    const copyItem = { kind: 'space' as const, id: newSpaceId, position: siblings.length, createdAt: new Date() };
    await writeOrder(tx, [...siblings.slice(0, at + 1), copyItem, ...siblings.slice(at + 1)]);

    // Files: new rows and stored bytes.
    const loaded = await loadRevision(tx, fresh.revisionId!);
    const files = loaded.revision.fileIds.length ? await tx.file.findMany({ where: { id: { in: loaded.revision.fileIds } } }) : [];
    const fileIdMap = new Map<string, string>();
    const fileRows: Prisma.FileCreateManyInput[] = [];
    for (const f of files) {
      const newFileId = newId('File');
      const storageKey = `files/${newSpaceId}/${newFileId}`;
      const bytes = await ctx.services.storage.get(f.storageKey);
      if (bytes) await ctx.services.storage.put(storageKey, bytes, f.contentType);
      fileIdMap.set(f.id, newFileId);
      fileRows.push({ id: newFileId, spaceId: newSpaceId, name: f.name, contentType: f.contentType, size: f.size, width: f.width, height: f.height, storageKey });
    }
    if (fileRows.length) await tx.file.createMany({ data: fileRows });
    const rewriteFiles = (markdown: string) => {
      let out = markdown;
      for (const [from, to] of fileIdMap) out = out.split(from).join(to);
      return out;
    };

    // Pages: one new version row per page of the current revision.
    const versionIdMap = new Map<string, string>();
    const versionRows: Prisma.PageVersionCreateManyInput[] = [];
    for (const [versionId, v] of loaded.versions) {
      const newVersionId = newId('PageVersion');
      versionIdMap.set(versionId, newVersionId);
      versionRows.push({
        id: newVersionId,
        pageId: v.pageId,
        spaceId: newSpaceId,
        kind: v.kind,
        title: v.title,
        slug: v.slug,
        emoji: v.emoji,
        icon: v.icon,
        description: v.description,
        markdown: rewriteFiles(v.markdown),
        href: v.href,
        hidden: v.hidden,
        noIndex: v.noIndex,
        noRobotsIndex: v.noRobotsIndex,
        condition: v.condition,
        ...(v.layout != null ? { layout: v.layout as Prisma.InputJsonValue } : {}),
        pageCreatedAt: v.pageCreatedAt,
      });
    }
    // Copies of accepted content: what no longer parses within the budget is stored unparsed.
    await insertPageVersions(tx, versionRows, { unparsable: 'store' });
    const mapTree = (nodes: TreeNode[]): TreeNode[] => nodes.map((n) => ({ id: n.id, v: versionIdMap.get(n.v) ?? n.v, pages: mapTree(n.pages) }));
    const revision = await writeRevision(tx, {
      spaceId: newSpaceId,
      parents: [],
      type: 'edits',
      tree: mapTree(loaded.tree),
      fileIds: loaded.revision.fileIds.map((f) => fileIdMap.get(f)).filter((f): f is string => !!f),
      createdById: viewer.user.id,
      variables: loaded.revision.variables as Prisma.InputJsonValue,
      reusableContents: loaded.revision.reusableContents as Prisma.InputJsonValue,
    });

    const grants = await tx.contentGrant.findMany({ where: { spaceId: fresh.id } });
    if (grants.length) {
      await tx.contentGrant.createMany({
        data: grants.map((g) => ({ id: newId('ContentGrant'), organizationId: g.organizationId, spaceId: newSpaceId, userId: g.userId, teamId: g.teamId, role: g.role })),
      });
    }
    await recordEvent(tx, ctx, { type: 'space_created', organizationId: fresh.organizationId, objectId: newSpaceId, payload: { title, parentId: fresh.parentId, revisionId: revision.id, duplicatedFrom: fresh.id } });
    return tx.space.update({ where: { id: newSpaceId }, data: { revisionId: revision.id } });
  });
}

// ------------------------------------------------------------------ move and transfer

/** Move (admin on the space; `create` in the target parent when it changes). */
export async function moveSpace(ctx: DomainContext, id: string, raw: unknown): Promise<Space> {
  const space = await requireSpaceById(ctx, id, 'space:admin');
  await moveContent(ctx, { kind: 'space', id: space.id, organizationId: space.organizationId, parentId: space.parentId }, raw);
  return ctx.prisma.space.findUniqueOrThrow({ where: { id } });
}

/** Transfer to another organization's root (admin of both organizations). */
export async function transferSpace(ctx: DomainContext, id: string, raw: unknown): Promise<Space> {
  const space = await requireSpaceById(ctx, id, 'space:read');
  await transferContent(ctx, { kind: 'space', id: space.id, organizationId: space.organizationId, parentId: space.parentId }, raw);
  return ctx.prisma.space.findUniqueOrThrow({ where: { id } });
}

// ------------------------------------------------------------------ listings

/** Filter for the spaces of an organization the caller may read (see collections.ts). */
