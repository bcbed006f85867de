// The request being handled, wherever the code runs for it: the request record (graphql/context.ts
// `RequestRecord`, one per request, created by observability.ts `handle`) kept current through
// AsyncLocalStorage, for the code that has no context at hand: the SQL statement counter, log
// lines' request ids, the markdown pool's tenant, yoga's error masking. Code that has the context
// or yoga's server context reads the same record there (`requestRecord`).
import { AsyncLocalStorage } from 'node:async_hooks';
import type { RequestRecord } from '../graphql/context.ts';

const storage = new AsyncLocalStorage<RequestRecord>();

/** Run `fn` with `record` as the current request. */
export function runWithRequest<T>(record: RequestRecord, fn: () => T): T {
  return storage.run(record, fn);
}

/** The request being handled, or undefined outside one (jobs, start-up, WebSocket operations). */
export function currentRequest(): RequestRecord | undefined {
  return storage.getStore();
}
