// One node:http server: GraphQL (yoga, with GraphiQL) at /graphql, the REST shim at /v1, file
// downloads, health probes. Authentication happens here, once per request, for both APIs.
import http from 'node:http';
import { createYoga, type Plugin, type YogaServerInstance } from 'graphql-yoga';
import { GraphQLError, type GraphQLSchema } from 'graphql';
import type { Logger } from 'pino';
import type { Db } from '../db/client.ts';
import type { Config } from '../config.ts';
import type { Clock } from '../domain/clock.ts';
import type { Services } from '../services.ts';
import { AppError, HTTP_STATUS, RETRY_AFTER_SECONDS, isDatabaseUnavailable, serviceUnavailable } from '../domain/errors.ts';
import { bearerToken, userForToken } from '../auth/tokens.ts';
import type { Viewer } from '../auth/access.ts';
import { createContext, type Context } from '../graphql/context.ts';
import { RestRouter, errorBody } from '../rest/router.ts';
import { handleDownload } from './downloads.ts';
import { handleSsoRequest } from './sso.ts';
import { sendJson, useResponseCompression } from './compression.ts';

export type AppDeps = { prisma: Db; config: Config; clock: Clock; log: Logger; services: Services; schema: GraphQLSchema; rest: RestRouter };

const MAX_BODY_BYTES = 32 * 1024 * 1024;

export function createHttpServer(deps: AppDeps) {
  const { prisma, log } = deps;

  async function viewerFor(req: http.IncomingMessage): Promise<Viewer | null> {
    const token = bearerToken(req.headers.authorization);
    if (!token) return null;
    return userForToken(prisma, token);
  }

  const makeContext = (viewer: Viewer | null): Context =>
    createContext({ prisma, config: deps.config, clock: deps.clock, log, viewer, services: deps.services });

  const yoga: YogaServerInstance<{ req: http.IncomingMessage }, Context> = createYoga({
    schema: deps.schema,
    graphqlEndpoint: '/graphql',
    landingPage: false,
    graphiql: {
      title: 'docgraph',
      headers: JSON.stringify({ Authorization: 'Bearer <your API token>' }, null, 2),
      defaultQuery: '{\n  viewer {\n    user { id displayName email }\n    organizations(first: 10) { totalCount nodes { id title } }\n  }\n}\n',
    },
    context: async ({ req }) => {
      const viewer = await viewerFor(req);
      if (!viewer) {
        throw new GraphQLError('A valid API token is required (Authorization: Bearer <token>)', {
          extensions: { code: 'UNAUTHENTICATED', http: { status: 401 } },
        });
      }
      return makeContext(viewer);
    },
    maskedErrors: {
      maskError: (error, message) => maskError(error, message, log),
    },
    plugins: [useResponseCompression(), useServiceUnavailableStatus()],
    logging: {
      debug: (...a) => log.debug(a.map(String).join(' ')),
      info: (...a) => log.info(a.map(String).join(' ')),
      warn: (...a) => log.warn(a.map(String).join(' ')),
      error: (...a) => log.error(a.map(String).join(' ')),
    },
  });

  async function handleRest(req: http.IncomingMessage, res: http.ServerResponse, url: URL) {
    const match = deps.rest.match(req.method ?? 'GET', url.pathname);
    if (!match.route) {
      if (match.allowed) {
        res.setHeader('Allow', match.allowed.join(', '));
        return sendJson(res, 405, errorBody(405, `Method ${req.method} is not allowed on ${url.pathname}`));
      }
      return sendJson(res, 404, errorBody(404, `No route ${req.method} ${url.pathname}`));
    }
    const viewer = await viewerFor(req);
    if (!viewer) return sendJson(res, 401, errorBody(401, 'A valid API token is required (Authorization: Bearer <token>)'));
    const raw = await readBody(req);
    if (raw === null) return sendJson(res, 413, errorBody(413, 'Request body too large'));
    const out = await deps.rest.handle(match.route, match.params ?? {}, url.searchParams, raw, makeContext(viewer));
    for (const [k, v] of Object.entries(out.headers ?? {})) res.setHeader(k, v);
    if (out.body === undefined) {
      res.statusCode = out.status;
      return res.end();
    }
    return sendJson(res, out.status, out.body);
  }

  const server = http.createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    try {
      if (url.pathname === '/healthz') return await sendJson(res, 200, { status: 'ok' });
      if (url.pathname === '/readyz') {
        if (await databaseReady(prisma)) return sendJson(res, 200, { status: 'ready' });
        res.setHeader('Retry-After', String(RETRY_AFTER_SECONDS));
        return sendJson(res, 503, { status: 'database unreachable' });
      }
      if (url.pathname === '/graphql' || url.pathname.startsWith('/graphql/')) return yoga(req, res, { req });
      if (url.pathname === '/v1' || url.pathname.startsWith('/v1/')) return await handleRest(req, res, url);
      if (url.pathname.startsWith('/files/')) {
        const viewer = await viewerFor(req);
        return await handleDownload(req, res, url, makeContext(viewer));
      }
      if (url.pathname.startsWith('/sso/')) {
        const raw = await readBody(req);
        return await handleSsoRequest(req, res, url, raw ?? '', makeContext(null));
      }
      if (url.pathname === '/') {
        return sendJson(res, 200, { name: 'docgraph', graphql: '/graphql', rest: '/v1', health: '/healthz' });
      }
      return sendJson(res, 404, errorBody(404, `Not found: ${url.pathname}`));
    } catch (err) {
      // The token lookup, downloads and SSO land here when the database fails: 503, not 500.
      const unavailable = isDatabaseUnavailable(err);
      if (unavailable) log.warn({ err }, 'database unavailable');
      else log.error({ err }, 'unhandled error');
      if (res.headersSent) res.end();
      else if (unavailable) {
        res.setHeader('Retry-After', String(RETRY_AFTER_SECONDS));
        await sendJson(res, 503, errorBody(503, serviceUnavailable().message)).catch(() => res.end());
      } else await sendJson(res, 500, errorBody(500, 'Unexpected error')).catch(() => res.end());
    }
  });
  server.keepAliveTimeout = 65_000;
  return server;
}


