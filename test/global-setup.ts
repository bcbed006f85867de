// Once per `vitest run`: a PostgreSQL server (embedded, on a free port and a temporary data
// directory, unless DATABASE_URL is set) and a migrated template database. Each test file then
// gets its own database cloned from the template (fast: CREATE DATABASE … TEMPLATE).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import net from 'node:net';
import type { TestProject } from 'vitest/node';
import pg from 'pg';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '../src/db/embedded.ts';
import { migrate } from '../src/db/migrate.ts';
import { runMigrations } from 'graphile-worker';

export const TEMPLATE_DB = 'docgraph_template';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Connection URL of the server's maintenance database; test files create theirs from it. */
    pgAdminUrl: string;
  }
}

/** A TCP port free on loopback now (the test's own servers and PostgreSQL instances). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
    srv.on('error', reject);
  });
}

export default async function setup(project: TestProject) {
  let embedded: EmbeddedDatabase | undefined;
  let dataDir: string | undefined;
  let adminUrl: string;
  if (process.env.DATABASE_URL) {
    const u = new URL(process.env.DATABASE_URL);
    u.pathname = '/postgres';
    adminUrl = u.toString();
  } else {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'docgraph-test-pg-'));
    fs.chmodSync(dataDir, 0o777);
    embedded = await startEmbeddedPostgres({ dataDir: path.join(dataDir, 'data'), port: await freePort() });
    adminUrl = embedded.url('postgres');
  }

  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${TEMPLATE_DB} WITH (FORCE)`);
  await admin.query(`CREATE DATABASE ${TEMPLATE_DB}`);
  await admin.end();
  const templateUrl = withDatabase(adminUrl, TEMPLATE_DB);
  await migrate(templateUrl);
  await runMigrations({ connectionString: templateUrl, logger: undefined });

  project.provide('pgAdminUrl', adminUrl);

  return async () => {
    if (embedded) await embedded.stop();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  };
}

export function withDatabase(url: string, database: string) {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}
