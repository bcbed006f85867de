// REST routes for search, on `Space.search` and `Organization.search` (graphql/search.ts).
import { z } from 'zod';
import { type RestRoute, listQueryShape, pageVariables, listEnvelope, compact, CONNECTION_FIELDS } from './router.ts';
import { SearchQuery } from '../domain/search.ts';

const SECTION_FIELDS = 'id: sectionId title path body urls { app }';
export const SEARCH_PAGE_FIELDS = `id: pageId title path sections { ${SECTION_FIELDS} } urls { app }`;

const searchQuery = z.strictObject({ query: SearchQuery, ...listQueryShape });

const toRestPage = (p: any) => compact({ id: p.id, title: p.title, path: p.path, sections: p.sections, urls: p.urls });

export const routes: RestRoute[] = [
  {
    method: 'GET',
    path: '/v1/spaces/:spaceId/search',
    query: searchQuery,
    document: `query($id: ID!, $q: String!, $first: Int, $after: String) { space(id: $id) { search(query: $q, first: $first, after: $after) { ${CONNECTION_FIELDS} nodes { ${SEARCH_PAGE_FIELDS} } } } }`,
    variables: ({ params, query }) => ({ id: params.spaceId, q: query.query, ...pageVariables(query) }),
    result: (d) => listEnvelope(d.space.search, toRestPage),
  },
  {
    method: 'GET',
    path: '/v1/orgs/:organizationId/search',
    query: searchQuery,
    document: `query($id: ID!, $q: String!, $first: Int, $after: String) { organization(id: $id) { search(query: $q, first: $first, after: $after) { ${CONNECTION_FIELDS} nodes { id: spaceId title pages { ${SEARCH_PAGE_FIELDS} } } } } }`,
    variables: ({ params, query }) => ({ id: params.organizationId, q: query.query, ...pageVariables(query) }),
    result: (d) => listEnvelope(d.organization.search, (s: any) => ({ id: s.id, title: s.title, pages: s.pages.map(toRestPage) })),
  },
];
