// What the rooms of the edge share (server.ts, graphql.ts, rest.ts): their dependencies, the
// caller of a request (looked up once, kept on its request record), the context both APIs run
// with, and the body reader with its caps.
import crypto from 'node:crypto';
import type http from 'node:http';
import type { GraphQLSchema } from 'graphql';
import type { Logger } from 'pino';
import type { Db } from '../db/client.ts';
import type { Config } from '../config.ts';
import type { Clock } from '../lib/clock.ts';
import type { Services } from '../services.ts';
import { unauthenticated } from '../lib/errors.ts';
import { bearerToken, userForToken } from '../auth/tokens.ts';
import type { TokenCache } from '../auth/token-cache.ts';
import type { Viewer } from '../auth/access.ts';
import { createContext, type Context, type RequestRecord } from '../graphql/context.ts';
import type { RestRouter } from '../rest/router.ts';
import { BodyBudget, readBody, type BodyLimits, type ReadOptions } from './limits.ts';
import { clientIp, type RateLimits } from './rate-limit.ts';
import { noteViewer, type Observability } from './observability.ts';

export type AppDeps = { prisma: Db; config: Config; clock: Clock; log: Logger; services: Services; schema: GraphQLSchema; rest: RestRouter; tokens?: TokenCache; obs: Observability; rateLimits?: RateLimits };

export const UNAUTHENTICATED_MESSAGE = unauthenticated().message;
/** A `published`-scoped token asked for something else than a published read (403). */
export const PUBLISHED_ONLY_MESSAGE = 'this token may only read published content';

export type Edge = ReturnType<typeof createEdge>;

export function createEdge(deps: AppDeps) {
  const { prisma, config } = deps;
  const bodyLimits: BodyLimits = {
    maxBodyBytes: config.limits.maxBodyBytes,
    // One client's share holds at least one body of the largest size.
    budget: new BodyBudget(config.limits.bodyBudgetBytes, Math.max(config.limits.maxBodyBytes, config.bodies.clientBudgetBytes)),
    timeoutMs: config.bodies.timeoutMs,
    minBytesPerSecond: config.bodies.minBytesPerSecond,
    rateWindowMs: config.bodies.rateWindowMs,
  };
  /** The viewer of an API token (through the token cache), null when unknown or revoked. */
  const viewerForToken = (token: string): Promise<Viewer | null> => (deps.tokens ? deps.tokens.viewerFor(prisma, token) : userForToken(prisma, token));
  return {
    deps,
    bodyBudget: bodyLimits.budget,
    viewerForToken,
    /** The request's caller, once per request: the rate limiter and the handlers ask for the same. */
    viewerFor(req: http.IncomingMessage, record: RequestRecord): Promise<Viewer | null> {
      if (!record.viewer) {
        const token = bearerToken(req.headers.authorization);
        record.viewer = (token ? viewerForToken(token) : Promise.resolve(null)).then((viewer) => noteViewer(record, viewer));
      }
      return record.viewer;
    },
    /** The context of one operation; the request's `X-Visitor-Token` header goes on it. */
    makeContext(viewer: Viewer | null, source: 'rest' | 'graphql', req?: http.IncomingMessage, record?: RequestRecord): Context {
      const ctx = createContext({ prisma, config, clock: deps.clock, log: deps.log, viewer, source, services: deps.services }, record);
      // A visitor token for published reads (src/auth/visitor-tokens.ts); one value, bounded like any header.
      const visitorToken = req?.headers['x-visitor-token'];
      if (typeof visitorToken === 'string' && visitorToken.length > 0) ctx.visitorToken = visitorToken;
      return ctx;
    },
    /** Read a body under the caps; its bytes are charged to the client's IP, as the rate limiter reads it (TRUST_PROXY). */
    read(req: http.IncomingMessage, opts: Omit<ReadOptions, 'client'> = {}, record?: RequestRecord) {
      const read = readBody(req, bodyLimits, { ...opts, client: clientIp(req, config.rateLimit.trustProxy) });
      // A write under an idempotency key is remembered by its body's hash (idempotency.ts).
      return record?.idempotencyKey ? read.then((r) => ((record.bodySha256 = crypto.createHash('sha256').update(r.body).digest('hex')), r)) : read;
    },
  };
}
