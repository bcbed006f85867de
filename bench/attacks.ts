// `npm run attacks [-- --only md,pads,uploads,bomb,pdf,tarpit,subs,tokens,introspect]`: issue 20's
// hostile readers and tenants, from outside, against the server `npm start` runs (the esbuild
// bundle with its 512 MB heap) on a fresh database. While each attack runs, a poller (a thread of its own) asks
// /healthz every 25 ms; the table says how long the slowest answer took, whether the process
// survived, its resident memory before and at peak (its own /metrics), and whether another
// tenant's request made during the attack succeeded. Budgets: docs/performance.md "Hostile-input
// budgets". A figure, not a test: nothing here passes or fails a build.
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import zlib from 'node:zlib';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { startBenchDatabase, freePort } from './db.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const only = process.argv.find((a) => a.startsWith('--only'))?.split('=')[1]?.split(',') ??
  (process.argv.includes('--only') ? process.argv[process.argv.indexOf('--only') + 1].split(',') : undefined);
const want = (name: string) => !only || only.includes(name);
const ADMIN = 'dg_attack_bootstrap_token_0123456789';
const MiB = 1024 * 1024;
/** The server's RATE_LIMIT_POINTS: low enough for the token attack to reach it. */
const RATE_POINTS = 1000;
const log = (m: string) => console.error(`· ${m}`);

// ------------------------------------------------------------------ the server, as npm start runs it

const db = await startBenchDatabase({ log });
const port = await freePort();
const base = `http://127.0.0.1:${port}`;
execFileSync('node', ['scripts/build.mjs'], { cwd: ROOT, stdio: 'inherit' });
const serverEnv = {
  ...process.env,
  DATABASE_URL: db.url,
  PORT: String(port),
  HOST: '127.0.0.1',
  DOCGRAPH_ADMIN_TOKEN: ADMIN,
  LOG_LEVEL: 'warn',
  ALLOW_PRIVATE_FETCH: 'true',
  WEBHOOK_ALLOW_PRIVATE: 'true',
  RATE_LIMIT_POINTS: String(RATE_POINTS),
};
const startFlags = ['--max-old-space-size=512', '--max-semi-space-size=64'];
let server: ChildProcess = spawn('node', [...startFlags, '.build/server/main.mjs'], { cwd: ROOT, env: serverEnv, stdio: ['ignore', 'ignore', 'pipe'] });
let serverDied = '';
server.on('exit', (code, signal) => (serverDied = `exit ${code ?? signal}`));
let stderrTail = '';
server.stderr!.on('data', (d) => (stderrTail = (stderrTail + d).slice(-4000)));
for (let i = 0; ; i++) {
  try {
    if ((await fetch(`${base}/readyz`)).ok) break;
  } catch {}
  if (i > 300 || serverDied) throw new Error(`server did not start: ${serverDied}\n${stderrTail}`);
  await sleep(100);
}

function admin(...args: string[]) {
  return execFileSync('node', ['.build/cli/admin.mjs', ...args], { cwd: ROOT, env: { ...process.env, DATABASE_URL: db.url } }).toString().trim();
}

// ------------------------------------------------------------------ clients

