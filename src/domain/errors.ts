// Expected failures, shared by GraphQL (extensions.code) and REST (HTTP status).
import { z } from 'zod';

export const ERROR_CODES = [
  'UNAUTHENTICATED',
  'FORBIDDEN',
  'NOT_FOUND',
  'BAD_REQUEST',
  'CONFLICT',
  'PRECONDITION_FAILED',
  'RATE_LIMITED',
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
};

export class AppError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    /** The offending input field, as a dotted path (BAD_REQUEST). */
    readonly field?: string,
  ) {
    super(message);
    this.name = 'AppError';
  }
}

export const notFound = (what: string) => new AppError('NOT_FOUND', `${what} not found`);
export const forbidden = (message = 'You are not allowed to do this') => new AppError('FORBIDDEN', message);
export const badRequest = (field: string, message: string) =>
  new AppError('BAD_REQUEST', field ? `${field}: ${message}` : message, field);
export const conflict = (message: string) => new AppError('CONFLICT', message);
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
