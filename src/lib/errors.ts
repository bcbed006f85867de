// Expected failures, shared by GraphQL (extensions.code) and REST (HTTP status).
import { z } from 'zod';
import { GraphQLError } from 'graphql';
import type { Logger } from 'pino';

export const ERROR_CODES = [
  'UNAUTHENTICATED',
  'FORBIDDEN',
  'NOT_FOUND',
  'BAD_REQUEST',
  'CONFLICT',
  'PRECONDITION_FAILED',
  'RATE_LIMITED',
  'SERVICE_UNAVAILABLE',
] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

export const HTTP_STATUS: Record<ErrorCode, number> = {
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  BAD_REQUEST: 400,
  CONFLICT: 409,
  PRECONDITION_FAILED: 412,
  RATE_LIMITED: 429,
  SERVICE_UNAVAILABLE: 503,
};

/** `Retry-After` (seconds) sent with every 503. */
export const RETRY_AFTER_SECONDS = 5;
/** The `Retry-After` header every 503 for an unavailable database carries. */
export const RETRY_AFTER_HEADER = { 'Retry-After': String(RETRY_AFTER_SECONDS) } as const;

export class AppError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    /** The offending input field, as a dotted path (BAD_REQUEST). */
    readonly field?: string,
    /** RATE_LIMITED / SERVICE_UNAVAILABLE: seconds after which a retry may succeed (`Retry-After`). */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
    this.name = 'AppError';
  }
}

/** NOT_FOUND; `why` says what would have opened it (a refused visitor token), never what is behind it. */
export const notFound = (what: string, why?: string) => new AppError('NOT_FOUND', why ? `${what} not found: ${why}` : `${what} not found`);
export const forbidden = (message = 'You are not allowed to do this') => new AppError('FORBIDDEN', message);
export const badRequest = (field: string, message: string) =>
  new AppError('BAD_REQUEST', field ? `${field}: ${message}` : message, field);
export const conflict = (message: string) => new AppError('CONFLICT', message);
export const DATABASE_UNAVAILABLE_MESSAGE = 'The database is unavailable; retry in a few seconds';
/**
 * A 503. The message says which resource is short — the database (the default), the process's
 * subscription slots, a subscription that fell behind, a shutdown — so a client and an operator
 * can tell an outage from a cap; it is what the client reads, REST and GraphQL alike.
 */
export const serviceUnavailable = (message: string = DATABASE_UNAVAILABLE_MESSAGE, retryAfterSeconds?: number) =>
  new AppError('SERVICE_UNAVAILABLE', message, undefined, retryAfterSeconds);
/** A 429: a per-user limit of an operation (not the request rate limiter, src/http/rate-limit.ts). */
export const rateLimited = (message: string, retryAfterSeconds?: number) =>
  new AppError('RATE_LIMITED', message, undefined, retryAfterSeconds === undefined ? undefined : Math.max(1, Math.ceil(retryAfterSeconds)));
export const unauthenticated = () => new AppError('UNAUTHENTICATED', 'A valid API token is required (Authorization: Bearer <token>)');

/** Validate with a zod schema; the first issue becomes a 400 naming the field. */
export function parseInput<S extends z.ZodType>(schema: S, value: unknown, prefix = ''): z.infer<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  throw zodToAppError(result.error, prefix);
}

export function zodToAppError(error: z.ZodError, prefix = ''): AppError {
  const issue = error.issues[0];
  let fieldPath = [...(prefix ? [prefix] : []), ...issue.path.map(String)];
  let message = issue.message;
  if (issue.code === 'unrecognized_keys') {
    fieldPath = [...fieldPath, issue.keys[0]];
    message = 'unknown field';
  }
  const field = fieldPath.join('.');
  return badRequest(field, message);
}

/** Map database constraint violations to readable errors. */
export function fromDatabaseError(err: unknown): AppError | undefined {
  const e = err as { code?: string; meta?: { target?: unknown; modelName?: string; driverAdapterError?: { cause?: { kind?: string; constraint?: { fields?: string[] } } } } };
  const kind = e?.meta?.driverAdapterError?.cause?.kind;
  if (e?.code === 'P2002' || kind === 'UniqueConstraintViolation') {
    const fields = e.meta?.driverAdapterError?.cause?.constraint?.fields ?? (Array.isArray(e.meta?.target) ? (e.meta?.target as string[]) : []);
    return conflict(`A ${e.meta?.modelName ?? 'record'} with the same ${fields.join(', ') || 'key'} already exists`);
  }
  if (e?.code === 'P2025') return notFound(e.meta?.modelName ?? 'Object');
  return undefined;
}

