// Conditional GET: an `ETag` on successful GET/HEAD answers with a JSON body (REST and GraphQL), and
// `If-None-Match` → 304 without a body when the client already holds that representation.
//
// - A private answer's validator is weak, `W/"<base64url of sha256(uncompressed JSON), 128 bits>"`:
//   compression (compression.ts) changes the bytes on the wire but not what they mean, so one tag
//   serves identity, gzip and br alike, and `If-None-Match` uses weak comparison anyway.
// - The answer depends on the caller's token, so it is `Cache-Control: private, no-cache` (a
//   browser may keep it, must revalidate before each use; no shared cache stores it) and
//   `Vary: Authorization` (plus `Accept-Encoding` from compression, `Origin` from cors.ts).
// - Except the answers a shared cache may keep (`sharedCacheable` in auth/audience.ts): a GET
//   without a token, visitor token or claims of a public or unlisted published site, or with a
//   valid share key in the URL (the published cache, or a REST published read, says so). They are
//   `public, max-age=0, s-maxage=N, stale-while-revalidate=M` with a strong ETag (a shared cache
//   revalidates with it; compression.ts appends the content coding, `"<tag>-gzip"`, so each
//   coding has its own strong tag, and `If-None-Match` accepts either), and `Surrogate-Key` and
//   `xkey` (Varnish's vmod) naming the site, the site at the structure version the answer was
//   built from (`<site>@v<N>`: purge.ts purges older versions again after the race window), and
//   every space and revision id in the answer. `Vary: Authorization, X-Visitor-Token,
//   Accept-Encoding`: a request carrying a token or a visitor token is another entry of the cache
//   (a member's answer differs), and those answers are private anyway.
// - Nothing else gets a tag: other methods, statuses other than 200, GraphQL results with errors.
//   The server still runs the request to compute the tag: a 304 saves the transfer (and the
//   client's parse), not the database work.
import crypto from 'node:crypto';
import type http from 'node:http';
import type { Plugin } from 'graphql-yoga';
import type { RequestRecord } from '../graphql/context.ts';
import { appendVary, mergeVary, sendJsonBytes } from './compression.ts';

export const PRIVATE_CACHE_CONTROL = 'private, no-cache';

/** How long shared caches keep an anonymous published answer (config `sharedCache`). */
export type SharedCaching = { sMaxAgeSeconds: number; staleWhileRevalidateSeconds: number };

export const sharedCacheControl = (c: SharedCaching) => `public, max-age=0, s-maxage=${c.sMaxAgeSeconds}, stale-while-revalidate=${c.staleWhileRevalidateSeconds}`;

/** Space and revision ids as the API spells them (src/lib/ids.ts: a prefix and 22 base62 characters), whole JSON strings. */
const ANSWER_IDS = /"((?:space|rev)_[0-9A-Za-z]{22})(?:~[0-9a-f]{16})?"/g;
/** Above this many keys only the site's is sent (purging the site purges every answer of it anyway). */
export const MAX_SURROGATE_KEYS = 256;

/**
 * The `Surrogate-Key` of an answer: the site, then each space and revision id found in its JSON,
 * once each, in order of appearance. Read from the serialized answer, so a field's alias, a cache
 * hit and a REST shape all give the same keys without the resolvers reporting what they loaded.
 */
export function surrogateKeysOf(siteId: string, json: string, version?: string): string {
  const keys = new Set<string>([siteId]);
  if (version !== undefined) keys.add(versionKey(siteId, version));
  for (const m of json.matchAll(ANSWER_IDS)) {
    keys.add(m[1]);
    if (keys.size > MAX_SURROGATE_KEYS) return version === undefined ? siteId : `${siteId} ${versionKey(siteId, version)}`;
  }
  return [...keys].join(' ');
}

/** The surrogate key of a site's answers built from structure version `version`. */
export const versionKey = (siteId: string, version: string | number | bigint) => `${siteId}@v${version}`;

/**
 * What a shared-cacheable answer needs: the site it reads, the structure version the gate read
 * (before any content: an answer is never older than its version) and how long to keep it.
 */
export type SharedAnswer = { siteId: string; version?: string; caching: SharedCaching };

