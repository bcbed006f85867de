// Operations: request ids on every response and log line, one access log line per
// request at the right level, Prometheus metrics at /metrics (README, "Operations").
import net from 'node:net';
import { Writable } from 'node:stream';
import pg from 'pg';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestApp, ADMIN_TOKEN, type TestApp } from './helpers.ts';
import type { TokenCache } from '../src/auth/token-cache.ts';

type LogLine = { level: number; msg: string; requestId?: string; [k: string]: unknown };
const INFO = 30;
const WARN = 40;
const ERROR = 50;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const METRICS_TOKEN = 'metrics_token_0123456789';

/** A logger writing JSON lines into `lines`, at debug so every line of a request shows. */
function capturedLog() {
  const lines: LogLine[] = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      for (const l of String(chunk).split('\n')) if (l) lines.push(JSON.parse(l));
      done();
    },
  });
  return { log: pino({ level: 'debug' }, stream), lines };
}

let t: TestApp;
let lines: LogLine[];

beforeAll(async () => {
  const captured = capturedLog();
  lines = captured.lines;
  t = await startTestApp({ log: captured.log, config: { metricsToken: METRICS_TOKEN } });
});
afterAll(() => t?.close());

async function get(path: string, headers: Record<string, string> = {}) {
  return fetch(`${t.baseUrl}${path}`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...headers } });
}