// ------------------------------------------------------------------ database unavailable

/** SQLSTATEs meaning "not now": statement timeout, shutdown, cannot connect now, connection exceptions, too many connections. */
const UNAVAILABLE_SQLSTATES = new Set(['57014', '57P01', '57P02', '57P03', '08000', '08001', '08003', '08004', '08006', '53300']);
/** Prisma: can't reach, timed out, operations timed out, server closed the connection, pool timeout. */
const UNAVAILABLE_PRISMA_CODES = new Set(['P1001', 'P1002', 'P1008', 'P1017', 'P2024']);
/** @prisma/adapter-pg's error kinds for socket failures and a full server. */
const UNAVAILABLE_ADAPTER_KINDS = new Set(['DatabaseNotReachable', 'ConnectionClosed', 'SocketTimeout', 'TooManyConnections']);
const UNAVAILABLE_SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', 'ENOTFOUND']);
/**
 * node-postgres and pg-pool raise these as plain `Error`s, which the adapter passes through
 * unchanged: the client's read timeout (`query_timeout`), the pool's acquire timeout
 * (`connectionTimeoutMillis`), a connection lost mid-query or closed before use.
 */
const UNAVAILABLE_MESSAGES = [
  /^Query read timeout$/,
  /^timeout exceeded when trying to connect$/,
  /^Connection terminated/,
  /is not queryable$/,
  /Unable to start a transaction in the given time/,
];

/**
 * Whether `err` says the database is unreachable, failing or too slow — a transient condition
 * the API reports as 503 SERVICE_UNAVAILABLE with `Retry-After`, not as a bug. Looks through
 * Prisma's wrapping (`meta.driverAdapterError.cause`), `cause` chains and GraphQL's
 * `originalError`.
 */
export function isDatabaseUnavailable(err: unknown, depth = 0): boolean {
  if (!err || typeof err !== 'object' || depth > 5) return false;
  const e = err as {
    code?: unknown;
    kind?: unknown;
    originalCode?: unknown;
    message?: unknown;
    cause?: unknown;
    originalError?: unknown;
    meta?: { driverAdapterError?: { cause?: unknown } };
  };
  if (err instanceof AppError) return err.code === 'SERVICE_UNAVAILABLE';
  if (typeof e.code === 'string') {
    if (UNAVAILABLE_PRISMA_CODES.has(e.code) || UNAVAILABLE_SQLSTATES.has(e.code) || UNAVAILABLE_SOCKET_CODES.has(e.code)) return true;
    // P2028 (transaction API): "Unable to start a transaction in the given time", or the
    // transaction outlived its timeout — the database was too slow. Other P2028s are bugs.
    if (e.code === 'P2028' && typeof e.message === 'string' && /in the given time|expired transaction|timeout/i.test(e.message)) return true;
  }
  if (typeof e.kind === 'string') {
    if (UNAVAILABLE_ADAPTER_KINDS.has(e.kind)) return true;
    if (e.kind === 'postgres' && typeof e.originalCode === 'string' && UNAVAILABLE_SQLSTATES.has(e.originalCode)) return true;
  }
  if (typeof e.message === 'string' && UNAVAILABLE_MESSAGES.some((re) => re.test(e.message as string))) return true;
  return (
    isDatabaseUnavailable(e.meta?.driverAdapterError?.cause, depth + 1) ||
    isDatabaseUnavailable(e.cause, depth + 1) ||
    isDatabaseUnavailable(e.originalError, depth + 1)
  );
}

/** The contract's error body, for every non-GraphQL answer (REST, downloads, SSO, probes). */
export function errorBody(status: number, message: string) {
  return { error: { code: status, message } };
}

// ------------------------------------------------------------------ what a client may learn

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

/** The request an error belongs to (the edge's request record): its id names an unexpected error, which marks it for the access log. */
export type ErrorRequest = { readonly id: string; unexpected?: boolean };

/** The message of an unexpected error (500), naming the request id the logs carry. */
export function unexpectedErrorMessage(requestId: string | undefined): string {
  return requestId ? `Unexpected error (request id ${requestId})` : 'Unexpected error';
}

export function toPublicError(err: unknown, log: Pick<Logger, 'warn' | 'error'>, where: string, request?: ErrorRequest): PublicError {
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
  if (request) request.unexpected = true;
  return { kind: 'unexpected', status: 500, message: unexpectedErrorMessage(request?.id), requestId: request?.id };
}
