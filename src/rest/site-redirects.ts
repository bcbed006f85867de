// REST routes for site redirects, on the GraphQL operations of graphql/site-redirects.ts. The
// contract writes destination kinds with `-` (`site-page`); the GraphQL ones use `_`.
import { z } from 'zod';
import { type RestRoute, listQueryShape, pageVariables, listEnvelope, compact, gqlEnum, restEnum, CONNECTION_FIELDS } from './router.ts';
import { UPSERT_MAX } from '../domain/site-redirects.ts';

const SITE = '/v1/orgs/:organizationId/sites/:siteId';

export const REDIRECT_FIELDS = 'id source destination { kind siteSectionId siteSpaceId pageId }';

export function toRestRedirect(r: any) {
  const d = r.destination;
  return {
    object: 'site-redirect',
    id: r.id,
    source: r.source,
    destination: compact({ kind: restEnum(d.kind), siteSectionId: d.siteSectionId, siteSpaceId: d.siteSpaceId, pageId: d.pageId }),
  };
}

const Id = z.string().min(1).max(200);
/** The contract's SiteRedirectDestination; the domain checks the ids name objects of the site. */
const Destination = z
  .discriminatedUnion('kind', [
    z.strictObject({ kind: z.literal('site-section'), siteSectionId: Id }),
    z.strictObject({ kind: z.literal('site-space'), siteSpaceId: Id }),
    z.strictObject({ kind: z.literal('site-page'), siteSpaceId: Id, pageId: Id }),
  ])
  .transform((d) => ({ ...d, kind: gqlEnum(d.kind) }));
// The domain normalizes and bounds it (a 400 naming `source`).
const Source = z.string().max(2048);

const CreateBody = z.strictObject({ source: Source, destination: Destination });
const UpdateBody = z.strictObject({ source: Source.optional(), destination: Destination.optional() });
const UpsertBody = z.strictObject({
  redirects: z
    .array(z.strictObject({ source: Source, destination: Destination.nullable(), intent: z.literal('live').optional() }).transform(({ intent: _live, ...r }) => r))
    .min(1)
    .max(UPSERT_MAX),
});

const UpsertResponse = z.object({
  results: z.array(
    z.object({
      status: z.enum(['created', 'updated', 'deleted']),
      source: z.string(),
      draft: z.literal(false),
      id: z.string().optional().describe('The redirect written (absent when deleted).'),
    }),
  ),
});

const keys = (params: Record<string, string>) => ({ organizationId: params.organizationId, siteId: params.siteId });

export const routes: RestRoute[] = [
  {
    method: 'GET',
    path: `${SITE}/redirects`,
    query: z.strictObject(listQueryShape),
    document: `query($id: ID!, $org: ID!, $first: Int, $after: String) {
      site(id: $id, organizationId: $org) { redirects(first: $first, after: $after) { ${CONNECTION_FIELDS} nodes { ${REDIRECT_FIELDS} } } } }`,
    variables: ({ params, query }) => ({ id: params.siteId, org: params.organizationId, ...pageVariables(query) }),
    result: (d) => listEnvelope(d.site.redirects, toRestRedirect),
  },
  {
    method: 'POST',
    path: `${SITE}/redirects`,
    body: CreateBody,
    document: `mutation($input: CreateSiteRedirectInput!) { createSiteRedirect(input: $input) { redirect { ${REDIRECT_FIELDS} } } }`,
    variables: ({ params, body }) => ({ input: { ...keys(params), ...body } }),
    result: (d) => toRestRedirect(d.createSiteRedirect.redirect),
    status: 201,
  },
  {
    // The platform's newer API (bulkUpsertSiteRedirects), live redirects only: no drafts, no
    // wildcards, no external destinations. `destination: null` deletes.
    method: 'PUT',
    path: `${SITE}/redirects`,
    body: UpsertBody,
    openapi: { operationId: 'bulkUpsertSiteRedirects', summary: 'Create, replace or delete (destination null) site redirects by source, in one transaction', response: UpsertResponse },
    document: `mutation($input: UpsertSiteRedirectsInput!) { upsertSiteRedirects(input: $input) { results { status source redirect { id } } } }`,
    variables: ({ params, body }) => ({ input: { ...keys(params), redirects: body.redirects } }),
    result: (d) => ({ results: d.upsertSiteRedirects.results.map((r: any) => compact({ status: r.status, source: r.source, draft: false, id: r.redirect?.id })) }),
  },
  {
    method: 'PATCH',
    path: `${SITE}/redirects/:siteRedirectId`,
    body: UpdateBody,
    document: `mutation($input: UpdateSiteRedirectInput!) { updateSiteRedirect(input: $input) { redirect { ${REDIRECT_FIELDS} } } }`,
    variables: ({ params, body }) => ({ input: { ...keys(params), siteRedirectId: params.siteRedirectId, ...body } }),
    result: (d) => toRestRedirect(d.updateSiteRedirect.redirect),
  },
  {
    method: 'DELETE',
    path: `${SITE}/redirects/:siteRedirectId`,
    document: `mutation($input: SiteRedirectKeyInput!) { deleteSiteRedirect(input: $input) { deleted } }`,
    variables: ({ params }) => ({ input: { ...keys(params), siteRedirectId: params.siteRedirectId } }),
    status: (d) => (d.deleteSiteRedirect.deleted ? 205 : 204),
  },
  {
    // `shareKey` is accepted as the contract lists it; reading redirects is for members (site:read).
    method: 'GET',
    path: `${SITE}/redirect`,
    query: z.strictObject({ source: z.string().max(2048), shareKey: z.string().max(200).optional() }),
    document: `query($id: ID!, $org: ID!, $source: String!) {
      siteRedirectBySource(siteId: $id, organizationId: $org, source: $source) { target redirect { ${REDIRECT_FIELDS} } } }`,
    variables: ({ params, query }) => ({ id: params.siteId, org: params.organizationId, source: query.source }),
    result: (d) => ({ redirect: toRestRedirect(d.siteRedirectBySource.redirect), target: d.siteRedirectBySource.target ?? '' }),
  },
];
