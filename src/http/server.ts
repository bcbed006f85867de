// One node:http server: GraphQL (yoga, with GraphiQL) at /graphql, the REST shim at /v1, file
// downloads, health probes. Authentication happens here, once per request, for both APIs.
import http from 'node:http';
import { createYoga, type Plugin, type YogaServerInstance } from 'graphql-yoga';
import { GraphQLError, type GraphQLSchema } from 'graphql';
import type { Logger } from 'pino';
import type { Db } from '../db/client.ts';
import type { Config } from '../config.ts';
import type { Clock } from '../lib/clock.ts';
import type { Services } from '../services.ts';
import { AppError, ERROR_CODES, HTTP_STATUS, RETRY_AFTER_HEADER, isDatabaseUnavailable, serviceUnavailable, errorBody } from '../lib/errors.ts';
import { bearerToken, userForToken } from '../auth/tokens.ts';
import type { TokenCache } from '../auth/token-cache.ts';
import type { Viewer } from '../auth/access.ts';
import { createContext, type Context } from '../graphql/context.ts';
import { RestRouter } from '../rest/router.ts';
import { handleDownload } from './downloads.ts';
import { handleSsoRequest } from './sso.ts';
import { explorerOptions, isIntrospectionOnly, renderExplorer, serveExplorerAsset } from './explorer.ts';
import { sendJson, useResponseCompression } from './compression.ts';
import { BodyBudget, RequestRejected, assertJsonDepth, parseRequestTarget, readBody, type RequestTarget } from './limits.ts';
import { CleanStringLiteralsRule, FORBIDDEN_CHAR_MESSAGE, findForbiddenString } from './input-hygiene.ts';
import { maxTokensPlugin } from '@escape.tech/graphql-armor-max-tokens';
import { maxAliasesPlugin } from '@escape.tech/graphql-armor-max-aliases';
import { maxDirectivesPlugin } from '@escape.tech/graphql-armor-max-directives';

export type AppDeps = { prisma: Db; config: Config; clock: Clock; log: Logger; services: Services; schema: GraphQLSchema; rest: RestRouter; tokens?: TokenCache };

