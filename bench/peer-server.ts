// The peer of scenario 1 (issue 14), in its own process (forked by bench/run.ts with
// `--import tsx` and an IPC channel): PostGraphile v5, default preset (amber), over schema
// `peer` (bench/peer.ts), served by grafserv's node adapter on a node:http server. Like
// bench/server.ts it adds a loopback-only stats port the load never touches, with the same
// endpoints the runner uses for the gateway:
//
//   GET  /stats   SQL statements (every pg Client#query of this process) and HTTP requests
//                 served since the last reset, in-flight requests, RSS
//   POST /reset   zero the counters
//   POST /trace   start recording statement texts; GET /trace returns and stops
//
// Environment: DATABASE_URL (required), PEER_PRINT_SCHEMA (a file to print the schema to).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';

// PostGraphile 5 (grafast) calls Promise.withResolvers, which Node 20 lacks (Node 22 has it).
// Polyfilled here, in the peer's process only, before PostGraphile is loaded.
if (typeof (Promise as any).withResolvers !== 'function') {
  Object.defineProperty(Promise, 'withResolvers', {
    configurable: true,
    writable: true,
    value: function withResolvers<T>(this: PromiseConstructor) {
      let resolve!: (v: T | PromiseLike<T>) => void;
      let reject!: (e?: unknown) => void;
      const promise = new this<T>((res, rej) => {
        resolve = res;
        reject = rej;
      });
      return { promise, resolve, reject };
    },
  });
}

const databaseUrl = process.env.DATABASE_URL;
if (!databaseUrl) throw new Error('bench/peer-server.ts: DATABASE_URL is required');

// Count the statements PostGraphile sends (its pg adaptor runs everything through pg.Client).
let statements = 0;
let tracing: string[] | null = null;
const originalQuery = pg.Client.prototype.query as (...args: any[]) => any;
(pg.Client.prototype as any).query = function (this: pg.Client, ...args: any[]) {
  statements++;
  if (tracing && tracing.length < 500) {
    const q = args[0];
    tracing.push(typeof q === 'string' ? q : String(q?.text ?? ''));
  }
  return originalQuery.apply(this, args);
};

const { postgraphile } = await import('postgraphile');
const { PostGraphileAmberPreset } = await import('postgraphile/presets/amber');
const { makePgService } = await import('postgraphile/adaptors/pg');
const { grafserv } = await import('postgraphile/grafserv/node');

const preset: GraphileConfig.Preset = {
  extends: [PostGraphileAmberPreset],
  pgServices: [makePgService({ connectionString: databaseUrl, schemas: ['peer'] })],
  grafserv: { graphiql: false, watch: false },
  grafast: { explain: false },
};
const pgl = postgraphile(preset);
const serv = pgl.createServ(grafserv);
const server = http.createServer();
await serv.addTo(server);
// Build the schema now rather than on the first request.
const schema = await pgl.getSchema();
if (process.env.PEER_PRINT_SCHEMA) {
  // PEER_PRINT_SCHEMA=<file>: the peer's GraphQL schema, for writing its document.
  const { printSchema } = await import('postgraphile/graphql');
  (await import('node:fs')).writeFileSync(process.env.PEER_PRINT_SCHEMA, printSchema(schema));
}
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const port = (server.address() as AddressInfo).port;

let requests = 0;
let inFlight = 0;
server.on('request', (_req: http.IncomingMessage, res: http.ServerResponse) => {
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
let overallPeakRss = startRss;
let peakHeapUsed = process.memoryUsage().heapUsed;
const sampler = setInterval(() => {
  const rss = process.memoryUsage.rss();
  if (rss > peakRss) peakRss = rss;
  if (rss > overallPeakRss) overallPeakRss = rss;
}, 25);
sampler.unref();

function send(res: http.ServerResponse, status: number, body: unknown) {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

const stats = http.createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://localhost');
  if (url.pathname === '/stats') {
    const memory = process.memoryUsage();
    peakHeapUsed = Math.max(peakHeapUsed, memory.heapUsed);
    return send(res, 200, { statements, requests, inFlight, rss: memory.rss, peakRss, overallPeakRss, startRss, heapUsed: memory.heapUsed, peakHeapUsed, memory, uptime: process.uptime() });
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
  return send(res, 404, { error: 'not found' });
});
await new Promise<void>((resolve) => stats.listen(0, '127.0.0.1', resolve));
const statsPort = (stats.address() as AddressInfo).port;

let stopping = false;
async function stop() {
  if (stopping) return;
  stopping = true;
  stats.close();
  server.close();
  await Promise.resolve().then(() => pgl.release()).catch(() => {});
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
