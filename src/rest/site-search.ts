// REST site search: the official `POST ORG/sites/{siteId}/search` (searchSiteContent) on the
// `searchSite` query (graphql/site-search.ts). A published read: it runs without a token for the
// sites its reader may see (`shareKey` in the query string, a visitor token in `X-Visitor-Token`,
// `visitor: { claims: { unsigned } }` in the body, an extension).
//
// The contract's items are spaces with their pages (SearchSpaceResult); `searchSite` pages over
// page results. A page of results is grouped here by site space, in rank order of each group's
// best page, so one space may continue on the next page; `count` is the number of page results.
import { z } from 'zod';
import { type RestRoute, listQueryShape, CONNECTION_FIELDS, compact } from './router.ts';
import { SearchQuery } from '../domain/search.ts';
import { SITE_SEARCH_MAX_PAGE, SITE_SEARCH_PAGE, type SiteSearchScope } from '../domain/site-search.ts';

const ids = z.array(z.string().min(1).max(200)).max(100);

/** The contract's `scope` (SiteSearchScope). */
const Scope = z.discriminatedUnion('mode', [
  z.strictObject({ mode: z.literal('default'), includedSiteSpaces: ids.optional() }),
  z.strictObject({ mode: z.literal('specific'), siteSpaceIds: ids.min(1) }),
  z.strictObject({ mode: z.literal('all') }),
]);

/** The body: `query` and a scope, or one of the deprecated `mode` forms; `visitor` is an extension. */
const Body = z.strictObject({
  query: SearchQuery,
  scope: Scope.optional(),
  mode: z.enum(['specific', 'current', 'all']).optional(),
  siteSpaceIds: ids.min(1).optional(),
  siteSpaceId: z.string().min(1).max(200).optional(),
  visitor: z.unknown().optional(),
});
type Body = z.infer<typeof Body>;

/** A deprecated form missing the field it needs: the field and why. */
function scopeProblem(b: Body): { path: string; message: string } | null {
  if (b.scope) return null;
  if (b.mode === 'current' && !b.siteSpaceId) return { path: 'siteSpaceId', message: 'required with mode "current"' };
  if (b.mode === 'specific' && !b.siteSpaceIds) return { path: 'siteSpaceIds', message: 'required with mode "specific"' };
  return null;
}

/** The domain's scope from the contract's forms (none given: the whole site). */
function scopeOf(b: Body): SiteSearchScope {
  if (b.scope?.mode === 'default') return { mode: 'default', siteSpaceIds: b.scope.includedSiteSpaces ?? [] };
  if (b.scope?.mode === 'specific') return { mode: 'specific', siteSpaceIds: b.scope.siteSpaceIds };
  if (b.scope?.mode === 'all') return { mode: 'all' };
  if (b.mode === 'current') return { mode: 'default', siteSpaceIds: [b.siteSpaceId!] };
  if (b.siteSpaceIds) return { mode: 'specific', siteSpaceIds: b.siteSpaceIds };
  return { mode: 'all' };
}

const URLS = 'urls { app }';
const DOCUMENT = `query($id: ID!, $org: ID!, $q: String!, $shareKey: String, $visitor: JSON, $scope: SiteSearchScopeInput, $first: Int, $after: String) {
  searchSite(siteId: $id, organizationId: $org, query: $q, shareKey: $shareKey, visitor: $visitor, scope: $scope, first: $first, after: $after) {
    ${CONNECTION_FIELDS} totalCountIsCapped
    nodes { siteSpace { id: siteSpaceId title } spaceId pageId title path sections { id: sectionId title path body ${URLS} } ${URLS} }
  }
}`;

type Node = { siteSpace: { id: string; title: string }; spaceId: string; pageId: string; title: string; path: string; sections: unknown[]; urls: { app: string } };

export const routes: RestRoute[] = [
  {
    method: 'POST',
    path: '/v1/orgs/:organizationId/sites/:siteId/search',
    published: true,
    query: z.strictObject({ ...listQueryShape, shareKey: z.string().max(512).optional() }),
    body: Body.superRefine((b, ctx) => {
      const problem = scopeProblem(b);
      if (problem) ctx.addIssue({ code: 'custom', path: [problem.path], message: problem.message });
    }),
    document: DOCUMENT,
    variables: ({ params, query, body }) => ({
      id: params.siteId,
      org: params.organizationId,
      q: body.query,
      shareKey: query.shareKey ?? null,
      visitor: body.visitor ?? null,
      scope: scopeOf(body),
      // The contract allows `limit` up to 1,000; a site search page holds at most 100 (the rest on `next`).
      first: Math.min(query.limit ?? SITE_SEARCH_PAGE, SITE_SEARCH_MAX_PAGE),
      after: query.page ?? null,
    }),
    result: (d) => {
      const c = d.searchSite;
      const groups = new Map<string, { id: string; title: string; pages: unknown[] }>();
      for (const n of c.nodes as Node[]) {
        let g = groups.get(n.siteSpace.id);
        if (!g) groups.set(n.siteSpace.id, (g = { id: n.spaceId, title: n.siteSpace.title, pages: [] }));
        g.pages.push(compact({ id: n.pageId, title: n.title, path: n.path, sections: n.sections, urls: n.urls }));
      }
      const body: Record<string, unknown> = { items: [...groups.values()], count: c.totalCount };
      // An extension, as on space and organization search: `count` is a floor.
      if (c.totalCountIsCapped) body.countIsCapped = true;
      if (c.pageInfo.hasNextPage && c.pageInfo.endCursor) body.next = { page: c.pageInfo.endCursor };
      return body;
    },
  },
];
