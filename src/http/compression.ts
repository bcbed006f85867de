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

/** Write a JSON response, compressed when it is large and the client accepts an encoding. */
export async function sendJson(res: http.ServerResponse, status: number, body: unknown): Promise<void> {
  const raw = Buffer.from(JSON.stringify(body), 'utf8');
  const encoding = raw.length >= COMPRESS_MIN_BYTES ? pickEncoding(res.req?.headers['accept-encoding']) : null;
  const headers: http.OutgoingHttpHeaders = { 'Content-Type': 'application/json; charset=utf-8', Vary: 'Accept-Encoding' };
  let out: Buffer = raw;
  if (encoding) {
    out = await compress(raw, encoding);
    headers['Content-Encoding'] = encoding;
  }
  headers['Content-Length'] = out.length;
  res.writeHead(status, headers);
  res.end(out);
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
      headers.append('vary', 'Accept-Encoding');
      setResponse(new fetchAPI.Response(new Uint8Array(out), { status: response.status, statusText: response.statusText, headers }));
    },
  };
}
