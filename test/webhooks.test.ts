// Signed webhooks: a committed change becomes one delivery per matching webhook (written by the
// trigger on "Event" in the change's transaction), POSTed by the `deliverWebhook` job with a
// Stripe-style signature; failures are retried and finally marked failed; private URLs are
// refused unless WEBHOOK_ALLOW_PRIVATE; admins only. Secret rotation: during the overlap every
// delivery carries a signature by the new and by the previous secret.
import crypto from 'node:crypto';
import http from 'node:http';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectAccess, startTestApp, type TestApp } from './helpers.ts';
import { waitWithin } from './fixtures/wait.ts';
import { recordEvent } from '../src/events/log.ts';
import { verifyWebhookSignature } from '../src/domain/webhooks.ts';
import { transaction } from '../src/db/transaction.ts';

type Received = { path: string; method: string; headers: http.IncomingHttpHeaders; body: string };

let t: TestApp;
let org: string;
let O: string;
let receiver: http.Server;
let base: string;
const received: Received[] = [];

beforeAll(async () => {
  t = await startTestApp({ worker: true, config: { webhooks: { allowPrivate: true, maxAttempts: 3 } } });
  org = t.org.id;
  O = `/v1/orgs/${org}`;
  receiver = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      received.push({ path: req.url ?? '', method: req.method ?? '', headers: req.headers, body });
      if (req.url?.startsWith('/fail')) {
        res.statusCode = 500;
        return res.end('receiver broke');
      }
      if (req.url?.startsWith('/redirect')) {
        res.statusCode = 302;
        res.setHeader('location', '/ok/redirected');
        return res.end();
      }
      res.statusCode = 204;
      res.end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(receiver.address() as { port: number }).port}`;
}, 60_000);
afterAll(async () => {
  await new Promise((r) => receiver?.close(r));
  await t?.close();
});

const waitFor = waitWithin(20_000);

async function createHook(body: Record<string, unknown>) {
  const r = await t.rest('POST', `${O}/webhooks`, body);
  expect(r.status, r.text).toBe(201);
  return r.body as { id: string; secret: string; url: string; eventTypes: string[]; active: boolean };
}
async function deliveries(hookId: string) {
  const r = await t.rest('GET', `${O}/webhooks/${hookId}/deliveries`);
  expect(r.status, r.text).toBe(200);
  return r.body.items as Array<{ id: string; status: string; attempts: number; lastStatusCode: number | null; lastError: string | null; nextAttemptAt: string | null; lastAttemptAt?: string; deliveredAt: string | null; event: { id: string; type: string } }>;
}
async function delivery(hookId: string, id: string) {
  return (await deliveries(hookId)).find((d) => d.id === id)!;
}
async function newSpace(title: string) {
  const r = await t.rest('POST', `${O}/spaces`, { title });
  expect(r.status, r.text).toBe(201);
  return r.body.id as string;
}
/** Another organization, the admin its admin too. */
async function newOrg(title: string) {
  const r = await t.gql(`mutation($title: String!) { createOrganization(input: { title: $title }) { id } }`, { title });
  expect(r.errors).toBeUndefined();
  return r.data.createOrganization.id as string;
}
const requestsTo = (path: string) => received.filter((r) => r.path === path);
/** Run a delivery's queued job now instead of after graphile-worker's backoff. */
const runJobNow = (deliveryId: string) =>
  t.app.prisma.$executeRawUnsafe(`UPDATE graphile_worker._private_jobs SET run_at = now() WHERE payload->>'deliveryId' = $1`, deliveryId);
/** Whether the job of a delivery is running now (locked by a worker). */
const jobRunning = async (app: TestApp, deliveryId: string) =>
  Number(
    (await app.app.prisma.$queryRawUnsafe<Array<{ n: bigint }>>(`SELECT count(*) AS n FROM graphile_worker._private_jobs WHERE payload->>'deliveryId' = $1 AND locked_at IS NOT NULL`, deliveryId))[0].n,
  ) > 0;
/**
 * The delivery once its attempt `n` is over: counted, its result recorded (an attempt in flight
 * shows none), and its job released by the worker.
 */
async function afterAttempt(hookId: string, id: string, n: number, app: TestApp = t) {
  return waitFor(`attempt ${n}`, async () => {
    const d = app === t ? await delivery(hookId, id) : await app.app.prisma.webhookDelivery.findUnique({ where: { id } });
    const over = d && d.attempts === n && (d.lastStatusCode !== null || d.lastError !== null || d.status !== 'pending');
    return over && !(await jobRunning(app, id)) && d;
  });
}
const queuedJobs = async (deliveryId: string) =>
  Number((await t.app.prisma.$queryRawUnsafe<Array<{ n: bigint }>>(`SELECT count(*) AS n FROM graphile_worker._private_jobs WHERE payload->>'deliveryId' = $1`, deliveryId))[0].n);

describe('a committed change is delivered, signed', () => {
  let hook: { id: string; secret: string };
  let spaceId: string;

  it('registers a webhook: 201 with its secret, shown once', async () => {
    hook = await createHook({ url: `${base}/ok/signed`, eventTypes: ['space_created'] });
    expect(hook).toMatchObject({ object: 'webhook', url: `${base}/ok/signed`, eventTypes: ['space_created'], active: true, organizationId: org });
    expect(hook.id).toMatch(/^wh_/);
    expect(hook.secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    const got = await t.rest('GET', `${O}/webhooks/${hook.id}`);
    expect(got.status).toBe(200);
    expect(got.body.secret).toBeUndefined();
    expect(got.body.urls.location).toMatch(new RegExp(`/v1/orgs/${org}/webhooks/${hook.id}$`));
    const list = await t.rest('GET', `${O}/webhooks`);
    expect(list.body.items.map((w: any) => w.id)).toContain(hook.id);
    expect(JSON.stringify(list.body)).not.toContain(hook.secret);
  });

  it('POSTs the event with headers and a signature that verifies with the secret', async () => {
    spaceId = await newSpace('Hooked');
    const req = await waitFor('the delivery', () => requestsTo('/ok/signed').find((r) => JSON.parse(r.body).object.id === spaceId));
    expect(req.method).toBe('POST');
    expect(req.headers['content-type']).toBe('application/json');
    expect(req.headers['user-agent']).toBe('docgraph-webhooks');
    expect(req.headers['x-webhook-id']).toBe(hook.id);
    expect(req.headers['x-event-type']).toBe('space_created');

    const body = JSON.parse(req.body);
    expect(body).toMatchObject({
      type: 'space_created',
      organizationId: org,
      object: { type: 'space', id: spaceId },
      actor: { type: 'user', id: t.adminUser.id },
      source: 'rest',
      payload: { title: 'Hooked' },
    });
    expect(req.headers['x-event-id']).toBe(body.id);
    expect(body.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(new Date(body.occurredAt).getTime()).not.toBeNaN();

    // The receiver's check, written out: HMAC-SHA256 of "<t>.<raw body>" with the secret.
    const sig = String(req.headers['x-signature']);
    const m = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(sig);
    expect(m, sig).toBeTruthy();
    const expected = crypto.createHmac('sha256', hook.secret).update(`${m![1]}.${req.body}`).digest('hex');
    expect(m![2]).toBe(expected);
    expect(Math.abs(Date.now() / 1000 - Number(m![1]))).toBeLessThan(300);
    // The helper the README shows accepts it, and refuses another body, another secret, an old timestamp.
    expect(verifyWebhookSignature(hook.secret, sig, req.body)).toBe(true);
    expect(verifyWebhookSignature(hook.secret, sig, req.body.replace('Hooked', 'Hacked'))).toBe(false);
    expect(verifyWebhookSignature(`${hook.secret}x`, sig, req.body)).toBe(false);
    expect(verifyWebhookSignature(hook.secret, sig, req.body, { nowSeconds: Number(m![1]) + 301 })).toBe(false);
  });

  it('records the delivery as succeeded, once', async () => {
    const [d] = await waitFor('succeeded', async () => {
      const list = await deliveries(hook.id);
      return list[0]?.status === 'succeeded' && list;
    });
    expect(d).toMatchObject({ object: 'webhook-delivery', webhookId: hook.id, status: 'succeeded', attempts: 1, lastStatusCode: 204, lastError: null, nextAttemptAt: null, event: { type: 'space_created' } });
    expect(d.deliveredAt).toBeTruthy();
    expect(d.id).toMatch(/^whd_[0-9A-Za-z]{22}$/);
    // Running its job again sends nothing (idempotent).
    const before = requestsTo('/ok/signed').length;
    await t.app.jobs.runNow('deliverWebhook', { deliveryId: d.id });
    expect(requestsTo('/ok/signed').length).toBe(before);
  });

  it('redelivers: a new delivery of the same event, sent again', async () => {
    const [d] = await deliveries(hook.id);
    const r = await t.rest('POST', `${O}/webhooks/${hook.id}/deliveries/${d.id}/redeliver`);
    expect(r.status, r.text).toBe(201);
    expect(r.body).toMatchObject({ object: 'webhook-delivery', status: 'pending', attempts: 0, event: { id: d.event.id, type: 'space_created' } });
    expect(r.body.id).not.toBe(d.id);
    const again = await waitFor('the redelivery', () => requestsTo('/ok/signed').find((x) => x.headers['x-delivery-id'] === r.body.id));
    expect(again.headers['x-event-id']).toBe(d.event.id);
    expect(JSON.parse(again.body).object.id).toBe(spaceId);
    await waitFor('redelivery succeeded', async () => (await delivery(hook.id, r.body.id))?.status === 'succeeded');
    expect((await deliveries(hook.id)).length).toBe(2);
  });
});

describe('which webhooks receive an event', () => {
  it('eventTypes filters; empty receives every event (its own webhook_created first); inactive receives none', async () => {
    const off = await createHook({ url: `${base}/ok/off`, active: false });
    const sites = await createHook({ url: `${base}/ok/sites`, eventTypes: ['site_created'] });
    const all = await createHook({ url: `${base}/ok/all` });
    // Deliveries are written in the change's transaction: the lists are complete when it answers.
    expect((await deliveries(all.id)).map((d) => d.event.type)).toEqual(['webhook_created']);

    await newSpace('Filtered');
    expect(await deliveries(sites.id)).toEqual([]);
    expect((await deliveries(all.id)).map((d) => d.event.type)).toEqual(['space_created', 'webhook_created']);

    const site = await t.rest('POST', `${O}/sites`, { title: 'Hooked site' });
    expect(site.status).toBe(201);
    expect((await deliveries(sites.id)).map((d) => d.event.type)).toEqual(['site_created']);
    expect((await deliveries(all.id)).map((d) => d.event.type)).toEqual(['site_created', 'space_created', 'webhook_created']);
    expect(await deliveries(off.id)).toEqual([]);

    // Changing the filter applies to the next event.
    const patched = await t.rest('PATCH', `${O}/webhooks/${sites.id}`, { eventTypes: ['space_created'] });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body.eventTypes).toEqual(['space_created']);
    await newSpace('Now matched');
    expect((await deliveries(sites.id)).map((d) => d.event.type)).toEqual(['space_created', 'site_created']);
    await waitFor('all sent', () => requestsTo('/ok/all').length >= 3);
    expect(requestsTo('/ok/off')).toEqual([]);
  });

  it('a rolled-back change produces no delivery; the same change committed does', async () => {
    const hook = await createHook({ url: `${base}/ok/tx`, eventTypes: ['space_updated'] });
    const actor = { viewer: null, source: 'job' as const, clock: t.clock };
    const event = { type: 'space_updated' as const, organizationId: org, objectId: 'space_rolledback', payload: { title: 'Rolled back', fields: [] } };
    await expect(
      transaction(t.app.prisma, async (tx) => {
        await recordEvent(tx, actor, event);
        throw new Error('the change fails after recording its event');
      }),
    ).rejects.toThrow('the change fails');
    expect(await deliveries(hook.id)).toEqual([]);
    expect(await t.app.prisma.webhookDelivery.count({ where: { webhookId: hook.id } })).toBe(0);

    await transaction(t.app.prisma, (tx) => recordEvent(tx, actor, event));
    expect((await deliveries(hook.id)).map((d) => d.event.type)).toEqual(['space_updated']);
    const req = await waitFor('committed delivery', () => requestsTo('/ok/tx')[0]);
    expect(JSON.parse(req.body)).toMatchObject({ object: { id: 'space_rolledback' }, actor: { type: 'system', id: 'system' }, source: 'job' });
  });
});

describe('failures', () => {
  it('a receiver answering 500 is retried with backoff, then marked failed after WEBHOOK_MAX_ATTEMPTS (3 here)', async () => {
    const hook = await createHook({ url: `${base}/fail/retry`, eventTypes: ['space_created'] });
    await newSpace('Retried');
    const [{ id }] = await deliveries(hook.id);
    const first = await afterAttempt(hook.id, id, 1);
    expect(first.lastStatusCode).toBe(500);
    expect(first.status).toBe('pending');
    expect(first.lastError).toMatch(/HTTP 500.*receiver broke/);
    // The next attempt is graphile-worker's backoff after one failure: e^1 ≈ 2.7 s later.
    const wait = new Date(first.nextAttemptAt!).getTime() - new Date(first.lastAttemptAt!).getTime();
    expect(wait).toBeGreaterThan(2000);
    expect(wait).toBeLessThan(5000);
    expect(await queuedJobs(id)).toBe(1);

    await runJobNow(id);
    const second = await afterAttempt(hook.id, id, 2);
    expect(second.status).toBe('pending');
    // After two failures: e^2 ≈ 7.4 s.
    expect(new Date(second.nextAttemptAt!).getTime() - new Date(second.lastAttemptAt!).getTime()).toBeGreaterThan(6000);

    await runJobNow(id);
    const last = await waitFor('failed', async () => {
      const d = await delivery(hook.id, id);
      return d.status === 'failed' && d;
    });
    expect(last).toMatchObject({ attempts: 3, lastStatusCode: 500, nextAttemptAt: null, deliveredAt: null });
    // Three requests of the same event, and nothing left in the queue.
    const sent = requestsTo('/fail/retry');
    expect(sent.length).toBe(3);
    expect(new Set(sent.map((r) => r.headers['x-event-id'])).size).toBe(1);
    await waitFor('job done', async () => (await queuedJobs(id)) === 0);
  });

  it('when the queue gives up first, onGiveUp marks the delivery failed', async () => {
    const hook = await createHook({ url: `${base}/fail/giveup`, eventTypes: ['space_created'] });
    await newSpace('Given up');
    const [{ id }] = await deliveries(hook.id);
    await afterAttempt(hook.id, id, 1);
    // The job's own ceiling reached on the next attempt (as when a worker died during the others).
    await t.app.prisma.$executeRawUnsafe(`UPDATE graphile_worker._private_jobs SET max_attempts = 2, run_at = now() WHERE payload->>'deliveryId' = $1`, id);
    const d = await waitFor('failed', async () => {
      const x = await delivery(hook.id, id);
      return x.status === 'failed' && x;
    });
    expect(d).toMatchObject({ attempts: 2, lastStatusCode: 500, nextAttemptAt: null });
  });

  it('redirects are not followed: a 302 is a failed attempt', async () => {
    const hook = await createHook({ url: `${base}/redirect/here`, eventTypes: ['space_created'] });
    await newSpace('Redirected');
    const [{ id }] = await deliveries(hook.id);
    const d = await afterAttempt(hook.id, id, 1);
    expect(d, JSON.stringify(d)).toMatchObject({ status: 'pending', lastStatusCode: 302 });
    expect(requestsTo('/ok/redirected')).toEqual([]);
  });

  it('deactivating a webhook fails its pending deliveries and refuses redelivery (409)', async () => {
    const hook = await createHook({ url: `${base}/fail/off`, eventTypes: ['space_created'] });
    await newSpace('Switched off');
    const [{ id }] = await deliveries(hook.id);
    await afterAttempt(hook.id, id, 1);
    expect((await t.rest('PATCH', `${O}/webhooks/${hook.id}`, { active: false })).status).toBe(200);
    await runJobNow(id);
    const d = await waitFor('failed', async () => {
      const x = await delivery(hook.id, id);
      return x.status === 'failed' && x;
    });
    expect(d.attempts).toBe(1);
    expect(d.lastError).toMatch(/inactive/);
    const r = await t.rest('POST', `${O}/webhooks/${hook.id}/deliveries/${id}/redeliver`);
    expect(r.status, r.text).toBe(409);
    expect(r.body).toEqual({ error: { code: 409, message: expect.stringMatching(/inactive/) } });
  });
});

describe('private addresses (WEBHOOK_ALLOW_PRIVATE off, the default)', () => {
  let strict: TestApp;
  beforeAll(async () => {
    strict = await startTestApp({ worker: true, config: { webhooks: { allowPrivate: false, maxAttempts: 3 } } });
  }, 60_000);
  afterAll(async () => {
    await strict?.close();
  });

  it('refuses loopback and private URLs at registration and update (400 naming url), nothing registered', async () => {
    const SO = `/v1/orgs/${strict.org.id}`;
    for (const url of [`${base}/ok/private`, 'http://localhost:9/x', 'http://10.1.2.3/hook', 'http://[::1]/hook', 'http://169.254.169.254/latest']) {
      const r = await strict.rest('POST', `${SO}/webhooks`, { url });
      expect(r.status, `${url}: ${r.text}`).toBe(400);
      expect(r.body.error.message).toMatch(/\burl\b/);
    }
    expect(await strict.app.prisma.webhook.count()).toBe(0);
  });

  it('checks again at every delivery: a webhook whose host now resolves privately is not called', async () => {
    // As if its DNS answer changed after registration: the row holds a loopback URL.
    const hook = await strict.app.prisma.webhook.create({
      data: { id: 'wh_resolvesprivately00001', organizationId: strict.org.id, url: `${base}/ok/rebound`, secret: 'whsec_test', eventTypes: ['space_created'] },
    });
    const patch = await strict.rest('PATCH', `/v1/orgs/${strict.org.id}/webhooks/${hook.id}`, { url: `${base}/ok/rebound2` });
    expect(patch.status).toBe(400);
    expect(patch.body.error.message).toMatch(/\burl\b/);
    const r = await strict.rest('POST', `/v1/orgs/${strict.org.id}/spaces`, { title: 'Rebound' });
    expect(r.status).toBe(201);
    const { id } = await waitFor('the delivery', () => strict.app.prisma.webhookDelivery.findFirst({ where: { webhookId: hook.id } }));
    const d = await afterAttempt(hook.id, id, 1, strict);
    expect(d.lastStatusCode).toBeNull();
    expect(d.lastError).toMatch(/non-public address/);
    expect(requestsTo('/ok/rebound')).toEqual([]);
  });
});

describe('input and missing objects', () => {
  it('bad input: 400 naming the field, nothing registered', async () => {
    const count = await t.app.prisma.webhook.count();
    const cases: Array<[unknown, string]> = [
      [{}, 'url'],
      [{ url: 'not a url' }, 'url'],
      [{ url: 'ftp://example.com/hook' }, 'url'],
      [{ url: `${base}/ok`, eventTypes: ['Space Created'] }, 'eventTypes'],
      [{ url: `${base}/ok`, eventTypes: 'space_created' }, 'eventTypes'],
      [{ url: `${base}/ok`, active: 'yes' }, 'active'],
      [{ url: `${base}/ok`, secret: 'mine' }, 'secret'],
    ];
    for (const [body, field] of cases) {
      const r = await t.rest('POST', `${O}/webhooks`, body);
      expect(r.status, `${JSON.stringify(body)}: ${r.text}`).toBe(400);
      expect(r.body.error.message, JSON.stringify(body)).toMatch(new RegExp(`\\b${field}\\b`));
    }
    expect(await t.app.prisma.webhook.count()).toBe(count);
    const hook = await createHook({ url: `${base}/ok/input`, eventTypes: ['translation_deleted'] });
    const r = await t.rest('PATCH', `${O}/webhooks/${hook.id}`, { eventTypes: [''] });
    expect(r.status).toBe(400);
    expect(r.body.error.message).toMatch(/\beventTypes\b/);
    expect((await t.rest('GET', `${O}/webhooks/${hook.id}`)).body.eventTypes).toEqual(['translation_deleted']);
  });

  it('event types come from the event catalogue: a typo is a 400 naming eventTypes.<i>, on create and update, in REST and GraphQL; nothing changes', async () => {
    const count = await t.app.prisma.webhook.count();
    const created = await t.rest('POST', `${O}/webhooks`, { url: `${base}/ok/typo`, eventTypes: ['space_create'] });
    expect(created.status).toBe(400);
    expect(created.body.error.message).toMatch(/^eventTypes\.0: unknown event type "space_create"/);
    const second = await t.rest('POST', `${O}/webhooks`, { url: `${base}/ok/typo`, eventTypes: ['space_created', 'space_create'] });
    expect(second.status).toBe(400);
    expect(second.body.error.message).toMatch(/^eventTypes\.1: /);
    const gqlCreate = await t.gql(`mutation($input: CreateWebhookInput!) { createWebhook(input: $input) { webhook { id } } }`, {
      input: { organizationId: org, url: `${base}/ok/typo`, eventTypes: ['space_create'] },
    });
    expect(gqlCreate.errors?.map((e) => e.extensions?.code)).toEqual(['BAD_REQUEST']);
    expect(gqlCreate.errors?.[0].message).toMatch(/^eventTypes\.0: /);
    expect(gqlCreate.errors?.[0].extensions?.field).toBe('eventTypes.0');
    expect(await t.app.prisma.webhook.count()).toBe(count);

    const hook = await createHook({ url: `${base}/ok/typo`, eventTypes: ['space_created'] });
    const patched = await t.rest('PATCH', `${O}/webhooks/${hook.id}`, { eventTypes: ['space_create'] });
    expect(patched.status).toBe(400);
    expect(patched.body.error.message).toMatch(/^eventTypes\.0: /);
    const gqlUpdate = await t.gql(`mutation($input: UpdateWebhookInput!) { updateWebhook(input: $input) { webhook { id } } }`, { input: { id: hook.id, eventTypes: ['space_create'] } });
    expect(gqlUpdate.errors?.map((e) => e.extensions?.code)).toEqual(['BAD_REQUEST']);
    expect(gqlUpdate.errors?.[0].message).toMatch(/^eventTypes\.0: /);
    expect((await t.rest('GET', `${O}/webhooks/${hook.id}`)).body.eventTypes).toEqual(['space_created']);
  });

  it('unknown webhook or delivery: 404; delete is idempotent (205, then 204) and takes the deliveries along', async () => {
    const missing = `${O}/webhooks/wh_0000000000000000000000`;
    for (const [method, path] of [
      ['GET', missing],
      ['PATCH', missing],
      ['GET', `${missing}/deliveries`],
      ['GET', `${O}/webhooks/not-an-id`],
      ['POST', `${missing}/deliveries/whd_0000000000000000000000/redeliver`],
    ] as const) {
      const r = await t.rest(method, path, method === 'PATCH' ? { active: false } : undefined);
      expect(r.status, `${method} ${path}`).toBe(404);
    }
    const a = await createHook({ url: `${base}/ok/del-a`, eventTypes: ['space_created'] });
    const b = await createHook({ url: `${base}/ok/del-b`, eventTypes: ['space_created'] });
    await newSpace('Before delete');
    const [da] = await deliveries(a.id);
    // A delivery of another webhook under this one's path: 404.
    const cross = await t.rest('POST', `${O}/webhooks/${b.id}/deliveries/${da.id}/redeliver`);
    expect(cross.status).toBe(404);

    expect((await t.rest('DELETE', `${O}/webhooks/${a.id}`)).status).toBe(205);
    expect((await t.rest('DELETE', `${O}/webhooks/${a.id}`)).status).toBe(204);
    expect((await t.rest('GET', `${O}/webhooks/${a.id}`)).status).toBe(404);
    expect(await t.app.prisma.webhookDelivery.count({ where: { webhookId: a.id } })).toBe(0);
    // Its queued job finds nothing to send.
    await t.app.jobs.runNow('deliverWebhook', { deliveryId: da.id });
    // Another organization's path: 404 even for the webhook's id.
    const other = await newOrg('Elsewhere');
    expect((await t.rest('GET', `/v1/orgs/${other}/webhooks/${b.id}`)).status).toBe(404);
  });
});

describe('access: organization admins only', () => {
  it('list, create, get, update, delete, deliveries, redeliver', async () => {
    const hook = await createHook({ url: `${base}/ok/access`, eventTypes: ['webhook_created', 'space_created'] });
    const [d] = await waitFor('a delivery', async () => {
      const list = await deliveries(hook.id);
      return list.length > 0 && list;
    });
    const H = `${O}/webhooks/${hook.id}`;
    const denied = { anonymous: 401, outsider: 404, guest: 403, reader: 403, editor: 403, creator: 403 };
    await expectAccess(t, { method: 'GET', path: `${O}/webhooks` }, { ...denied, admin: 200 });
    await expectAccess(t, { method: 'POST', path: `${O}/webhooks`, body: { url: `${base}/ok/access2` } }, { ...denied, admin: 201 });
    await expectAccess(t, { method: 'GET', path: H }, { ...denied, admin: 200 });
    await expectAccess(t, { method: 'PATCH', path: H, body: { active: true } }, { ...denied, admin: 200 });
    await expectAccess(t, { method: 'GET', path: `${H}/deliveries` }, { ...denied, admin: 200 });
    await expectAccess(t, { method: 'POST', path: `${H}/deliveries/${d.id}/redeliver` }, { ...denied, admin: 201 });
    await expectAccess(t, { method: 'DELETE', path: H }, { ...denied, admin: 205 });
  });
});

describe('GraphQL', () => {
  it('createWebhook (secret once), Organization.webhooks, Webhook.deliveries with cursors, node(id:), updateWebhook, redeliver, deleteWebhook', async () => {
    const created = await t.gql(
      `mutation($input: CreateWebhookInput!) { createWebhook(input: $input) { secret webhook { id url eventTypes active organizationId } } }`,
      { input: { organizationId: org, url: `${base}/ok/graphql`, eventTypes: ['space_created'] } },
    );
    expect(created.errors).toBeUndefined();
    const { secret, webhook } = created.data.createWebhook;
    expect(secret).toMatch(/^whsec_/);
    expect(webhook).toMatchObject({ url: `${base}/ok/graphql`, eventTypes: ['space_created'], active: true, organizationId: org });

    await newSpace('GraphQL one');
    await newSpace('GraphQL two');
    const q = `query($org: ID!, $after: String) { organization(id: $org) { webhooks(first: 100) { totalCount nodes { id } }
      } node(id: "${webhook.id}") { ... on Webhook { id deliveries(first: 1, after: $after) { totalCount pageInfo { hasNextPage endCursor } nodes { id eventType status eventPosition } } } } }`;
    const page1 = await t.gql(q, { org });
    expect(page1.errors).toBeUndefined();
    expect(page1.data.organization.webhooks.nodes.map((n: any) => n.id)).toContain(webhook.id);
    const dl = page1.data.node.deliveries;
    expect(dl.totalCount).toBe(2);
    expect(dl.pageInfo.hasNextPage).toBe(true);
    const page2 = await t.gql(q, { org, after: dl.pageInfo.endCursor });
    const second = page2.data.node.deliveries.nodes[0];
    expect(second.id).not.toBe(dl.nodes[0].id);
    expect(BigInt(second.eventPosition)).toBeLessThan(BigInt(dl.nodes[0].eventPosition));

    // A member who is not an admin sees no node and gets FORBIDDEN on the list.
    const reader = await t.as('reader');
    const hiddenNode = await t.gql(`query { node(id: "${webhook.id}") { id } }`, {}, reader.token);
    expect(hiddenNode.data?.node ?? null).toBeNull();
    expect(hiddenNode.errors?.map((e) => e.extensions?.code)).toEqual(['NOT_FOUND']);
    const hiddenList = await t.gql(`query($org: ID!) { organization(id: $org) { webhooks { totalCount } } }`, { org }, reader.token);
    expect(hiddenList.errors?.map((e) => e.extensions?.code)).toEqual(['FORBIDDEN']);

    const updated = await t.gql(`mutation($input: UpdateWebhookInput!) { updateWebhook(input: $input) { webhook { id active eventTypes } } }`, {
      input: { id: webhook.id, eventTypes: [] },
    });
    expect(updated.errors).toBeUndefined();
    expect(updated.data.updateWebhook.webhook).toEqual({ id: webhook.id, active: true, eventTypes: [] });

    const bad = await t.gql(`mutation($input: UpdateWebhookInput!) { updateWebhook(input: $input) { webhook { id } } }`, { input: { id: webhook.id, url: 'gopher://x' } });
    expect(bad.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_REQUEST', field: 'url' });

    const redelivered = await t.gql(`mutation($input: RedeliverWebhookDeliveryInput!) { redeliverWebhookDelivery(input: $input) { delivery { id status attempts eventId webhookId } } }`, {
      input: { id: second.id },
    });
    expect(redelivered.errors).toBeUndefined();
    expect(redelivered.data.redeliverWebhookDelivery.delivery).toMatchObject({ status: 'pending', attempts: 0, webhookId: webhook.id });

    const del = `mutation($input: DeleteWebhookInput!) { deleteWebhook(input: $input) { deleted deletedId } }`;
    expect((await t.gql(del, { input: { id: webhook.id } })).data.deleteWebhook).toEqual({ deleted: true, deletedId: webhook.id });
    expect((await t.gql(del, { input: { id: webhook.id } })).data.deleteWebhook).toEqual({ deleted: false, deletedId: webhook.id });
  });

  it('webhook changes are in the audit log', async () => {
    const hook = await createHook({ url: `${base}/ok/audit`, eventTypes: ['saml_provider_deleted'] });
    const events = await t.app.prisma.event.findMany({ where: { objectId: hook.id }, orderBy: { seq: 'asc' } });
    expect(events.map((e) => e.type)).toEqual(['webhook_created']);
    expect(JSON.stringify(events[0].payload)).not.toContain(hook.secret);
  });
});

describe('secret rotation', () => {
  const HOUR = 60 * 60 * 1000;
  /** The `t` and the `v1=` values of a signature header, in order. */
  const signatures = (header: unknown) => {
    const items = String(header).split(',');
    return { t: Number(items.find((i) => i.startsWith('t='))?.slice(2)), v1: items.filter((i) => i.startsWith('v1=')).map((i) => i.slice(3)) };
  };
  const hmac = (secret: string, ts: number, body: string) => crypto.createHmac('sha256', secret).update(`${ts}.${body}`).digest('hex');
  /** The request the receiver got at `path` for a new space titled `title`, created now. */
  async function deliveredSpace(path: string, title: string) {
    const spaceId = await newSpace(title);
    return waitFor(`the delivery of ${title}`, () => requestsTo(path).find((r) => JSON.parse(r.body).object.id === spaceId));
  }
  /** Verified as a receiver does, at the app clock's time (deliveries are signed at it). */
  const verifies = (secret: string, req: Received) => verifyWebhookSignature(secret, String(req.headers['x-signature']), req.body, { nowSeconds: Math.floor(t.clock.now().getTime() / 1000) });
  const rotate = (hookId: string, body: unknown = {}, token?: string | null) => t.rest('POST', `${O}/webhooks/${hookId}/rotate-secret`, body, token);
  const stored = (hookId: string) => t.app.prisma.webhook.findUniqueOrThrow({ where: { id: hookId } });

  it('REST: a new secret, shown once; the old one keeps signing during the overlap (two v1=), then only the new one', async () => {
    const hook = await createHook({ url: `${base}/ok/rotate`, eventTypes: ['space_created'] });
    const before = await deliveredSpace('/ok/rotate', 'Before rotation');
    expect(signatures(before.headers['x-signature']).v1).toHaveLength(1);
    expect(verifies(hook.secret, before)).toBe(true);
    expect((await t.rest('GET', `${O}/webhooks/${hook.id}`)).body.previousSecretExpiresAt).toBeNull();

    const r = await rotate(hook.id);
    expect(r.status, r.text).toBe(200);
    expect(r.body).toMatchObject({ object: 'webhook', id: hook.id, url: `${base}/ok/rotate`, eventTypes: ['space_created'], active: true });
    expect(r.body.secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect(r.body.secret).not.toBe(hook.secret);
    expect(r.text).not.toContain(hook.secret);
    // Default overlap: 24 hours from now.
    const expiresAt = new Date(r.body.previousSecretExpiresAt).getTime();
    expect(Math.abs(expiresAt - (t.clock.now().getTime() + 24 * HOUR))).toBeLessThan(60_000);
    const got = await t.rest('GET', `${O}/webhooks/${hook.id}`);
    expect(got.body.previousSecretExpiresAt).toBe(r.body.previousSecretExpiresAt);
    expect(got.body.secret).toBeUndefined();
    expect(got.text).not.toContain(hook.secret);
    expect(got.text).not.toContain(r.body.secret);

    // During the overlap: `t=…,v1=<new>,v1=<old>` over the same timestamp and body.
    const during = await deliveredSpace('/ok/rotate', 'During the overlap');
    const sig = signatures(during.headers['x-signature']);
    expect(String(during.headers['x-signature'])).toMatch(/^t=\d+,v1=[0-9a-f]{64},v1=[0-9a-f]{64}$/);
    expect(sig.v1).toEqual([hmac(r.body.secret, sig.t, during.body), hmac(hook.secret, sig.t, during.body)]);
    expect(verifies(r.body.secret, during)).toBe(true);
    expect(verifies(hook.secret, during)).toBe(true);
    expect(verifies(`${hook.secret}x`, during)).toBe(false);

    // Past the overlap: only the new secret signs.
    t.clock.advance(24 * HOUR + 60_000);
    try {
      expect((await t.rest('GET', `${O}/webhooks/${hook.id}`)).body.previousSecretExpiresAt).toBeNull();
      const after = await deliveredSpace('/ok/rotate', 'After the overlap');
      expect(signatures(after.headers['x-signature']).v1).toHaveLength(1);
      expect(verifies(r.body.secret, after)).toBe(true);
      expect(verifies(hook.secret, after)).toBe(false);
    } finally {
      t.clock.reset();
    }
  });

  it('expiresInHours 0: the old secret stops at once; rotating during an overlap drops the older secret', async () => {
    const hook = await createHook({ url: `${base}/ok/rotate-now`, eventTypes: ['space_created'] });
    const now = await rotate(hook.id, { expiresInHours: 0 });
    expect(now.status, now.text).toBe(200);
    expect(now.body.previousSecretExpiresAt).toBeNull();
    const req = await deliveredSpace('/ok/rotate-now', 'Rotated at once');
    expect(signatures(req.headers['x-signature']).v1).toHaveLength(1);
    expect(verifies(now.body.secret, req)).toBe(true);
    expect(verifies(hook.secret, req)).toBe(false);

    // A → B with a 2-hour overlap, then B → C: C and B sign, A no longer does.
    const b = await rotate(hook.id, { expiresInHours: 2 });
    expect(Math.abs(new Date(b.body.previousSecretExpiresAt).getTime() - (t.clock.now().getTime() + 2 * HOUR))).toBeLessThan(60_000);
    const c = await rotate(hook.id, { expiresInHours: 1 });
    expect(c.status, c.text).toBe(200);
    const twice = await deliveredSpace('/ok/rotate-now', 'Rotated twice');
    const sig = signatures(twice.headers['x-signature']);
    expect(sig.v1).toEqual([hmac(c.body.secret, sig.t, twice.body), hmac(b.body.secret, sig.t, twice.body)]);
    expect(verifies(now.body.secret, twice)).toBe(false);
  });

  it('two rotations at once: one wins, the other is a 409, and the winner’s secret is the one that signs', async () => {
    const hook = await createHook({ url: `${base}/ok/rotate-race`, eventTypes: ['space_created'] });
    // Hold the webhook's row so both rotations read the same secret and then queue on the update.
    const holder = new pg.Client({ connectionString: t.databaseUrl });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT 1 FROM "Webhook" WHERE id = $1 FOR UPDATE', [hook.id]);
      const racing = Promise.all([rotate(hook.id, { expiresInHours: 0 }), rotate(hook.id, { expiresInHours: 0 })]);
      // (Asked outside the holder's transaction: pg_stat_activity is a snapshot per transaction.)
      await waitFor('both rotations waiting on the row', async () => {
        const [{ n }] = await t.app.prisma.$queryRaw<{ n: number }[]>`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE 'UPDATE%Webhook%'`;
        return n === 2 || undefined;
      });
      await holder.query('COMMIT');
      const answers = await racing;
      expect(answers.map((r) => r.status).sort()).toEqual([200, 409]);
      const winner = answers.find((r) => r.status === 200)!;
      expect(answers.find((r) => r.status === 409)!.body.error.message).toMatch(/rotated meanwhile/);
      expect((await stored(hook.id)).secret).toBe(winner.body.secret);
      const req = await deliveredSpace('/ok/rotate-race', 'After the race');
      expect(verifies(winner.body.secret, req)).toBe(true);
      expect(verifies(hook.secret, req)).toBe(false);
    } finally {
      await holder.end();
    }
  });

  it('records webhook_secret_rotated, with no secret in the event', async () => {
    const hook = await createHook({ url: `${base}/ok/rotate-audit`, eventTypes: ['saml_provider_deleted'] });
    const r = await rotate(hook.id, { expiresInHours: 3 });
    expect(r.status, r.text).toBe(200);
    const events = await t.app.prisma.event.findMany({ where: { objectId: hook.id }, orderBy: { seq: 'asc' } });
    expect(events.map((e) => e.type)).toEqual(['webhook_created', 'webhook_secret_rotated']);
    expect(events[1]).toMatchObject({ organizationId: org, objectType: 'webhook', userId: t.adminUser.id, source: 'rest' });
    expect(events[1].payload).toEqual({ expiresInHours: 3, previousSecretExpiresAt: r.body.previousSecretExpiresAt });
    const everything = JSON.stringify(events, (_k, v) => (typeof v === 'bigint' ? v.toString() : v));
    expect(everything).not.toContain(hook.secret);
    expect(everything).not.toContain(r.body.secret);
    // The audit log answers it, without a secret either.
    const audit = await t.rest('GET', `${O}/audit-events?limit=100`);
    expect(audit.status, audit.text).toBe(200);
    expect(audit.text).toContain('webhook_secret_rotated');
    expect(audit.text).not.toContain(r.body.secret);
    expect(audit.text).not.toContain(hook.secret);
  });

  it('bad expiresInHours: 400 naming it, and the secret is unchanged', async () => {
    const hook = await createHook({ url: `${base}/ok/rotate-bad`, eventTypes: ['space_created'] });
    for (const body of [{ expiresInHours: 169 }, { expiresInHours: -1 }, { expiresInHours: 1.5 }, { expiresInHours: '24' }, { expiresInHours: null }]) {
      const r = await rotate(hook.id, body);
      expect(r.status, `${JSON.stringify(body)}: ${r.text}`).toBe(400);
      expect(r.body.error.message, JSON.stringify(body)).toMatch(/\bexpiresInHours\b/);
    }
    const unknown = await rotate(hook.id, { secret: 'whsec_mine' });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.message).toMatch(/\bsecret\b/);
    const gqlBad = await t.gql(`mutation($input: RotateWebhookSecretInput!) { rotateWebhookSecret(input: $input) { secret } }`, { input: { webhookId: hook.id, expiresInHours: 200 } });
    expect(gqlBad.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_REQUEST', field: 'expiresInHours' });
    expect(gqlBad.data?.rotateWebhookSecret ?? null).toBeNull();

    const row = await stored(hook.id);
    expect(row.secret).toBe(hook.secret);
    expect(row.previousSecret).toBeNull();
    expect(await t.app.prisma.event.count({ where: { objectId: hook.id, type: 'webhook_secret_rotated' } })).toBe(0);
    const req = await deliveredSpace('/ok/rotate-bad', 'Not rotated');
    expect(signatures(req.headers['x-signature']).v1).toHaveLength(1);
    expect(verifies(hook.secret, req)).toBe(true);
  });

  it('access: admins 200; other members 403, non-members 404, missing or foreign webhooks 404; refused calls change nothing', async () => {
    const hook = await createHook({ url: `${base}/ok/rotate-access`, eventTypes: ['space_created'] });
    const denied = { anonymous: 401, outsider: 404, guest: 403, reader: 403, editor: 403, creator: 403 };
    await expectAccess(t, { method: 'POST', path: `${O}/webhooks/${hook.id}/rotate-secret`, body: { expiresInHours: 1 } }, denied);
    expect((await stored(hook.id)).secret).toBe(hook.secret);
    await expectAccess(t, { method: 'POST', path: `${O}/webhooks/${hook.id}/rotate-secret`, body: { expiresInHours: 1 } }, { admin: 200 });
    expect((await stored(hook.id)).secret).not.toBe(hook.secret);

    for (const id of ['wh_0000000000000000000000', 'not-an-id']) expect((await rotate(id)).status, id).toBe(404);
    // Under another organization's path (the caller administers both): 404.
    const other = await newOrg('Rotation elsewhere');
    const before = (await stored(hook.id)).secret;
    const foreign = await t.rest('POST', `/v1/orgs/${other}/webhooks/${hook.id}/rotate-secret`, {});
    expect(foreign.status, foreign.text).toBe(404);
    expect((await stored(hook.id)).secret).toBe(before);
  });

  it('GraphQL: rotateWebhookSecret answers the new secret and Webhook.previousSecretExpiresAt; same access rules', async () => {
    const hook = await createHook({ url: `${base}/ok/rotate-graphql`, eventTypes: ['space_created'] });
    const m = `mutation($input: RotateWebhookSecretInput!) { rotateWebhookSecret(input: $input) { secret webhook { id previousSecretExpiresAt } } }`;
    const codes = async (input: Record<string, unknown>, token?: string | null) => (await t.gql(m, { input }, token)).errors?.map((e) => e.extensions?.code);

    expect(await codes({ webhookId: hook.id }, (await t.as('reader')).token)).toEqual(['FORBIDDEN']);
    expect(await codes({ webhookId: hook.id, organizationId: org }, (await t.as('editor')).token)).toEqual(['FORBIDDEN']);
    expect(await codes({ webhookId: hook.id }, (await t.as('outsider')).token)).toEqual(['NOT_FOUND']);
    expect(await codes({ webhookId: 'wh_0000000000000000000000' })).toEqual(['NOT_FOUND']);
    expect(await codes({ webhookId: hook.id, organizationId: await newOrg('GraphQL rotation elsewhere') })).toEqual(['NOT_FOUND']);
    expect((await stored(hook.id)).secret).toBe(hook.secret);

    const r = await t.gql(m, { input: { webhookId: hook.id, expiresInHours: 5 } });
    expect(r.errors).toBeUndefined();
    const { secret, webhook } = r.data.rotateWebhookSecret;
    expect(secret).toMatch(/^whsec_/);
    expect(secret).not.toBe(hook.secret);
    expect(webhook.id).toBe(hook.id);
    expect(Math.abs(new Date(webhook.previousSecretExpiresAt).getTime() - (t.clock.now().getTime() + 5 * HOUR))).toBeLessThan(60_000);
    // Readable afterwards, never the secret: the schema has no field for it.
    const read = await t.gql(`query($id: ID!) { webhook(id: $id) { previousSecretExpiresAt } }`, { id: hook.id });
    expect(read.data.webhook.previousSecretExpiresAt).toBe(webhook.previousSecretExpiresAt);
    const leak = await t.gql(`query($id: ID!) { webhook(id: $id) { previousSecret } }`, { id: hook.id });
    expect(leak.errors?.[0]?.message).toMatch(/previousSecret/);

    const req = await deliveredSpace('/ok/rotate-graphql', 'Rotated through GraphQL');
    expect(verifies(secret, req)).toBe(true);
    expect(verifies(hook.secret, req)).toBe(true);
  });
});
