// The cluster of docs/deployment.md end to end, every part a real process (test/fixtures/cluster.ts):
// an embedded PostgreSQL primary and a streaming hot standby, PgBouncer in transaction mode,
// redis-server for the rate limiter, two gateways from the built server (RUN_WORKER=false), one
// worker process, Varnish in front of the gateways. Public published reads go through Varnish;
// everything else goes to the gateways. `npm run test:cluster` runs this file alone.
import http from 'node:http';
import crypto from 'node:crypto';
import { createParser } from 'eventsource-parser';
import pg from 'pg';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashToken } from '../src/auth/tokens.ts';
import { newId } from '../src/lib/ids.ts';
import { startCluster, type Cluster } from './fixtures/cluster.ts';

const ADMIN_TOKEN = 'dg_cluster_admin_token_0123456789';
const LSN = 'x-docgraph-lsn';
/** Per user and window: the burst below goes past it. */
const POINTS = 400;

let cluster: Cluster | undefined;
let A: string;
let B: string;
let cache: string;
let primarySql: pg.Client;
let receiver: http.Server;
let hookBase: string;
const received: Array<{ path: string; body: any }> = [];
let orgId: string;
let siteId: string;
let spaceId: string;

async function eventually<T>(fn: () => Promise<T>, ok: (v: T) => boolean, timeoutMs: number, pauseMs = 25): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (ok(v) || Date.now() > until) return v;
    await new Promise((r) => setTimeout(r, pauseMs));
  }
}

async function gql(base: string, query: string, variables: Record<string, unknown> = {}, headers: Record<string, string> = {}, token: string | null = ADMIN_TOKEN) {
  const res = await fetch(`${base}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await res.json()) as { data?: any; errors?: unknown[] };
  return { status: res.status, headers: res.headers, data: body.data, errors: body.errors };
}

async function mutate(base: string, query: string, input: Record<string, unknown>) {
  const r = await gql(base, query, { input });
  expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
  return r;
}

async function rest(base: string, method: string, p: string, body?: unknown, token: string | null = ADMIN_TOKEN, headers: Record<string, string> = {}) {
  const res = await fetch(`${base}${p}`, {
    method,
    headers: { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
}

/** An anonymous read of the site's published structure through Varnish (what the official client calls). */
async function published() {
  const res = await fetch(`${cache}/v1/orgs/${orgId}/sites/${siteId}/published`);
  const body = (await res.json()) as any;
  return { status: res.status, cache: res.headers.get('x-cache'), age: Number(res.headers.get('age') ?? NaN), title: body?.site?.title as string };
}

beforeAll(async () => {
  receiver = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      received.push({ path: req.url ?? '', body: JSON.parse(body || 'null') });
      res.statusCode = 204;
      res.end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  hookBase = `http://127.0.0.1:${(receiver.address() as { port: number }).port}`;

  cluster = await startCluster({
    gateways: 2,
    adminToken: ADMIN_TOKEN,
    env: {
      RATE_LIMIT_POINTS: String(POINTS),
      // Lag is made on purpose below (paused replay); the test of the bound is test/replicas.test.ts.
      REPLICA_MAX_LAG_MS: '600000',
      // With the purge feed on, the shared cache may keep an answer long: only a purge refreshes it.
      PUBLISHED_S_MAXAGE_SECONDS: '3600',
      PURGE_INTERVAL_MS: '200',
      PURGE_REPEAT_SECONDS: '2',
      WEBHOOK_ALLOW_PRIVATE: 'true',
    },
  });
  [A, B] = cluster.gateways.map((g) => g.url);
  cache = cluster.varnish.url;
  primarySql = new pg.Client({ connectionString: cluster.primary.url });
  primarySql.on('error', () => {});
  await primarySql.connect();
  orgId = (await primarySql.query('SELECT id FROM "Organization"')).rows[0].id;
}, 240_000);

afterAll(async () => {
  await primarySql?.end().catch(() => {});
  await cluster?.stop();
  await new Promise((r) => (receiver ? receiver.close(r) : r(undefined)));
}, 120_000);

