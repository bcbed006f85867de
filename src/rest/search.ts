// REST routes for search, on `Space.search` and `Organization.search` (graphql/search.ts).
import { z } from 'zod';
import { type RestRoute, listQueryShape, pageVariables, listEnvelope, compact, CONNECTION_FIELDS } from './router.ts';
import { SEARCH_PAGE_SIZE, SearchQuery } from '../domain/search.ts';

const SECTION_FIELDS = 'id: sectionId title path body urls { app }';
export const SEARCH_PAGE_FIELDS = `id: pageId title path sections { ${SECTION_FIELDS} } urls { app }`;

const searchQuery = z.strictObject({ query: SearchQuery, ...listQueryShape });

/** `limit` defaults to a screen of results (SEARCH_PAGE_SIZE), not the lists' 100. */
const searchPage = (query: { page?: string; limit?: number }) => ({ ...pageVariables(query), first: query.limit ?? SEARCH_PAGE_SIZE });

/** The list envelope; `countIsCapped: true` (an extension) when `count` is a floor (graphql/search.ts). */
const searchEnvelope = (connection: any, mapItem: (n: any) => unknown) => listEnvelope(connection, mapItem, connection.totalCountIsCapped ? { countIsCapped: true } : {});

const toRestPage = (p: any) => compact({ id: p.id, title: p.title, path: p.path, sections: p.sections, urls: p.urls });

export const routes: RestRoute[] = [
  {
    method: 'GET',
    path: '/v1/spaces/:spaceId/search',
    query: searchQuery,
    document: `query($id: ID!, $q: String!, $first: Int, $after: String) { space(id: $id) { search(query: $q, first: $first, after: $after) { ${CONNECTION_FIELDS} totalCountIsCapped nodes { ${SEARCH_PAGE_FIELDS} } } } }`,
    variables: ({ params, query }) => ({ id: params.spaceId, q: query.query, ...searchPage(query) }),
    result: (d) => searchEnvelope(d.space.search, toRestPage),
  },
  {
    method: 'GET',
    path: '/v1/orgs/:organizationId/search',
    query: searchQuery,
    document: `query($id: ID!, $q: String!, $first: Int, $after: String) { organization(id: $id) { search(query: $q, first: $first, after: $after) { ${CONNECTION_FIELDS} totalCountIsCapped nodes { id: spaceId title pages { ${SEARCH_PAGE_FIELDS} } } } } }`,
    variables: ({ params, query }) => ({ id: params.organizationId, q: query.query, ...searchPage(query) }),
    result: (d) => searchEnvelope(d.organization.search, (s: any) => ({ id: s.id, title: s.title, pages: s.pages.map(toRestPage) })),
  },
];
