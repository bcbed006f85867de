// Search: PostgreSQL full-text search over the current revisions' pages.
//
// `PageVersion.searchVector` is a generated tsvector (title weighted above body, GIN-indexed) and
// `Revision.pageVersionIds` lists a revision's versions, so the current content of a space is
// `Space.revisionId → Revision → PageVersion (pv.id = ANY(r.pageVersionIds))`. Pages are ranked
// with `ts_rank` against `websearch_to_tsquery('english', query)`; results are paged with keyset
// cursors over (rank, id). Each page carries the sections (split at headings) whose text matches
// the query — tested by Postgres with the same text search configuration, so stemming agrees.
// Only spaces the caller may read are searched; deleted spaces never are.
import { z } from 'zod';
import { Prisma } from '../generated/prisma/client.ts';
import type { Db } from '../db/client.ts';
import type { DomainContext } from './context.ts';
import { badRequest, parseInput } from './errors.ts';
import { pagePaths, type TreeNode } from './revisions.ts';
import { splitSections } from './markdown.ts';
import { requireSpaceById } from './spaces.ts';
import { visibilityScope, visibleSpacesWhere } from '../auth/access.ts';

export const SearchQuery = z.string().trim().min(1, 'required').max(512);

/** Pages listed per space in an organization search item. */
export const PAGES_PER_SPACE = 10;
const BODY_EXCERPT = 280;

export type SearchSection = { id: string; title: string; path: string; body: string; urls: { app: string } };
export type SearchPage = { id: string; title: string; path: string; sections: SearchSection[]; urls: { app: string } };
export type SearchSpace = { id: string; title: string; pages: SearchPage[] };
export type SearchPageArgs = { first?: number | null; after?: string | null };
export type SearchConnection<T> = { items: Array<{ cursor: string; node: T }>; hasNextPage: boolean; totalCount: number };

type Hit = { versionId: string; pageId: string; spaceId: string; revisionId: string; rank: number; rankText: string };

// ------------------------------------------------------------------ cursors

const encodeCursor = (rankText: string, id: string) => Buffer.from(JSON.stringify([rankText, id])).toString('base64url');

