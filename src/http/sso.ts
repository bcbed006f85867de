// SAML endpoints of the service provider (`/sso/saml/{providerId}/…`), outside the /v1 API and
// without a bearer token (the signed SAML response is the credential):
//   GET  …/start     302 to the identity provider's SSO URL
//   POST …/acs       assertion consumer service (HTTP-POST binding, form field `SAMLResponse`)
//   GET  …/metadata  the service provider's metadata (its URL is the SP entity ID)
// The ACS answers 200 JSON `{ user, member, organization, token }` with a new API token: this
// gateway has no browser session; a web app in front of it would set its session cookie from
// that answer and redirect instead.
import type http from 'node:http';
import type { Context } from '../graphql/context.ts';
import { sendJson } from './compression.ts';
import type { RequestTarget } from './limits.ts';
import { AppError, HTTP_STATUS, badRequest, errorBody } from '../lib/errors.ts';
import { samlSignIn, samlStartUrl, samlServiceUrls } from '../domain/sso.ts';

const ROUTE = /^\/sso\/saml\/([^/]+)\/(acs|start|metadata)\/?$/;
const METHODS: Record<string, string> = { acs: 'POST', start: 'GET', metadata: 'GET' };

export async function handleSsoRequest(req: http.IncomingMessage, res: http.ServerResponse, target: RequestTarget, rawBody: string, ctx: Context) {
  const m = ROUTE.exec(target.pathname);
  if (!m) return sendJson(res, 404, errorBody(404, `Not found: ${target.pathname}`));
  const providerId = target.segments[2]; // already decoded (limits.ts)
  const action = m[2];
  const method = req.method ?? 'GET';
  if (method !== METHODS[action] && !(method === 'HEAD' && METHODS[action] === 'GET')) {
    res.setHeader('Allow', METHODS[action]);
    return sendJson(res, 405, errorBody(405, `Method ${method} is not allowed on ${target.pathname}`));
  }
  try {
    if (action === 'start') {
      const location = await samlStartUrl(ctx, providerId);
      res.writeHead(302, { Location: location, 'Cache-Control': 'no-store' });
      return res.end();
    }
    if (action === 'metadata') {
      const provider = await ctx.prisma.samlProvider.findUnique({ where: { id: providerId }, select: { id: true } });
      if (!provider) throw new AppError('NOT_FOUND', 'SAML provider not found');
      const xml = serviceProviderMetadata(samlServiceUrls(ctx.config.publicUrl, provider.id));
      res.writeHead(200, { 'Content-Type': 'application/samlmetadata+xml; charset=utf-8', 'Content-Length': Buffer.byteLength(xml) });
      return res.end(method === 'HEAD' ? undefined : xml);
    }
    const samlResponse = readSamlResponse(req.headers['content-type'], rawBody);
    const { user, member, organization, token } = await samlSignIn(ctx, providerId, samlResponse);
    res.setHeader('Cache-Control', 'no-store');
    return sendJson(res, 200, {
      user: {
        object: 'user',
        id: user.id,
        displayName: user.displayName,
        email: user.email,
        ...(user.photoURL ? { photoURL: user.photoURL } : {}),
        urls: { location: `${ctx.config.publicUrl}/v1/users/${user.id}` },
      },
      member: { object: 'member', id: member.id, role: member.role, sso: member.sso, joinedAt: member.joinedAt },
      organization: {
        object: 'organization',
        id: organization.id,
        title: organization.title,
        urls: { location: `${ctx.config.publicUrl}/v1/orgs/${organization.id}`, app: `${ctx.config.appUrl}/o/${organization.id}` },
      },
      token,
    });
  } catch (err) {
    if (err instanceof AppError) {
      const status = HTTP_STATUS[err.code];
      return sendJson(res, status, errorBody(status, err.message));
    }
    throw err; // the server logs it and answers 500
  }
}

/** `SAMLResponse` from a form post (the HTTP-POST binding) or, for scripts, a JSON body. */
function readSamlResponse(contentType: string | undefined, rawBody: string): string {
  const type = (contentType ?? '').split(';')[0].trim().toLowerCase();
  let value: unknown;
  if (type === 'application/json') {
    try {
      value = (JSON.parse(rawBody) as Record<string, unknown>)?.SAMLResponse;
    } catch {
      throw badRequest('body', 'malformed JSON');
    }
  } else {
    value = new URLSearchParams(rawBody).get('SAMLResponse');
  }
  if (typeof value !== 'string' || value.trim() === '') throw badRequest('SAMLResponse', 'required (the base64-encoded SAML response)');
  if (value.length > 2_000_000) throw badRequest('SAMLResponse', 'too large');
  return value.trim();
}

const xmlAttr = (s: string) => s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

function serviceProviderMetadata(service: { acsURL: string; entityID: string }) {
  return `<?xml version="1.0" encoding="UTF-8"?>
<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" entityID="${xmlAttr(service.entityID)}">
  <md:SPSSODescriptor AuthnRequestsSigned="false" WantAssertionsSigned="true" protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol">
    <md:NameIDFormat>urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress</md:NameIDFormat>
    <md:AssertionConsumerService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="${xmlAttr(service.acsURL)}" index="0" isDefault="true"/>
  </md:SPSSODescriptor>
</md:EntityDescriptor>
`;
}
