// The per-request context shared by GraphQL resolvers and the REST shim (which runs the same
// GraphQL operations): the domain context plus per-request loaders.
import { Access } from '../auth/access.ts';
import type { DomainContext } from '../domain/context.ts';
import type { LiveRequest } from '../events/stream.ts';

/** What this request was charged against its token's rate limit (src/http/rate-limit.ts). */
export type RateLimitCharge = { cost: number; limit: number; remaining: number; resetAt: number };

export type Context = DomainContext & {
  /** Per-request memo for loaders created lazily by area modules (see `loader()` in common.ts). */
  loaders: Map<string, unknown>;
  /** GraphQL over HTTP only: what a subscription needs to resume and re-check its caller. */
  live?: LiveRequest;
  /** The request's `X-Visitor-Token` header: a visitor token for published reads (src/auth/visitor-tokens.ts). */
  visitorToken?: string;
  /** Set by the rate limiter before execution; absent when limits are off or the request is free. */
  rateLimit?: RateLimitCharge;
};

export function createContext(base: Omit<DomainContext, 'access'>): Context {
  return { ...base, access: new Access(base.prisma, base.viewer), loaders: new Map() };
}
