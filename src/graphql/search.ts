// Search: `Space.search` and `Organization.search`, full-text search over current content
// (see domain/search.ts). Connections of computed results with keyset cursors over (rank, id).
import { builder } from './builder.ts';
import { Keyset, decodeCursor, encodeCursor } from './cursors.ts';
import { badRequest } from '../lib/errors.ts';
import { SEARCH_CANDIDATES, SEARCH_PAGE_SIZE, SEARCH_SCAN, searchOrganization, searchSpace, type SearchConnection, type SearchPage, type SearchSpace } from '../domain/search.ts';

const SearchUrls = builder.simpleObject('SearchResultUrls', {
  description: 'Addresses of a search result.',
  fields: (t) => ({ app: t.string({ description: 'The result in the web app.' }) }),
});

const SearchSectionResult = builder.simpleObject('SearchSectionResult', {
  description: 'A section of a page (split at headings) that matches the query.',
  fields: (t) => ({
    id: t.string({ description: 'Section id (see `sectionId`).', deprecationReason: 'Not this object\'s own id (client caches key objects by `id`): use `sectionId`.' }),
    title: t.string({ description: 'The section heading (the page title for text before the first heading).' }),
    path: t.string({ description: 'Page path plus the section anchor.' }),
    body: t.string({ description: 'An excerpt of the section text.' }),
    urls: t.field({ type: SearchUrls, description: 'Where to open the section.' }),
  }),
});

const SearchPageResult = builder.simpleObject('SearchPageResult', {
  description: 'A page that matches the query, with its matching sections.',
  fields: (t) => ({
    id: t.string({ description: 'The page id.', deprecationReason: 'Not this object\'s own id (client caches key objects by `id`): use `pageId`.' }),
    title: t.string({ description: 'The page title.' }),
    path: t.string({ description: 'The page path in its space, e.g. `guides/install`.' }),
    sections: t.field({ type: [SearchSectionResult], description: 'Matching sections of the page, best first.' }),
    urls: t.field({ type: SearchUrls, description: 'Where to open the page.' }),
  }),
});

const SearchSpaceResult = builder.simpleObject('SearchSpaceResult', {
  description: 'A space with matching pages.',
  fields: (t) => ({
    id: t.string({ description: 'The space id.', deprecationReason: 'Not this object\'s own id (client caches key objects by `id`): use `spaceId`.' }),
    title: t.string({ description: 'The space title.' }),
    pages: t.field({ type: [SearchPageResult], description: 'Matching pages of the space, best first.' }),
  }),
});

// The stable ids of what a result shows, named for what they are: a result's own `id` would
// reuse the page's or space's id (docs/decisions.md, "One object, one id").
builder.objectField(SearchSectionResult, 'sectionId', (t) => t.string({ description: 'Section id: `{pageId}#{anchor}`, or the page id for text before the first heading.', resolve: (r) => r.id }));
builder.objectField(SearchPageResult, 'pageId', (t) => t.string({ description: 'The page id (`page_…`).', resolve: (r) => r.id }));
builder.objectField(SearchSpaceResult, 'spaceId', (t) => t.string({ description: 'The space id (`space_…`).', resolve: (r) => r.id }));

// The domain pages by (rank, id); its cursor travels inside a checked one naming the list.
const SEARCH_ORDER = [['key', 'asc']] as const;
type SearchArgs = { first?: number | null; after?: string | null; last?: number | null; before?: string | null };

function domainArgs(list: string, args: SearchArgs) {
  new Keyset(list, args); // first/last within bounds
  if (args.last != null || args.before != null) throw badRequest(args.before != null ? 'before' : 'last', 'search results page forwards only (first/after)');
  return { first: args.first ?? SEARCH_PAGE_SIZE, after: args.after == null ? null : (decodeCursor(args.after, list, SEARCH_ORDER, 'after')[0] as string) };
}

function toConnection<T>(list: string, c: SearchConnection<T>) {
  const items = c.items.map((e) => ({ ...e, cursor: encodeCursor(list, SEARCH_ORDER, [e.cursor]) }));
  return {
    edges: items,
    totalCount: c.totalCount,
    capped: c.capped,
    pageInfo: {
      hasNextPage: c.hasNextPage,
      hasPreviousPage: false,
      startCursor: items[0]?.cursor ?? null,
      endCursor: items[items.length - 1]?.cursor ?? null,
    },
  };
}

const totalCountConnection = (name: string) => ({
  name,
  fields: (c: any) => ({
    totalCount: c.int({
      description: `Results this search pages through, whatever the page: every match, up to the best ${SEARCH_CANDIDATES} (see \`totalCountIsCapped\`).`,
      resolve: (p: unknown) => (p as { totalCount: number }).totalCount,
    }),
    totalCountIsCapped: c.boolean({
      description: `True when more matched than the answer pages through: \`totalCount\` is then a floor, and the results are the best of the first ${SEARCH_SCAN} matches found (refine the query to see others). REST: \`countIsCapped\`.`,
      resolve: (p: unknown) => (p as { capped: boolean }).capped,
    }),
  }),
});

builder.prismaObjectField('Space', 'search', (t) =>
  t.connection({
    type: SearchPageResult,
    description: `Pages of the current revision matching \`query\` (web search syntax), best first; ${SEARCH_PAGE_SIZE} a page unless \`first\` says otherwise. Pages forwards only (first/after). REST: GET /v1/spaces/{spaceId}/search.`,
    args: { query: t.arg.string({ required: true, description: 'At most 512 characters.' }) },
    select: { id: true },
    resolve: async (space, args, ctx) => toConnection<SearchPage>('Space.search', await searchSpace(ctx, space.id, args.query, domainArgs('Space.search', args))) as never,
  }, totalCountConnection('SpaceSearchConnection')),
);

builder.prismaObjectField('Organization', 'search', (t) =>
  t.connection({
    type: SearchSpaceResult,
    description: `Spaces you may read with pages matching \`query\`, best first; ${SEARCH_PAGE_SIZE} a page unless \`first\` says otherwise. Pages forwards only (first/after). REST: GET /v1/orgs/{organizationId}/search.`,
    args: { query: t.arg.string({ required: true, description: 'At most 512 characters.' }) },
    select: { id: true },
    resolve: async (org, args, ctx) => toConnection<SearchSpace>('Organization.search', await searchOrganization(ctx, org.id, args.query, domainArgs('Organization.search', args))) as never,
  }, totalCountConnection('OrganizationSearchConnection')),
);