type Answer = { status: number; body: any; ms: number };
async function call(token: string | null, method: string, url: string, body?: unknown, timeoutMs = 600_000): Promise<Answer> {
  const t0 = performance.now();
  try {
    const res = await fetch(base + url, {
      method,
      headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await res.text();
    let parsed: any = text;
    try {
      parsed = JSON.parse(text);
    } catch {}
    return { status: res.status, body: parsed, ms: performance.now() - t0 };
  } catch (err) {
    return { status: 0, body: String(err), ms: performance.now() - t0 };
  }
}
const gql = (token: string | null, query: string, variables?: unknown) => call(token, 'POST', '/graphql', { query, variables });
async function must(a: Promise<Answer>, what: string) {
  const r = await a;
  if (r.status >= 300 || r.body?.errors) throw new Error(`${what}: ${r.status} ${JSON.stringify(r.body).slice(0, 400)}`);
  return r.body;
}

/** The server's resident set (MiB) and its event loop's longest delay since the last read (ms). */
async function serverStats(): Promise<{ rss: number; loopMaxMs: number }> {
  const text = String((await call(null, 'GET', '/metrics', undefined, 5000)).body);
  const metric = (name: string) => Number(new RegExp(`^${name} (\\S+)`, 'm').exec(text)?.[1] ?? NaN);
  // prom-client resets its event-loop histogram at every collection: the max is since the last read.
  return { rss: metric('process_resident_memory_bytes') / MiB, loopMaxMs: metric('nodejs_eventloop_lag_max_seconds') * 1000 };
}
async function rss(): Promise<number> {
  return (await serverStats()).rss;
}

/**
 * /healthz every 25 ms until stopped, from a worker thread of its own: the attacks build large
 * bodies and parse large answers here, and a poller on this event loop would time those stalls
 * too. Returns the slowest answer, the failures, and the peak RSS the server reported.
 */
const POLLER = `
  const { parentPort, workerData } = require('node:worker_threads');
  let stop = false, worst = 0, failures = 0;
  parentPort.on('message', () => { stop = true; });
  (async () => {
    while (!stop) {
      const t0 = performance.now();
      try {
        const res = await fetch(workerData.url, { signal: AbortSignal.timeout(60000) });
        await res.text();
        if (!res.ok) failures++;
      } catch { failures++; }
      worst = Math.max(worst, performance.now() - t0);
      await new Promise((r) => setTimeout(r, 25));
    }
    parentPort.postMessage({ worst, failures });
  })();
`;
function pollHealth() {
  const poller = new Worker(POLLER, { eval: true, workerData: { url: `${base}/healthz` } });
  const result = new Promise<{ worst: number; failures: number }>((resolve) => poller.once('message', resolve));
  let peakRss = 0;
  let loopMaxMs = 0;
  let stop = false;
  const sample = async () => {
    const s = await serverStats().catch(() => ({ rss: 0, loopMaxMs: 0 }));
    peakRss = Math.max(peakRss, s.rss);
    loopMaxMs = Math.max(loopMaxMs, s.loopMaxMs || 0);
  };
  const sampling = (async () => {
    await serverStats().catch(() => null); // start the event-loop window here
    while (!stop) {
      await sleep(500);
      await sample();
    }
  })();
  return async () => {
    stop = true;
    poller.postMessage('stop');
    const r = await result;
    await sampling;
    await poller.terminate();
    await sample();
    return { ...r, peakRss, loopMaxMs };
  };
}

// ------------------------------------------------------------------ tenants

const orgA = (await must(call(ADMIN, 'GET', '/v1/orgs'), 'list orgs')).items[0].id as string;
const orgB = admin('create-org', '--title', 'Tenant B', '--admin-email', 'b@tenant-b.test').match(/org_\w+/)![0];
const tokenB = admin('create-token', '--email', 'b@tenant-b.test');
admin('create-user', '--email', 'outsider@elsewhere.test', '--name', 'Outsider');
const outsider = admin('create-token', '--email', 'outsider@elsewhere.test');
// (The admin CLI runs synchronously: users are made here, never while /healthz is being polled.)
admin('create-user', '--email', 'minter@elsewhere.test', '--name', 'Minter');
const minter = admin('create-token', '--email', 'minter@elsewhere.test');
const spaceB = (await must(call(tokenB, 'POST', `/v1/orgs/${orgB}/spaces`, { title: 'B docs' }), 'space B')).id as string;

/** Another tenant's request during the attack: a write in organization B. */
async function canary(): Promise<string> {
  const r = await call(tokenB, 'POST', `/v1/orgs/${orgB}/spaces`, { title: `canary ${Date.now()}` }, 30_000);
  return r.status === 201 ? `ok ${Math.round(r.ms)} ms` : `FAILED ${r.status}`;
}

async function newSpace(title: string) {
  return (await must(call(ADMIN, 'POST', `/v1/orgs/${orgA}/spaces`, { title }), 'space')).id as string;
}
function insertPage(spaceId: string, title: string, markdown: string) {
  return call(ADMIN, 'POST', `/v1/spaces/${spaceId}/content`, { changes: [{ operation: 'insert_page', title, document: { markdown } }] });
}

type Row = { attack: string; outcome: string; healthzWorstMs: number; loopMaxMs: number; rssBeforeMiB: number; rssPeakMiB: number; otherTenant: string; alive: boolean };
const rows: Row[] = [];
/** `prepare` runs before /healthz is polled: the setup a legitimate user would do (big writes are not the attack). */
async function attack<P = void>(name: string, key: string, run: (prepared: P) => Promise<string>, prepare?: () => Promise<P>) {
  if (!want(key) || serverDied) return;
  log(`attack: ${name}`);
  const prepared = (await prepare?.()) as P;
  const before = await rss();
  const stop = pollHealth();
  let outcome: string;
  let other = '';
  try {
    const [o, c] = await Promise.all([run(prepared), sleep(300).then(canary)]);
    outcome = o;
    other = c;
  } catch (err) {
    outcome = `error: ${String(err).slice(0, 120)}`;
  }
  const h = await stop();
  const alive = !serverDied && (await call(null, 'GET', '/healthz', undefined, 5000)).status === 200;
  rows.push({ attack: name, outcome, healthzWorstMs: Math.round(h.worst), loopMaxMs: Math.round(h.loopMaxMs), rssBeforeMiB: Math.round(before), rssPeakMiB: Math.round(h.peakRss), otherTenant: other, alive });
}

// ------------------------------------------------------------------ the attacks

await attack('117 KB of `*a` written, then read as a document', 'md', async () => {
  const space = await newSpace('pathological');
  const w = await insertPage(space, 'Stars', '*a'.repeat(58_500));
  if (w.status !== 200 && w.status !== 201) return `write ${w.status} in ${Math.round(w.ms)} ms`;
  const pages = await must(call(ADMIN, 'GET', `/v1/spaces/${space}/content/pages`), 'pages');
  const r = await call(ADMIN, 'GET', `/v1/spaces/${space}/content/page/${pages.pages[0].id}?format=document`);
  return `write ${w.status} ${Math.round(w.ms)} ms, read ${r.status} ${Math.round(r.ms)} ms`;
});

await attack('`> `×20,000, `[`×40,000 and a 2,000-level list written', 'md', async () => {
  const space = await newSpace('nesting');
  const out: string[] = [];
  for (const [label, md] of [
    ['quotes', '> '.repeat(20_000) + 'deep'],
    ['brackets', '['.repeat(40_000)],
    ['list', Array.from({ length: 2000 }, (_, i) => ' '.repeat(i * 2) + '- item').join('\n')],
  ] as const) {
    const w = await insertPage(space, label, md);
    out.push(`${label} ${w.status} ${Math.round(w.ms)} ms`);
  }
  return out.join(', ');
});

await attack('200 publishedSite reads with a 3 MiB claims pad (outsider)', 'pads', async () => {
  const site = (await must(call(ADMIN, 'POST', `/v1/orgs/${orgA}/sites`, { title: 'Pads' }), 'site')).id;
  const shown = await newSpace('shown');
  await must(call(ADMIN, 'POST', `/v1/orgs/${orgA}/sites/${site}/sections`, { spaceId: shown, title: 'Docs' }), 'section');
  await must(call(ADMIN, 'PATCH', `/v1/orgs/${orgA}/sites/${site}`, { visibility: 'public' }), 'public');
  await must(call(ADMIN, 'POST', `/v1/orgs/${orgA}/sites/${site}/publish`), 'publish');
  const q = 'query($s: ID!, $o: ID!, $v: JSON) { publishedSite(siteId: $s, organizationId: $o, visitor: $v) { id title } }';
  const statuses = new Map<string, number>();
  for (let i = 0; i < 200; i++) {
    const pad = String(i).padEnd(3 * MiB, 'x');
    const r = await call(outsider, 'POST', '/graphql', { query: q, variables: { s: site, o: orgA, v: { claims: { pad } } } });
    const key = r.body?.errors ? `${r.status}:${r.body.errors[0]?.extensions?.code}` : String(r.status);
    statuses.set(key, (statuses.get(key) ?? 0) + 1);
    if (serverDied) break;
  }
  return [...statuses].map(([k, n]) => `${n}× ${k}`).join(', ');
});

await attack('two stalled 4 MiB uploads to /graphql, then 10 writes', 'uploads', async () => {
  const sockets = [0, 1].map(() => {
    const s = net.connect(port, '127.0.0.1');
    s.on('error', () => {});
    // Declared at the body cap (4 MiB), all but the last byte sent, then silence.
    s.write(`POST /graphql HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${4 * MiB}\r\n\r\n`);
    s.write('{"query":"' + 'a'.repeat(4 * MiB - 11));
    return s;
  });
  await sleep(500);
  let ok = 0;
  const codes: number[] = [];
  for (let i = 0; i < 10; i++) {
    const r = await call(tokenB, 'POST', `/v1/orgs/${orgB}/spaces`, { title: `during stall ${i}` }, 30_000);
    if (r.status === 201) ok++;
    else codes.push(r.status);
  }
  const g = await gql(tokenB, '{ __typename }');
  sockets.forEach((s) => s.destroy());
  return `${ok}/10 writes 201${codes.length ? ` (others ${codes.join(',')})` : ''}, GraphQL POST ${g.status}`;
});

// Built before the attack: deflating 1 GiB here would stall this process's own /healthz poller.
const bomb = want('bomb') ? zipBomb(1024 * MiB) : Buffer.alloc(0);
await attack('zip bomb: 1 MiB archive, one 1 GiB entry, imported', 'bomb', async () => {
  const srv = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/zip', 'content-length': bomb.length }).end(bomb));
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(srv.address() as net.AddressInfo).port}/bomb.zip`;
  const space = await newSpace('bomb');
  const r = await call(ADMIN, 'POST', `/v1/spaces/${space}/content/import`, { source: 'zip', url });
  srv.close();
  return `archive ${(bomb.length / MiB).toFixed(1)} MiB: ${r.status} ${JSON.stringify(r.body).slice(0, 100)} in ${Math.round(r.ms)} ms`;
});

await attack<{ space: string; cr: string }>(
  'PDF export of a 100-page change request (GET)',
  'pdf',
  async ({ space, cr }) => {
    const r = await call(ADMIN, 'GET', `/v1/spaces/${space}/change-requests/${cr}/pdf`);
    if (r.status !== 200 || typeof r.body?.url !== 'string') return `${r.status} in ${Math.round(r.ms)} ms ${JSON.stringify(r.body).slice(0, 80)}`;
    // The URL answers 202 while the export renders (in a job, since issue 20), then the PDF.
    const url = new URL(r.body.url, base);
    const t0 = performance.now();
    let status = 0;
    for (let i = 0; i < 1200; i++) {
      const res = await fetch(url, { headers: { authorization: `Bearer ${ADMIN}` } });
      await res.arrayBuffer();
      status = res.status;
      if (status !== 202) break;
      await sleep(250);
    }
    return `GET ${r.status} in ${Math.round(r.ms)} ms; the PDF ${status} after ${Math.round(performance.now() - t0)} ms`;
  },
  async () => {
    const space = await newSpace('pdf');
    const cr = (await must(call(ADMIN, 'POST', `/v1/spaces/${space}/change-requests`, { subject: 'big' }), 'cr')).id as string;
    const body = '## Section\n\n' + 'Lorem ipsum dolor sit amet, consectetur adipiscing elit. '.repeat(40) + '\n\n';
    for (let i = 0; i < 2; i++) {
      const changes = Array.from({ length: 50 }, (_, j) => ({ operation: 'insert_page', title: `Page ${i * 50 + j}`, document: { markdown: body.repeat(4) } }));
      await must(call(ADMIN, 'POST', `/v1/spaces/${space}/change-requests/${cr}/content`, { changes }), 'pages');
    }
    return { space, cr };
  },
);

await attack("a tarpit webhook receiver in A, then B's OpenAPI processing", 'tarpit', async () => {
  const tarpit = net.createServer((s) => s.on('error', () => {})); // accepts, never answers
  await new Promise<void>((r) => tarpit.listen(0, '127.0.0.1', r));
  const hook = `http://127.0.0.1:${(tarpit.address() as net.AddressInfo).port}/hook`;
  await must(call(ADMIN, 'POST', `/v1/orgs/${orgA}/webhooks`, { url: hook }), 'webhook');
  for (let i = 0; i < 10; i++) await call(ADMIN, 'POST', `/v1/orgs/${orgA}/spaces`, { title: `noise ${i}` });
  await sleep(1000);
  const specText = JSON.stringify({ openapi: '3.0.0', info: { title: 'B', version: '1' }, paths: {} });
  const t0 = performance.now();
  const created = await call(tokenB, 'POST', `/v1/orgs/${orgB}/openapi`, { slug: 'b-api', source: { text: specText } });
  if (created.status !== 201) return `spec ${created.status} ${JSON.stringify(created.body).slice(0, 120)}`;
  let state = '';
  for (let i = 0; i < 1200 && state !== 'complete'; i++) {
    await sleep(100);
    const v = await call(tokenB, 'GET', `/v1/orgs/${orgB}/openapi/b-api`);
    state = v.body?.processingState ?? String(v.status);
  }
  tarpit.close();
  return `B's spec ${state} after ${Math.round(performance.now() - t0)} ms`;
});

await attack('one token opens 600 subscriptions; then another tenant subscribes', 'subs', async () => {
  const site = (await must(call(ADMIN, 'POST', `/v1/orgs/${orgA}/sites`, { title: 'Live' }), 'site')).id;
  const streams: AbortController[] = [];
  let opened = 0;
  let refused = '';
  for (let i = 0; i < 600; i++) {
    const ac = new AbortController();
    streams.push(ac);
    const res = await fetch(`${base}/graphql`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ query: `subscription { siteStructureChanged(siteId: "${site}") { event { seq } } }` }),
      signal: ac.signal,
    }).catch(() => null);
    if (res?.status === 200) {
      const reader = res.body!.getReader();
      const first = await Promise.race([reader.read(), sleep(300).then(() => null)]);
      const text = first?.value ? Buffer.from(first.value).toString() : '';
      if (/"errors"/.test(text)) {
        refused = text.slice(0, 120).replace(/\s+/g, ' ');
        ac.abort();
        break;
      }
      opened++;
    } else {
      refused = `HTTP ${res?.status}`;
      break;
    }
  }
  const siteB = (await must(call(tokenB, 'POST', `/v1/orgs/${orgB}/sites`, { title: 'B live' }), 'site B')).id;
  const ac = new AbortController();
  const res = await fetch(`${base}/graphql`, {
    method: 'POST',
    headers: { authorization: `Bearer ${tokenB}`, 'content-type': 'application/json', accept: 'text/event-stream' },
    body: JSON.stringify({ query: `subscription { siteStructureChanged(siteId: "${siteB}") { event { seq } } }` }),
    signal: ac.signal,
  }).catch(() => null);
  const text = res ? await Promise.race([res.body!.getReader().read().then((c) => Buffer.from(c.value ?? []).toString()), sleep(500).then(() => '')]) : '';
  const bOk = res?.status === 200 && !/"errors"/.test(text);
  ac.abort();
  streams.forEach((s) => s.abort());
  return `one token: ${opened} open${refused ? `, then refused (${refused})` : ''}; tenant B ${bOk ? 'subscribed' : 'REFUSED'}`;
});

