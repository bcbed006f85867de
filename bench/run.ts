// `npm run bench [-- --scale small|medium|large]`: how fast the gateway is, on a realistic
// dataset, under load from a separate process. See docs/performance.md.
//
//   1. a database: fresh embedded PostgreSQL (temporary directory, free port), or a fresh
//      database on the DATABASE_URL server; migrated with the project's runner;
//   2. the dataset (bench/seed.ts, bulk SQL);
//   3. the gateway in a child process (bench/server.ts: the production createApp plus a
//      loopback stats port counting SQL statements, requests and RSS);
//   4. every scenario of bench/scenarios.ts: probed (missing routes are skipped), traced (the SQL
//      of one request), warmed up, then loaded with autocannon at each connection count; the
//      write path runs its own loop; scenario 1 is compared with its SQL floor (bench/floor.ts);
//   5. a table on stdout and the figures as JSON in bench/results/<timestamp>-<scale>.json.
//
// Options: --scale small|medium|large (small)  --duration <s> (3 small, 10 otherwise)
//          --warmup <s> (1)  --only 1,3a,6b  --keep-db  --no-write
//          --node-arg=<option> (repeatable; Node options for the gateway process, after npm start's memory options)
//          --no-start-flags (leave out npm start's memory options)
//          --cpu-prof (CPU profile of the gateway in bench/results/profiles/)
//          --tsx (the gateway through tsx instead of the esbuild bundle npm start runs)
import { execFileSync, fork, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import pg from 'pg';
import { createParser } from 'eventsource-parser';
import { startBenchDatabase, type BenchDatabase } from './db.ts';
import { seed, SCALES, type Fixture, type Scale } from './seed.ts';
import { SCENARIOS, describeSiteTree, type BenchContext, type HttpCall, type LoadScenario, type WriteScenario, type FanoutScenario } from './scenarios.ts';
import { runFloor, openFloor, paired, summarize, FLOOR_SQL } from './floor.ts';
import { checkPlans } from './plans.ts';
import { cpuSnapshot, cpuPerRequest, findPostmaster } from './cpu.ts';
import { seedPeer, compareTrees } from './peer.ts';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const MB = 1024 * 1024;

// ------------------------------------------------------------------ options

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  if (i > 0 && process.argv[i + 1] && !process.argv[i + 1].startsWith('--')) return process.argv[i + 1];
  const eq = process.argv.find((a) => a.startsWith(`--${name}=`));
  return eq?.slice(name.length + 3);
}
const flag = (name: string) => process.argv.includes(`--${name}`);

const scale = (arg('scale') ?? 'small') as Scale;
if (!SCALES[scale]) {
  console.error(`--scale must be one of ${Object.keys(SCALES).join(', ')}`);
  process.exit(2);
}
const duration = Number(arg('duration') ?? (scale === 'small' ? 3 : 10));
const warmup = Number(arg('warmup') ?? 1);
const only = arg('only')?.split(',').map((s) => s.trim());
const keepDb = flag('keep-db');
const noWrite = flag('no-write');
/**
 * Node options for the gateway process: by default the memory options `npm start` runs with (read
 * from package.json, so the bench measures what ships), then any --node-arg=<option> (repeatable;
 * a later option wins). --no-start-flags leaves out npm start's options.
 */
const startFlags = flag('no-start-flags')
  ? []
  : (JSON.parse(fs.readFileSync(path.join(HERE, '..', 'package.json'), 'utf8')).scripts.start as string).match(/--max-[a-z-]+=\d+/g) ?? [];
const nodeArgs = [...startFlags, ...process.argv.filter((a) => a.startsWith('--node-arg=')).map((a) => a.slice('--node-arg='.length))];
/** Write a CPU profile of the gateway to bench/results/profiles/ (open in Chrome DevTools). */
const cpuProf = flag('cpu-prof');
/**
 * The gateway runs as `npm start` runs it: one esbuild bundle (scripts/build.mjs) on plain
 * `node`. --tsx runs the TypeScript sources through tsx instead (as the tests do).
 */
const compiled = !flag('tsx');

const t0 = Date.now();
const log = (m: string) => console.log(`[bench ${((Date.now() - t0) / 1000).toFixed(1).padStart(5)}s] ${m}`);

// ------------------------------------------------------------------ result shapes

type Latency = { p50: number; p95: number; p99: number; mean: number; max: number };
type Row = {
  id: string;
  group: number;
  name: string;
  api?: string;
  status: 'ok' | 'skipped' | 'error';
  reason?: string;
  connections?: number;
  requests?: number;
  seconds?: number;
  rps?: number;
  latency?: Latency;
  statementsPerRequest?: number;
  peakRssMB?: number;
  peakHeapMB?: number;
  /** process.memoryUsage() of the gateway at the end of the run, MB. */
  memoryMB?: Record<string, number>;
  non2xx?: number;
  errors?: number;
  bytesPerResponse?: number;
  sameDataAs?: string;
  note?: string;
  /** The SQL of one request (probe), for reading where the statements go. */
  trace?: { count: number; statements: string[] };
  /**
   * CPU milliseconds per request during the timed run, from /proc: the serving process (the
   * gateway, or the peer for 1.peer) and the whole PostgreSQL server.
   */
  cpu?: { serverMs?: number; postgresMs?: number };
};

// ------------------------------------------------------------------ the gateway process

type Server = { child: ChildProcess; baseUrl: string; statsUrl: string; pid?: number };

/** The PostgreSQL server's postmaster, when it runs on this machine (CPU per request). */
let postmasterPid: number | undefined;

/** bench/server.ts bundled by the script `npm start` builds with (two levels below the root). */
async function compileServer(): Promise<string> {
  const outfile = path.join(HERE, '.build', 'server.mjs');
  execFileSync(process.execPath, [path.join(HERE, '..', 'scripts', 'build.mjs'), path.join(HERE, 'server.ts'), outfile], { stdio: 'inherit' });
  return outfile;
}

