// Live updates (README "Live updates"): GraphQL subscriptions over Server-Sent Events, fed from the
// event log through LISTEN/NOTIFY. Two gateways on one database, as behind a load balancer: a
// change made through one reaches a subscriber of the other.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { createParser } from 'eventsource-parser';
import { createClient, type ExecutionResult } from 'graphql-sse';
import { startSecondApp, startTwoGateways, type TestApp } from './helpers.ts';
import { createSite, createSpace } from './fixtures/sites.ts';
import { LiveSubscription } from '../src/events/feed.ts';
import type { EventRow as LiveEventRow } from '../src/events/log.ts';

let t: TestApp;
let bUrl: string; // a second gateway process on the same database
let closeGateways: (() => Promise<void>) | undefined;

beforeAll(async () => {
  ({ t, bUrl, close: closeGateways } = await startTwoGateways());
});
afterAll(() => closeGateways?.());

type SseEvent = { id?: string; event: string; data: any };

/** The seq of the last committed event now (0 for an empty log). */
const logEndNow = async () => Number((await t.app.prisma.event.aggregate({ _max: { seq: true } }))._max.seq ?? 0);

/**
 * An event stream read with fetch and eventsource-parser.
 *
 * A subscription without a resume point starts at its gateway's feed position, which may trail
 * the log by the events of transactions still settling (README "Live updates"): it can first
 * deliver events committed just before it. Those (seq at most the log's end when subscribing)
 * are dropped here, so each test sees exactly what happened after it subscribed.
 */
