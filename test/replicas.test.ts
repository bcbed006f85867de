// Read replicas with read-your-writes (DATABASE_REPLICA_URLS, src/db/replicas.ts) on a real
// streaming replica of its own embedded PostgreSQL: a low-level base backup (pg_backup_start, a
// copy of the data directory, pg_backup_stop's label) started as a hot standby on another port.
// Replay is paused on the replica to make lag deterministic. The last test stops the replica.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.ts';
import { createApp, type App } from '../src/app.ts';
import { LSN_HEADER, Replicas, parseLsn } from '../src/db/replicas.ts';
import { startOwnPostgres, startStandby, type OwnPostgres, type Standby } from './fixtures/own-postgres.ts';
import { eventually } from './fixtures/wait.ts';

const ADMIN_TOKEN = 'replica-admin-token-0123456789';

let primary: OwnPostgres | undefined;
let standby: Standby | undefined;
let replicaUrl: string;
let app: App | undefined;
let base: string;
let orgId: string;
let replicaSql: pg.Client;

const gql = (query: string, variables: Record<string, unknown> = {}, headers: Record<string, string> = {}) =>
  fetch(`${base}/graphql`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json', ...headers }, body: JSON.stringify({ query, variables }) });
const restOrg = (headers: Record<string, string> = {}) => fetch(`${base}/v1/orgs/${orgId}`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...headers } });
const TITLE = 'query Title($id: ID!) { organization(id: $id) { title } }';
const RENAME = 'mutation Rename($id: ID!, $title: String!) { updateOrganization(input: { id: $id, title: $title }) { organization { title } } }';

/** Statements run on the replica's pool while `fn` runs. */
async function onReplica<T>(fn: () => Promise<T>): Promise<{ result: T; count: number }> {
  let count = 0;
  const stop = app!.replicas!.list[0].db.onQuery(() => count++);
  try {
    const result = await fn();
    return { result, count };
  } finally {
    stop();
  }
}


async function title(headers: Record<string, string> = {}) {
  return onReplica(async () => {
    const r = await gql(TITLE, { id: orgId }, headers);
    expect(r.status).toBe(200);
    const body = await r.json();
    return body.data.organization.title as string;
  });
}

beforeAll(async () => {
  primary = await startOwnPostgres('replica', 'replicated');
  standby = await startStandby(primary);
  replicaUrl = standby.url;
  replicaSql = standby.sql;
  const config = {
    ...loadConfig({ DOCGRAPH_ADMIN_TOKEN: ADMIN_TOKEN, LOG_LEVEL: 'silent', DB_CONNECT_TIMEOUT_MS: '5000' }),
    filesDir: fs.mkdtempSync(path.join(os.tmpdir(), 'docgraph-replica-files-')),
    // Generous: the lag tests pause replay; skipping by lag is asserted on its own below.
    replicas: { urls: [replicaUrl], maxLagMs: 600_000 },
  };
  app = await createApp({ config, databaseUrl: primary.url, log: pino({ level: 'silent' }), worker: false, poolSize: 5 });
  base = `http://127.0.0.1:${await app.listen(0, '127.0.0.1')}`;
  orgId = app.bootstrap!.org.id;
  // The bootstrap's rows reach the replica.
  await eventually(() => replicaSql.query('SELECT count(*)::int AS n FROM "Organization" WHERE id = $1', [orgId]), (r) => r.rows[0].n === 1);
}, 120_000);

afterAll(async () => {
  await app?.close({ graceMs: 500 }).catch(() => {});
  await standby?.stop();
  await primary?.remove();
}, 60_000);

