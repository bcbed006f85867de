// `Query.rateLimit`: what this request cost and what is left of its user's budget (all of the
// user's tokens share one), as GitHub's GraphQL API answers it, read from the charge the rate
// limiter made before execution (src/http/rate-limit.ts). The same figures are on the X-RateLimit-* headers.
import { builder } from './builder.ts';
import type { RateLimitCharge } from './context.ts';

const RateLimitRef = builder.objectRef<RateLimitCharge>('RateLimit').implement({
  description: 'This request’s charge against your rate limit, which all of your API tokens share (also sent as the X-RateLimit-* headers).',
  fields: (t) => ({
    cost: t.exposeInt('cost', { description: 'Points this request cost: its complexity, 1 point per 100, at least 1.' }),
    limit: t.exposeInt('limit', { description: 'Points a user may spend per window, all tokens together (`RATE_LIMIT_POINTS`).' }),
    remaining: t.exposeInt('remaining', { description: 'Points left in the current window, after this request.' }),
    used: t.int({ description: 'Points spent in the current window, this request included.', resolve: (c) => c.limit - c.remaining }),
    resetAt: t.field({ type: 'DateTime', description: 'When the window ends and the budget is full again.', resolve: (c) => new Date(c.resetAt * 1000) }),
  }),
});

builder.queryField('rateLimit', (t) =>
  t.field({
    type: RateLimitRef,
    nullable: true,
    description: 'What this request cost and what is left of your budget (shared by all your tokens); null when rate limits are off on this server.',
    resolve: (_root, _args, ctx) => ctx.rateLimit ?? null,
  }),
);