export function createHttpServer(deps: AppDeps) {
  const { prisma, log } = deps;
  const limits = deps.config.limits;
  const bodyLimits = { maxBodyBytes: limits.maxBodyBytes, budget: new BodyBudget(limits.bodyBudgetBytes) };

  async function viewerFor(req: http.IncomingMessage): Promise<Viewer | null> {
    const token = bearerToken(req.headers.authorization);
    if (!token) return null;
    return deps.tokens ? deps.tokens.viewerFor(prisma, token) : userForToken(prisma, token);
  }

  const makeContext = (viewer: Viewer | null, source: 'rest' | 'graphql' = 'rest'): Context =>
    createContext({ prisma, config: deps.config, clock: deps.clock, log, viewer, source, services: deps.services });

  const yoga: YogaServerInstance<{ req: http.IncomingMessage }, Context> = createYoga({
    schema: deps.schema,
    graphqlEndpoint: '/graphql',
    landingPage: false,
    // GraphiQL from our own dependencies, with examples (src/http/explorer.ts).
    graphiql: explorerOptions(),
    renderGraphiQL: renderExplorer,
    context: async ({ req, params }) => {
      // Introspection alone reads only the schema: public, so the Docs pane needs no token.
      if (isIntrospectionOnly(params.query, limits.graphqlMaxTokens)) return makeContext(null, 'graphql');
      const viewer = await viewerFor(req);
      if (!viewer) {
        throw new GraphQLError('A valid API token is required (Authorization: Bearer <token>)', {
          extensions: { code: 'UNAUTHENTICATED', http: { status: 401 } },
        });
      }
      return makeContext(viewer, 'graphql');
    },
    maskedErrors: {
      maskError: (error, message) => maskError(error, message, log),
    },
    plugins: [
      // Bounds on the document itself, checked while parsing and validating, before execution
      // (depth, breadth and cost are the complexity plugin's, in graphql/builder.ts).
      maxTokensPlugin({ n: limits.graphqlMaxTokens }),
      maxAliasesPlugin({ n: limits.graphqlMaxAliases, allowList: [] }),
      maxDirectivesPlugin({ n: limits.graphqlMaxDirectives }),
      useCleanStrings(),
      useErrorStatus(),
      useResponseCompression(),
    ],
    logging: {
      debug: (...a) => log.debug(a.map(String).join(' ')),
      info: (...a) => log.info(a.map(String).join(' ')),
      warn: (...a) => log.warn(a.map(String).join(' ')),
      error: (...a) => log.error(a.map(String).join(' ')),
    },
  });

  async function handleRest(req: http.IncomingMessage, res: http.ServerResponse, target: RequestTarget) {
    const method = req.method ?? 'GET';
    const match = deps.rest.match(method, target.pathname);
    if (!match.route) {
      if (match.allowed) {
        res.setHeader('Allow', match.allowed.join(', '));
        return sendJson(res, 405, errorBody(405, `Method ${method} is not allowed on ${target.pathname}`));
      }
      return sendJson(res, 404, errorBody(404, match.notFound ?? `No route ${method} ${target.pathname}`));
    }
    const viewer = await viewerFor(req);
    if (!viewer) return sendJson(res, 401, errorBody(401, 'A valid API token is required (Authorization: Bearer <token>)'));
    const { body, release } = await readBody(req, bodyLimits);
    try {
      const raw = body.toString('utf8');
      if (match.route.body && body.length > 0) assertJsonContentType(req.headers['content-type']);
      if (match.route.body) assertJsonDepth(raw, limits.maxJsonDepth);
      const out = await deps.rest.handle(match.route, match.params ?? {}, target.searchParams, raw, makeContext(viewer));
      for (const [k, v] of Object.entries(out.headers ?? {})) res.setHeader(k, v);
      if (out.body === undefined) {
        res.statusCode = out.status;
        return res.end();
      }
      return await sendJson(res, out.status, out.body);
    } finally {
      release();
    }
  }

  /** GraphQL: the body is read here, under the same caps as REST, and handed to yoga parsed-free. */
  async function handleGraphql(req: http.IncomingMessage, res: http.ServerResponse, target: RequestTarget) {
    if (req.method === 'GET' || req.method === 'HEAD') {
      // Yoga JSON-parses these itself and treats a syntax error as an internal one.
      for (const param of ['variables', 'extensions']) {
        const value = target.searchParams.get(param);
        if (value === null || value === '') continue;
        assertJsonDepth(value, limits.maxJsonDepth, param);
        let parsed: unknown;
        try {
          parsed = JSON.parse(value);
        } catch {
          return sendGraphqlRequestError(res, `${param}: not valid JSON`);
        }
        if (parsed !== null && (typeof parsed !== 'object' || Array.isArray(parsed))) return sendGraphqlRequestError(res, `${param}: must be a JSON object`);
      }
      // HEAD is a GET without the body (node drops the body of a HEAD response by itself).
      if (req.method === 'HEAD') req.method = 'GET';
      return yoga(req, res, { req });
    }
    const { body, release } = await readBody(req, bodyLimits);
    try {
      assertJsonDepth(body, limits.maxJsonDepth);
      const headers = new yoga.fetchAPI.Headers();
      for (const [k, v] of Object.entries(req.headers)) if (v !== undefined) headers.set(k, Array.isArray(v) ? v.join(', ') : v);
      const request = new yoga.fetchAPI.Request(`http://localhost${req.url}`, { method: req.method, headers, body: body as unknown as BodyInit });
      const response = await yoga.handleRequest(request, { req });
      return await writeFetchResponse(res, response);
    } finally {
      release();
    }
  }

  const server = http.createServer(async (req, res) => {
    try {
      // Routing reads the raw path: a segment is one id, whatever it contains (limits.ts).
      const target = parseRequestTarget(req.url);
      const top = target.segments[0];
      if (target.pathname === '/healthz') return await sendJson(res, 200, { status: 'ok' });
      if (target.pathname === '/readyz') {
        if (await databaseReady(prisma)) return sendJson(res, 200, { status: 'ready' });
        res.setHeader('Retry-After', RETRY_AFTER_HEADER['Retry-After']);
        return sendJson(res, 503, { status: 'database unreachable' });
      }
      if (top === 'graphql') {
        if (target.segments[1] === 'assets' && target.segments.length === 3) return await serveExplorerAsset(req, res, target.segments[2], target.searchParams);
        return await handleGraphql(req, res, target);
      }
      if (top === 'v1') return await handleRest(req, res, target);
      if (top === 'files') {
        const viewer = await viewerFor(req);
        return await handleDownload(req, res, target, makeContext(viewer));
      }
      if (top === 'sso') {
        const { body, release } = await readBody(req, bodyLimits);
        try {
          return await handleSsoRequest(req, res, target, body.toString('utf8'), makeContext(null));
        } finally {
          release();
        }
      }
      if (target.pathname === '/') {
        return sendJson(res, 200, { name: 'docgraph', graphql: '/graphql', rest: '/v1', health: '/healthz' });
      }
      return sendJson(res, 404, errorBody(404, `Not found: ${target.pathname}`));
    } catch (err) {
      if (err instanceof RequestRejected) {
        // A refused body may not have been read to its end: do not reuse the connection.
        if (err.status === 413 || err.status === 503) res.setHeader('Connection', 'close');
        for (const [k, v] of Object.entries(err.headers)) res.setHeader(k, v);
        if (!res.headersSent) return sendJson(res, err.status, errorBody(err.status, err.message)).catch(() => res.end());
        return res.end();
      }
      // The token lookup, downloads and SSO land here when the database fails: 503, not 500.
      const unavailable = isDatabaseUnavailable(err);
      if (unavailable) log.warn({ err }, 'database unavailable');
      else log.error({ err }, 'unhandled error');
      if (res.headersSent) res.end();
      else if (unavailable) {
        res.setHeader('Retry-After', RETRY_AFTER_HEADER['Retry-After']);
        await sendJson(res, 503, errorBody(503, serviceUnavailable().message)).catch(() => res.end());
      } else await sendJson(res, 500, errorBody(500, 'Unexpected error')).catch(() => res.end());
    }
  });
  server.keepAliveTimeout = 65_000;
  // Requests node's parser refuses before any handler runs (headers or URL above the size limit,
  // malformed request lines) still answer with the contract's error body, not a bare status line.
  server.on('clientError', (err: NodeJS.ErrnoException, socket) => {
    if (!socket.writable || (err.code === 'ECONNRESET' && !socket.readable)) return void socket.destroy();
    const status = err.code === 'HPE_HEADER_OVERFLOW' ? 431 : err.code === 'HPE_HEADER_TIMEOUT' || err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
    const message = status === 431 ? 'Request headers or URL too large' : status === 408 ? 'Request timeout' : 'Malformed HTTP request';
    const body = JSON.stringify(errorBody(status, message));
    const reason = http.STATUS_CODES[status] ?? 'Bad Request';
    socket.end(`HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
  });
  return server;
}

/**
 * A REST body is JSON: a body sent as anything else (`text/plain`, a form) is a 415 with the
 * contract's error body. No `Content-Type` at all is accepted when the body parses as JSON (raw
 * HTTP clients often omit it; browsers and the official client always send one).
 */
function assertJsonContentType(header: string | undefined) {
  if (header === undefined || header.trim() === '') return;
  const type = header.split(';')[0].trim().toLowerCase();
  if (type === 'application/json' || /^application\/[a-z0-9.+-]+\+json$/.test(type)) return;
  throw new RequestRejected(415, `Unsupported content type ${JSON.stringify(type)}: send the body as application/json`);
}

/**
 * No NUL or control character (input-hygiene.ts) in GraphQL variables or string literals: a
 * `BAD_REQUEST` naming the variable path or the argument, before anything runs.
 */
function useCleanStrings(): Plugin {
  return {
    onParams({ params }) {
      const path = findForbiddenString(params.variables ?? {}, 'variables');
      if (path !== undefined) {
        throw new GraphQLError(`${path}: ${FORBIDDEN_CHAR_MESSAGE}`, { extensions: { code: 'BAD_REQUEST', field: path, http: { status: 400 } } });
      }
    },
    onValidate({ addValidationRule }) {
      addValidationRule(CleanStringLiteralsRule);
    },
  };
}

/**
 * The HTTP status of a GraphQL result from its errors, in one place:
 * - request errors (parse, validation, variables, the document limits above) carry no code of
 *   their own: they get `BAD_REQUEST` (and 400 whatever the client accepts), so every error a
 *   client can cause names its kind;
 * - a result whose every error is SERVICE_UNAVAILABLE and that has no data left (null, or only null
 *   root fields) failed as a whole because of the database: 503 + Retry-After. Errors outside
 *   execution (the token lookup) already carry that status from `maskError`.
 */
function useErrorStatus(): Plugin {
  const isOurs = (code: unknown) => typeof code === 'string' && (code === 'INTERNAL_SERVER_ERROR' || (ERROR_CODES as readonly string[]).includes(code));
  return {
    onResultProcess({ result, setResult }) {
      if (Array.isArray(result) || !result || typeof result !== 'object' || Symbol.asyncIterator in result) return;
      let errors = result.errors ?? [];
      if (!errors.length) return;
      if (!errors.every((e) => isOurs(e.extensions?.code))) {
        errors = errors.map((e) =>
          isOurs(e.extensions?.code)
            ? e
            : new GraphQLError(e.message, {
                source: e.source,
                positions: e.positions,
                path: e.path,
                originalError: e.originalError,
                // A request error (no path: nothing ran) is the client's: 400 whatever it accepts.
                extensions: { ...e.extensions, code: 'BAD_REQUEST', ...(e.path ? {} : { http: { status: 400 } }) },
              }),
        );
        result = { ...result, errors };
        setResult(result);
      }
      const data = result.data as Record<string, unknown> | null | undefined;
      const outage = errors.every((e) => e.extensions?.code === 'SERVICE_UNAVAILABLE') && !(data && Object.values(data).some((v) => v !== null));
      if (outage) setResult({ ...result, extensions: { ...result.extensions, http: { status: 503, headers: RETRY_AFTER_HEADER } } });
    },
  };
}

function sendGraphqlRequestError(res: http.ServerResponse, message: string) {
  return sendJson(res, 400, { errors: [{ message, extensions: { code: 'BAD_REQUEST' } }] });
}

/** Send a fetch `Response` (yoga's answer) on a node response, streaming its body. */
async function writeFetchResponse(res: http.ServerResponse, response: Response) {
  res.statusCode = response.status;
  response.headers.forEach((value, key) => {
    if (key !== 'set-cookie') res.setHeader(key, value);
  });
  const cookies = response.headers.getSetCookie();
  if (cookies.length) res.setHeader('set-cookie', cookies);
  if (!response.body) return void res.end();
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    if (res.destroyed) break;
    if (!res.write(chunk)) await new Promise((resolve) => (res.once('drain', resolve), res.once('close', resolve)));
  }
  res.end();
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
      // useErrorStatus); an error outside execution is the whole response.
      extensions: { code: 'SERVICE_UNAVAILABLE', http: gqlError?.path ? { status: 200 } : { status: 503, headers: RETRY_AFTER_HEADER } },
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
