// Imports: `POST SPACE/content/import {url, source}` fetches a URL in a background job and turns
// it into pages and files, written as ONE new revision on top of the target's current revision.
//
// - `startImport` checks access and input, creates the ImportJob row and enqueues the job in the
//   same transaction (a job exists exactly when its row does).
// - The `importContent` task fetches with `safeFetch` (private and loopback addresses refused
//   unless `config.allowPrivateFetch`) and converts with the importers, both in a worker thread
//   with a deadline (lib/import-thread.ts; archives within their caps, lib/zip-reader.ts), refuses
//   a page over the page limit, stores file bytes, then in one
//   transaction locks the target (space row, or change request row), writes page versions, files
//   and the revision, moves the target to it and marks the job complete. Any failure marks the job
//   failed and changes no content. Re-running a finished job does nothing. A job whose worker
//   process died is retried (src/jobs.ts); after its last attempt it is marked failed.
import { z } from 'zod';
import type { DomainContext } from './context.ts';
import type { ImportJob, Prisma } from '../generated/prisma/client.ts';
import type { Tx } from '../db/client.ts';
import { organizationQueue, type GiveUpReason } from '../jobs.ts';
import type { TaskDeps } from './context.ts';
import { AppError, badRequest, notFound, parseInput } from '../lib/errors.ts';
import { newId } from '../lib/ids.ts';
import { requireEditable, requireSpaceById } from './spaces.ts';
import { imageDimensions, insertPageVersions, PAGE_MARKDOWN_MAX, slugify, writeRevision, type TreeNode } from './revisions.ts';
import { revisionTree } from './revision-tree.ts';
import { requireFetchableUrl, FetchGuardError } from '../lib/url-guard.ts';
import { ImportError, type ConvertedImport, type ImportedPage } from '../lib/importers.ts';
import { convertInWorker } from '../lib/import-thread.ts';
import { codeRanges } from '../lib/markdown.ts';
import { transaction } from '../db/transaction.ts';
import { jobActor, recordEvent, type EventInput } from '../events/log.ts';
import { lockImportJob, lockSpace, lockSpaceAndChangeRequest } from '../db/locks.ts';

/** The model's values (GraphQL); REST's `github-wiki` spelling is translated in rest/. */
export const IMPORT_SOURCES = ['website', 'docx', 'markdown', 'html', 'zip', 'confluence', 'github_wiki', 'notion', 'google_docs'] as const;
export type ImportSource = (typeof IMPORT_SOURCES)[number];

export const ImportContentInput = z.strictObject({
  url: z.string().url().max(2048),
  source: z.enum(IMPORT_SOURCES),
});

export type ImportTarget = { spaceId: string; changeRequestId?: string };

// The converted shapes live with the converters (importers.ts); re-exported for callers.
export { ImportError, type ConvertedImport, type ImportedFile, type ImportedPage } from '../lib/importers.ts';

// ------------------------------------------------------------------ starting and watching

/** Create the job (and enqueue it) for a caller who may edit the target. */
export async function startImport(ctx: DomainContext, target: ImportTarget, raw: unknown): Promise<ImportJob & { baseRevisionId: string }> {
  const viewer = ctx.access.requireViewer();
  const space = await requireSpaceById(ctx, target.spaceId, 'space:editContent');
  requireEditable(space);
  const input = parseInput(ImportContentInput, raw);
  if (!SUPPORTED_IMPORT_SOURCES.includes(input.source)) {
    throw badRequest('source', `importing from this source is not supported here; use one of ${SUPPORTED_IMPORT_SOURCES.join(', ')}`);
  }
  try {
    await requireFetchableUrl(input.url, { allowPrivate: ctx.config.allowPrivateFetch });
  } catch (e) {
    if (e instanceof FetchGuardError) throw badRequest('url', e.message);
    throw e;
  }
  let baseRevisionId = space.revisionId;
  if (target.changeRequestId) {
    const cr = await ctx.prisma.changeRequest.findFirst({ where: { id: target.changeRequestId, spaceId: space.id } });
    if (!cr) throw notFound('Change request');
    if (cr.status !== 'open' && cr.status !== 'draft') throw new AppError('CONFLICT', `The change request is ${cr.status}; only open and draft change requests can be edited`);
    baseRevisionId = cr.revisionId;
  }
  if (!baseRevisionId) throw notFound('Revision');
  const job = await transaction(ctx.prisma, async (tx) => {
    const created = await tx.importJob.create({
      data: {
        id: newId('ImportJob'),
        spaceId: space.id,
        changeRequestId: target.changeRequestId ?? null,
        url: input.url,
        source: input.source,
        createdById: viewer.user.id,
        createdAt: ctx.clock.now(),
      },
    });
    await ctx.services.jobs.enqueue(tx, 'importContent', { jobId: created.id }, { maxAttempts: 3, queueName: organizationQueue(space.organizationId) });
    await recordEvent(tx, ctx, { type: 'import_started', organizationId: space.organizationId, objectId: created.id, payload: { spaceId: space.id, changeRequestId: created.changeRequestId, importSource: created.source } });
    return created;
  });
  return { ...job, baseRevisionId };
}