/** The cache headers of a tagged answer: shared (an anonymous published read) or private. */
function cacheHeaders(json: () => string, shared: SharedAnswer | undefined, set: (name: string, value: string) => void, vary: (values: string[]) => void) {
  if (shared) {
    set('Cache-Control', sharedCacheControl(shared.caching));
    const keys = surrogateKeysOf(shared.siteId, json(), shared.version);
    set('Surrogate-Key', keys);
    set('xkey', keys);
    vary(['Authorization', 'X-Visitor-Token', 'Accept-Encoding']);
  } else {
    set('Cache-Control', PRIVATE_CACHE_CONTROL);
    vary(['Authorization', 'Accept-Encoding']);
  }
}

/** The entity tag of a body: weak (private answers), or strong (shared-cacheable ones). */
export function etagOf(body: Uint8Array, strong = false): string {
  const tag = `"${crypto.createHash('sha256').update(body).digest().subarray(0, 16).toString('base64url')}"`;
  return strong ? tag : `W/${tag}`;
}


const COMPRESSED_SUFFIX = /-(?:gzip|br|deflate)"$/;

/**
 * Whether an `If-None-Match` header matches `etag` (weak comparison: `W/` is ignored on both
 * sides). `*` matches any current representation.
 */
export function ifNoneMatchMatches(header: string | null | undefined, etag: string): boolean {
  if (!header) return false;
  if (header.trim() === '*') return true;
  const opaque = etag.replace(/^W\//, '');
  // A tag compression.ts gave a coded body names the same representation.
  for (const m of header.matchAll(/(?:W\/)?("[^"]*")/g)) if (m[1].replace(COMPRESSED_SUFFIX, '"') === opaque) return true;
  return false;
}

/**
 * REST: a GET/HEAD 200 with a JSON body, with its validator; a 304 when `If-None-Match` matches.
 */
export async function sendJsonWithEtag(req: http.IncomingMessage, res: http.ServerResponse, body: unknown, shared?: SharedAnswer): Promise<void> {
  const json = JSON.stringify(body);
  const raw = Buffer.from(json, 'utf8');
  const etag = etagOf(raw, shared !== undefined);
  res.setHeader('ETag', etag);
  cacheHeaders(() => json, shared, (k, v) => res.setHeader(k, v), (values) => appendVary(res, ...values));
  if (ifNoneMatchMatches(req.headers['if-none-match'], etag)) {
    res.statusCode = 304;
    return void res.end();
  }
  return sendJsonBytes(res, 200, raw);
}

/**
 * Yoga plugin for GraphQL GET/HEAD: tag a 200 result without errors, answer 304 when the client
 * holds it. Place it before `useResponseCompression` so it sees the uncompressed bytes (and a
 * 304, having no body, is left alone by compression).
 */
export function useConditionalGet(sharedAnswerOf: (record: RequestRecord) => SharedAnswer | undefined = () => undefined): Plugin<{}, { requestRecord?: RequestRecord }> {
  return {
    onResultProcess({ result, serverContext }) {
      const record = serverContext.requestRecord;
      if (!record) return;
      if (Array.isArray(result) || !result || typeof result !== 'object' || Symbol.asyncIterator in result || result.errors?.length) record.untagged = true;
    },
    async onResponse({ request, response, serverContext, setResponse, fetchAPI }) {
      const record = serverContext.requestRecord;
      // Only the answers of a request the edge records (every HTTP request) are tagged.
      if (!record || record.untagged || request.method !== 'GET' || response.status !== 200 || !response.body) return;
      const type = response.headers.get('content-type') ?? '';
      // Only a complete JSON answer of known length (not GraphiQL's HTML, not a stream).
      if (!/^application\/(graphql-response\+)?json\b/.test(type) || response.headers.has('content-encoding') || !response.headers.has('content-length')) return;
      const bytes = new Uint8Array(await response.arrayBuffer());
      const shared = sharedAnswerOf(record);
      const etag = etagOf(bytes, shared !== undefined);
      const headers = new fetchAPI.Headers(response.headers);
      headers.set('etag', etag);
      cacheHeaders(() => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8'), shared, (k, v) => headers.set(k, v), (values) => headers.set('vary', mergeVary(headers.get('vary'), values)));
      if (ifNoneMatchMatches(request.headers.get('if-none-match'), etag)) {
        headers.delete('content-length');
        headers.delete('content-type');
        return setResponse(new fetchAPI.Response(null, { status: 304, headers }));
      }
      setResponse(new fetchAPI.Response(bytes, { status: 200, statusText: response.statusText, headers }));
    },
  };
}
