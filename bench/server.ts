// The gateway under test, in its own process (forked by bench/run.ts with `--import tsx` and an
// IPC channel). It is the production `createApp` unchanged; what the benchmark adds lives on a
// second, loopback-only port that the load never touches: /stats, /reset and /trace
// (bench/process-stats.ts, SQL statements counted by app.onQuery), and
//
//   POST /cache?enabled=0|1   the published-structure cache on or off (on only for 1.cached)
//   GET  /rest-doc?method=GET&url=/v1/…
//                    the GraphQL document and variables the REST shim runs for that request
//                    (scenario 4 sends exactly these to /graphql)
//
// Environment: DATABASE_URL (required), DOCGRAPH_ADMIN_TOKEN, BENCH_POOL_SIZE, RATE_LIMIT_POINTS.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { loadConfig } from '../src/config.ts';
import { createApp } from '../src/app.ts';
import { setSearchCacheEnabled } from '../src/domain/search.ts';
import { runUntilStopped, send, serveStats } from './process-stats.ts';

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
    // 7.live opens 500 streams with one token from one address: above the default caps per token and IP.
    MAX_SUBSCRIPTIONS_PER_TOKEN: process.env.MAX_SUBSCRIPTIONS_PER_TOKEN ?? '10000',
    MAX_SUBSCRIPTIONS_PER_IP: process.env.MAX_SUBSCRIPTIONS_PER_IP ?? '10000',
  }),
  filesDir,
};

const poolSize = process.env.BENCH_POOL_SIZE ? Number(process.env.BENCH_POOL_SIZE) : undefined;
// The job worker stays off: the benchmark measures request handling, and background jobs
// (imports, PDF, purge) are not part of any scenario.
const app = await createApp({ config, databaseUrl, log: pino({ level: 'error' }), worker: false, poolSize });
const port = await app.listen(0, '127.0.0.1');

const stats = await serveStats(app.server, async (url, req, res) => {
  if (url.pathname === '/cache' && req.method === 'POST') {
    // The published-structure cache: off for every scenario but 1.cached (issue 14).
    app.server.publishedCache.setEnabled(url.searchParams.get('enabled') === '1');
    send(res, 200, { ...app.server.publishedCache.stats });
    return true;
  }
  if (url.pathname === '/search-cache' && req.method === 'POST') {
    // The search cache: off for the cold search scenario (5a.cold), so every request ranks.
    setSearchCacheEnabled(app.config, url.searchParams.get('enabled') === '1');
    send(res, 200, {});
    return true;
  }
  if (url.pathname === '/rest-doc') {
    const method = url.searchParams.get('method') ?? 'GET';
    const target = new URL(url.searchParams.get('url') ?? '/', 'http://localhost');
    const match = app.rest.match(method, target.pathname);
    if (!match.route) {
      send(res, 404, { error: `no REST route ${method} ${target.pathname}` });
      return true;
    }
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
    send(res, 200, { document: route.document, variables });
    return true;
  }
  return false;
});
app.onQuery((sql) => stats.statement(sql));

runUntilStopped({ port, statsPort: stats.statsPort }, async () => {
  stats.close();
  await app.close().catch(() => {});
  fs.rmSync(filesDir, { recursive: true, force: true });
});