/** An import job of a space the caller may edit. */
export async function getImportJob(ctx: DomainContext, id: string): Promise<ImportJob> {
  ctx.access.requireViewer();
  const job = await ctx.prisma.importJob.findUnique({ where: { id } });
  if (!job) throw notFound('Import job');
  await requireSpaceById(ctx, job.spaceId, 'space:editContent');
  return job;
}

/** Poll the job row until it is finished or `timeoutMs` passed (works across instances). */
export async function waitForImportJob(ctx: Pick<DomainContext, 'prisma'>, id: string, timeoutMs: number): Promise<ImportJob> {
  const deadline = Date.now() + timeoutMs;
  let delay = 50;
  for (;;) {
    const job = await ctx.prisma.importJob.findUniqueOrThrow({ where: { id } });
    if (job.state === 'complete' || job.state === 'failed' || Date.now() >= deadline) return job;
    await new Promise((r) => setTimeout(r, Math.min(delay, Math.max(0, deadline - Date.now()))));
    delay = Math.min(delay * 2, 500);
  }
}

// ------------------------------------------------------------------ the job

/** The `importContent` task (src/tasks.ts): payload `{ jobId }`. */
export async function importContentTask(payload: unknown, deps: TaskDeps) {
  const jobId = (payload as { jobId?: unknown })?.jobId;
  if (typeof jobId === 'string') await runImportJob(deps, jobId);
}

/**
 * The queue gave the job up after its last attempt (see src/jobs.ts): a job still pending or
 * running is marked failed with the reason, and no content changes (an attempt writes its content
 * in one transaction, together with `complete`).
 */
export async function giveUpImportJob(payload: unknown, deps: TaskDeps, reason: GiveUpReason): Promise<void> {
  const jobId = (payload as { jobId?: unknown })?.jobId;
  if (typeof jobId !== 'string') return;
  const error =
    reason.cause === 'worker-lost'
      ? `The import was interrupted ${reason.attempts} ${reason.attempts === 1 ? 'time' : 'times'} (the worker running it stopped) and was given up`
      : `The import failed unexpectedly ${reason.attempts} ${reason.attempts === 1 ? 'time' : 'times'} and was given up`;
  const r = await transaction(deps.prisma, async (tx) => {
    const updated = await tx.importJob.updateMany({
      where: { id: jobId, state: { in: ['pending', 'running'] } },
      data: { state: 'failed', error, finishedAt: deps.clock.now() },
    });
    const job = updated.count ? await tx.importJob.findUnique({ where: { id: jobId } }) : null;
    if (job) await recordImportEvent(tx, deps, job, 'import_failed', { givenUp: true });
    return updated;
  });
  if (r.count) deps.log.warn({ jobId, cause: reason.cause, attempts: reason.attempts }, 'import job given up');
}

