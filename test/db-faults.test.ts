// Database faults: the gateway on its own PostgreSQL (a second embedded server, so stopping and
// freezing it leaves the suite's shared server alone), with the default timeouts. A stopped,
// frozen or too slow database is a 503 with Retry-After on both APIs, /readyz answers promptly,
// and the gateway recovers by itself once the database is back.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import pino from 'pino';
import { runMigrations } from 'graphile-worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbeddedPostgres, ensureDatabase, type EmbeddedDatabase } from '../src/db/embedded.ts';
import { migrate } from '../src/db/migrate.ts';
import { loadConfig } from '../src/config.ts';
import { createApp, type App } from '../src/app.ts';
import { isDatabaseUnavailable } from '../src/lib/errors.ts';
import { ADMIN_TOKEN } from './helpers.ts';
import { freePort } from './global-setup.ts';


let tmpDir: string;
let dataDir: string;
let embedded: EmbeddedDatabase | undefined;
let running = false;
let frozen: number[] = [];
let locker: pg.Client | undefined;
let app: App;
let baseUrl: string;
let databaseUrl: string;
const logs: Array<{ level: number; msg: string }> = [];

beforeAll(async () => {
  tmpDir = fs.mkdtempSync(path.join(os.tmpdir(), 'docgraph-faults-pg-'));
  fs.chmodSync(tmpDir, 0o777);
  dataDir = path.join(tmpDir, 'data');
  embedded = await startEmbeddedPostgres({ dataDir, port: await freePort() });
  running = true;
  await ensureDatabase(embedded.url('postgres'), 'docgraph');
  databaseUrl = embedded.url('docgraph');
  await migrate(databaseUrl);
  await runMigrations({ connectionString: databaseUrl, logger: undefined });

  const filesDir = path.join(tmpDir, 'files');
  const config = { ...loadConfig({ DOCGRAPH_ADMIN_TOKEN: ADMIN_TOKEN, LOG_LEVEL: 'warn' }), filesDir };
  const log = pino({ level: 'warn' }, { write: (line: string) => void logs.push(JSON.parse(line)) });
  // The worker runs too: its queue pool and its own Prisma pool must live through the outage.
  app = await createApp({ config, databaseUrl, log, worker: true, poolSize: 5 });
  baseUrl = `http://127.0.0.1:${await app.listen(0, '127.0.0.1')}`;
});

afterAll(async () => {
  // Whatever happened: thaw, release the lock, restart if needed, close the app (bounded: a
  // failed run may leave requests hanging), stop the server.
  thaw();
  await locker?.end().catch(() => {});
  if (embedded && !running) await embedded.pg.start().then(() => (running = true)).catch(() => {});
  await Promise.race([app?.close().catch(() => {}), new Promise((r) => setTimeout(r, 15_000))]);
  await embedded?.stop().catch(() => {});
  if (tmpDir) fs.rmSync(tmpDir, { recursive: true, force: true });
}, 60_000);

/** A request that hangs fails the test (and lets its `finally` thaw) instead of timing it out. */
const HANG = () => AbortSignal.timeout(20_000);

/** The postmaster and every backend, stopped with SIGSTOP (as a hung host or disk would). */
function freeze() {
  const postmaster = Number(fs.readFileSync(path.join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  const children = execFileSync('pgrep', ['-P', String(postmaster)], { encoding: 'utf8' }).split('\n').filter(Boolean).map(Number);
  frozen = [postmaster, ...children];
  for (const pid of frozen) process.kill(pid, 'SIGSTOP');
}

function thaw() {
  for (const pid of frozen) {
    try {
      process.kill(pid, 'SIGCONT');
    } catch {
      /* already gone */
    }
  }
  frozen = [];
}

async function timed<T>(fn: () => Promise<T>): Promise<T & { ms: number }> {
  const t0 = Date.now();
  const r = await fn();
  return { ...r, ms: Date.now() - t0 };
}

async function rest(method: string, p: string, body?: unknown) {
  return timed(async () => {
    const res = await fetch(`${baseUrl}${p}`, {
      method,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
      signal: HANG(),
    });
    const text = await res.text();
    return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
  });
}

async function gql(query: string, variables: Record<string, unknown> = {}) {
  return timed(async () => {
    const res = await fetch(`${baseUrl}/graphql`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ query, variables }),
      signal: HANG(),
    });
    const json = (await res.json()) as { data?: any; errors?: Array<{ message: string; extensions?: { code?: string } }> };
    return { status: res.status, headers: res.headers, data: json.data, errors: json.errors };
  });
}

