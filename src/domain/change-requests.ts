// Change requests: proposed edits on their own line of revisions, reviewed, updated from main
// and merged (DESIGN.md "Content").
//
// - `number` is per space: `Space.changeRequestSeq` incremented with `UPDATE … RETURNING` in the
//   creating transaction, so concurrent creations queue on the space row and never share one.
// - `revisionInitial` is the space revision it started from, `revision` its head. The last base
//   is `revisionMergedAncestor ?? revisionInitial`; `outdated` = the space moved since then.
// - Authoring (`POST CR/content`) applies the official change batch to the head under a row lock
//   on the change request, so concurrent batches queue instead of losing edits.
// - Merge and update are three-way merges (domain/three-way.ts). A merge locks the space row
//   (`SELECT … FOR UPDATE`) before reading main, so two racing merges serialize: the second sees
//   the first one's result as main and merges on top of it or reports conflicts. Conflicts change
//   nothing.
// - Locks: every transaction here takes the space row, then the change request row, through
//   `lockSpaceAndChangeRequest` (db/locks.ts: merges in `update` mode, the others in `share`
//   mode), and runs in `transaction()`, which re-runs it on a deadlock or serialization failure.
import { z } from 'zod';
import type { DomainContext } from './context.ts';
import type { ChangeRequest, Prisma, Role, Space } from '../generated/prisma/client.ts';
import type { Tx } from '../db/client.ts';
import { newId } from '../lib/ids.ts';
import { badRequest, conflict, notFound, parseInput } from '../lib/errors.ts';
import { applyChanges, insertPageVersions, writeRevision, type TreeNode } from './revisions.ts';
import { dbMergeReader, planThreeWayMerge, type MergeConflict, type MergeRevision } from './three-way.ts';
import { prefetchDiffNodes, writeTree, writeWholeTree } from './revision-tree.ts';
import type { SpaceAction } from '../auth/space-actions.ts';
import { prepareFileFetcher } from './content.ts';
import { requireEditable } from './spaces.ts';
import { lockSpaceAndChangeRequest, type SpaceLockMode } from '../db/locks.ts';
import { transaction } from '../db/transaction.ts';
import { recordEvent } from '../events/log.ts';
import { recordMovedPages } from './site-redirects.ts';

export const CHANGE_REQUEST_STATUSES = ['draft', 'open', 'archived', 'merged'] as const;
export type ChangeRequestStatus = (typeof CHANGE_REQUEST_STATUSES)[number];

export const ChangeRequestSubject = z.string().max(100);

export const CreateChangeRequestInput = z.strictObject({
  subject: ChangeRequestSubject.optional(),
  agentTaskId: z.string().min(1).max(256).optional(),
});

export const UpdateChangeRequestInput = z.strictObject({
  subject: ChangeRequestSubject.optional(),
  status: z
    .enum(CHANGE_REQUEST_STATUSES)
    .refine((s) => s !== 'merged', 'a change request becomes merged only by merging it (POST …/merge)')
    .optional(),
});

export const ChangeRequestListFilters = z.strictObject({
  /** Default `open` (contract). */
  status: z.enum(CHANGE_REQUEST_STATUSES).optional(),
  /** A user id: the author, or anyone who authored a revision of the change request. */
  contributor: z.string().min(1).max(256).optional(),
});

/** Interactive transactions that wait on row locks get more room than Prisma's 5 s default. */
const TX_OPTIONS = { maxWait: 15_000, timeout: 60_000 };

export type ResolvedChangeRequest = { space: Space; changeRequest: ChangeRequest; role: Role };

/** The last revision of main this change request is based on. */
export const lastBaseOf = (cr: Pick<ChangeRequest, 'revisionMergedAncestorId' | 'revisionInitialId'>) => cr.revisionMergedAncestorId ?? cr.revisionInitialId;

