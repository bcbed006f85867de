// Jobs whose worker process died: real worker processes (test/fixtures/job-worker.ts) are killed
// with SIGKILL while they run an import (or an OpenAPI processing) that waits on a local HTTP
// server the test controls; another worker process picks the job up once the dead one's
// heartbeat is older than JOB_LOCK_TIMEOUT_SECONDS (3 s here; graphile-worker alone waits 4 hours),
// and a job interrupted on every attempt ends failed with its reason in the API.
import type { ChildProcess } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnJobWorker, startTestApp, type TestApp } from './helpers.ts';
import { eventually } from './fixtures/wait.ts';

const LOCK_TIMEOUT_SECONDS = 3;
const PETSTORE = 'openapi: 3.0.0\ninfo:\n  title: Recovered pets\n  version: 1.0.0\npaths:\n  /pets:\n    get:\n      responses:\n        "200":\n          description: ok\n';

let t: TestApp;
let server: http.Server;
let base: string;
/** Requests seen per path. */
const hits = new Map<string, number>();
/** Requests held open (the worker stays busy in its fetch until killed). */
const held = new Set<http.ServerResponse>();
const waiters: Array<{ path: string; resolve: () => void }> = [];
/** Paths whose requests are held open (always, or only the first one). */
const hangAlways = new Set(['/stuck.md', '/stuck.yaml']);
const hangFirst = new Set(['/flaky.md', '/flaky.yaml', '/frozen.md']);
/** The held first request per path, to answer it later. */
const firstHeld = new Map<string, http.ServerResponse>();
const workers = new Set<ChildProcess>();