async function readyz() {
  return timed(async () => {
    const res = await fetch(`${baseUrl}/readyz`, { signal: HANG() });
    return { status: res.status, headers: res.headers, body: await res.json() };
  });
}

const VIEWER = '{ viewer { user { id } } }';

function expectRetryAfter(headers: Headers) {
  const value = Number(headers.get('retry-after'));
  expect(value).toBeGreaterThanOrEqual(1);
  expect(value).toBeLessThanOrEqual(30);
}

/** The REST contract's error body, and the GraphQL code, for a database outage. */
function expectRest503(r: Awaited<ReturnType<typeof rest>>) {
  expect(r.status).toBe(503);
  expectRetryAfter(r.headers);
  expect(r.body).toEqual({ error: { code: 503, message: expect.stringMatching(/database/i) } });
}

/** `data`: null when nothing ran; a failed nullable lookup is `{ field: null }`, still a 503 since nothing else answered. */
function expectGql503(r: Awaited<ReturnType<typeof gql>>, data: Record<string, null> | null = null) {
  expect(r.status).toBe(503);
  expectRetryAfter(r.headers);
  expect(r.errors?.map((e) => e.extensions?.code)).toEqual(['SERVICE_UNAVAILABLE']);
  expect(r.data ?? null).toEqual(data);
}

/** Nothing about the outage was logged as an unexpected error. */
function expectNoUnexpectedErrorLogs() {
  expect(logs.filter((l) => /unexpected error|unhandled error/.test(l.msg)).map((l) => l.msg)).toEqual([]);
  expect(logs.some((l) => l.msg === 'database unavailable' && l.level === 40)).toBe(true);
}

