// Search: `Space.search` and `Organization.search`, full-text search over current content
// (see domain/search.ts). Connections of computed results with keyset cursors over (rank, id).
import { builder } from './builder.ts';
import { searchOrganization, searchSpace, type SearchConnection, type SearchPage, type SearchSpace } from '../domain/search.ts';

const SearchUrls = builder.simpleObject('SearchResultUrls', { fields: (t) => ({ app: t.string() }) });

const SearchSectionResult = builder.simpleObject('SearchSectionResult', {
  description: 'A section of a page (split at headings) that matches the query.',
  fields: (t) => ({
    id: t.string(),
    title: t.string(),
    path: t.string({ description: 'Page path plus the section anchor.' }),
    body: t.string({ description: 'An excerpt of the section text.' }),
    urls: t.field({ type: SearchUrls }),
  }),
});

const SearchPageResult = builder.simpleObject('SearchPageResult', {
  description: 'A page that matches the query, with its matching sections.',
  fields: (t) => ({
    id: t.string({ description: 'The page id.' }),
    title: t.string(),
    path: t.string(),
    sections: t.field({ type: [SearchSectionResult] }),
    urls: t.field({ type: SearchUrls }),
  }),
});

const SearchSpaceResult = builder.simpleObject('SearchSpaceResult', {
  description: 'A space with matching pages.',
  fields: (t) => ({
    id: t.string({ description: 'The space id.' }),
    title: t.string(),
    pages: t.field({ type: [SearchPageResult] }),
  }),
});

function toConnection<T>(c: SearchConnection<T>) {
  return {
    edges: c.items,
    totalCount: c.totalCount,
    pageInfo: {
      hasNextPage: c.hasNextPage,
      hasPreviousPage: false,
      startCursor: c.items[0]?.cursor ?? null,
      endCursor: c.items[c.items.length - 1]?.cursor ?? null,
    },
  };
}

const totalCountConnection = (name: string) => ({
  name,
  fields: (c: any) => ({
    totalCount: c.int({ description: 'Total number of results, whatever the page.', resolve: (p: unknown) => (p as { totalCount: number }).totalCount }),
  }),
});

builder.prismaObjectField('Space', 'search', (t) =>
  t.connection({
    type: SearchPageResult,
    description: 'Pages of the current revision matching `query` (web search syntax), best first.',
    args: { query: t.arg.string({ required: true, description: 'At most 512 characters.' }) },
    select: { id: true },
    resolve: async (space, args, ctx) => toConnection<SearchPage>(await searchSpace(ctx, space.id, args.query, args)) as never,
  }, totalCountConnection('SpaceSearchConnection')),
);

builder.prismaObjectField('Organization', 'search', (t) =>
  t.connection({
    type: SearchSpaceResult,
    description: 'Spaces you may read with pages matching `query`, best first.',
    args: { query: t.arg.string({ required: true, description: 'At most 512 characters.' }) },
    select: { id: true },
    resolve: async (org, args, ctx) => toConnection<SearchSpace>(await searchOrganization(ctx, org.id, args.query, args)) as never,
  }, totalCountConnection('OrganizationSearchConnection')),
);