/** True when main moved since the change request's last base (never for a merged one). */
export function isOutdated(cr: Pick<ChangeRequest, 'status' | 'revisionMergedAncestorId' | 'revisionInitialId'>, spaceRevisionId: string | null) {
  return cr.status !== 'merged' && spaceRevisionId != null && spaceRevisionId !== lastBaseOf(cr);
}

const MAX_NUMBER = 2 ** 31 - 1;

/** `where` for a change request given by id or per-space number. */
export function changeRequestKey(spaceId: string, idOrNumber: string) {
  if (/^\d{1,10}$/.test(idOrNumber)) {
    const n = Number(idOrNumber);
    return { spaceId, number: n <= MAX_NUMBER ? n : -1 };
  }
  return { spaceId, id: idOrNumber };
}

/**
 * Load a change request (by id or number) in a space the caller may see, requiring `action` on
 * it (SPACE_ACTIONS, with its author as a fact): 404 when the space or the change request is not
 * visible, 403 when the action is not allowed.
 */
export async function resolveChangeRequest(ctx: DomainContext, spaceId: string, idOrNumber: string, action: SpaceAction = 'space:read'): Promise<ResolvedChangeRequest> {
  const space = await ctx.prisma.space.findUnique({ where: { id: spaceId } });
  await ctx.access.requireSpace(space, 'space:read');
  const changeRequest = await ctx.prisma.changeRequest.findFirst({ where: changeRequestKey(spaceId, idOrNumber) });
  if (!changeRequest) throw notFound('Change request');
  const role = await ctx.access.requireSpace(space, action, { authorId: changeRequest.createdById });
  return { space: space!, changeRequest, role };
}

// ------------------------------------------------------------------ create, list, update

export async function createChangeRequest(ctx: DomainContext, spaceId: string, raw: unknown): Promise<ChangeRequest> {
  const viewer = ctx.access.requireViewer();
  const space = await ctx.prisma.space.findUnique({ where: { id: spaceId } });
  await ctx.access.requireSpace(space, 'changeRequest:create');
  const input = parseInput(CreateChangeRequestInput, raw);
  return transaction(ctx.prisma, async (tx) => {
    // Row lock on the space: concurrent creations queue here and each gets the next number; the
    // current revision read under the same lock is the one a racing merge left behind.
    const rows = await tx.$queryRaw<Array<{ seq: number; revisionId: string | null }>>`
      UPDATE "Space" SET "changeRequestSeq" = "changeRequestSeq" + 1
      WHERE id = ${spaceId} AND "deletedAt" IS NULL
      RETURNING "changeRequestSeq" AS seq, "revisionId"`;
    if (!rows.length || !rows[0].revisionId) throw notFound('Space');
    const now = ctx.clock.now();
    const created = await tx.changeRequest.create({
      data: {
        id: newId('ChangeRequest'),
        spaceId,
        number: rows[0].seq,
        status: 'open',
        subject: input.subject ?? '',
        agentTaskId: input.agentTaskId ?? null,
        createdById: viewer.user.id,
        createdAt: now,
        updatedAt: now,
        revisionInitialId: rows[0].revisionId,
        revisionId: rows[0].revisionId,
      },
    });
    await recordEvent(tx, ctx, { type: 'change_request_opened', organizationId: space!.organizationId, objectId: created.id, payload: { spaceId, number: created.number, subject: created.subject, status: created.status } });
    return created;
  }, TX_OPTIONS);
}

/** The Prisma `where` of a space's change request list (filters validated; access is the caller's). */
export function changeRequestListWhere(spaceId: string, raw: unknown) {
  const f = parseInput(ChangeRequestListFilters, raw);
  return {
    spaceId,
    status: f.status ?? 'open',
    ...(f.contributor ? { OR: [{ createdById: f.contributor }, { revisions: { some: { createdById: f.contributor } } }] } : {}),
  } satisfies Prisma.ChangeRequestWhereInput;
}

