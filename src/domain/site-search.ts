// Site search: full-text search of one published site's current content, for
// its reader (src/auth/audience.ts, decided by `Access.siteReader`).
//
// What is searched: the current revisions of the spaces the site shows, through the same
// PostgreSQL full-text search as space and organization search (domain/search.ts: `CurrentPage`,
// its GIN index, `websearch_to_tsquery('english', …)`, `ts_rank`). What the reader may see:
//   - site spaces whose own condition and whose section's condition pass `isVisibleTo` for the
//     reader's claims (deleted spaces never);
//   - pages the reader sees: a page whose condition fails is hidden with its descendants, the rule
//     of `contentForReader` (domain/content.ts), applied to the candidate hits through the
//     revision trees of the matched spaces (loaded by the caller's batched, cached loaders).
// Bounded as space search is (domain/search.ts): at most SEARCH_SCAN matches are read and ranked,
// the best CANDIDATES of them kept; only those are filtered and paged, so `totalCount` counts the
// visible results among them and `capped` says more matched. The ranked candidates are cached
// per query and searched (space, revision) pairs (`rankedCandidates`): the reader's filtering
// runs on every request, after the cache, so one entry serves every reader of the same spaces.
//
// Statements: the site (1), the reader (Access: membership, share key), the site spaces with
// their sections and spaces (1), the hits (1, none when cached), the trees of matched revisions (the content
// loaders: 2 per request, 0 when cached) and the matching sections of one page of results (1):
// none grows with the number of sections, site spaces or results.
import { z } from 'zod';
import { Prisma, type Site } from '../generated/prisma/client.ts';
import type { DomainContext } from './context.ts';
import { badRequest, notFound, parseInput } from '../lib/errors.ts';
import { byRank, describePages, rankedCandidates, scannedCte, searchKey, SearchQuery, unchangedCount, type Hit, type RankedPages, type Searched } from './search.ts';
import { siteSpaceVisibleTo, VisitorInput } from './site-order.ts';
import { contentForReader, type RevisionContent } from './content.ts';
import type { SiteReader } from '../auth/audience.ts';

/** Results per page when `first` is not given (a search box shows about this many). */
export const SITE_SEARCH_PAGE = 20;
/** The most results one page may ask for. */
export const SITE_SEARCH_MAX_PAGE = 100;
/** The best hits ranked per query; only these are filtered for the reader and paged. */
export const SITE_SEARCH_CANDIDATES = 500;
/** Site space ids a scope may name. */
const MAX_SCOPE_IDS = 100;

export const SITE_SEARCH_MODES = ['all', 'default', 'specific'] as const;

/**
 * Which site spaces to search: `all` (every one the reader sees, the default), `default` (the
 * default site space of each section, or of the site without sections, plus `siteSpaceIds`),
 * `specific` (only `siteSpaceIds`). Ids the reader cannot see find nothing.
 */
export const SiteSearchScope = z.strictObject({
  mode: z.enum(SITE_SEARCH_MODES),
  siteSpaceIds: z.array(z.string().min(1).max(200)).max(MAX_SCOPE_IDS).optional(),
});
export type SiteSearchScope = z.infer<typeof SiteSearchScope>;

export type SiteSearchArgs = {
  siteId: string;
  organizationId?: string;
  query: unknown;
  shareKey?: string | null;
  /** The visitor token: the argument, else the `X-Visitor-Token` header. */
  visitorToken?: string | null;
  visitor?: unknown;
  scope?: unknown;
  first?: number | null;
  /** The sort key of the last result seen: [rank, versionId, siteSpaceId]. */
  after?: unknown[] | null;
};

/** The revision trees (no bodies) of these revisions: the content area's batched loaders. */
export type TreeLoader = (revisionIds: string[]) => Promise<RevisionContent[]>;

export type SiteSearchSection = { id: string; title: string; path: string; body: string };
export type SiteSearchResult = {
  section: { id: string; title: string; path: string } | null;
  siteSpace: { id: string; path: string; title: string };
  spaceId: string;
  pageId: string;
  title: string;
  /** The page's path in its space (`guide/setup`). */
  path: string;
  /** Where the page is, relative to the published site's address (`section/space/guide/setup`). */
  sitePath: string;
  /** An excerpt of the first matching section, else the page description. */
  excerpt: string;
  /** Sections of the page (split at headings) matching the query, in page order. */
  sections: SiteSearchSection[];
};
export type SiteSearchConnection = {
  site: Pick<Site, 'id' | 'organizationId' | 'hostname' | 'basename' | 'proxy' | 'published'>;
  reader: SiteReader;
  items: Array<{ key: [string, string, string]; node: SiteSearchResult }>;
  hasNextPage: boolean;
  totalCount: number;
  /** More matched than were ranked: `totalCount` is then a floor. */
  capped: boolean;
};

