// PDF export of a change request. Rendering is CPU work that grows with the
// content, so it never runs on the request path: an export is a row (PdfExport) with a state,
// rendered by the `renderPdfExport` job in a worker thread within the budgets of
// `config.pdfExport` (time, bytes, heap). A render over budget marks the export failed with the
// reason and stores nothing.
//
// - One export per change request head revision and scope (all pages, a page and its
//   descendants, a page alone): asking again returns it (unique key; concurrent askers meet on
//   it). When an export completes, older finished exports of the same scope are dropped (their
//   bytes are swept by cleanup's sweepOrphanFiles).
// - Starting needs the edit role on the space (startPdfExport, the POST). The contract's GET
//   (getChangeRequestPdf) returns the export of the head for any reader and writes nothing for
//   them; for an editor it also starts one when there is none. A failed export is restarted only
//   by the POST (the GET would otherwise re-run a render known to fail on every call).
import { z } from 'zod';
import type { DomainContext, TaskDeps } from './context.ts';
import type { PdfExport } from '../generated/prisma/client.ts';
import { organizationQueue, type GiveUpReason } from '../jobs.ts';
import { newId } from '../lib/ids.ts';
import { badRequest, forbidden, notFound, parseInput } from '../lib/errors.ts';
import { transaction } from '../db/transaction.ts';
import { loadRevisionTree, walkTree, type TreeNode } from './revisions.ts';
import { resolveChangeRequest } from './change-requests.ts';
import { renderPdfInWorker, PdfRenderError } from '../lib/pdf-thread.ts';
import type { PdfPage } from '../lib/pdf.ts';

export const ChangeRequestPdfInput = z.strictObject({
  only: z.boolean().optional(),
  page: z.string().min(1).max(256).optional(),
});

/** Most pages one PDF export renders (checked when it is asked for). */
export const PDF_MAX_PAGES = 500;

export const PDF_EXPORT_TASK = 'renderPdfExport';

/** Pages whose bodies the job loads and hands to the render thread at a time. */
const PDF_BATCH_PAGES = 20;

/** Where an export's PDF is served (src/http/downloads.ts). */
export const pdfExportUrl = (ctx: Pick<DomainContext, 'config'>, exportId: string) => `${ctx.config.publicUrl}/files/pdf/${exportId}`;

/** `scope` of an export: which pages it holds. */
function scopeOf(input: { page?: string; only?: boolean }) {
  return input.page ? (input.only ? `${input.page}/only` : input.page) : '';
}

function parseScope(scope: string): { page?: string; only: boolean } {
  if (!scope) return { only: false };
  const only = scope.endsWith('/only');
  return { page: only ? scope.slice(0, -'/only'.length) : scope, only };
}

/** The nodes a scope exports, or a message saying why there are none. */
function nodesOf(tree: TreeNode[], scope: { page?: string; only: boolean }): TreeNode[] | string {
  if (!scope.page) return tree;
  const found = [...walkTree(tree)].find((e) => e.node.id === scope.page);
  if (!found) return `no page ${scope.page} in this change request`;
  return [scope.only ? { ...found.node, pages: [] } : found.node];
}

/**
 * Validate the request against the change request's head (its tree only: no page bodies are
 * read on the request path): 404/403 by the access rules, 400 naming `page` or `only`.
 */
async function resolveExportTarget(ctx: DomainContext, spaceId: string, idOrNumber: string, raw: unknown) {
  const resolved = await resolveChangeRequest(ctx, spaceId, idOrNumber, 'space:read');
  const input = parseInput(ChangeRequestPdfInput, raw);
  if (input.only && !input.page) throw badRequest('page', 'required when only is true');
  const nodes = nodesOf(await loadRevisionTree(ctx.prisma, resolved.changeRequest.revisionId), { page: input.page, only: input.only ?? false });
  if (typeof nodes === 'string') throw badRequest('page', nodes);
  const count = [...walkTree(nodes)].length;
  if (count > PDF_MAX_PAGES) throw badRequest('page', `at most ${PDF_MAX_PAGES} pages per PDF; export a part of the tree with page`);
  return { ...resolved, key: { changeRequestId: resolved.changeRequest.id, revisionId: resolved.changeRequest.revisionId, scope: scopeOf(input) } };
}

