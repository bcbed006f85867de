// SAML endpoints (`/sso/...`): start URL and assertion consumer service. Filled in by the SSO area.
import type http from 'node:http';
import type { Context } from '../graphql/context.ts';
import { sendJson } from './server.ts';
import { errorBody } from '../rest/router.ts';

export async function handleSsoRequest(_req: http.IncomingMessage, res: http.ServerResponse, url: URL, _rawBody: string, _ctx: Context) {
  return sendJson(res, 404, errorBody(404, `Not found: ${url.pathname}`));
}