type SiteSpaceRow = {
  id: string;
  path: string;
  condition: string | null;
  position: number;
  sectionId: string | null;
  spaceId: string;
  space: { title: string; revisionId: string | null };
  section: { id: string; title: string; path: string; condition: string | null; position: number; defaultSiteSpaceId: string | null } | null;
};

type Row = Hit & { rankText: string; description: string | null };

/** Search one published site for its reader. */
export async function searchSite(ctx: DomainContext, args: SiteSearchArgs, loadTrees: TreeLoader): Promise<SiteSearchConnection> {
  // Input first (400 naming the field, before anything is read), then the reader (404).
  const q = parseInput(SearchQuery, args.query, 'query');
  const visitor = args.visitor == null ? undefined : parseInput(VisitorInput, args.visitor, 'visitor');
  const scope = args.scope == null ? { mode: 'all' as const } : parseInput(SiteSearchScope, args.scope, 'scope');
  const first = args.first ?? SITE_SEARCH_PAGE;
  if (!Number.isInteger(first) || first < 0 || first > SITE_SEARCH_MAX_PAGE) throw badRequest('first', `between 0 and ${SITE_SEARCH_MAX_PAGE}`);
  const after = afterKey(args.after);

  const site = await ctx.prisma.site.findUnique({
    where: { id: args.siteId },
    select: { id: true, organizationId: true, published: true, visibility: true, hostname: true, basename: true, proxy: true, defaultSiteSpaceId: true },
  });
  const reader = await ctx.access.siteReader(site, {
    organizationId: args.organizationId,
    shareKey: args.shareKey,
    visitorToken: args.visitorToken,
    visitor,
    now: ctx.clock.now(),
  });
  if (!site) throw notFound('Site'); // siteReader already refused it; for the type checker

  // The site spaces the reader sees, with their sections and spaces (one statement).
  const all = (await ctx.prisma.siteSpace.findMany({
    where: { siteId: site.id, space: { deletedAt: null } },
    select: {
      id: true, path: true, condition: true, position: true, sectionId: true, spaceId: true,
      space: { select: { title: true, revisionId: true } },
      section: { select: { id: true, title: true, path: true, condition: true, position: true, defaultSiteSpaceId: true } },
    },
    orderBy: [{ position: 'asc' }, { id: 'asc' }],
  })) as SiteSpaceRow[];
  const seen = all.filter((s) => siteSpaceVisibleTo(s, s.section, reader.claims));
  const searched = inScope(seen, scope, site.defaultSiteSpaceId);
  const empty = { site, reader, items: [], hasNextPage: false, totalCount: 0, capped: false };
  if (searched.length === 0) return empty;

  // The best hits of the searched spaces (one statement, bounded by the scan and candidate caps;
  // none when cached for these revisions).
  const revisionBySpace = new Map(searched.map((s) => [s.spaceId, s.space.revisionId]));
  const spaces: Searched[] = [...revisionBySpace].filter(([, rev]) => rev).map(([id, revisionId]) => ({ id, revisionId }));
  if (spaces.length === 0) return empty;
  const ranked = await rankedCandidates<RankedPages>(ctx, searchKey('site', q, spaces), spaces, async () => {
    const found = await ctx.prisma.$queryRaw<Array<Partial<Row> & { scanned: number; unchanged: number }>>`
      WITH ${scannedCte(q, spaces.map((s) => s.id))},
      hits AS MATERIALIZED (SELECT * FROM scanned ORDER BY rank DESC, "versionId" ASC LIMIT ${SITE_SEARCH_CANDIDATES})
      SELECT c.scanned, c.unchanged, x.* FROM (SELECT (SELECT count(*) FROM scanned)::int AS scanned, ${unchangedCount(spaces)} AS unchanged) c
      LEFT JOIN (
        SELECT h."spaceId", h."pageId", h."versionId", h."path", h.rank::text AS "rankText", pv."title", pv."description",
               octet_length(pv."markdown") > 0 AS "hasText"
        FROM hits h JOIN "PageVersion" pv ON pv."id" = h."versionId"
      ) x ON TRUE`;
    const hits = found.filter((r) => r.versionId).map(({ scanned: _s, unchanged: _u, ...h }) => h as Row).sort(byRank);
    return { value: { hits, scanned: found[0]?.scanned ?? 0 }, unchanged: found[0]?.unchanged ?? 0 };
  });
  const rows = ranked.hits as Row[];
  const capped = ranked.scanned > SITE_SEARCH_CANDIDATES;
  if (rows.length === 0) return { ...empty, capped };

  // The reader's view of each matched space's current tree: a hit outside it is hidden (its page
  // or an ancestor is conditioned against the reader), or no longer current (a newer revision).
  const matchedRevisions = [...new Set(rows.map((r) => revisionBySpace.get(r.spaceId)).filter((id): id is string => !!id))];
  const trees = await loadTrees(matchedRevisions);
  const views = new Map<string, RevisionContent>();
  trees.forEach((tree, i) => views.set(matchedRevisions[i], reader.claims ? contentForReader(tree, reader.claims) : tree));

  // One result per visible hit and site space showing its space, in (rank, version, site space) order.
  const siteSpacesOf = new Map<string, SiteSpaceRow[]>();
  for (const s of searched) siteSpacesOf.set(s.spaceId, [...(siteSpacesOf.get(s.spaceId) ?? []), s]);
  type Candidate = { key: [string, string, string]; rank: number; row: Row; siteSpace: SiteSpaceRow; path: string };
  const candidates: Candidate[] = [];
  for (const row of rows) {
    const view = views.get(revisionBySpace.get(row.spaceId) ?? '');
    const page = view?.byId.get(row.pageId);
    if (!page || page.version.id !== row.versionId) continue;
    for (const siteSpace of siteSpacesOf.get(row.spaceId) ?? []) {
      candidates.push({ key: [row.rankText, row.versionId, siteSpace.id], rank: Number(row.rankText), row, siteSpace, path: page.path });
    }
  }
  candidates.sort((a, b) => compareKeys(a.rank, a.key, b.rank, b.key));
  const start = after ? candidates.findIndex((c) => compareKeys(c.rank, c.key, Number(after[0]), after) > 0) : 0;
  const rest = start < 0 ? [] : candidates.slice(start);
  const page = rest.slice(0, first);

  // Matching sections and excerpts of this page of results only (one statement).
  const described = await describePages(ctx, q, page.map((c) => ({ ...c.row, path: c.path })));
  return {
    site,
    reader,
    totalCount: candidates.length,
    capped,
    hasNextPage: rest.length > first,
    items: page.map((c, i) => {
      const d = described[i];
      const sections = d.sections.map((s) => ({ id: s.id, title: s.title, path: s.path, body: s.body }));
      return {
        key: c.key,
        node: {
          section: c.siteSpace.section ? { id: c.siteSpace.section.id, title: c.siteSpace.section.title, path: c.siteSpace.section.path } : null,
          siteSpace: { id: c.siteSpace.id, path: c.siteSpace.path, title: c.siteSpace.space.title },
          spaceId: c.row.spaceId,
          pageId: c.row.pageId,
          title: c.row.title,
          path: c.path,
          sitePath: `${siteSpaceBase(c.siteSpace)}${c.path}`,
          excerpt: sections.find((s) => s.body)?.body ?? c.row.description ?? '',
          sections,
        },
      };
    }),
  };
}