function readBody(req: http.IncomingMessage): Promise<string | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY_BYTES) tooLarge = true;
      else chunks.push(c);
    });
    req.on('end', () => resolve(tooLarge ? null : Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** `/readyz` answers within this many ms whatever the database does. */
const READY_TIMEOUT_MS = 800;

/** `SELECT 1` raced against a timer: a frozen database is "not ready", not a hung probe. */
async function databaseReady(prisma: Db): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const probe = prisma.$queryRaw`SELECT 1`.then(
    () => true,
    () => false,
  );
  const timeout = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), READY_TIMEOUT_MS);
  });
  try {
    return await Promise.race([probe, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

const retryAfter = { 'Retry-After': String(RETRY_AFTER_SECONDS) };

/**
 * A GraphQL response whose every error is SERVICE_UNAVAILABLE and that has no data left (null,
 * or only null root fields) failed as a whole because of the database: HTTP 503 + Retry-After.
 * Errors outside execution (the token lookup) already carry that status from `maskError`.
 */
function useServiceUnavailableStatus(): Plugin {
  return {
    onResultProcess({ result, setResult }) {
      if (Array.isArray(result) || !result || typeof result !== 'object' || Symbol.asyncIterator in result) return;
      const errors = result.errors ?? [];
      if (!errors.length || !errors.every((e) => e.extensions?.code === 'SERVICE_UNAVAILABLE')) return;
      const data = result.data as Record<string, unknown> | null | undefined;
      if (data && Object.values(data).some((v) => v !== null)) return;
      setResult({ ...result, extensions: { ...result.extensions, http: { status: 503, headers: retryAfter } } });
    },
  };
}

/** Expected errors keep their code (and field); anything else is logged and masked. */
function maskError(error: unknown, message: string, log: Logger): Error {
  const gqlError = error instanceof GraphQLError ? error : undefined;
  const original = gqlError?.originalError ?? error;
  if (isDatabaseUnavailable(original)) {
    // An outage fails every request: a warning each, not an "unexpected error".
    log.warn({ err: original }, 'database unavailable');
    return new GraphQLError(serviceUnavailable().message, {
      nodes: gqlError?.nodes,
      path: gqlError?.path,
      // A field's error leaves the response 200 unless nothing else succeeded (see
      // useServiceUnavailableStatus); an error outside execution is the whole response.
      extensions: { code: 'SERVICE_UNAVAILABLE', http: gqlError?.path ? { status: 200 } : { status: 503, headers: retryAfter } },
    });
  }
  if (original instanceof AppError) {
    return new GraphQLError(original.message, {
      nodes: gqlError?.nodes,
      path: gqlError?.path,
      extensions: { code: original.code, ...(original.field ? { field: original.field } : {}), http: { status: gqlError?.path ? 200 : HTTP_STATUS[original.code] } },
    });
  }
  if (original instanceof GraphQLError) return original;
  if (gqlError && !gqlError.originalError) return gqlError;
  log.error({ err: original }, 'unexpected error in GraphQL resolver');
  return new GraphQLError(message, { nodes: gqlError?.nodes, path: gqlError?.path, extensions: { code: 'INTERNAL_SERVER_ERROR' } });
}
