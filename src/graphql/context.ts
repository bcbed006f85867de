// The per-request context shared by GraphQL resolvers and the REST shim (which runs the same
// GraphQL operations): the domain context plus per-request loaders.
import { Access, type Viewer } from '../auth/access.ts';
import type { DomainContext } from '../domain/context.ts';

/** What a GraphQL subscription request carries (src/http/live-sse.ts, src/graphql/subscriptions.ts). */
export type LiveRequest = {
  /** The `Last-Event-ID` header of a reconnecting event stream: replay the log after this seq. */
  lastEventId?: number;
  /** The caller's token checked again (revoked → null): before every delivered event. */
  revalidate(): Promise<Viewer | null>;
  /** The caller's token id and client IP: the feed's caps per token and per address. */
  owner: { tokenId: string; ip: string };
  /** The log position of the event being sent: the event stream writes it as `id:`. */
  seq: number | undefined;
};

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