/**
 * A site space's place under the published site's address: `section/` (its section's default
 * site space) or `section/space/`, `space/` at the root level; the rule of `SiteSpace.urls`.
 */
function siteSpaceBase(s: SiteSpaceRow): string {
  if (!s.section) return `${s.path}/`;
  return s.section.defaultSiteSpaceId === s.id ? `${s.section.path}/` : `${s.section.path}/${s.path}/`;
}

/** The site spaces a scope names, among those the reader sees. */
function inScope(seen: SiteSpaceRow[], scope: SiteSearchScope, siteDefault: string | null): SiteSpaceRow[] {
  if (scope.mode === 'all') return seen;
  const named = new Set(scope.siteSpaceIds ?? []);
  if (scope.mode === 'specific') return seen.filter((s) => named.has(s.id));
  // default: each section's landing site space for this reader (its default when it sees it,
  // else its first), or the site's without sections; plus the ones named.
  const landing = new Set<string>();
  const bySection = new Map<string | null, SiteSpaceRow[]>();
  for (const s of seen) bySection.set(s.sectionId, [...(bySection.get(s.sectionId) ?? []), s]);
  for (const [sectionId, list] of bySection) {
    const preferred = sectionId ? list[0].section?.defaultSiteSpaceId : siteDefault;
    landing.add((list.find((s) => s.id === preferred) ?? list[0]).id);
  }
  return seen.filter((s) => landing.has(s.id) || named.has(s.id));
}

/** Order: rank descending, then version id, then site space id. */
function compareKeys(rankA: number, a: readonly unknown[], rankB: number, b: readonly unknown[]): number {
  if (rankA !== rankB) return rankA > rankB ? -1 : 1;
  for (const i of [1, 2]) {
    if (a[i] !== b[i]) return String(a[i]) < String(b[i]) ? -1 : 1;
  }
  return 0;
}

function afterKey(after: unknown[] | null | undefined): [string, string, string] | null {
  if (after == null) return null;
  const [rank, versionId, siteSpaceId] = after;
  if (after.length !== 3 || typeof rank !== 'string' || !Number.isFinite(Number(rank)) || typeof versionId !== 'string' || typeof siteSpaceId !== 'string') {
    throw badRequest('after', 'not a cursor of this search');
  }
  return [rank, versionId, siteSpaceId];
}
