// What the rooms of the edge share (server.ts, graphql.ts, rest.ts): their dependencies, the
// caller of a request (looked up once, kept on its request record), the context both APIs run
// with, and the body reader with its caps.
import crypto from 'node:crypto';
import type http from 'node:http';
import type { GraphQLSchema } from 'graphql';
import type { Logger } from 'pino';
import type { Db } from '../db/client.ts';
import { LSN_HEADER, type Replicas } from '../db/replicas.ts';
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

export type AppDeps = { prisma: Db; config: Config; clock: Clock; log: Logger; services: Services; schema: GraphQLSchema; rest: RestRouter; tokens?: TokenCache; obs: Observability; rateLimits?: RateLimits; replicas?: Replicas };

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
    /**
     * The client a read (a GraphQL query, a REST GET read) runs on: a fit replica
     * (src/db/replicas.ts), else the primary. A read-your-writes token (`X-Docgraph-Lsn`) the
     * request carries must have been replayed; one that does not parse sends it to the primary.
     * Only the operation runs there: the token lookup and the rate limiter stay on the primary.
     */
    async readDb(req: http.IncomingMessage): Promise<Db> {
      const replicas = deps.replicas;
      if (!replicas?.list.length) return prisma;
      return (await replicas.route(req.headers[LSN_HEADER.toLowerCase()]))?.prisma ?? prisma;
    },
    /**
     * After a write, with replicas configured: the primary's WAL position (past the write's
     * commit) as the read-your-writes token on the answer. Call before the answer's headers go out.
     */
    async tagWrite(res: http.ServerResponse): Promise<void> {
      if (!deps.replicas?.list.length || res.headersSent) return;
      try {
        const rows = await prisma.$queryRawUnsafe<Array<{ lsn: string }>>('SELECT pg_current_wal_lsn()::text AS lsn');
        if (!res.headersSent) res.setHeader(LSN_HEADER, rows[0].lsn);
      } catch (err) {
        // The write is done: answer it; the client's next read may then be served by a lagging replica.
        deps.log.warn({ err }, 'could not read the WAL position after a write');
      }
    },
    /** The context of one operation; the request's `X-Visitor-Token` header goes on it. `db`: a read's client (`readDb`), default the primary. */
    makeContext(viewer: Viewer | null, source: 'rest' | 'graphql', req?: http.IncomingMessage, record?: RequestRecord, db: Db = prisma): Context {
      const ctx = createContext({ prisma: db, config, clock: deps.clock, log: deps.log, viewer, source, services: deps.services }, record);
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