export async function updateChangeRequest(ctx: DomainContext, spaceId: string, idOrNumber: string, raw: unknown): Promise<ChangeRequest> {
  ctx.access.requireViewer();
  const { space, changeRequest: cr } = await resolveChangeRequest(ctx, spaceId, idOrNumber, 'changeRequest:edit');
  const input = parseInput(UpdateChangeRequestInput, raw);
  return transaction(ctx.prisma, async (tx) => {
    const { current } = await lockChangeRequest(tx, spaceId, cr.id, 'share');
    if (input.status !== undefined && current.status === 'merged') {
      throw conflict('The change request is merged; its status cannot change');
    }
    const updated = await tx.changeRequest.update({
      where: { id: cr.id },
      data: {
        ...(input.subject !== undefined ? { subject: input.subject } : {}),
        ...(input.status !== undefined ? { status: input.status } : {}),
        updatedAt: ctx.clock.now(),
      },
    });
    const payload = { spaceId, number: updated.number, subject: updated.subject, status: updated.status, previousStatus: current.status };
    await recordEvent(
      tx,
      ctx,
      ...(input.subject !== undefined ? [{ type: 'change_request_updated' as const, organizationId: space.organizationId, objectId: cr.id, payload }] : []),
      ...(input.status !== undefined && input.status !== current.status ? [{ type: 'change_request_status_updated' as const, organizationId: space.organizationId, objectId: cr.id, payload }] : []),
    );
    return updated;
  }, TX_OPTIONS);
}

/** Lock the space (in `mode`), then the change request (db/locks.ts): main as locked and the change request. */
async function lockChangeRequest(tx: Tx, spaceId: string, id: string, mode: SpaceLockMode) {
  const { space, changeRequest } = await lockSpaceAndChangeRequest(tx, spaceId, id, mode);
  if (!space || space.deletedAt || !space.revisionId) throw notFound('Space');
  if (!changeRequest) throw notFound('Change request');
  return { main: { revisionId: space.revisionId, editMode: space.editMode }, current: changeRequest };
}

// ------------------------------------------------------------------ authoring

export type ContentChangeResult = Awaited<ReturnType<typeof applyChanges>>;

/**
 * Apply a content-change batch to the change request's head: one new revision of the change
 * request, under a row lock so concurrent batches apply one after the other.
 */
export async function applyChangeRequestContent(ctx: DomainContext, spaceId: string, idOrNumber: string, changes: unknown) {
  const viewer = ctx.access.requireViewer();
  const { space, changeRequest: cr } = await resolveChangeRequest(ctx, spaceId, idOrNumber, 'changeRequest:editContent');
  requireEditable(space);
  // Files named by URL are fetched once, before the transaction (no lock held during network
  // I/O, and a retried transaction does not fetch them again).
  const fetchFile = await prepareFileFetcher(ctx, changes);
  return transaction(ctx.prisma, async (tx) => {
    // Space in share mode first: this inserts revisions that point at the space (db/locks.ts).
    const { current } = await lockChangeRequest(tx, spaceId, cr.id, 'share');
    requireEditableChangeRequest(current);
    const result = await applyChanges(tx, {
      spaceId,
      baseRevisionId: current.revisionId,
      revertTargetRevisionId: lastBaseOf(current),
      changes,
      createdById: viewer.user.id,
      changeRequestId: current.id,
      storage: ctx.services.storage,
      fetchFile,
    });
    // A batch that changed nothing wrote no revision: the change request is left as it is.
    if (!result.changed) return { changeRequest: current, outcomes: result.outcomes, insertedFiles: result.insertedFiles, revision: result.revision, changed: false };
    const changeRequest = await tx.changeRequest.update({
      where: { id: current.id },
      data: { revisionId: result.revision.id, updatedAt: ctx.clock.now() },
    });
    await recordEvent(tx, ctx, { type: 'change_request_content_updated', organizationId: space.organizationId, objectId: cr.id, payload: { spaceId, number: cr.number, revisionId: result.revision.id, previousRevisionId: current.revisionId } });
    return { changeRequest, outcomes: result.outcomes, insertedFiles: result.insertedFiles, revision: result.revision, changed: true };
  }, TX_OPTIONS);
}

