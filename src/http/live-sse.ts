// GraphQL subscriptions over Server-Sent Events (README "Live updates"). Yoga's own SSE result
// processor writes `event: next` / `data:` but no `id:` line, so a client could not resume; this
// plugin replaces it for event streams (a subscription answered to `Accept: text/event-stream`)
// with one that also writes:
// - `id: <seq>` before every event that comes from the event log (the log position, which a
//   reconnect sends back as `Last-Event-ID` to replay what it missed), as the stream engine hands
//   it over with the result it yielded (`takeSentSeq`, src/events/stream.ts);
// - a `:` comment every `keepAliveMs` so proxies keep an idle stream open;
// - on a failure mid-stream (a subscriber too slow for its queue, the database gone), a last
//   `next` event with the error, then `complete`, instead of a cut connection.
// The wire format is otherwise yoga's ("distinct connections" GraphQL over SSE), which GraphiQL's
// fetcher reads.
import type { Plugin } from 'graphql-yoga';
import { GraphQLError } from 'graphql';
import { takeSentSeq, type LiveRequest } from '../events/stream.ts';

/** Each request's subscription state (its `Last-Event-ID`, its caller's re-check), made with its context. */
const states = new WeakMap<Request, LiveRequest>();

/** The live state of a GraphQL request: created with its context (server.ts). */
export function liveRequestFor(request: Request, revalidate: LiveRequest['revalidate'], owner: LiveRequest['owner']): LiveRequest {
  let state = states.get(request);
  if (!state) {
    const header = request.headers.get('last-event-id');
    const lastEventId = header !== null && /^\d{1,18}$/.test(header.trim()) ? Number(header.trim()) : undefined;
    state = { lastEventId, revalidate, owner };
    states.set(request, state);
  }
  return state;
}

function isAsyncIterable(x: unknown): x is AsyncIterable<unknown> {
  return typeof x === 'object' && x !== null && Symbol.asyncIterator in x;
}

/** The JSON of one result without yoga's internal `http` extensions. */
function stringifyResult(result: { data?: unknown; errors?: readonly unknown[]; extensions?: Record<string, unknown>; incremental?: unknown; hasNext?: boolean; pending?: unknown; completed?: unknown }) {
  const out: Record<string, unknown> = {};
  if (result.data !== undefined) out.data = result.data;
  // Incremental delivery (@defer/@stream over SSE): the later parts are `incremental` payloads.
  for (const key of ['incremental', 'pending', 'completed', 'hasNext'] as const) if (result[key] !== undefined) out[key] = result[key];
  if (result.errors?.length) {
    out.errors = result.errors.map((e) => {
      const json = e instanceof GraphQLError ? e.toJSON() : (e as Record<string, unknown>);
      if (json.extensions && typeof json.extensions === 'object') {
        const { http: _http, ...extensions } = json.extensions as Record<string, unknown>;
        return { ...json, extensions };
      }
      return json;
    });
  }
  if (result.extensions) {
    const { http: _http, ...extensions } = result.extensions;
    if (Object.keys(extensions).length) out.extensions = extensions;
  }
  return JSON.stringify(out);
}

/**
 * What a failed stream's last event says. An error with a code is public: an AppError, or what
 * the error masking (server.ts `maskError`) made of any error — its message is the one to send
 * (a slow consumer's cut, a cap). Anything else gets a generic message.
 */
function errorOf(err: unknown): { message: string; extensions: { code: string } } {
  const e = err as { code?: unknown; message?: unknown; extensions?: { code?: unknown } };
  const code = typeof e?.code === 'string' ? e.code : typeof e?.extensions?.code === 'string' ? e.extensions.code : 'SERVICE_UNAVAILABLE';
  const known = typeof e?.code === 'string' || typeof e?.extensions?.code === 'string';
  return { message: known && typeof e?.message === 'string' ? e.message : 'The event stream failed; reconnect with Last-Event-ID to resume', extensions: { code } };
}

export function useLiveEventStream(opts: { keepAliveMs: number }): Plugin {
  return {
    onResultProcess({ request, result, setResultProcessor }) {
      if (!isAsyncIterable(result)) return;
      if (!(request.headers.get('accept') ?? '').toLowerCase().includes('text/event-stream')) return;
      const state = states.get(request);
      setResultProcessor((res, fetchAPI) => {
        const encoder = new fetchAPI.TextEncoder();
        const iterator = (res as AsyncIterable<Parameters<typeof stringifyResult>[0]>)[Symbol.asyncIterator]();
        let ping: NodeJS.Timeout | undefined;
        let finished = false;
        const stream = new fetchAPI.ReadableStream({
          start(controller) {
            // A first comment flushes the headers (some clients wait for a byte).
            controller.enqueue(encoder.encode(':\n\n'));
            ping = setInterval(() => {
              if (controller.desiredSize === null) return void clearInterval(ping);
              controller.enqueue(encoder.encode(':\n\n'));
            }, opts.keepAliveMs);
            ping.unref();
          },
          async pull(controller) {
            if (finished) return;
            let text = '';
            try {
              const step = await iterator.next();
              if (step.value != null) {
                const seq = takeSentSeq(state);
                text += `${seq !== undefined ? `id: ${seq}\n` : ''}event: next\ndata: ${stringifyResult(step.value)}\n\n`;
              }
              if (step.done) finished = true;
            } catch (err) {
              finished = true;
              text += `event: next\ndata: ${JSON.stringify({ errors: [errorOf(err)] })}\n\n`;
            }
            if (finished) text += 'event: complete\ndata:\n\n';
            controller.enqueue(encoder.encode(text));
            if (finished) {
              clearInterval(ping);
              controller.close();
            }
          },
          async cancel() {
            finished = true;
            clearInterval(ping);
            await iterator.return?.();
          },
        });
        return new fetchAPI.Response(stream, {
          status: 200,
          headers: { 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-cache', Connection: 'keep-alive', 'X-Accel-Buffering': 'no' },
        });
      }, 'text/event-stream');
    },
  };
}