async function startServer(databaseUrl: string, fx: Fixture): Promise<Server> {
  const entry = compiled ? await compileServer() : path.join(HERE, 'server.ts');
  return forkServer('gateway', entry, {
    execArgv: [
      ...(compiled ? [] : ['--import', 'tsx']),
      ...nodeArgs,
      ...(cpuProf ? ['--cpu-prof', `--cpu-prof-dir=${path.join(HERE, 'results', 'profiles')}`] : []),
    ],
    env: { ...process.env, DATABASE_URL: databaseUrl, DOCGRAPH_ADMIN_TOKEN: fx.adminToken, NODE_ENV: 'production' },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
}

/**
 * The peer (issue 14): PostGraphile v5 over schema `peer`, filled with the flagship site
 * (bench/peer.ts), in its own process (bench/peer-server.ts, through tsx, plain Node options:
 * PostGraphile as its docs run it). Undefined with the reason when PostGraphile is not installed.
 */
async function startPeer(databaseUrl: string, fx: Fixture): Promise<Server | { unavailable: string }> {
  try {
    import.meta.resolve('postgraphile');
  } catch {
    return { unavailable: 'postgraphile is not installed (a dev dependency)' };
  }
  const counts = await seedPeer(databaseUrl, fx.siteId);
  // The one-row write (8w.peer) updates the gateway's typical space (8w): the peer holds it too.
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query(`INSERT INTO peer.space (id, title, revision_id) SELECT id, title, "revisionId" FROM "Space" WHERE id = $1 ON CONFLICT DO NOTHING`, [fx.spaceId]);
  } finally {
    await client.end();
  }
  log(`peer: schema "peer" filled with the flagship site: ${counts.groups} groups, ${counts.sections} sections, ${counts.siteSpaces} site spaces, ${counts.spaces} spaces, ${counts.pages} pages`);
  return forkServer('peer', path.join(HERE, 'peer-server.ts'), {
    execArgv: ['--import', 'tsx'],
    env: { ...process.env, DATABASE_URL: databaseUrl, NODE_ENV: 'production' },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
}

/** Fork a server process (the gateway or the peer) and wait for its `ready` message (90 s at most). */
function forkServer(who: string, entry: string, options: Parameters<typeof fork>[2]): Promise<Server> {
  return new Promise((resolve, reject) => {
    const child = fork(entry, [], options);
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the ${who} did not start within 90 s`));
    }, 90_000);
    child.on('message', (m: any) => {
      if (m?.type === 'ready') {
        clearTimeout(timer);
        resolve({ child, baseUrl: `http://127.0.0.1:${m.port}`, statsUrl: `http://127.0.0.1:${m.statsPort}`, pid: m.pid ?? child.pid });
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the ${who} exited during start-up (code ${code})`));
    });
  });
}

async function stopServer(server: Server) {
  const { child } = server;
  if (child.exitCode !== null) return;
  await new Promise<void>((resolve) => {
    const kill = setTimeout(() => child.kill('SIGKILL'), 10_000);
    child.once('exit', () => {
      clearTimeout(kill);
      resolve();
    });
    try {
      child.send({ type: 'stop' });
    } catch {
      child.kill('SIGTERM');
    }
  });
}

type Stats = { statements: number; requests: number; inFlight: number; rss: number; peakRss: number; overallPeakRss: number; startRss: number; heapUsed: number; peakHeapUsed: number; memory: NodeJS.MemoryUsage };
const getJson = async (url: string, init?: RequestInit) => (await fetch(url, init)).json() as Promise<any>;
const stats = (s: Server): Promise<Stats> => getJson(`${s.statsUrl}/stats`);
const reset = (s: Server) => getJson(`${s.statsUrl}/reset`, { method: 'POST' });
/** The gateway's published-structure cache, on only for scenarios that ask for it (1.cached). */
const setCache = (s: Server, on: boolean) => getJson(`${s.statsUrl}/cache?enabled=${on ? 1 : 0}`, { method: 'POST' });
/** The gateway's search cache: off only for scenarios that ask (5a.cold: every request ranks). */
const setSearchCache = (s: Server, on: boolean) => getJson(`${s.statsUrl}/search-cache?enabled=${on ? 1 : 0}`, { method: 'POST' });

/**
 * Wait until the gateway has finished every request it started: autocannon stops at the end of
 * its duration without waiting for in-flight responses, whose SQL would otherwise be counted in
 * the next window.
 */
async function quiesce(s: Server, maxMs = 60_000) {
  const end = Date.now() + maxMs;
  let last = await stats(s);
  while (Date.now() < end) {
    await new Promise((r) => setTimeout(r, 150));
    const now = await stats(s);
    if (now.statements === last.statements && now.requests === last.requests && now.inFlight === 0) return now;
    last = now;
  }
  return last;
}

// ------------------------------------------------------------------ HTTP helpers

function headersFor(call: HttpCall, fx: Fixture): Record<string, string> {
  // Uncompressed, for autocannon and fetch alike: on loopback compression only costs CPU (fetch
  // would otherwise ask for it by itself and skew the paired runs against the SQL floor).
  const h: Record<string, string> = { authorization: `Bearer ${call.token ?? fx.adminToken}`, 'accept-encoding': 'identity' };
  if (call.body !== undefined) h['content-type'] = 'application/json';
  return h;
}

async function send(server: Server, fx: Fixture, call: HttpCall) {
  const res = await fetch(server.baseUrl + call.path, {
    method: call.method,
    headers: headersFor(call, fx),
    body: call.body === undefined ? undefined : JSON.stringify(call.body),
  });
  const text = await res.text();
  let body: any;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = text;
  }
  return { status: res.status, body, bytes: Buffer.byteLength(text) };
}

/** Whether a probe response means "this route or field does not exist (yet)". */
function unavailable(call: HttpCall, status: number, body: any): string | undefined {
  if (call.path.startsWith('/v1/') && status === 404 && /^No route/.test(body?.error?.message ?? '')) return body.error.message;
  if (call.path === '/graphql' && Array.isArray(body?.errors)) {
    const e = body.errors[0];
    if (e?.extensions?.code === 'GRAPHQL_VALIDATION_FAILED' || /^Cannot query field|^Unknown (argument|type)/.test(e?.message ?? '')) return e.message;
  }
  return undefined;
}

function failure(call: HttpCall, status: number, body: any): string | undefined {
  if (status < 200 || status >= 300) return `HTTP ${status}: ${JSON.stringify(body).slice(0, 300)}`;
  if (call.path === '/graphql' && body?.errors?.length) return `GraphQL error: ${JSON.stringify(body.errors[0]).slice(0, 300)}`;
  return undefined;
}

// ------------------------------------------------------------------ load scenarios

const MIN_SAMPLES = 5;

/** One autocannon run for `seconds` (or for `amount` requests when given). */
async function cannon(server: Server, fx: Fixture, call: HttpCall, connections: number, seconds: number, amount?: number) {
  const samples: number[] = [];
  let non2xx = 0;
  let bytes = 0;
  const started = performance.now();
  const instance = autocannon({
    url: server.baseUrl + call.path,
    method: call.method,
    headers: headersFor(call, fx),
    body: call.body === undefined ? undefined : JSON.stringify(call.body),
    connections: amount ? Math.min(connections, amount) : connections,
    pipelining: 1,
    ...(amount ? { amount } : { duration: seconds }),
    timeout: 120,
  });
  instance.on('response', (_client: unknown, statusCode: number, resBytes: number, responseTime: number) => {
    if (statusCode >= 200 && statusCode < 300) {
      samples.push(responseTime);
      bytes += resBytes;
    } else non2xx++;
  });
  const result = await instance;
  const elapsed = (performance.now() - started) / 1000;
  return { samples, non2xx, errors: result.errors + result.timeouts, elapsed, bytes };
}

async function runLoad(s: LoadScenario, server: Server, ctx: BenchContext): Promise<{ rows: Row[]; call?: HttpCall; statements?: string[] }> {
  const base: Row = { id: s.id, group: s.group, name: s.name, api: s.api, status: 'ok', sameDataAs: s.sameDataAs };
  const call = await s.request(ctx);
  if ('unavailable' in call) return { rows: [{ ...base, status: 'skipped', reason: call.unavailable }] };

  // Probe: is it there, and is it what we asked for? The SQL of this one request is recorded.
  await quiesce(server);
  await getJson(`${server.statsUrl}/trace`, { method: 'POST' });
  const probeStart = performance.now();
  const probe = await send(server, ctx.fx, call);
  let probeMs = performance.now() - probeStart;
  const trace = (await getJson(`${server.statsUrl}/trace`)) as { statements: string[] };
  const missing = unavailable(call, probe.status, probe.body);
  if (missing) return { rows: [{ ...base, status: 'skipped', reason: `not available: ${missing}` }] };
  const failed = failure(call, probe.status, probe.body);
  if (failed) return { rows: [{ ...base, status: 'error', reason: failed }] };
  let note: string | undefined;
  try {
    note = s.describe?.(probe.body, ctx);
  } catch (err) {
    note = `unexpected response shape: ${(err as Error).message}`;
  }

  const rows: Row[] = [];
  for (const connections of s.connections) {
    // Slow requests (fewer than ~3 fit in the run): skip the timed run, whose last request would
    // be abandoned, and time MIN_SAMPLES requests instead; the probe served as the warm-up.
    if (probeMs * 3 > duration * 1000) {
      // The first request may have paid for cold caches: measure once more before deciding.
      const t = performance.now();
      await send(server, ctx.fx, call);
      probeMs = Math.min(probeMs, performance.now() - t);
    }
    const slow = probeMs * 3 > duration * 1000;
    if (!slow && warmup > 0) await cannon(server, ctx.fx, call, connections, warmup);
    await quiesce(server);
    await reset(server);
    const cpu0 = cpuSnapshot(server.pid, postmasterPid);
    const r = slow ? await cannon(server, ctx.fx, call, connections, 0, MIN_SAMPLES) : await cannon(server, ctx.fx, call, connections, duration);
    // Make sure every figure rests on at least MIN_SAMPLES responses.
    if (r.samples.length < MIN_SAMPLES) {
      const more = await cannon(server, ctx.fx, call, connections, 0, MIN_SAMPLES - r.samples.length);
      r.samples.push(...more.samples);
      r.non2xx += more.non2xx;
      r.errors += more.errors;
      r.bytes += more.bytes;
      r.elapsed += more.elapsed;
    }
    const st = await quiesce(server);
    const cpu = cpuPerRequest(cpu0, cpuSnapshot(server.pid, postmasterPid), st.requests);
    rows.push({
      ...base,
      connections,
      requests: r.samples.length,
      seconds: r.elapsed,
      rps: r.samples.length / r.elapsed,
      latency: summarize(r.samples),
      statementsPerRequest: st.requests ? st.statements / st.requests : undefined,
      peakRssMB: st.peakRss / MB,
      peakHeapMB: st.peakHeapUsed / MB,
      cpu,
      memoryMB: Object.fromEntries(Object.entries(st.memory).map(([k, v]) => [k, Math.round((v as number) / MB)])),
      non2xx: r.non2xx,
      errors: r.errors,
      bytesPerResponse: r.samples.length ? Math.round(r.bytes / r.samples.length) : probe.bytes,
      note: [note, slow ? `slow: ${r.samples.length} requests timed (probe ${fmt(probeMs, 0)} ms)` : '', r.non2xx ? `${r.non2xx} non-2xx` : '', r.errors ? `${r.errors} errors` : ''].filter(Boolean).join('; ') || undefined,
      trace: connections === s.connections[0] ? { count: trace.statements.length, statements: trace.statements.map((q) => (q.length > 600 ? q.slice(0, 600) + ' …' : q)) } : undefined,
    });
    log(`${s.id.padEnd(3)} c=${connections}: ${fmt(rows.at(-1)!.rps, 0)} req/s, p50 ${fmt(rows.at(-1)!.latency!.p50, 1)} ms, ${fmt(rows.at(-1)!.statementsPerRequest, 1)} SQL/req, CPU/req ${fmt(cpu.serverMs, 1)} ms server + ${fmt(cpu.postgresMs, 1)} ms PostgreSQL${note ? ` (${note})` : ''}`);
  }
  return { rows, call, statements: trace.statements };
}

type Paired = { a: string; b: string; pairs: number; aLatency: Latency; bLatency: Latency; ratioP50: number };

/** A and B alternately on one connection each (see `paired` in floor.ts). */
async function pairedRun(server: Server, fx: Fixture, aId: string, a: () => Promise<unknown>, bId: string, b: () => Promise<unknown>): Promise<Paired> {
  await quiesce(server);
  // Short warm-up of both, then the timed alternation.
  await paired(a, b, Math.min(0.5, warmup));
  const r = await paired(a, b, Math.max(2, (duration * 2) / 3));
  log(`paired ${aId} vs ${bId}: p50 ${fmt(r.a.p50)} / ${fmt(r.b.p50)} ms = ${r.ratioP50.toFixed(2)}× over ${r.pairs} pairs`);
  return { a: aId, b: bId, pairs: r.pairs, aLatency: r.a, bLatency: r.b, ratioP50: r.ratioP50 };
}

function okCall(server: Server, fx: Fixture, call: HttpCall) {
  return async () => {
    const r = await send(server, fx, call);
    const f = failure(call, r.status, r.body);
    if (f) throw new Error(f);
    return r;
  };
}

// ------------------------------------------------------------------ write path

const updatedMarkdown = (i: number, k: number) =>
  `## Revised section ${i}.${k}\n\nThis paragraph was rewritten by the benchmark (iteration ${i}, page ${k}). ` +
  'It keeps the page realistic: a few sentences about configuration, tokens, publishing and review. '.repeat(8) +
  `\n\n- step one\n- step two\n- step three\n\n\`\`\`bash\ncurl https://api.example.com/v1/pages/${k}\n\`\`\`\n`;

type StepTimes = { create: number[]; content: number[]; merge: number[]; batchMerge: number[]; iteration: number[] };

async function runWrite(s: WriteScenario, server: Server, fx: Fixture): Promise<Row[]> {
  const base: Row = { id: s.id, group: s.group, name: s.name, api: 'rest', status: 'ok' };
  const spaces = fx.writeSpaces.slice(0, s.clients);
  if (spaces.length < s.clients) return [{ ...base, status: 'error', reason: `the dataset has ${spaces.length} write spaces, ${s.clients} needed` }];
  const iterations = s.iterations(fx);
  const sequential = s.clients === 1;
  const times: StepTimes = { create: [], content: [], merge: [], batchMerge: [], iteration: [] };
  const stepStatements = { create: 0, content: 0, merge: 0 };
  let failures = 0;
  let firstFailure: string | undefined;
  let unavailableReason: string | undefined;
  let iterationCounter = 0;

  const timed = async (call: HttpCall) => {
    const t = performance.now();
    const r = await send(server, fx, call);
    return { ...r, ms: performance.now() - t };
  };
  const stepStats = async (key: keyof typeof stepStatements, fn: () => Promise<any>) => {
    if (!sequential) return fn();
    const before = await stats(server);
    const out = await fn();
    const after = await stats(server);
    stepStatements[key] += after.statements - before.statements;
    return out;
  };

  async function iteration(space: { spaceId: string; pageIds: string[] }, record: boolean) {
    const i = ++iterationCounter;
    const startedAt = performance.now();
    const cr = await stepStats('create', () =>
      timed({ method: 'POST', path: `/v1/spaces/${space.spaceId}/change-requests`, body: { subject: `Bench edit ${i}` } }),
    );
    const missing = unavailable({ method: 'POST', path: '/v1/x' }, cr.status, cr.body);
    if (missing) {
      unavailableReason = missing;
      return false;
    }
    if (cr.status !== 201 || !cr.body?.id) throw new Error(`create change request: HTTP ${cr.status} ${JSON.stringify(cr.body).slice(0, 200)}`);
    const crPath = `/v1/spaces/${space.spaceId}/change-requests/${cr.body.id}`;
    const changes = space.pageIds.slice(0, 5).map((page, k) => ({ operation: 'update_page', page, document: { markdown: updatedMarkdown(i, k) } }));
    const content = await stepStats('content', () => timed({ method: 'POST', path: `${crPath}/content`, body: { changes } }));
    if (unavailable({ method: 'POST', path: '/v1/x' }, content.status, content.body)) {
      unavailableReason = `POST …/change-requests/{id}/content: ${content.body.error.message}`;
      return false;
    }
    if (content.status !== 200) throw new Error(`content batch: HTTP ${content.status} ${JSON.stringify(content.body).slice(0, 200)}`);
    const merge = await stepStats('merge', () => timed({ method: 'POST', path: `${crPath}/merge` }));
    if (merge.status !== 200 || merge.body?.result !== 'merge') throw new Error(`merge: HTTP ${merge.status} ${JSON.stringify(merge.body).slice(0, 200)}`);
    if (record) {
      times.create.push(cr.ms);
      times.content.push(content.ms);
      times.merge.push(merge.ms);
      times.batchMerge.push(content.ms + merge.ms);
      times.iteration.push(performance.now() - startedAt);
    }
    return true;
  }

  // Warm-up: one iteration per client (JIT, pools, plan caches), not recorded.
  for (const space of spaces) {
    try {
      if (!(await iteration(space, false))) break;
    } catch (err) {
      return [{ ...base, status: 'error', reason: (err as Error).message }];
    }
  }
  if (unavailableReason) return [{ ...base, status: 'skipped', reason: `not available: ${unavailableReason}` }];

  await reset(server);
  stepStatements.create = stepStatements.content = stepStatements.merge = 0;
  const started = performance.now();
  const client = async (space: { spaceId: string; pageIds: string[] }) => {
    for (let n = 0; n < iterations; n++) {
      try {
        await iteration(space, true);
      } catch (err) {
        failures++;
        firstFailure ??= (err as Error).message;
      }
    }
  };
  if (sequential) {
    // One client, one request at a time, rotating over the write spaces.
    for (let n = 0; n < iterations; n++) {
      try {
        await iteration(fx.writeSpaces[n % fx.writeSpaces.length], true);
      } catch (err) {
        failures++;
        firstFailure ??= (err as Error).message;
      }
    }
  } else {
    await Promise.all(spaces.map(client));
  }
  const elapsed = (performance.now() - started) / 1000;
  const st = await stats(server);
  const done = times.iteration.length;
  const requests = done * 3;
  const perReq = st.requests ? st.statements / st.requests : undefined;
  const common = { connections: s.clients, seconds: elapsed, peakRssMB: st.peakRss / MB, errors: failures };
  const note = failures ? `${failures} failed iterations: ${firstFailure}` : undefined;
  const rows: Row[] = [
    { ...base, ...common, id: `${s.id}`, name: `${s.name}: whole iteration (3 requests)`, requests, rps: requests / elapsed, latency: summarize(times.iteration), statementsPerRequest: perReq, note },
    { ...base, ...common, id: `${s.id}.create`, name: 'POST …/change-requests', requests: done, latency: summarize(times.create), statementsPerRequest: sequential && done ? stepStatements.create / done : undefined },
    { ...base, ...common, id: `${s.id}.batch`, name: 'POST …/change-requests/{id}/content (5 update_page)', requests: done, latency: summarize(times.content), statementsPerRequest: sequential && done ? stepStatements.content / done : undefined },
    { ...base, ...common, id: `${s.id}.merge`, name: 'POST …/change-requests/{id}/merge', requests: done, latency: summarize(times.merge), statementsPerRequest: sequential && done ? stepStatements.merge / done : undefined },
    { ...base, ...common, id: `${s.id}.batch+merge`, name: '5-page batch + merge', requests: done, latency: summarize(times.batchMerge), statementsPerRequest: sequential && done ? (stepStatements.content + stepStatements.merge) / done / 2 : undefined },
  ];
  log(`${s.id} (${s.clients} client${s.clients > 1 ? 's' : ''}): ${done} iterations in ${elapsed.toFixed(1)} s, batch+merge p50 ${fmt(rows[4].latency!.p50, 1)} ms${note ? ` — ${note}` : ''}`);
  return rows;
}

/**
 * Scenario 7.live: `subscribers` event streams on the fixture's site, then a writer renames the
 * site `writes` times; each delivery's latency is measured from the start of its write request
 * (so it includes the write's own commit), and the gateway's RSS before and at its peak.
 */
async function runFanout(s: FanoutScenario, server: Server, fx: Fixture): Promise<Row[]> {
  const base: Row = { id: s.id, group: s.group, name: s.name, api: 'graphql', status: 'ok' };
  await reset(server);
  const before = await stats(server);
  const query = 'subscription($siteId: ID!) { siteStructureChanged(siteId: $siteId) { event { seq } site { title } } }';
  const sentAt = new Map<string, number>();
  const samples: number[] = [];
  let received = 0;
  const aborts: AbortController[] = [];
  const open = async () => {
    const abort = new AbortController();
    aborts.push(abort);
    const res = await fetch(`${server.baseUrl}/graphql`, {
      method: 'POST',
      headers: { ...headersFor({ method: 'POST', path: '/graphql', body: {} }, fx), accept: 'text/event-stream' },
      body: JSON.stringify({ query, variables: { siteId: fx.siteId } }),
      signal: abort.signal,
    });
    if (res.status !== 200 || !res.body) throw new Error(`subscribe: HTTP ${res.status} ${await res.text()}`);
    const parser = createParser({
      onEvent: (e) => {
        const title = e.data.startsWith('{') ? JSON.parse(e.data)?.data?.siteStructureChanged?.site?.title : undefined;
        const t0 = title ? sentAt.get(title) : undefined;
        if (t0 !== undefined) {
          samples.push(performance.now() - t0);
          received++;
        }
      },
    });
    const body = res.body;
    void (async () => {
      try {
        const text = body.pipeThrough(new TextDecoderStream()).getReader();
        for (let r = await text.read(); !r.done; r = await text.read()) parser.feed(r.value);
      } catch {
        // aborted
      }
    })();
  };
  // Open in batches (the machine is small): 50 at a time.
  for (let i = 0; i < s.subscribers; i += 50) await Promise.all(Array.from({ length: Math.min(50, s.subscribers - i) }, open));
  await new Promise((r) => setTimeout(r, 500));
  const opened = await stats(server);
  const writeTimes: number[] = [];
  const started = performance.now();
  for (let i = 0; i < s.writes; i++) {
    const title = `Fanout ${Date.now()} ${i}`;
    const t0 = performance.now();
    sentAt.set(title, t0);
    const r = await send(server, fx, { method: 'POST', path: '/graphql', body: { query: 'mutation($i: UpdateSiteInput!) { updateSite(input: $i) { site { id } } }', variables: { i: { siteId: fx.siteId, title } } } });
    if (r.status !== 200 || r.body?.errors) throw new Error(`write: HTTP ${r.status} ${JSON.stringify(r.body).slice(0, 200)}`);
    writeTimes.push(performance.now() - t0);
    await new Promise((res) => setTimeout(res, s.intervalMs));
  }
  const expected = s.subscribers * s.writes;
  const deadline = Date.now() + 15_000;
  while (received < expected && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  const elapsed = (performance.now() - started) / 1000;
  const after = await stats(server);
  for (const a of aborts) a.abort();
  const missing = expected - received;
  const note = `${received}/${expected} deliveries${missing ? ` (${missing} missing after 15 s)` : ''}; write p50 ${fmt(summarize(writeTimes).p50)} ms; RSS ${(before.rss / MB).toFixed(0)} MB before, ${(opened.rss / MB).toFixed(0)} MB with ${s.subscribers} streams open, ${(after.peakRss / MB).toFixed(0)} MB peak; ${(after.statements / Math.max(1, expected)).toFixed(1)} SQL per delivery`;
  log(`${s.id}: p50 ${fmt(summarize(samples).p50)} ms, p99 ${fmt(summarize(samples).p99)} ms — ${note}`);
  return [{ ...base, connections: s.subscribers, requests: received, seconds: elapsed, latency: summarize(samples), peakRssMB: after.peakRss / MB, errors: missing, note }];
}

// ------------------------------------------------------------------ output

function fmt(n: number | undefined, digits = 1) {
  if (n === undefined || Number.isNaN(n)) return '–';
  return n.toFixed(digits);
}

function table(rows: Row[]) {
  const head = ['id', 'scenario', 'conn', 'req/s', 'p50 ms', 'p95 ms', 'p99 ms', 'SQL/req', 'peak RSS MB', 'CPU ms/req srv', 'pg'];
  const lines = rows.map((r) =>
    r.status !== 'ok'
      ? [r.id, r.name, '', r.status === 'skipped' ? 'skipped (not available)' : 'ERROR', '', '', '', '', '', '', '']
      : [r.id, r.name, String(r.connections ?? ''), fmt(r.rps, 0), fmt(r.latency?.p50, 1), fmt(r.latency?.p95, 1), fmt(r.latency?.p99, 1), fmt(r.statementsPerRequest, 1), fmt(r.peakRssMB, 0), r.cpu ? fmt(r.cpu.serverMs, 1) : '', r.cpu ? fmt(r.cpu.postgresMs, 1) : ''],
  );
  const widths = head.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i].length)));
  const nameWidth = Math.min(widths[1], 62);
  widths[1] = nameWidth;
  const fmtLine = (l: string[]) => l.map((c, i) => (i === 1 ? (c.length > nameWidth ? c.slice(0, nameWidth - 1) + '…' : c.padEnd(nameWidth)) : i <= 1 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  const out = [fmtLine(head), widths.map((w) => '-'.repeat(w)).join('  '), ...lines.map(fmtLine)];
  for (const r of rows) if (r.status !== 'ok' && r.reason) out.push(`  ${r.id}: ${r.status === 'skipped' ? 'skipped' : 'error'} — ${r.reason}`);
  for (const r of rows) if (r.status === 'ok' && r.note) out.push(`  ${r.id}${r.connections && r.group < 6 ? ` c=${r.connections}` : ''}: ${r.note}`);
  return out.join('\n');
}

/**
 * Scenario 1 beside its floor and its peer: the paired p50 ratios, the req/s ratio at 8
 * connections and CPU per request of both sides (server process + PostgreSQL, from /proc).
 */
function peerSummary(rows: Row[], pairs: Paired[], check: string | undefined): string | undefined {
  const find = (id: string, c = 1) => rows.find((r) => r.id === id && r.status === 'ok' && (r.connections ?? 1) === c);
  const pair = (a: string, b: string) => pairs.find((p) => p.a === a && p.b === b);
  if (!find('1.peer')) return undefined;
  const out = ['scenario 1 beside its floor and its peer (PostGraphile v5, amber preset, normalized schema "peer"):'];
  if (check) out.push(`  response check: ${check}`);
  const pf = pair('1', '1.floor');
  const pp = pair('1', '1.peer');
  if (pf) out.push(`  paired p50 gateway / floor: ${pf.ratioP50.toFixed(2)}×  (${fmt(pf.aLatency.p50)} / ${fmt(pf.bLatency.p50)} ms, ${pf.pairs} pairs)`);
  if (pp) out.push(`  paired p50 gateway / peer:  ${pp.ratioP50.toFixed(2)}×  (${fmt(pp.aLatency.p50)} / ${fmt(pp.bLatency.p50)} ms, ${pp.pairs} pairs; p95 ${fmt(pp.aLatency.p95)} / ${fmt(pp.bLatency.p95)} ms)`);
  const g8 = find('1', 8);
  const p8 = find('1.peer', 8);
  if (g8 && p8) out.push(`  req/s at 8 connections gateway / peer: ${(g8.rps! / p8.rps!).toFixed(2)}×  (${fmt(g8.rps, 1)} / ${fmt(p8.rps, 1)} req/s)`);
  const pc = pair('1.cached', '1.peer');
  const c8 = find('1.cached', 8);
  if (pc) out.push(`  cached: paired p50 gateway hit / peer: ${pc.ratioP50.toFixed(2)}×  (${fmt(pc.aLatency.p50)} / ${fmt(pc.bLatency.p50)} ms, ${pc.pairs} pairs)`);
  if (c8 && p8) out.push(`  cached: req/s at 8 connections gateway / peer: ${(c8.rps! / p8.rps!).toFixed(2)}×  (${fmt(c8.rps, 1)} / ${fmt(p8.rps, 1)} req/s)`);
  for (const c of [1, 8]) {
    const g = find('1', c);
    const p = find('1.peer', c);
    if (!g?.cpu || !p?.cpu) continue;
    const tot = (r: Row) => (r.cpu!.serverMs ?? NaN) + (r.cpu!.postgresMs ?? NaN);
    out.push(
      `  CPU ms per request, c=${c}: gateway ${fmt(g.cpu.serverMs)} + PostgreSQL ${fmt(g.cpu.postgresMs)} = ${fmt(tot(g))}; ` +
        `peer ${fmt(p.cpu.serverMs)} + PostgreSQL ${fmt(p.cpu.postgresMs)} = ${fmt(tot(p))}; ratio ${(tot(g) / tot(p)).toFixed(2)}× ` +
        `(server ${((g.cpu.serverMs ?? NaN) / (p.cpu.serverMs ?? NaN)).toFixed(2)}×, PostgreSQL ${((g.cpu.postgresMs ?? NaN) / (p.cpu.postgresMs ?? NaN)).toFixed(2)}×)`,
    );
  }
  return out.join('\n');
}

type Target = { target: string; value: string; limit: string; pass: boolean | null; note?: string };

function evaluate(rows: Row[], floor: Row | undefined, pairs: Paired[], fx: Fixture): { ratios: Record<string, unknown>; targets: Target[] } {
  const find = (id: string, c = 1) => rows.find((r) => r.id === id && r.status === 'ok' && (r.connections ?? 1) === c);
  const pair = (a: string, b: string) => pairs.find((p) => p.a === a && p.b === b);
  const targets: Target[] = [];
  const ratios: Record<string, unknown> = {};
  const s1 = find('1');
  const p1 = pair('1', '1.floor');
  if (s1 && floor?.latency) {
    const unpaired = s1.latency!.p50 / floor.latency.p50;
    ratios.scenario1ToFloor = { paired: p1?.ratioP50 ?? null, unpaired };
    const ratio = p1?.ratioP50 ?? unpaired;
    const shown = p1 ? `${ratio.toFixed(2)}× paired (${fmt(p1.aLatency.p50)} / ${fmt(p1.bLatency.p50)} ms); ${unpaired.toFixed(2)}× from the separate runs` : `${ratio.toFixed(2)}× (${fmt(s1.latency!.p50)} / ${fmt(floor.latency.p50)} ms)`;
    targets.push({ target: 'scenario 1 p50 / SQL floor p50 (1 connection)', value: shown, limit: '≤ 2×', pass: ratio <= 2 });
  } else targets.push({ target: 'scenario 1 p50 / SQL floor p50', value: 'n/a', limit: '≤ 2×', pass: null, note: 'scenario 1 not measured' });
  if (s1) targets.push({ target: 'scenario 1 SQL statements per request', value: fmt(s1.statementsPerRequest, 1), limit: '≤ 3', pass: (s1.statementsPerRequest ?? Infinity) <= 3 });

  // The peer (issue 14): PostGraphile v5 serving the same structure.
  const peer1 = find('1.peer');
  const pp = pair('1', '1.peer');
  if (s1 && peer1) {
    const s8 = find('1', 8);
    const peer8 = find('1.peer', 8);
    const cpuTotal = (r?: Row) => (r?.cpu?.serverMs === undefined || r.cpu.postgresMs === undefined ? undefined : r.cpu.serverMs + r.cpu.postgresMs);
    ratios.scenario1ToPeer = {
      pairedP50: pp?.ratioP50 ?? null,
      unpairedP50: s1.latency!.p50 / peer1.latency!.p50,
      rps8: s8 && peer8 ? s8.rps! / peer8.rps! : null,
      cpu: Object.fromEntries(
        [1, 8].map((c) => {
          const g = find('1', c);
          const p = find('1.peer', c);
          return [`c${c}`, { gateway: g?.cpu ?? null, peer: p?.cpu ?? null, totalRatio: cpuTotal(g) !== undefined && cpuTotal(p) ? cpuTotal(g)! / cpuTotal(p)! : null }];
        }),
      ),
    };
    if (pp) targets.push({ target: 'scenario 1 p50 / peer p50 (paired, 1 connection)', value: `${pp.ratioP50.toFixed(2)}× (${fmt(pp.aLatency.p50)} / ${fmt(pp.bLatency.p50)} ms, ${pp.pairs} pairs)`, limit: '≤ 1.0 (issue 14)', pass: pp.ratioP50 <= 1 });
    if (s8 && peer8) targets.push({ target: 'scenario 1 req/s / peer req/s (8 connections)', value: `${(s8.rps! / peer8.rps!).toFixed(2)}× (${fmt(s8.rps, 1)} / ${fmt(peer8.rps, 1)})`, limit: '≥ 1.0 (issue 14)', pass: s8.rps! >= peer8.rps! });
    const pc = pair('1.cached', '1.peer');
    const c1 = find('1.cached');
    const c8 = find('1.cached', 8);
    if (pc) targets.push({ target: 'scenario 1 cached: hit p50 / peer p50 (paired, 1 connection)', value: `${pc.ratioP50.toFixed(2)}× (${fmt(pc.aLatency.p50)} / ${fmt(pc.bLatency.p50)} ms)`, limit: '≤ 0.25 (issue 14)', pass: pc.ratioP50 <= 0.25 });
    if (c8 && peer8) targets.push({ target: 'scenario 1 cached: req/s / peer req/s (8 connections)', value: `${(c8.rps! / peer8.rps!).toFixed(2)}× (${fmt(c8.rps, 1)} / ${fmt(peer8.rps, 1)})`, limit: '≥ 5 (issue 14)', pass: c8.rps! >= 5 * peer8.rps! });
    if (c1) targets.push({ target: 'scenario 1 cached: SQL statements per hit', value: fmt(c1.statementsPerRequest, 1), limit: '≤ 1', pass: (c1.statementsPerRequest ?? Infinity) <= 1 });
    const g1 = cpuTotal(s1);
    const p1c = cpuTotal(peer1);
    if (g1 !== undefined && p1c) targets.push({ target: 'scenario 1 CPU per request / peer\'s (server + PostgreSQL, 1 connection)', value: `${(g1 / p1c).toFixed(2)}× (${fmt(g1)} / ${fmt(p1c)} ms)`, limit: '≤ 1.0 (issue 14)', pass: g1 <= p1c });
  }

  const shim: Record<string, unknown> = {};
  for (const g of rows.filter((r) => r.sameDataAs && r.status === 'ok' && r.connections === 1)) {
    const r = find(g.sameDataAs!);
    if (!r) continue;
    const unpaired = r.latency!.p50 / g.latency!.p50;
    const p = pair(r.id, g.id);
    shim[`${r.id}/${g.id}`] = { paired: p?.ratioP50 ?? null, unpaired };
    const ratio = p?.ratioP50 ?? unpaired;
    const shown = p ? `${ratio.toFixed(2)}× paired (${fmt(p.aLatency.p50)} / ${fmt(p.bLatency.p50)} ms); ${unpaired.toFixed(2)}× from the separate runs` : `${ratio.toFixed(2)}× (${fmt(r.latency!.p50)} / ${fmt(g.latency!.p50)} ms)`;
    targets.push({ target: `REST ${r.id} p50 / GraphQL ${g.id} p50`, value: shown, limit: '≤ 1.15×', pass: ratio <= 1.15 });
  }
  ratios.restToGraphql = shim;

  // No RSS target any more (issue 14): the heap is sized so that no request the limits allow can
  // exhaust it (bench/worst-case.mjs, docs/performance.md); the gateway's RSS after start and at
  // its peak is reported below, beside the index check.
  for (const id of ['5a', '5b']) {
    const r = find(id);
    if (r) targets.push({ target: `search p50 (${id})`, value: `${fmt(r.latency!.p50)} ms`, limit: '< 50 ms (medium)', pass: r.latency!.p50 < 50, note: fx.scale === 'medium' ? undefined : `measured at ${fx.scale}` });
  }
  const w = rows.find((r) => r.id === '6a.batch+merge' && r.status === 'ok');
  if (w) targets.push({ target: '5-page batch + merge p50, sequential', value: `${fmt(w.latency!.p50)} ms`, limit: '< 150 ms', pass: w.latency!.p50 < 150 });
  return { ratios, targets };
}

/**
 * SQL statements per request must not grow with the data: compare with the latest result file
 * of another scale, if there is one.
 */
function compareWithOtherScale(rows: Row[], dir: string): string | undefined {
  let files: string[];
  try {
    files = fs.readdirSync(dir).filter((f) => f.endsWith('.json') && !f.endsWith(`-${scale}.json`)).sort();
  } catch {
    return undefined;
  }
  // The latest complete run (no --only) of another scale, else the latest of any kind.
  const read = (f: string) => JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')) as { scale: string; scenarios: Row[]; options?: { only?: string[] | null } };
  const complete = files.filter((f) => !read(f).options?.only);
  const file = complete.at(-1) ?? files.at(-1);
  if (!file) return undefined;
  const other = read(file);
  const key = (r: Row) => `${r.id}@${r.connections ?? 1}`;
  const before = new Map(other.scenarios.filter((r) => r.status === 'ok' && r.statementsPerRequest !== undefined).map((r) => [key(r), r.statementsPerRequest!]));
  const lines = [`SQL statements per request, ${other.scale} (${file}) → ${scale}:`];
  let grew = 0;
  for (const r of rows) {
    if (r.status !== 'ok' || r.statementsPerRequest === undefined || (r.connections ?? 1) !== 1) continue;
    const b = before.get(key(r));
    if (b === undefined) continue;
    const flagged = r.statementsPerRequest > b + 0.5;
    if (flagged) grew++;
    lines.push(`  ${r.id.padEnd(15)} ${fmt(b, 1).padStart(5)} → ${fmt(r.statementsPerRequest, 1).padStart(5)}${flagged ? '  (more)' : ''}`);
  }
  if (lines.length === 1) return undefined;
  lines.push(grew ? `  ${grew} scenario(s) issue more statements than at ${other.scale}` : '  none issues more statements than at the other scale');
  return lines.join('\n');
}

// ------------------------------------------------------------------ main

const loadStart = os.loadavg();

async function main() {
  if (loadStart[0] > 1) log(`note: load average ${loadStart.map((l) => l.toFixed(1)).join(' ')} before the run — other work on this machine makes absolute figures noisy; the paired ratios are robust to it`);
  log(`scale ${scale}, ${duration} s per run (+${warmup} s warm-up), ${os.cpus().length} CPUs, Node ${process.version}${compiled ? ', gateway compiled (esbuild, plain node)' : ', gateway on tsx'}${nodeArgs.length ? `, node ${nodeArgs.join(' ')}` : ''}`);
  let db: BenchDatabase | undefined;
  let server: Server | undefined;
  let peer: Server | { unavailable: string } | undefined;
  const cleanup = async () => {
    if (server) await stopServer(server).catch(() => {});
    server = undefined;
    if (peer && 'child' in peer) await stopServer(peer).catch(() => {});
    peer = undefined;
    if (db) await db.stop().catch(() => {});
    db = undefined;
  };
  process.on('SIGINT', () => {
    void cleanup().then(() => process.exit(130));
  });

  try {
    db = await startBenchDatabase({ keep: keepDb, log });
    const fx = await seed(db.url, scale, log);
    postmasterPid = await findPostmaster(db.url);
    if (!postmasterPid) log('note: PostgreSQL does not run on this machine (or /proc is unreadable): no PostgreSQL CPU per request');
    server = await startServer(db.url, fx);
    const startStats = await stats(server);
    log(`gateway (pid ${server.child.pid}) on ${server.baseUrl}, stats on ${server.statsUrl}; RSS after start ${(startStats.rss / MB).toFixed(0)} MB, heap ${(startStats.heapUsed / MB).toFixed(0)} MB`);
    const srv = server;
    // The uncached figures are the ones compared with the peer: the cache is off but for 1.cached.
    await setCache(srv, false);
    const ctx: BenchContext = {
      fx,
      async restDoc(method, url) {
        const res = await fetch(`${srv.statsUrl}/rest-doc?method=${method}&url=${encodeURIComponent(url)}`);
        if (res.status === 404) return null;
        if (!res.ok) throw new Error(`rest-doc: ${await res.text()}`);
        return (await res.json()) as { document: string; variables: Record<string, unknown> };
      },
    };

    const rows: Row[] = [];
    const pairs: Paired[] = [];
    const calls = new Map<string, HttpCall>();
    const traces = new Map<string, string[]>();
    let floor: Row | undefined;
    let floorCheck: string | undefined;
    let peerCheck: string | undefined;
    for (const s of SCENARIOS) {
      if (only && !only.includes(s.id)) continue;
      if (s.kind === 'write' && noWrite) continue;
      // Opt-in: holds hundreds of connections open.
      if (s.kind === 'fanout') {
        if (!only?.includes(s.id)) continue;
        rows.push(...(await runFanout(s, srv, fx).catch((err) => [{ id: s.id, group: s.group, name: s.name, status: 'error' as const, reason: (err as Error).stack ?? String(err) }])));
        continue;
      }
      try {
        let out: Row[];
        if (s.kind === 'load' && s.target === 'peer') {
          peer ??= await startPeer(db.url, fx);
          if ('unavailable' in peer) {
            out = [{ id: s.id, group: s.group, name: s.name, api: s.api, status: 'skipped', reason: peer.unavailable }];
          } else {
            log(`peer (pid ${peer.pid}, PostGraphile v5 amber) on ${peer.baseUrl}`);
            const r = await runLoad(s, peer, ctx);
            out = r.rows;
            if (r.call) calls.set(s.id, r.call);
            const gw = rows.find((x) => x.id === s.pairWith && x.status === 'ok' && x.connections === 1);
            const mine = out.find((x) => x.status === 'ok' && x.connections === 1);
            // The tree check is scenario 1's (the site structure); the write pair has no tree.
            if (gw && mine && s.pairWith === '1') {
              // Both must carry the same structure, or the comparison means nothing.
              const a = gw.note?.split(';')[0];
              const b = mine.note?.split(';')[0];
              // And the same text: every site space, space and page field by field, in order.
              const gwCall0 = calls.get(s.pairWith ?? '');
              let content: string | undefined = 'not compared';
              if (gwCall0 && r.call) {
                const [x, y] = [await send(srv, fx, gwCall0), await send(peer, fx, r.call)];
                content = compareTrees(x.body?.data?.publishedSite, y.body?.data?.siteByRowId);
              }
              peerCheck =
                a === b && !content
                  ? `same site spaces, spaces and pages, field by field: ${b} (gateway ${gw.bytesPerResponse} B, peer ${mine.bytesPerResponse} B per response)`
                  : `DIFFERENT: gateway ${a}, peer ${b}${content ? `; ${content}` : ''}`;
              if (a !== b || content) mine.note += ` — differs from the gateway's response (${content ?? a})`;
              log(`peer check: ${peerCheck}`);
            }
            const gwCall = calls.get(s.pairWith ?? '');
            if (r.call && gwCall) {
              const pp = peer;
              pairs.push(await pairedRun(srv, fx, s.pairWith!, okCall(srv, fx, gwCall), s.id, okCall(pp, fx, r.call)));
            }
          }
          rows.push(...out);
          continue;
        }
        if (s.kind === 'load') {
          if (s.cache) await setCache(srv, true);
          if (s.searchCache === false) await setSearchCache(srv, false);
          try {
            const r = await runLoad(s, srv, ctx);
            out = r.rows;
            if (r.call) calls.set(s.id, r.call);
            if (r.statements) traces.set(s.id, r.statements);
            const peerCall = s.comparePeer ? calls.get(s.comparePeer) : undefined;
            if (r.call && peerCall && peer && !('unavailable' in peer)) {
              pairs.push(await pairedRun(srv, fx, s.id, okCall(srv, fx, r.call), s.comparePeer!, okCall(peer, fx, peerCall)));
            }
          } finally {
            if (s.cache) await setCache(srv, false);
            if (s.searchCache === false) await setSearchCache(srv, true);
          }
        } else out = await runWrite(s, srv, fx);
        rows.push(...out);
        const call = calls.get(s.id);
        if (s.kind === 'load' && s.sameDataAs && call && calls.has(s.sameDataAs)) {
          pairs.push(await pairedRun(srv, fx, s.sameDataAs, okCall(srv, fx, calls.get(s.sameDataAs)!), s.id, okCall(srv, fx, call)));
        }
        if (s.kind === 'load' && s.floor && call) {
          const f0 = await openFloor(db.url, fx.siteId);
          try {
            pairs.push(await pairedRun(srv, fx, s.id, okCall(srv, fx, call), `${s.id}.floor`, f0.run));
          } finally {
            await f0.close();
          }
        }
        if (s.kind === 'load' && s.floor) {
          // The floor runs right after its scenario, on the same database, for as long.
          const f = await runFloor(db.url, fx.siteId, duration, warmup);
          floorCheck = describeSiteTree(f.site);
          floor = { id: `${s.id}.floor`, group: s.group, name: 'SQL floor: one hand-written statement (pg, json_agg)', api: 'sql', status: 'ok', connections: 1, requests: f.requests, seconds: f.seconds, rps: f.rps, latency: f.latency, statementsPerRequest: 1, bytesPerResponse: f.bytes, note: floorCheck };
          rows.push(floor);
          const gw = out.find((r) => r.status === 'ok' && r.connections === 1);
          if (gw?.note && gw.note.split(';')[0] !== floorCheck) floor.note += ` — differs from the gateway's ${gw.note}`;
          log(`${s.id} floor: p50 ${fmt(f.latency.p50)} ms (${floorCheck})`);
        }
      } catch (err) {
        rows.push({ id: s.id, group: s.group, name: s.name, status: 'error', reason: (err as Error).stack ?? String(err) });
        log(`${s.id}: error — ${(err as Error).message}`);
      }
    }

    const final = await stats(srv);
    // After the timed work: plan every traced statement again and list sequential scans.
    const plans = await checkPlans(db.url, traces).catch((err) => ({ scans: [], planned: 0, failed: -1, error: String(err) }));
    const { ratios, targets } = evaluate(rows, floor, pairs, fx);

    console.log('');
    console.log(`docgraph benchmark — scale ${scale} (${Object.entries(fx.counts).map(([k, v]) => `${v} ${k}`).join(', ')}; seeded in ${fx.seconds.toFixed(1)} s)`);
    console.log(`latencies in ms, ${duration} s per run after ${warmup} s warm-up; SQL/req = statements seen by app.onQuery / requests served; RSS = gateway process`);
    console.log('');
    console.log(table(rows));
    console.log('');
    if (pairs.length) {
      console.log('paired runs (A and B alternately on one connection, same time window):');
      for (const p of pairs) console.log(`  ${p.a.padEnd(3)} vs ${p.b.padEnd(8)} p50 ${fmt(p.aLatency.p50).padStart(7)} / ${fmt(p.bLatency.p50).padStart(7)} ms = ${p.ratioP50.toFixed(2)}×  (p95 ${fmt(p.aLatency.p95)} / ${fmt(p.bLatency.p95)} ms, ${p.pairs} pairs)`);
      console.log('');
    }
    const peerBlock = peerSummary(rows, pairs, peerCheck);
    if (peerBlock) {
      console.log(peerBlock);
      console.log('');
    }
    console.log('targets (issues 7 and 14):');
    for (const t of targets) console.log(`  ${t.pass === null ? '  ?' : t.pass ? 'pass' : 'MISS'}  ${t.target}: ${t.value} (target ${t.limit})${t.note ? ` — ${t.note}` : ''}`);
    console.log('');
    console.log(`index check: ${plans.planned} distinct statements planned (EXPLAIN GENERIC_PLAN)${plans.failed ? `, ${plans.failed} not plannable` : ''}; sequential scans of tables over 1,000 rows:`);
    if (!plans.scans.length) console.log('  none');
    const byTable = new Map<string, { rows: number; scenarios: Set<string>; filter?: string; statement: string }>();
    for (const sc of plans.scans) {
      const k = `${sc.table}\u0000${sc.filter ?? ''}`;
      const e = byTable.get(k) ?? { rows: sc.rows, scenarios: new Set<string>(), filter: sc.filter, statement: sc.statement };
      e.scenarios.add(sc.scenario);
      byTable.set(k, e);
    }
    for (const [k, e] of byTable) console.log(`  ${k.split('\u0000')[0]} (${e.rows} rows) in ${[...e.scenarios].join(', ')}${e.filter ? ` — filter ${e.filter.slice(0, 140)}` : ''}`);
    const growth = compareWithOtherScale(rows, path.join(HERE, 'results'));
    if (growth) {
      console.log('');
      console.log(growth);
    }
    console.log(`  gateway RSS: ${(startStats.rss / MB).toFixed(0)} MB after start, ${(final.overallPeakRss / MB).toFixed(0)} MB peak over the whole run (heap ${(startStats.heapUsed / MB).toFixed(0)} MB after start, ${(final.peakHeapUsed / MB).toFixed(0)} MB at the last scenario's peak)`);

    const resultsDir = path.join(HERE, 'results');
    fs.mkdirSync(resultsDir, { recursive: true });
    const stamp = new Date().toISOString().replace(/[:.]/g, '-').replace(/-\d{3}Z$/, 'Z');
    const file = path.join(resultsDir, `${stamp}-${scale}.json`);
    const { adminToken: _a, memberToken: _m, ...fixture } = fx;
    fs.writeFileSync(
      file,
      JSON.stringify(
        {
          scale,
          startedAt: new Date(t0).toISOString(),
          totalSeconds: (Date.now() - t0) / 1000,
          machine: { cpus: os.cpus().length, cpuModel: os.cpus()[0]?.model, totalMemMB: Math.round(os.totalmem() / MB), node: process.version, platform: `${os.platform()} ${os.release()}` },
          database: db.kind,
          options: { duration, warmup, only: only ?? null, nodeArgs, cpuProf, compiled },
          dataset: fixture,
          serverStartRssMB: startStats.rss / MB,
          serverStartHeapMB: startStats.heapUsed / MB,
          serverPeakRssMB: final.overallPeakRss / MB,
          scenarios: rows,
          floor: floor ? { ...floor, sql: FLOOR_SQL } : null,
          paired: pairs,
          indexCheck: plans,
          ratios,
          targets,
          loadAverage: { start: loadStart, end: os.loadavg() },
        },
        null,
        2,
      ) + '\n',
    );
    console.log('');
    log(`figures written to ${path.relative(process.cwd(), file)}`);
  } finally {
    await cleanup();
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
