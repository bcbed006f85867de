// Process entry: configuration, database (embedded PostgreSQL when DATABASE_URL is unset),
// migrations, the HTTP server, and a clean stop on SIGTERM/SIGINT: stop accepting, drain
// in-flight requests, close idle connections, stop the jobs and the embedded database, exit 0.
// A failure to start is one line on stderr and exit code 1 (LOG_LEVEL=debug adds the stack).
import path from 'node:path';
import pino from 'pino';
import { loadConfig, type Config } from './config.ts';
import { startEmbeddedPostgres, ensureDatabase, type EmbeddedDatabase } from './db/embedded.ts';
import { migrate } from './db/migrate.ts';
import { checkDatabase, errorLine, redactUrl } from './db/check.ts';
import { createApp, type App } from './app.ts';
import { closeMarkdownPool } from './lib/markdown-pool.ts';

/** A start-up failure with the one line a newcomer needs. */
class StartupError extends Error {
  constructor(message: string, readonly cause?: unknown) {
    super(message);
  }
}

/** Run one start-up step; any failure becomes `what: <reason>`. */
async function step<T>(what: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof StartupError) throw err;
    throw new StartupError(`${what}: ${errorLine(err)}`, err);
  }
}

let config: Config | undefined;
let app: App | undefined;
let embedded: EmbeddedDatabase | undefined;
let log: pino.Logger | undefined;

async function start() {
  try {
    config = loadConfig();
  } catch (err) {
    throw new StartupError(errorLine(err), err);
  }
  const cfg = config;
  log = pino({ level: cfg.logLevel });

  let databaseUrl = cfg.databaseUrl;
  if (!databaseUrl) {
    const dataDir = path.resolve(cfg.dataDir, 'pg');
    log.info({ dataDir }, 'DATABASE_URL is unset: starting embedded PostgreSQL');
    embedded = await step(`cannot start the embedded PostgreSQL (data ${dataDir}, port ${cfg.embeddedPgPort}; set EMBEDDED_PG_PORT or DATABASE_URL)`, () =>
      startEmbeddedPostgres({ dataDir, port: cfg.embeddedPgPort }),
    );
    await step('cannot create the database in the embedded PostgreSQL', () => ensureDatabase(embedded!.url('postgres'), 'docgraph'));
    databaseUrl = embedded.url('docgraph');
  }
  const url = databaseUrl;
  // Session work (migrations and their lock, LISTEN, the job worker) on the direct URL; requests
  // on DATABASE_URL, which may be a transaction-mode pooler then.
  const directUrl = cfg.databaseUrl ? (cfg.databaseDirectUrl ?? url) : url;
  await step(`cannot reach the database at ${redactUrl(url)}`, () => checkDatabase(url, cfg.dbConnectTimeoutMs || 10_000));
  if (directUrl !== url) await step(`cannot reach the database at ${redactUrl(directUrl)} (DATABASE_DIRECT_URL)`, () => checkDatabase(directUrl, cfg.dbConnectTimeoutMs || 10_000));
  await step('cannot apply the database migrations', () => migrate(directUrl, (m) => log!.info(m)));
  app = await step('cannot start the gateway', () => createApp({ config: cfg, databaseUrl: url, directUrl, log }));
  const port = await app.listen().catch((err: NodeJS.ErrnoException) => {
    const where = `${cfg.host}:${cfg.port}`;
    if (err.code === 'EADDRINUSE') throw new StartupError(`cannot listen on ${where}: the port is already in use (stop the other server or set PORT)`, err);
    if (err.code === 'EACCES') throw new StartupError(`cannot listen on ${where}: permission denied (use a port above 1023 or set PORT)`, err);
    throw new StartupError(`cannot listen on ${where}: ${errorLine(err)}`, err);
  });

  const base = `http://localhost:${port}`;
  const lines = [
    '',
    `docgraph is running (pid ${process.pid}; Ctrl-C or SIGTERM stops it)`,
    `  GraphiQL + GraphQL  ${base}/graphql`,
    `  REST                ${base}/v1   (e.g. curl -H "Authorization: Bearer $TOKEN" ${base}/v1/orgs)`,
    `  Health              ${base}/healthz  ${base}/readyz`,
  ];
  if (app.bootstrap) {
    lines.push(
      '',
      `First run: created organization "${app.bootstrap.org.title}" and admin ${app.bootstrap.user.email}.`,
      `  Admin API token (shown once): ${app.bootstrap.token}`,
    );
  } else {
    lines.push('', 'Authenticate with an API token: Authorization: Bearer <token>  (new ones: npm run admin -- create-token --email <you>)');
  }
  console.log(lines.join('\n') + '\n');
}

/** Stop what was started, in order; the embedded database last. */
async function stopEverything() {
  await app?.close();
  await closeMarkdownPool();
  await embedded?.stop();
}

let stopping = false;
let starting: Promise<void> | undefined;

async function shutdown(signal: string) {
  if (stopping) return;
  stopping = true;
  log?.info({ signal }, 'shutting down: finishing in-flight requests');
  // Last resort: the drain cuts requests after its grace period, so this only fires on a hang.
  setTimeout(() => {
    console.error('docgraph: shutdown took too long; exiting');
    process.exit(1);
  }, 20_000).unref();
  try {
    await starting?.catch(() => {});
    await stopEverything();
    log?.info('stopped');
    process.exit(0);
  } catch (err) {
    log?.error({ err }, 'error during shutdown');
    process.exit(1);
  }
}

process.on('SIGINT', () => void shutdown('SIGINT'));
process.on('SIGTERM', () => void shutdown('SIGTERM'));

starting = start();
starting.catch(async (err) => {
  if (stopping) return;
  stopping = true;
  const message = err instanceof StartupError ? err.message : errorLine(err);
  console.error(`docgraph: ${message}`);
  if (config?.logLevel === 'debug' || config?.logLevel === 'trace') console.error((err as StartupError).cause ?? err);
  await stopEverything().catch(() => {});
  process.exit(1);
});
