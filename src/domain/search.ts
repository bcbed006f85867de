// Search: PostgreSQL full-text search over the current revisions' pages.
//
// `CurrentPage` lists the pages of every space's current revision with their path and search
// vector (title weighted above body), kept by a trigger on Space.revisionId and GIN-indexed, so
// a query ranks one table instead of walking revisions. Pages are ranked with `ts_rank` against
// `websearch_to_tsquery('english', query)`; results are paged with keyset cursors over
// (rank, id). Each page carries the sections (split at headings when the version was written,
// PageSection) whose own search vector matches the query — the same text search configuration,
// so stemming agrees. Only spaces the caller may read are searched; deleted spaces never are;
// pages marked noIndex have no vector and are never found.
//
// Bounded (docs/performance.md, "Search is bounded"): a query ranks at most SEARCH_SCAN matches
// (the first the index finds, not the best of all: ranking reads each match's vector, and a
// common word matches most pages), and answers the best SEARCH_CANDIDATES of them; `totalCount`
// counts those, and `capped` says more pages matched than the answer can page through.
import { z } from 'zod';
import { Prisma } from '../generated/prisma/client.ts';
import type { DomainContext } from './context.ts';
import { badRequest, parseInput } from '../lib/errors.ts';
import { sectionsForRead } from '../lib/markdown-pool.ts';
import { requireSpaceById } from './spaces.ts';
import { visibilityScope, visibleSpacesWhere } from '../auth/access.ts';

export const SearchQuery = z.string().trim().min(1, 'required').max(512);

/** Pages listed per space in an organization search item. */
export const PAGES_PER_SPACE = 10;
/** Matches ranked per query at most: the first the index finds. */
export const SEARCH_SCAN = 5000;
/** Results (pages; spaces for an organization) a search answers at most, best first. */
export const SEARCH_CANDIDATES = 500;
/** Results per page when the caller names no size: a screen of results, as search engines show. */
export const SEARCH_PAGE_SIZE = 20;
const BODY_EXCERPT = 280;

export type SearchSection = { id: string; title: string; path: string; body: string; urls: { app: string } };
export type SearchPage = { id: string; title: string; path: string; sections: SearchSection[]; urls: { app: string } };
export type SearchSpace = { id: string; title: string; pages: SearchPage[] };
export type SearchPageArgs = { first?: number | null; after?: string | null };
/**
 * `totalCount`: results the answer pages through (at most SEARCH_CANDIDATES); `capped`: more
 * matched than that (or than SEARCH_SCAN were ranked), so the count is a floor, not the total.
 */
export type SearchConnection<T> = { items: Array<{ cursor: string; node: T }>; hasNextPage: boolean; totalCount: number; capped: boolean };

/** `hasText`: the version has markdown (`octet_length` reads the stored size, not the body). */
export type Hit = { versionId: string; pageId: string; spaceId: string; path: string; title: string; rankText: string; hasText: boolean };

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
  const first = args.first ?? SEARCH_PAGE_SIZE;
  if (first < 0 || first > 1000) throw badRequest('first', 'between 0 and 1000');
  return first;
}

// ------------------------------------------------------------------ the queries

const tsQuery = (q: string) => Prisma.sql`websearch_to_tsquery('english', ${q})`;

/** Matching current pages of `spaceFilter`'s spaces (`s` is the Space), with their rank. */
export const hitsCte = (q: string, spaceFilter: Prisma.Sql) => Prisma.sql`
  hits AS MATERIALIZED (
    SELECT cp."spaceId", cp."pageId", cp."versionId", cp."path", ts_rank(cp."searchVector", ${tsQuery(q)}) AS rank
    FROM "CurrentPage" cp
    JOIN "Space" s ON s."id" = cp."spaceId"
    WHERE s."deletedAt" IS NULL AND ${spaceFilter} AND cp."searchVector" @@ ${tsQuery(q)}
  )`;

/**
 * The bounded form: `scanned`, at most SEARCH_SCAN + 1 matches as the index finds them, ranked
 * (the rank is computed only for the rows the LIMIT lets through); `hits`, the best
 * SEARCH_CANDIDATES of them (`perSpace`: the best SEARCH_CANDIDATES spaces, with their pages).
 */
