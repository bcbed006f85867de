// Hostile subscribers, stalled LISTEN connections and resume points beyond the log:
// - one token (or one address) cannot take every subscription slot of a process;
// - a stream whose token is revoked, or whose member is removed, ends within one keep-alive
//   interval even when no event comes;
// - a LISTEN connection that stops hearing notices (a NAT, a failover) turns the token cache off
//   on its process, so a token revoked meanwhile is refused there at once; once notices flow again
//   the cache serves again;
// - a resume point beyond the log's end is a 400 naming it, not a stream that never delivers.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createParser } from 'eventsource-parser';
import pino from 'pino';
import { loadConfig } from '../src/config.ts';
import { EventFeed, LiveSubscription } from '../src/events/feed.ts';
import type { EventRow as LiveEventRow } from '../src/events/log.ts';
import { startSecondApp, startTestApp, type TestApp } from './helpers.ts';
import { createSite } from './fixtures/sites.ts';

const defaults = loadConfig({});
/** Small keep-alive so a quiet stream's re-check comes quickly. */
const KEEPALIVE_MS = 300;
/** Small self-notice interval; a reconnect only far later, so the test's stall is a stall. */
const HEALTH_MS = 250;

let t: TestApp;
let b: Awaited<ReturnType<typeof startSecondApp>>; // a second process on the same database

beforeAll(async () => {
  t = await startTestApp({
    config: {
      live: { ...defaults.live, maxPerToken: 2, maxPerIp: 4, keepAliveMs: KEEPALIVE_MS },
      // Behind one proxy: the client address is the last X-Forwarded-For entry.
      rateLimit: { ...defaults.rateLimit, trustProxy: 1 },
      listenHealth: { intervalMs: HEALTH_MS, reconnectAfterMs: 120_000 },
    },
  });
  b = await startSecondApp(t);
});
afterAll(async () => {
  await b?.close();
  await t?.close();
});

type SseEvent = { id?: string; event: string; data: any };

