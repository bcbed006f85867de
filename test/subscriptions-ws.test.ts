// Subscriptions for every common client: graphql-ws over WebSocket on /graphql, driven
// through the real `graphql-ws` client on `ws`, and a browser's EventSource (the `eventsource`
// package) authenticated by a single-use ticket instead of a header.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { createClient, type Client } from 'graphql-ws';
import type { FormattedExecutionResult } from 'graphql';
import { EventSource } from 'eventsource';
import { loadConfig } from '../src/config.ts';
import { startSecondApp, startTestApp, type TestApp } from './helpers.ts';
import { createSite } from './fixtures/sites.ts';

const defaults = loadConfig({});
const MAX_SOCKETS_PER_IP = 6;

let t: TestApp;
let wsUrl: string;

beforeAll(async () => {
  t = await startTestApp({
    config: {
      live: { ...defaults.live, maxPerToken: 2, keepAliveMs: 500 },
      liveWs: { maxPayloadBytes: 8 * 1024, initTimeoutMs: 400, maxConnectionsPerIp: MAX_SOCKETS_PER_IP, keepAliveMs: 500 },
    },
  });
  wsUrl = `${t.baseUrl.replace(/^http/, 'ws')}/graphql`;
});
afterAll(() => t?.close());

const SITE_SUB = `subscription($siteId: ID!, $after: String) { siteStructureChanged(siteId: $siteId, after: $after) { event { seq type } site { id title } } }`;

/** The seq of the last committed event now: `after` it is an exact start (nothing earlier comes first). */
const logEndNow = async () => String(Number((await t.app.prisma.event.aggregate({ _max: { seq: true } }))._max.seq ?? 0));

const renameSite = async (siteId: string, title: string) => {
  const r = await t.rest('PATCH', `/v1/orgs/${t.org.id}/sites/${siteId}`, { title });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
};

/** A graphql-ws client as a front end makes one; `closed` resolves with the socket's close event. */
function wsClient(connectionParams: Record<string, unknown> | undefined) {
  let onClosed!: (e: { code: number; reason: string }) => void;
  const closed = new Promise<{ code: number; reason: string }>((resolve) => (onClosed = resolve));
  /** Every close of the client's sockets (a lazy client reconnects for a new operation). */
  const codes: number[] = [];
  const client = createClient({
    url: wsUrl,
    webSocketImpl: WebSocket,
    connectionParams,
    retryAttempts: 0,
    shouldRetry: () => false,
    on: { closed: (e) => (codes.push((e as { code: number }).code), onClosed(e as { code: number; reason: string })) },
  });
  return { client, closed, codes };
}

/** One operation through the client: its results as they come, and how it ended. */
function run(client: Client, query: string, variables: Record<string, unknown> = {}) {
  const results: FormattedExecutionResult<any, unknown>[] = [];
  let ended: 'complete' | 'error' | undefined;
  let error: unknown;
  let wake: (() => void) | undefined;
  const dispose = client.subscribe(
    { query, variables },
    {
      next: (r) => (results.push(r), wake?.()),
      error: (e) => ((ended = 'error'), (error = e), wake?.()),
      complete: () => ((ended = 'complete'), wake?.()),
    },
  );
  /** The next result, or null once the operation ended. */
  async function next(ms = 5000): Promise<FormattedExecutionResult<any, unknown> | null> {
    const deadline = Date.now() + ms;
    while (!results.length && !ended) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error('nothing in time');
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        wake = () => (clearTimeout(timer), resolve());
      });
    }
    return results.shift() ?? null;
  }
  return { next, dispose, get ended() { return ended; }, get error() { return error; } };
}

const socketsOpen = () => (t.app.server as unknown as { liveWs: { size(): number } }).liveWs.size();
async function allSocketsClosed() {
  for (let i = 0; i < 100 && socketsOpen() > 0; i++) await new Promise((r) => setTimeout(r, 20));
  expect(socketsOpen()).toBe(0);
}

