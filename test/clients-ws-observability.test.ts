// graphql-ws sockets in the access log and the metrics, like HTTP requests (README "Operations"):
// one `request` line per socket when it closes (status 101, the upgrade's request id, its duration,
// how many operations it ran, its close code, the user), a line per refused upgrade, and
// `docgraph_ws_connections_total` / `docgraph_ws_connections_open`. Driven through the real
// graphql-ws client, as Apollo's GraphQLWsLink and urql's subscriptionExchange use it.
import { Writable } from 'node:stream';
import pino from 'pino';
import WebSocket from 'ws';
import { createClient } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers.ts';
import { createSite } from './fixtures/sites.ts';

type LogLine = Record<string, any>;
let t: TestApp;
let lines: LogLine[];
let wsUrl: string;

beforeAll(async () => {
  lines = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      for (const l of String(chunk).split('\n')) if (l) lines.push(JSON.parse(l));
      done();
    },
  });
  t = await startTestApp({ log: pino({ level: 'info' }, stream) });
  wsUrl = `${t.baseUrl.replace(/^http/, 'ws')}/graphql`;
});
afterAll(() => t?.close());

async function metric(name: string): Promise<number> {
  const text = await (await fetch(`${t.baseUrl}/metrics`)).text();
  const m = new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(text);
  return m ? Number(m[1]) : NaN;
}

/** A graphql-ws client whose sockets send `X-Request-Id: requestId`; `ids` collects the id each 101 carried. */
function client(requestId: string, connectionParams?: Record<string, unknown>) {
  const ids: Array<string | undefined> = [];
  const codes: number[] = [];
  class Socket extends WebSocket {
    constructor(url: string, protocols?: string | string[]) {
      super(url, protocols, { headers: { 'x-request-id': requestId } });
      this.on('upgrade', (res) => ids.push(res.headers['x-request-id'] as string | undefined));
    }
  }
  const c = createClient({ url: wsUrl, webSocketImpl: Socket, connectionParams, retryAttempts: 0, shouldRetry: () => false, lazy: true, on: { closed: (e) => void codes.push((e as { code: number }).code) } });
  return { client: c, ids, codes };
}

const accessLines = (requestId: string) => lines.filter((l) => l.msg === 'request' && l.requestId === requestId);

describe('graphql-ws sockets in the access log and the metrics', () => {
  it('a socket running a query and a subscription: one line at its close with status 101, its id, duration and operations; counted and gauged', async () => {
    const site = await createSite(t, { title: 'Observed' });
    const before = { total: await metric('docgraph_ws_connections_total'), open: await metric('docgraph_ws_connections_open') };
    expect(before).toEqual({ total: 0, open: 0 });
    const { client: c, ids, codes } = client('ws-observed-1', { authorization: `Bearer ${t.token}` });
    const viewer = await new Promise<any>((resolve, reject) => {
      c.subscribe({ query: '{ viewer { user { id } } }' }, { next: (r) => resolve(r.data), error: reject, complete: () => {} });
    });
    expect(viewer.viewer.user.id).toBe(t.adminUser.id);
    const events: any[] = [];
    const stop = c.subscribe({ query: `subscription($id: ID!) { siteStructureChanged(siteId: $id) { site { title } } }`, variables: { id: site.id } }, { next: (r) => void events.push(r.data), error: () => {}, complete: () => {} });
    // While open: counted, gauged, and not logged yet (the line is written at the close).
    await expect.poll(() => metric('docgraph_ws_connections_open')).toBe(1);
    expect(await metric('docgraph_ws_connections_total')).toBe(1);
    expect(accessLines('ws-observed-1')).toEqual([]);
    expect(ids).toEqual(['ws-observed-1']);
    await expect
      .poll(async () => {
        await t.rest('PATCH', `/v1/orgs/${t.org.id}/sites/${site.id}`, { title: `Observed ${events.length}` });
        return events.length;
      }, { timeout: 15_000, interval: 300 })
      .toBeGreaterThan(0);
    stop();
    await c.dispose();
    await expect.poll(() => accessLines('ws-observed-1').length).toBe(1);
    const [line] = accessLines('ws-observed-1');
    expect(line).toMatchObject({ level: 30, method: 'GET', route: '/graphql', status: 101, protocol: 'graphql-ws', operations: 2, closeCode: 1000, userId: t.adminUser.id });
    expect(line.durationMs).toBeGreaterThan(0);
    expect(codes).toEqual([1000]);
    expect(await metric('docgraph_ws_connections_open')).toBe(0);
    expect(await metric('docgraph_ws_connections_total')).toBe(1);
  });

  it('a socket refused at connection_init (no token): its line names the close code, no user, no operation', async () => {
    const total = await metric('docgraph_ws_connections_total');
    const { client: c, codes } = client('ws-no-token');
    await new Promise<void>((resolve) => c.subscribe({ query: '{ viewer { user { id } } }' }, { next: () => {}, error: () => resolve(), complete: () => resolve() }));
    await c.dispose();
    await expect.poll(() => accessLines('ws-no-token').length).toBe(1);
    const [line] = accessLines('ws-no-token');
    expect(line).toMatchObject({ status: 101, operations: 0, closeCode: 4401 });
    expect(line.userId).toBeUndefined();
    expect(codes).toEqual([4401]);
    expect(await metric('docgraph_ws_connections_total')).toBe(total + 1);
    expect(await metric('docgraph_ws_connections_open')).toBe(0);
  });

  it('an upgrade refused before the handshake: a request line with its status and id, counted as an HTTP answer, no socket counted', async () => {
    const total = await metric('docgraph_ws_connections_total');
    const res = await new Promise<{ status: number; id: string | undefined }>((resolve, reject) => {
      const ws = new WebSocket(`${t.baseUrl.replace(/^http/, 'ws')}/elsewhere`, 'graphql-transport-ws', { headers: { 'x-request-id': 'ws-refused-1' } });
      ws.on('unexpected-response', (_req, r) => (resolve({ status: r.statusCode!, id: r.headers['x-request-id'] as string | undefined }), r.resume(), ws.terminate()));
      ws.on('open', () => reject(new Error('opened')));
      ws.on('error', () => {});
    });
    expect(res).toEqual({ status: 404, id: 'ws-refused-1' });
    expect(accessLines('ws-refused-1')).toEqual([expect.objectContaining({ status: 404, route: '(unmatched)', method: 'GET' })]);
    const text = await (await fetch(`${t.baseUrl}/metrics`)).text();
    expect(text).toMatch(/^docgraph_http_requests_total\{method="GET",route="\(unmatched\)",status="404"\} [1-9]/m);
    expect(await metric('docgraph_ws_connections_total')).toBe(total);
  });

  it('a hostile X-Request-Id on the upgrade is replaced, as on HTTP', async () => {
    const { client: c, ids } = client(`${'x'.repeat(200)} <script>`, { authorization: `Bearer ${t.token}` });
    await new Promise<void>((resolve, reject) => c.subscribe({ query: '{ viewer { user { id } } }' }, { next: () => {}, error: reject, complete: resolve }));
    await c.dispose();
    expect(ids[0]).toMatch(/^[0-9a-f-]{36}$/);
    await expect.poll(() => accessLines(ids[0]!).length).toBe(1);
    expect(accessLines(ids[0]!)[0]).toMatchObject({ status: 101, operations: 1 });
  });
});