export async function runImportJob(deps: TaskDeps, jobId: string): Promise<void> {
  const job = await deps.prisma.importJob.findUnique({ where: { id: jobId } });
  if (!job || job.state === 'complete' || job.state === 'failed') return;
  await transaction(deps.prisma, async (tx) => {
    const r = await tx.importJob.updateMany({ where: { id: jobId, state: { in: ['pending', 'running'] } }, data: { state: 'running' } });
    if (r.count) await recordImportEvent(tx, deps, job, 'import_running');
  });
  try {
    const converted = await convertImport(job.source as ImportSource, job.url, deps.config);
    if (converted.pages.length === 0 && converted.files.length === 0) throw new ImportError('Nothing to import was found at this URL');
    // Before anything is stored; checked again on the final markdown (links rewritten) in writeImport.
    const walk = (list: ImportedPage[]): void => list.forEach((p) => (requirePageSize(p, p.markdown), walk(p.children)));
    walk(converted.pages);
    // Bytes first (outside the transaction); an aborted import leaves only unreferenced blobs.
    const files = converted.files.map((f) => {
      const id = newId('File');
      const dims = imageDimensions(f.data);
      return { ...f, id, storageKey: `files/${job.spaceId}/${id}`, width: dims?.width ?? null, height: dims?.height ?? null };
    });
    for (const f of files) await deps.services.storage.put(f.storageKey, f.data, f.contentType);
    await transaction(
      deps.prisma,
      (tx) => writeImport(tx, deps, job, converted.pages, files, converted.totalResources),
      { timeout: 60_000, maxWait: 10_000 },
    );
  } catch (e) {
    const expected = e instanceof ImportError || e instanceof AppError;
    if (!expected) deps.log.error({ err: e, jobId }, 'import failed unexpectedly');
    await transaction(deps.prisma, async (tx) => {
      const r = await tx.importJob.updateMany({
        where: { id: jobId, state: { in: ['pending', 'running'] } },
        data: { state: 'failed', error: expected ? (e as Error).message : 'The import failed unexpectedly', finishedAt: deps.clock.now() },
      });
      if (r.count) await recordImportEvent(tx, deps, job, 'import_failed');
    });
  }
}

type StoredFile = { id: string; path: string; name: string; contentType: string; data: Buffer; storageKey: string; width: number | null; height: number | null };

