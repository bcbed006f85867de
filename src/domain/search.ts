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
//
// Cached (`rankedCandidates`): the ranked candidates of a query are kept per process, keyed by
// the query and the (space, revision) pairs searched. A revision is immutable and `CurrentPage` is
// a function of the space's current revision, so an entry never goes stale: an edit, merge or
// publish moves a space to a new revision id, the key changes and the next search ranks again.
// The pairs are the spaces the caller may search (read per request), so an entry holds hits of
// those spaces only and is shared by callers who search the same set; nothing mutable (space
// titles, URLs, section excerpts) is kept in it.
import crypto from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { z } from 'zod';
import { Prisma } from '../generated/prisma/client.ts';
import type { DomainContext } from './context.ts';
import type { Config } from '../config.ts';
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

function decodeCursor(cursor: string | null | undefined): { rank: number; id: string } | null {
  if (!cursor) return null;
  try {
    const [rank, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (typeof rank === 'string' && rank.length <= 64 && typeof id === 'string' && id.length <= 200 && Number.isFinite(Number(rank))) return { rank: Number(rank), id };
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

/**
 * The bounded scan: at most SEARCH_SCAN + 1 matching current pages of `spaceIds` as the index
 * finds them, ranked (the rank is computed only for the rows the LIMIT lets through). Callers
 * keep the best SEARCH_CANDIDATES of them.
 */
export const scannedCte = (q: string, spaceIds: string[]) => Prisma.sql`
  scanned AS MATERIALIZED (
    SELECT cp."spaceId", cp."pageId", cp."versionId", cp."path", ts_rank(cp."searchVector", ${tsQuery(q)}) AS rank
    FROM "CurrentPage" cp
    JOIN "Space" s ON s."id" = cp."spaceId"
    WHERE s."deletedAt" IS NULL AND s."id" = ANY(${spaceIds}::text[]) AND cp."searchVector" @@ ${tsQuery(q)}
    LIMIT ${SEARCH_SCAN + 1}
  )`;

/**
 * How many of the searched (space, revision) pairs are still current, read by the ranking
 * statement itself (one snapshot with the `CurrentPage` rows it ranked): when a space moved on
 * between reading the key and ranking, the answer is served but not cached.
 */
export const unchangedCount = (searched: Searched[]) => Prisma.sql`(
  SELECT count(*) FROM unnest(${searched.map((s) => s.id)}::text[], ${searched.map((s) => s.revisionId ?? '')}::text[]) k(id, rev)
  JOIN "Space" s ON s."id" = k.id AND s."deletedAt" IS NULL AND coalesce(s."revisionId", '') = k.rev
)::int`;

// ------------------------------------------------------------------ the cache of ranked candidates

/** A space searched: its id and its current revision (null: no content yet). */
export type Searched = { id: string; revisionId: string | null };

/** Ranked pages, best first (rank descending, version id ascending); `scanned`: matches read (≤ SEARCH_SCAN + 1). */
export type RankedPages = { hits: Array<Hit & { description?: string | null }>; scanned: number };
/** Ranked spaces, best first (by their best page), each with its best pages. */
export type RankedSpaces = { spaces: Array<{ spaceId: string; rankText: string; pages: Hit[] }>; spaceCount: number; scanned: number };

type Cached = RankedPages | RankedSpaces;
const cachesByConfig = new WeakMap<object, LRUCache<string, Cached> | null>();

/** The process's cache of ranked candidates (per configuration, so test apps keep their own); null when off. */
export function searchCache(config: Pick<Config, 'searchCacheBytes'>): LRUCache<string, Cached> | null {
  let c = cachesByConfig.get(config);
  if (c === undefined) {
    const bytes = config.searchCacheBytes ?? 32 * 1024 * 1024;
    // One entry may take at most an eighth: a common word over a big organization weighs ~1 MB.
    c = bytes > 0 ? new LRUCache<string, Cached>({ maxSize: bytes, maxEntrySize: Math.max(1, Math.floor(bytes / 8)), sizeCalculation: cachedBytes }) : null;
    cachesByConfig.set(config, c);
  }
  return c;
}

// Estimated V8 heap bytes: a fixed overhead per object plus two bytes per character.
const strBytes = (s: string | null | undefined) => (s ? 16 + 2 * s.length : 0);
const hitBytes = (h: Hit & { description?: string | null }) =>
  120 + strBytes(h.versionId) + strBytes(h.pageId) + strBytes(h.spaceId) + strBytes(h.path) + strBytes(h.title) + strBytes(h.rankText) + strBytes(h.description);
function cachedBytes(value: Cached, key: string): number {
  let bytes = 256 + strBytes(key);
  if ('hits' in value) for (const h of value.hits) bytes += hitBytes(h);
  else for (const s of value.spaces) bytes += 96 + strBytes(s.spaceId) + strBytes(s.rankText) + s.pages.reduce((n, h) => n + hitBytes(h), 0);
  return bytes;
}

/** Turns this configuration's cache off (every search ranks) or back on, empty: the benchmark's cold runs. */
export function setSearchCacheEnabled(config: Pick<Config, 'searchCacheBytes'>, on: boolean) {
  if (on) cachesByConfig.delete(config);
  else cachesByConfig.set(config, null);
}

/**
 * The key: what the ranking depends on — the kind of answer, the query text (the text search
 * configuration and the caps are constants of this build) and the searched (space, revision)
 * pairs, hashed (an organization may search thousands of spaces).
 */
export function searchKey(kind: string, q: string, searched: Searched[]): string {
  const pairs = searched.map((s) => `${s.id}:${s.revisionId ?? ''}`).sort();
  return `${kind}\u0000${q}\u0000${crypto.createHash('sha256').update(pairs.join('\n')).digest('base64url')}`;
}

/**
 * The ranked candidates for `key`: from the cache, else `rank()` (which answers them and how
 * many searched pairs were still current when it ranked; cached only when all were).
 */
export async function rankedCandidates<T extends Cached>(ctx: DomainContext, key: string, searched: Searched[], rank: () => Promise<{ value: T; unchanged: number }>): Promise<T> {
  const cache = searchCache(ctx.config);
  const hit = cache?.get(key);
  if (hit) return hit as T;
  const { value, unchanged } = await rank();
  if (cache && unchanged === searched.length) cache.set(key, value);
  return value;
}

/** Best first: rank descending, then id (code-unit order, the order cursors are compared in). */
export const byRank = (a: Hit, b: Hit) => compareRanked(Number(a.rankText), a.versionId, Number(b.rankText), b.versionId);
const compareRanked = (rankA: number, idA: string, rankB: number, idB: string) => (rankA !== rankB ? rankB - rankA : idA < idB ? -1 : idA > idB ? 1 : 0);
const after = (cursor: { rank: number; id: string } | null, rank: number, id: string) => !cursor || rank < cursor.rank || (rank === cursor.rank && id > cursor.id);

/** Search one space's current content (read access). Items are pages, best first. */
export async function searchSpace(ctx: DomainContext, spaceId: string, rawQuery: unknown, args: SearchPageArgs): Promise<SearchConnection<SearchPage>> {
  const space = await requireSpaceById(ctx, spaceId, 'space:read');
  const q = parseInput(SearchQuery, rawQuery, 'query');
  const first = pageSize(args);
  const cursor = decodeCursor(args.after);
  const searched: Searched[] = space.deletedAt ? [] : [{ id: space.id, revisionId: space.revisionId }];
  if (searched.length === 0) return { items: [], hasNextPage: false, totalCount: 0, capped: false };
  const ranked = await rankedCandidates<RankedPages>(ctx, searchKey('space', q, searched), searched, async () => {
    const rows = await ctx.prisma.$queryRaw<Array<Partial<Hit> & { scanned: number; unchanged: number }>>`
      WITH ${scannedCte(q, [space.id])},
      hits AS MATERIALIZED (SELECT * FROM scanned ORDER BY rank DESC, "versionId" ASC LIMIT ${SEARCH_CANDIDATES})
      SELECT c.scanned, c.unchanged, x.* FROM (SELECT (SELECT count(*) FROM scanned)::int AS scanned, ${unchangedCount(searched)} AS unchanged) c
      LEFT JOIN (
        SELECT h."spaceId", h."pageId", h."versionId", h."path", h.rank::text AS "rankText", pv."title", octet_length(pv."markdown") > 0 AS "hasText"
        FROM hits h JOIN "PageVersion" pv ON pv."id" = h."versionId"
      ) x ON TRUE`;
    const hits = rows.filter((r) => r.versionId).map(({ scanned: _s, unchanged: _u, ...h }) => h as Hit).sort(byRank);
    return { value: { hits, scanned: rows[0]?.scanned ?? 0 }, unchanged: rows[0]?.unchanged ?? 0 };
  });
  const rest = ranked.hits.filter((h) => after(cursor, Number(h.rankText), h.versionId));
  const page = rest.slice(0, first);
  const pages = await describePages(ctx, q, page);
  return {
    items: page.map((h, i) => ({ cursor: encodeCursor(h.rankText, h.versionId), node: pages[i] })),
    hasNextPage: rest.length > first,
    totalCount: ranked.hits.length,
    capped: ranked.scanned > SEARCH_CANDIDATES,
  };
}

/**
 * Search every space of an organization the caller may read. Items are spaces ranked by their
 * best page, each with its best pages (at most PAGES_PER_SPACE). The searched spaces (with their
 * revisions and titles) are one statement; the ranking of every candidate space with its best
 * pages is one more, skipped when cached; the matching sections of the page of results one more.
 */
export async function searchOrganization(ctx: DomainContext, organizationId: string, rawQuery: unknown, args: SearchPageArgs): Promise<SearchConnection<SearchSpace>> {
  await ctx.access.requireOrg(organizationId, 'organization:view');
  const q = parseInput(SearchQuery, rawQuery, 'query');
  const first = pageSize(args);
  const cursor = decodeCursor(args.after);

  // The spaces the caller may search: their revisions make the key, their titles (mutable) are
  // read here on every request and never cached. Spaces without content have no pages to find.
  const scope = await visibilityScope(ctx, organizationId);
  const own = { organizationId, deletedAt: null, revisionId: { not: null } };
  const spaces = await ctx.prisma.space.findMany({
    where: scope.kind === 'all' ? own : { AND: [own, await visibleSpacesWhere(ctx, organizationId)] },
    select: { id: true, revisionId: true, title: true },
  });
  if (spaces.length === 0) return { items: [], hasNextPage: false, totalCount: 0, capped: false };
  const searched: Searched[] = spaces.map((s) => ({ id: s.id, revisionId: s.revisionId }));

  const ranked = await rankedCandidates<RankedSpaces>(ctx, searchKey('organization', q, searched), searched, async () => {
    type Row = Partial<Hit> & { spaceCount: number; scanned: number; unchanged: number; spaceRankText: string };
    const rows = await ctx.prisma.$queryRaw<Row[]>`
      WITH ${scannedCte(q, searched.map((s) => s.id))},
      all_spaces AS MATERIALIZED (SELECT "spaceId", max(rank) AS rank FROM scanned GROUP BY "spaceId"),
      ranked AS MATERIALIZED (SELECT * FROM all_spaces ORDER BY rank DESC, "spaceId" ASC LIMIT ${SEARCH_CANDIDATES}),
      best AS (
        SELECT h.*, row_number() OVER (PARTITION BY h."spaceId" ORDER BY h.rank DESC, h."versionId") AS n
        FROM scanned h WHERE h."spaceId" IN (SELECT "spaceId" FROM ranked)
      )
      SELECT c."spaceCount", c.scanned, c.unchanged, x.*
      FROM (SELECT (SELECT count(*) FROM all_spaces)::int AS "spaceCount", (SELECT count(*) FROM scanned)::int AS scanned, ${unchangedCount(searched)} AS unchanged) c
      LEFT JOIN (
        SELECT r."spaceId", r.rank::text AS "spaceRankText",
               b."pageId", b."versionId", b."path", b.rank::text AS "rankText", pv."title", octet_length(pv."markdown") > 0 AS "hasText"
        FROM ranked r
        JOIN best b ON b."spaceId" = r."spaceId" AND b.n <= ${PAGES_PER_SPACE}
        JOIN "PageVersion" pv ON pv."id" = b."versionId"
      ) x ON TRUE`;
    const bySpace = new Map<string, RankedSpaces['spaces'][number]>();
    for (const { spaceCount: _c, scanned: _s, unchanged: _u, spaceRankText, ...hit } of rows) {
      if (!hit.versionId) continue;
      let entry = bySpace.get(hit.spaceId!);
      if (!entry) bySpace.set(hit.spaceId!, (entry = { spaceId: hit.spaceId!, rankText: spaceRankText, pages: [] }));
      entry.pages.push(hit as Hit);
    }
    for (const entry of bySpace.values()) entry.pages.sort(byRank);
    const ordered = [...bySpace.values()].sort((a, b) => compareRanked(Number(a.rankText), a.spaceId, Number(b.rankText), b.spaceId));
    return { value: { spaces: ordered, spaceCount: rows[0]?.spaceCount ?? 0, scanned: rows[0]?.scanned ?? 0 }, unchanged: rows[0]?.unchanged ?? 0 };
  });

  const titles = new Map(spaces.map((s) => [s.id, s.title]));
  const rest = ranked.spaces.filter((s) => after(cursor, Number(s.rankText), s.spaceId));
  const listed = rest.slice(0, first);
  const described = await describePages(ctx, q, listed.flatMap((s) => s.pages));
  let at = 0;
  return {
    items: listed.map((s) => {
      const pages = described.slice(at, (at += s.pages.length));
      return { cursor: encodeCursor(s.rankText, s.spaceId), node: { id: s.spaceId, title: titles.get(s.spaceId) ?? '', pages } };
    }),
    hasNextPage: rest.length > first,
    totalCount: ranked.spaces.length,
    capped: ranked.spaceCount > SEARCH_CANDIDATES || ranked.scanned > SEARCH_SCAN,
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
