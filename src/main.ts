// Process entry: configuration, database (embedded PostgreSQL when DATABASE_URL is unset),
// migrations, the HTTP server, and a clean shutdown on SIGINT/SIGTERM.
import path from 'node:path';
import pino from 'pino';
import { loadConfig } from './config.ts';
import { startEmbeddedPostgres, ensureDatabase, type EmbeddedDatabase } from './db/embedded.ts';
import { migrate } from './db/migrate.ts';
import { createApp } from './app.ts';

async function main() {
  const config = loadConfig();
  const log = pino({ level: config.logLevel });

  let embedded: EmbeddedDatabase | undefined;
  let databaseUrl = config.databaseUrl;
  if (!databaseUrl) {
    log.info({ dataDir: path.resolve(config.dataDir, 'pg') }, 'DATABASE_URL is unset: starting embedded PostgreSQL');
    embedded = await startEmbeddedPostgres({ dataDir: path.join(config.dataDir, 'pg'), port: config.embeddedPgPort });
    await ensureDatabase(embedded.url('postgres'), 'docgraph');
    databaseUrl = embedded.url('docgraph');
  }

  await migrate(databaseUrl, (m) => log.info(m));
  const app = await createApp({ config, databaseUrl, log });
  const port = await app.listen();

  const base = `http://localhost:${port}`;
  const lines = [
    '',
    `docgraph is running`,
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

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down: finishing in-flight requests');
    const force = setTimeout(() => {
      log.error('shutdown took too long; exiting');
      process.exit(1);
    }, 15_000);
    force.unref();
    try {
      await app.close();
      if (embedded) await embedded.stop();
      log.info('stopped');
      process.exit(0);
    } catch (err) {
      log.error({ err }, 'error during shutdown');
      process.exit(1);
    }
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