async function writeImport(tx: Tx, deps: TaskDeps, job: ImportJob, pages: ImportedPage[], files: StoredFile[], totalResources: number) {
  // Lock order (db/locks.ts): the space (share mode for a change request, whose revisions point
  // at it; update mode for main), then the change request, then the job row — a second worker
  // running the same job waits there, then sees it finished.
  let baseRevisionId: string | null;
  if (job.changeRequestId) {
    const { changeRequest: cr } = await lockSpaceAndChangeRequest(tx, job.spaceId, job.changeRequestId, 'share');
    const state = await lockImportJob(tx, job.id);
    if (!state || state === 'complete' || state === 'failed') return;
    if (!cr) throw new ImportError('The change request no longer exists');
    if (cr.status !== 'open' && cr.status !== 'draft') throw new ImportError(`The change request is ${cr.status}`);
    baseRevisionId = cr.revisionId;
  } else {
    const space = await lockSpace(tx, job.spaceId, 'update');
    const state = await lockImportJob(tx, job.id);
    if (!state || state === 'complete' || state === 'failed') return;
    if (!space || space.deletedAt) throw new ImportError('The space no longer exists');
    if (space.editMode === 'locked') throw new ImportError('The space is locked (editMode: locked)');
    baseRevisionId = space.revisionId;
  }
  if (!baseRevisionId) throw new ImportError('The target has no revision');
  // The base's tree and its top-level slugs only: no page body of the base is read.
  const baseRevision = await tx.revision.findUnique({ where: { id: baseRevisionId }, select: { treeRoot: true, tree: true, fileIds: true, variables: true, reusableContents: true } });
  if (!baseRevision) throw new ImportError('The target has no revision');
  const baseTree = await revisionTree(tx, baseRevision);

  // Ids for every imported page and file first, so links between them resolve whatever the order.
  const targets = new Map<string, string>();
  for (const f of files) targets.set(normalizeJoin('', f.path), `/files/${f.id}`);
  type Assigned = ImportedPage & { pageId: string; kids: Assigned[] };
  const assign = (list: ImportedPage[]): Assigned[] =>
    list.map((p): Assigned => {
      const pageId = newId('Page');
      if (p.sourcePath) targets.set(normalizeJoin('', p.sourcePath), `/pages/${pageId}`);
      return { ...p, pageId, kids: assign(p.children) };
    });
  const assigned = assign(pages);

  const now = deps.clock.now();
  const versions: Prisma.PageVersionCreateManyInput[] = [];
  const markdownOf = (p: Assigned) => requirePageSize(p, rewriteLinks(p.markdown, p.sourcePath, targets, new URL(job.url).origin, p.codeRanges ?? []));
  const build = (list: Assigned[], taken: Set<string>): TreeNode[] =>
    list.map((p) => {
      let slug = slugify(p.slug || p.title);
      for (let n = 2; taken.has(slug); n++) slug = `${slugify(p.slug || p.title)}-${n}`;
      taken.add(slug);
      const v = newId('PageVersion');
      versions.push({
        id: v,
        pageId: p.pageId,
        spaceId: job.spaceId,
        kind: p.kind ?? 'document',
        title: (p.title || 'Untitled').slice(0, 256),
        slug,
        description: p.description ?? null,
        markdown: markdownOf(p),
        createdAt: now,
        pageCreatedAt: now,
      });
      return { id: p.pageId, v, pages: build(p.kids, new Set()) };
    });
  const rootSlugs = new Set<string>();
  if (baseTree.length) {
    const roots = await tx.pageVersion.findMany({ where: { id: { in: baseTree.map((n) => n.v) } }, select: { slug: true } });
    for (const r of roots) if (r.slug) rootSlugs.add(r.slug);
  }
  const imported = build(assigned, rootSlugs);

  await insertPageVersions(tx, versions);
  if (files.length) {
    await tx.file.createMany({
      data: files.map((f) => ({ id: f.id, spaceId: job.spaceId, name: f.name.slice(0, 256), contentType: f.contentType, size: f.data.length, storageKey: f.storageKey, width: f.width, height: f.height, createdAt: now })),
    });
  }
  const revision = await writeRevision(tx, {
    spaceId: job.spaceId,
    parents: [baseRevisionId],
    type: 'edits',
    tree: [...baseTree, ...imported],
    fileIds: [...baseRevision.fileIds, ...files.map((f) => f.id)],
    changeRequestId: job.changeRequestId,
    createdById: job.createdById,
    variables: baseRevision.variables as Prisma.InputJsonValue,
    reusableContents: baseRevision.reusableContents as Prisma.InputJsonValue,
  });
  if (job.changeRequestId) await tx.changeRequest.update({ where: { id: job.changeRequestId }, data: { revisionId: revision.id } });
  else await tx.space.update({ where: { id: job.spaceId }, data: { revisionId: revision.id } });
  await tx.importJob.update({
    where: { id: job.id },
    data: { state: 'complete', revisionId: revision.id, importedResources: versions.length + files.length, totalResources: Math.max(totalResources, versions.length + files.length), finishedAt: now, error: null },
  });
  const updated = job.changeRequestId
    ? { type: 'change_request_content_updated' as const, objectId: job.changeRequestId, payload: { spaceId: job.spaceId, revisionId: revision.id, previousRevisionId: baseRevisionId, importId: job.id } }
    : { type: 'space_content_updated' as const, objectId: job.spaceId, payload: { revisionId: revision.id, previousRevisionId: baseRevisionId, importId: job.id } };
  await recordImportEvent(tx, deps, job, 'import_completed', { revisionId: revision.id, importedResources: versions.length + files.length }, updated);
}

/**
 * Imported pages obey the page limit of edits (PAGE_MARKDOWN_MAX characters): a page over it
 * fails the whole import, naming the page and where it came from, and nothing is written. (Not
 * split or cut: either would change the content without the user seeing where.)
 */
function requirePageSize(page: ImportedPage, markdown: string): string {
  if (markdown.length <= PAGE_MARKDOWN_MAX) return markdown;
  const from = page.sourcePath ? ` (from ${page.sourcePath})` : '';
  throw new ImportError(
    `the page "${page.title.slice(0, 100)}"${from} has ${markdown.length.toLocaleString('en')} characters of markdown; a page may have at most ${PAGE_MARKDOWN_MAX.toLocaleString('en')} (256 KiB). Nothing was imported`,
  );
}

