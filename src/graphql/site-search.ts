// `searchSite`: full-text search of one published site for its reader (domain/site-search.ts).
// A published read (src/auth/audience.ts PUBLISHED_READ_ROOT_FIELDS): it runs without a token.
// The revision trees it filters pages by come from the content area's batched, cached loaders.
import { builder } from './builder.ts';
import { decodeCursor, encodeCursor } from './cursors.ts';
import type { Context } from './context.ts';
import { badRequest } from '../lib/errors.ts';
import { loadRevisionContent } from './content-loading.ts';
import { publishedBaseUrl, withShareKey } from './sites.ts';
import { SEARCH_SCAN } from '../domain/search.ts';
import { searchSite, SITE_SEARCH_CANDIDATES, SITE_SEARCH_MAX_PAGE, SITE_SEARCH_PAGE, type SiteSearchConnection, type SiteSearchResult } from '../domain/site-search.ts';

const LIST = 'Query.searchSite';
const ORDER = [['rank', 'desc'], ['versionId', 'asc'], ['siteSpaceId', 'asc']] as const;

type Shaped = SiteSearchResult & { urls: { published: string | null; app: string } };

const SiteSearchUrls = builder.simpleObject('SiteSearchUrls', {
  description: 'Addresses of a site search result.',
  fields: (t) => ({
    published: t.string({ nullable: true, description: 'On the published site (with `?share=` for a share-link reader); null while the site is unpublished (a member\'s preview).' }),
    app: t.string({ description: 'The published address when there is one, else the page in the web app.' }),
  }),
});

const SiteSearchResultSection = builder.simpleObject('SiteSearchResultSection', {
  description: 'The site section a result is in.',
  fields: (t) => ({
    id: t.string({ description: 'The section (`sitesc_…`).', deprecationReason: 'Not this object\'s own id (client caches key objects by `id`): use `siteSectionId`.' }),
    title: t.string({ description: 'Its title, as visitors see it.' }),
    path: t.string({ description: 'Its URL segment in the site.' }),
  }),
});

const SiteSearchResultSiteSpace = builder.simpleObject('SiteSearchResultSiteSpace', {
  description: 'The site space a result is in.',
  fields: (t) => ({
    id: t.string({ description: 'The site space (`sitesp_…`).', deprecationReason: 'Not this object\'s own id (client caches key objects by `id`): use `siteSpaceId`.' }),
    path: t.string({ description: 'Its URL segment in its section (or the site).' }),
    title: t.string({ description: 'Its title (the space\'s).' }),
  }),
});

const SiteSearchMatch = builder.simpleObject('SiteSearchMatch', {
  description: 'A section of the page (split at headings) matching the query.',
  fields: (t) => ({
    id: t.string({ description: '`{pageId}#{anchor}`, or the page id for text before the first heading.', deprecationReason: 'Not this object\'s own id (client caches key objects by `id`): use `sectionId`.' }),
    title: t.string({ description: 'The heading (the page title for text before the first heading).' }),
    path: t.string({ description: 'Page path plus the anchor.' }),
    body: t.string({ description: 'An excerpt of the section text around the first query word.' }),
    urls: t.field({ type: SiteSearchUrls, description: 'Where to open the section.' }),
  }),
});

// The ids of what a result shows, named for what they are: a wrapper's own `id` would reuse the
// site section's, site space's or page's id (docs/decisions.md, "One object, one id").
builder.objectField(SiteSearchResultSection, 'siteSectionId', (t) => t.string({ description: 'The section (`sitesc_…`).', resolve: (r) => r.id }));
builder.objectField(SiteSearchResultSiteSpace, 'siteSpaceId', (t) => t.string({ description: 'The site space (`sitesp_…`).', resolve: (r) => r.id }));
builder.objectField(SiteSearchMatch, 'sectionId', (t) =>
  t.string({ description: 'The page section: `{pageId}#{anchor}`, or the page id for text before the first heading.', resolve: (r) => r.id }),
);

const SiteSearchResultRef = builder.simpleObject('SiteSearchResult', {
  description: 'A page of the site matching the query, where the reader finds it.',
  fields: (t) => ({
    section: t.field({ type: SiteSearchResultSection, nullable: true, description: 'Its section; null for a site without sections.' }),
    siteSpace: t.field({ type: SiteSearchResultSiteSpace, description: 'Its site space (a space shown in two site spaces gives a result in each).' }),
    spaceId: t.string({ description: 'The space of the page.' }),
    pageId: t.string({ description: 'The page.' }),
    title: t.string({ description: 'The page title.' }),
    path: t.string({ description: 'The page path in its space, e.g. `guides/install`.' }),
    sitePath: t.string({ description: 'The page path under the published site\'s address: section, site space and page paths.' }),
    excerpt: t.string({ description: 'An excerpt of the first matching section, else the page description (may be empty).' }),
    sections: t.field({ type: [SiteSearchMatch], description: 'Matching sections of the page, in page order.' }),
    urls: t.field({ type: SiteSearchUrls, description: 'Where to open the page.' }),
  }),
});

const SiteSearchScopeModeEnum = builder.enumType('SiteSearchScopeMode', {
  description: 'How wide a site search is.',
  values: {
    all: { description: 'Every section and site space the reader sees.' },
    default: { description: 'The default site space of each section (of the site without sections), plus `siteSpaceIds`.' },
    specific: { description: 'Only `siteSpaceIds`.' },
  } as const,
});