type ExportKey = { changeRequestId: string; revisionId: string; scope: string };

/** Create the export of `key` (and its job) unless it exists; `restartFailed` re-queues a failed one. */
async function ensureExport(ctx: DomainContext, space: { id: string; organizationId: string }, key: ExportKey, opts: { restartFailed: boolean }): Promise<PdfExport> {
  const viewer = ctx.access.requireViewer();
  return transaction(ctx.prisma, async (tx) => {
    // ON CONFLICT DO NOTHING: two askers at once create one export and one job.
    const [created] = await tx.pdfExport.createManyAndReturn({
      data: [{ id: newId('PdfExport'), spaceId: space.id, ...key, createdById: viewer.user.id, createdAt: ctx.clock.now() }],
      skipDuplicates: true,
    });
    if (created) {
      await ctx.services.jobs.enqueue(tx, PDF_EXPORT_TASK, { exportId: created.id }, { maxAttempts: 3, queueName: organizationQueue(space.organizationId) });
      return created;
    }
    const existing = await tx.pdfExport.findUniqueOrThrow({ where: { changeRequestId_revisionId_scope: key } });
    if (!opts.restartFailed || existing.state !== 'failed') return existing;
    const restarted = await tx.pdfExport.updateManyAndReturn({
      where: { id: existing.id, state: 'failed' },
      data: { state: 'pending', error: null, finishedAt: null, createdById: viewer.user.id, createdAt: ctx.clock.now() },
    });
    if (restarted[0]) await ctx.services.jobs.enqueue(tx, PDF_EXPORT_TASK, { exportId: existing.id }, { maxAttempts: 3, queueName: organizationQueue(space.organizationId) });
    return restarted[0] ?? existing;
  });
}

/**
 * Start (or return) the export of the change request's head (the POST; needs `edit`). A failed
 * export of the same head and pages is started again.
 */
export async function startPdfExport(ctx: DomainContext, spaceId: string, idOrNumber: string, raw: unknown): Promise<PdfExport> {
  const { space, key } = await resolveExportTarget(ctx, spaceId, idOrNumber, raw);
  await ctx.access.requireSpace(space, 'changeRequest:exportPdf');
  return ensureExport(ctx, space, key, { restartFailed: true });
}

/**
 * The contract's GET: the export of the change request's head, in whatever state. Readers get
 * only an existing one and nothing is written for them (403 when there is none: starting one
 * needs `edit`); an editor's call starts one when there is none.
 */
export async function getChangeRequestPdf(ctx: DomainContext, spaceId: string, idOrNumber: string, raw: unknown): Promise<PdfExport> {
  const { space, key } = await resolveExportTarget(ctx, spaceId, idOrNumber, raw);
  const existing = await ctx.prisma.pdfExport.findUnique({ where: { changeRequestId_revisionId_scope: key } });
  if (existing) return existing;
  if (!(await ctx.access.canSpace(space, 'changeRequest:exportPdf'))) throw forbidden('No PDF of this change request has been exported yet; exporting one requires the edit role on the space');
  return ensureExport(ctx, space, key, { restartFailed: false });
}

/** An export, for a caller who may read its space (404 otherwise). */
export async function getPdfExport(ctx: DomainContext, id: string): Promise<PdfExport> {
  ctx.access.requireViewer();
  const found = await ctx.prisma.pdfExport.findUnique({ where: { id } });
  if (!found) throw notFound('PDF export');
  const space = await ctx.prisma.space.findUnique({ where: { id: found.spaceId } });
  await ctx.access.requireSpace(space, 'space:read');
  return found;
}

// ------------------------------------------------------------------ the job