await attack(`a user mints tokens and spends them all (a budget of ${RATE_POINTS} points a minute)`, 'tokens', async () => {
  const tokens = [minter];
  let mintRefused = 0;
  for (let i = 0; i < 30; i++) {
    const r = await gql(minter, 'mutation($l: String!) { createApiToken(input: {label: $l}) { token } }', { l: `t${i}` });
    if (r.body?.data?.createApiToken?.token) tokens.push(r.body.data.createApiToken.token);
    else mintRefused++;
  }
  let accepted = 0;
  for (const t of tokens.slice(0, 6)) {
    for (let i = 0; i < RATE_POINTS; i++) {
      const r = await call(t, 'GET', '/v1/user');
      if (r.status === 429) break;
      accepted++;
    }
  }
  return `minted ${tokens.length - 1} of 30 (${mintRefused} refused); ${accepted} requests accepted over 6 tokens`;
});

await attack('anonymous introspection, 300 times', 'introspect', async () => {
  const q = (await import('graphql')).getIntrospectionQuery();
  const counts = new Map<number, number>();
  for (let i = 0; i < 300; i++) {
    const r = await gql(null, q);
    counts.set(r.status, (counts.get(r.status) ?? 0) + 1);
  }
  return [...counts].map(([s, n]) => `${n}× ${s}`).join(', ');
});