/** Events of an import job's progress (source `job`), in the organization of its space. */
async function recordImportEvent(tx: Tx, deps: TaskDeps, job: ImportJob, type: 'import_running' | 'import_failed' | 'import_completed', payload: { givenUp?: boolean; revisionId?: string; importedResources?: number } = {}, ...more: Array<Omit<EventInput<'space_content_updated'>, 'organizationId'> | Omit<EventInput<'change_request_content_updated'>, 'organizationId'>>) {
  const space = await tx.space.findUnique({ where: { id: job.spaceId }, select: { organizationId: true } });
  if (!space) return;
  const organizationId = space.organizationId;
  await recordEvent(
    tx,
    jobActor(deps),
    { type, organizationId, objectId: job.id, payload: { spaceId: job.spaceId, changeRequestId: job.changeRequestId, ...payload } } as EventInput<typeof type>,
    ...more.map((e) => ({ ...e, organizationId }) as EventInput),
  );
}

/**
 * Point links between imported resources at what they became: `[x](../b.md)` from `a/c.md`
 * → `/pages/<id>`, `![](img/p.png)` → `/files/<id>` (the batch's reference convention).
 */
export function rewriteLinks(markdown: string, fromPath: string | undefined, targets: Map<string, string>, origin?: string, codeRangesOf?: Array<[number, number]>): string {
  if (!targets.size || !markdown.includes('](')) return markdown;
  const from = fromPath ? normalizeJoin('', fromPath) : '';
  const dir = from.includes('/') ? from.slice(0, from.lastIndexOf('/')) : '';
  // Links are found by their `](dest)` syntax; code (found by the markdown parser) is left as written.
  // Imports pass the ranges the worker thread found (ImportedPage.codeRanges): no parsing here.
  const code = codeRangesOf ?? codeRanges(markdown);
  const inCode = (at: number) => code.some(([start, end]) => at >= start && at < end);
  return markdown.replace(/(\]\()(<[^>]*>|[^)\s]+)((?:\s+"[^"]*")?\))/g, (whole, open: string, dest: string, close: string, at: number) => {
    if (inCode(at)) return whole;
    let raw = dest.startsWith('<') ? dest.slice(1, -1) : dest;
    if (origin && /^https?:\/\//i.test(raw)) {
      // An absolute link into the imported site (website imports).
      try {
        const u = new URL(raw);
        if (u.origin !== origin) return whole;
        raw = `${u.pathname}${u.hash}`;
      } catch {
        return whole;
      }
    }
    if (/^[a-z][a-z0-9+.-]*:/i.test(raw) || raw.startsWith('#') || raw.startsWith('//')) return whole;
    const hashAt = raw.indexOf('#');
    const pathPart = hashAt >= 0 ? raw.slice(0, hashAt) : raw;
    const hash = hashAt >= 0 ? raw.slice(hashAt + 1) : '';
    let decoded: string;
    try {
      decoded = decodeURIComponent(pathPart.split('?')[0]);
    } catch {
      decoded = pathPart;
    }
    const resolved = decoded.startsWith('/') ? normalizeJoin('', decoded) : normalizeJoin(dir, decoded);
    const target = [resolved, `${resolved}.md`, `${resolved}/README.md`, `${resolved}/readme.md`, `${resolved}/index.md`].map((k) => targets.get(k)).find(Boolean);
    return target ? `${open}${target}${hash ? `#${hash}` : ''}${close}` : whole;
  });
}

export function normalizeJoin(dir: string, rel: string): string {
  const out: string[] = [];
  for (const seg of `${dir}/${rel}`.split('/')) {
    if (seg === '' || seg === '.') continue;
    if (seg === '..') out.pop();
    else out.push(seg);
  }
  return out.join('/');
}

// ------------------------------------------------------------------ conversion

export const SUPPORTED_IMPORT_SOURCES: ImportSource[] = ['markdown', 'zip', 'html', 'website', 'docx'];

/**
 * Fetch (SSRF-guarded) and convert in a worker thread (src/lib/import-worker.ts): the parsing
 * (HTML, docx, markdown) never runs on the event loop, and the worker has a deadline and a heap
 * limit of its own.
 */
function convertImport(source: ImportSource, url: string, config: TaskDeps['config']): Promise<ConvertedImport> {
  return convertInWorker(
    { source, url, allowPrivate: config.allowPrivateFetch, limits: config.imports, maxPageChars: PAGE_MARKDOWN_MAX },
    { timeoutMs: config.imports.timeoutSeconds * 1000, maxHeapMb: config.imports.workerHeapMb },
  );
}