const SiteSearchScopeInput = builder.inputType('SiteSearchScopeInput', {
  description: 'Which site spaces to search (REST `scope`). Site spaces the reader cannot see find nothing.',
  fields: (t) => ({
    mode: t.field({ type: SiteSearchScopeModeEnum, required: true, description: 'How wide the search is.' }),
    siteSpaceIds: t.idList({ description: 'Site spaces (`sitesp_…`, at most 100): the only ones (`specific`) or added to the defaults (`default`).' }),
  }),
});

/** The published address of a result (and of its sections), for its reader. */
function shape(ctx: Context, c: SiteSearchConnection, r: SiteSearchResult): Shaped {
  const base = publishedBaseUrl(ctx.config.publicUrl, c.site);
  const view = { claims: c.reader.claims, shareKey: c.reader.shareKey, member: c.reader.member };
  const published = (hash: string) => (c.site.published ? withShareKey(`${base}${r.sitePath}${hash}`, view) : null);
  const app = (hash: string) => `${ctx.config.appUrl}/s/${r.spaceId}/${r.path}${hash}`;
  const urls = (hash: string) => ({ published: published(hash), app: published(hash) ?? app(hash) });
  return {
    ...r,
    urls: urls(''),
    sections: r.sections.map((s) => {
      const hash = s.path.includes('#') ? s.path.slice(s.path.indexOf('#')) : '';
      return { ...s, urls: urls(hash) };
    }) as never,
  };
}

builder.queryField('searchSite', (t) =>
  t.connection(
    {
      type: SiteSearchResultRef,
      description:
        `Full-text search of a site's current content as its reader sees it (the reader of \`publishedSite\`: members, anyone on a published public/unlisted site, share-link holders with \`shareKey\`, visitors with a visitor token): only sections, site spaces and pages whose conditions the reader passes. Best first; the best ${SITE_SEARCH_CANDIDATES} matches are ranked and filtered, so \`totalCount\` counts at most those. Pages forwards only (first/after). REST: POST /v1/orgs/{organizationId}/sites/{siteId}/search.`,
      args: {
        siteId: t.arg.id({ required: true, description: 'The site (`site_…`).' }),
        organizationId: t.arg.id({ description: 'When given, the site must belong to it (REST paths).' }),
        query: t.arg.string({ required: true, description: 'Web search syntax (`"exact phrase"`, `or`, `-word`); 1 to 512 characters.' }),
        shareKey: t.arg.string({ description: 'The key of an active share link, for a `share_link` site read by someone who is not a member.' }),
        visitorToken: t.arg.string({ description: 'A visitor token (JWT) signed with one of the site\'s visitor keys; the `X-Visitor-Token` header does the same.' }),
        visitor: t.arg({ type: 'JSON', description: 'The visitor: `{ claims: { unsigned: { … } } }` (anyone), or any claims for a member\'s preview.' }),
        scope: t.arg({ type: SiteSearchScopeInput, description: 'Which site spaces to search; default every one the reader sees.' }),
      },
      resolve: async (_root, args, ctx) => {
        if (args.last != null || args.before != null) throw badRequest(args.before != null ? 'before' : 'last', 'search results page forwards only (first/after)');
        const first = args.first ?? SITE_SEARCH_PAGE;
        if (first < 0 || first > SITE_SEARCH_MAX_PAGE) throw badRequest('first', `between 0 and ${SITE_SEARCH_MAX_PAGE}`);
        const c = await searchSite(
          ctx,
          {
            siteId: String(args.siteId),
            organizationId: args.organizationId == null ? undefined : String(args.organizationId),
            query: args.query,
            shareKey: args.shareKey,
            visitorToken: args.visitorToken ?? ctx.visitorToken,
            visitor: args.visitor,
            scope: args.scope == null ? undefined : { mode: args.scope.mode, ...(args.scope.siteSpaceIds ? { siteSpaceIds: args.scope.siteSpaceIds.map(String) } : {}) },
            first,
            after: args.after == null ? null : decodeCursor(args.after, LIST, ORDER, 'after'),
          },
          (ids) => Promise.all(ids.map((id) => loadRevisionContent(ctx, id, { withMarkdown: false }))),
        );
        const edges = c.items.map((e) => ({ cursor: encodeCursor(LIST, ORDER, e.key), node: shape(ctx, c, e.node) }));
        return {
          edges,
          totalCount: c.totalCount,
          capped: c.capped,
          pageInfo: { hasNextPage: c.hasNextPage, hasPreviousPage: false, startCursor: edges[0]?.cursor ?? null, endCursor: edges.at(-1)?.cursor ?? null },
        } as never;
      },
    },
    {
      name: 'SiteSearchConnection',
      fields: (c) => ({
        totalCount: c.int({ description: `Results the reader may see among the ${SITE_SEARCH_CANDIDATES} best matches, whatever the page.`, resolve: (p) => (p as unknown as { totalCount: number }).totalCount }),
        totalCountIsCapped: c.boolean({
          description: `True when more matched than were ranked: \`totalCount\` is then a floor, and the results are the best ${SITE_SEARCH_CANDIDATES} of the first ${SEARCH_SCAN} matches found (refine the query to see others). REST: \`countIsCapped\`.`,
          resolve: (p) => (p as unknown as { capped: boolean }).capped,
        }),
      }),
    },
  ),
);
