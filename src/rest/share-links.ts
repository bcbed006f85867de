// REST routes for site share links, on the GraphQL operations of graphql/share-links.ts.
import { z } from 'zod';
import { type RestRoute, listQueryShape, pageVariables, listEnvelope, compact, CONNECTION_FIELDS } from './router.ts';
import { CreateShareLinkInput, UpdateShareLinkInput } from '../domain/share-links.ts';

const SITE = '/v1/orgs/:organizationId/sites/:siteId';

export const SHARE_LINK_FIELDS = 'id name active createdAt urls { published }';

export function toRestShareLink(l: any) {
  return compact({ object: 'share-link', id: l.id, createdAt: l.createdAt, name: l.name, active: l.active, urls: compact(l.urls) });
}

const keys = (params: Record<string, string>) => ({ organizationId: params.organizationId, siteId: params.siteId });

export const routes: RestRoute[] = [
  {
    method: 'GET',
    path: `${SITE}/share-links`,
    query: z.strictObject(listQueryShape),
    document: `query($id: ID!, $org: ID!, $first: Int, $after: String) {
      site(id: $id, organizationId: $org) { shareLinks(first: $first, after: $after) { ${CONNECTION_FIELDS} nodes { ${SHARE_LINK_FIELDS} } } } }`,
    variables: ({ params, query }) => ({ id: params.siteId, org: params.organizationId, ...pageVariables(query) }),
    result: (d) => listEnvelope(d.site.shareLinks, toRestShareLink),
  },
  {
    method: 'POST',
    path: `${SITE}/share-links`,
    body: CreateShareLinkInput,
    document: `mutation($input: CreateSiteShareLinkInput!) { createSiteShareLink(input: $input) { shareLink { ${SHARE_LINK_FIELDS} } } }`,
    variables: ({ params, body }) => ({ input: { ...keys(params), name: body.name } }),
    result: (d) => toRestShareLink(d.createSiteShareLink.shareLink),
    status: 201,
  },
  {
    method: 'PATCH',
    path: `${SITE}/share-links/:shareLinkId`,
    body: UpdateShareLinkInput,
    document: `mutation($input: UpdateSiteShareLinkInput!) { updateSiteShareLink(input: $input) { shareLink { ${SHARE_LINK_FIELDS} } } }`,
    variables: ({ params, body }) => ({ input: { ...keys(params), shareLinkId: params.shareLinkId, ...body } }),
    result: (d) => toRestShareLink(d.updateSiteShareLink.shareLink),
  },
  {
    method: 'DELETE',
    path: `${SITE}/share-links/:shareLinkId`,
    document: `mutation($input: SiteShareLinkKeyInput!) { deleteSiteShareLink(input: $input) { deleted } }`,
    variables: ({ params }) => ({ input: { ...keys(params), shareLinkId: params.shareLinkId } }),
    status: (d) => (d.deleteSiteShareLink.deleted ? 205 : 204),
  },
];
