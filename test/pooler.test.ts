// Gateways behind a real PgBouncer in transaction mode (Debian's `pgbouncer` package): requests on
// DATABASE_URL = the pooler, session work (LISTEN, migrations, the job worker) on
// DATABASE_DIRECT_URL. Its own embedded PostgreSQL (the last test stops it) and its own pgbouncer
// process. No pgbouncer binary is a failure, not a skip: `apt-get install -y pgbouncer`.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, type Config } from '../src/config.ts';
import { createApp, type App } from '../src/app.ts';
import { startOwnPostgres, startPgBouncer, type Bouncer, type OwnPostgres } from './fixtures/own-postgres.ts';
import { eventually as eventuallyEvery } from './fixtures/wait.ts';

const ADMIN_TOKEN = 'pooler-admin-token-0123456789';

let own: OwnPostgres | undefined;
let bouncer: Bouncer | undefined;
let directUrl: string;
let pooledUrl: string;
let a: { app: App; url: string } | undefined;
let b: { app: App; url: string } | undefined;

function configFor(extra: Partial<Config> = {}): Config {
  return {
    ...loadConfig({
      DOCGRAPH_ADMIN_TOKEN: ADMIN_TOKEN,
      DB_CONNECT_TIMEOUT_MS: '10000',
      // Short, so the test can watch it fire through the pooler.
      DB_STATEMENT_TIMEOUT_MS: '1000',
      LOG_LEVEL: 'silent',
    }),
    filesDir: fs.mkdtempSync(path.join(os.tmpdir(), 'docgraph-pooler-files-')),
    rateLimit: { ...loadConfig({}).rateLimit, enabled: true, points: 60, anonymousPoints: 30, windowSeconds: 60, trustProxy: 0 },
    ...extra,
  };
}

async function gateway(worker: boolean) {
  const app = await createApp({ config: configFor(), databaseUrl: pooledUrl, directUrl, log: pino({ level: 'silent' }), worker, poolSize: 5 });
  return { app, url: `http://127.0.0.1:${await app.listen(0, '127.0.0.1')}` };
}

/** A new API token of the admin, created through gateway A. */
async function createToken(label: string): Promise<{ token: string; apiToken: { id: string } }> {
  const created = await fetch(`${a!.url}/graphql`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ query: `mutation { createApiToken(input: { label: ${JSON.stringify(label)} }) { token apiToken { id } } }` }),
  }).then((r) => r.json());
  return created.data.createApiToken;
}

const eventually = <T>(fn: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 10_000) => eventuallyEvery(fn, ok, timeoutMs, 25);

const me = (base: string, token: string) => fetch(`${base}/v1/user`, { headers: { authorization: `Bearer ${token}` } });

beforeAll(async () => {
  own = await startOwnPostgres('pooler', 'pooled');
  directUrl = own.url;
  bouncer = await startPgBouncer(own);
  pooledUrl = bouncer.url;

  a = await gateway(true);
  b = await gateway(false);
}, 120_000);

afterAll(async () => {
  const closing = Promise.all([a?.app.close({ graceMs: 500 }), b?.app.close({ graceMs: 500 })]).catch(() => {});
  await Promise.race([closing, new Promise((r) => setTimeout(r, 20_000))]);
  await bouncer?.stop();
  await own?.remove();
}, 60_000);