function decodeCursor(cursor: string | null | undefined): { rank: string; id: string } | null {
  if (!cursor) return null;
  try {
    const [rank, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (typeof rank === 'string' && typeof id === 'string' && Number.isFinite(Number(rank))) return { rank, id };
  } catch {
    // fall through
  }
  throw badRequest('after', 'not a valid cursor');
}

function pageSize(args: SearchPageArgs) {
  const first = args.first ?? 100;
  if (first < 0 || first > 1000) throw badRequest('first', 'between 0 and 1000');
  return first;
}

// ------------------------------------------------------------------ the queries

const tsQuery = (q: string) => Prisma.sql`websearch_to_tsquery('english', ${q})`;

/** Matching page versions of the current revisions of `spaceFilter`'s spaces. */
const hitsCte = (q: string, spaceFilter: Prisma.Sql) => Prisma.sql`
  hits AS (
    SELECT s."id" AS "spaceId", s."revisionId" AS "revisionId", pv."id" AS "versionId", pv."pageId" AS "pageId",
           ts_rank(pv."searchVector", ${tsQuery(q)}) AS rank
    FROM "Space" s
    JOIN "Revision" r ON r."id" = s."revisionId"
    JOIN "PageVersion" pv ON pv."id" = ANY(r."pageVersionIds")
    WHERE s."deletedAt" IS NULL AND ${spaceFilter} AND pv."searchVector" @@ ${tsQuery(q)}
  )`;

const keyset = (cursor: { rank: string; id: string } | null, idColumn: Prisma.Sql) =>
  cursor ? Prisma.sql`(rank < ${cursor.rank}::real OR (rank = ${cursor.rank}::real AND ${idColumn} > ${cursor.id}))` : Prisma.sql`TRUE`;

/** Search one space's current content (read access). Items are pages, best first. */
export async function searchSpace(ctx: DomainContext, spaceId: string, rawQuery: unknown, args: SearchPageArgs): Promise<SearchConnection<SearchPage>> {
  const space = await requireSpaceById(ctx, spaceId, 'read');
  const q = parseInput(SearchQuery, rawQuery, 'query');
  const first = pageSize(args);
  const cursor = decodeCursor(args.after);
  const rows = await ctx.prisma.$queryRaw<Array<Omit<Hit, 'rank'> & { rank: number; total: number }>>`
    WITH ${hitsCte(q, Prisma.sql`s."id" = ${space.id}`)}
    SELECT h.*, h.rank::text AS "rankText", (SELECT count(*)::int FROM hits) AS total
    FROM hits h WHERE ${keyset(cursor, Prisma.sql`h."versionId"`)}
    ORDER BY h.rank DESC, h."versionId" ASC LIMIT ${first + 1}`;
  const total = rows[0]?.total ?? (cursor ? await countHits(ctx.prisma, q, Prisma.sql`s."id" = ${space.id}`) : 0);
  const page = rows.slice(0, first);
  const pages = await describePages(ctx, q, page);
  return {
    items: page.map((h, i) => ({ cursor: encodeCursor(h.rankText, h.versionId), node: pages[i] })),
    hasNextPage: rows.length > first,
    totalCount: total,
  };
}

async function countHits(db: Db, q: string, spaceFilter: Prisma.Sql) {
  const [{ total }] = await db.$queryRaw<Array<{ total: number }>>`WITH ${hitsCte(q, spaceFilter)} SELECT count(*)::int AS total FROM hits`;
  return total;
}

/**
 * Search every space of an organization the caller may read. Items are spaces ranked by their
 * best page, each with its best pages (at most PAGES_PER_SPACE).
 */
export async function searchOrganization(ctx: DomainContext, organizationId: string, rawQuery: unknown, args: SearchPageArgs): Promise<SearchConnection<SearchSpace>> {
  await ctx.access.requireOrganization(organizationId);
  const q = parseInput(SearchQuery, rawQuery, 'query');
  const first = pageSize(args);
  const cursor = decodeCursor(args.after);

  const scope = await visibilityScope(ctx, organizationId);
  let spaceFilter = Prisma.sql`s."organizationId" = ${organizationId}`;
  if (scope.kind !== 'all') {
    const visible = await ctx.prisma.space.findMany({ where: await visibleSpacesWhere(ctx, organizationId), select: { id: true } });
    spaceFilter = Prisma.sql`${spaceFilter} AND s."id" = ANY(${visible.map((s) => s.id)}::text[])`;
  }

  const rows = await ctx.prisma.$queryRaw<Array<{ spaceId: string; rank: number; rankText: string; total: number }>>`
    WITH ${hitsCte(q, spaceFilter)},
    ranked AS (SELECT "spaceId", max(rank) AS rank FROM hits GROUP BY "spaceId")
    SELECT x."spaceId", x.rank, x.rank::text AS "rankText", (SELECT count(*)::int FROM ranked) AS total
    FROM ranked x WHERE ${keyset(cursor, Prisma.sql`x."spaceId"`)}
    ORDER BY x.rank DESC, x."spaceId" ASC LIMIT ${first + 1}`;
  const page = rows.slice(0, first);
  let total = rows[0]?.total;
  if (total === undefined) {
    total = cursor
      ? (await ctx.prisma.$queryRaw<Array<{ total: number }>>`WITH ${hitsCte(q, spaceFilter)} SELECT count(DISTINCT "spaceId")::int AS total FROM hits`)[0].total
      : 0;
  }
  if (page.length === 0) return { items: [], hasNextPage: false, totalCount: total };

  const ids = page.map((r) => r.spaceId);
  const [hits, spaces] = await Promise.all([
    ctx.prisma.$queryRaw<Hit[]>`
      WITH ${hitsCte(q, Prisma.sql`s."id" = ANY(${ids}::text[])`)}
      SELECT y.*, y.rank::text AS "rankText" FROM (
        SELECT h.*, row_number() OVER (PARTITION BY h."spaceId" ORDER BY h.rank DESC, h."versionId") AS n FROM hits h
      ) y WHERE y.n <= ${PAGES_PER_SPACE}
      ORDER BY y.rank DESC, y."versionId"`,
    ctx.prisma.space.findMany({ where: { id: { in: ids } }, select: { id: true, title: true } }),
  ]);
  const described = await describePages(ctx, q, hits);
  const titles = new Map(spaces.map((s) => [s.id, s.title]));
  return {
    items: page.map((r) => ({
      cursor: encodeCursor(r.rankText, r.spaceId),
      node: { id: r.spaceId, title: titles.get(r.spaceId) ?? '', pages: described.filter((_p, i) => hits[i].spaceId === r.spaceId) },
    })),
    hasNextPage: rows.length > first,
    totalCount: total,
  };
}

// ------------------------------------------------------------------ shaping results

/** Titles, paths and matching sections of the hit pages (a constant number of statements). */
async function describePages(ctx: DomainContext, q: string, hits: Array<Pick<Hit, 'versionId' | 'pageId' | 'spaceId' | 'revisionId'>>): Promise<SearchPage[]> {
  if (hits.length === 0) return [];
  const revisionIds = [...new Set(hits.map((h) => h.revisionId))];
  const [versions, revisions] = await Promise.all([
    ctx.prisma.pageVersion.findMany({ where: { id: { in: hits.map((h) => h.versionId) } }, select: { id: true, title: true, markdown: true } }),
    ctx.prisma.revision.findMany({ where: { id: { in: revisionIds } }, select: { id: true, tree: true, pageVersionIds: true } }),
  ]);
  // Slugs of every page of those revisions, for paths.
  const slugRows = await ctx.prisma.pageVersion.findMany({
    where: { id: { in: [...new Set(revisions.flatMap((r) => r.pageVersionIds))] } },
    select: { id: true, slug: true },
  });
  const slugs = new Map(slugRows.map((r) => [r.id, r]));
  const pathsByRevision = new Map(
    revisions.map((r) => [r.id, pagePaths({ tree: r.tree as unknown as TreeNode[], versions: slugs as never })]),
  );
  const byVersion = new Map(versions.map((v) => [v.id, v]));

  // Split every page into sections and let Postgres say which sections match.
  const candidates = hits.map((h) => {
    const v = byVersion.get(h.versionId);
    return { hit: h, version: v, sections: v ? splitSections(v.markdown) : [] };
  });
  const texts = candidates.flatMap((c) => c.sections.map((s) => `${s.title}\n${s.body}`));
  const matches = texts.length
    ? await ctx.prisma.$queryRaw<Array<{ i: number; all: boolean; any: boolean }>>`
        WITH q AS (SELECT ${tsQuery(q)} AS q)
        SELECT t.i::int AS i,
               to_tsvector('english', t.txt) @@ q.q AS "all",
               to_tsvector('english', t.txt) @@ (CASE WHEN querytree(q.q) IN ('', 'T') THEN q.q
                 ELSE regexp_replace(querytree(q.q), ' (&|<[0-9-]+>) ', ' | ', 'g')::tsquery END) AS "any"
        FROM q, unnest(${texts}::text[]) WITH ORDINALITY AS t(txt, i)`
    : [];
  const matchAt = new Map(matches.map((m) => [m.i - 1, m]));

  const words = q
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((w) => w.length > 1 && w !== 'or');
  let offset = 0;
  return candidates.map(({ hit, version, sections }) => {
    const path = pathsByRevision.get(hit.revisionId)?.get(hit.pageId) ?? hit.pageId;
    const pageApp = `${ctx.config.appUrl}/s/${hit.spaceId}/${path}`;
    const flags = sections.map((_s, j) => matchAt.get(offset + j));
    offset += sections.length;
    // Sections matching the whole query; failing that, those matching any of its terms.
    let keep = sections.filter((_s, j) => flags[j]?.all);
    if (keep.length === 0) keep = sections.filter((_s, j) => flags[j]?.any);
    return {
      id: hit.pageId,
      title: version?.title ?? '',
      path,
      sections: keep.map((s) => ({
        id: s.id ? `${hit.pageId}#${s.id}` : hit.pageId,
        title: s.title || version?.title || '',
        path: s.id ? `${path}#${s.id}` : path,
        body: excerpt(s.body, words),
        urls: { app: s.id ? `${pageApp}#${s.id}` : pageApp },
      })),
      urls: { app: pageApp },
    };
  });
}

/** Up to BODY_EXCERPT characters of `body`, around the first query word it contains. */
function excerpt(body: string, words: string[]): string {
  const text = body.replace(/\s+/g, ' ').trim();
  if (text.length <= BODY_EXCERPT) return text;
  const lower = text.toLowerCase();
  const hits = words.map((w) => lower.indexOf(w.slice(0, Math.max(3, w.length - 2)))).filter((i) => i >= 0);
  const at = hits.length ? Math.min(...hits) : 0;
  const start = Math.max(0, Math.min(at - 60, text.length - BODY_EXCERPT));
  return `${start > 0 ? '…' : ''}${text.slice(start, start + BODY_EXCERPT).trim()}${start + BODY_EXCERPT < text.length ? '…' : ''}`;
}