beforeAll(async () => {
  t = await startTestApp({ worker: false, config: { jobLockTimeoutSeconds: LOCK_TIMEOUT_SECONDS, jobHeartbeatSeconds: 1 } });
  server = http.createServer((req, res) => {
    const p = new URL(req.url ?? '/', 'http://x').pathname;
    const n = (hits.get(p) ?? 0) + 1;
    hits.set(p, n);
    for (const w of waiters.filter((w) => w.path === p)) {
      waiters.splice(waiters.indexOf(w), 1);
      w.resolve();
    }
    if (hangAlways.has(p) || (hangFirst.has(p) && n === 1)) {
      held.add(res);
      res.on('close', () => held.delete(res));
      if (n === 1) firstHeld.set(p, res);
      return;
    }
    if (p === '/flaky.md') {
      res.writeHead(200, { 'content-type': 'text/markdown' });
      return res.end('# Recovered page\n\nWritten by the second worker.\n');
    }
    if (p === '/frozen.md') {
      res.writeHead(200, { 'content-type': 'text/markdown' });
      return res.end('# Thawed page\n\nImported once.\n');
    }
    if (p === '/flaky.yaml') {
      res.writeHead(200, { 'content-type': 'application/yaml' });
      return res.end(PETSTORE);
    }
    res.writeHead(404);
    res.end('not found');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  for (const w of workers) w.kill('SIGKILL');
  for (const res of held) res.destroy();
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  await t?.close();
});

/** Resolves when the fixture server receives a request for `p` (i.e. a worker is running the job). */
function nextRequest(p: string) {
  return new Promise<void>((resolve) => waiters.push({ path: p, resolve }));
}

/** A separate worker process on the test's database; resolves once its queue runs. */
const spawnWorker = () => spawnJobWorker(t, { lockTimeoutSeconds: LOCK_TIMEOUT_SECONDS, track: workers });

const poll = <T>(read: () => Promise<T>, done: (v: T) => boolean, ms = 40_000) => eventually(read, done, ms, 200);

async function newSpace(title: string) {
  const r = await t.rest('POST', `/v1/orgs/${t.org.id}/spaces`, { title });
  return r.body.id as string;
}

async function startImport(spaceId: string, url: string) {
  const m = await t.gql(`mutation($input: ImportSpaceContentInput!) { importSpaceContent(input: $input) { importJob { id state } } }`, {
    input: { spaceId, url, source: 'markdown' },
  });
  expect(m.errors).toBeUndefined();
  return m.data.importSpaceContent.importJob.id as string;
}

async function importJob(id: string) {
  const q = await t.gql(`query($id: ID!) { importJob(id: $id) { state error importedResources finishedAt revision { id } } }`, { id });
  expect(q.errors).toBeUndefined();
  return q.data.importJob as { state: string; error: string | null; importedResources: number; finishedAt: string | null; revision: { id: string } | null };
}

async function pageTitles(spaceId: string) {
  const r = await t.rest('GET', `/v1/spaces/${spaceId}/content/pages`);
  expect(r.status).toBe(200);
  return (r.body.pages as Array<{ title: string }>).map((p) => p.title);
}

/** The queue's own row of a job (graphile-worker), found by its payload. */
async function queueRow(key: string, value: string) {
  const rows = await t.app.prisma.$queryRawUnsafe<Array<{ attempts: number; max_attempts: number; locked_by: string | null; last_error: string | null }>>(
    `SELECT attempts, max_attempts, locked_by, last_error FROM graphile_worker._private_jobs WHERE payload->>$1 = $2`,
    key,
    value,
  );
  return rows[0];
}

describe('jobs of a killed worker process', () => {
  it('an import interrupted by SIGKILL is picked up by another worker and imports its content once', async () => {
    const spaceId = await newSpace('Recovered import');
    const before = (await t.app.prisma.space.findUniqueOrThrow({ where: { id: spaceId } })).revisionId;
    const first = await spawnWorker();
    const fetching = nextRequest('/flaky.md');
    const jobId = await startImport(spaceId, `${base}/flaky.md`);
    await fetching;
    expect((await importJob(jobId)).state).toBe('running');
    await first.kill();

    // The dead worker's job is still locked and `running`; no content was written.
    expect((await importJob(jobId)).state).toBe('running');
    expect((await queueRow('jobId', jobId))?.locked_by).not.toBeNull();
    expect(await pageTitles(spaceId)).toEqual([]);

    const second = await spawnWorker();
    try {
      const job = await poll(() => importJob(jobId), (j) => j.state === 'complete' || j.state === 'failed');
      expect(job, second.output()).toMatchObject({ state: 'complete', error: null, importedResources: 1 });
      expect(await pageTitles(spaceId)).toEqual(['Recovered page']);
      const rev = await t.app.prisma.revision.findUniqueOrThrow({ where: { id: job.revision!.id } });
      expect(rev.parents).toEqual([before]);
      expect(hits.get('/flaky.md')).toBe(2);
      // Completed: the queue's row is gone.
      expect(await queueRow('jobId', jobId)).toBeUndefined();
    } finally {
      await second.stop();
    }
  }, 120_000);

  it('a frozen worker (SIGSTOP) loses its job to another; when it wakes and finishes its fetch, the content is there once', async () => {
    const spaceId = await newSpace('Frozen import');
    const before = (await t.app.prisma.space.findUniqueOrThrow({ where: { id: spaceId } })).revisionId;
    const frozen = await spawnWorker();
    const fetching = nextRequest('/frozen.md');
    const jobId = await startImport(spaceId, `${base}/frozen.md`);
    await fetching;
    frozen.signal('SIGSTOP'); // alive but silent: no heartbeat
    try {
      const second = await spawnWorker();
      try {
        const job = await poll(() => importJob(jobId), (j) => j.state === 'complete' || j.state === 'failed');
        expect(job, second.output()).toMatchObject({ state: 'complete', importedResources: 1 });
      } finally {
        await second.stop();
      }
      // The first worker wakes up, gets its answer and runs the rest of its (second) run.
      const res = firstHeld.get('/frozen.md')!;
      res.writeHead(200, { 'content-type': 'text/markdown' });
      res.end('# Thawed page\n\nImported once.\n');
    } finally {
      frozen.signal('SIGCONT');
    }
    await frozen.stop(); // waits for its running job
    expect(frozen.output()).not.toMatch(/"level":50/);
    expect(await pageTitles(spaceId)).toEqual(['Thawed page']);
    const job = await importJob(jobId);
    expect(job).toMatchObject({ state: 'complete', error: null, importedResources: 1 });
    const rev = await t.app.prisma.revision.findUniqueOrThrow({ where: { id: job.revision!.id } });
    expect(rev.parents).toEqual([before]);
    expect(await t.app.prisma.revision.count({ where: { spaceId } })).toBe(2);
  }, 120_000);

  it('an import interrupted on every attempt ends failed with the reason, content unchanged', async () => {
    const spaceId = await newSpace('Doomed import');
    const before = (await t.app.prisma.space.findUniqueOrThrow({ where: { id: spaceId } })).revisionId;
    let jobId = '';
    // Imports have 3 attempts: each one is killed while it fetches.
    for (let attempt = 1; attempt <= 3; attempt++) {
      const worker = await spawnWorker();
      const fetching = nextRequest('/stuck.md');
      if (attempt === 1) jobId = await startImport(spaceId, `${base}/stuck.md`);
      await fetching;
      expect((await importJob(jobId)).state).toBe('running');
      await worker.kill();
    }
    expect(hits.get('/stuck.md')).toBe(3);

    // The next worker process finds the job locked by a dead worker on its last attempt.
    const last = await spawnWorker();
    try {
      const job = await poll(() => importJob(jobId), (j) => j.state === 'complete' || j.state === 'failed');
      expect(job, last.output()).toMatchObject({ state: 'failed', revision: null, importedResources: 0 });
      expect(job.error).toBe('The import was interrupted 3 times (the worker running it stopped) and was given up');
      expect(job.finishedAt).not.toBeNull();
      // Not run a fourth time: unlocked, out of attempts, the reason on the queue's row too.
      const row = await poll(() => queueRow('jobId', jobId), (r) => r?.locked_by === null);
      expect(row).toMatchObject({ attempts: 3, max_attempts: 3, locked_by: null });
      expect(row.last_error).toMatch(/worker running this job stopped/);
      await new Promise((r) => setTimeout(r, 1500));
      expect(hits.get('/stuck.md')).toBe(3);
    } finally {
      await last.stop();
    }
    expect(await pageTitles(spaceId)).toEqual([]);
    expect((await t.app.prisma.space.findUniqueOrThrow({ where: { id: spaceId } })).revisionId).toBe(before);
  }, 180_000);

  it('OpenAPI processing interrupted by SIGKILL is retried and records the version; on its last attempt it completes with FETCH_ERROR', async () => {
    const specs = `/v1/orgs/${t.org.id}/openapi`;
    const first = await spawnWorker();
    const fetching = nextRequest('/flaky.yaml');
    const created = await t.rest('PUT', `${specs}/recovered`, { source: { url: `${base}/flaky.yaml` } });
    expect(created.status).toBe(201);
    const specId = created.body.id as string;
    await fetching;
    expect((await t.rest('GET', `${specs}/recovered`)).body.processingState).toBe('progress');

    // A second spec whose processing is on its last attempt when its worker dies: in another
    // organization, since one organization's heavy jobs run one at a time (organizationQueue).
    const other = await t.gql(`mutation { createOrganization(input: { title: "Other" }) { id } }`);
    const otherSpecs = `/v1/orgs/${other.data.createOrganization.id}/openapi`;
    const stuckFetching = nextRequest('/stuck.yaml');
    const stuck = await t.rest('PUT', `${otherSpecs}/stuck`, { source: { url: `${base}/stuck.yaml` } });
    expect(stuck.status).toBe(201);
    await t.app.prisma.$executeRawUnsafe(`UPDATE graphile_worker._private_jobs SET max_attempts = 1 WHERE payload->>'specId' = $1`, stuck.body.id);
    await stuckFetching;
    await first.kill();
    expect((await t.rest('GET', `${otherSpecs}/stuck`)).body.processingState).toBe('progress');

    const second = await spawnWorker();
    try {
      const done = await poll(
        async () => (await t.rest('GET', `${specs}/recovered`)).body,
        (s) => s.processingState === 'complete',
      );
      expect(done, second.output()).toMatchObject({ id: specId, processingState: 'complete' });
      expect(done.lastProcessErrorCode).toBeUndefined();
      expect(done.lastVersion).toEqual(expect.any(String));
      const versions = await t.app.prisma.openApiSpecVersion.count({ where: { specId } });
      expect(versions).toBe(1);

      const failed = await poll(
        async () => (await t.rest('GET', `${otherSpecs}/stuck`)).body,
        (s) => s.processingState === 'complete',
      );
      expect(failed).toMatchObject({ processingState: 'complete', lastProcessErrorCode: 'FETCH_ERROR' });
      expect(failed.lastVersion).toBeUndefined();
      expect(hits.get('/stuck.yaml')).toBe(1);
    } finally {
      await second.stop();
    }
  }, 120_000);
});
