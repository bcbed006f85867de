// Process entry of the job worker alone (`npm run worker`): graphile-worker and the periodic tasks
// on DATABASE_DIRECT_URL (default DATABASE_URL), no HTTP server. Run it beside gateways started
// with RUN_WORKER=false, so a queue failure can never take an API process down. Migrations first
// (the same advisory lock as the gateways'), then the queue; SIGTERM/SIGINT stop the running jobs'
// workers cleanly and exit 0. A failure to start is one line on stderr and exit code 1.
import pino from 'pino';
import { loadConfig, type Config } from './config.ts';
import { migrate } from './db/migrate.ts';
import { checkDatabase, errorLine, redactUrl } from './db/check.ts';
import { createWorker } from './app.ts';
import { closeMarkdownPool } from './lib/markdown-pool.ts';

let config: Config | undefined;
let worker: Awaited<ReturnType<typeof createWorker>> | undefined;
let log: pino.Logger | undefined;

async function start() {
  config = loadConfig();
  const cfg = config;
  log = pino({ level: cfg.logLevel });
  const url = cfg.databaseDirectUrl ?? cfg.databaseUrl;
  if (!url) throw new Error('the worker needs DATABASE_DIRECT_URL or DATABASE_URL (it does not start an embedded PostgreSQL)');
  try {
    await checkDatabase(url, cfg.dbConnectTimeoutMs || 10_000);
  } catch (err) {
    throw new Error(`cannot reach the database at ${redactUrl(url)}: ${errorLine(err)}`);
  }
  await migrate(url, (m) => log!.info(m));
  worker = await createWorker({ config: cfg, directUrl: url, log });
  log.info({ pid: process.pid }, 'docgraph worker is running (jobs only; SIGTERM stops it)');
}

let stopping = false;
async function shutdown(signal: string, code = 0) {
  if (stopping) return;
  stopping = true;
  log?.info({ signal }, 'worker shutting down');
  setTimeout(() => {
    console.error('docgraph worker: shutdown took too long; exiting');
    process.exit(1);
  }, 20_000).unref();
  try {
    await starting.catch(() => {});
    await worker?.close();
    await closeMarkdownPool();
    process.exit(code);
  } catch (err) {
    log?.error({ err }, 'error during worker shutdown');
    process.exit(1);
  }
}

process.on('SIGINT', () => void shutdown('SIGINT'));
process.on('SIGTERM', () => void shutdown('SIGTERM'));

const starting = start();
starting.catch(async (err) => {
  console.error(`docgraph worker: ${errorLine(err)}`);
  if (config?.logLevel === 'debug' || config?.logLevel === 'trace') console.error(err);
  await shutdown('startup failure', 1);
});
