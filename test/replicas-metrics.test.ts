// Read replicas on /metrics (src/http/observability.ts, src/db/replicas.ts), on a real hot
// standby of a PostgreSQL of the test's own (test/fixtures/standby.ts) plus a replica URL where
// nothing listens: each replica's state (fit / lagging / down), whether reads skip it, its lag
// and replay backlog, the reads it served, and every read routed by where it went and why.
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../src/app.ts';
import { LSN_HEADER, Replicas } from '../src/db/replicas.ts';
import { Observability } from '../src/http/observability.ts';
import { freePort } from './global-setup.ts';
import { startAppOnStandby, startPrimaryWithStandby, type Standby } from './fixtures/standby.ts';

const ADMIN_TOKEN = 'replica-metrics-admin-token-0123';
let pair: Standby;
let app: App;
let base: string;
let orgId: string;
let deadUrl: string;

const gql = (query: string, variables: Record<string, unknown> = {}, headers: Record<string, string> = {}) =>
  fetch(`${base}/graphql`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json', ...headers }, body: JSON.stringify({ query, variables }) });
const TITLE = 'query Title($id: ID!) { organization(id: $id) { title } }';
const RENAME = 'mutation Rename($id: ID!, $title: String!) { updateOrganization(input: { id: $id, title: $title }) { organization { title } } }';

/** The value of one sample of the Prometheus text (undefined when absent). */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const m = /^([^{ ]+)(?:\{([^}]*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const got = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1], x[2]]));
    if (Object.entries(labels).every(([k, v]) => got[k] === v)) return m[3] === '+Inf' ? Infinity : Number(m[3]);
  }
  return undefined;
}

const scrape = async () => {
  const r = await fetch(`${base}/metrics`);
  expect(r.status).toBe(200);
  return r.text();
};

async function title(headers: Record<string, string> = {}) {
  const r = await gql(TITLE, { id: orgId }, headers);
  expect(r.status).toBe(200);
  return (await r.json()).data.organization.title as string;
}

beforeAll(async () => {
  pair = await startPrimaryWithStandby();
  deadUrl = `postgresql://postgres:docgraph@127.0.0.1:${await freePort()}/replicated`;
  ({ app, base, orgId } = await startAppOnStandby(pair, { adminToken: ADMIN_TOKEN, env: { METRICS: 'on' }, replicaUrls: [pair.replicaUrl, deadUrl] }));
}, 120_000);

afterAll(async () => {
  await app?.close({ graceMs: 500 }).catch(() => {});
  await pair?.close();
}, 60_000);

