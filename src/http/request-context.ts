// What the server knows about the request being handled, wherever the code runs for it: one
// object per request, reached through AsyncLocalStorage, so access logs, metrics, rate limits and
// error bodies read the same facts without threading them through every call.
import { AsyncLocalStorage } from 'node:async_hooks';
import { GraphQLError } from 'graphql';
import type { Logger } from 'pino';
import { AppError, DATABASE_UNAVAILABLE_MESSAGE, HTTP_STATUS, isDatabaseUnavailable } from '../lib/errors.ts';

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

/**
 * What a client may learn of an error, decided once for REST routes, GraphQL resolvers and the
 * server's last resort (downloads, SSO, the token lookup):
 * - `unavailable`: the database is down or too slow (503 + Retry-After), logged as a warning — an
 *   outage fails every request, it is not news each time; or a SERVICE_UNAVAILABLE AppError (a
 *   cap, a shutdown), with its own message and not logged;
 * - `expected`: an AppError (its own status, code, message and field);
 * - `request`: a GraphQL error of the request itself (variables, validation): the caller's, 400;
 * - `unexpected`: anything else, logged at error with its stack, masked, and named by request id.
 */
export type PublicError =
  | { kind: 'unavailable'; status: 503; message: string; retryAfterSeconds?: number }
  | { kind: 'expected'; status: number; error: AppError }
  | { kind: 'request'; status: 400; error: GraphQLError }
  | { kind: 'unexpected'; status: 500; message: string; requestId?: string };

export function toPublicError(err: unknown, log: Pick<Logger, 'warn' | 'error'>, where: string): PublicError {
  const original = err instanceof GraphQLError ? (err.originalError ?? err) : err;
  // A SERVICE_UNAVAILABLE AppError keeps its own message (a cap, a shutdown, a slow consumer):
  // only a raw database failure is "the database is unavailable".
  if (original instanceof AppError && original.code === 'SERVICE_UNAVAILABLE') {
    return { kind: 'unavailable', status: 503, message: original.message, retryAfterSeconds: original.retryAfterSeconds };
  }
  if (isDatabaseUnavailable(original)) {
    log.warn({ err: original }, 'database unavailable');
    return { kind: 'unavailable', status: 503, message: DATABASE_UNAVAILABLE_MESSAGE };
  }
  if (original instanceof AppError) return { kind: 'expected', status: HTTP_STATUS[original.code], error: original };
  if (original instanceof GraphQLError) return { kind: 'request', status: 400, error: original };
  log.error({ err: original }, `unexpected error in ${where}`);
  const info = storage.getStore();
  if (info) info.unexpected = true;
  return { kind: 'unexpected', status: 500, message: unexpectedErrorMessage(), requestId: info?.id };
}
