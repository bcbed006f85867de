// The peer of scenario 1 (issue 14), in its own process (forked by bench/run.ts with
// `--import tsx` and an IPC channel): PostGraphile v5, default preset (amber), over schema
// `peer` (bench/peer.ts), served by grafserv's node adapter on a node:http server. Like
// bench/server.ts it adds a loopback-only stats port the load never touches, with the same
// endpoints (bench/process-stats.ts); its SQL statements are every pg Client#query of the process.
//
// Environment: DATABASE_URL (required), PEER_PRINT_SCHEMA (a file to print the schema to).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { runUntilStopped, serveStats } from './process-stats.ts';

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
let countStatement: (sql: string) => void = () => {};
const originalQuery = pg.Client.prototype.query as (...args: any[]) => any;
(pg.Client.prototype as any).query = function (this: pg.Client, ...args: any[]) {
  const q = args[0];
  countStatement(typeof q === 'string' ? q : String(q?.text ?? ''));
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

const stats = await serveStats(server);
countStatement = (sql) => stats.statement(sql);

runUntilStopped({ port, statsPort: stats.statsPort }, async () => {
  stats.close();
  server.close();
  await Promise.resolve().then(() => pgl.release()).catch(() => {});
});
