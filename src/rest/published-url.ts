// REST routes of the URL lookup (graphql/published-url.ts): the contract's getPublishedContentByUrl
// (GET, deprecated there) and resolvePublishedContentByUrl (POST), answering its
// PublishedSiteContentLookup. Published reads: they run without a token too.
import { z } from 'zod';
import { type RestRoute, compact, q } from './router.ts';

const LOOKUP_FIELDS = `redirect target pathname basePath siteBasePath canonicalUrl organizationId shareKey complete revisionId
  site { id: siteId } siteSection { id: siteSectionId } siteSpace { id: siteSpaceId } space { id: spaceId }`;

const DOCUMENT = `query($url: String!, $visitorToken: String, $visitor: JSON) {
  publishedContentByUrl(url: $url, visitorToken: $visitorToken, visitor: $visitor) { ${LOOKUP_FIELDS} } }`;

export function toRestLookup(l: any) {
  if (l.redirect) return { target: l.target, redirect: l.redirect };
  return compact(
    {
      site: l.site.id,
      siteSection: l.siteSection?.id,
      siteSpace: l.siteSpace.id,
      space: l.space.id,
      revision: l.revisionId,
      pathname: l.pathname,
      basePath: l.basePath,
      siteBasePath: l.siteBasePath,
      // The contract's short-lived token for the content: the gateway mints none on a read (the
      // caller reads with its own token, a scoped one, or none), so it is always empty.
      apiToken: '',
      organization: l.organizationId,
      shareKey: l.shareKey,
      complete: l.complete,
      canonicalUrl: l.canonicalUrl,
    },
    [],
  );
}

const Url = z.string().max(2048);

export const routes: RestRoute[] = [
  {
    method: 'GET',
    path: '/v1/urls/published',
    published: true,
    query: z.strictObject({ url: Url, visitorAuthToken: z.string().max(8192).optional(), redirectOnError: q.bool() }),
    document: DOCUMENT,
    variables: ({ query }) => ({ url: query.url, visitorToken: query.visitorAuthToken ?? null }),
    result: (d) => toRestLookup(d.publishedContentByUrl),
  },
  {
    method: 'POST',
    path: '/v1/urls/published',
    published: true,
    body: z.strictObject({
      url: Url,
      redirectOnError: z.boolean().optional(),
      visitor: z.strictObject({ jwtToken: z.string().max(8192).optional(), unsignedClaims: z.record(z.string(), z.unknown()).optional() }).optional(),
    }),
    document: DOCUMENT,
    variables: ({ body }) => ({
      url: body.url,
      visitorToken: body.visitor?.jwtToken ?? null,
      visitor: body.visitor?.unsignedClaims ? { claims: { unsigned: body.visitor.unsignedClaims } } : null,
    }),
    result: (d) => toRestLookup(d.publishedContentByUrl),
  },
];