describe('graphql-ws over WebSocket', () => {
  it('delivers a site’s changes in log order after a write, then resumes with `after` without loss or duplicate', async () => {
    const site = await createSite(t);
    const { client } = wsClient({ authorization: `Bearer ${t.token}` });
    try {
      const s = run(client, SITE_SUB, { siteId: site.id, after: await logEndNow() });
      await renameSite(site.id, 'one');
      const first = await s.next();
      await renameSite(site.id, 'two');
      const second = await s.next();
      expect(first!.errors).toBeUndefined();
      expect([first, second].map((r) => r!.data.siteStructureChanged.site.title)).toEqual(['one', 'two']);
      expect(first!.data.siteStructureChanged.event.type).toBe('site_updated');
      const seqs = [first, second].map((r) => Number(r!.data.siteStructureChanged.event.seq));
      expect(seqs[1]).toBeGreaterThan(seqs[0]);
      s.dispose();
      // Missed while away, then resumed after the first: the second and the missed one, in order, then live.
      await renameSite(site.id, 'three');
      const resumed = run(client, SITE_SUB, { siteId: site.id, after: String(seqs[0]) });
      const replay = [await resumed.next(), await resumed.next()];
      expect(replay.map((r) => r!.data.siteStructureChanged.site.title)).toEqual(['three', 'three']); // the site as it is now
      expect(Number(replay[0]!.data.siteStructureChanged.event.seq)).toBe(seqs[1]);
      await renameSite(site.id, 'four');
      const live = await resumed.next();
      expect(live!.data.siteStructureChanged.site.title).toBe('four');
      const all = [...replay, live].map((r) => Number(r!.data.siteStructureChanged.event.seq));
      expect(new Set(all).size).toBe(3);
      expect(all).toEqual([...all].sort((a, b) => a - b));
      resumed.dispose();
      // A resume point beyond the log is the same BAD_REQUEST as over SSE.
      const beyond = run(client, SITE_SUB, { siteId: site.id, after: '999999999' });
      const refused = await beyond.next();
      expect(refused!.errors![0]).toMatchObject({ extensions: { code: 'BAD_REQUEST', field: 'after' } });
      expect(refused!.errors![0].extensions).not.toHaveProperty('http');
    } finally {
      await client.dispose();
    }
  });

  it('queries and mutations run over the socket too, with the HTTP answers and errors', async () => {
    const { client } = wsClient({ token: t.token }); // `{ token }` works as well as `authorization`
    const q = run(client, `{ viewer { user { id } } }`);
    expect((await q.next())!.data).toEqual({ viewer: { user: { id: t.adminUser.id } } });
    expect(await q.next()).toBeNull();
    expect(q.ended).toBe('complete');
    // A missing object: the field's NOT_FOUND, as over HTTP.
    const missing = run(client, `query($id: ID!) { site(id: $id) { id } }`, { id: 'site_nope' });
    const m = await missing.next();
    expect(m!.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    // A validation error: an error message naming the problem, code BAD_REQUEST.
    const invalid = run(client, `{ noSuchField }`);
    expect(await invalid.next()).toBeNull();
    expect(invalid.ended).toBe('error');
    expect(JSON.stringify(invalid.error)).toContain('noSuchField');
    // A mutation: a subscription ticket, made over the socket.
    const mut = run(client, `mutation { createSubscriptionTicket { ticket expiresAt } }`);
    expect((await mut.next())!.data.createSubscriptionTicket.ticket).toMatch(/^dgst_/);
    await client.dispose();
  });

  it('operations over the socket are charged to the token’s user like over HTTP: over the budget, RATE_LIMITED', async () => {
    // A process with a 4-point budget per user (the counters are the database's, shared by processes).
    const b = await startSecondApp(t, { rateLimit: { ...t.app.config.rateLimit, enabled: true, points: 4 } });
    const user = await t.createUser('read');
    const client = createClient({ url: `${b.baseUrl.replace(/^http/, 'ws')}/graphql`, webSocketImpl: WebSocket, connectionParams: { token: user.token }, retryAttempts: 0, lazy: false });
    try {
      const outcomes: string[] = [];
      for (let i = 0; i < 5; i++) {
        const q = run(client, `{ viewer { user { id } } }`);
        const r = await q.next();
        outcomes.push(r?.data ? 'ok' : q.ended === 'error' ? String((q.error as Array<{ extensions?: { code?: string } }>)[0]?.extensions?.code) : 'none');
      }
      // connection_init 1 point, each query 1: three answered, then refused.
      expect(outcomes).toEqual(['ok', 'ok', 'ok', 'RATE_LIMITED', 'RATE_LIMITED']);
    } finally {
      await client.dispose();
      await b.close();
    }
  });

  it('refuses a missing (4401) or unknown (4403) token at connection_init, before any operation runs', async () => {
    for (const [params, code] of [
      [undefined, 4401],
      [{ authorization: 'Bearer dg_not_a_real_token' }, 4403],
      [{ token: '' }, 4401],
    ] as const) {
      const { client, closed } = wsClient(params as Record<string, unknown> | undefined);
      const q = run(client, `{ viewer { user { id } } }`);
      expect((await closed).code).toBe(code);
      expect(await q.next()).toBeNull();
      expect(q.ended).toBe('error');
      await client.dispose();
    }
  });

  it('a token revoked during a subscription ends it, and the socket refuses the next operation', async () => {
    const site = await createSite(t);
    const member = await t.createUser('read');
    const second = await t.gql<{ createApiToken: { token: string; apiToken: { id: string } } }>(`mutation { createApiToken(input: { label: "ws" }) { token apiToken { id } } }`, {}, member.token);
    const { client, codes } = wsClient({ authorization: `Bearer ${second.data.createApiToken.token}` });
    const s = run(client, SITE_SUB, { siteId: site.id, after: await logEndNow() });
    await renameSite(site.id, 'seen');
    expect((await s.next())!.data.siteStructureChanged.site.title).toBe('seen');
    const revoked = await t.gql(`mutation($id: ID!) { revokeApiToken(input: { id: $id }) { deleted } }`, { id: second.data.createApiToken.apiToken.id }, member.token);
    expect(revoked.errors).toBeUndefined();
    await renameSite(site.id, 'secret after revocation');
    expect(await s.next()).toBeNull();
    expect(s.ended).toBe('complete');
    // The next operation: refused (the token is checked again), and the socket closed with 4403.
    const after = run(client, `{ viewer { user { id } } }`);
    expect(await after.next()).toBeNull();
    expect(after.ended).toBe('error');
    expect(codes).toContain(4403);
    await client.dispose();
  });

  it('caps subscriptions per token (RATE_LIMITED, like over SSE) and sockets per client address (429 to the upgrade)', async () => {
    const site = await createSite(t);
    // A token of its own: the cap counts this token's streams only.
    const member = await t.createUser('read');
    const { client } = wsClient({ authorization: `Bearer ${member.token}` });
    const start = await logEndNow();
    const open = [run(client, SITE_SUB, { siteId: site.id, after: start }), run(client, SITE_SUB, { siteId: site.id, after: start })];
    // Both joined the feed once a rename reaches them.
    await renameSite(site.id, 'capped');
    for (const s of open) expect((await s.next())!.data.siteStructureChanged.site.title).toBe('capped');
    const third = run(client, SITE_SUB, { siteId: site.id, after: start });
    const refused = await third.next();
    expect(refused!.errors![0]).toMatchObject({ extensions: { code: 'RATE_LIMITED' } });
    expect(refused!.errors![0].message).toMatch(/subscriptions/i);
    // One closed: the token may open another.
    open[0].dispose();
    await new Promise((r) => setTimeout(r, 100));
    const again = run(client, SITE_SUB, { siteId: site.id, after: await logEndNow() });
    await renameSite(site.id, 'again');
    expect((await again.next())!.data.siteStructureChanged.site.title).toBe('again');
    open[1].dispose();
    again.dispose();
    await client.dispose();
    await allSocketsClosed();

    // Sockets per address: the cap's worth open, the next upgrade refused with 429 before any handshake.
    const sockets = await Promise.all(
      Array.from({ length: MAX_SOCKETS_PER_IP }, () => new Promise<WebSocket>((resolve, reject) => {
        const ws = new WebSocket(wsUrl, 'graphql-transport-ws');
        ws.once('open', () => resolve(ws));
        ws.once('error', reject);
      })),
    );
    const status = await new Promise<number>((resolve) => {
      const ws = new WebSocket(wsUrl, 'graphql-transport-ws');
      ws.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
      ws.once('open', () => resolve(101));
      ws.once('error', () => {});
    });
    expect(status).toBe(429);
    for (const ws of sockets) ws.close();
    await allSocketsClosed();
  });

  it('bounds a socket: no connection_init in time (4408), a message over the size limit (1009)', async () => {
    const closeCode = (send?: (ws: WebSocket) => void) =>
      new Promise<number>((resolve, reject) => {
        const ws = new WebSocket(wsUrl, 'graphql-transport-ws');
        ws.once('open', () => send?.(ws));
        ws.once('close', (code) => resolve(code));
        ws.once('error', () => {});
        setTimeout(() => reject(new Error('socket still open')), 5000);
      });
    expect(await closeCode()).toBe(4408);
    expect(await closeCode((ws) => ws.send(JSON.stringify({ type: 'connection_init', payload: { token: t.token, pad: 'x'.repeat(20_000) } })))).toBe(1009);
    await allSocketsClosed();
  });

  it('a plain GET /graphql still answers over HTTP; other upgrades are refused plainly', async () => {
    const get = await fetch(`${t.baseUrl}/graphql?query=${encodeURIComponent('{ viewer { user { id } } }')}`, { headers: { authorization: `Bearer ${t.token}` } });
    expect(get.status).toBe(200);
    expect(await get.json()).toEqual({ data: { viewer: { user: { id: t.adminUser.id } } } });
    const upgradeStatus = (url: string) =>
      new Promise<number>((resolve) => {
        const ws = new WebSocket(url, 'graphql-transport-ws');
        ws.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
        ws.once('open', () => (ws.close(), resolve(101)));
        ws.once('error', () => {});
      });
    expect(await upgradeStatus(`${t.baseUrl.replace(/^http/, 'ws')}/v1/orgs`)).toBe(404);
    // A client that names no subprotocol (or another one) is told so (4406), not given a misleading 400.
    const legacy = await new Promise<number>((resolve) => {
      const ws = new WebSocket(wsUrl);
      ws.once('close', (code) => resolve(code));
      ws.once('error', () => {});
    });
    expect(legacy).toBe(4406);
    await allSocketsClosed();
  });
});

describe('EventSource with a subscription ticket', () => {
  let viewerToken: string;
  beforeAll(async () => {
    viewerToken = (await t.createUser('read')).token;
  });
  const ticketFor = async (token = viewerToken) => {
    const r = await t.gql<{ createSubscriptionTicket: { ticket: string; expiresAt: string } }>(`mutation { createSubscriptionTicket { ticket expiresAt } }`, {}, token);
    expect(r.errors).toBeUndefined();
    return r.data.createSubscriptionTicket;
  };
  const streamUrl = (siteId: string, after: string, ticket: string) =>
    `${t.baseUrl}/graphql?query=${encodeURIComponent(SITE_SUB)}&variables=${encodeURIComponent(JSON.stringify({ siteId, after }))}&ticket=${encodeURIComponent(ticket)}`;
  const sse = (url: string) => fetch(url, { headers: { accept: 'text/event-stream' } });

  it('a ticket opens one event stream as its token, which receives the site’s events; used again it is a 401', async () => {
    const site = await createSite(t);
    const { ticket, expiresAt } = await ticketFor();
    const ttl = new Date(expiresAt).getTime() - t.clock.now().getTime();
    expect(ttl).toBeGreaterThan(55_000);
    expect(ttl).toBeLessThanOrEqual(60_000);
    // The database keeps a hash, never the ticket.
    expect(JSON.stringify(await t.app.prisma.subscriptionTicket.findMany())).not.toContain(ticket);

    const url = streamUrl(site.id, await logEndNow(), ticket);
    const es = new EventSource(url);
    const titles: string[] = [];
    const errors: Array<number | undefined> = [];
    let wake: (() => void) | undefined;
    es.addEventListener('next', (e) => (titles.push(JSON.parse(e.data).data.siteStructureChanged.site.title), wake?.()));
    es.onerror = (e) => (errors.push(e.code), wake?.());
    await new Promise<void>((resolve, reject) => ((es.onopen = () => resolve()), setTimeout(() => reject(new Error('not opened')), 5000)));
    // Each event answers the site as it is when delivered: wait for the first before the second change.
    await renameSite(site.id, 'via EventSource');
    for (let i = 0; i < 100 && titles.length < 1; i++) await new Promise<void>((r) => ((wake = r), setTimeout(r, 100)));
    await renameSite(site.id, 'and again');
    for (let i = 0; i < 100 && titles.length < 2; i++) await new Promise<void>((r) => ((wake = r), setTimeout(r, 100)));
    expect(titles).toEqual(['via EventSource', 'and again']);
    expect(errors).toEqual([]);
    es.close();

    // The same ticket again (a reconnect, a copied URL): 401, and an EventSource gives up on it.
    const reused = await sse(url);
    expect(reused.status).toBe(401);
    expect(JSON.stringify(await reused.json())).toMatch(/already used/);
    const es2 = new EventSource(url);
    const code = await new Promise<number | undefined>((resolve) => (es2.onerror = (e) => resolve(e.code)));
    expect(code).toBe(401);
    expect(es2.readyState).toBe(EventSource.CLOSED);
  });

  it('an expired ticket, an unknown one, a token in the URL, or a ticket outside a GET event stream are refused', async () => {
    const site = await createSite(t);
    const { ticket } = await ticketFor();
    t.clock.advance(61_000);
    try {
      expect((await sse(streamUrl(site.id, await logEndNow(), ticket))).status).toBe(401);
    } finally {
      t.clock.reset();
    }
    expect((await sse(streamUrl(site.id, await logEndNow(), 'dgst_unknown'))).status).toBe(401);
    // The API token itself in a URL stays refused, whatever the name.
    for (const name of ['token', 'access_token']) {
      const r = await sse(`${t.baseUrl}/graphql?query=${encodeURIComponent(SITE_SUB)}&variables=${encodeURIComponent(JSON.stringify({ siteId: site.id }))}&${name}=${viewerToken}`);
      expect(r.status).toBe(401);
      expect((await r.json()).errors[0].message).toContain(name);
    }
    // A ticket on a POST, or on a GET that is not an event stream: 400 naming it (the ticket is not spent).
    const fresh = await ticketFor();
    const post = await fetch(`${t.baseUrl}/graphql?ticket=${fresh.ticket}`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'text/event-stream' }, body: JSON.stringify({ query: SITE_SUB, variables: { siteId: site.id } }) });
    expect(post.status).toBe(400);
    expect((await post.json()).errors[0].extensions.field).toBe('ticket');
    expect((await fetch(streamUrl(site.id, await logEndNow(), fresh.ticket))).status).toBe(400);
    const ok = await sse(streamUrl(site.id, await logEndNow(), fresh.ticket));
    expect(ok.status).toBe(200);
    await ok.body?.cancel();
  });

  it('a ticket needs a token: anonymous callers get none; a revoked token’s ticket no longer works', async () => {
    const anonymous = await t.gql(`mutation { createSubscriptionTicket { ticket } }`, {}, null);
    expect(anonymous.status).toBe(401);
    const member = await t.createUser('read');
    const { ticket } = await ticketFor(member.token);
    const tokenId = (await t.gql(`{ viewer { apiTokens { id } } }`, {}, member.token)).data.viewer.apiTokens[0].id;
    expect((await t.gql(`mutation($id: ID!) { revokeApiToken(input: { id: $id }) { deleted } }`, { id: tokenId }, member.token)).errors).toBeUndefined();
    const site = await createSite(t);
    expect((await sse(streamUrl(site.id, await logEndNow(), ticket))).status).toBe(401);
  });
});
