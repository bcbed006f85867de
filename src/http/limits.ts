// What a client controls before any resolver runs: the request target (path and query) and the
// body's bytes. Every rule here exists so that one request can neither become another operation
// nor exhaust the process:
// - the path is read raw, segment by segment: no dot-segment resolution (so `..` can never turn
//   `DELETE …/share-links/..` into `DELETE …/sites/{id}`), no encoded slash, no invalid
//   percent-encoding, no control characters;
// - a body is read up to a byte cap (413 beyond it) and all bodies being read at once share a
//   budget (503 when it is spent), each client at most its share of it, so the heap holds a known
//   worst case; a body must arrive in time and at a minimum rate (408 otherwise);
// - JSON is refused above a nesting depth before it is parsed.
import type http from 'node:http';
import { Socket } from 'node:net';

export class RequestRejected extends Error {
  constructor(
    readonly status: 400 | 401 | 404 | 408 | 413 | 415 | 503,
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
 * (503 + Retry-After) instead of growing the heap without limit. One client (its IP, as the rate
 * limiter sees it) may hold at most `perClientBytes` of it, so a few slow uploads from one place
 * cannot take the whole budget from everyone else.
 */
export class BodyBudget {
  private inUse = 0;
  private readonly byClient = new Map<string, number>();
  readonly perClientBytes: number;
  constructor(
    readonly totalBytes: number,
    perClientBytes = totalBytes,
  ) {
    this.perClientBytes = Math.min(totalBytes, perClientBytes);
  }
  /** Take `n` bytes for `client`: 'ok', or which share is spent. */
  take(client: string, n: number): 'ok' | 'client' | 'total' {
    const mine = this.byClient.get(client) ?? 0;
    if (mine + n > this.perClientBytes) return 'client';
    if (this.inUse + n > this.totalBytes) return 'total';
    this.inUse += n;
    this.byClient.set(client, mine + n);
    return 'ok';
  }
  give(client: string, n: number) {
    if (n === 0) return;
    this.inUse -= n;
    const left = (this.byClient.get(client) ?? 0) - n;
    if (left > 0) this.byClient.set(client, left);
    else this.byClient.delete(client);
  }
  /** Bytes held now (all clients, or one). */
  held(client?: string) {
    return client === undefined ? this.inUse : (this.byClient.get(client) ?? 0);
  }
}

export type BodyLimits = {
  maxBodyBytes: number;
  budget: BodyBudget;
  /** The whole body within this many ms (408 beyond). */
  timeoutMs: number;
  /** After the first `rateWindowMs` (the grace period), each window must bring `minBytesPerSecond × window` bytes (408 otherwise); 0 = no rate check. */
  minBytesPerSecond: number;
  rateWindowMs: number;
};

/**
 * A GraphQL POST without a token can only be an introspection query (GraphiQL's is about 2 kB):
 * its body is read under this cap, and one declared or sent beyond it is the 401 it would be.
 */
export const ANONYMOUS_MAX_BODY_BYTES = 64 * 1024;

/** How long a connection answered before its body was read may still drop what arrives. */
export const LINGER_MS = 2_000;

/** What one read may differ in: its own cap and how going over it is answered, the client's key. */
export type ReadOptions = { client: string; maxBytes?: number; tooLarge?: () => RequestRejected };

/**
 * Read a request body up to `maxBodyBytes`. Past the cap (or the shared budget, or the client's
 * share of it) nothing more is kept: the rest is read and dropped, up to `drainLimit` bytes, so
 * the client finishes sending and reads the 413/503 instead of a reset connection; a body
 * declared or sent beyond that is refused at once (the connection lingers, see
 * `lingerOnUnreadBody`). A body that does not arrive in time — not whole within `timeoutMs`, or
 * slower than `minBytesPerSecond` over a window after the first — is a 408, and its bytes are
 * released at once: a stalled upload holds the budget for at most two rate windows. The bytes
 * kept are released from the budget when `release` is called.
 */
export function readBody(req: http.IncomingMessage, limits: BodyLimits, opts: ReadOptions): Promise<{ body: Buffer; release: () => void }> {
  const max = opts.maxBytes ?? limits.maxBodyBytes;
  const over = opts.tooLarge ?? (() => tooLarge(max));
  const drainLimit = Math.max(16 * 1024 * 1024, 2 * max);
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > drainLimit) return Promise.reject(over());
  // Declared over the cap: refused before any byte is held (the rest is drained below).
  const refusedUpFront = declared !== undefined && Number(declared) > max ? over() : undefined;
  const { client } = opts;
  let reserved = 0;
  const release = () => {
    limits.budget.give(client, reserved);
    reserved = 0;
  };
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let refusal: RequestRejected | undefined = refusedUpFront;
    let received = 0;
    let windowBytes = 0;
    let settled = false;
    const finish = (err: unknown, body?: Buffer) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      clearInterval(rate);
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
      if (err) {
        release();
        chunks.length = 0;
        // Stop reading: what still arrives is the linger's (server.ts) to drop, within its bound.
        req.pause();
        reject(err);
      } else resolve({ body: body!, release });
    };
    const refuse = (r: RequestRejected) => {
      refusal ??= r;
      release();
      chunks.length = 0;
    };
    const onData = (chunk: Buffer) => {
      received += chunk.length;
      windowBytes += chunk.length;
      if (refusal) {
        if (received > drainLimit) finish(refusal);
        return;
      }
      if (received > max) return refuse(over());
      const taken = limits.budget.take(client, chunk.length);
      if (taken === 'client') return refuse(new RequestRejected(503, 'This client is already sending as many large requests as it may at once; retry shortly', { 'Retry-After': '2' }));
      if (taken === 'total') return refuse(new RequestRejected(503, 'The server is receiving too many large requests; retry shortly', { 'Retry-After': '2' }));
      reserved += chunk.length;
      chunks.push(chunk);
    };
    const onEnd = () => (refusal ? finish(refusal) : finish(undefined, chunks.length === 1 ? chunks[0] : Buffer.concat(chunks)));
    const onError = (err: Error) => finish(refusal ?? err);
    // Closed before its end: the client went away (nobody reads the answer).
    const onClose = () => finish(refusal ?? new RequestRejected(400, 'The request body was not received completely'));
    const slow = (why: string) => finish(refusal ?? new RequestRejected(408, `Request body too slow: ${why}; the connection is closed`));
    const deadline = setTimeout(() => slow(`not received within ${limits.timeoutMs} ms`), limits.timeoutMs);
    const perWindow = (limits.minBytesPerSecond * limits.rateWindowMs) / 1000;
    // The first window is the grace period; from then on every window must bring its share.
    const rate = setInterval(() => {
      if (perWindow > 0 && windowBytes < perWindow) slow(`less than ${limits.minBytesPerSecond} bytes/s over ${limits.rateWindowMs} ms`);
      windowBytes = 0;
    }, limits.rateWindowMs);
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('close', onClose);
    if (req.complete && req.readableEnded) onEnd();
  });
}

