// The job worker as its own process (`npm run worker`, src/worker.ts): a gateway that runs no
// worker (RUN_WORKER=false) and a separate worker process on the same database deliver a webhook
// exactly once; killing the worker fails no API request, and a worker started later delivers what
// was queued meanwhile, once.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.ts';
import { startTestApp, type TestApp } from './helpers.ts';
import { waitWithin } from './fixtures/wait.ts';

let t: TestApp;
let receiver: http.Server;
let base: string;
const received: Array<{ path: string; body: string }> = [];
const workers: ChildProcessWithoutNullStreams[] = [];

type Worker = { child: ChildProcessWithoutNullStreams; output: () => string; exited: Promise<number | null> };

function startWorker(): Worker {
  const env: Record<string, string | undefined> = {
    ...process.env,
    DATABASE_URL: t.databaseUrl,
    DATABASE_DIRECT_URL: undefined,
    LOG_LEVEL: 'info',
    WEBHOOK_ALLOW_PRIVATE: 'true',
    ALLOW_PRIVATE_FETCH: 'true',
    FILES_DIR: t.app.config.filesDir,
  };
  for (const [k, v] of Object.entries(env)) if (v === undefined) delete env[k];
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/worker.ts'], { env: env as NodeJS.ProcessEnv, stdio: ['pipe', 'pipe', 'pipe'] });
  workers.push(child);
  let output = '';
  child.stdout.on('data', (d) => (output += d));
  child.stderr.on('data', (d) => (output += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, output: () => output, exited };
}

const waitFor = waitWithin(60_000);

const running = (w: Worker) => waitFor('the worker to start', () => /worker is running/.test(w.output()) || (w.child.exitCode !== null && Promise.reject(new Error(w.output()))));

beforeAll(async () => {
  receiver = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      received.push({ path: req.url ?? '', body });
      res.statusCode = 204;
      res.end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(receiver.address() as { port: number }).port}`;
  // The gateway runs no worker (the helpers' default, as RUN_WORKER=false would).
  t = await startTestApp({ worker: false, config: { runWorker: false } });
}, 60_000);

afterAll(async () => {
  for (const w of workers) if (w.exitCode === null) w.kill('SIGKILL');
  await t?.close();
  await new Promise((r) => receiver?.close(r));
});

const O = () => `/v1/orgs/${t.org.id}`;
async function newSpace(title: string) {
  const r = await t.rest('POST', `${O()}/spaces`, { title });
  expect(r.status, r.text).toBe(201);
  return r.body.id as string;
}
const deliveriesOf = (spaceId: string) => received.filter((r) => r.path === '/hook' && JSON.parse(r.body).object.id === spaceId);

describe('the worker apart', () => {
  it('RUN_WORKER=false is a gateway without a worker; unset keeps the single process', () => {
    expect(loadConfig({ RUN_WORKER: 'false' }).runWorker).toBe(false);
    expect(loadConfig({}).runWorker).toBe(true);
  });

  it('a gateway without a worker and a worker process deliver a webhook exactly once; killing the worker fails no request', async () => {
    const hook = await t.rest('POST', `${O()}/webhooks`, { url: `${base}/hook`, eventTypes: ['space_created'] });
    expect(hook.status, hook.text).toBe(201);

    // Queued by the gateway, nobody runs it yet.
    const first = await newSpace('Queued before any worker');
    await new Promise((r) => setTimeout(r, 1500));
    expect(deliveriesOf(first)).toHaveLength(0);

    const w1 = startWorker();
    await running(w1);
    await waitFor('the first delivery', () => deliveriesOf(first).length > 0);
    const second = await newSpace('With a worker running');
    await waitFor('the second delivery', () => deliveriesOf(second).length > 0);
    // Recorded as delivered before the kill: a worker killed between sending and recording sends
    // again (at least once, receivers dedupe by delivery id), which is not what this test is about.
    await waitFor('the second delivery recorded', async () => (await t.app.prisma.webhookDelivery.count({ where: { status: 'pending' } })) === 0);

    // Kill the worker hard while requests run: every request succeeds.
    const requests = Array.from({ length: 20 }, (_, i) =>
      new Promise((r) => setTimeout(r, i * 25)).then(() => t.rest('GET', `${O()}/spaces`)),
    );
    w1.child.kill('SIGKILL');
    await w1.exited;
    const third = await newSpace('While no worker runs');
    expect((await Promise.all(requests)).map((r) => r.status)).toEqual(Array(20).fill(200));
    expect((await t.rest('GET', `/v1/user`)).status).toBe(200);

    // A new worker delivers what was queued meanwhile.
    const w2 = startWorker();
    await running(w2);
    await waitFor('the third delivery', () => deliveriesOf(third).length > 0);
    // Settle, then: each event delivered exactly once.
    await new Promise((r) => setTimeout(r, 1500));
    expect([first, second, third].map((id) => deliveriesOf(id).length)).toEqual([1, 1, 1]);
    w2.child.kill('SIGTERM');
    expect(await w2.exited).toBe(0);
  }, 180_000);
});