/** Content edits (batches, updates from main, imports) need an open or draft change request. */
export function requireEditableChangeRequest(cr: Pick<ChangeRequest, 'status'>) {
  if (cr.status === 'merged') throw conflict('The change request is merged; open a new one to change the content');
  if (cr.status === 'archived') throw conflict('The change request is archived; reopen it (status open or draft) to change its content');
}

// ------------------------------------------------------------------ merge and update

export type MergeOutcome<R extends 'merge' | 'update' = 'merge' | 'update'> = {
  result: R | 'conflicts';
  /** The resulting revision; on conflicts, the unchanged revision of the side that would have moved. */
  revision: string;
  changeRequest: ChangeRequest;
  conflicts: MergeConflict[];
};

/**
 * The three revisions of a merge without their legacy page lists, and the nodes where their trees
 * differ from the base in the node cache (one statement), so the planner's diffs and the result's
 * writeTree read nothing more. A revision stored before trees were (no `treeRoot`) gets its tree
 * stored from its JSON copy here.
 */
async function loadThree(tx: Tx, base: string, a: string, b: string): Promise<[MergeRevision, MergeRevision, MergeRevision]> {
  const ids = [...new Set([base, a, b])];
  const rows = await tx.revision.findMany({ where: { id: { in: ids } }, select: { id: true, treeRoot: true, fileIds: true, variables: true, reusableContents: true } });
  const byId = new Map(rows.map((r) => [r.id, r]));
  for (const id of ids) {
    const r = byId.get(id);
    if (!r) throw notFound('Revision');
    if (r.treeRoot === null) {
      const legacy = await tx.revision.findUniqueOrThrow({ where: { id }, select: { tree: true } });
      r.treeRoot = (await writeWholeTree(tx, legacy.tree as unknown as TreeNode[])).root;
    }
  }
  const [lb, la, lc] = [byId.get(base)!, byId.get(a)!, byId.get(b)!];
  await prefetchDiffNodes(tx, [
    [lb.treeRoot, la.treeRoot],
    [lb.treeRoot, lc.treeRoot],
  ]);
  return [lb, la, lc];
}

/**
 * Merge the change request into main. Needs `review`; refused on locked spaces; a merged or
 * archived change request cannot be merged (409).
 */
export async function mergeChangeRequest(ctx: DomainContext, spaceId: string, idOrNumber: string): Promise<MergeOutcome<'merge'>> {
  const viewer = ctx.access.requireViewer();
  const { space, changeRequest: cr } = await resolveChangeRequest(ctx, spaceId, idOrNumber, 'changeRequest:merge');
  requireEditable(space);
  return transaction(ctx.prisma, async (tx) => {
    // Lock order everywhere: space row, then change request row (db/locks.ts).
    const { main, current } = await lockChangeRequest(tx, spaceId, cr.id, 'update');
    requireEditable({ id: spaceId, editMode: main.editMode });
    if (current.status === 'merged') throw conflict('The change request is already merged');
    if (current.status === 'archived') throw conflict('The change request is archived; reopen it before merging');
    const [base, target, source] = await loadThree(tx, lastBaseOf(current), main.revisionId, current.revisionId);
    const plan = await planThreeWayMerge(dbMergeReader(tx), base, target, source, { spaceId, now: ctx.clock.now() });
    if (!plan.clean) return { result: 'conflicts', revision: main.revisionId, changeRequest: current, conflicts: plan.conflicts } as MergeOutcome<'merge'>;
    await insertPageVersions(tx, plan.newVersions, { unparsable: 'store' });
    const revision = await writeRevision(tx, {
      spaceId,
      parents: [main.revisionId, current.revisionId],
      type: 'merge',
      treeRoot: (await writeTree(tx, target.treeRoot, plan.changes)).root,
      fileIds: plan.fileIds,
      createdById: viewer.user.id,
      variables: plan.variables,
      reusableContents: plan.reusableContents,
    });
    await tx.space.update({ where: { id: spaceId }, data: { revisionId: revision.id } });
    const now = ctx.clock.now();
    // Old links keep working: moved pages get redirects on the sites showing the space.
    await recordMovedPages(tx, spaceId, main.revisionId, revision.id, now);
    const changeRequest = await tx.changeRequest.update({
      where: { id: current.id },
      data: { status: 'merged', revisionMergedId: revision.id, mergedAt: now, updatedAt: now },
    });
    await recordEvent(
      tx,
      ctx,
      { type: 'change_request_merged', organizationId: space.organizationId, objectId: cr.id, payload: { spaceId, number: cr.number, subject: cr.subject, revisionId: revision.id } },
      { type: 'space_content_updated', organizationId: space.organizationId, objectId: spaceId, payload: { revisionId: revision.id, previousRevisionId: main.revisionId, changeRequestId: cr.id } },
    );
    return { result: 'merge', revision: revision.id, changeRequest, conflicts: [] } as MergeOutcome<'merge'>;
  }, TX_OPTIONS);
}

