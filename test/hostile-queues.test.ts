// Fair queues and dead workers, with the hostile input itself:
// - tarpit receivers (accept the connection, read the request, never answer) behind two
//   organizations' webhooks, with deliveries queued: another organization's OpenAPI processing
//   and another's webhook delivery finish while each tarpit still holds its first delivery
//   (deliveries have a pool of their own; one delivery per organization at a time);
// - the response timeout cuts a tarpit attempt (recorded as failed with the reason), the circuit
//   breaker opens after WEBHOOK_CIRCUIT_FAILURES failures in a row (later deliveries deferred, no
//   request and no attempt spent) and closes after the cool-down (the probe succeeds, all delivered);
// - a worker process killed with SIGKILL while it runs an import: its job is retried as soon as a
//   new worker process starts (or by a live one within a beat), with JOB_LOCK_TIMEOUT_SECONDS at
//   600 s, so by the dead pool's free session mark (an advisory lock), not by its heartbeat's age;
//   a frozen (SIGSTOP) worker keeps its mark and its job.
import type { ChildProcess } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnJobWorker, startTestApp, type TestApp } from './helpers.ts';
import { waitFor } from './fixtures/wait.ts';
import { webhookRequestLimits } from '../src/domain/webhooks.ts';

const PETSTORE = 'openapi: 3.0.0\ninfo:\n  title: Fair pets\n  version: 1.0.0\npaths:\n  /pets:\n    get:\n      responses:\n        "200":\n          description: ok\n';

// ------------------------------------------------------------------ one local server for every role

type Hit = { path: string; at: number };
let server: http.Server;
let base: string;
const hits: Hit[] = [];
/** Requests the tarpit holds now (no answer, ever, unless the path turns healthy). */
const held = new Set<http.ServerResponse>();
/** The most requests held at once, per path. */
const maxHeld = new Map<string, number>();
/** Tarpit paths that answer 204 from now on. */
const healthy = new Set<string>();
/** Import paths whose first request is held (the worker stays busy in its fetch until killed). */
const holdFirst = new Set(['/killed.md', '/frozen.md']);
const waiters: Array<{ path: string; resolve: () => void }> = [];

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const p = new URL(req.url ?? '/', 'http://x').pathname;
    hits.push({ path: p, at: Date.now() });
    for (const w of waiters.filter((w) => w.path === p)) {
      waiters.splice(waiters.indexOf(w), 1);
      w.resolve();
    }
    const hold = () => {
      held.add(res);
      maxHeld.set(p, Math.max(maxHeld.get(p) ?? 0, heldOn(p)));
      res.on('close', () => held.delete(res));
    };
    req.resume();
    if (p.startsWith('/hold/')) return hold();
    if (p.startsWith('/tarpit/')) {
      if (!healthy.has(p)) return hold();
      res.statusCode = 204;
      return res.end();
    }
    if (p.startsWith('/ok/')) {
      res.statusCode = 204;
      return res.end();
    }
    if (p === '/pets.yaml') {
      res.writeHead(200, { 'content-type': 'application/yaml' });
      return res.end(PETSTORE);
    }
    if (holdFirst.has(p) && hitsOf(p) === 1) return hold();
    if (p.endsWith('.md')) {
      res.writeHead(200, { 'content-type': 'text/markdown' });
      return res.end('# Recovered at once\n\nImported by the next worker.\n');
    }
    res.writeHead(404);
    res.end('not found');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  for (const res of held) res.destroy();
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
});

const hitsOf = (p: string) => hits.filter((h) => h.path === p).length;
const heldOn = (p: string) => [...held].filter((res) => new URL(res.req.url ?? '/', 'http://x').pathname === p).length;
function nextRequest(p: string) {
  return new Promise<void>((resolve) => waiters.push({ path: p, resolve }));
}

async function newOrg(t: TestApp, title: string) {
  const r = await t.gql(`mutation($title: String!) { createOrganization(input: { title: $title }) { id } }`, { title });
  expect(r.errors).toBeUndefined();
  return r.data.createOrganization.id as string;
}
async function newSpace(t: TestApp, org: string, title: string) {
  const r = await t.rest('POST', `/v1/orgs/${org}/spaces`, { title });
  expect(r.status, r.text).toBe(201);
  return r.body.id as string;
}
async function createHook(t: TestApp, org: string, url: string) {
  const r = await t.rest('POST', `/v1/orgs/${org}/webhooks`, { url, eventTypes: ['space_created'] });
  expect(r.status, r.text).toBe(201);
  return r.body.id as string;
}
type Delivery = { id: string; status: string; attempts: number; lastStatusCode: number | null; lastError: string | null; nextAttemptAt: string | null; event: { id: string } };
/** Oldest first. */
async function deliveries(t: TestApp, org: string, hookId: string) {
  const r = await t.rest('GET', `/v1/orgs/${org}/webhooks/${hookId}/deliveries`);
  expect(r.status, r.text).toBe(200);
  return (r.body.items as Delivery[]).reverse();
}

