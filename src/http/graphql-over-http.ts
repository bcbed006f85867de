// GraphQL over HTTP (https://graphql.github.io/graphql-over-http/) at /graphql: which JSON media
// type an answer takes and which status a request error gets under it (docs/decisions.md,
// "GraphQL over HTTP"); and the `WWW-Authenticate` challenge every 401 carries.
//
// - `application/graphql-response+json` when the client prefers it (listed before
//   `application/json`, or with a higher q); `application/json` otherwise (no Accept, `*/*`,
//   `application/*`, `application/json` first): what yoga picks, once Accept is ordered by q.
// - A request error (parse, validation, variable coercion, the document limits, trusted
//   documents) carries `extensions.http = { spec: true, status: 400 }`: yoga answers it 400 under
//   `application/graphql-response+json` and 200 (with `errors`) under `application/json`.
// - A request that is not well-formed GraphQL over HTTP (a body or `variables` that is not JSON,
//   parameters of the wrong type) is 400 under both; 401, 403, 405, 408, 413, 429 and 503 are the
//   same under both.
import type http from 'node:http';
import { GraphQLError } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { bearerToken } from '../auth/tokens.ts';
import { appendVary } from './compression.ts';

export const GRAPHQL_RESPONSE_JSON = 'application/graphql-response+json';
export type GraphqlJsonType = typeof GRAPHQL_RESPONSE_JSON | 'application/json';

/** `extensions.http` of a request error: 400, or 200 under `application/json` (yoga reads `spec`). */
export const REQUEST_ERROR_HTTP = { spec: true, status: 400 } as const;

type AcceptEntry = { text: string; type: string; q: number; utf8: boolean };