/** The `renderPdfExport` task (src/tasks.ts): payload `{ exportId }`. Idempotent. */
export async function renderPdfExportTask(payload: unknown, deps: TaskDeps): Promise<void> {
  const id = (payload as { exportId?: unknown })?.exportId;
  if (typeof id !== 'string') return;
  const started = await deps.prisma.pdfExport.updateManyAndReturn({ where: { id, state: { in: ['pending', 'running'] } }, data: { state: 'running' } });
  const exp = started[0];
  if (!exp) return; // finished, or gone with its change request
  const cr = await deps.prisma.changeRequest.findUnique({ where: { id: exp.changeRequestId }, include: { space: { select: { title: true } } } });
  if (!cr) return;
  const nodes = nodesOf(await loadRevisionTree(deps.prisma, exp.revisionId), parseScope(exp.scope));
  if (typeof nodes === 'string') return finish(deps, id, { state: 'failed', error: nodes });
  const entries = [...walkTree(nodes)];
  // The bodies are loaded a batch at a time, as the thread asks for them: a 500-page export of
  // large pages never sits in this process's heap at once (only the pages exported are read).
  let at = 0;
  const nextBatch = async (): Promise<PdfPage[] | null> => {
    if (at >= entries.length) return null;
    const batch = entries.slice(at, (at += PDF_BATCH_PAGES));
    const rows = await deps.prisma.pageVersion.findMany({ where: { id: { in: batch.map((e) => e.node.v) } }, select: { id: true, title: true, kind: true, markdown: true } });
    const versions = new Map(rows.map((r) => [r.id, r]));
    return batch.map(({ node, depth }) => {
      const v = versions.get(node.v)!;
      return { title: v.title, markdown: v.kind === 'document' ? v.markdown : '', depth };
    });
  };
  const title = cr.subject || `${cr.space.title} — change request #${cr.number}`;
  let pdf: Buffer;
  try {
    pdf = await renderPdfInWorker(nextBatch, { title, pageCount: entries.length }, deps.config.pdfExport);
  } catch (err) {
    // Over a budget, or content the renderer cannot lay out: the same on every attempt, so the
    // export fails now (no retry) with the reason.
    if (err instanceof PdfRenderError) {
      deps.log.warn({ exportId: id, reason: err.reason, pages: entries.length }, 'PDF export failed');
      return finish(deps, id, { state: 'failed', error: err.message });
    }
    throw err;
  }
  // Bytes first, then the row: an export is complete only with its PDF stored; bytes whose row
  // never says so are swept.
  const storageKey = `pdf/${id}.pdf`;
  await deps.services.storage.put(storageKey, pdf, 'application/pdf');
  await finish(deps, id, { state: 'complete', storageKey, byteSize: pdf.length, pageCount: entries.length }, exp);
}

async function finish(
  deps: TaskDeps,
  id: string,
  data: { state: 'failed'; error: string } | { state: 'complete'; storageKey: string; byteSize: number; pageCount: number },
  exp?: PdfExport,
) {
  await transaction(deps.prisma, async (tx) => {
    const r = await tx.pdfExport.updateMany({ where: { id, state: 'running' }, data: { ...data, finishedAt: deps.clock.now() } });
    // The newest complete export of a scope replaces the older finished ones.
    if (r.count && exp && data.state === 'complete') {
      await tx.pdfExport.deleteMany({ where: { changeRequestId: exp.changeRequestId, scope: exp.scope, id: { not: id }, state: { in: ['complete', 'failed'] }, createdAt: { lte: exp.createdAt } } });
    }
  });
}

/** The queue gave the job up (its worker died every attempt, or storage/database failed): failed. */
export async function giveUpPdfExport(payload: unknown, deps: TaskDeps, reason: GiveUpReason): Promise<void> {
  const id = (payload as { exportId?: unknown })?.exportId;
  if (typeof id !== 'string') return;
  const error =
    reason.cause === 'worker-lost'
      ? `The export was interrupted ${reason.attempts} ${reason.attempts === 1 ? 'time' : 'times'} (the worker running it stopped) and was given up`
      : `The export failed unexpectedly ${reason.attempts} ${reason.attempts === 1 ? 'time' : 'times'} and was given up`;
  await deps.prisma.pdfExport.updateMany({ where: { id, state: { in: ['pending', 'running'] } }, data: { state: 'failed', error, finishedAt: deps.clock.now() } });
}
