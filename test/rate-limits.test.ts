// Rate limits (src/http/rate-limit.ts): per user (all of its tokens together), per client IP
// without a valid token, counted in the database so several gateway processes share them;
// X-RateLimit-* headers on every counted response, 429 + Retry-After + the contract's error body
// over the limit; GraphQL costs its complexity; the counters' database unreachable fails open.
import type http from 'node:http';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GitBookAPIError } from '@gitbook/api';
import { complexityFromQuery } from '@pothos/plugin-complexity';
import { loadConfig, type RateLimitConfig } from '../src/config.ts';
import { COMPLEXITY_PER_POINT, INTROSPECTION_COST, RateLimits, clientIp } from '../src/http/rate-limit.ts';
import { schema } from '../src/graphql/schema.ts';
import { startSecondApp, startTestApp, type TestApp } from './helpers.ts';
import { VIEWER, expect429, expectConcurrentCountedExactly, expectFailsOpenInMemory, limitOf, send, sendInTurn, type Sent } from './fixtures/rate-limits.ts';

const DEFAULTS = loadConfig({}).rateLimit;
const SMALL: RateLimitConfig = { ...DEFAULTS, points: 5, anonymousPoints: 3, windowSeconds: 60, trustProxy: 1 };

let t: TestApp; // default limits
let s: TestApp; // small limits, behind one trusted proxy
let s2: Awaited<ReturnType<typeof startSecondApp>>; // a second gateway process on s's database
let s2Url: string;

beforeAll(async () => {
  [t, s] = await Promise.all([startTestApp(), startTestApp({ config: { rateLimit: SMALL } })]);
  s2 = await startSecondApp(s);
  s2Url = s2.baseUrl;
});
afterAll(async () => {
  await s2?.close();
  await Promise.all([t?.close(), s?.close()]);
});

const gql = (base: string, query: string, token: string | null, variables: Record<string, unknown> = {}) => send(base, '/graphql', { token, body: { query, variables } });

/** What a GraphQL document costs: its complexity, 1 point per COMPLEXITY_PER_POINT, at least 1. */
const pointsOf = (query: string) => Math.max(1, Math.ceil(complexityFromQuery(query, { schema }).complexity / COMPLEXITY_PER_POINT));

const expectRest429 = (r: Sent) => expect429(r, SMALL.windowSeconds);

function expectHeaders(r: Sent, limit: number) {
  const h = limitOf(r);
  expect(h.limit, `${r.status} X-RateLimit-Limit`).toBe(limit);
  expect(h.remaining).toBeGreaterThanOrEqual(0);
  expect(h.remaining).toBeLessThanOrEqual(limit);
  // Epoch seconds, within the window from now.
  const now = Date.now() / 1000;
  expect(h.reset).toBeGreaterThanOrEqual(Math.floor(now));
  expect(h.reset).toBeLessThanOrEqual(Math.ceil(now) + DEFAULTS.windowSeconds + 1);
}

