// Response compression for both APIs. JSON bodies get large here (a published site's whole
// structure is 100–400 KB, a search for a common word 700 KB) and compress 5–10×; small bodies
// go as they are, since compressing them costs more time than it saves on the wire. Brotli at a
// fast quality when the client accepts it, else gzip. The REST shim compresses in `sendJson`;
// GraphQL responses pass through `useResponseCompression`, a yoga plugin.
import type http from 'node:http';
import zlib from 'node:zlib';
import { promisify } from 'node:util';
import type { Plugin } from 'graphql-yoga';

/** Bodies below this many bytes are sent uncompressed. */
export const COMPRESS_MIN_BYTES = 8 * 1024;

type Encoding = 'br' | 'gzip';

const brotli = promisify(zlib.brotliCompress);
const gzip = promisify(zlib.gzip);

/** The encoding to answer with for an Accept-Encoding header, or null for none. */
export function pickEncoding(acceptEncoding: string | null | undefined): Encoding | null {
  if (!acceptEncoding) return null;
  const accepted = new Map<string, number>();
  for (const part of acceptEncoding.toLowerCase().split(',')) {
    const [name, ...params] = part.trim().split(';');
    const q = params.map((p) => /^\s*q=([\d.]+)\s*$/.exec(p)?.[1]).find((v) => v !== undefined);
    accepted.set(name.trim(), q === undefined ? 1 : Number(q));
  }
  const wants = (e: string) => (accepted.get(e) ?? accepted.get('*') ?? 0) > 0;
  if (wants('br')) return 'br';
  if (wants('gzip')) return 'gzip';
  return null;
}

export function compress(body: Buffer, encoding: Encoding): Promise<Buffer> {
  return encoding === 'br'
    ? brotli(body, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 4, [zlib.constants.BROTLI_PARAM_SIZE_HINT]: body.length } })
    : gzip(body, { level: 5 });
}

/** A strong tag for a coded body (`"<tag>-gzip"`); a weak tag serves every coding unchanged. */
export function etagForCoding(etag: string | null | undefined, coding: string): string | undefined {
  if (!etag || etag.startsWith('W/') || !etag.endsWith('"')) return undefined;
  return `${etag.slice(0, -1)}-${coding}"`;
}

/** Write a JSON response, compressed when it is large and the client accepts an encoding. */
export function sendJson(res: http.ServerResponse, status: number, body: unknown): Promise<void> {
  return sendJsonBytes(res, status, Buffer.from(JSON.stringify(body), 'utf8'));
}

/** `sendJson` for a body already serialized. */
export async function sendJsonBytes(res: http.ServerResponse, status: number, raw: Buffer): Promise<void> {
  const encoding = raw.length >= COMPRESS_MIN_BYTES ? pickEncoding(res.req?.headers['accept-encoding']) : null;
  // Vary merges with what other modules set (cors.ts: Origin; conditional.ts: Authorization).
  appendVary(res, 'Accept-Encoding');
  const headers: http.OutgoingHttpHeaders = { 'Content-Type': 'application/json; charset=utf-8' };
  let out: Buffer = raw;
  if (encoding) {
    out = await compress(raw, encoding);
    headers['Content-Encoding'] = encoding;
    const tag = etagForCoding(res.getHeader('ETag') as string | undefined, encoding);
    if (tag) headers['ETag'] = tag;
  }
  headers['Content-Length'] = out.length;
  res.writeHead(status, headers);
  res.end(out);
}

/** Add values to the response's `Vary` header, keeping those already set (case-insensitively). */
export function appendVary(res: http.ServerResponse, ...values: string[]) {
  res.setHeader('Vary', mergeVary(res.getHeader('Vary'), values));
}

/** A `Vary` value with `values` added to `current` (each once, case-insensitively). */
export function mergeVary(current: string | number | readonly string[] | undefined | null, values: string[]): string {
  const text = Array.isArray(current) ? current.join(',') : current === undefined || current === null ? '' : String(current);
  const list = text
    .split(',')
    .map((v) => v.trim())
    .filter(Boolean);
  for (const v of values.map((x) => x.trim()).filter(Boolean)) if (!list.some((x) => x.toLowerCase() === v.toLowerCase())) list.push(v);
  return list.join(', ');
}

/** Yoga plugin: compress GraphQL responses of known length over the threshold. */
export function useResponseCompression(): Plugin {
  return {
    async onResponse({ request, response, setResponse, fetchAPI }) {
      const encoding = pickEncoding(request.headers.get('accept-encoding'));
      const length = Number(response.headers.get('content-length'));
      // Unknown length means a stream (incremental delivery, subscriptions): leave it alone.
      if (!encoding || !response.body || response.headers.has('content-encoding') || !(length >= COMPRESS_MIN_BYTES)) return;
      const out = await compress(Buffer.from(await response.arrayBuffer()), encoding);
      const headers = new fetchAPI.Headers(response.headers);
      headers.set('content-encoding', encoding);
      headers.set('content-length', String(out.length));
      // A strong tag (a shared-cacheable answer) names the identity bytes: the coded ones get their own.
      const tag = etagForCoding(headers.get('etag'), encoding);
      if (tag) headers.set('etag', tag);
      headers.set('vary', mergeVary(headers.get('vary'), ['Accept-Encoding']));
      setResponse(new fetchAPI.Response(new Uint8Array(out), { status: response.status, statusText: response.statusText, headers }));
    },
  };
}