// ------------------------------------------------------------------ item 6: fair queues

describe('a tarpit receiver of one organization', () => {
  let t: TestApp;
  const wholeExchangeMs = webhookRequestLimits.timeoutMs;
  beforeAll(async () => {
    // Long timeouts: the tarpit holds its attempt through the whole test, however slow the machine.
    webhookRequestLimits.timeoutMs = 120_000;
    t = await startTestApp({
      worker: true,
      config: {
        allowPrivateFetch: true,
        webhookDelivery: { concurrency: 4, connectTimeoutMs: 2000, responseTimeoutMs: 120_000, circuitFailures: 5, circuitCooldownSeconds: 60 },
      },
    });
  }, 60_000);
  afterAll(async () => {
    // The rest of the tarpits' queues answers at once: stopping waits for running deliveries.
    healthy.add('/tarpit/a1');
    healthy.add('/tarpit/a2');
    for (const res of held) res.destroy();
    await t?.close();
    webhookRequestLimits.timeoutMs = wholeExchangeMs;
  });

  it('two organizations’ tarpits delay neither a third’s OpenAPI processing nor a fourth’s webhooks; each holds one worker', async () => {
    // Two tarpits: together they would hold both workers of a queue shared by every task.
    const tarpits = [] as Array<{ org: string; hook: string; path: string }>;
    for (const name of ['a1', 'a2']) {
      const org = await newOrg(t, `Tenant with tarpit ${name}`);
      tarpits.push({ org, hook: await createHook(t, org, `${base}/tarpit/${name}`), path: `/tarpit/${name}` });
    }
    const orgC = await newOrg(t, 'Tenant with a healthy receiver');
    const hookC = await createHook(t, orgC, `${base}/ok/c`);

    // Three deliveries queued for each tarpit; the first of each is taken and held.
    const taken = tarpits.map((tp) => nextRequest(tp.path));
    for (let i = 0; i < 3; i++) for (const tp of tarpits) await newSpace(t, tp.org, `${tp.path} ${i}`);
    await Promise.all(taken);

    // Organization B (the test organization) processes an OpenAPI specification meanwhile.
    const specs = `/v1/orgs/${t.org.id}/openapi`;
    const put = await t.rest('PUT', `${specs}/fair`, { source: { url: `${base}/pets.yaml` } });
    expect(put.status, put.text).toBe(201);
    // And organization C's webhook receives its event.
    await newSpace(t, orgC, 'C 1');

    const spec = await waitFor('B’s processing', async () => {
      const r = await t.rest('GET', `${specs}/fair`);
      return r.body.processingState === 'complete' && r.body;
    });
    expect(spec.lastVersion).toEqual(expect.any(String));
    expect(spec.lastProcessErrorCode).toBeUndefined();
    const [c] = await waitFor('C’s delivery', async () => {
      const list = await deliveries(t, orgC, hookC);
      return list.length === 1 && list[0].status === 'succeeded' && list;
    });
    expect(c.attempts).toBe(1);

    // Both done while each tarpit still holds its organization's first delivery, its only request
    // so far: one delivery of an organization at a time, the others wait their turn in its queue.
    for (const tp of tarpits) {
      expect(heldOn(tp.path)).toBe(1);
      expect(hitsOf(tp.path)).toBe(1);
      expect(maxHeld.get(tp.path)).toBe(1);
      const list = await deliveries(t, tp.org, tp.hook);
      expect(list.map((d) => d.status)).toEqual(['pending', 'pending', 'pending']);
      expect(list.map((d) => d.attempts)).toEqual([1, 0, 0]);
      expect(list[0].lastError).toBeNull(); // in flight
    }
  }, 90_000);

  it('one organization’s imports from a source that never answers hold one main worker: another’s import completes meanwhile', async () => {
    // Three imports of organization A whose source accepts and never answers: on a queue shared by
    // every organization they would take both main workers until their deadline (minutes).
    const orgA = await newOrg(t, 'Tenant with slow imports');
    const spaceA = await newSpace(t, orgA, 'A imports');
    const start = (spaceId: string, url: string) =>
      t.gql(`mutation($input: ImportSpaceContentInput!) { importSpaceContent(input: $input) { importJob { id state } } }`, {
        input: { spaceId, url, source: 'markdown', waitSeconds: 0 },
      });
    const firstHeld = nextRequest('/hold/a0.md');
    for (let i = 0; i < 3; i++) expect((await start(spaceA, `${base}/hold/a${i}.md`)).errors).toBeUndefined();
    await firstHeld;

    // Organization B (the test organization) imports a page that answers at once.
    const spaceB = await newSpace(t, t.org.id, 'B imports');
    const b = await start(spaceB, `${base}/b.md`);
    expect(b.errors).toBeUndefined();
    const done = await waitFor('B’s import', async () => {
      const r = await t.gql(`query($id: ID!) { importJob(id: $id) { state } }`, { id: b.data.importSpaceContent.importJob.id });
      return r.data?.importJob.state === 'complete' && r.data.importJob;
    });
    expect(done.state).toBe('complete');
    const pages = await t.rest('GET', `/v1/spaces/${spaceB}/content/pages`);
    expect(pages.body.pages.map((p: { title: string }) => p.title)).toEqual(['Recovered at once']);

    // Meanwhile A's first import still holds its source and the other two have not started:
    // one heavy job of an organization at a time (organizationQueue).
    expect(heldOn('/hold/a0.md')).toBe(1);
    expect(hitsOf('/hold/a1.md') + hitsOf('/hold/a2.md')).toBe(0);
  }, 90_000);
});


