// Rate limits with RATE_LIMIT_REDIS_URL (src/http/rate-limit.ts): the counters live in a real
// redis-server this file starts, shared by two gateway processes; nothing is written to
// PostgreSQL; Redis frozen (SIGSTOP) or down (killed) fails open like the database store does
// (counted per process, never a 5xx) and answers promptly; Redis back, the counters are shared again.
// redis-server must be installed (Debian: `apt-get install redis-server`): without it this file fails.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import pino from 'pino';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, type RateLimitConfig } from '../src/config.ts';
import { RATE_LIMIT_REDIS_PREFIX, RATE_LIMIT_TABLE, RateLimits } from '../src/http/rate-limit.ts';
import { issueToken } from '../src/auth/tokens.ts';
import { startSecondApp, startTestApp, type TestApp } from './helpers.ts';
import { VIEWER, expect429, expectConcurrentCountedExactly, expectFailsOpenInMemory, limitOf, send as sendRequest, sendInTurn, type Sent } from './fixtures/rate-limits.ts';

const DEFAULTS = loadConfig({}).rateLimit;
/** Generous bound on any one answer: a frozen Redis must not hold a request (the store times out after 1 s). */
const ANSWER_BOUND_MS = 10_000;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}

/** A throwaway redis-server on `port` (no persistence); resolves once it answers PING. */
async function startRedis(port: number): Promise<ChildProcess> {
  const found = spawnSync('redis-server', ['--version']);
  if (found.error) throw new Error(`redis-server is not installed (Debian package: redis-server): ${found.error.message}`);
  const proc = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  const probe = new Redis({ port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  probe.on('error', () => {});
  try {
    for (let i = 0; ; i++) {
      try {
        await probe.connect();
        if ((await probe.ping()) === 'PONG') return proc;
      } catch (err) {
        if (i >= 100 || proc.exitCode !== null) throw new Error(`redis-server did not start on port ${port}: ${String(err)}`);
        probe.disconnect();
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  } finally {
    probe.disconnect();
  }
}

function stopRedis(proc: ChildProcess | undefined) {
  if (!proc || proc.exitCode !== null || proc.signalCode !== null) return Promise.resolve();
  return new Promise<void>((resolve) => {
    proc.once('exit', () => resolve());
    proc.kill('SIGCONT');
    proc.kill('SIGKILL');
  });
}

let port: number;
let redisProc: ChildProcess | undefined;
let redisUrl: string;
let redis: Redis; // the test's own view of the counters
let SMALL: RateLimitConfig;
let a: TestApp;
let b: Awaited<ReturnType<typeof startSecondApp>>;
const logs: Array<{ level: number; msg: string }> = [];

beforeAll(async () => {
  port = await freePort();
  redisProc = await startRedis(port);
  redisUrl = `redis://127.0.0.1:${port}`;
  redis = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
  redis.on('error', () => {});
  SMALL = { ...DEFAULTS, points: 5, anonymousPoints: 3, windowSeconds: 60, trustProxy: 1, redisUrl };
  const log = pino({ level: 'warn' }, { write: (line: string) => void logs.push(JSON.parse(line)) });
  a = await startTestApp({ config: { rateLimit: SMALL }, log });
  b = await startSecondApp(a); // inherits A's config: the same Redis
});
afterAll(async () => {
  await b?.close();
  await a?.close();
  redis?.disconnect();
  await stopRedis(redisProc);
});

// A request held by a frozen store fails the test instead of hanging it.
const bounded = { timeoutMs: ANSWER_BOUND_MS };
const send = (base: string, path: string, opts: Parameters<typeof sendRequest>[2] = {}) => sendRequest(base, path, { ...opts, ...bounded });
const gql = (base: string, query: string, token: string | null) => send(base, '/graphql', { token, body: { query } });

const expectRest429 = (r: Sent) => expect429(r, SMALL.windowSeconds);

/** Counter rows in PostgreSQL, and connections the limiter opened there. */
async function postgresUse() {
  const { schemaName, tableName } = RATE_LIMIT_TABLE;
  const [rows] = await a.app.prisma.$queryRawUnsafe<Array<{ n: bigint }>>(`SELECT count(*) AS n FROM "${schemaName}"."${tableName}"`);
  const [conns] = await a.app.prisma.$queryRawUnsafe<Array<{ n: bigint }>>(
    `SELECT count(*) AS n FROM pg_stat_activity WHERE application_name = 'docgraph-ratelimit' AND datname = current_database()`,
  );
  return { rows: Number(rows.n), connections: Number(conns.n) };
}

/** True when a fresh user's budget is shared by A and B again (the store is Redis, not per-process memory). */
async function sharedAgain(): Promise<boolean> {
  const u = await a.createUser('read');
  const statuses = await sendInTurn([a.baseUrl, b.baseUrl], [u.token], SMALL.points + 1, bounded);
  return statuses[SMALL.points] === 429;
}

async function waitUntilShared() {
  const until = Date.now() + 30_000;
  while (!(await sharedAgain())) {
    if (Date.now() > until) throw new Error('the counters did not come back to Redis');
    await new Promise((r) => setTimeout(r, 500));
  }
}

describe('configuration', () => {
  it('RATE_LIMIT_REDIS_URL is optional and must be a redis:// or rediss:// URL', () => {
    expect(loadConfig({}).rateLimit.redisUrl).toBeUndefined();
    expect(loadConfig({ RATE_LIMIT_REDIS_URL: 'rediss://user:pw@cache.example:6380/2' }).rateLimit.redisUrl).toBe('rediss://user:pw@cache.example:6380/2');
    expect(() => loadConfig({ RATE_LIMIT_REDIS_URL: 'http://cache.example' })).toThrow(/RATE_LIMIT_REDIS_URL/);
    expect(() => loadConfig({ RATE_LIMIT_REDIS_URL: 'not a url' })).toThrow(/RATE_LIMIT_REDIS_URL/);
  });
});

describe('counters in Redis, shared by two gateways', () => {
  it('a token exhausted on A is refused by B with 429, Retry-After and the headers; REST and GraphQL', async () => {
    const u = await a.createUser('read');
    for (let i = 0; i < SMALL.points; i++) {
      const r = await send(a.baseUrl, '/v1/user', { token: u.token });
      expect(r.status).toBe(200);
      expect(limitOf(r)).toMatchObject({ limit: SMALL.points, remaining: SMALL.points - 1 - i });
      const now = Date.now() / 1000;
      expect(limitOf(r).reset).toBeGreaterThanOrEqual(Math.floor(now));
      expect(limitOf(r).reset).toBeLessThanOrEqual(Math.ceil(now) + SMALL.windowSeconds + 1);
    }
    expectRest429(await send(b.baseUrl, '/v1/user', { token: u.token }));
    const over = await gql(b.baseUrl, VIEWER, u.token);
    expect(over.status).toBe(429);
    expect(over.body.errors.map((e: any) => e.extensions?.code)).toEqual(['RATE_LIMITED']);
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    // A itself refuses too; another user is unaffected.
    expectRest429(await send(a.baseUrl, '/v1/user', { token: u.token }));
    expect((await send(b.baseUrl, '/v1/user', { token: (await a.createUser('read')).token })).status).toBe(200);

    // The counter is a Redis key for the user, expiring with the window.
    const key = `${RATE_LIMIT_REDIS_PREFIX}usr:${u.user.id}`;
    expect(Number(await redis.get(key))).toBeGreaterThan(SMALL.points);
    const ttl = await redis.pttl(key);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(SMALL.windowSeconds * 1000);
  });

  it('all tokens of a user share one budget across the gateways', async () => {
    const u = await a.createUser('read');
    const second = (await issueToken(a.app.prisma, u.user.id, 'second')).token;
    expect(await sendInTurn([a.baseUrl, b.baseUrl], [u.token, second], SMALL.points + 1, bounded)).toEqual([...Array(SMALL.points).fill(200), 429]);
  });

  it('concurrent requests on both gateways are counted exactly: the limit lets through that many', async () => {
    const u = await a.createUser('read');
    await expectConcurrentCountedExactly([a.baseUrl, b.baseUrl], u.token, SMALL, bounded);
  });

  it('requests without a valid token are counted per client IP, shared too; another IP is unaffected', async () => {
    const ip = (n: number) => ({ 'x-forwarded-for': `203.0.113.${n}` });
    const statuses: number[] = [];
    for (let i = 0; i < SMALL.anonymousPoints; i++) statuses.push((await send(a.baseUrl, '/v1/user', { headers: ip(7) })).status);
    expect(statuses).toEqual(Array(SMALL.anonymousPoints).fill(401));
    // An invalid token counts against the address as well.
    expectRest429(await send(b.baseUrl, '/v1/user', { token: 'gb_api_not_a_token', headers: ip(7) }));
    const other = await send(b.baseUrl, '/v1/user', { headers: ip(8) });
    expect(other.status).toBe(401);
    expect(limitOf(other)).toMatchObject({ limit: SMALL.anonymousPoints, remaining: SMALL.anonymousPoints - 1 });
    expect(await redis.exists(`${RATE_LIMIT_REDIS_PREFIX}ip:203.0.113.7`)).toBe(1);
  });

  it('PostgreSQL holds no counter and no limiter connection', async () => {
    expect(await postgresUse()).toEqual({ rows: 0, connections: 0 });
  });
});

describe('Redis unavailable: fails open, like the database store', () => {
  it('frozen (SIGSTOP): every request is answered (no 5xx), counted per process, with one warning; shared again once it thaws', async () => {
    const u = await a.createUser('read');
    redisProc!.kill('SIGSTOP');
    try {
      const onA: Sent[] = [];
      for (let i = 0; i < SMALL.points + 1; i++) onA.push(await send(a.baseUrl, '/v1/user', { token: u.token }));
      // Counted in A's memory: its own budget, then 429 as usual.
      expect(onA.map((r) => r.status)).toEqual([...Array(SMALL.points).fill(200), 429]);
      expectRest429(onA[SMALL.points]);
      // B has counted nothing for this user: its requests are served, GraphQL included.
      expect((await send(b.baseUrl, '/v1/user', { token: u.token })).status).toBe(200);
      const q = await gql(b.baseUrl, VIEWER, u.token);
      expect(q.status).toBe(200);
      expect(q.body.data.viewer.user.id).toBe(u.user.id);
      // Anonymous reads are served too.
      expect((await send(a.baseUrl, '/v1/user', { headers: { 'x-forwarded-for': '198.51.100.1' } })).status).toBe(401);
    } finally {
      redisProc!.kill('SIGCONT');
    }
    expect(logs.filter((l) => /rate-limit counters unavailable.*Redis/.test(l.msg)).map((l) => l.level)).toEqual([40]);
    await waitUntilShared();
  });

  it('down (killed): every request is answered (no 5xx), counted per process; shared again once it is back', async () => {
    await stopRedis(redisProc);
    redisProc = undefined;
    const u = await a.createUser('read');
    const statuses: number[] = [];
    for (let i = 0; i < SMALL.points + 1; i++) statuses.push((await send(a.baseUrl, '/v1/user', { token: u.token })).status);
    expect(statuses).toEqual([...Array(SMALL.points).fill(200), 429]);
    const onB = await Promise.all([send(b.baseUrl, '/v1/user', { token: u.token }), gql(b.baseUrl, VIEWER, u.token), send(b.baseUrl, '/v1/orgs', { headers: { 'x-forwarded-for': '198.51.100.2' } })]);
    for (const r of onB) expect(r.status === 503 || r.status < 500, `${r.status}`).toBe(true);
    expect(onB.map((r) => r.status)).toEqual([200, 200, 401]);

    // Back on the same port (empty: no persistence): both gateways reconnect and share again.
    redisProc = await startRedis(port);
    await waitUntilShared();
    expect(await postgresUse()).toEqual({ rows: 0, connections: 0 });
  });

  it('never reachable (unit): charges are counted in memory with one warning', async () => {
    const seen: Array<{ level: number; msg: string }> = [];
    const log = pino({ level: 'warn' }, { write: (line: string) => void seen.push(JSON.parse(line)) });
    const limits = new RateLimits({ ...SMALL, points: 3, redisUrl: `redis://127.0.0.1:${await freePort()}` }, 'postgres://unused@127.0.0.1:1/none', log);
    try {
      const charges = await expectFailsOpenInMemory(limits, seen);
      expect(charges[3].retryAfter).toBeGreaterThanOrEqual(1);
    } finally {
      await limits.close();
    }
  });
});
