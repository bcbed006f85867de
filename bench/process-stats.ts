// What a benchmarked server process (the gateway, bench/server.ts, and the peer,
// bench/peer-server.ts) reports on its second, loopback-only port, and its shutdown: one copy, so
// both sides of a comparison are counted the same way.
//
//   GET  /stats    SQL statements and HTTP requests since the last reset, requests in flight,
//                  current and peak RSS (sampled every 25 ms), heap, uptime
//   POST /reset    zero the counters; the peak RSS restarts from the current RSS
//   POST /trace    start recording statement texts; GET /trace returns and stops
//   anything else  the caller's `extra` handler, else 404
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export type StatsServer = {
  /** Count one SQL statement (and record it while tracing). */
  statement(sql: string): void;
  statsPort: number;
};

type Extra = (url: URL, req: http.IncomingMessage, res: http.ServerResponse) => Promise<boolean> | boolean;

export function send(res: http.ServerResponse, status: number, body: unknown) {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/** Count `server`'s requests, sample the RSS, and serve the stats port. */
export async function serveStats(server: http.Server, extra?: Extra): Promise<StatsServer & { close(): void }> {
  let statements = 0;
  let requests = 0;
  let inFlight = 0;
  let tracing: string[] | null = null;
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
  let ticks = 0;
  const sampler = setInterval(() => {
    const rss = process.memoryUsage.rss();
    if (rss > peakRss) peakRss = rss;
    if (rss > overallPeakRss) overallPeakRss = rss;
    if (++ticks % 8 === 0) peakHeapUsed = Math.max(peakHeapUsed, process.memoryUsage().heapUsed);
  }, 25);
  sampler.unref();

  const stats = http.createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    try {
      if (url.pathname === '/stats') {
        const memory = process.memoryUsage();
        peakRss = Math.max(peakRss, memory.rss);
        overallPeakRss = Math.max(overallPeakRss, memory.rss);
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
      if (extra && (await extra(url, req, res))) return;
      return send(res, 404, { error: 'not found' });
    } catch (err) {
      return send(res, 500, { error: String((err as Error)?.message ?? err) });
    }
  });
  await new Promise<void>((resolve) => stats.listen(0, '127.0.0.1', resolve));
  return {
    statsPort: (stats.address() as AddressInfo).port,
    statement(sql: string) {
      statements++;
      if (tracing && tracing.length < 500) tracing.push(sql);
    },
    close: () => stats.close(),
  };
}

/** Stop on SIGTERM, SIGINT, the runner's `stop` message or its exit, then tell the runner we are ready. */
export function runUntilStopped(ready: { port: number; statsPort: number }, stop: () => Promise<void>) {
  let stopping = false;
  const once = () => {
    if (stopping) return;
    stopping = true;
    void stop().finally(() => process.exit(0));
  };
  process.on('SIGTERM', once);
  process.on('SIGINT', once);
  process.on('message', (m: unknown) => {
    if (m && typeof m === 'object' && (m as { type?: string }).type === 'stop') once();
  });
  process.on('disconnect', once);
  if (process.send) process.send({ type: 'ready', ...ready, pid: process.pid });
  else console.log(JSON.stringify({ type: 'ready', ...ready }));
}