// ------------------------------------------------------------------ the table

console.log('\n| attack | outcome | /healthz worst | server event loop, longest delay | RSS before → peak | other tenant | alive |');
console.log('|---|---|---|---|---|---|---|');
for (const r of rows) console.log(`| ${r.attack} | ${r.outcome} | ${r.healthzWorstMs} ms | ${r.loopMaxMs} ms | ${r.rssBeforeMiB} → ${r.rssPeakMiB} MiB | ${r.otherTenant} | ${r.alive ? 'yes' : 'NO'} |`);
if (serverDied) console.log(`\nthe server died (${serverDied}):\n${stderrTail.slice(-1500)}`);
server.kill('SIGTERM');
await new Promise((r) => (serverDied ? r(null) : server.once('exit', r)));
await db.stop();

// ------------------------------------------------------------------ helpers

function sleep(ms: number) {
  return new Promise<void>((r) => setTimeout(r, ms));
}

/** A zip with one deflated entry of `size` zero bytes: about size/1000 bytes on the wire. */
function zipBomb(size: number): Buffer {
  const zeros = Buffer.alloc(size);
  const data = zlib.deflateRawSync(zeros, { level: 9 });
  return zipOf('big.md', data, zlib.crc32(zeros), size);
}

function zipOf(name: string, data: Buffer, crc: number, size: number): Buffer {
  const nameBuf = Buffer.from(name);
  const local = Buffer.alloc(30);
  local.writeUInt32LE(0x04034b50, 0);
  local.writeUInt16LE(20, 4);
  local.writeUInt16LE(8, 8); // deflate
  local.writeUInt32LE(crc >>> 0, 14);
  local.writeUInt32LE(data.length, 18);
  local.writeUInt32LE(size >>> 0, 22);
  local.writeUInt16LE(nameBuf.length, 26);
  const central = Buffer.alloc(46);
  central.writeUInt32LE(0x02014b50, 0);
  central.writeUInt16LE(20, 4);
  central.writeUInt16LE(20, 6);
  central.writeUInt16LE(8, 10);
  central.writeUInt32LE(crc >>> 0, 16);
  central.writeUInt32LE(data.length, 20);
  central.writeUInt32LE(size >>> 0, 24);
  central.writeUInt16LE(nameBuf.length, 28);
  central.writeUInt32LE(0, 42);
  const cdOffset = local.length + nameBuf.length + data.length;
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(1, 8);
  end.writeUInt16LE(1, 10);
  end.writeUInt32LE(central.length + nameBuf.length, 12);
  end.writeUInt32LE(cdOffset, 16);
  return Buffer.concat([local, nameBuf, data, central, nameBuf, end]);
}