async function subscribe(base: string, query: string, variables: Record<string, unknown>, token: string, headers: Record<string, string> = {}, keepEarlier = false) {
  const resumes = variables.after != null || Object.keys(headers).some((h) => h.toLowerCase() === 'last-event-id');
  const logEnd = resumes || keepEarlier ? undefined : await logEndNow();
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
  const comments = { count: 0 };
  const parser = createParser({
    onEvent: (e) => {
      if (!e.event) return;
      if (logEnd !== undefined && e.id !== undefined && Number(e.id) <= logEnd) return;
      events.push({ id: e.id, event: e.event, data: e.data ? JSON.parse(e.data) : null });
      waiting?.();
    },
    onComment: () => void comments.count++,
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
  async function next(ms = 3000): Promise<SseEvent | null> {
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
  /** Nothing arrives for `ms` (the stream may also stay open). */
  async function quiet(ms = 500) {
    await new Promise((r) => setTimeout(r, ms));
    return events.filter((e) => e.event === 'next');
  }
  return { res, next, quiet, close: () => abort.abort(), comments, get ended() { return ended; } };
}

const SITE_SUB = `subscription($siteId: ID!, $after: String) { siteStructureChanged(siteId: $siteId, after: $after) { event { id seq type objectId occurredAt } site { id title } } }`;

const renameSite = async (siteId: string, title: string, token = t.token) => {
  const r = await t.rest('PATCH', `/v1/orgs/${t.org.id}/sites/${siteId}`, { title }, token);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
};

/** Wait until the feed of `app` has joined (the first events after subscribing are not lost anyway, but the stream must be open). */
async function opened(s: Awaited<ReturnType<typeof subscribe>>) {
  expect(s.res.status).toBe(200);
  expect(s.res.headers.get('content-type')).toMatch(/^text\/event-stream/);
}

describe('subscriptions over SSE', () => {
  it('a change made on one gateway reaches a subscriber of the other, with its log position as the event id', async () => {
    const site = await createSite(t);
    const s = await subscribe(bUrl, SITE_SUB, { siteId: site.id }, t.token);
    await opened(s);
    const started = Date.now();
    await renameSite(site.id, 'Renamed on A');
    // Carried by NOTIFY, not by the feed's 5 s safety poll: well under a second on a quiet
    // machine; 3 s leaves a loaded 2-core CI room while still excluding the poll.
    const e = await s.next(3000);
    expect(Date.now() - started).toBeLessThan(3000);
    expect(e!.event).toBe('next');
    const change = e!.data.data.siteStructureChanged;
    expect(change.site).toEqual({ id: site.id, title: 'Renamed on A' });
    expect(change.event).toMatchObject({ type: 'site_updated', objectId: site.id });
    expect(e!.id).toBe(change.event.seq);
    // The event is the audit log's event.
    const row = await t.app.prisma.event.findUnique({ where: { id: change.event.id } });
    expect(String(row!.seq)).toBe(e!.id);
    s.close();
  });

  it('works through the graphql-sse client (its distinct connections mode): subscriptions, queries and errors', async () => {
    const site = await createSite(t);
    const client = createClient({ url: `${bUrl}/graphql`, headers: { authorization: `Bearer ${t.token}` }, retryAttempts: 0 });
    /** Runs `query` through the client; resolves with what it got once the connection is up (`connected`) and when it completes. */
    const run = (query: string, variables: Record<string, unknown>) => {
      const results: ExecutionResult<Record<string, unknown>, unknown>[] = [];
      let connected!: () => void;
      const isConnected = new Promise<void>((resolve) => (connected = resolve));
      let dispose!: () => void;
      const done = new Promise<typeof results>((resolve, reject) => {
        dispose = client.subscribe({ query, variables }, { next: (r) => void results.push(r), error: reject, complete: () => resolve(results) }, { connected: () => connected() });
      });
      return { results, isConnected, done, dispose };
    };
    try {
      // An exact start (`after` the log's end now): nothing committed before it can come first.
      const sub = run(SITE_SUB, { siteId: site.id, after: String(await logEndNow()) });
      await sub.isConnected;
      await renameSite(site.id, 'Through graphql-sse');
      await expect.poll(() => sub.results.length, { timeout: 3000 }).toBe(1);
      expect((sub.results[0].data as any).siteStructureChanged.site).toEqual({ id: site.id, title: 'Through graphql-sse' });
      sub.dispose();

      // A query over the same protocol: one result, then complete.
      expect(await run('query { viewer { user { id } } }', {}).done).toEqual([{ data: { viewer: { user: { id: t.adminUser.id } } } }]);
      // A subscription to a site nobody may see ends with the NOT_FOUND result, no data.
      const refused = await run(SITE_SUB, { siteId: 'site_doesnotexist' }).done;
      expect(refused).toHaveLength(1);
      expect(refused[0].errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    } finally {
      client.dispose();
    }
  });

  it('subscribing to something you cannot see answers NOT_FOUND and streams nothing', async () => {
    const site = await createSite(t);
    const outsider = await t.createUser();
    const s = await subscribe(bUrl, SITE_SUB, { siteId: site.id }, outsider.token);
    const first = await s.next();
    expect(first!.data.errors[0].extensions.code).toBe('NOT_FOUND');
    expect(first!.data.data ?? null).toBeNull();
    expect((await s.next())!.event).toBe('complete');
    // Same answer as for a site that does not exist.
    const none = await subscribe(bUrl, SITE_SUB, { siteId: 'site_doesnotexist' }, outsider.token);
    expect((await none.next())!.data.errors[0].extensions.code).toBe('NOT_FOUND');
    // Without a token: 401 before anything else.
    const anon = await fetch(`${bUrl}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'text/event-stream' }, body: JSON.stringify({ query: SITE_SUB, variables: { siteId: site.id } }) });
    expect(anon.status).toBe(401);
  });

  it('a subscriber to one site gets nothing of another site', async () => {
    const siteA = await createSite(t);
    const siteB = await createSite(t);
    const s = await subscribe(bUrl, SITE_SUB, { siteId: siteA.id }, t.token);
    await opened(s);
    await renameSite(siteB.id, 'B only');
    await renameSite(siteA.id, 'A now');
    const e = await s.next();
    expect(e!.data.data.siteStructureChanged.site.title).toBe('A now');
    expect(await s.quiet(300)).toEqual([]);
    s.close();
  });

  it('structure changes (a new section) are delivered with the site to re-render', async () => {
    const site = await createSite(t);
    const spaceId = await createSpace(t);
    const s = await subscribe(t.baseUrl, `subscription($siteId: ID!) { siteStructureChanged(siteId: $siteId) { event { type objectType } site { sections { id } } } }`, { siteId: site.id }, t.token);
    await opened(s);
    const r = await t.rest('POST', `/v1/orgs/${t.org.id}/sites/${site.id}/sections`, { spaceId, title: 'API' });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    const e = await s.next();
    const change = e!.data.data.siteStructureChanged;
    expect(change.event).toEqual({ type: 'site_section_created', objectType: 'site_section' });
    expect(change.site.sections.map((x: { id: string }) => x.id)).toContain(r.body.id);
    s.close();
  });

  it('a member removed during the stream gets no further event: the stream ends', async () => {
    const site = await createSite(t);
    const reader = await t.createUser('read');
    const s = await subscribe(bUrl, SITE_SUB, { siteId: site.id }, reader.token);
    await opened(s);
    await renameSite(site.id, 'seen');
    expect((await s.next())!.data.data.siteStructureChanged.site.title).toBe('seen');
    const removed = await t.rest('DELETE', `/v1/orgs/${t.org.id}/members/${reader.user.id}`);
    expect(removed.status).toBeLessThan(300);
    await renameSite(site.id, 'secret after removal');
    const last = await s.next();
    expect(last!.event).toBe('complete');
    expect(JSON.stringify(last)).not.toContain('secret');
  });

  it('a token revoked during the stream ends it', async () => {
    const site = await createSite(t);
    const member = await t.createUser('read');
    const second = await t.gql<{ createApiToken: { token: string; apiToken: { id: string } } }>(`mutation { createApiToken(input: { label: "live" }) { token apiToken { id } } }`, {}, member.token);
    const token = second.data.createApiToken.token;
    const s = await subscribe(bUrl, SITE_SUB, { siteId: site.id }, token);
    await opened(s);
    const revoked = await t.gql(`mutation($id: ID!) { revokeApiToken(input: { id: $id }) { deleted } }`, { id: second.data.createApiToken.apiToken.id }, member.token);
    expect(revoked.errors).toBeUndefined();
    await renameSite(site.id, 'after revocation');
    expect((await s.next())!.event).toBe('complete');
  });

  it('a reconnect with Last-Event-ID replays what it missed, then continues live, with no loss and no duplicate', async () => {
    const site = await createSite(t);
    const s1 = await subscribe(bUrl, SITE_SUB, { siteId: site.id }, t.token);
    await opened(s1);
    await renameSite(site.id, 'one');
    const first = await s1.next();
    s1.close();
    // Missed while disconnected (made on the other gateway).
    await renameSite(site.id, 'two');
    await renameSite(site.id, 'three');
    const s2 = await subscribe(bUrl, SITE_SUB, { siteId: site.id }, t.token, { 'last-event-id': first!.id! });
    await opened(s2);
    const replayed = [await s2.next(), await s2.next()];
    expect(replayed.map((e) => e!.data.data.siteStructureChanged.event.type)).toEqual(['site_updated', 'site_updated']);
    await renameSite(site.id, 'four');
    const live = await s2.next();
    const ids = [first, ...replayed, live].map((e) => Number(e!.id));
    expect(ids).toEqual([...ids].sort((x, y) => x - y));
    expect(new Set(ids).size).toBe(4);
    // The site as it is now at each delivery; the log has exactly these three events after the first.
    const log = await t.app.prisma.event.findMany({ where: { objectId: site.id, seq: { gt: BigInt(first!.id!) } }, orderBy: { seq: 'asc' } });
    expect(log.map((e) => String(e.seq))).toEqual([...replayed, live].map((e) => e!.id));
    expect(await s2.quiet(200)).toEqual([]);
    s2.close();
    // The `after` argument does the same.
    const s3 = await subscribe(t.baseUrl, SITE_SUB, { siteId: site.id, after: replayed[1]!.id }, t.token);
    expect((await s3.next())!.id).toBe(live!.id);
    s3.close();
  });

  it('a rolled-back change emits nothing; a transaction that commits late is delivered in log order', async () => {
    const site = await createSite(t);
    const s = await subscribe(bUrl, SITE_SUB, { siteId: site.id }, t.token);
    await opened(s);
    // A mutation refused by validation writes nothing.
    const bad = await t.rest('PATCH', `/v1/orgs/${t.org.id}/sites/${site.id}`, { title: '' });
    expect(bad.status).toBe(400);
    const insert = (db: pg.Client, type: string) =>
      db.query(`INSERT INTO "Event" (id, type, "organizationId", source, "objectType", "objectId") VALUES (gen_random_uuid()::text, $1, $2, 'graphql', 'site', $3) RETURNING seq`, [type, t.org.id, site.id]);
    const c1 = new pg.Client({ connectionString: t.databaseUrl });
    const c2 = new pg.Client({ connectionString: t.databaseUrl });
    await c1.connect();
    await c2.connect();
    try {
      // An event written, then rolled back.
      await c1.query('BEGIN');
      await insert(c1, 'site_rolled_back');
      await c1.query('ROLLBACK');
      // An event drawn first but committed after a later one.
      await c1.query('BEGIN');
      const early = await insert(c1, 'site_published');
      await c2.query('BEGIN');
      const late = await insert(c2, 'site_unpublished');
      await c2.query('COMMIT');
      expect(Number(late.rows[0].seq)).toBeGreaterThan(Number(early.rows[0].seq));
      // Held back while the earlier seq may still commit.
      expect(await s.quiet(300)).toEqual([]);
      await c1.query('COMMIT');
      const got = [await s.next(), await s.next()];
      expect(got.map((e) => e!.data.data.siteStructureChanged.event.type)).toEqual(['site_published', 'site_unpublished']);
      expect(got.map((e) => e!.id)).toEqual([String(early.rows[0].seq), String(late.rows[0].seq)]);
    } finally {
      await c1.end();
      await c2.end();
    }
    expect(await s.quiet(200)).toEqual([]);
    s.close();
  });

  it('without a resume point, a stream behind an open transaction also gets what committed just before it; with `after`, exactly what came after', async () => {
    const site = await createSite(t);
    const holder = new pg.Client({ connectionString: t.databaseUrl });
    await holder.connect();
    try {
      // A transaction that has drawn an event seq and not committed: the feed holds every later
      // row back (it may still commit, and delivery is in log order).
      await holder.query('BEGIN');
      await holder.query(`INSERT INTO "Event" (id, type, "organizationId", source, "objectType", "objectId") VALUES (gen_random_uuid()::text, 'other', $1, 'graphql', 'space', 'space_elsewhere')`, [t.org.id]);
      await renameSite(site.id, 'before subscribing');
      const logEnd = String(await logEndNow());
      const fresh = await subscribe(bUrl, SITE_SUB, { siteId: site.id }, t.token, {}, true);
      const exact = await subscribe(bUrl, SITE_SUB, { siteId: site.id, after: logEnd }, t.token);
      await opened(fresh);
      await opened(exact);
      await renameSite(site.id, 'after subscribing');
      await holder.query('ROLLBACK');
      const first = await fresh.next();
      const second = await fresh.next();
      // The site as it is at delivery, for both; the earlier event first, in log order.
      expect([first, second].map((e) => Number(e!.id))).toEqual([Number(logEnd), Number(logEnd) + 1]);
      expect([first, second].map((e) => e!.data.data.siteStructureChanged.site.title)).toEqual(['after subscribing', 'after subscribing']);
      const only = await exact.next();
      expect(only!.id).toBe(String(Number(logEnd) + 1));
      expect(await exact.quiet(200)).toEqual([]);
      fresh.close();
      exact.close();
    } finally {
      await holder.end();
    }
  });

  it('comments, change requests and space content have their own streams', async () => {
    const spaceId = await createSpace(t);
    const comments = await subscribe(bUrl, `subscription($spaceId: ID!) { commentActivity(spaceId: $spaceId) { event { type } commentId replyId comment { id } } }`, { spaceId }, t.token);
    const crs = await subscribe(bUrl, `subscription($spaceId: ID!) { changeRequestUpdated(spaceId: $spaceId) { event { type } changeRequest { id subject } } }`, { spaceId }, t.token);
    await opened(comments);
    await opened(crs);
    const posted = await t.rest('POST', `/v1/spaces/${spaceId}/comments`, { body: { markdown: 'Hello' } });
    expect(posted.status, JSON.stringify(posted.body)).toBeLessThan(300);
    const c = (await comments.next())!.data.data.commentActivity;
    expect(c).toEqual({ event: { type: 'comment_posted' }, commentId: posted.body.id, replyId: null, comment: { id: posted.body.id } });
    const cr = await t.rest('POST', `/v1/spaces/${spaceId}/change-requests`, { subject: 'Live' });
    expect(cr.status, JSON.stringify(cr.body)).toBeLessThan(300);
    const u = (await crs.next())!.data.data.changeRequestUpdated;
    expect(u).toEqual({ event: { type: 'change_request_opened' }, changeRequest: { id: cr.body.id, subject: 'Live' } });
    comments.close();
    crs.close();
    const content = await subscribe(bUrl, `subscription($spaceId: ID!) { spaceContentUpdated(spaceId: $spaceId) { event { type } revisionId space { revisionId revision { pages { title } } } } }`, { spaceId }, t.token);
    await opened(content);
    const edit = await t.gql(`mutation($input: ApplySpaceContentChangesInput!) { applySpaceContentChanges(input: $input) { revision { id } } }`, {
      input: { spaceId, changes: [{ operation: 'insert_page', title: 'Live page', document: { markdown: 'x' } }] },
    });
    expect(edit.errors).toBeUndefined();
    const upd = (await content.next())!.data.data.spaceContentUpdated;
    expect(upd.revisionId).toBe(edit.data.applySpaceContentChanges.revision.id);
    expect(upd.space.revisionId).toBe(upd.revisionId);
    expect(upd.space.revision.pages.map((p: { title: string }) => p.title)).toContain('Live page');
    content.close();
  });

  it('keep-alive comments, a cap on subscriptions per process, and shutdown ends open streams instead of waiting for them', async () => {
    const other = await startSecondApp(t, { live: { ...t.app.config.live, maxSubscriptions: 1, queueLength: 100, keepAliveMs: 100 } });
    const url = other.baseUrl;
    const site = await createSite(t);
    const s = await subscribe(url, SITE_SUB, { siteId: site.id }, t.token);
    await opened(s);
    await s.quiet(350);
    // The first comment flushes the headers; the others keep an idle stream open.
    expect(s.comments.count).toBeGreaterThanOrEqual(3);
    // Over MAX_SUBSCRIPTIONS: refused, nothing streams.
    const refused = await subscribe(url, SITE_SUB, { siteId: site.id }, t.token);
    expect((await refused.next())!.data.errors[0].extensions.code).toBe('SERVICE_UNAVAILABLE');
    expect((await refused.next())!.event).toBe('complete');
    const started = Date.now();
    await other.app.close({ graceMs: 5000 });
    expect(Date.now() - started).toBeLessThan(2000);
    expect((await s.next())!.event).toBe('complete');
  });
});

describe('a slow subscriber', () => {
  it('is ended with an error once its queue is full, instead of buffering forever', async () => {
    let closed = 0;
    const sub = new LiveSubscription(0, 'org', () => true, 2, () => closed++);
    const row = (seq: number) => ({ seq, id: String(seq), type: 'x', occurredAt: new Date(), organizationId: 'org', userId: null, tokenId: null, objectType: 'site', objectId: 's', payload: {} }) as LiveEventRow;
    sub.push(row(1));
    sub.push(row(2));
    sub.push(row(3));
    expect(closed).toBe(1);
    await expect(sub.next()).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
  });
});
