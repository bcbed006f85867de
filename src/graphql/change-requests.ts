// Change requests: the ChangeRequest node, the space's change request list, the query by id or
// number, and one mutation per documented operation (create, update, merge, update from main,
// content batch). PDF exports: graphql/pdf-exports.ts.
import { keysetConnection } from './cursors.ts';
import { builder } from './builder.ts';
import { dropUndefined, loader, countsByKey, loadSpaceById, loadUserById } from './common.ts';
import { UserRef } from './users.ts';
import { ContentChangeOutcomeRef, FileRef, RevisionRef } from './content.ts';
import { loadRevisionById } from './content-loading.ts';
import { ImportContentSourceEnum, ImportJobRef } from './imports.ts';
import type { Context } from './context.ts';
import type { ChangeRequest } from '../generated/prisma/client.ts';
import {
  CHANGE_REQUEST_STATUSES,
  requireEditableChangeRequest,
  applyChangeRequestContent,
  changeRequestListWhere,
  createChangeRequest,
  isOutdated,
  mergeChangeRequest,
  resolveChangeRequest,
  updateChangeRequest,
  updateChangeRequestFromMain,
} from '../domain/change-requests.ts';
import { startImport, waitForImportJob } from '../domain/imports.ts';
import { badRequest, notFound } from '../lib/errors.ts';

export const ChangeRequestStatusEnum = builder.enumType('ChangeRequestStatus', {
  description: 'Lifecycle of a change request. `merged` is reached only by merging.',
  values: {
    draft: { description: 'Being written; not yet proposed for review.' },
    open: { description: 'Proposed for review and merge.' },
    archived: { description: 'Closed without merging; can be reopened.' },
    merged: { description: 'Merged into the space; final.' },
  } as const satisfies Record<(typeof CHANGE_REQUEST_STATUSES)[number], { description: string }>,
});

const ChangeRequestUrls = builder.simpleObject('ChangeRequestUrls', {
  description: 'Addresses of a change request.',
  fields: (t) => ({
    location: t.string({ description: 'Its REST address (GET /v1/spaces/{spaceId}/change-requests/{changeRequestId}).' }),
    app: t.string({ description: 'Its page in the web app (by number).' }),
  }),
});

const ChangeRequestPermissions = builder.simpleObject('ChangeRequestPermissions', {
  description: 'What the caller may do with the change request (computed by the rules the operations enforce).',
  fields: (t) => ({
    view: t.boolean({ description: 'Read it (any role on the space).' }),
    comment: t.boolean({ description: 'Comment on it (comment role or above).' }),
    edit: t.boolean({ description: 'Change subject and status (the author, or `edit` on the space).' }),
    editContent: t.boolean({ description: 'Author content, update from main (`edit`).' }),
    review: t.boolean({ description: 'Review it (review role or above).' }),
    merge: t.boolean({ description: '`review` on an unlocked space, change request neither merged nor archived.' }),
  }),
});

/** Open top-level comments per change request. */
function openCommentCount(ctx: Context, changeRequestId: string) {
  return loader<string, number>(ctx, 'changeRequest.openComments', async (ids) => {
    const rows = await ctx.prisma.comment.groupBy({
      by: ['changeRequestId'],
      where: { changeRequestId: { in: [...ids] }, parentId: null, status: 'open' },
      _count: { _all: true },
    });
    return countsByKey(ids, rows.map((r) => ({ key: r.changeRequestId!, count: r._count._all })));
  }).load(changeRequestId);
}

export const changeRequestUrls = (ctx: Context, cr: Pick<ChangeRequest, 'id' | 'spaceId' | 'number'>) => ({
  location: `${ctx.config.publicUrl}/v1/spaces/${cr.spaceId}/change-requests/${cr.id}`,
  app: `${ctx.config.appUrl}/s/${cr.spaceId}/~/changes/${cr.number}`,
});