describe('the cluster: two gateways behind Varnish, PgBouncer, a standby, Redis and a worker', () => {
  it('started on an empty database all at once: one bootstrap, every gateway answers, Varnish reaches both', async () => {
    expect(Number((await primarySql.query('SELECT count(*) AS n FROM "User"')).rows[0].n)).toBe(1);
    for (const base of [A, B]) expect((await rest(base, 'GET', '/v1/user')).status).toBe(200);
    // A public site with one section, published (made through gateway B).
    spaceId = (await mutate(B, `mutation($input: CreateSpaceInput!) { createSpace(input: $input) { space { id } } }`, { organizationId: orgId, title: 'Cluster space' })).data.createSpace.space.id;
    siteId = (await mutate(B, `mutation($input: CreateSiteInput!) { createSite(input: $input) { site { id } } }`, { organizationId: orgId, title: 'Cluster site', visibility: 'public' })).data.createSite.site.id;
    await mutate(B, `mutation($input: AddSectionToSiteInput!) { addSectionToSite(input: $input) { section { id } } }`, { siteId, spaceId, title: 'Docs' });
    await mutate(B, `mutation($input: SiteKeyInput!) { publishSite(input: $input) { site { id } } }`, { siteId });
    // Through Varnish, what it does not cache (a POST) is spread over both gateways by the director.
    const servedBy = new Set<string>();
    for (let i = 0; i < 6; i++) {
      const r = await fetch(`${cache}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: '{ __typename }' }) });
      expect(r.status).toBe(200);
      servedBy.add(r.headers.get('x-served-by') ?? '');
    }
    expect([...servedBy].sort()).toEqual(['g1', 'g2']);
  });

  it('a token revoked through one gateway is refused by the other within a second', async () => {
    const created = await mutate(A, 'mutation($input: CreateApiTokenInput!) { createApiToken(input: $input) { token apiToken { id } } }', { label: 'revoked in the cluster' });
    const { token, apiToken } = created.data.createApiToken;
    // Both gateways have it in their token cache.
    for (const base of [A, B, A, B]) expect((await rest(base, 'GET', '/v1/user', undefined, token)).status).toBe(200);
    await mutate(A, 'mutation($input: RevokeApiTokenInput!) { revokeApiToken(input: $input) { deleted } }', { id: apiToken.id });
    const refused = await eventually(() => rest(B, 'GET', '/v1/user', undefined, token), (r) => r.status === 401, 1000);
    expect(refused.status).toBe(401);
    expect((await rest(A, 'GET', '/v1/user', undefined, token)).status).toBe(401);
  });

  it('a burst over the rate limit is counted across both gateways (in Redis)', async () => {
    // A user of its own, so the admin keeps its budget for the rest of the file.
    const userId = newId('User');
    const token = `dg_burst_${crypto.randomBytes(12).toString('hex')}`;
    await primarySql.query(`INSERT INTO "User" (id, email, "displayName") VALUES ($1, $2, 'Burst')`, [userId, `${userId.toLowerCase()}@example.com`]);
    await primarySql.query(`INSERT INTO "ApiToken" (id, "userId", label, "tokenHash") VALUES ($1, $2, 'burst', $3)`, [newId('ApiToken'), userId, hashToken(token)]);
    let served = 0;
    let refused = 0;
    let last = POINTS;
    // Alternating gateways, each request costing 1 point (REST).
    for (let i = 0; i < POINTS + 20; i++) {
      const r = await rest(i % 2 ? B : A, 'GET', '/v1/user', undefined, token);
      if (r.status === 429) {
        refused++;
        continue;
      }
      expect(r.status).toBe(200);
      served++;
      const remaining = Number(r.headers.get('x-ratelimit-remaining'));
      // One budget: each answer, whichever gateway, has one point less than the one before.
      expect(remaining).toBe(last - 1);
      last = remaining;
    }
    expect(served).toBe(POINTS);
    expect(refused).toBe(20);
    for (const base of [A, B]) expect((await rest(base, 'GET', '/v1/user', undefined, token)).status).toBe(429);
    const redis = new Redis(cluster!.redis.url, { lazyConnect: true, maxRetriesPerRequest: 1 });
    try {
      await redis.connect();
      expect(Number(await redis.get(`docgraph:ratelimit:usr:${userId}`))).toBeGreaterThanOrEqual(POINTS);
    } finally {
      redis.disconnect();
    }
  });

  it('a subscription on gateway A gets the event of a write made through gateway B', async () => {
    const abort = new AbortController();
    const res = await fetch(`${A}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', authorization: `Bearer ${ADMIN_TOKEN}` },
      body: JSON.stringify({ query: 'subscription($siteId: ID!) { siteStructureChanged(siteId: $siteId) { event { type } site { id title } } }', variables: { siteId } }),
      signal: abort.signal,
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const events: any[] = [];
    const parser = createParser({ onEvent: (e) => e.event === 'next' && events.push(JSON.parse(e.data)) });
    const reading = (async () => {
      try {
        const text = res.body!.pipeThrough(new TextDecoderStream()).getReader();
        for (let r = await text.read(); !r.done; r = await text.read()) parser.feed(r.value);
      } catch {
        // aborted
      }
    })();
    try {
      expect((await rest(B, 'PATCH', `/v1/orgs/${orgId}/sites/${siteId}`, { title: 'Renamed through B' })).status).toBe(200);
      const got = await eventually(async () => events.find((e) => e.data?.siteStructureChanged?.site?.title === 'Renamed through B'), (e) => e !== undefined, 10_000, 50);
      expect(got?.data.siteStructureChanged.site.id).toBe(siteId);
    } finally {
      abort.abort();
      await reading;
    }
  });

  it('a webhook is delivered exactly once, by the worker process', async () => {
    const hook = await rest(A, 'POST', `/v1/orgs/${orgId}/webhooks`, { url: `${hookBase}/hook`, eventTypes: ['space_created'] });
    expect(hook.status, JSON.stringify(hook.body)).toBe(201);
    const spaces: string[] = [];
    for (const [i, base] of [A, B, A, B].entries()) {
      const r = await rest(base, 'POST', `/v1/orgs/${orgId}/spaces`, { title: `Hooked ${i}` });
      expect(r.status).toBe(201);
      spaces.push(r.body.id);
    }
    // Settled: every delivery recorded as delivered and nothing left in the queue.
    await eventually(
      () => primarySql.query(`SELECT (SELECT count(*) FROM "WebhookDelivery" WHERE status <> 'succeeded')::int AS pending, (SELECT count(*) FROM "WebhookDelivery")::int AS total`),
      (r) => r.rows[0].total === spaces.length && r.rows[0].pending === 0,
      30_000,
      100,
    );
    const of = (id: string) => received.filter((r) => r.path === '/hook' && r.body?.object?.id === id).length;
    expect(spaces.map(of)).toEqual([1, 1, 1, 1]);
    expect(cluster!.worker.output()).not.toMatch(/"level":50/);
  });

  it('read-your-writes: with the replica paused, a read carrying the write\'s LSN sees it; one without is served stale by the replica', async () => {
    const TITLE = 'query($id: ID!) { organization(id: $id) { title } }';
    const before = (await gql(B, TITLE, { id: orgId })).data.organization.title as string;
    await cluster!.standby.pauseReplay();
    try {
      const w = await gql(A, 'mutation($id: ID!, $title: String!) { updateOrganization(input: { id: $id, title: $title }) { organization { title } } }', { id: orgId, title: 'Written while paused' });
      expect(w.errors).toBeUndefined();
      const token = w.headers.get(LSN);
      expect(token).toMatch(/^[0-9A-F]+\/[0-9A-F]+$/);
      // At once, on the other gateway (GraphQL and REST).
      expect((await gql(B, TITLE, { id: orgId }, { [LSN]: token! })).data.organization.title).toBe('Written while paused');
      expect((await rest(B, 'GET', `/v1/orgs/${orgId}`, undefined, ADMIN_TOKEN, { [LSN]: token! })).body.title).toBe('Written while paused');
      expect((await gql(A, TITLE, { id: orgId }, { [LSN]: token! })).data.organization.title).toBe('Written while paused');
      // Without it, the paused replica answers what it has.
      expect((await gql(B, TITLE, { id: orgId })).data.organization.title).toBe(before);
      expect((await rest(A, 'GET', `/v1/orgs/${orgId}`)).body.title).toBe(before);
    } finally {
      await cluster!.standby.resumeReplay();
    }
    const caughtUp = await eventually(() => gql(B, TITLE, { id: orgId }), (r) => r.data?.organization?.title === 'Written while paused', 10_000);
    expect(caughtUp.data.organization.title).toBe('Written while paused');
  });

  it('public published reads: Varnish serves > 95 % of repeated anonymous reads; a change is purged and read fresh, never stale after', async () => {
    const first = await published();
    expect(first.status).toBe(200);
    const N = 200;
    let hits = 0;
    for (let i = 0; i < N; i++) {
      const r = await published();
      expect(r.status).toBe(200);
      // A hit of an object Varnish stored earlier (X-Cache from the VCL; Age counted by Varnish).
      if (r.cache === 'HIT' && r.age >= 0) hits++;
    }
    expect(hits / N).toBeGreaterThan(0.95);

    // Let the purge feed settle what the earlier tests owe, so the next cached answer stays until a purge.
    await eventually(published, (r) => r.cache === 'HIT' && r.title === 'Renamed through B', 10_000, 100);
    const old = await published();
    expect(old.cache).toBe('HIT');

    expect((await rest(A, 'PATCH', `/v1/orgs/${orgId}/sites/${siteId}`, { title: 'Renamed for the purge' })).status).toBe(200);
    const reads: Array<Awaited<ReturnType<typeof published>>> = [];
    const fresh = await eventually(
      async () => {
        const r = await published();
        reads.push(r);
        return r;
      },
      (r) => r.title === 'Renamed for the purge',
      10_000,
      50,
    );
    expect(fresh.title).toBe('Renamed for the purge');
    // Until then, the answer cached before the change (nothing else).
    for (const r of reads.slice(0, -1)) expect(r.title).toBe('Renamed through B');
    // (Within 10 s: without the purge, Varnish would have served the old answer for an hour.)
    // After the purge: nothing stale any more, and cached again.
    const after: string[] = [];
    let hitsAfter = 0;
    for (let i = 0; i < 30; i++) {
      const r = await published();
      after.push(r.title);
      if (r.cache === 'HIT') hitsAfter++;
    }
    expect(new Set(after)).toEqual(new Set(['Renamed for the purge']));
    expect(hitsAfter).toBeGreaterThanOrEqual(29);
  });

  it('no process crashed: every gateway answers /readyz, the worker and every engine still run', async () => {
    for (const g of cluster!.gateways) {
      expect(g.proc.alive(), g.proc.output()).toBe(true);
      expect((await fetch(`${g.url}/readyz`)).status).toBe(200);
    }
    expect((await fetch(`${cache}/readyz`)).status).toBe(200);
    expect(cluster!.processes().filter((p) => !p.alive)).toEqual([]);
  });
});
