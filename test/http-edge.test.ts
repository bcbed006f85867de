// The HTTP edge against hostile clients: slow or stalled uploads cannot hold the shared
// body budget (a token is checked before a body is read, each client holds at most its share, a
// body must arrive in time and at a minimum rate), an early 413 reaches the client instead of a
// reset, rate limits count a user's tokens together and limit how fast tokens are minted,
// introspection is charged to the client, each 503 names its cause, and a bad e-mail domain is a
// 400 like every other bad input.
import net from 'node:net';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.ts';
import { issueToken } from '../src/auth/tokens.ts';
import { DATABASE_UNAVAILABLE_MESSAGE, serviceUnavailable } from '../src/lib/errors.ts';
import { toPublicError } from '../src/lib/errors.ts';
import { INTROSPECTION_COST } from '../src/http/rate-limit.ts';
import { startTestApp, type TestApp } from './helpers.ts';

const DEFAULTS = loadConfig({});
const MiB = 1024 * 1024;
/** Small enough for a test to wait for, large enough for a loaded CI to send 4 MiB within. */
const BODIES = { clientBudgetBytes: 4 * MiB, timeoutMs: 6_000, minBytesPerSecond: 1024, rateWindowMs: 1_500 };
const POINTS = 10;
const ANONYMOUS_POINTS = 2 * INTROSPECTION_COST + 5;
const TOKENS_PER_HOUR = 3;

let t: TestApp;
let port: number;

beforeAll(async () => {
  t = await startTestApp({
    config: {
      // Default body limits (4 MiB each, 8 MiB at once), a short deadline; behind one trusted proxy,
      // so X-Forwarded-For tells the test's clients apart.
      bodies: BODIES,
      rateLimit: { ...DEFAULTS.rateLimit, points: POINTS, anonymousPoints: ANONYMOUS_POINTS, trustProxy: 1 },
      apiTokensPerHour: TOKENS_PER_HOUR,
    },
  });
  port = Number(new URL(t.baseUrl).port);
});
afterAll(() => t?.close());

const budget = () => (t.app.server as unknown as { bodyBudget: { held(client?: string): number } }).bodyBudget;

type RawExchange = {
  socket: net.Socket;
  /** Everything the server sent, once the connection is closed. */
  done: Promise<{ text: string; error?: NodeJS.ErrnoException }>;
  /** Resolves as soon as a status line has arrived. */
  status: Promise<number>;
};

/** A request written byte for byte on a socket; the body is the caller's to write (or not). */
function rawRequest(method: string, path: string, headers: Record<string, string | number>): RawExchange {
  const socket = net.connect(port, '127.0.0.1');
  socket.write(`${method} ${path} HTTP/1.1\r\nHost: localhost\r\n${Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('')}\r\n`);
  const parts: Buffer[] = [];
  let error: NodeJS.ErrnoException | undefined;
  let onStatus: (n: number) => void;
  const status = new Promise<number>((resolve) => (onStatus = resolve));
  socket.on('data', (c) => {
    parts.push(c);
    const m = /^HTTP\/1\.1 (\d{3})/.exec(Buffer.concat(parts).toString('latin1'));
    if (m) onStatus(Number(m[1]));
  });
  socket.on('error', (e) => (error ??= e));
  const done = new Promise<{ text: string; error?: NodeJS.ErrnoException }>((resolve) => socket.on('close', () => resolve({ text: Buffer.concat(parts).toString('utf8'), error })));
  return { socket, done, status };
}

/** The JSON body of a raw HTTP/1.1 answer (Content-Length framed). */
function bodyOf(text: string) {
  return JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4));
}

const json = (body: unknown) => Buffer.from(JSON.stringify(body));
const ip = (n: number) => `198.51.100.${n}`;