describe('timeouts and the circuit breaker', () => {
  let t: TestApp;
  const COOLDOWN_SECONDS = 10;
  beforeAll(async () => {
    t = await startTestApp({
      worker: true,
      config: {
        webhooks: { allowPrivate: true, maxAttempts: 8 },
        webhookDelivery: { concurrency: 4, connectTimeoutMs: 2000, responseTimeoutMs: 1000, circuitFailures: 3, circuitCooldownSeconds: COOLDOWN_SECONDS },
      },
    });
  }, 60_000);
  afterAll(async () => {
    await t?.close();
  });

  it('the response timeout cuts a tarpit attempt; 3 failures open the circuit (later deliveries deferred, not attempted); after the cool-down the probe closes it', async () => {
    const org = t.org.id;
    const url = `${base}/tarpit/breaker`;
    const hookId = await createHook(t, org, url);
    for (let i = 0; i < 5; i++) await newSpace(t, org, `Breaker ${i}`);

    // Three attempts, each cut after 1 s without an answer, open the circuit.
    const hook = await waitFor('the circuit to open', async () => {
      const h = await t.app.prisma.webhook.findUniqueOrThrow({ where: { id: hookId } });
      return h.circuitOpenUntil && h;
    });
    expect(hook.consecutiveFailures).toBe(3);
    expect(heldOn('/tarpit/breaker')).toBe(0); // every held request was cut by the client
    const cut = (await deliveries(t, org, hookId)).filter((d) => d.attempts === 1);
    expect(cut).toHaveLength(3);
    // (A delivery whose retry came while the circuit was open says so first, then its attempt's error.)
    for (const d of cut) expect(d).toMatchObject({ status: 'pending', lastStatusCode: null, lastError: expect.stringMatching(/timed out: no response within 1000 ms$/) });

    // The two later deliveries are deferred to the circuit's end: no request, no attempt spent.
    const deferred = await waitFor('the later deliveries to be deferred', async () => {
      const list = (await deliveries(t, org, hookId)).filter((d) => d.attempts === 0);
      return list.length === 2 && list.every((d) => d.lastError?.startsWith('deferred')) && list;
    });
    for (const d of deferred) {
      expect(d.status).toBe('pending');
      expect(d.lastError).toMatch(/failed 3 times in a row/);
      expect(new Date(d.nextAttemptAt!).getTime()).toBe(hook.circuitOpenUntil!.getTime());
    }
    // Still open (the cool-down is 10 s): no request beyond the three that failed.
    const stillOpen = await t.app.prisma.webhook.findUniqueOrThrow({ where: { id: hookId } });
    expect(stillOpen.circuitOpenUntil!.getTime()).toBeGreaterThan(Date.now());
    expect(hitsOf('/tarpit/breaker')).toBe(3);

    // The receiver recovers; after the cool-down the first delivery is the probe, it succeeds,
    // the circuit closes and every delivery goes out, none failed, none burned.
    healthy.add('/tarpit/breaker');
    const done = await waitFor(
      'every delivery',
      async () => {
        const list = await deliveries(t, org, hookId);
        return list.length === 5 && list.every((d) => d.status === 'succeeded') && list;
      },
      60_000,
    );
    const firstAfter = hits.filter((h) => h.path === '/tarpit/breaker')[3];
    expect(firstAfter.at).toBeGreaterThanOrEqual(hook.circuitOpenUntil!.getTime() - 1000);
    expect(done.map((d) => d.attempts).sort()).toEqual([1, 1, 2, 2, 2]);
    expect(hitsOf('/tarpit/breaker')).toBe(8);
    const closed = await t.app.prisma.webhook.findUniqueOrThrow({ where: { id: hookId } });
    expect(closed).toMatchObject({ consecutiveFailures: 0, circuitOpenUntil: null });
  }, 120_000);
});