async function graphql(query: string, operationName?: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${t.baseUrl}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${ADMIN_TOKEN}`, ...headers },
    body: JSON.stringify({ query, operationName }),
  });
  return { res, body: (await res.json()) as { data?: any; errors?: Array<{ message: string; extensions?: Record<string, unknown> }> } };
}

/** The access line of the request `id` (written when the response closes: wait for it). */
async function accessLine(id: string): Promise<LogLine> {
  return vi.waitFor(() => {
    const found = lines.filter((l) => l.msg === 'request' && l.requestId === id);
    if (found.length === 0) throw new Error(`no access line for ${id}`);
    expect(found).toHaveLength(1);
    return found[0];
  });
}

/** Send raw bytes (headers node's own clients refuse to send) and read the response head. */
function rawRequest(head: Buffer): Promise<{ status: number; headers: Record<string, string> }> {
  return new Promise((resolve, reject) => {
    const url = new URL(t.baseUrl);
    const socket = net.connect(Number(url.port), url.hostname, () => socket.write(head));
    let data = '';
    socket.on('data', (d) => (data += d.toString('latin1')));
    socket.on('error', reject);
    socket.on('end', () => {
      const [top, ...rest] = data.split('\r\n\r\n')[0].split('\r\n');
      const headers: Record<string, string> = {};
      for (const h of rest) {
        const i = h.indexOf(':');
        headers[h.slice(0, i).toLowerCase()] = h.slice(i + 1).trim();
      }
      resolve({ status: Number(top.split(' ')[1]), headers });
    });
  });
}

describe('request ids', () => {
  it('a well-formed X-Request-Id comes back and is on the access line, with route pattern, status, statements and user', async () => {
    const id = 'client-req.42:abc_DEF';
    const { result: res, count } = await t.countQueries(() => get(`/v1/orgs/${t.org.id}`, { 'x-request-id': id }));
    expect(res.status).toBe(200);
    expect(res.headers.get('x-request-id')).toBe(id);
    const line = await accessLine(id);
    expect(line).toMatchObject({ level: INFO, method: 'GET', route: '/v1/orgs/:organizationId', status: 200, userId: t.adminUser.id });
    // Prisma reports each statement inside the request's async context: all of them counted.
    expect(line.statements).toBeGreaterThan(0);
    expect(line.statements).toBe(count);
    expect(typeof line.durationMs).toBe('number');
    // The raw path (with the id) is not the route.
    expect(JSON.stringify(line.route)).not.toContain(t.org.id);
  });

  it('concurrent requests each count their own statements', async () => {
    const path = `/v1/orgs/${t.org.id}`;
    const alone = (await accessLine((await get(path, { 'x-request-id': 'alone' })).headers.get('x-request-id')!)).statements as number;
    const ids = Array.from({ length: 8 }, (_, i) => `together-${i}`);
    const { count } = await t.countQueries(() => Promise.all(ids.map((id) => get(path, { 'x-request-id': id }))));
    const counted = await Promise.all(ids.map(async (id) => (await accessLine(id)).statements as number));
    expect(counted.reduce((a, b) => a + b, 0)).toBe(count);
    expect(counted).toEqual(ids.map(() => alone));
  });

  it('without one, an id is generated, returned and logged; health and unknown paths too', async () => {
    for (const path of ['/v1/user', '/healthz', '/no/such/thing']) {
      const res = await get(path);
      const id = res.headers.get('x-request-id')!;
      expect(id, path).toMatch(UUID);
      const line = await accessLine(id);
      expect(line.route, path).toBe(path === '/no/such/thing' ? '(unmatched)' : path);
      expect(line.status).toBe(res.status);
    }
  });

  it('every log line written during the request carries its id; GraphQL lines name the operation', async () => {
    const id = 'gql-lookup-1';
    const { res, body } = await graphql('query Lookup { space(id: "space_doesnotexist000000000") { id } }', 'Lookup', { 'x-request-id': id });
    expect(res.headers.get('x-request-id')).toBe(id);
    expect(body.errors?.[0].extensions?.code).toBe('NOT_FOUND');
    const line = await accessLine(id);
    expect(line).toMatchObject({ route: '/graphql', operationName: 'Lookup', userId: t.adminUser.id, level: INFO });
    expect(line.statements).toBeGreaterThan(0);
    // The masked NOT_FOUND is reported by yoga on a line of its own (debug): it has the id too.
    const others = lines.filter((l) => l.requestId === id && l.msg !== 'request');
    expect(others.length).toBeGreaterThan(0);
  });

  it('a hostile id (too long, spaces, control or non-ASCII bytes, markup, repeated) is replaced by a generated one', async () => {
    const hostile: Buffer[] = [
      Buffer.from('a'.repeat(129)),
      Buffer.from('two words'),
      Buffer.from('tab\there'),
      Buffer.from('<script>alert(1)</script>'),
      Buffer.from('caf\u00e9', 'latin1'),
      Buffer.from('\u00fcber-\u2603', 'utf8'),
      Buffer.from('bell\x07'),
      Buffer.from('ok-id\r\nX-Request-Id: second'),
    ];
    for (const value of hostile) {
      const head = Buffer.concat([Buffer.from('GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\nX-Request-Id: '), value, Buffer.from('\r\n\r\n')]);
      const res = await rawRequest(head);
      expect(res.headers['x-request-id'], JSON.stringify(value.toString('latin1'))).toMatch(UUID);
    }
    // Within the limit and the alphabet, the id is kept.
    const kept = 'a'.repeat(128);
    expect((await get('/healthz', { 'x-request-id': kept })).headers.get('x-request-id')).toBe(kept);
  });

  it('a request node refuses to parse still answers with an id', async () => {
    const res = await rawRequest(Buffer.from('GET /healthz HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n'));
    expect(res.status).toBe(400);
    expect(res.headers['x-request-id']).toMatch(UUID);
    await accessLine(res.headers['x-request-id']);
  });
});

describe('access log levels', () => {
  it('404s (REST, GraphQL, unknown path), 401 and 400 are info; nothing about them at error', async () => {
    const ids = ['lvl-rest-404', 'lvl-path-404', 'lvl-401', 'lvl-400', 'lvl-405'];
    expect((await get('/v1/spaces/space_doesnotexist000000000', { 'x-request-id': ids[0] })).status).toBe(404);
    expect((await get('/nowhere', { 'x-request-id': ids[1] })).status).toBe(404);
    expect((await fetch(`${t.baseUrl}/v1/user`, { headers: { 'x-request-id': ids[2] } })).status).toBe(401);
    expect((await get('/v1/orgs?limit=nope', { 'x-request-id': ids[3] })).status).toBe(400);
    expect((await fetch(`${t.baseUrl}/v1/user`, { method: 'DELETE', headers: { 'x-request-id': ids[4] } })).status).toBe(405);
    for (const id of ids) expect((await accessLine(id)).level, id).toBe(INFO);
    const notFound = await accessLine(ids[0]);
    expect(notFound).toMatchObject({ route: '/v1/spaces/:spaceId', status: 404 });
    expect((await accessLine(ids[4])).route).toBe('/v1/*');
    const errors = lines.filter((l) => l.level >= ERROR && (ids.includes(l.requestId!) || l.requestId === 'gql-lookup-1'));
    expect(errors).toEqual([]);
  });

  it('a body over the limit is a warning, not an error', async () => {
    const id = 'lvl-413';
    const res = await fetch(`${t.baseUrl}/v1/orgs/${t.org.id}/spaces`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${ADMIN_TOKEN}`, 'x-request-id': id },
      body: JSON.stringify({ title: 'x'.repeat(t.app.config.limits.maxBodyBytes + 10) }),
    });
    expect(res.status).toBe(413);
    expect(res.headers.get('x-request-id')).toBe(id);
    expect(await accessLine(id)).toMatchObject({ level: WARN, status: 413 });
  });

  it('an unexpected error: 500 naming the request id (REST), requestId in the GraphQL error, logged at error', async () => {
    const spy = vi.spyOn(t.app.services.tokens as TokenCache, 'viewerFor').mockRejectedValue(new Error('token store on fire'));
    try {
      const restRes = await get('/v1/user', { 'x-request-id': 'boom-rest' });
      expect(restRes.status).toBe(500);
      expect(restRes.headers.get('x-request-id')).toBe('boom-rest');
      expect(await restRes.json()).toEqual({ error: { code: 500, message: 'Unexpected error (request id boom-rest)' } });
      expect(await accessLine('boom-rest')).toMatchObject({ level: ERROR, status: 500, route: '/v1/user' });

      const { res, body } = await graphql('{ viewer { user { id } } }', undefined, { 'x-request-id': 'boom-gql' });
      expect(res.headers.get('x-request-id')).toBe('boom-gql');
      expect(body.errors?.[0].extensions).toMatchObject({ code: 'INTERNAL_SERVER_ERROR', requestId: 'boom-gql' });
      expect(body.errors?.[0].message).not.toContain('on fire');
      expect((await accessLine('boom-gql')).level).toBe(ERROR);
      // The cause itself is logged once, with the id, at error.
      expect(lines.filter((l) => l.requestId === 'boom-gql' && l.level === ERROR && l.msg !== 'request')).toHaveLength(1);
    } finally {
      spy.mockRestore();
    }
  });
});