export const ChangeRequestRef = builder.prismaNode('ChangeRequest', {
  id: { field: 'id' },
  description: 'Proposed edits to a space, on their own line of revisions, reviewed and merged.',
  // node(id:) finds only change requests of spaces you may read.
  findUnique: async (id, ctx) => {
    const cr = await ctx.prisma.changeRequest.findUnique({ where: { id }, select: { spaceId: true } });
    const space = cr ? await loadSpaceById(ctx, cr.spaceId) : null;
    if (!space || space.deletedAt || !(await ctx.access.spaceRole(space))) throw notFound('Change request');
    return { id };
  },
  fields: (t) => ({
    number: t.exposeInt('number', { description: 'Incremental number within the space; usable instead of the id.' }),
    status: t.expose('status', { type: ChangeRequestStatusEnum }),
    subject: t.exposeString('subject'),
    agentTaskId: t.exposeString('agentTaskId', { nullable: true }),
    createdBy: t.field({ type: UserRef, nullable: true, description: 'Its author; null when that user no longer exists.', resolve: (cr, _a, ctx) => loadUserById(ctx, cr.createdById) }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
    mergedAt: t.expose('mergedAt', { type: 'DateTime', nullable: true }),
    spaceId: t.exposeString('spaceId'),
    space: t.relation('space'),
    revisionId: t.exposeString('revisionId', { description: 'Id of the head revision of the change request.' }),
    revisionInitialId: t.exposeString('revisionInitialId', { description: 'Id of the space revision it was created from.' }),
    revisionMergedAncestorId: t.exposeString('revisionMergedAncestorId', { nullable: true, description: 'Main revision of the last update from main.' }),
    revisionMergedId: t.exposeString('revisionMergedId', { nullable: true, description: 'When merged, the revision the merge created.' }),
    revision: t.field({ type: RevisionRef, description: 'The head revision: the content of the change request.', resolve: (cr, _a, ctx) => revisionOrThrow(ctx, cr.revisionId) }),
    revisionInitial: t.field({ type: RevisionRef, description: 'The space revision it was created from.', resolve: (cr, _a, ctx) => revisionOrThrow(ctx, cr.revisionInitialId) }),
    revisionMergedAncestor: t.field({
      type: RevisionRef,
      nullable: true,
      description: 'The main revision of the last update from main; null before any update.',
      resolve: (cr, _a, ctx) => (cr.revisionMergedAncestorId ? loadRevisionById(ctx, cr.revisionMergedAncestorId) : null),
    }),
    revisionMerged: t.field({ type: RevisionRef, nullable: true, description: 'The revision its merge created; null until merged.', resolve: (cr, _a, ctx) => (cr.revisionMergedId ? loadRevisionById(ctx, cr.revisionMergedId) : null) }),
    outdated: t.boolean({
      description: 'True when main moved since the last base (revisionMergedAncestor, else revisionInitial); never for a merged change request.',
      resolve: async (cr, _a, ctx) => isOutdated(cr, (await loadSpaceById(ctx, cr.spaceId))?.revisionId ?? null),
    }),
    commentCount: t.int({
      description: 'Open top-level comments on the change request (REST `comments`); the threads are the `comments` connection.',
      resolve: (cr, _a, ctx) => openCommentCount(ctx, cr.id),
    }),
    urls: t.field({ type: ChangeRequestUrls, description: 'REST and app addresses.', resolve: (cr, _a, ctx) => changeRequestUrls(ctx, cr) }),
    permissions: t.field({
      type: ChangeRequestPermissions,
      description: 'What you may do with it.',
      resolve: async (cr, _a, ctx) => {
        const space = await loadSpaceById(ctx, cr.spaceId);
        return ctx.access.changeRequestPermissions(space ?? null, cr);
      },
    }),
  }),
});

async function revisionOrThrow(ctx: Context, id: string) {
  const rev = await loadRevisionById(ctx, id);
  if (!rev) throw new Error(`change request revision ${id} is missing`);
  return rev;
}

/** The change request a merge revision came from (the contract's `mergedFrom`), batched. */
function mergedFromOf(ctx: Context, revisionId: string) {
  return loader<string, ChangeRequest | null>(ctx, 'changeRequest.byMergedRevision', async (ids) => {
    const rows = await ctx.prisma.changeRequest.findMany({ where: { revisionMergedId: { in: [...ids] } } });
    const m = new Map(rows.map((r) => [r.revisionMergedId!, r]));
    return ids.map((id) => m.get(id) ?? null);
  }).load(revisionId);
}

builder.prismaObjectField('Revision', 'mergedFrom', (t) =>
  t.field({
    type: ChangeRequestRef,
    nullable: true,
    description: 'On `merge` revisions: the change request that was merged.',
    resolve: (r, _a, ctx) => (r.type === 'merge' ? mergedFromOf(ctx, r.id) : null),
  }),
);

// ------------------------------------------------------------------ reads

builder.prismaObjectField('Space', 'changeRequestList', (t) =>
  keysetConnection(t, {
    type: 'ChangeRequest',
    list: 'Space.changeRequestList',
    description: 'Change requests of the space, newest first (`changeRequests` is their count). `status` defaults to `open`. REST: GET /v1/spaces/{spaceId}/change-requests.',
    args: {
      status: t.arg({ type: ChangeRequestStatusEnum, description: 'Only change requests in this status; default `open`.' }),
      contributor: t.arg.string({ description: 'A user id: the author or anyone who authored a revision of it.' }),
    },
    resolve: async (page, space, args, ctx) => {
      await ctx.access.requireSpace(space, 'space:read');
      const filters = dropUndefined({ status: args.status ?? undefined, contributor: args.contributor ?? undefined });
      const { spaceId: _, ...where } = changeRequestListWhere(space.id, filters);
      const orderBy = [{ number: 'desc' as const }]; // `number` is unique within a space
      // Validates the cursor before the batch, so a bad one fails this field alone.
      page.prisma({ where, orderBy });
      // Every space of the request asking with the same arguments is answered by one statement
      // (a lateral join per space through the relation), so nested lists cost no N+1.
      const key = JSON.stringify([filters, page.selection, page.args.first, page.args.last, page.args.after, page.args.before]);
      return loader<string, ChangeRequest[]>(ctx, `space.changeRequestList:${key}`, async (ids) => {
        const rows = (await ctx.prisma.space.findMany({
          where: { id: { in: [...ids] } },
          select: { id: true, changeRequests: page.prisma({ where, orderBy }) },
        })) as unknown as Array<{ id: string; changeRequests: ChangeRequest[] }>;
        const bySpace = new Map(rows.map((r) => [r.id, r.changeRequests]));
        return ids.map((id) => bySpace.get(id) ?? []);
      }).load(space.id);
    },
    // Also runs alone (`changeRequestList { totalCount }` skips `resolve`): the same access rule.
    totalCount: async (space, args, ctx) => {
      await ctx.access.requireSpace(space, 'space:read');
      const filters = dropUndefined({ status: args.status ?? undefined, contributor: args.contributor ?? undefined });
      const { spaceId: _, ...where } = changeRequestListWhere(space.id, filters);
      return loader<string, number>(ctx, `space.changeRequestList.count:${JSON.stringify(filters)}`, async (ids) => {
        const rows = await ctx.prisma.changeRequest.groupBy({ by: ['spaceId'], where: { ...where, spaceId: { in: [...ids] } }, _count: { _all: true } });
        return countsByKey(ids, rows.map((r) => ({ key: r.spaceId, count: r._count._all })));
      }).load(space.id);
    },
  }),
);

builder.queryField('changeRequest', (t) =>
  t.prismaField({
    type: 'ChangeRequest',
    nullable: true,
    description: 'A change request by id or by its number in the space (read role on the space). REST: GET /v1/spaces/{spaceId}/change-requests/{changeRequestId}.',
    args: {
      spaceId: t.arg.id({ required: true, description: 'Space (`space_…`).' }),
      idOrNumber: t.arg.string({ required: true, description: 'Change request id (`cr_…`) or its number in the space (`12`).' }),
    },
    resolve: async (query, _r, args, ctx) => {
      const { changeRequest } = await resolveChangeRequest(ctx, String(args.spaceId), args.idOrNumber);
      return ctx.prisma.changeRequest.findUniqueOrThrow({ ...query, where: { id: changeRequest.id } });
    },
  }),
);

// ------------------------------------------------------------------ mutations

const ChangeRequestPayload = builder.simpleObject('ChangeRequestPayload', {
  description: 'Result of a change request mutation.',
  fields: (t) => ({ changeRequest: t.field({ type: ChangeRequestRef, description: 'The change request after the change.' }) }),
});

const MergeConflict = builder.simpleObject('ChangeRequestMergeConflict', {
  description: 'Why a merge or an update could not be done.',
  fields: (t) => ({
    pageId: t.string({ nullable: true, description: 'The page in conflict; null for revision-level values (variables, reusable content).' }),
    reason: t.string({ description: 'What conflicts, in words (e.g. both sides changed the page).' }),
  }),
});

const MergeResultEnum = builder.enumType('ChangeRequestMergeResult', {
  description: 'Outcome of a merge.',
  values: {
    merge: { description: 'Merged: the space now shows the change request’s content.' },
    conflicts: { description: 'Not merged; nothing changed. See `conflicts`, update from main and retry.' },
  } as const,
});
const UpdateResultEnum = builder.enumType('ChangeRequestUpdateResult', {
  description: 'Outcome of an update from main.',
  values: {
    update: { description: 'Updated: main’s changes are now in the change request (or there was nothing to pull).' },
    conflicts: { description: 'Not updated; nothing changed. See `conflicts`.' },
  } as const,
});

const MergeChangeRequestPayload = builder.simpleObject('MergeChangeRequestPayload', {
  description: 'Result of mergeChangeRequest.',
  fields: (t) => ({
    result: t.field({ type: MergeResultEnum, description: 'Whether it merged.' }),
    revision: t.string({ description: 'The merge revision (now the space revision); on conflicts the unchanged space revision.' }),
    conflicts: t.field({ type: [MergeConflict], description: 'What blocked the merge; empty when merged.' }),
    changeRequest: t.field({ type: ChangeRequestRef, description: 'The change request (status `merged` on success).' }),
  }),
});

const UpdateChangeRequestFromMainPayload = builder.simpleObject('UpdateChangeRequestFromMainPayload', {
  description: 'Result of updateChangeRequestFromMain.',
  fields: (t) => ({
    result: t.field({ type: UpdateResultEnum, description: 'Whether it updated.' }),
    revision: t.string({ description: 'The new head of the change request; on conflicts its unchanged head.' }),
    conflicts: t.field({ type: [MergeConflict], description: 'What blocked the update; empty when updated.' }),
    changeRequest: t.field({ type: ChangeRequestRef, description: 'The change request after the update.' }),
  }),
});

const ApplyChangeRequestContentChangesPayload = builder.simpleObject('ApplyChangeRequestContentChangesPayload', {
  description: 'Result of applyChangeRequestContentChanges.',
  fields: (t) => ({
    changeRequest: t.field({ type: ChangeRequestRef, description: 'The change request, with its new head.' }),
    revision: t.field({ type: RevisionRef, description: 'The new head revision; the current head when the batch changed nothing.' }),
    changed: t.boolean({ description: 'False when the batch changed nothing: no revision was written and the head did not move.' }),
    changes: t.field({ type: [ContentChangeOutcomeRef], description: 'One outcome per change, in the order sent.' }),
    insertedFiles: t.field({ type: [FileRef], description: 'Files created by insert_files changes.' }),
  }),
});

const target = (t: PothosSchemaTypes.InputFieldBuilder<any, 'InputObject'>) => ({
  spaceId: t.id({ required: true, description: 'Space (`space_…`).' }),
  changeRequestId: t.string({ required: true, description: 'Change request id or number.' }),
});

const CreateChangeRequestInput = builder.inputType('CreateChangeRequestInput', {
  description: 'The change request to open.',
  fields: (t) => ({
    spaceId: t.id({ required: true, description: 'Space (`space_…`).' }),
    subject: t.string({ description: 'At most 100 characters.' }),
    agentTaskId: t.string({ description: 'Id of an agent task to implement (stored).' }),
  }),
});
const UpdateChangeRequestInput = builder.inputType('UpdateChangeRequestInput', {
  description: 'The change request and what to change; omitted fields are kept.',
  fields: (t) => ({ ...target(t), subject: t.string({ description: 'New subject, at most 100 characters.' }), status: t.field({ type: ChangeRequestStatusEnum, description: 'draft, open or archived.' }) }),
});
const ChangeRequestTargetInput = (name: string) => builder.inputType(name, { description: 'Names one change request.', fields: (t) => target(t) });
const ApplyChangeRequestContentChangesInput = builder.inputType('ApplyChangeRequestContentChangesInput', {
  description: 'The change request and the batch of changes.',
  fields: (t) => ({
    ...target(t),
    changes: t.field({
      type: ['JSON'],
      required: true,
      description: '1 to 50 changes of the official batch: insert_page, update_page, delete_page, revert_page, insert_files.',
    }),
  }),
});

const ImportChangeRequestContentPayload = builder.simpleObject('ImportChangeRequestContentPayload', {
  description: 'Result of importChangeRequestContent.',
  fields: (t) => ({
    importJob: t.field({ type: ImportJobRef, description: 'The import job; poll `importJob(id:)` while it is pending or running.' }),
    revision: t.field({ type: RevisionRef, description: 'The revision the import wrote when it finished in time, else the current head.' }),
  }),
});

const ImportChangeRequestContentInput = builder.inputType('ImportChangeRequestContentInput', {
  description: 'The change request and what to import.',
  fields: (t) => ({
    ...target(t),
    url: t.string({ required: true, description: 'Public http(s) URL of the content to import.' }),
    source: t.field({ type: ImportContentSourceEnum, required: true, description: 'What kind of content the URL serves.' }),
    waitSeconds: t.int({ description: 'Wait up to this many seconds (0–20) for the job to finish.' }),
  }),
});

builder.mutationFields((t) => ({
  importChangeRequestContent: t.field({
    type: ImportChangeRequestContentPayload,
    description: 'Import a URL into the change request as new pages (a background job; needs `edit`). REST: POST /v1/spaces/{spaceId}/change-requests/{changeRequestId}/content/import (waits IMPORT_WAIT_SECONDS, 20 s, then answers 202 with the job to poll).',
    args: { input: t.arg({ type: ImportChangeRequestContentInput, required: true, description: 'The change request and what to import.' }) },
    resolve: async (_r, { input }, ctx) => {
      const asked = input.waitSeconds ?? 0;
      if (asked < 0 || asked > 20) throw badRequest('waitSeconds', 'must be between 0 and 20');
      const wait = Math.min(asked, ctx.config.imports.waitSeconds);
      const { changeRequest } = await resolveChangeRequest(ctx, String(input.spaceId), input.changeRequestId, 'changeRequest:editContent');
      requireEditableChangeRequest(changeRequest);
      const job = await startImport(ctx, { spaceId: changeRequest.spaceId, changeRequestId: changeRequest.id }, { url: input.url, source: input.source });
      const done = wait > 0 ? await waitForImportJob(ctx, job.id, wait * 1000) : job;
      return { importJob: done, revision: await revisionOrThrow(ctx, done.revisionId ?? job.baseRevisionId) };
    },
  }),
  createChangeRequest: t.field({
    type: ChangeRequestPayload,
    description: 'Open a change request on the space (needs `edit`). REST: POST /v1/spaces/{spaceId}/change-requests (201).',
    args: { input: t.arg({ type: CreateChangeRequestInput, required: true, description: 'The space and the subject.' }) },
    resolve: async (_r, { input }, ctx) => {
      const { spaceId, ...rest } = input;
      return { changeRequest: await createChangeRequest(ctx, String(spaceId), dropUndefined(rest)) };
    },
  }),
  updateChangeRequest: t.field({
    type: ChangeRequestPayload,
    description: 'Change subject or status (the author, or `edit`). REST: PATCH /v1/spaces/{spaceId}/change-requests/{changeRequestId}.',
    args: { input: t.arg({ type: UpdateChangeRequestInput, required: true, description: 'The change request and what to change.' }) },
    resolve: async (_r, { input }, ctx) => {
      const { spaceId, changeRequestId, subject, status } = input;
      return { changeRequest: await updateChangeRequest(ctx, String(spaceId), changeRequestId, dropUndefined({ subject: subject ?? undefined, status: status ?? undefined })) };
    },
  }),
  mergeChangeRequest: t.field({
    type: MergeChangeRequestPayload,
    description: 'Three-way merge into main (needs `review`, an unlocked space, and a change request neither merged nor archived); `conflicts` changes nothing. REST: POST /v1/spaces/{spaceId}/change-requests/{changeRequestId}/merge.',
    args: { input: t.arg({ type: ChangeRequestTargetInput('MergeChangeRequestInput'), required: true, description: 'The change request to merge.' }) },
    resolve: (_r, { input }, ctx) => mergeChangeRequest(ctx, String(input.spaceId), input.changeRequestId),
  }),
  updateChangeRequestFromMain: t.field({
    type: UpdateChangeRequestFromMainPayload,
    description: 'Pull main into the change request (needs `edit`); `conflicts` changes nothing. REST: POST /v1/spaces/{spaceId}/change-requests/{changeRequestId}/update.',
    args: { input: t.arg({ type: ChangeRequestTargetInput('UpdateChangeRequestFromMainInput'), required: true, description: 'The change request to update.' }) },
    resolve: (_r, { input }, ctx) => updateChangeRequestFromMain(ctx, String(input.spaceId), input.changeRequestId),
  }),
  applyChangeRequestContentChanges: t.field({
    type: ApplyChangeRequestContentChangesPayload,
    description: 'Apply a batch of content changes to the change request as one new revision (needs `edit`). REST: POST /v1/spaces/{spaceId}/change-requests/{changeRequestId}/content.',
    args: { input: t.arg({ type: ApplyChangeRequestContentChangesInput, required: true, description: 'The change request and the changes.' }) },
    resolve: async (_r, { input }, ctx) => {
      const r = await applyChangeRequestContent(ctx, String(input.spaceId), input.changeRequestId, input.changes);
      const cr = r.changeRequest;
      const files = r.insertedFiles.length ? await ctx.prisma.file.findMany({ where: { id: { in: r.insertedFiles.map((f) => f.id) } } }) : [];
      const byId = new Map(files.map((f) => [f.id, f]));
      return {
        changeRequest: cr,
        revision: r.revision,
        changed: r.changed,
        changes: r.outcomes.map((outcome) => ({ outcome, spaceId: cr.spaceId, revisionId: r.revision.id, changeRequestId: cr.id })),
        insertedFiles: r.insertedFiles.map((f) => byId.get(f.id)!).filter(Boolean),
      };
    },
  }),
}));