async function until(condition: () => boolean, what: string, ms = 10_000) {
  const end = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function post(path: string, body: unknown, token: string | null, from: string, method = 'POST') {
  const res = await fetch(`${t.baseUrl}${path}`, {
    method,
    headers: { 'content-type': 'application/json', 'x-forwarded-for': from, ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as any };
}

describe('request bodies', () => {
  it('two stalled 4 MiB uploads to /graphql: other clients’ GraphQL POSTs and REST writes succeed, and the uploads are cut', async () => {
    const attacker = await t.createUser('read');
    const victim = await t.createUser('admin');
    const stalled = [0, 1].map(() => {
      const x = rawRequest('POST', '/graphql', { authorization: `Bearer ${attacker.token}`, 'content-type': 'application/json', 'content-length': 4 * MiB, 'x-forwarded-for': ip(7) });
      // All of the body but its last byte, then nothing.
      x.socket.write(Buffer.alloc(4 * MiB - 1, 0x20));
      return x;
    });
    const startedAt = Date.now();
    // The attacker holds its share of the budget (one body), not the whole of it.
    await until(() => budget().held(ip(7)) >= 4 * MiB - 1, 'the stalled bodies to arrive');
    expect(budget().held(ip(7))).toBeLessThanOrEqual(BODIES.clientBudgetBytes);

    // Meanwhile another client writes, by GraphQL and by REST.
    const gql = await post('/graphql', { query: 'mutation($t: String!) { createOrganization(input: { title: $t }) { id } }', variables: { t: 'Written meanwhile' } }, victim.token, ip(8));
    expect(gql.status).toBe(200);
    expect(gql.body.data.createOrganization.id).toMatch(/^org_/);
    const rest = await post(`/v1/orgs/${t.org.id}`, { title: 'Renamed meanwhile' }, victim.token, ip(8), 'PATCH');
    expect(rest.status).toBe(200);
    expect(rest.body.title).toBe('Renamed meanwhile');

    // The stalled uploads are answered (408 for the one holding bytes, 503 for the one over its
    // client's share) and their connections closed, well before node's 5-minute request timeout.
    const answers = await Promise.all(stalled.map((x) => x.done));
    expect(Date.now() - startedAt).toBeLessThan(BODIES.timeoutMs + 30_000);
    const statuses = answers.map((a) => Number(/^HTTP\/1\.1 (\d{3})/.exec(a.text)?.[1])).sort();
    expect(statuses).toEqual([408, 503]);
    const cut = answers.find((a) => a.text.startsWith('HTTP/1.1 408'))!;
    expect(bodyOf(cut.text)).toEqual({ error: { code: 408, message: expect.stringMatching(/too slow/) } });
    expect(budget().held(ip(7))).toBe(0);
    expect(budget().held()).toBe(0);
  });

  it('a body trickling above the minimum rate but never ending is cut at the deadline with a 408', async () => {
    const u = await t.createUser('read');
    const x = rawRequest('POST', '/graphql', { authorization: `Bearer ${u.token}`, 'content-type': 'application/json', 'content-length': 1 * MiB, 'x-forwarded-for': ip(9) });
    // 2 kB every 100 ms: 20 kB/s, well above the 1 kB/s minimum, 1 MiB would take 50 s.
    const trickle = setInterval(() => x.socket.writable && x.socket.write(Buffer.alloc(2048, 0x20)), 100);
    try {
      const { text } = await x.done;
      expect(text).toMatch(/^HTTP\/1\.1 408/);
      expect(bodyOf(text).error.message).toContain(`within ${BODIES.timeoutMs} ms`);
    } finally {
      clearInterval(trickle);
    }
    expect(budget().held()).toBe(0);
  });

  it('a missing or invalid token is a 401 before any byte of the body is read (GraphQL and REST)', async () => {
    const cases = [
      rawRequest('POST', '/graphql', { 'content-type': 'application/json', 'content-length': 4 * MiB, 'x-forwarded-for': ip(10) }),
      rawRequest('POST', '/graphql', { authorization: 'Bearer dg_not_a_token', 'content-type': 'application/json', 'content-length': 4 * MiB, 'x-forwarded-for': ip(10) }),
      rawRequest('PATCH', `/v1/orgs/${t.org.id}`, { 'content-type': 'application/json', 'content-length': 4 * MiB, 'x-forwarded-for': ip(10) }),
      rawRequest('PATCH', `/v1/orgs/${t.org.id}`, { authorization: 'Bearer dg_not_a_token', 'content-type': 'application/json', 'content-length': 4 * MiB, 'x-forwarded-for': ip(10) }),
    ];
    // Not a byte of the declared 4 MiB is sent: the answer cannot wait for it.
    expect(await Promise.all(cases.map((x) => x.status))).toEqual([401, 401, 401, 401]);
    expect(budget().held(ip(10))).toBe(0);
    const graphql = bodyOf((await cases[0].done).text);
    expect(graphql.errors[0].extensions.code).toBe('UNAUTHENTICATED');
    expect(bodyOf((await cases[2].done).text)).toEqual({ error: { code: 401, message: expect.stringMatching(/token/) } });
    // Without a token, a small body is still read: introspection needs none (GraphiQL's Docs pane).
    const intro = await post('/graphql', { query: '{ __schema { queryType { name } } }' }, null, ip(11));
    expect(intro.status).toBe(200);
    expect(intro.body.data.__schema.queryType.name).toBe('Query');
  });

  it('a body declared above 16 MiB: the client reads the 413 and its body, not a reset (lingering close)', async () => {
    const u = await t.createUser('read');
    const x = rawRequest('POST', '/graphql', { authorization: `Bearer ${u.token}`, 'content-type': 'application/json', 'content-length': 17 * MiB, 'x-forwarded-for': ip(12) });
    // Keep sending as a client uploading a file does, while the answer comes back.
    let sent = 0;
    const chunk = Buffer.alloc(256 * 1024, 0x20);
    while (sent < 8 * MiB && !x.socket.destroyed) {
      if (!x.socket.write(chunk)) await new Promise((r) => (x.socket.once('drain', r), x.socket.once('close', r)));
      sent += chunk.length;
    }
    x.socket.end();
    const { text, error } = await x.done;
    expect(error?.code).toBeUndefined();
    expect(text).toMatch(/^HTTP\/1\.1 413 /);
    expect(text.toLowerCase()).toContain('connection: close');
    expect(bodyOf(text)).toEqual({ error: { code: 413, message: expect.stringMatching(/too large/) } });
  });
});

describe('rate limits per user and per address', () => {
  it('five tokens of one user share one budget: the requests beyond it are 429, whichever token sends them', async () => {
    const u = await t.createUser('read');
    const tokens = [u.token];
    for (let i = 0; i < 4; i++) tokens.push((await issueToken(t.app.prisma, u.user.id, `extra ${i}`)).token);
    const statuses: number[] = [];
    for (let i = 0; i < POINTS + 5; i++) {
      const res = await fetch(`${t.baseUrl}/v1/user`, { headers: { authorization: `Bearer ${tokens[i % tokens.length]}` } });
      statuses.push(res.status);
      await res.arrayBuffer();
    }
    expect(statuses).toEqual([...Array(POINTS).fill(200), ...Array(5).fill(429)]);
    // Another user is not affected.
    const other = await t.createUser('read');
    expect((await fetch(`${t.baseUrl}/v1/user`, { headers: { authorization: `Bearer ${other.token}` } })).status).toBe(200);
  });

  it('token creation is limited per user: beyond API_TOKENS_PER_HOUR a 429 RATE_LIMITED, nothing created; an hour later it works again', async () => {
    const u = await t.createUser('read');
    const MINT = 'mutation($l: String!) { createApiToken(input: { label: $l }) { token apiToken { id } } }';
    const count = () => t.app.prisma.apiToken.count({ where: { userId: u.user.id } });
    // The token the user was created with counts: it was created this hour.
    const minted: string[] = [];
    for (let i = 0; i < TOKENS_PER_HOUR - 1; i++) {
      const r = await post('/graphql', { query: MINT, variables: { l: `minted ${i}` } }, u.token, ip(20));
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(r.body.data.createApiToken.token).toMatch(/^dg_/);
      minted.push(r.body.data.createApiToken.token);
    }
    expect(await count()).toBe(TOKENS_PER_HOUR);
    // A freshly minted token of the same user is no way around it.
    const over = await post('/graphql', { query: MINT, variables: { l: 'one too many' } }, minted[0], ip(20));
    expect(over.status).toBe(429);
    expect(over.body.errors.map((e: any) => e.extensions.code)).toEqual(['RATE_LIMITED']);
    expect(over.body.errors[0].message).toMatch(/per hour/);
    const retryAfter = Number(over.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(3000);
    expect(retryAfter).toBeLessThanOrEqual(3600);
    expect(await count()).toBe(TOKENS_PER_HOUR);

    t.clock.advance(61 * 60 * 1000);
    const later = await post('/graphql', { query: MINT, variables: { l: 'next hour' } }, u.token, ip(20));
    expect(later.status).toBe(200);
    expect(await count()).toBe(TOKENS_PER_HOUR + 1);
  });

  it('introspection without a token is charged to the client address: beyond its budget a 429', async () => {
    const INTROSPECTION = '{ __schema { types { name fields { name } } } }';
    const statuses: number[] = [];
    const remaining: number[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await post('/graphql', { query: INTROSPECTION }, null, ip(30));
      statuses.push(r.status);
      remaining.push(Number(r.headers.get('x-ratelimit-remaining')));
    }
    expect(statuses).toEqual([200, 200, 429]);
    expect(remaining).toEqual([ANONYMOUS_POINTS - INTROSPECTION_COST, ANONYMOUS_POINTS - 2 * INTROSPECTION_COST, 0]);
    // By GET as well, the same address's budget.
    const get = await fetch(`${t.baseUrl}/graphql?query=${encodeURIComponent(INTROSPECTION)}`, { headers: { accept: 'application/json', 'x-forwarded-for': ip(30) } });
    expect(get.status).toBe(429);
    // And every other anonymous request of that address: SSO's endpoints too.
    expect((await fetch(`${t.baseUrl}/sso/saml/nothing/metadata`, { headers: { 'x-forwarded-for': ip(30) } })).status).toBe(429);
    // Another address has its own.
    expect((await post('/graphql', { query: INTROSPECTION }, null, ip(31))).status).toBe(200);
  });
});

describe('503s name their cause', () => {
  const log = pino({ level: 'silent' });
  it('a cap or a shutdown keeps its own message; only a database failure says the database is unavailable', () => {
    const cap = toPublicError(serviceUnavailable('This server holds its maximum of 3 subscriptions; retry in a few seconds'), log, 'test');
    expect(cap).toMatchObject({ kind: 'unavailable', status: 503, message: expect.stringMatching(/maximum of 3 subscriptions/) });
    const db = toPublicError(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }), log, 'test');
    expect(db).toMatchObject({ kind: 'unavailable', status: 503, message: DATABASE_UNAVAILABLE_MESSAGE });
    expect(serviceUnavailable().message).toBe(DATABASE_UNAVAILABLE_MESSAGE);
  });
});

describe('e-mail domains', () => {
  it('a domain of 254 characters, or with characters no domain has, is a 400 naming emailDomain, like any bad input', async () => {
    const u = await t.createUser('read');
    for (const domain of [`${'a'.repeat(250)}.com`, 'bad_domain.com', 'spaces%20in.com']) {
      const res = await fetch(`${t.baseUrl}/v1/email-domains/${domain}/orgs`, { headers: { authorization: `Bearer ${u.token}` } });
      expect(res.status, domain).toBe(400);
      expect(((await res.json()) as any).error.message, domain).toMatch(/^emailDomain: /);
    }
    const fine = await fetch(`${t.baseUrl}/v1/email-domains/${'a'.repeat(249)}.com/orgs`, { headers: { authorization: `Bearer ${u.token}` } });
    expect(fine.status).toBe(200);
  });
});