const boundedHitsCte = (q: string, spaceFilter: Prisma.Sql) => Prisma.sql`
  scanned AS MATERIALIZED (
    SELECT cp."spaceId", cp."pageId", cp."versionId", cp."path", ts_rank(cp."searchVector", ${tsQuery(q)}) AS rank
    FROM "CurrentPage" cp
    JOIN "Space" s ON s."id" = cp."spaceId"
    WHERE s."deletedAt" IS NULL AND ${spaceFilter} AND cp."searchVector" @@ ${tsQuery(q)}
    LIMIT ${SEARCH_SCAN + 1}
  )`;

const keyset = (cursor: { rank: string; id: string } | null, idColumn: Prisma.Sql) =>
  cursor ? Prisma.sql`(rank < ${cursor.rank}::real OR (rank = ${cursor.rank}::real AND ${idColumn} > ${cursor.id}))` : Prisma.sql`TRUE`;

/** Search one space's current content (read access). Items are pages, best first. One statement. */
export async function searchSpace(ctx: DomainContext, spaceId: string, rawQuery: unknown, args: SearchPageArgs): Promise<SearchConnection<SearchPage>> {
  const space = await requireSpaceById(ctx, spaceId, 'space:read');
  const q = parseInput(SearchQuery, rawQuery, 'query');
  const first = pageSize(args);
  const cursor = decodeCursor(args.after);
  // The count comes from a one-row side, so it is there even when the page is empty.
  const rows = await ctx.prisma.$queryRaw<Array<Partial<Hit> & { total: number; scanned: number }>>`
    WITH ${boundedHitsCte(q, Prisma.sql`s."id" = ${space.id}`)},
    hits AS MATERIALIZED (SELECT * FROM scanned ORDER BY rank DESC, "versionId" ASC LIMIT ${SEARCH_CANDIDATES})
    SELECT c.total, c.scanned, x.* FROM (SELECT (SELECT count(*) FROM hits)::int AS total, (SELECT count(*) FROM scanned)::int AS scanned) c
    LEFT JOIN (
      SELECT h."spaceId", h."pageId", h."versionId", h."path", h.rank::text AS "rankText", pv."title", octet_length(pv."markdown") > 0 AS "hasText"
      FROM hits h JOIN "PageVersion" pv ON pv."id" = h."versionId"
      WHERE ${keyset(cursor, Prisma.sql`h."versionId"`)}
      ORDER BY h.rank DESC, h."versionId" ASC LIMIT ${first + 1}
    ) x ON TRUE`;
  const hits = rows.filter((r) => r.versionId) as Hit[];
  const page = hits.slice(0, first);
  const pages = await describePages(ctx, q, page);
  return {
    items: page.map((h, i) => ({ cursor: encodeCursor(h.rankText, h.versionId), node: pages[i] })),
    hasNextPage: hits.length > first,
    totalCount: rows[0]?.total ?? 0,
    capped: (rows[0]?.scanned ?? 0) > SEARCH_CANDIDATES,
  };
}

/**
 * Search every space of an organization the caller may read. Items are spaces ranked by their
 * best page, each with its best pages (at most PAGES_PER_SPACE). The ranking, the page of
 * spaces, their best pages and the count are one statement over one evaluation of the hits.
 */
