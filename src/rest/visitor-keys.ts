// REST routes for a site's visitor authentication, on the GraphQL operations of
// graphql/visitor-keys.ts: the official publishing-auth operations (get, update, regenerate) and
// the public-key extension (PUT / DELETE …/publishing/auth/public-key).
import { z } from 'zod';
import { type RestRoute, compact } from './router.ts';
import { notFound } from '../lib/errors.ts';
import { SetPublicKeyInput, UpdatePublishingAuthInput, VISITOR_AUTH_BACKENDS } from '../domain/visitor-keys.ts';

const AUTH = '/v1/orgs/:organizationId/sites/:siteId/publishing/auth';

const KEY_FIELDS = 'id algorithm createdAt retiresAt current publicKey';
const AUTH_FIELDS = `backend integration fallbackURL keys { ${KEY_FIELDS} }`;
const PUBLISHING_AUTH_FIELDS = `${AUTH_FIELDS} privateKey`;

const keys = (params: Record<string, string>) => ({ organizationId: params.organizationId, siteId: params.siteId });

/**
 * The official `SitePublishingAuth`: it requires `privateKey`, the current HS256 secret. A site
 * without one (no key yet, or a public key as its current key) answers 404 saying why: a GET
 * never writes.
 */
export function toRestPublishingAuth(a: any) {
  if (a.privateKey == null) {
    const current = (a.keys as Array<{ algorithm: string; current: boolean }>).find((k) => k.current);
    throw notFound(
      'Visitor key',
      current
        ? `the site verifies visitor tokens with its ${current.algorithm} public key, so there is no private key to show (POST …/publishing/auth/regenerate switches to a new HS256 secret)`
        : 'the site has no visitor key yet (POST …/publishing/auth/regenerate or PATCH …/publishing/auth creates its HS256 secret)',
    );
  }
  return compact({ object: 'publishing-auth', backend: a.backend, privateKey: a.privateKey, fallbackURL: a.fallbackURL, integration: a.integration });
}

/** The extension's answer: settings and the keys that verify now, without secrets. */
const VisitorKeyShape = z.object({
  object: z.literal('site-visitor-key'),
  id: z.string(),
  algorithm: z.enum(['HS256', 'RS256', 'ES256']),
  createdAt: z.string().describe('ISO 8601'),
  retiresAt: z.string().optional().describe('When a rotated-out key stops verifying; absent for the current key'),
  current: z.boolean(),
  publicKey: z.string().optional().describe('SPKI PEM, for RS256/ES256 keys'),
});
const VisitorAuthShape = z.object({
  object: z.literal('site-visitor-auth'),
  backend: z.enum(VISITOR_AUTH_BACKENDS),
  integration: z.string().optional(),
  fallbackURL: z.string().optional(),
  keys: z.array(VisitorKeyShape),
});

export function toRestVisitorAuth(a: any) {
  return compact({
    object: 'site-visitor-auth',
    backend: a.backend,
    integration: a.integration,
    fallbackURL: a.fallbackURL,
    keys: a.keys.map((k: any) => compact({ object: 'site-visitor-key', id: k.id, algorithm: k.algorithm, createdAt: k.createdAt, retiresAt: k.retiresAt, current: k.current, publicKey: k.publicKey })),
  });
}

/** The official PATCH body: `backend` is required (the oneOf of VisitorAuthCustomBackend / VisitorAuthIntegrationBackend). */
const PatchBody = UpdatePublishingAuthInput.extend({ backend: z.enum(VISITOR_AUTH_BACKENDS) });

export const routes: RestRoute[] = [
  {
    method: 'GET',
    path: AUTH,
    document: `query($id: ID!, $org: ID!) { sitePublishingAuth(siteId: $id, organizationId: $org) { ${PUBLISHING_AUTH_FIELDS} } }`,
    variables: ({ params }) => ({ id: params.siteId, org: params.organizationId }),
    result: (d) => toRestPublishingAuth(d.sitePublishingAuth),
  },
  {
    method: 'PATCH',
    path: AUTH,
    body: PatchBody,
    document: `mutation($input: UpdateSitePublishingAuthInput!) { updateSitePublishingAuth(input: $input) { publishingAuth { ${PUBLISHING_AUTH_FIELDS} } } }`,
    // The answer must carry the private key: a site on a public key refuses (409) before changing anything.
    variables: ({ params, body }) => ({ input: { ...keys(params), ...body, requirePrivateKey: true } }),
    result: (d) => toRestPublishingAuth(d.updateSitePublishingAuth.publishingAuth),
  },
  {
    method: 'POST',
    path: `${AUTH}/regenerate`,
    document: `mutation($input: SiteVisitorKeyInput!) { regenerateSiteVisitorKey(input: $input) { publishingAuth { ${PUBLISHING_AUTH_FIELDS} } } }`,
    variables: ({ params }) => ({ input: keys(params) }),
    result: (d) => toRestPublishingAuth(d.regenerateSiteVisitorKey.publishingAuth),
  },
  {
    method: 'PUT',
    path: `${AUTH}/public-key`,
    body: SetPublicKeyInput,
    document: `mutation($input: SetSiteVisitorPublicKeyInput!) { setSiteVisitorPublicKey(input: $input) { publishingAuth { ${AUTH_FIELDS} } } }`,
    variables: ({ params, body }) => ({ input: { ...keys(params), algorithm: body.algorithm, publicKey: body.publicKey } }),
    result: (d) => toRestVisitorAuth(d.setSiteVisitorPublicKey.publishingAuth),
    openapi: {
      operationId: 'setSitePublishingAuthPublicKey',
      summary: 'Make the owner’s RS256/ES256 public key (SPKI PEM) the site’s current visitor key; the previous key verifies during the overlap',
      response: VisitorAuthShape,
    },
  },
  {
    method: 'DELETE',
    path: `${AUTH}/public-key`,
    document: `mutation($input: SiteVisitorKeyInput!) { removeSiteVisitorPublicKey(input: $input) { deleted } }`,
    variables: ({ params }) => ({ input: keys(params) }),
    status: (d) => (d.removeSiteVisitorPublicKey.deleted ? 205 : 204),
    openapi: { operationId: 'removeSitePublishingAuthPublicKey', summary: 'Remove the site’s public visitor keys; tokens signed with them stop verifying at once (205; 204 when there was none)', status: 205 },
  },
];