/**
 * Pull main into the change request: a three-way merge with main as the source, written as an
 * `update` revision of the change request whose base becomes main. Needs `edit`.
 */
export async function updateChangeRequestFromMain(ctx: DomainContext, spaceId: string, idOrNumber: string): Promise<MergeOutcome<'update'>> {
  const viewer = ctx.access.requireViewer();
  const { space: spaceRow, changeRequest: cr } = await resolveChangeRequest(ctx, spaceId, idOrNumber, 'changeRequest:editContent');
  requireEditable(spaceRow);
  return transaction(ctx.prisma, async (tx) => {
    // Main cannot move while the space is held in share mode, so the update merges a stable main.
    const { main, current } = await lockChangeRequest(tx, spaceId, cr.id, 'share');
    requireEditableChangeRequest(current);
    const mainId = main.revisionId;
    if (mainId === lastBaseOf(current)) return { result: 'update', revision: current.revisionId, changeRequest: current, conflicts: [] } as MergeOutcome<'update'>;
    const [base, target, source] = await loadThree(tx, lastBaseOf(current), current.revisionId, mainId);
    const plan = await planThreeWayMerge(dbMergeReader(tx), base, target, source, { spaceId, now: ctx.clock.now() });
    if (!plan.clean) return { result: 'conflicts', revision: current.revisionId, changeRequest: current, conflicts: plan.conflicts } as MergeOutcome<'update'>;
    await insertPageVersions(tx, plan.newVersions, { unparsable: 'store' });
    const revision = await writeRevision(tx, {
      spaceId,
      parents: [current.revisionId, mainId],
      type: 'update',
      treeRoot: (await writeTree(tx, target.treeRoot, plan.changes)).root,
      fileIds: plan.fileIds,
      changeRequestId: current.id,
      createdById: viewer.user.id,
      variables: plan.variables,
      reusableContents: plan.reusableContents,
    });
    const changeRequest = await tx.changeRequest.update({
      where: { id: current.id },
      data: { revisionId: revision.id, revisionMergedAncestorId: mainId, updatedAt: ctx.clock.now() },
    });
    await recordEvent(tx, ctx, { type: 'change_request_content_updated', organizationId: spaceRow.organizationId, objectId: cr.id, payload: { spaceId, number: cr.number, revisionId: revision.id, previousRevisionId: current.revisionId, fromMainRevisionId: mainId } });
    return { result: 'update', revision: revision.id, changeRequest, conflicts: [] } as MergeOutcome<'update'>;
  }, TX_OPTIONS);
}