export async function searchOrganization(ctx: DomainContext, organizationId: string, rawQuery: unknown, args: SearchPageArgs): Promise<SearchConnection<SearchSpace>> {
  await ctx.access.requireOrg(organizationId, 'organization:view');
  const q = parseInput(SearchQuery, rawQuery, 'query');
  const first = pageSize(args);
  const cursor = decodeCursor(args.after);

  const scope = await visibilityScope(ctx, organizationId);
  let spaceFilter = Prisma.sql`s."organizationId" = ${organizationId}`;
  if (scope.kind !== 'all') {
    const visible = await ctx.prisma.space.findMany({ where: await visibleSpacesWhere(ctx, organizationId), select: { id: true } });
    spaceFilter = Prisma.sql`${spaceFilter} AND s."id" = ANY(${visible.map((s) => s.id)}::text[])`;
  }

  type Row = Partial<Hit> & { total: number; spaceCount: number; scanned: number; spaceTitle: string; spaceRankText: string };
  const rows = await ctx.prisma.$queryRaw<Row[]>`
    WITH ${boundedHitsCte(q, spaceFilter)},
    hits AS (SELECT * FROM scanned),
    all_spaces AS MATERIALIZED (SELECT "spaceId", max(rank) AS rank FROM hits GROUP BY "spaceId"),
    ranked AS MATERIALIZED (SELECT * FROM all_spaces ORDER BY rank DESC, "spaceId" ASC LIMIT ${SEARCH_CANDIDATES}),
    listed AS (
      SELECT "spaceId", rank FROM ranked WHERE ${keyset(cursor, Prisma.sql`"spaceId"`)}
      ORDER BY rank DESC, "spaceId" ASC LIMIT ${first + 1}
    ),
    best AS (
      SELECT h.*, row_number() OVER (PARTITION BY h."spaceId" ORDER BY h.rank DESC, h."versionId") AS n
      FROM hits h WHERE h."spaceId" IN (SELECT "spaceId" FROM listed)
    )
    SELECT c.total, c."spaceCount", c.scanned, x.* FROM (SELECT (SELECT count(*) FROM ranked)::int AS total, (SELECT count(*) FROM all_spaces)::int AS "spaceCount", (SELECT count(*) FROM scanned)::int AS scanned) c
    LEFT JOIN (
      SELECT l."spaceId", l.rank::text AS "spaceRankText", s."title" AS "spaceTitle",
             b."pageId", b."versionId", b."path", b.rank::text AS "rankText", pv."title", octet_length(pv."markdown") > 0 AS "hasText"
      FROM listed l
      JOIN "Space" s ON s."id" = l."spaceId"
      JOIN best b ON b."spaceId" = l."spaceId" AND b.n <= ${PAGES_PER_SPACE}
      JOIN "PageVersion" pv ON pv."id" = b."versionId"
      ORDER BY l.rank DESC, l."spaceId" ASC, b.rank DESC, b."versionId" ASC
    ) x ON TRUE`;
  const total = rows[0]?.total ?? 0;
  // Rows come grouped by space, best space first; the extra space (first + 1) only says there is more.
  const bySpace = new Map<string, Array<Hit & Row>>();
  for (const r of rows) {
    if (!r.versionId) continue;
    const list = bySpace.get(r.spaceId!) ?? [];
    list.push(r as Hit & Row);
    bySpace.set(r.spaceId!, list);
  }
  const listed = [...bySpace.values()].slice(0, first);
  const described = await describePages(ctx, q, listed.flat());
  let at = 0;
  return {
    items: listed.map((own) => {
      const pages = described.slice(at, (at += own.length));
      return { cursor: encodeCursor(own[0].spaceRankText, own[0].spaceId), node: { id: own[0].spaceId, title: own[0].spaceTitle, pages } };
    }),
    hasNextPage: bySpace.size > first,
    totalCount: total,
    capped: (rows[0]?.spaceCount ?? 0) > SEARCH_CANDIDATES || (rows[0]?.scanned ?? 0) > SEARCH_SCAN,
  };
}

// ------------------------------------------------------------------ shaping results

type SectionMatch = { anchor: string; title: string; body: string | null; all: boolean; any: boolean };

/** The query, and the query with every AND turned into OR (for sections matching any term). */
const queries = (q: string) => Prisma.sql`
  q AS (
    SELECT x.q, CASE WHEN querytree(x.q) IN ('', 'T') THEN x.q
                     ELSE regexp_replace(querytree(x.q), ' (&|<[0-9-]+>) ', ' | ', 'g')::tsquery END AS anyq
    FROM (SELECT ${tsQuery(q)} AS q) x
  )`;

