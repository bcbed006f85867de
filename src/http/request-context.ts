// What the server knows about the request being handled, wherever the code runs for it: one
// object per request, reached through AsyncLocalStorage, so access logs, metrics, rate limits and
// error bodies read the same facts without threading them through every call.
import { AsyncLocalStorage } from 'node:async_hooks';

export type RequestInfo = {
  /** The caller's `X-Request-Id` (when well-formed) or a generated one; echoed on the response. */
  id: string;
  /** `process.hrtime.bigint()` when the request arrived. */
  startedAt: bigint;
  method: string;
  /** The route pattern (`/v1/spaces/:spaceId`, `/graphql`), never the raw path; set by routing. */
  route?: string;
  /** The authenticated caller, once known. */
  userId?: string;
  tokenId?: string;
  /** The GraphQL operation name, when the request ran one. */
  operationName?: string;
  /** SQL statements issued for this request (counted from the Prisma query events). */
  statements: number;
  /** An unexpected error was logged for this request (even inside a 200 GraphQL answer). */
  unexpected?: boolean;
};

const storage = new AsyncLocalStorage<RequestInfo>();

/** Run `fn` with `info` as the current request. */
export function runWithRequest<T>(info: RequestInfo, fn: () => T): T {
  return storage.run(info, fn);
}

/** The request being handled, or undefined outside one (jobs, start-up). */
export function currentRequest(): RequestInfo | undefined {
  return storage.getStore();
}

/** The message of an unexpected error (500), naming the request id the logs carry. */
export function unexpectedErrorMessage(): string {
  const id = storage.getStore()?.id;
  return id ? `Unexpected error (request id ${id})` : 'Unexpected error';
}