function acceptEntries(accept: string | null | undefined): AcceptEntry[] {
  if (!accept) return [];
  const out: AcceptEntry[] = [];
  for (const text of accept.split(',')) {
    const [type, ...params] = text.split(';').map((p) => p.trim().toLowerCase());
    if (!type) continue;
    let q = 1;
    let utf8 = true;
    for (const p of params) {
      const [k, v = ''] = p.split('=').map((s) => s.trim());
      if (k === 'q') q = Number.isFinite(Number(v)) ? Number(v) : 0;
      // Yoga answers utf-8 only, and skips an entry asking for another charset.
      if (k === 'charset' && v.replace(/"/g, '') !== 'utf-8') utf8 = false;
    }
    out.push({ text: text.trim(), type, q, utf8 });
  }
  return out;
}

/**
 * The Accept header reordered by preference (q descending, then the client's order), without the
 * entries of q=0. Yoga ignores q and takes the first-listed type it can answer: handed this, it
 * honours q (`application/json;q=0.5, application/graphql-response+json` prefers the latter).
 * Returns the header unchanged when it has no q or nothing would remain.
 */
export function preferenceOrderedAccept(accept: string | undefined): string | undefined {
  if (!accept || !accept.includes('q=')) return accept;
  const entries = acceptEntries(accept).filter((e) => e.q > 0);
  if (!entries.length) return accept;
  return entries
    .map((e, i) => ({ e, i }))
    .sort((a, b) => b.e.q - a.e.q || a.i - b.i)
    .map(({ e }) => e.text)
    .join(', ');
}

const matches = (asked: string, type: string) => {
  const [askedPre, askedSuf] = asked.split('/');
  const [pre, suf] = type.split('/');
  return (askedPre === '*' || askedPre === pre) && (askedSuf === '*' || askedSuf === suf);
};

/**
 * The JSON media type of a single (non-streamed) answer for this Accept header, as yoga decides
 * it: the first entry, by preference, that either type matches; `application/json` when that
 * entry matches it too (`*\/*`, `application/*`), when there is no Accept, or when nothing matches
 * (yoga answers that 406 itself; our own answers outside yoga fall back to JSON).
 */
export function graphqlJsonType(accept: string | null | undefined): GraphqlJsonType {
  for (const e of acceptEntries(preferenceOrderedAccept(accept ?? undefined))) {
    if (!e.utf8 || e.q <= 0) continue;
    if (matches(e.type, 'application/json')) return 'application/json';
    if (matches(e.type, GRAPHQL_RESPONSE_JSON)) return GRAPHQL_RESPONSE_JSON;
  }
  return 'application/json';
}

/**
 * A GraphQL-shaped answer written outside yoga (a 401 before the body is read, a request refused
 * before yoga runs), in the media type the client prefers. Bodies are small: never compressed.
 */
export function sendGraphqlJson(req: http.IncomingMessage, res: http.ServerResponse, status: number, body: unknown) {
  const bytes = Buffer.from(JSON.stringify(body), 'utf8');
  appendVary(res, 'Accept');
  res.writeHead(status, { 'Content-Type': `${graphqlJsonType(req.headers.accept)}; charset=utf-8`, 'Content-Length': bytes.length });
  res.end(bytes);
}

/**
 * A GraphQL request error answered outside yoga: 400 under `application/graphql-response+json`,
 * 200 with `errors` under `application/json`; `malformed` (not JSON, not an object) is 400 under both.
 */
export function sendGraphqlRequestError(req: http.IncomingMessage, res: http.ServerResponse, message: string, opts: { malformed?: boolean } = {}) {
  const status = opts.malformed || graphqlJsonType(req.headers.accept) === GRAPHQL_RESPONSE_JSON ? 400 : 200;
  return sendGraphqlJson(req, res, status, { errors: [{ message, extensions: { code: 'BAD_REQUEST' } }] });
}

/**
 * An `operationName` that is not a string (nor null) makes the request malformed: 400 under both
 * types, as yoga answers a `query` or `variables` of the wrong type.
 */
export function useWellFormedParams(): Plugin {
  return {
    onParams({ params }) {
      const name: unknown = params.operationName;
      if (name !== undefined && name !== null && typeof name !== 'string') {
        throw new GraphQLError(`Expected "operationName" param to be a string, but given ${Array.isArray(name) ? 'array' : typeof name}.`, { extensions: { code: 'BAD_REQUEST', http: { status: 400 } } });
      }
    },
  };
}

/** The authentication realm named in every challenge. */
export const AUTH_REALM = 'docgraph';

/**
 * The `WWW-Authenticate` challenge of a 401 (RFC 6750 §3): `Bearer realm="docgraph"`, plus
 * `error="invalid_token"` when the request carried a bearer token (which did not work).
 */
export function bearerChallenge(authorization: string | undefined): string {
  return bearerToken(authorization) ? `Bearer realm="${AUTH_REALM}", error="invalid_token"` : `Bearer realm="${AUTH_REALM}"`;
}

/**
 * Every 401 this response may become, whichever module writes it (GraphQL, REST, /files,
 * /metrics, a live stream), carries the challenge: set as the status line is written, unless the
 * writer set one itself.
 */
export function challengeEvery401(req: http.IncomingMessage, res: http.ServerResponse) {
  const writeHead = res.writeHead;
  res.writeHead = function (this: http.ServerResponse, ...args: Parameters<typeof writeHead>) {
    const status = args[0];
    const headers = args.find((a, i) => i > 0 && a !== null && typeof a === 'object') as http.OutgoingHttpHeaders | undefined;
    const given = headers && Object.keys(headers).some((k) => k.toLowerCase() === 'www-authenticate');
    if (status === 401 && !given && !this.hasHeader('www-authenticate')) this.setHeader('WWW-Authenticate', bearerChallenge(req.headers.authorization));
    return writeHead.apply(this, args);
  } as typeof res.writeHead;
}

// ------------------------------------------------------------------ subscriptions over multipart HTTP

/**
 * Apollo Client's HTTP subscriptions ("multipart subscriptions", `subscriptionSpec=1.0`): asked
 * by `Accept: multipart/mixed;boundary="graphql";subscriptionSpec=1.0`, preferred over
 * `text/event-stream` when both are listed. Yoga offers multipart/mixed for incremental delivery
 * only, not for subscriptions.
 */
export function wantsMultipartSubscription(accept: string | null | undefined): boolean {
  for (const text of (preferenceOrderedAccept(accept ?? undefined) ?? '').split(',')) {
    const [type, ...params] = text.split(';').map((p) => p.trim().toLowerCase());
    if (type === 'text/event-stream') return false;
    if (type === 'multipart/mixed') return params.some((p) => /^subscriptionspec\s*=\s*"?1\.0"?$/.test(p));
  }
  return false;
}

/** The media types a subscription is answered in over HTTP (WebSocket aside). */
export const SUBSCRIPTION_MEDIA_TYPES = ['text/event-stream', 'multipart/mixed;boundary="graphql";subscriptionSpec="1.0"'];

const BOUNDARY = 'graphql';

type StreamedResult = { data?: unknown; errors?: readonly unknown[]; extensions?: Record<string, unknown> };

/** One result without yoga's internal `extensions.http` (on the result and on each error). */
function publicResult(result: StreamedResult): Record<string, unknown> {
  const strip = (ext: unknown) => {
    if (!ext || typeof ext !== 'object') return undefined;
    const { http: _http, ...rest } = ext as Record<string, unknown>;
    return Object.keys(rest).length ? rest : undefined;
  };
  const out: Record<string, unknown> = {};
  if (result.data !== undefined) out.data = result.data;
  if (result.errors?.length) {
    out.errors = result.errors.map((e) => {
      const json = (e instanceof GraphQLError ? e.toJSON() : { ...(e as Record<string, unknown>) }) as Record<string, unknown>;
      const extensions = strip(json.extensions);
      if (extensions) json.extensions = extensions;
      else delete json.extensions;
      return json;
    });
  }
  const extensions = strip(result.extensions);
  if (extensions) out.extensions = extensions;
  return out;
}

/** A stream's failure as Apollo's transport error: a public code and message only. */
function transportError(err: unknown) {
  const e = err as { code?: unknown; message?: unknown; extensions?: { code?: unknown } };
  const code = typeof e?.code === 'string' ? e.code : typeof e?.extensions?.code === 'string' ? e.extensions.code : undefined;
  return { message: code && typeof e?.message === 'string' ? e.message : 'The subscription failed; subscribe again', extensions: { code: code ?? 'SERVICE_UNAVAILABLE' } };
}

/**
 * Subscriptions over HTTP for every client that asks for one: Apollo's multipart protocol
 * (parts `{"payload": <result>}`, a heartbeat part `{}` every `keepAliveMs`, a failure as
 * `{"payload": null, "errors": […]}`, then the closing boundary), and, to any other Accept that
 * no processor answers, a 406 whose body names the transports (yoga's own 406 is empty).
 * Register after the event-stream plugin: a client preferring `text/event-stream` keeps it.
 */
export function useSubscriptionsOverHttp(opts: { keepAliveMs: number }): Plugin {
  const subscriptions = new WeakSet<Request>();
  return {
    onSubscribe({ args }) {
      const request = (args.contextValue as { request?: Request }).request;
      if (request) subscriptions.add(request);
    },
    onResultProcess({ request, result, resultProcessor, setResultProcessor }) {
      if (!result || typeof result !== 'object' || !(Symbol.asyncIterator in result)) return;
      const accept = request.headers.get('accept');
      if (subscriptions.has(request) && wantsMultipartSubscription(accept)) {
        setResultProcessor((res, fetchAPI) => multipartSubscription(res as AsyncIterable<StreamedResult>, fetchAPI, opts.keepAliveMs), 'multipart/mixed');
        return;
      }
      if (resultProcessor || !subscriptions.has(request)) return;
      setResultProcessor((_res, fetchAPI) => {
        const body = {
          errors: [
            {
              message: `A subscription is answered as ${SUBSCRIPTION_MEDIA_TYPES.join(' or ')} (Accept), or over WebSocket (graphql-ws) on this path; not as ${(accept ?? '*/*').slice(0, 200)}`,
              extensions: { code: 'NOT_ACCEPTABLE' },
            },
          ],
        };
        // The stream was never read: end the subscription now.
        void (result as AsyncIterable<unknown>)[Symbol.asyncIterator]().return?.();
        return new fetchAPI.Response(JSON.stringify(body), {
          status: 406,
          headers: { 'Content-Type': 'application/json; charset=utf-8', Accept: SUBSCRIPTION_MEDIA_TYPES.join(', ') },
        });
      }, 'application/json');
    },
  };
}

function multipartSubscription(result: AsyncIterable<StreamedResult>, fetchAPI: { TextEncoder: typeof TextEncoder; ReadableStream: typeof ReadableStream; Response: typeof Response }, keepAliveMs: number) {
  const encoder = new fetchAPI.TextEncoder();
  const part = (json: unknown) => encoder.encode(`\r\nContent-Type: application/json; charset=utf-8\r\n\r\n${JSON.stringify(json)}\r\n--${BOUNDARY}`);
  const iterator = result[Symbol.asyncIterator]();
  let heartbeat: NodeJS.Timeout | undefined;
  let finished = false;
  const stream = new fetchAPI.ReadableStream<Uint8Array>({
    start(controller) {
      // The opening boundary flushes the headers at once.
      controller.enqueue(encoder.encode(`\r\n--${BOUNDARY}`));
      heartbeat = setInterval(() => {
        if (controller.desiredSize === null || finished) return void clearInterval(heartbeat);
        controller.enqueue(part({}));
      }, keepAliveMs);
      heartbeat.unref();
    },
    async pull(controller) {
      if (finished) return;
      try {
        const step = await iterator.next();
        if (step.value != null) controller.enqueue(part({ payload: publicResult(step.value) }));
        if (step.done) finished = true;
      } catch (err) {
        finished = true;
        controller.enqueue(part({ payload: null, errors: [transportError(err)] }));
      }
      if (finished) {
        clearInterval(heartbeat);
        controller.enqueue(encoder.encode('--\r\n'));
        controller.close();
      }
    },
    async cancel() {
      finished = true;
      clearInterval(heartbeat);
      await iterator.return?.();
    },
  });
  return new fetchAPI.Response(stream, {
    status: 200,
    headers: { 'Content-Type': `multipart/mixed;boundary="${BOUNDARY}";subscriptionSpec="1.0"`, 'Cache-Control': 'no-cache', Connection: 'keep-alive', 'X-Accel-Buffering': 'no' },
  });
}
