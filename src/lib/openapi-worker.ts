// The OpenAPI parse thread's entry (src/lib/openapi-thread.ts starts it): parses and validates
// one specification, asking the parent thread for every referenced file (the parent fetches
// through its SSRF guard), and answers the parse's result.
import { parentPort, workerData } from 'node:worker_threads';
import { parseOpenApi } from './openapi-parse.ts';

export type OpenApiWorkerInput = { text: string; sourceUrl?: string };
/** Thread → parent. */
export type OpenApiWorkerMessage =
  | { type: 'fetch'; id: number; url: string }
  | { type: 'done'; result: Awaited<ReturnType<typeof parseOpenApi>> }
  | { type: 'failed'; fetchId?: number; message: string };
/** Parent → thread: a referenced file, or the failure of its fetch (rethrown by the parent). */
export type OpenApiWorkerReply = { id: number; text?: string; failed?: boolean };

class FetchFailed extends Error {
  constructor(readonly fetchId: number) {
    super('fetch failed');
  }
}

const port = parentPort!;
const input = workerData as OpenApiWorkerInput;
const pending = new Map<number, { resolve: (text: string) => void; reject: (e: Error) => void }>();
let nextId = 0;
port.on('message', (reply: OpenApiWorkerReply) => {
  const waiter = pending.get(reply.id);
  pending.delete(reply.id);
  if (reply.failed || reply.text === undefined) waiter?.reject(new FetchFailed(reply.id));
  else waiter?.resolve(reply.text);
});

const fetchRef = (url: string) =>
  new Promise<string>((resolve, reject) => {
    const id = nextId++;
    pending.set(id, { resolve, reject });
    port.postMessage({ type: 'fetch', id, url } satisfies OpenApiWorkerMessage);
  });

parseOpenApi(input.text, input.sourceUrl, fetchRef).then(
  (result) => port.postMessage({ type: 'done', result } satisfies OpenApiWorkerMessage),
  (e: Error) => port.postMessage({ type: 'failed', fetchId: e instanceof FetchFailed ? e.fetchId : undefined, message: e?.message ?? String(e) } satisfies OpenApiWorkerMessage),
);