/** The sections of each hit version, and which match (one statement; bodies only of matches). */
async function matchSections(ctx: DomainContext, q: string, hits: Hit[]): Promise<Map<string, SectionMatch[]>> {
  const versionIds = [...new Set(hits.map((h) => h.versionId))];
  const rows = await ctx.prisma.$queryRaw<Array<SectionMatch & { versionId: string }>>`
    WITH ${queries(q)}
    SELECT ps."versionId", ps."anchor", ps."title", m."all", m."any", CASE WHEN m."all" OR m."any" THEN ps."body" END AS body
    FROM q, "PageSection" ps
    CROSS JOIN LATERAL (SELECT ps."searchVector" @@ q.q AS "all", ps."searchVector" @@ q.anyq AS "any") m
    WHERE ps."versionId" = ANY(${versionIds}::text[])
    ORDER BY ps."versionId", ps."position"`;
  const out = new Map<string, SectionMatch[]>();
  for (const r of rows) {
    let list = out.get(r.versionId);
    if (!list) out.set(r.versionId, (list = []));
    list.push(r);
  }
  // A version with text but no section rows predates PageSection.
  const missing = [...new Set(hits.filter((h) => h.hasText && !out.has(h.versionId)).map((h) => h.versionId))];
  if (missing.length) for (const [id, list] of await matchUnsplitSections(ctx, q, missing)) out.set(id, list);
  return out;
}

/**
 * Versions written before PageSection existed have no section rows (until the backfill job
 * gives them theirs): split their markdown here and let Postgres test each section's text
 * (slower; only old data takes this path).
 */
async function matchUnsplitSections(ctx: DomainContext, q: string, versionIds: string[]): Promise<Map<string, SectionMatch[]>> {
  const versions = await ctx.prisma.pageVersion.findMany({ where: { id: { in: versionIds } }, select: { id: true, markdown: true } });
  // In the parsing pool, never on the event loop; the backfill job gives these versions their rows.
  const split = await Promise.all(versions.map(async (v) => ({ id: v.id, sections: await sectionsForRead(v.markdown) })));
  const texts = split.flatMap((v) => v.sections.map((s) => `${s.title}\n${s.body}`));
  const matches = texts.length
    ? await ctx.prisma.$queryRaw<Array<{ i: number; all: boolean; any: boolean }>>`
        WITH ${queries(q)}
        SELECT t.i::int AS i, to_tsvector('english', t.txt) @@ q.q AS "all", to_tsvector('english', t.txt) @@ q.anyq AS "any"
        FROM q, unnest(${texts}::text[]) WITH ORDINALITY AS t(txt, i)`
    : [];
  const matchAt = new Map(matches.map((m) => [m.i - 1, m]));
  let offset = 0;
  return new Map(
    split.map((v) => {
      const list = v.sections.map((s, j) => ({ anchor: s.id, title: s.title, body: s.body, all: !!matchAt.get(offset + j)?.all, any: !!matchAt.get(offset + j)?.any }));
      offset += v.sections.length;
      return [v.id, list];
    }),
  );
}

/** Paths, URLs and matching sections of the hit pages (one statement). */
export async function describePages(ctx: DomainContext, q: string, hits: Hit[]): Promise<SearchPage[]> {
  if (hits.length === 0) return [];
  const sectionsByVersion = await matchSections(ctx, q, hits);
  const words = q
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((w) => w.length > 1 && w !== 'or');
  return hits.map((hit) => {
    const sections = sectionsByVersion.get(hit.versionId) ?? [];
    const pageApp = `${ctx.config.appUrl}/s/${hit.spaceId}/${hit.path}`;
    // Sections matching the whole query; failing that, those matching any of its terms.
    let keep = sections.filter((s) => s.all);
    if (keep.length === 0) keep = sections.filter((s) => s.any);
    return {
      id: hit.pageId,
      title: hit.title,
      path: hit.path,
      sections: keep.map((s) => ({
        id: s.anchor ? `${hit.pageId}#${s.anchor}` : hit.pageId,
        title: s.title || hit.title,
        path: s.anchor ? `${hit.path}#${s.anchor}` : hit.path,
        body: excerpt(s.body ?? '', words),
        urls: { app: s.anchor ? `${pageApp}#${s.anchor}` : pageApp },
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
