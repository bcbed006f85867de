// The gateway under test, in its own process (forked by bench/run.ts with `--import tsx` and an
// IPC channel). It is the production `createApp` unchanged; what the benchmark adds lives on a
// second, loopback-only port that the load never touches:
//
//   GET  /stats      SQL statements (app.onQuery) and HTTP requests served since the last reset,
//                    current and peak RSS (sampled every 25 ms), heap, uptime
//   POST /reset      zero the counters; the peak RSS restarts from the current RSS
//   POST /trace      start recording statement texts; GET /trace returns and stops
//   GET  /rest-doc?method=GET&url=/v1/…
//                    the GraphQL document and variables the REST shim runs for that request
//                    (scenario 4 sends exactly these to /graphql)
//
// Environment: DATABASE_URL (required), DOCGRAPH_ADMIN_TOKEN, BENCH_POOL_SIZE, RATE_LIMIT_POINTS.
import http from 'node:http';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { loadConfig } from '../src/config.ts';
import { createApp } from '../src/app.ts';

const databaseUrl = process.env.DATABASE_URL;
if (!databaseUrl) throw new Error('bench/server.ts: DATABASE_URL is required');

const filesDir = fs.mkdtempSync(path.join(os.tmpdir(), 'docgraph-bench-files-'));
const config = {
  ...loadConfig({
    DATABASE_URL: databaseUrl,
    DOCGRAPH_ADMIN_TOKEN: process.env.DOCGRAPH_ADMIN_TOKEN ?? 'dg_bench_bootstrap_token_0123456789',
    LOG_LEVEL: 'error',
    RUN_WORKER: 'false',
    HOST: '127.0.0.1',
    PORT: '0',
    // The load sends far more than the default 6,000 points a minute with one token: the limiter
    // stays on (its cost is part of the measure) with a limit the load never reaches.
    RATE_LIMIT_POINTS: process.env.RATE_LIMIT_POINTS ?? '1000000000',
    RATE_LIMIT_ANONYMOUS_POINTS: process.env.RATE_LIMIT_ANONYMOUS_POINTS ?? '1000000000',
  }),
  filesDir,
};

const poolSize = process.env.BENCH_POOL_SIZE ? Number(process.env.BENCH_POOL_SIZE) : undefined;
// The job worker stays off: the benchmark measures request handling, and background jobs
// (imports, PDF, purge) are not part of any scenario.
const app = await createApp({ config, databaseUrl, log: pino({ level: 'error' }), worker: false, poolSize });
const port = await app.listen(0, '127.0.0.1');

let statements = 0;
let requests = 0;
let inFlight = 0;
let tracing: string[] | null = null;
app.onQuery((sql) => {
  statements++;
  if (tracing && tracing.length < 500) tracing.push(sql);
});
app.server.on('request', (_req: http.IncomingMessage, res: http.ServerResponse) => {
  requests++;
  inFlight++;
  let done = false;
  const finish = () => {
    if (!done) inFlight--;
    done = true;
  };
  res.once('finish', finish);
  res.once('close', finish);
});

const startRss = process.memoryUsage.rss();
let peakRss = startRss;
let overallPeakRss = peakRss;
let peakHeapUsed = process.memoryUsage().heapUsed;
let ticks = 0;
const sampler = setInterval(() => {
  const rss = process.memoryUsage.rss();
  if (rss > peakRss) peakRss = rss;
  if (rss > overallPeakRss) overallPeakRss = rss;
  if (++ticks % 8 === 0) peakHeapUsed = Math.max(peakHeapUsed, process.memoryUsage().heapUsed);
}, 25);
sampler.unref();

function send(res: http.ServerResponse, status: number, body: unknown) {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

const stats = http.createServer(async (req, res) => {
  const url = new URL(req.url ?? '/', 'http://localhost');
  try {
    if (url.pathname === '/stats') {
      const rss = process.memoryUsage.rss();
      peakRss = Math.max(peakRss, rss);
      overallPeakRss = Math.max(overallPeakRss, rss);
      const memory = process.memoryUsage();
      peakHeapUsed = Math.max(peakHeapUsed, memory.heapUsed);
      return send(res, 200, { statements, requests, inFlight, rss, peakRss, overallPeakRss, startRss, heapUsed: memory.heapUsed, peakHeapUsed, memory, uptime: process.uptime() });
    }
    if (url.pathname === '/cache' && req.method === 'POST') {
      // The published-structure cache: off for every scenario but 1.cached (issue 14).
      app.server.publishedCache.setEnabled(url.searchParams.get('enabled') === '1');
      return send(res, 200, { ...app.server.publishedCache.stats });
    }
    if (url.pathname === '/reset' && req.method === 'POST') {
      statements = 0;
      requests = 0;
      peakRss = process.memoryUsage.rss();
      peakHeapUsed = process.memoryUsage().heapUsed;
      return send(res, 200, { ok: true });
    }
    if (url.pathname === '/trace') {
      if (req.method === 'POST') {
        tracing = [];
        return send(res, 200, { ok: true });
      }
      const out = tracing ?? [];
      tracing = null;
      return send(res, 200, { statements: out });
    }
    if (url.pathname === '/rest-doc') {
      const method = url.searchParams.get('method') ?? 'GET';
      const target = new URL(url.searchParams.get('url') ?? '/', 'http://localhost');
      const match = app.rest.match(method, target.pathname);
      if (!match.route) return send(res, 404, { error: `no REST route ${method} ${target.pathname}` });
      const route = match.route;
      const params: Record<string, string> = {};
      for (const [k, v] of Object.entries(match.params ?? {})) params[k] = decodeURIComponent(v);
      const query: Record<string, string | string[]> = {};
      for (const key of new Set(target.searchParams.keys())) {
        const all = target.searchParams.getAll(key);
        query[key] = all.length > 1 ? all : all[0];
      }
      const parsedQuery = route.query ? route.query.parse(query) : {};
      const variables = route.variables({ params, query: parsedQuery, body: undefined });
      return send(res, 200, { document: route.document, variables });
    }
    return send(res, 404, { error: 'not found' });
  } catch (err) {
    return send(res, 500, { error: String((err as Error)?.message ?? err) });
  }
});
await new Promise<void>((resolve) => stats.listen(0, '127.0.0.1', resolve));
const statsPort = (stats.address() as AddressInfo).port;

let stopping = false;
async function stop() {
  if (stopping) return;
  stopping = true;
  stats.close();
  await app.close().catch(() => {});
  fs.rmSync(filesDir, { recursive: true, force: true });
  process.exit(0);
}
process.on('SIGTERM', () => void stop());
process.on('SIGINT', () => void stop());
process.on('message', (m: unknown) => {
  if (m && typeof m === 'object' && (m as { type?: string }).type === 'stop') void stop();
});
process.on('disconnect', () => void stop());

if (process.send) process.send({ type: 'ready', port, statsPort, pid: process.pid });
else console.log(JSON.stringify({ type: 'ready', port, statsPort }));
