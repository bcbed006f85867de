// File downloads (`/files/...`): uploaded files and generated PDFs, served with access checks.
// Filled in by the content area.
import type http from 'node:http';
import type { Context } from '../graphql/context.ts';
import { sendJson } from './server.ts';
import { errorBody } from '../rest/router.ts';

export async function handleDownload(_req: http.IncomingMessage, res: http.ServerResponse, url: URL, _ctx: Context) {
  return sendJson(res, 404, errorBody(404, `Not found: ${url.pathname}`));
}