describe('replica metrics', () => {
  it('reports each replica: the standby fit and caught up, the unreachable one down and skipped', async () => {
    const text = await scrape();
    expect(sample(text, 'docgraph_replica_state', { replica: '0', state: 'fit' })).toBe(1);
    expect(sample(text, 'docgraph_replica_state', { replica: '0', state: 'down' })).toBe(0);
    expect(sample(text, 'docgraph_replica_skipped', { replica: '0' })).toBe(0);
    expect(sample(text, 'docgraph_replica_lag_seconds', { replica: '0' })).toBeLessThan(600);
    expect(sample(text, 'docgraph_replica_replay_backlog_bytes', { replica: '0' })).toBeGreaterThanOrEqual(0);
    expect(sample(text, 'docgraph_replica_state', { replica: '1', state: 'down' })).toBe(1);
    expect(sample(text, 'docgraph_replica_skipped', { replica: '1' })).toBe(1);
    expect(sample(text, 'docgraph_replica_lag_seconds', { replica: '1' })).toBe(Infinity);
    // No credentials or hosts in labels: replicas are named by position.
    expect(text).not.toContain('docgraph@');
  });

  it('counts reads served by the replica, and reads sent to the primary by reason', async () => {
    const before = await scrape();
    const served = sample(before, 'docgraph_replica_reads_total', { replica: '0' }) ?? 0;
    const toReplica = sample(before, 'docgraph_db_reads_total', { route: 'replica' }) ?? 0;
    const badToken = sample(before, 'docgraph_db_reads_total', { route: 'bad_token' }) ?? 0;
    for (let i = 0; i < 3; i++) await title();
    await title({ [LSN_HEADER]: 'not-an-lsn' });
    // A mutation is not a read: it is not counted at all.
    expect((await gql(RENAME, { id: orgId, title: 'Counted' })).status).toBe(200);
    const after = await scrape();
    expect(sample(after, 'docgraph_replica_reads_total', { replica: '0' })).toBe(served + 3);
    expect(sample(after, 'docgraph_replica_reads_total', { replica: '1' })).toBe(0);
    expect(sample(after, 'docgraph_db_reads_total', { route: 'replica' })).toBe(toReplica + 3);
    expect(sample(after, 'docgraph_db_reads_total', { route: 'bad_token' })).toBe(badToken + 1);
  });

  it('with replay paused: a read whose token the replica has not replayed counts as read_your_writes; a tight lag bound reports the replica lagging and skipped, with a backlog', async () => {
    await pair.pause();
    try {
      await pair.eventually(() => pair.replicaSql.query('SELECT pg_get_wal_replay_pause_state() AS s'), (r) => r.rows[0].s === 'paused');
      const w = await gql(RENAME, { id: orgId, title: 'Written while paused' });
      const token = w.headers.get(LSN_HEADER)!;
      expect(token).toBeTruthy();
      const ryw = sample(await scrape(), 'docgraph_db_reads_total', { route: 'read_your_writes' }) ?? 0;
      expect(await title({ [LSN_HEADER]: token })).toBe('Written while paused');
      expect(sample(await scrape(), 'docgraph_db_reads_total', { route: 'read_your_writes' })).toBe(ryw + 1);

      // The same replica under a 200 ms bound, on an Observability of its own.
      const strict = new Replicas([pair.replicaUrl], { maxLagMs: 200, timeouts: { statementTimeoutMs: 3000, connectTimeoutMs: 3000 }, log: pino({ level: 'silent' }), listeners: new Set() });
      const obs = new Observability({ config: app.config, log: pino({ level: 'silent' }), onQuery: () => () => {} });
      try {
        obs.watch({ replicas: strict });
        const text = await pair.eventually(() => obs.registry!.metrics(), (t) => sample(t, 'docgraph_replica_state', { replica: '0', state: 'lagging' }) === 1);
        expect(sample(text, 'docgraph_replica_state', { replica: '0', state: 'lagging' })).toBe(1);
        expect(sample(text, 'docgraph_replica_skipped', { replica: '0' })).toBe(1);
        expect(sample(text, 'docgraph_replica_lag_seconds', { replica: '0' })).toBeGreaterThan(0.2);
        expect(sample(text, 'docgraph_replica_replay_backlog_bytes', { replica: '0' })).toBeGreaterThan(0);
        expect(await strict.route(undefined)).toBeUndefined();
        expect(sample(await obs.registry!.metrics(), 'docgraph_db_reads_total', { route: 'lag' })).toBe(1);
      } finally {
        obs.close();
        await strict.close();
      }
    } finally {
      await pair.resume();
    }
    // Caught up again: fit, no backlog.
    const text = await pair.eventually(scrape, (t) => sample(t, 'docgraph_replica_replay_backlog_bytes', { replica: '0' }) === 0 && sample(t, 'docgraph_replica_lag_seconds', { replica: '0' }) === 0);
    expect(sample(text, 'docgraph_replica_state', { replica: '0', state: 'fit' })).toBe(1);
  });

  it('a stopped replica is reported down and skipped; reads then go to the primary as `down`', async () => {
    await pair.stopReplica();
    const text = await pair.eventually(scrape, (t) => sample(t, 'docgraph_replica_state', { replica: '0', state: 'down' }) === 1);
    expect(sample(text, 'docgraph_replica_skipped', { replica: '0' })).toBe(1);
    expect(sample(text, 'docgraph_replica_lag_seconds', { replica: '0' })).toBe(Infinity);
    const down = sample(text, 'docgraph_db_reads_total', { route: 'down' }) ?? 0;
    expect(await title()).toBe('Written while paused');
    expect(sample(await scrape(), 'docgraph_db_reads_total', { route: 'down' })).toBe(down + 1);
  });
});