describe('behind PgBouncer in transaction mode', () => {
  it('starts, and answers requests through the pooler', async () => {
    const r = await me(a!.url, ADMIN_TOKEN);
    expect(r.status).toBe(200);
    expect((await me(b!.url, ADMIN_TOKEN)).status).toBe(200);
  });

  it('a statement timeout still fires (per transaction, not a startup parameter), and leaves no session setting behind', async () => {
    const alone = a!.app.prisma.$queryRaw`SELECT pg_sleep(3)`;
    await expect(alone).rejects.toThrow(/statement timeout|57014/);
    const inTx = a!.app.prisma.$transaction(async (tx) => tx.$queryRaw`SELECT pg_sleep(3)`, { timeout: 10_000 });
    await expect(inTx).rejects.toThrow(/statement timeout|57014/);
    // A plain client of the same pooler sees the server's default: nothing leaked onto a server connection.
    const plain = new pg.Client({ connectionString: pooledUrl });
    await plain.connect();
    try {
      for (let i = 0; i < 10; i++) expect((await plain.query('SHOW statement_timeout')).rows[0].statement_timeout).toBe('0');
    } finally {
      await plain.end();
    }
  });

  it('a token revoked in plain SQL is refused by the other gateway within a second', async () => {
    const { token, apiToken } = await createToken('pooled');
    // Both gateways have it cached (their LISTEN connections are direct, so they hear notices).
    expect((await me(a!.url, token)).status).toBe(200);
    expect((await me(b!.url, token)).status).toBe(200);
    expect(b!.app.tokens?.serving).toBe(true);
    await a!.app.prisma.$executeRaw`UPDATE "ApiToken" SET "revokedAt" = now() WHERE "id" = ${apiToken.id}`;
    const refused = await eventually(() => me(b!.url, token), (r) => r.status === 401, 1000);
    expect(refused.status).toBe(401);
    expect((await me(a!.url, ADMIN_TOKEN)).status).toBe(200);
  });

  it('the rate limit is shared by both gateways (unnamed statements through the pooler)', async () => {
    const { token } = await createToken('limited');
    let served = 0;
    for (let i = 0; i < 300; i++) {
      const r = await me(a!.url, token);
      if (r.status === 429) break;
      expect(r.status).toBe(200);
      served++;
    }
    expect(served).toBeGreaterThan(0);
    expect(served).toBeLessThan(300);
    // The other gateway has never seen this token: it refuses it from the shared counters.
    expect((await me(b!.url, token)).status).toBe(429);
  });

  it('jobs run (the worker on the direct URL, the job enqueued through the pooler)', async () => {
    const old = new Date(Date.now() - 1000 * 24 * 60 * 60 * 1000);
    const org = a!.app.bootstrap!.org.id;
    await a!.app.prisma.$executeRaw`INSERT INTO "Event" (id, type, "occurredAt", "organizationId", source, "objectType", "objectId") VALUES ('ev_pooler_old', 'space_created', ${old}, ${org}, 'graphql', 'space', 'space_x')`;
    await a!.app.prisma.$transaction((tx) => a!.app.jobs.enqueue(tx, 'purgeOldEvents', {}));
    const left = await eventually(
      () => a!.app.prisma.$queryRaw<Array<{ n: bigint }>>`SELECT count(*) AS n FROM "Event" WHERE id = 'ev_pooler_old'`,
      (rows) => Number(rows[0].n) === 0,
      20_000,
    );
    expect(Number(left[0].n)).toBe(0);
  });

  it('/readyz answers on its own connection while the request pool is exhausted', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    // Five transactions hold the gateway's five pooled connections.
    const held = Array.from({ length: 5 }, () =>
      b!.app.prisma.$transaction(async (tx) => {
        await tx.$queryRaw`SELECT 1`;
        await gate;
      }, { timeout: 30_000, maxWait: 30_000 }),
    );
    await new Promise((r) => setTimeout(r, 300));
    let queuedDone = false;
    const queued = b!.app.prisma.$queryRaw`SELECT 1`.finally(() => (queuedDone = true));
    try {
      const r = await fetch(`${b!.url}/readyz`);
      expect(r.status).toBe(200);
      // The pool was still exhausted when /readyz answered.
      expect(queuedDone).toBe(false);
    } finally {
      release();
      await Promise.all(held);
      await queued;
    }
  });

  it('/readyz reports unready once PostgreSQL is stopped', async () => {
    await own!.stop();
    const r = await eventually(() => fetch(`${b!.url}/readyz`), (res) => res.status === 503, 5000);
    expect(r.status).toBe(503);
    expect(r.headers.get('retry-after')).toBeTruthy();
  });
});
