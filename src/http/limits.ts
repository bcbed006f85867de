// What a client controls before any resolver runs: the request target (path and query) and the
// body's bytes. Every rule here exists so that one request can neither become another operation
// nor exhaust the process:
// - the path is read raw, segment by segment: no dot-segment resolution (so `..` can never turn
//   `DELETE …/share-links/..` into `DELETE …/sites/{id}`), no encoded slash, no invalid
//   percent-encoding, no control characters;
// - a body is read up to a byte cap (413 beyond it) and all bodies being read at once share a
//   budget (503 when it is spent), so the heap holds a known worst case;
// - JSON is refused above a nesting depth before it is parsed.
import type http from 'node:http';

export class RequestRejected extends Error {
  constructor(
    readonly status: 400 | 404 | 413 | 415 | 503,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

/** The request target as the client sent it: the raw path, its decoded segments, the query. */
export type RequestTarget = {
  /** The path exactly as received (percent-encoded, never normalised). */
  pathname: string;
  /** `pathname` split on `/` and percent-decoded, one entry per segment (leading `/` dropped). */
  segments: string[];
  searchParams: URLSearchParams;
};

// C0 controls and DEL; a path segment never needs them and PostgreSQL cannot store NUL.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;

/**
 * Parse `req.url` without resolving dot segments. Throws `RequestRejected` (400) for a target that
 * is not origin-form, for invalid percent-encoding, and for segments that are `.`/`..` (raw or
 * encoded) or that decode to a slash, a backslash or a control character.
 */
export function parseRequestTarget(rawUrl: string | undefined): RequestTarget {
  const raw = rawUrl ?? '/';
  if (!raw.startsWith('/') || raw.startsWith('//')) throw new RequestRejected(400, 'Invalid request target');
  const q = raw.indexOf('?');
  const pathname = q === -1 ? raw : raw.slice(0, q);
  const query = q === -1 ? '' : raw.slice(q + 1);
  const segments = pathname.slice(1).split('/').map((segment) => {
    let decoded: string;
    try {
      decoded = decodeURIComponent(segment);
    } catch {
      throw new RequestRejected(400, 'Invalid percent-encoding in the request path');
    }
    if (decoded === '.' || decoded === '..') throw new RequestRejected(400, 'Dot segments (`.`, `..`) are not allowed in the request path');
    if (decoded.includes('/') || decoded.includes('\\') || CONTROL.test(decoded)) {
      throw new RequestRejected(400, 'A path segment may not contain a slash, a backslash or a control character');
    }
    return decoded;
  });
  return { pathname, segments, searchParams: new URLSearchParams(query) };
}

/**
 * Shared budget for bodies being read at the same time. Each body is capped on its own
 * (`maxBodyBytes`); this bounds their sum, so many large uploads at once queue at the client
 * (503 + Retry-After) instead of growing the heap without limit.
 */
export class BodyBudget {
  private inUse = 0;
  constructor(readonly totalBytes: number) {}
  take(n: number) {
    if (this.inUse + n > this.totalBytes) return false;
    this.inUse += n;
    return true;
  }
  give(n: number) {
    this.inUse -= n;
  }
}

export type BodyLimits = { maxBodyBytes: number; budget: BodyBudget };

/**
 * Read a request body up to `maxBodyBytes`. Past the cap (or the shared budget) nothing more is
 * kept: the rest is read and dropped, up to `drainLimit` bytes, so the client finishes sending
 * and reads the 413/503 instead of a reset connection; a body declared or sent beyond that is
 * refused at once and the connection closed after the answer. The bytes kept are released from
 * the shared budget when `release` is called.
 */
export async function readBody(req: http.IncomingMessage, limits: BodyLimits): Promise<{ body: Buffer; release: () => void }> {
  const drainLimit = Math.max(16 * 1024 * 1024, 2 * limits.maxBodyBytes);
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > drainLimit) throw tooLarge(limits.maxBodyBytes);
  let reserved = 0;
  const release = () => {
    limits.budget.give(reserved);
    reserved = 0;
  };
  const chunks: Buffer[] = [];
  let refusal: RequestRejected | undefined;
  let received = 0;
  try {
    for await (const chunk of req as AsyncIterable<Buffer>) {
      received += chunk.length;
      if (refusal) {
        if (received > drainLimit) break;
        continue;
      }
      if (received > limits.maxBodyBytes) refusal = tooLarge(limits.maxBodyBytes);
      else if (!limits.budget.take(chunk.length)) {
        refusal = new RequestRejected(503, 'The server is receiving too many large requests; retry shortly', { 'Retry-After': '2' });
      } else {
        reserved += chunk.length;
        chunks.push(chunk);
      }
      if (refusal) {
        release();
        chunks.length = 0;
      }
    }
  } catch (err) {
    release();
    throw err;
  }
  if (refusal) throw refusal;
  return { body: chunks.length === 1 ? chunks[0] : Buffer.concat(chunks), release };
}

const tooLarge = (max: number) => new RequestRejected(413, `Request body too large (at most ${max} bytes)`);

/**
 * Refuse JSON nested deeper than `maxDepth` arrays/objects without parsing it (a linear scan
 * that skips strings), so neither `JSON.parse` nor the recursive validators after it can be
 * driven into a stack overflow.
 */
export function requireJsonDepth(text: string | Uint8Array, maxDepth: number, field = 'body') {
  // On raw UTF-8 bytes as on a string: the bytes looked at are ASCII, and no byte of a multi-byte
  // UTF-8 sequence is ASCII, so the body need not be decoded for this check.
  const at = typeof text === 'string' ? (i: number) => text.charCodeAt(i) : (i: number) => text[i];
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = at(i);
    if (inString) {
      if (c === 92 /* \ */) i++;
      else if (c === 34 /* " */) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 123 /* { */ || c === 91 /* [ */) {
      if (++depth > maxDepth) throw new RequestRejected(400, `${field}: JSON nested deeper than ${maxDepth} levels`);
    } else if (c === 125 /* } */ || c === 93 /* ] */) depth--;
  }
}