describe('/metrics', () => {
  const scrape = async (token: string | null = METRICS_TOKEN) =>
    fetch(`${t.baseUrl}/metrics`, { headers: token ? { authorization: `Bearer ${token}` } : {} });

  /** The value of one sample line, e.g. `name{a="b"}`. */
  function sample(text: string, series: string): number | undefined {
    const line = text.split('\n').find((l) => l.startsWith(`${series} `));
    return line === undefined ? undefined : Number(line.slice(series.length + 1));
  }

  it('requires the token when METRICS_TOKEN is set', async () => {
    expect((await scrape(null)).status).toBe(401);
    const wrong = await scrape('metrics_token_0123456788');
    expect(wrong.status).toBe(401);
    expect(await wrong.json()).toEqual({ error: { code: 401, message: expect.stringContaining('METRICS_TOKEN') } });
    expect((await scrape(ADMIN_TOKEN)).status).toBe(401);
  });

  it('counts requests by route pattern, method and status, with statements per request', async () => {
    const before = await (await scrape()).text();
    const orgRoute = 'method="GET",route="/v1/orgs/:organizationId"';
    const okBefore = sample(before, `docgraph_http_requests_total{${orgRoute},status="200"}`) ?? 0;
    for (let i = 0; i < 3; i++) expect((await get(`/v1/orgs/${t.org.id}`)).status).toBe(200);
    expect((await get('/v1/orgs/org_doesnotexist0000000000')).status).toBe(404);
    await graphql('query Me { viewer { user { id } } }', 'Me');
    // The access line (and the metrics) are written when each response closes.
    const res = await vi.waitFor(async () => {
      const r = await (await scrape()).text();
      expect(sample(r, `docgraph_http_requests_total{${orgRoute},status="200"}`)).toBe(okBefore + 3);
      return r;
    });
    expect(sample(res, `docgraph_http_requests_total{${orgRoute},status="404"}`)).toBeGreaterThanOrEqual(1);
    expect(sample(res, `docgraph_http_request_duration_seconds_count{${orgRoute},status="200"}`)).toBe(okBefore + 3);
    expect(sample(res, `docgraph_sql_statements_per_request_sum{${orgRoute}}`)).toBeGreaterThan(0);
    expect(sample(res, 'docgraph_http_requests_total{method="POST",route="/graphql",status="200"}')).toBeGreaterThanOrEqual(1);
    // No raw path (ids) as a label value.
    expect(res).not.toContain(t.org.id);
    // GraphQL phases, by operation type (not the client's operation names).
    expect(res).toMatch(/^graphql_envelop_phase_execute_count\{operationType="query"\} \d+/m);
    expect(res).not.toContain('operationName="Me"');
    // The pool, the process.
    expect(sample(res, 'docgraph_db_pool_connections{state="max"}')).toBe(5);
    expect(sample(res, 'docgraph_db_pool_waiting')).toBe(0);
    expect(res).toMatch(/^process_resident_memory_bytes \d+/m);
    expect(res).toMatch(/^nodejs_eventloop_lag_seconds /m);
  });

  it('reports the published-structure cache by result and the live feed', async () => {
    const site = await t.gql(`mutation($input: CreateSiteInput!) { createSite(input: $input) { site { id } } }`, { input: { organizationId: t.org.id, title: 'Metrics site' } });
    const siteId = site.data.createSite.site.id;
    const read = () => t.gql(`query($id: ID!) { publishedSite(siteId: $id) { id title structure { type } } }`, { id: siteId });
    const count = (text: string, result: string) => sample(text, `docgraph_published_cache_requests_total{result="${result}"}`) ?? 0;
    const before = await (await scrape()).text();
    await read(); // executed and stored
    await read(); // the stored answer
    const after = await (await scrape()).text();
    expect(count(after, 'miss')).toBe(count(before, 'miss') + 1);
    expect(count(after, 'hit')).toBe(count(before, 'hit') + 1);
    // No subscription is open on this process.
    expect(sample(after, 'docgraph_live_subscriptions')).toBe(0);
    expect(after).toMatch(/^docgraph_live_feed_reads_total \d+/m);
  });

  it('reports the job queue: queued and failed jobs', async () => {
    const db = new pg.Client({ connectionString: t.databaseUrl });
    await db.connect();
    try {
      await db.query(`SELECT graphile_worker.add_job('metrics_probe_queued', '{}'::json)`);
      await db.query(`SELECT graphile_worker.add_job('metrics_probe_failed', '{}'::json, max_attempts => 1)`);
      await db.query(`UPDATE graphile_worker._private_jobs SET attempts = 1, last_error = 'probe' WHERE task_id = (SELECT id FROM graphile_worker._private_tasks WHERE identifier = 'metrics_probe_failed')`);
    } finally {
      await db.end();
    }
    const text = await (await scrape()).text();
    expect(sample(text, 'docgraph_job_queue_scrape_success')).toBe(1);
    expect(sample(text, 'docgraph_job_queue_jobs{state="queued"}')).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'docgraph_job_queue_jobs{state="failed"}')).toBe(1);
  });

  it('is a 404 when METRICS=off', async () => {
    const off = await startTestApp({ config: { metrics: false } });
    try {
      const res = await fetch(`${off.baseUrl}/metrics`);
      expect(res.status).toBe(404);
      expect(res.headers.get('x-request-id')).toMatch(UUID);
      expect(await res.json()).toEqual({ error: { code: 404, message: 'Not found: /metrics' } });
    } finally {
      await off.close();
    }
  });
});