/** An event stream (fetch + eventsource-parser): its events, and whether it has ended. */
async function subscribe(base: string, query: string, variables: Record<string, unknown>, token: string, headers: Record<string, string> = {}) {
  const abort = new AbortController();
  const res = await fetch(`${base}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream', authorization: `Bearer ${token}`, ...headers },
    body: JSON.stringify({ query, variables }),
    signal: abort.signal,
  });
  const events: SseEvent[] = [];
  let ended = false;
  let waiting: (() => void) | undefined;
  const parser = createParser({
    onEvent: (e) => {
      if (!e.event) return;
      events.push({ id: e.id, event: e.event, data: e.data ? JSON.parse(e.data) : null });
      waiting?.();
    },
  });
  (async () => {
    try {
      const text = res.body!.pipeThrough(new TextDecoderStream()).getReader();
      for (let r = await text.read(); !r.done; r = await text.read()) parser.feed(r.value);
    } catch {
      // aborted
    }
    ended = true;
    waiting?.();
  })();
  /** The next event (or null when the stream ended), within `ms`. */
  async function next(ms = 5000): Promise<SseEvent | null> {
    const deadline = Date.now() + ms;
    while (!events.length && !ended) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error('no event in time');
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        waiting = () => (clearTimeout(timer), resolve());
      });
    }
    return events.shift() ?? null;
  }
  return { res, next, events, close: () => abort.abort(), get ended() { return ended; } };
}

const SITE_SUB = `subscription($siteId: ID!, $after: String) { siteStructureChanged(siteId: $siteId, after: $after) { event { seq type } site { id title } } }`;

/** A second token of a new member (its id too, to revoke it). */
async function memberWithToken(role: 'read' = 'read') {
  const member = await t.createUser(role);
  const r = await t.gql<{ createApiToken: { token: string; apiToken: { id: string } } }>(`mutation { createApiToken(input: { label: "live" }) { token apiToken { id } } }`, {}, member.token);
  expect(r.errors).toBeUndefined();
  return { member, token: r.data.createApiToken.token, tokenId: r.data.createApiToken.apiToken.id };
}

/** The first event of a refused subscription: its one error, then `complete`. */
async function refusal(s: Awaited<ReturnType<typeof subscribe>>) {
  const first = await s.next();
  expect(first!.event).toBe('next');
  expect(first!.data.data ?? null).toBeNull();
  expect((await s.next())!.event).toBe('complete');
  return first!.data.errors[0] as { message: string; extensions: { code: string; field?: string } };
}

/** Open: a 200 event stream that has neither failed nor ended. */
async function expectOpen(s: Awaited<ReturnType<typeof subscribe>>) {
  expect(s.res.status).toBe(200);
  expect(s.res.headers.get('content-type')).toMatch(/^text\/event-stream/);
  await new Promise((r) => setTimeout(r, 100));
  expect(s.events.filter((e) => e.event !== 'next' || e.data?.errors)).toEqual([]);
  expect(s.ended).toBe(false);
}

/** The seq of the last committed event now: `after` it, a stream starts exactly now. */
const logEnd = async () => Number((await t.app.prisma.event.aggregate({ _max: { seq: true } }))._max.seq ?? 0);

describe('subscription caps per token and per client address', () => {
  it('one token opens up to its cap and is then refused, while another token and another address still get one', async () => {
    const site = await createSite(t);
    const vars = { siteId: site.id };
    const a = await t.createUser('read');
    const bUser = await t.createUser('read');
    const c = await t.createUser('read');
    const d = await t.createUser('read');
    const ip1 = { 'x-forwarded-for': '198.51.100.1' };
    const ip2 = { 'x-forwarded-for': '198.51.100.2' };
    const before = t.app.live.size;

    // Token a: two streams (its cap), the third refused, from either address.
    const a1 = await subscribe(t.baseUrl, SITE_SUB, vars, a.token, ip1);
    const a2 = await subscribe(t.baseUrl, SITE_SUB, vars, a.token, ip1);
    await expectOpen(a1);
    await expectOpen(a2);
    for (const headers of [ip1, ip2]) {
      const err = await refusal(await subscribe(t.baseUrl, SITE_SUB, vars, a.token, headers));
      expect(err.extensions.code).toBe('RATE_LIMITED');
      expect(err.message).toMatch(/Too many open subscriptions for this token/);
      expect(err.message).not.toMatch(/database/i);
    }
    // Another token, same address: fine (the address holds 3 of its 4).
    const b1 = await subscribe(t.baseUrl, SITE_SUB, vars, bUser.token, ip1);
    await expectOpen(b1);
    const c1 = await subscribe(t.baseUrl, SITE_SUB, vars, c.token, ip1);
    await expectOpen(c1);
    // The address's cap: a fresh token from it is refused, from another address it is not.
    const fromIp1 = await refusal(await subscribe(t.baseUrl, SITE_SUB, vars, d.token, ip1));
    expect(fromIp1.extensions.code).toBe('RATE_LIMITED');
    expect(fromIp1.message).toMatch(/Too many open subscriptions from this address/);
    const d2 = await subscribe(t.baseUrl, SITE_SUB, vars, d.token, ip2);
    await expectOpen(d2);
    expect(t.app.live.size - before).toBe(5);

    // The streams that are open still deliver.
    const r = await t.rest('PATCH', `/v1/orgs/${t.org.id}/sites/${site.id}`, { title: 'Seen by all' });
    expect(r.status).toBe(200);
    for (const s of [a1, a2, b1, c1, d2]) {
      let e = await s.next();
      while (e && e.data?.data?.siteStructureChanged?.site?.title !== 'Seen by all') e = await s.next();
      expect(e!.data.data.siteStructureChanged.site.title).toBe('Seen by all');
    }

    // A cap counts open streams: one closed, its token may open another.
    a1.close();
    await expect.poll(() => t.app.live.size - before, { timeout: 5000 }).toBe(4);
    const a3 = await subscribe(t.baseUrl, SITE_SUB, vars, a.token, ip2);
    await expectOpen(a3);
    for (const s of [a2, a3, b1, c1, d2]) s.close();
    await expect.poll(() => t.app.live.size - before, { timeout: 5000 }).toBe(0);
  });
});

describe('the process cap and the slow-consumer cut say what happened', () => {
  it('a subscriber that falls behind its queue is cut with an error event, then complete', async () => {
    const c = await startSecondApp(t, { live: { ...t.app.config.live, queueLength: 2 } });
    try {
      const site = await createSite(t);
      const s = await subscribe(c.baseUrl, SITE_SUB, { siteId: site.id, after: String(await logEnd()) }, t.token);
      await expectOpen(s);
      // 20 events in one transaction: the feed hands them over at once, faster than deliveries
      // (each re-checks access and loads the site), so the queue of 2 overflows.
      await t.app.prisma.$executeRaw`INSERT INTO "Event" (id, type, "organizationId", source, "objectType", "objectId")
        SELECT gen_random_uuid()::text, 'site_updated', ${t.org.id}, 'graphql', 'site', ${site.id} FROM generate_series(1, 20)`;
      const got: SseEvent[] = [];
      for (let e = await s.next(); e && e.event !== 'complete'; e = await s.next()) got.push(e);
      expect(got.length).toBeLessThan(20);
      const last = got[got.length - 1];
      expect(last.id).toBeUndefined();
      expect(last.data.errors[0].extensions.code).toBe('SERVICE_UNAVAILABLE');
      expect(got.slice(0, -1).every((e) => e.data.data.siteStructureChanged.site.id === site.id)).toBe(true);
      await expect.poll(() => c.app.live.size, { timeout: 5000 }).toBe(0);
    } finally {
      await c.close();
    }
  });

  it('the feed’s refusals and its cut carry their own messages, not the database’s', async () => {
    const feed = new EventFeed(t.databaseUrl, pino({ level: 'silent' }), { maxSubscriptions: 1, maxPerToken: 5, maxPerIp: 5, queueLength: 2 });
    try {
      const first = await feed.subscribe(t.org.id, () => true, { tokenId: 'tok_a', ip: '192.0.2.1' });
      const over = feed.subscribe(t.org.id, () => true, { tokenId: 'tok_b', ip: '192.0.2.2' });
      await expect(over).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE', message: expect.stringMatching(/^This server holds its maximum of 1 subscriptions/) });
      first.close();
      expect(feed.size).toBe(0);
      await feed.subscribe(t.org.id, () => true, { tokenId: 'tok_b', ip: '192.0.2.2' });
    } finally {
      await feed.stop();
    }
    const sub = new LiveSubscription(0, 'org', () => true, 2, () => {});
    const row = (seq: number) => ({ seq, id: String(seq), type: 'x', occurredAt: new Date(), organizationId: 'org', userId: null, tokenId: null, objectType: 'site', objectId: 's', payload: {} }) as LiveEventRow;
    for (const seq of [1, 2, 3]) sub.push(row(seq));
    await expect(sub.next()).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE', message: expect.stringMatching(/fell more than 2 events behind.*Last-Event-ID/) });
  });
});

describe('quiet streams lose access within one keep-alive interval', () => {
  it('a stream whose token is revoked ends with no further event', async () => {
    const site = await createSite(t);
    const { member, token, tokenId } = await memberWithToken();
    const s = await subscribe(t.baseUrl, SITE_SUB, { siteId: site.id, after: String(await logEnd()) }, token);
    await expectOpen(s);
    const revoked = await t.gql(`mutation($id: ID!) { revokeApiToken(input: { id: $id }) { deleted } }`, { id: tokenId }, member.token);
    expect(revoked.errors).toBeUndefined();
    // Nothing happens on the site: the keep-alive re-check ends the stream (before, it stayed open until the next event).
    const last = await s.next(10 * KEEPALIVE_MS + 5000);
    expect(last!.event).toBe('complete');
    expect(s.events).toEqual([]);
  });

  it('a stream whose member is removed ends with no further event, and nothing about the site is sent', async () => {
    const site = await createSite(t);
    const reader = await t.createUser('read');
    const s = await subscribe(t.baseUrl, SITE_SUB, { siteId: site.id, after: String(await logEnd()) }, reader.token);
    await expectOpen(s);
    const sizeOpen = t.app.live.size;
    const removed = await t.rest('DELETE', `/v1/orgs/${t.org.id}/members/${reader.user.id}`);
    expect(removed.status).toBeLessThan(300);
    const last = await s.next(10 * KEEPALIVE_MS + 5000);
    expect(last!.event).toBe('complete');
    expect(s.events).toEqual([]);
    // It left the feed.
    await expect.poll(() => t.app.live.size, { timeout: 5000 }).toBe(sizeOpen - 1);
  });

  it('a stream that keeps its access stays open across several intervals', async () => {
    const site = await createSite(t);
    const reader = await t.createUser('read');
    const s = await subscribe(t.baseUrl, SITE_SUB, { siteId: site.id, after: String(await logEnd()) }, reader.token);
    await expectOpen(s);
    await new Promise((r) => setTimeout(r, 4 * KEEPALIVE_MS));
    expect(s.ended).toBe(false);
    expect(s.events).toEqual([]);
    s.close();
  });
});

describe('LISTEN health: a stalled invalidation connection turns the token cache off', () => {
  const me = (token: string) => fetch(`${b.baseUrl}/v1/user`, { headers: { authorization: `Bearer ${token}` } });
  /** Whether a request on process b read the token row (false: a cache hit). */
  async function readsToken(token: string): Promise<boolean> {
    const statements: string[] = [];
    const off = b.app.onQuery((sql) => statements.push(sql));
    try {
      expect((await me(token)).status).toBe(200);
    } finally {
      off();
    }
    return statements.some((s) => /"ApiToken"/.test(s));
  }

  it('a token revoked while notices do not arrive is refused at once; once they flow, the cache is used again', async () => {
    const tokens = b.app.tokens!;
    const { member, token, tokenId } = await memberWithToken();
    // Cached on b: a repeated request reads no token row.
    await expect.poll(() => readsToken(token), { timeout: 5000 }).toBe(false);

    // The connection stops reading (as behind a NAT that dropped it, or a half-open failover):
    // PostgreSQL still sends, nothing is heard.
    const socket = (tokens.listener.current as unknown as { connection: { stream: { pause(): void; resume(): void } } }).connection.stream;
    socket.pause();
    try {
      // The next self-notice misses its deadline: the cache goes off.
      await expect.poll(() => tokens.serving, { timeout: 10 * HEALTH_MS + 5000 }).toBe(false);
      expect(tokens.listener.stalled).toBe(true);
      // Someone notices: the gauge an operator alerts on.
      expect(await servingGauge(b.baseUrl)).toBe(0);

      // Revoked through the other process: its notice does not reach b …
      const revoked = await t.gql(`mutation($id: ID!) { revokeApiToken(input: { id: $id }) { deleted } }`, { id: tokenId }, member.token);
      expect(revoked.errors).toBeUndefined();
      // … yet b refuses the token on the very next request (before, its cache answered 200 for up to 5 minutes).
      expect((await me(token)).status).toBe(401);
      // Other tokens still work, straight from the database.
      expect(await readsToken(member.token)).toBe(true);
      expect(await readsToken(member.token)).toBe(true);
    } finally {
      socket.resume();
    }

    // Notices flow again: the cache serves again, and the revoked token stays refused.
    await expect.poll(() => tokens.serving, { timeout: 10 * HEALTH_MS + 5000 }).toBe(true);
    expect(tokens.listener.stalled).toBe(false);
    await expect.poll(() => readsToken(member.token), { timeout: 5000 }).toBe(false);
    expect((await me(token)).status).toBe(401);
    await expect.poll(() => servingGauge(b.baseUrl), { timeout: 5000 }).toBe(1);
  });

  it('a stall that lasts is cut: the connection is replaced and the cache serves again', async () => {
    const c = await startSecondApp(t, { listenHealth: { intervalMs: HEALTH_MS, reconnectAfterMs: 4 * HEALTH_MS } });
    try {
      const tokens = c.app.tokens!;
      await expect.poll(() => tokens.serving, { timeout: 5000 }).toBe(true);
      const stalled = tokens.listener.current!;
      // Never resumed: as a connection whose peer is gone without a reset.
      (stalled as unknown as { connection: { stream: { pause(): void } } }).connection.stream.pause();
      await expect.poll(() => tokens.serving, { timeout: 10 * HEALTH_MS + 5000 }).toBe(false);
      await expect.poll(() => tokens.listener.current !== undefined && tokens.listener.current !== stalled && tokens.serving, { timeout: 20 * HEALTH_MS + 10_000 }).toBe(true);
    } finally {
      await c.close();
    }
  });
});

/** `docgraph_token_cache_serving` from a process's /metrics. */
async function servingGauge(base: string): Promise<number> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const m = /^docgraph_token_cache_serving (\d+)$/m.exec(text);
  return m ? Number(m[1]) : NaN;
}

describe('a resume point beyond the log’s end', () => {
  it('`after` beyond the end is a BAD_REQUEST naming `after`; at the end, the stream works', async () => {
    const site = await createSite(t);
    const end = await logEnd();
    const err = await refusal(await subscribe(t.baseUrl, SITE_SUB, { siteId: site.id, after: String(end + 1000) }, t.token));
    expect(err.extensions).toMatchObject({ code: 'BAD_REQUEST', field: 'after' });
    expect(err.message).toMatch(/^after: is beyond the end of the event log/);
    // Not a number at all: the same field.
    const bad = await refusal(await subscribe(t.baseUrl, SITE_SUB, { siteId: site.id, after: 'x' }, t.token));
    expect(bad.extensions).toMatchObject({ code: 'BAD_REQUEST', field: 'after' });

    const s = await subscribe(t.baseUrl, SITE_SUB, { siteId: site.id, after: String(end) }, t.token);
    await expectOpen(s);
    const r = await t.rest('PATCH', `/v1/orgs/${t.org.id}/sites/${site.id}`, { title: 'Next' });
    expect(r.status).toBe(200);
    const e = await s.next();
    expect(e!.data.data.siteStructureChanged.site.title).toBe('Next');
    expect(Number(e!.id)).toBeGreaterThan(end);
    s.close();
  });

  it('a Last-Event-ID beyond the end is refused naming the header', async () => {
    const site = await createSite(t);
    const end = await logEnd();
    const err = await refusal(await subscribe(t.baseUrl, SITE_SUB, { siteId: site.id }, t.token, { 'last-event-id': String(end + 50) }));
    expect(err.extensions).toMatchObject({ code: 'BAD_REQUEST', field: 'Last-Event-ID' });
  });
});