/**
 * Answer without reading a body to its end (an early 413/401, a refusal, a stalled upload) and
 * still let the client read the answer: when node closes the connection after such an answer
 * (`Connection: close`) it would destroy the socket with the client's bytes unread, and the
 * client gets a reset (EPIPE) instead of the answer. Here the socket is half-closed after the
 * answer (FIN) and what still arrives is read and dropped until the client closes, the body
 * ends, or `lingerMs` pass (Apache's "lingering close"). An answer that keeps the connection open
 * with the body unread (node drops the rest as it arrives) is cut after `lingerMs` too.
 */
export function lingerOnUnreadBody(req: http.IncomingMessage, res: http.ServerResponse, lingerMs: number) {
  const socket = req.socket as Socket & { destroySoon?: () => void };
  const linger = () => {
    const close = () => {
      clearTimeout(timer);
      socket.destroy();
    };
    const timer = setTimeout(close, lingerMs);
    timer.unref();
    socket.once('close', () => clearTimeout(timer));
    socket.once('end', close);
    req.once('end', close);
    req.resume(); // drop what arrives (node's parser is still attached to the socket)
  };
  // Node calls destroySoon after a `Connection: close` answer; on this socket, for this request,
  // it lingers instead.
  socket.destroySoon = function (this: Socket) {
    if (req.complete) return Socket.prototype.destroySoon.call(this);
    this.end();
    linger();
  };
  res.once('finish', () => {
    if (req.complete || res.getHeader('connection') === 'close') return;
    const timer = setTimeout(() => {
      if (!req.complete) socket.destroy();
    }, lingerMs);
    timer.unref();
    socket.once('close', () => clearTimeout(timer));
  });
}

const tooLarge = (max: number) => new RequestRejected(413, `Request body too large (at most ${max} bytes)`);

/**
 * Refuse JSON nested deeper than `maxDepth` arrays/objects without parsing it (a linear scan
 * that skips strings), so neither `JSON.parse` nor the recursive validators after it can be
 * driven into a stack overflow.
 */
export function requireJsonDepth(text: string | Uint8Array, maxDepth: number, field = 'body') {
  // On raw UTF-8 bytes as on a string: the bytes looked at are ASCII, and no byte of a multi-byte
  // UTF-8 sequence is ASCII, so the body need not be decoded for this check. String contents are
  // skipped with indexOf (native, no per-character call: a 3 MiB string value cost ~30 ms of the
  // event loop read one character at a time); the next quote and backslash are remembered so a
  // string full of escapes stays linear.
  const bytes = typeof text !== 'string';
  const find = bytes ? (c: number, from: number) => (text as Uint8Array).indexOf(c, from) : (c: number, from: number) => (text as string).indexOf(c === 34 ? '"' : '\\', from);
  let nextQuote = -1;
  let nextBackslash = -1;
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = bytes ? (text as Uint8Array)[i] : (text as string).charCodeAt(i);
    if (c === 34 /* " */) {
      // Inside a string from i + 1: find its closing quote, skipping escaped characters.
      let j = i + 1;
      for (;;) {
        if (nextQuote !== -2 && nextQuote < j) nextQuote = find(34, j);
        if (nextBackslash !== -2 && nextBackslash < j) nextBackslash = find(92, j);
        if (nextQuote === -1) nextQuote = -2; // none left: the string runs to the end
        if (nextBackslash === -1) nextBackslash = -2;
        if (nextQuote === -2) return; // unterminated: JSON.parse reports it
        if (nextBackslash !== -2 && nextBackslash < nextQuote) {
          j = nextBackslash + 2; // the escaped character, whatever it is
          continue;
        }
        i = nextQuote;
        break;
      }
    } else if (c === 123 /* { */ || c === 91 /* [ */) {
      if (++depth > maxDepth) throw new RequestRejected(400, `${field}: JSON nested deeper than ${maxDepth} levels`);
    } else if (c === 125 /* } */ || c === 93 /* ] */) depth--;
  }
}