describe('read replicas', () => {
  it('serves GraphQL queries and REST GET reads from the replica', async () => {
    const q = await title();
    expect(q.count).toBeGreaterThan(0);
    const r = await onReplica(() => restOrg());
    expect(r.result.status).toBe(200);
    expect(r.count).toBeGreaterThan(0);
    // A read carries no read-your-writes token.
    expect(r.result.headers.get(LSN_HEADER)).toBeNull();
  });

  it('never runs a mutation or a REST write on the replica; their answers carry the WAL position', async () => {
    const m = await onReplica(() => gql(RENAME, { id: orgId, title: 'Renamed once' }));
    expect(m.result.status).toBe(200);
    expect((await m.result.json()).data.updateOrganization.organization.title).toBe('Renamed once');
    expect(m.count).toBe(0);
    const token = m.result.headers.get(LSN_HEADER);
    expect(token).toMatch(/^[0-9A-F]+\/[0-9A-F]+$/);
    const p = await onReplica(() =>
      fetch(`${base}/v1/orgs/${orgId}`, { method: 'PATCH', headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify({ title: 'Renamed twice' }) }),
    );
    expect(p.result.status).toBeLessThan(300);
    expect(p.count).toBe(0);
    const later = p.result.headers.get(LSN_HEADER);
    expect(parseLsn(later!)! >= parseLsn(token!)!).toBe(true);
    // A refused write (no valid token) wrote nothing: no token, no statement for one.
    const refused = await fetch(`${base}/graphql`, { method: 'POST', headers: { authorization: 'Bearer not-a-token-of-anyone', 'content-type': 'application/json' }, body: JSON.stringify({ query: RENAME, variables: { id: orgId, title: 'x' } }) });
    expect(refused.status).toBe(401);
    expect(refused.headers.get(LSN_HEADER)).toBeNull();
  });

  it('with replay paused: a read carrying the write token sees the write (primary); one without it is served by the stale replica; after resume the replica serves it again', async () => {
    await replicaSql.query('SELECT pg_wal_replay_pause()');
    await eventually(() => replicaSql.query('SELECT pg_get_wal_replay_pause_state() AS s'), (r) => r.rows[0].s === 'paused');
    const before = (await title()).result;
    const w = await gql(RENAME, { id: orgId, title: 'Written while paused' });
    expect(w.status).toBe(200);
    const token = w.headers.get(LSN_HEADER)!;
    expect(token).toBeTruthy();

    const mine = await title({ [LSN_HEADER]: token });
    expect(mine.result).toBe('Written while paused');
    expect(mine.count).toBe(0);
    const mineRest = await onReplica(() => restOrg({ [LSN_HEADER]: token }));
    expect((await mineRest.result.json()).title).toBe('Written while paused');
    expect(mineRest.count).toBe(0);

    const other = await title();
    expect(other.count).toBeGreaterThan(0);
    expect(other.result).toBe(before);

    // Skipped by lag: the same replica, with a 200 ms bound, once the paused replay is older than that.
    const strict = new Replicas([replicaUrl], { maxLagMs: 200, timeouts: { statementTimeoutMs: 3000, connectTimeoutMs: 3000 }, log: pino({ level: 'silent' }), listeners: new Set() });
    try {
      await new Promise((r) => setTimeout(r, 400));
      expect(await strict.pick(undefined)).toBeUndefined();
    } finally {
      await strict.close();
    }

    await replicaSql.query('SELECT pg_wal_replay_resume()');
    const caughtUp = await eventually(() => title({ [LSN_HEADER]: token }), (t) => t.count > 0);
    expect(caughtUp.count).toBeGreaterThan(0);
    expect(caughtUp.result).toBe('Written while paused');
  });

  it('a token that does not parse sends the read to the primary', async () => {
    const t = await title({ [LSN_HEADER]: 'not-an-lsn' });
    expect(t.count).toBe(0);
    expect(t.result).toBe('Written while paused');
  });

  it('published reads on a paused replica: old version with old content, the writer sees the new one, then every reader does', async () => {
    const write = async (query: string, input: Record<string, unknown>) => {
      const r = await gql(query, { input });
      const body = await r.json();
      expect(body.errors).toBeUndefined();
      return { data: body.data, token: r.headers.get(LSN_HEADER)! };
    };
    const space = await write(`mutation($input: CreateSpaceInput!) { createSpace(input: $input) { space { id } } }`, { organizationId: orgId, title: 'Alpha' });
    const site = await write(`mutation($input: CreateSiteInput!) { createSite(input: $input) { site { id } } }`, { organizationId: orgId, title: 'Docs v1', visibility: 'public' });
    const siteId = site.data.createSite.site.id as string;
    await write(`mutation($input: AddSectionToSiteInput!) { addSectionToSite(input: $input) { section { id } } }`, { siteId, spaceId: space.data.createSpace.space.id, title: 'Guides' });
    const published = await write(`mutation($input: SiteKeyInput!) { publishSite(input: $input) { site { id } } }`, { siteId });
    const PUBLISHED = `query P($siteId: ID!) { publishedSite(siteId: $siteId) { id title structure { type } } }`;
    const anonymous = (headers: Record<string, string> = {}) =>
      onReplica(async () => {
        const r = await fetch(`${base}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ query: PUBLISHED, variables: { siteId } }) });
        expect(r.status).toBe(200);
        return ((await r.json()).data.publishedSite?.title ?? null) as string | null;
      });
    // Caught up: served by the replica with the published site.
    const first = await eventually(() => anonymous({ [LSN_HEADER]: published.token }), (t) => t.count > 0);
    expect(first.result).toBe('Docs v1');

    await replicaSql.query('SELECT pg_wal_replay_pause()');
    await eventually(() => replicaSql.query('SELECT pg_get_wal_replay_pause_state() AS s'), (r) => r.rows[0].s === 'paused');
    const renamed = await write(`mutation($input: UpdateSiteInput!) { updateSite(input: $input) { site { id } } }`, { siteId, title: 'Docs v2' });
    for (let i = 0; i < 3; i++) {
      const stale = await anonymous();
      expect(stale.count).toBeGreaterThan(0);
      expect(stale.result).toBe('Docs v1');
      const mine = await anonymous({ [LSN_HEADER]: renamed.token });
      expect(mine.count).toBe(0);
      expect(mine.result).toBe('Docs v2');
    }
    await replicaSql.query('SELECT pg_wal_replay_resume()');
    await eventually(() => anonymous({ [LSN_HEADER]: renamed.token }), (t) => t.count > 0);
    // The replica's version is the new one now: no reader gets the old content under it.
    for (let i = 0; i < 3; i++) expect((await anonymous()).result).toBe('Docs v2');
    // These went through the in-process published cache (hits on both versions' keys).
    expect(app!.server.publishedCache.stats.hits).toBeGreaterThan(0);
  });

  it('a retried write (Idempotency-Key) answers the first token again', async () => {
    const patch = () =>
      fetch(`${base}/v1/orgs/${orgId}`, { method: 'PATCH', headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json', 'idempotency-key': 'replica-retry-1' }, body: JSON.stringify({ title: 'Written while paused' }) });
    const first = await patch();
    expect(first.status).toBeLessThan(300);
    const token = first.headers.get(LSN_HEADER);
    expect(token).toMatch(/^[0-9A-F]+\/[0-9A-F]+$/);
    const again = await patch();
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.headers.get(LSN_HEADER)).toBe(token);
  });

  it('a stopped replica: reads fall back to the primary, no 5xx', async () => {
    await standby!.stop();
    await new Promise((r) => setTimeout(r, 100));
    for (let i = 0; i < 20; i++) {
      const r = await gql(TITLE, { id: orgId });
      expect(r.status).toBe(200);
      expect((await r.json()).data.organization.title).toBe('Written while paused');
      expect((await restOrg()).status).toBe(200);
    }
    expect(app!.replicas!.list[0].status.ok).toBe(false);
  });
});

describe('configuration and tokens', () => {
  it('DATABASE_REPLICA_URLS: comma-separated URLs; anything else is refused naming the setting', () => {
    expect(loadConfig({}).replicas).toEqual({ urls: [], maxLagMs: 1000 });
    expect(loadConfig({ DATABASE_REPLICA_URLS: ' postgres://a/db , postgres://b/db ,', REPLICA_MAX_LAG_MS: '250' }).replicas).toEqual({ urls: ['postgres://a/db', 'postgres://b/db'], maxLagMs: 250 });
    expect(() => loadConfig({ DATABASE_REPLICA_URLS: 'postgres://a/db,not a url' })).toThrow(/DATABASE_REPLICA_URLS/);
    expect(() => loadConfig({ REPLICA_MAX_LAG_MS: '-1' })).toThrow(/REPLICA_MAX_LAG_MS/);
  });

  it('parses PostgreSQL LSNs and nothing else', () => {
    expect(parseLsn('0/16B3748')).toBe(0x16b3748n);
    expect(parseLsn('1/0')).toBe(1n << 32n);
    expect(parseLsn('FFFFFFFF/FFFFFFFF')).toBe((1n << 64n) - 1n);
    for (const bad of ['', '16B3748', '0/', '/1', '0/123456789', '0x1/2', '-1/2', '0/1; DROP', '1/2/3']) expect(parseLsn(bad)).toBeUndefined();
  });
});
