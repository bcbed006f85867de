// Converts content written before markdown was parsed at write time (migration
// 20261126100000_parsed_content): page versions get their JSON document and links (and their
// search sections when they have none), comments their JSON document. Until a row is converted,
// reads parse it in the pool (lib/markdown-pool.ts `parseForRead`); after, nothing parses it again.
//
// The task (src/tasks.ts) runs on a schedule and converts batches for up to RUN_LIMIT_MS, then
// enqueues itself again when rows remain. Each batch is parsed in the pool with the usual budget;
// a row that does not parse within it (or fails to parse at all) is stored unparsed (its text as
// one code block, lib/markdown.ts `unparsedMarkdown`), so no row is ever tried twice. Idempotent:
// a row is written only while its document is still NULL, so two runs at once convert it once.
import type { TaskDeps } from './context.ts';
import { transaction } from '../db/transaction.ts';
import { unparsedMarkdown } from '../lib/markdown.ts';
import { parseForRead, type ParsedMarkdown } from '../lib/markdown-pool.ts';

export const BACKFILL_TASK = 'backfillParsedContent';
const BATCH = 20;
const RUN_LIMIT_MS = 120_000;

type Deps = Pick<TaskDeps, 'prisma' | 'log' | 'services'>;

/** Convert rows until none is left or the run's time is up; returns how many of each were converted. */
export async function backfillParsedContent(deps: Deps, opts: { runLimitMs?: number } = {}): Promise<{ pageVersions: number; comments: number }> {
  const until = Date.now() + (opts.runLimitMs ?? RUN_LIMIT_MS);
  const done = { pageVersions: 0, comments: 0 };
  let more = true;
  while (more && Date.now() < until) {
    const n = await pageVersionBatch(deps);
    done.pageVersions += n;
    more = n === BATCH;
  }
  if (!more) {
    more = true;
    while (more && Date.now() < until) {
      const n = await commentBatch(deps);
      done.comments += n;
      more = n === BATCH;
    }
  }
  if (more) await deps.services.jobs.enqueue(deps.prisma, BACKFILL_TASK, {}, { jobKey: BACKFILL_TASK });
  if (done.pageVersions || done.comments) deps.log.info({ ...done, more }, 'converted content written before parsing at write time');
  return done;
}

/** Never throws for one row's content: what cannot be parsed is stored unparsed. */
async function parseRow(deps: Deps, what: string, id: string, markdown: string): Promise<ParsedMarkdown> {
  try {
    return await parseForRead(markdown);
  } catch (err) {
    deps.log.warn({ err, [what]: id }, 'stored unparsed: the markdown parser failed');
    return unparsedMarkdown(markdown);
  }
}

async function pageVersionBatch(deps: Deps): Promise<number> {
  const rows = await deps.prisma.$queryRaw<Array<{ id: string; markdown: string; hasSections: boolean }>>`
    SELECT pv."id", pv."markdown", EXISTS (SELECT 1 FROM "PageSection" s WHERE s."versionId" = pv."id") AS "hasSections"
    FROM "PageVersion" pv WHERE pv."document" IS NULL ORDER BY pv."id" LIMIT ${BATCH}`;
  if (rows.length === 0) return 0;
  const parsed = await Promise.all(rows.map((r) => parseRow(deps, 'pageVersionId', r.id, r.markdown)));
  await transaction(deps.prisma, async (tx) => {
    for (let i = 0; i < rows.length; i++) {
      const { id, hasSections } = rows[i];
      const p = parsed[i];
      const updated = await tx.$executeRaw`
        UPDATE "PageVersion" SET "document" = ${JSON.stringify(p.document)}::json, "links" = ${JSON.stringify(p.links)}::json
        WHERE "id" = ${id} AND "document" IS NULL`;
      // Versions from before PageSection had no sections: search split them at read time.
      if (updated && !hasSections && p.sections.length) {
        await tx.pageSection.createMany({
          data: p.sections.map((s, position) => ({ versionId: id, position, anchor: s.id, title: s.title, depth: s.depth, body: s.body })),
          skipDuplicates: true,
        });
      }
    }
  });
  return rows.length;
}

async function commentBatch(deps: Deps): Promise<number> {
  const rows = await deps.prisma.$queryRaw<Array<{ id: string; markdown: string }>>`
    SELECT "id", "markdown" FROM "Comment" WHERE "document" IS NULL ORDER BY "id" LIMIT ${BATCH}`;
  if (rows.length === 0) return 0;
  const parsed = await Promise.all(rows.map((r) => parseRow(deps, 'commentId', r.id, r.markdown)));
  await transaction(deps.prisma, async (tx) => {
    for (let i = 0; i < rows.length; i++) {
      await tx.$executeRaw`UPDATE "Comment" SET "document" = ${JSON.stringify(parsed[i].document)}::json WHERE "id" = ${rows[i].id} AND "document" IS NULL`;
    }
  });
  return rows.length;
}