describe('database faults', () => {
  it('a stopped database: 503 with Retry-After on REST, GraphQL and downloads, /readyz 503; back without restarting the app', async () => {
    const orgs = `/v1/orgs`;
    expect((await rest('GET', orgs)).status).toBe(200);
    expect((await readyz()).status).toBe(200);

    await embedded!.stop();
    running = false;
    try {
      const [list, create, query, file, ready] = await Promise.all([
        rest('GET', orgs),
        rest('POST', `/v1/orgs/${app.bootstrap!.org.id}/spaces`, { title: 'During the outage' }),
        gql(VIEWER),
        rest('GET', '/files/file_missing'),
        readyz(),
      ]);
      expectRest503(list);
      expectRest503(create);
      expectRest503(file);
      expectGql503(query);
      expect(query.errors![0].message).toMatch(/database/i);
      expect(ready.status).toBe(503);
      expect(ready.ms).toBeLessThan(3000); // hang detection: the probe is raced against 800 ms
      expectNoUnexpectedErrorLogs();
    } finally {
      await embedded!.pg.start();
      running = true;
    }

    // The pool reconnects by itself.
    await expect.poll(async () => (await rest('GET', orgs)).status, { timeout: 15_000, interval: 200 }).toBe(200);
    const after = await gql(VIEWER);
    expect(after.status).toBe(200);
    expect(after.data.viewer.user.id).toBe(app.bootstrap!.user.id);
    expect((await readyz()).status).toBe(200);
    // The outage left nothing behind: a write goes through.
    expect((await rest('POST', `/v1/orgs/${app.bootstrap!.org.id}/spaces`, { title: 'After the outage' })).status).toBe(201);
  }, 60_000);

  it('a frozen database (SIGSTOP): requests get 503s instead of hanging, /readyz 503 at once; SIGCONT recovers', async () => {
    expect((await rest('GET', '/v1/orgs')).status).toBe(200);
    freeze();
    try {
      const [list, query, ready] = await Promise.all([rest('GET', '/v1/orgs'), gql(VIEWER), readyz()]);
      expectRest503(list);
      expectGql503(query);
      // Hang detection with a generous bound; the default timeouts answer in about 4 s.
      expect(list.ms).toBeLessThan(10_000);
      expect(query.ms).toBeLessThan(10_000);
      expect(ready.status).toBe(503);
      expect(ready.ms).toBeLessThan(3000);
      // A second wave while still frozen: the pool is not wedged by the first one.
      const again = await rest('GET', '/v1/orgs');
      expectRest503(again);
      expect(again.ms).toBeLessThan(10_000);
    } finally {
      thaw();
    }
    await expect.poll(async () => (await rest('GET', '/v1/orgs')).status, { timeout: 15_000, interval: 200 }).toBe(200);
    expect((await gql(VIEWER)).status).toBe(200);
    expect((await readyz()).status).toBe(200);
  }, 60_000);

  it('a statement stuck behind a lock is cancelled by the statement timeout: 503 on both APIs, then normal again', async () => {
    const created = await rest('POST', `/v1/orgs/${app.bootstrap!.org.id}/spaces`, { title: 'Locked' });
    expect(created.status).toBe(201);
    const spaceId = created.body.id;
    locker = new pg.Client({ connectionString: databaseUrl });
    await locker.connect();
    try {
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE "Space" IN ACCESS EXCLUSIVE MODE');
      // The token lookup does not touch "Space", so these fail inside execution, not before it.
      const [r, q] = await Promise.all([rest('GET', `/v1/spaces/${spaceId}`), gql('query($id: ID!) { space(id: $id) { title } }', { id: spaceId })]);
      expectRest503(r);
      expectGql503(q, { space: null });
      expect(r.ms).toBeLessThan(10_000);
      expect(q.ms).toBeLessThan(10_000);
    } finally {
      await locker.query('ROLLBACK').catch(() => {});
      await locker.end();
      locker = undefined;
    }
    const r = await rest('GET', `/v1/spaces/${spaceId}`);
    expect(r.status).toBe(200);
    expect(r.body.title).toBe('Locked');
  }, 60_000);

  it('classifies the real driver errors of an outage, and nothing else', async () => {
    const errorOf = (p: Promise<unknown>) => p.then(() => undefined, (e: unknown) => e);
    const freshPool = async () => {
      // A client on the main pool reuses warm connections; ask a new Prisma client for a cold one too.
      const { createPrisma } = await import('../src/db/client.ts');
      return createPrisma(databaseUrl, { poolSize: 1, timeouts: { statementTimeoutMs: 500, connectTimeoutMs: 500 } }).prisma;
    };
    const cold = await freshPool();
    try {
      // Not outages: a constraint violation, a syntax error, a missing row.
      expect(isDatabaseUnavailable(await errorOf(cold.$executeRawUnsafe('SELECT FROM nowhere_at_all')))).toBe(false);
      expect(isDatabaseUnavailable(await errorOf(cold.space.update({ where: { id: 'space_missing' }, data: { title: 'x' } })))).toBe(false);
      // The statement timeout (57014).
      const slow = await errorOf(cold.$queryRaw`SELECT pg_sleep(2)::text`);
      expect(slow).toBeDefined();
      expect(isDatabaseUnavailable(slow)).toBe(true);
      // A frozen server: the client's read timeout on the warm connection, then the connect timeout.
      await cold.$queryRaw`SELECT 1`;
      freeze();
      try {
        const read = await errorOf(cold.$queryRaw`SELECT 1`);
        const connect = await errorOf(cold.space.findFirst());
        expect([read, connect].map((e) => isDatabaseUnavailable(e))).toEqual([true, true]);
      } finally {
        thaw();
      }
    } finally {
      await cold.$disconnect();
    }
  }, 60_000);
});