describe('rate-limit headers', () => {
  it('REST and GraphQL responses carry the limit, the remaining points (decreasing) and the reset time', async () => {
    const u = await t.createUser('read');
    const a = await send(t.baseUrl, '/v1/user', { token: u.token });
    const b = await send(t.baseUrl, '/v1/user', { token: u.token });
    expect([a.status, b.status]).toEqual([200, 200]);
    expectHeaders(a, DEFAULTS.points);
    expectHeaders(b, DEFAULTS.points);
    expect(limitOf(a).remaining).toBe(DEFAULTS.points - 1);
    expect(limitOf(b).remaining).toBe(DEFAULTS.points - 2);

    // The same counter for both APIs.
    const q = await gql(t.baseUrl, VIEWER, u.token);
    expect(q.status).toBe(200);
    expectHeaders(q, DEFAULTS.points);
    expect(limitOf(q).remaining).toBe(DEFAULTS.points - 3);
  });

  it('failed requests carry them too: 404, 401, GraphQL request errors and 401', async () => {
    const u = await t.createUser('read');
    const notFound = await send(t.baseUrl, '/v1/no-such-route', { token: u.token });
    expect(notFound.status).toBe(404);
    expectHeaders(notFound, DEFAULTS.points);
    expect(limitOf(notFound).remaining).toBe(DEFAULTS.points - 1);

    // Request errors: 200 with `errors` under application/json (GraphQL over HTTP).
    const badQuery = await gql(t.baseUrl, '{ viewer { ', u.token);
    expect(badQuery.status).toBe(200);
    expect(badQuery.body.errors[0].extensions.code).toBe('BAD_REQUEST');
    expect(limitOf(badQuery).remaining).toBe(DEFAULTS.points - 2);

    const unknownField = await gql(t.baseUrl, '{ viewer { nope } }', u.token);
    expect(unknownField.status).toBe(200);
    expect(limitOf(unknownField).remaining).toBe(DEFAULTS.points - 3);

    // No valid token: the client IP's budget.
    for (const r of [await send(t.baseUrl, '/v1/user'), await send(t.baseUrl, '/v1/user', { token: 'dg_not_a_token' }), await gql(t.baseUrl, VIEWER, null)]) {
      expect(r.status).toBe(401);
      expectHeaders(r, DEFAULTS.anonymousPoints);
    }
  });

  it('health probes, the explorer and its assets are not counted; an introspection-only query costs INTROSPECTION_COST', async () => {
    const u = await t.createUser('read');
    for (const path of ['/healthz', '/readyz', '/']) {
      const r = await send(t.baseUrl, path);
      expect(r.status, path).toBe(200);
      expect(r.headers.get('x-ratelimit-limit'), path).toBeNull();
    }
    const page = await send(t.baseUrl, '/graphql', { headers: { accept: 'text/html' } });
    expect(page.status).toBe(200);
    expect(page.headers.get('x-ratelimit-limit')).toBeNull();
    const asset = String(page.body).match(/\/graphql\/assets\/[^"'?]+/)?.[0];
    expect(asset).toBeDefined();
    const r = await send(t.baseUrl, asset!);
    expect(r.status).toBe(200);
    expect(r.headers.get('x-ratelimit-limit')).toBeNull();
    // Nothing was charged to the user meanwhile.
    expect(limitOf(await send(t.baseUrl, '/v1/user', { token: u.token })).remaining).toBe(DEFAULTS.points - 1);
    // Introspection answers the whole schema: a fixed price, to the user (to the IP without a token).
    const intro = await gql(t.baseUrl, '{ __schema { queryType { name } } }', u.token);
    expect(intro.status).toBe(200);
    expect(limitOf(intro).remaining).toBe(DEFAULTS.points - 1 - INTROSPECTION_COST);
  });
});

describe('GraphQL cost', () => {
  it('a query costs its complexity (1 point per COMPLEXITY_PER_POINT, at least 1): a large page costs more than a trivial query', async () => {
    const u = await t.createUser('read');
    const LARGE = '{ viewer { organizations(first: 1000) { totalCount nodes { id title } } } }';
    const cost = pointsOf(LARGE);
    expect(cost).toBeGreaterThan(1);

    const r1 = limitOf(await gql(t.baseUrl, VIEWER, u.token)).remaining;
    const r2 = limitOf(await gql(t.baseUrl, VIEWER, u.token)).remaining;
    const large = await gql(t.baseUrl, LARGE, u.token);
    expect(large.status).toBe(200);
    const r3 = limitOf(large).remaining;
    expect(r1).toBe(DEFAULTS.points - 1);
    expect(r2).toBe(r1 - 1);
    expect(r3).toBe(r2 - cost);

    // Of several operations, the one that runs is priced.
    const both = `query Small ${VIEWER} query Large ${LARGE}`;
    const small = await send(t.baseUrl, '/graphql', { token: u.token, body: { query: both, operationName: 'Small' } });
    expect(small.status).toBe(200);
    expect(limitOf(small).remaining).toBe(r3 - 1);
  });
});

describe('Query.rateLimit', () => {
  it('answers what this request cost and what is left, as the headers do; null where limits are off', async () => {
    const u = await t.createUser('read');
    const QUERY = '{ rateLimit { cost limit remaining used resetAt } viewer { organizations(first: 1000) { totalCount nodes { id title } } } }';
    const cost = pointsOf(QUERY);
    expect(cost).toBeGreaterThan(1);
    const first = await gql(t.baseUrl, QUERY, u.token);
    const second = await gql(t.baseUrl, QUERY, u.token);
    for (const r of [first, second]) {
      expect(r.status).toBe(200);
      const h = limitOf(r);
      expect(r.body.data.rateLimit).toEqual({ cost, limit: h.limit, remaining: h.remaining, used: h.limit - h.remaining, resetAt: new Date(h.reset * 1000).toISOString() });
    }
    expect(second.body.data.rateLimit.remaining).toBe(first.body.data.rateLimit.remaining - cost);
    expect(first.body.data.rateLimit.used).toBe(cost);

    const off = await startSecondApp(t, { rateLimit: { ...DEFAULTS, enabled: false } });
    try {
      const r = await gql(off.baseUrl, '{ rateLimit { remaining } }', u.token);
      expect(r.status).toBe(200);
      expect(r.body).toEqual({ data: { rateLimit: null } });
      expect(r.headers.get('x-ratelimit-limit')).toBeNull();
    } finally {
      await off.close();
    }
  });
});

describe('over the limit', () => {
  it('REST: the request over the limit is a 429 with Retry-After and the error body; the official client surfaces it', async () => {
    const u = await s.createUser('read');
    const statuses: number[] = [];
    for (let i = 0; i < SMALL.points; i++) {
      const r = await send(s.baseUrl, '/v1/user', { token: u.token });
      statuses.push(r.status);
      expect(limitOf(r)).toMatchObject({ limit: SMALL.points, remaining: SMALL.points - 1 - i });
    }
    expect(statuses).toEqual(Array(SMALL.points).fill(200));
    expectRest429(await send(s.baseUrl, '/v1/user', { token: u.token }));
    // Any route, even a missing one, for the same token.
    expectRest429(await send(s.baseUrl, '/v1/no-such-route', { token: u.token }));

    const err = await u.client.user.getAuthenticatedUser().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(GitBookAPIError);
    expect((err as GitBookAPIError).code).toBe(429);
    expect((err as GitBookAPIError).errorMessage).toMatch(/rate limit/i);
    expect(Number((err as GitBookAPIError).response.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  });

  it('GraphQL: 429 with errors[].extensions.code RATE_LIMITED, Retry-After and the headers; nothing runs', async () => {
    const u = await s.createUser('read');
    for (let i = 0; i < SMALL.points; i++) expect((await gql(s.baseUrl, VIEWER, u.token)).status).toBe(200);
    const over = await gql(s.baseUrl, VIEWER, u.token);
    expect(over.status).toBe(429);
    expect(over.body.data ?? null).toBeNull();
    expect(over.body.errors.map((e: any) => e.extensions?.code)).toEqual(['RATE_LIMITED']);
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(limitOf(over)).toMatchObject({ limit: SMALL.points, remaining: 0 });

    // A mutation over the limit changes nothing.
    const title = `Not created ${Date.now()}`;
    const m = await gql(s.baseUrl, 'mutation($title: String!) { createOrganization(input: { title: $title }) { id } }', u.token, { title });
    expect(m.status).toBe(429);
    expect(await s.app.prisma.organization.count({ where: { title } })).toBe(0);
    // A request failing before execution is refused the same way.
    const bad = await gql(s.baseUrl, '{ viewer {', u.token);
    expect(bad.status).toBe(429);
    expect(bad.body.errors[0].extensions.code).toBe('RATE_LIMITED');
  });

  it('two gateway processes on one database share the counter', async () => {
    const u = await s.createUser('read');
    expect(await sendInTurn([s.baseUrl, s2Url], [u.token], SMALL.points + 2)).toEqual([...Array(SMALL.points).fill(200), 429, 429]);
    // Each process refuses it now, whichever saw the last allowed request.
    expectRest429(await send(s.baseUrl, '/v1/user', { token: u.token }));
    expectRest429(await send(s2Url, '/v1/user', { token: u.token }));
  });

  it('concurrent requests (batched per key on each process) are counted exactly: the limit lets through that many', async () => {
    const u = await s.createUser('read');
    await expectConcurrentCountedExactly([s.baseUrl, s2Url], u.token, SMALL);
  });

  it('users are counted apart: one user over the limit does not affect another', async () => {
    const u = await s.createUser('read');
    for (let i = 0; i < SMALL.points; i++) await send(s.baseUrl, '/v1/user', { token: u.token });
    expectRest429(await send(s.baseUrl, '/v1/user', { token: u.token }));
    const other = await s.createUser('read');
    const r = await send(s.baseUrl, '/v1/user', { token: other.token });
    expect(r.status).toBe(200);
    expect(limitOf(r).remaining).toBe(SMALL.points - 1);
  });

  it('requests without a valid token are counted per client IP (X-Forwarded-For behind a trusted proxy), invalid tokens included', async () => {
    const ip = (n: number) => ({ 'x-forwarded-for': `198.51.100.${n}` });
    // No token, then an unknown token, then no token: one budget for the address.
    const a = [
      await send(s.baseUrl, '/v1/user', { headers: ip(1) }),
      await send(s.baseUrl, '/v1/user', { headers: ip(1), token: 'dg_unknown_token_0000' }),
      await send(s.baseUrl, '/graphql', { headers: ip(1), body: { query: VIEWER } }),
    ];
    expect(a.map((r) => [r.status, limitOf(r).limit, limitOf(r).remaining])).toEqual([
      [401, SMALL.anonymousPoints, 2],
      [401, SMALL.anonymousPoints, 1],
      [401, SMALL.anonymousPoints, 0],
    ]);
    expectRest429(await send(s.baseUrl, '/v1/user', { headers: ip(1), token: 'dg_another_unknown_token' }));
    // Another address has its own budget; a valid token from the same address is not affected.
    const other = await send(s.baseUrl, '/v1/user', { headers: ip(2) });
    expect([other.status, limitOf(other).remaining]).toEqual([401, SMALL.anonymousPoints - 1]);
    const u = await s.createUser('read');
    const authed = await send(s.baseUrl, '/v1/user', { headers: ip(1), token: u.token });
    expect([authed.status, limitOf(authed).limit]).toEqual([200, SMALL.points]);
  });
});

describe('client address', () => {
  const req = (remoteAddress: string, xff?: string) => ({ socket: { remoteAddress }, headers: xff ? { 'x-forwarded-for': xff } : {} }) as unknown as http.IncomingMessage;
  it('is the socket address unless proxies are trusted; then the entry the nearest trusted proxy added', () => {
    expect(clientIp(req('::ffff:10.0.0.5', '1.2.3.4'), 0)).toBe('10.0.0.5'); // a forged header is ignored
    expect(clientIp(req('10.0.0.5', 'forged, 203.0.113.7'), 1)).toBe('203.0.113.7');
    expect(clientIp(req('10.0.0.5', 'forged, 203.0.113.7, 10.0.0.9'), 2)).toBe('203.0.113.7');
    expect(clientIp(req('10.0.0.5', '203.0.113.7'), 3)).toBe('203.0.113.7');
    expect(clientIp(req('10.0.0.5'), 1)).toBe('10.0.0.5');
  });
});

describe('counters database unreachable', () => {
  it('fails open: requests are counted in memory, never refused for the outage, with one warning', async () => {
    const logs: Array<{ level: number; msg: string }> = [];
    const log = pino({ level: 'warn' }, { write: (line: string) => void logs.push(JSON.parse(line)) });
    // Nothing listens on port 1.
    const limits = new RateLimits({ ...SMALL, points: 3 }, 'postgres://nobody@127.0.0.1:1/none', log);
    try {
      await expectFailsOpenInMemory(limits, logs);
    } finally {
      await limits.close();
    }
  });
});
