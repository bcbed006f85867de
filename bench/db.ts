// The benchmark's database: a fresh embedded PostgreSQL (temporary data directory, free port)
// when DATABASE_URL is unset; otherwise a fresh database created on the DATABASE_URL server
// (dropped at the end unless --keep-db). Either way the database is migrated with the project's
// own runner and starts empty.
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { startEmbeddedPostgres, ensureDatabase, type EmbeddedDatabase } from '../src/db/embedded.ts';
import { migrate } from '../src/db/migrate.ts';

export type BenchDatabase = {
  url: string;
  /** Where it came from, for the report. */
  kind: 'embedded' | 'external';
  stop: () => Promise<void>;
};

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

export async function startBenchDatabase(opts: { keep?: boolean; log: (m: string) => void }): Promise<BenchDatabase> {
  const name = `docgraph_bench_${Date.now().toString(36)}`;
  const external = process.env.DATABASE_URL;
  if (external) {
    const admin = new pg.Client({ connectionString: external });
    await admin.connect();
    try {
      await admin.query(`CREATE DATABASE "${name}"`);
    } finally {
      await admin.end();
    }
    const u = new URL(external);
    u.pathname = `/${name}`;
    const url = u.toString();
    opts.log(`database: ${name} on the DATABASE_URL server`);
    await migrate(url);
    return {
      url,
      kind: 'external',
      stop: async () => {
        if (opts.keep) return;
        const a = new pg.Client({ connectionString: external });
        await a.connect();
        await a.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`).catch(() => {});
        await a.end();
      },
    };
  }

  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'docgraph-bench-'));
  const port = await freePort();
  let embedded: EmbeddedDatabase;
  try {
    embedded = await startEmbeddedPostgres({ dataDir: path.join(dir, 'pg'), port });
  } catch (err) {
    fs.rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  await ensureDatabase(embedded.url('postgres'), 'docgraph');
  const url = embedded.url('docgraph');
  opts.log(`database: embedded PostgreSQL on port ${port} (${dir}${opts.keep ? ', kept' : ''})`);
  await migrate(url);
  return {
    url,
    kind: 'embedded',
    stop: async () => {
      await embedded.stop().catch(() => {});
      if (!opts.keep) fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
