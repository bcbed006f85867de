// Cleanup tasks run by the queue on a schedule (src/tasks.ts): the purge of spaces deleted more
// than 7 days ago, the sweep of stored file bytes no row refers to, and the collection of page
// tree nodes no revision reaches any more.
//
// Bytes are written before the transaction that records them commits (a row must never point
// at missing bytes), and deleted after the transaction that drops the row. A transaction that
// rolls back, or a process that dies between the two steps, leaves bytes nobody refers to:
// `sweepOrphanFiles` removes them once they are older than ORPHAN_GRACE_MS, long after any
// transaction that could still commit a reference to them. Both tasks are idempotent.
import type { Logger } from 'pino';
import type { Db } from '../db/client.ts';
import type { TaskDeps } from './context.ts';
import { transaction } from '../db/transaction.ts';
import type { Clock } from '../lib/clock.ts';
import type { FileStorage } from '../lib/storage.ts';
import { RESTORE_WINDOW_MS } from './spaces.ts';
import { removeSpacesFromSites } from './site-structure.ts';
import { collectTreeGarbage, type TreeGcOptions } from './revision-tree.ts';

// ------------------------------------------------------------------ deleted spaces

/**
 * Permanently remove spaces deleted more than 7 days ago, with everything they own (revisions,
 * pages, files and their stored bytes, change requests, comments, grants, site placements).
 * Idempotent; works in batches. Returns how many spaces were purged.
 */
export async function purgeDeletedSpaces(deps: Pick<TaskDeps, 'prisma' | 'clock' | 'services' | 'log'>, batchSize = 100): Promise<number> {
  const cutoff = new Date(deps.clock.now().getTime() - RESTORE_WINDOW_MS);
  let purged = 0;
  for (;;) {
    const batch = await deps.prisma.space.findMany({ where: { deletedAt: { lt: cutoff } }, select: { id: true }, take: batchSize, orderBy: { deletedAt: 'asc' } });
    if (batch.length === 0) break;
    const ids = batch.map((s) => s.id);
    const removed = await transaction(deps.prisma, async (tx) => {
      const expired = (await tx.space.findMany({ where: { id: { in: ids }, deletedAt: { lt: cutoff } }, select: { id: true } })).map((s) => s.id);
      const files = await tx.file.findMany({ where: { spaceId: { in: expired } }, select: { storageKey: true } });
      // Take them out of sites first, so positions and default pointers stay consistent.
      await removeSpacesFromSites(tx, expired);
      const r = await tx.space.deleteMany({ where: { id: { in: expired } } });
      return { count: r.count, keys: files.map((f) => f.storageKey) };
    });
    purged += removed.count; // counted after the commit: a retried transaction must not count twice
    // Stored bytes go after the rows are gone (a crash here leaves orphan bytes, never dangling rows).
    for (const key of removed.keys) {
      await deps.services.storage.delete(key).catch((err) => deps.log.warn({ err, key }, 'could not delete a purged file'));
    }
    if (batch.length < batchSize) break;
  }
  if (purged) deps.log.info({ purged }, 'purged deleted spaces');
  return purged;
}

// ------------------------------------------------------------------ orphaned file bytes

/** Bytes younger than this are never swept: a transaction may still be about to refer to them. */
export const ORPHAN_GRACE_MS = 60 * 60 * 1000;
const SWEEP_BATCH = 500;

/** Which row a key belongs to, by the key layouts the areas write. */
const FILE_KEY = /^files\/[^/]+\/([^/.]+)$/;
const PDF_KEY = /^pdf\/([^/.]+)\.pdf$/;
/** Only these prefixes are ours to sweep (including interrupted writes' `.tmp` files there). */
const SWEPT_PREFIXES = ['files/', 'pdf/'];

/** Delete stored bytes that no File row or PDF export refers to. Returns how many. */
export async function sweepOrphanFiles(deps: { prisma: Db; clock: Clock; log: Logger; services: { storage: FileStorage } }): Promise<number> {
  const cutoff = deps.clock.now().getTime() - ORPHAN_GRACE_MS;
  let removed = 0;
  let batch: string[] = [];
  const flush = async () => {
    for (const key of await unreferenced(deps.prisma, batch)) {
      await deps.services.storage.delete(key);
      removed++;
    }
    batch = [];
  };
  for await (const { key, modifiedAt } of deps.services.storage.list()) {
    if (modifiedAt.getTime() > cutoff || !SWEPT_PREFIXES.some((p) => key.startsWith(p))) continue;
    batch.push(key);
    if (batch.length >= SWEEP_BATCH) await flush();
  }
  if (batch.length) await flush();
  if (removed) deps.log.info({ removed }, 'swept orphaned file bytes');
  return removed;
}

/** The keys of `keys` no row refers to (two statements by primary key per batch). */
async function unreferenced(prisma: Db, keys: string[]): Promise<string[]> {
  const ids = (re: RegExp) => keys.map((k) => re.exec(k)?.[1]).filter((id): id is string => !!id);
  const [files, pdfExports] = await Promise.all([
    prisma.file.findMany({ where: { id: { in: ids(FILE_KEY) } }, select: { storageKey: true } }),
    prisma.pdfExport.findMany({ where: { id: { in: ids(PDF_KEY) } }, select: { storageKey: true } }),
  ]);
  const live = new Set<string | null>([...files.map((f) => f.storageKey), ...pdfExports.map((e) => e.storageKey)]);
  return keys.filter((k) => !live.has(k));
}


// ------------------------------------------------------------------ unreferenced tree nodes

/**
 * Delete page tree nodes no revision reaches (left by purged spaces), at most `maxNodes` per run
 * (src/domain/revision-tree.ts `collectTreeGarbage`); enqueues itself again while more remain.
 * Returns how many were deleted.
 */
export async function sweepTreeNodes(deps: Pick<TaskDeps, 'prisma' | 'log' | 'services'>, opts: TreeGcOptions = {}): Promise<number> {
  const { deleted, more } = await collectTreeGarbage(deps.prisma, opts);
  if (more) await deps.services.jobs.enqueue(deps.prisma, 'sweepTreeNodes', {}, { jobKey: 'sweepTreeNodes' });
  if (deleted) deps.log.info({ deleted, more }, 'deleted page tree nodes no revision uses');
  return deleted;
}
