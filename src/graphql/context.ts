// The per-request context shared by GraphQL resolvers and the REST shim (which runs the same
// GraphQL operations): the domain context plus per-request loaders.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Access, type Viewer } from '../auth/access.ts';
import type { DomainContext } from '../domain/context.ts';
import type { LiveRequest } from '../events/stream.ts';

/** What this request was charged against its token's rate limit (src/http/rate-limit.ts). */
export type RateLimitCharge = { cost: number; limit: number; remaining: number; resetAt: number };

/** The rate limiter's hold on one request (src/http/rate-limit.ts). */
export type RateLimitState = {
  /** The request (its client IP) and where the X-RateLimit-* headers go. */
  req: IncomingMessage;
  res: ServerResponse;
  /** The caller the request counts against (null: its client IP). */
  viewer: () => Promise<Viewer | null>;
  /** Charged (or decided free): nothing more to count for this request. */
  done: boolean;
  /** Set when the charge went over the limit: the request answers 429, retry after this many seconds. */
  retryAfter?: number;
};

/**
 * One HTTP request as the edge knows it: created when it arrives (src/http/observability.ts
 * `handle`), current for all the code that runs for it (src/http/request-context.ts), and on the
 * context as `requestRecord`. What the access log, the metrics, the rate limiter, conditional GET,
 * the shared cache headers and the complexity budget know of the request is here, and only here.
 */
export type RequestRecord = {
  /** The caller's `X-Request-Id` (when well-formed) or a generated one; echoed on the response. */
  id: string;
  /** `process.hrtime.bigint()` when the request arrived. */
  startedAt: bigint;
  method: string;
  /** The route pattern (`/v1/spaces/:spaceId`, `/graphql`), never the raw path; set by routing. */
  route?: string;
  /** The authenticated caller, once known. */
  userId?: string;
  /** The write's `Idempotency-Key`, and the SHA-256 (hex) of its body once read (src/http/idempotency.ts). */
  idempotencyKey?: string;
  bodySha256?: string;
  tokenId?: string;
  /** The GraphQL operation name, when the request ran one. */
  operationName?: string;
  /** SQL statements issued for this request (counted from the Prisma query events). */
  statements: number;
  /** An unexpected error was logged for this request (even inside a 200 GraphQL answer). */
  unexpected?: boolean;
  /** The caller of the request's token (or subscription ticket), looked up once: the rate limiter and the handlers ask for the same. */
  viewer?: Promise<Viewer | null>;
  /** An event stream opened with a subscription ticket: how its token is checked again (by id). */
  revalidate?: () => Promise<Viewer | null>;
  /** The rate limiter's state, for a request it counts (src/http/rate-limit.ts). */
  rateLimit?: RateLimitState;
  /** It runs a fixed document (a REST route's, or a trusted document): no complexity budget (graphql/builder.ts). */
  fixedDocument?: boolean;
  /** GraphQL: the result had errors or was a stream, so it gets no ETag (src/http/conditional.ts). */
  untagged?: boolean;
  /** An anonymous published read whose answer a shared cache may keep: the site it read (src/http/published-cache.ts). */
  sharedSiteId?: string;
  /** … and the site structure version its gate read (the versioned surrogate key). */
  sharedSiteVersion?: string;
};

export type Context = DomainContext & {
  /** Per-request memo for loaders created lazily by area modules (see `loader()` in common.ts). */
  loaders: Map<string, unknown>;
  /** GraphQL over HTTP only: what a subscription needs to resume and re-check its caller. */
  live?: LiveRequest;
  /** The request's `X-Visitor-Token` header: a visitor token for published reads (src/auth/visitor-tokens.ts). */
  visitorToken?: string;
  /** Set by the rate limiter before execution; absent when limits are off or the request is free. */
  rateLimit?: RateLimitCharge;
  /** The HTTP request this context serves; absent for a WebSocket operation. */
  requestRecord?: RequestRecord;
};

export function createContext(base: Omit<DomainContext, 'access'>, requestRecord?: RequestRecord): Context {
  return { ...base, access: new Access(base.prisma, base.viewer), loaders: new Map(), ...(requestRecord ? { requestRecord } : {}) };
}

/**
 * The same context for another look at its caller (a live subscription checks its token again
 * before each event): the viewer as now found, fresh access decisions and loaders.
 */
export function renewContext(ctx: Context, viewer: Viewer): Context {
  ctx.viewer = viewer;
  ctx.access = new Access(ctx.prisma, viewer);
  ctx.loaders = new Map();
  return ctx;
}