// ------------------------------------------------------------------ item 9: dead workers found at once

describe('a worker process killed while it runs an import (JOB_LOCK_TIMEOUT_SECONDS 600)', () => {
  const LOCK_TIMEOUT_SECONDS = 600;
  let t: TestApp;
  const children = new Set<ChildProcess>();
  beforeAll(async () => {
    t = await startTestApp({ worker: false, config: { jobLockTimeoutSeconds: LOCK_TIMEOUT_SECONDS, jobHeartbeatSeconds: 1 } });
  }, 60_000);
  afterAll(async () => {
    for (const c of children) c.kill('SIGKILL');
    await t?.close();
  });

  /** A worker-only process on the test's database; resolves once its queue runs. */
  const spawnWorker = () => spawnJobWorker(t, { lockTimeoutSeconds: LOCK_TIMEOUT_SECONDS, track: children });

  async function startImport(spaceId: string, url: string) {
    const m = await t.gql(`mutation($input: ImportSpaceContentInput!) { importSpaceContent(input: $input) { importJob { id } } }`, {
      input: { spaceId, url, source: 'markdown' },
    });
    expect(m.errors).toBeUndefined();
    return m.data.importSpaceContent.importJob.id as string;
  }
  async function importState(id: string) {
    const q = await t.gql(`query($id: ID!) { importJob(id: $id) { state importedResources } }`, { id });
    expect(q.errors).toBeUndefined();
    return q.data.importJob as { state: string; importedResources: number };
  }
  const lockedBy = async (jobId: string) =>
    (await t.app.prisma.$queryRawUnsafe<Array<{ locked_by: string | null }>>(`SELECT locked_by FROM graphile_worker._private_jobs WHERE payload->>'jobId' = $1`, jobId))[0]?.locked_by;

  it('is retried as soon as the next worker process starts, not after the lock timeout', async () => {
    const spaceId = await newSpace(t, t.org.id, 'Killed import');
    const first = await spawnWorker();
    const fetching = nextRequest('/killed.md');
    const jobId = await startImport(spaceId, `${base}/killed.md`);
    await fetching;
    await first.kill();
    // Its heartbeat is fresh (1 s ago) and the lock young: only the free mark tells it is dead.
    expect(await lockedBy(jobId)).not.toBeNull();

    const second = await spawnWorker();
    try {
      const retried = nextRequest('/killed.md');
      await Promise.race([retried, new Promise((_, reject) => setTimeout(() => reject(new Error(`not retried within 30 s:\n${second.output()}`)), 30_000))]);
      const retriedAt = hits.filter((h) => h.path === '/killed.md')[1].at;
      // Seconds after the new process started (the sweep at its start-up), not 600.
      expect(retriedAt - second.readyAt).toBeLessThan(30_000);
      const job = await waitFor('the import', async () => {
        const j = await importState(jobId);
        return (j.state === 'complete' || j.state === 'failed') && j;
      });
      expect(job).toMatchObject({ state: 'complete', importedResources: 1 });
      expect(hitsOf('/killed.md')).toBe(2);
    } finally {
      await second.stop();
    }
  }, 120_000);

  it('a frozen worker (SIGSTOP) keeps its mark and its job; killed, a live worker retries the job within seconds', async () => {
    const spaceId = await newSpace(t, t.org.id, 'Frozen then killed import');
    const frozen = await spawnWorker();
    const fetching = nextRequest('/frozen.md');
    const jobId = await startImport(spaceId, `${base}/frozen.md`);
    await fetching;
    const owner = await lockedBy(jobId);
    frozen.signal('SIGSTOP');
    const live = await spawnWorker();
    try {
      // The live worker sweeps at start-up and every second: the frozen one's mark is held (its
      // connection is open), its lock younger than 600 s, so its job stays with it.
      const sweptAt = Date.now();
      await waitFor('a few sweeps', async () => Date.now() - sweptAt > 3000);
      expect(await lockedBy(jobId)).toBe(owner);
      expect(hitsOf('/frozen.md')).toBe(1);

      const retried = nextRequest('/frozen.md');
      await frozen.kill();
      const killedAt = Date.now();
      await Promise.race([retried, new Promise((_, reject) => setTimeout(() => reject(new Error(`not retried within 30 s:\n${live.output()}`)), 30_000))]);
      expect(Date.now() - killedAt).toBeLessThan(30_000);
      const job = await waitFor('the import', async () => {
        const j = await importState(jobId);
        return (j.state === 'complete' || j.state === 'failed') && j;
      });
      expect(job).toMatchObject({ state: 'complete', importedResources: 1 });
      expect(hitsOf('/frozen.md')).toBe(2);
    } finally {
      frozen.signal('SIGCONT');
      await live.stop();
    }
  }, 120_000);
});
