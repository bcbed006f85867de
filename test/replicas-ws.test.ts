// Read-your-writes over graphql-ws (src/http/live-ws.ts) with a real hot standby
// (test/fixtures/standby.ts), through the real graphql-ws client: queries run on the replica;
// the read-your-writes token (`X-Docgraph-Lsn` of an HTTP write) sent as `connectionParams.lsn`
// or an operation's `extensions.lsn` sends a query the replica has not replayed to the primary;
// a mutation over the socket answers `extensions.lsn`, and the same connection then reads its own
// write without echoing it. Replay is paused to make the replica deterministically stale.
import WebSocket from 'ws';
import { createClient, type Client } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../src/app.ts';
import { LSN_HEADER, parseLsn } from '../src/db/replicas.ts';
import { startAppOnStandby, startPrimaryWithStandby, type Standby } from './fixtures/standby.ts';

const ADMIN_TOKEN = 'replica-ws-admin-token-012345678';
let pair: Standby;
let app: App;
let base: string;
let orgId: string;
const clients: Client[] = [];

const TITLE = 'query Title($id: ID!) { organization(id: $id) { title } }';
const RENAME = 'mutation Rename($id: ID!, $title: String!) { updateOrganization(input: { id: $id, title: $title }) { organization { title } } }';

/** `lazy: false` keeps one socket open (a lazy client, the default, reconnects for each operation after an idle moment). */
function wsClient(connectionParams: Record<string, unknown> | (() => Record<string, unknown>) = {}, opts: { lazy?: boolean } = {}) {
  const params = typeof connectionParams === 'function' ? () => ({ token: ADMIN_TOKEN, ...connectionParams() }) : { token: ADMIN_TOKEN, ...connectionParams };
  const client = createClient({ url: `${base.replace(/^http/, 'ws')}/graphql`, webSocketImpl: WebSocket, connectionParams: params, retryAttempts: 0, shouldRetry: () => false, ...opts });
  clients.push(client);
  return client;
}

/** One operation's single result. */
function once(client: Client, query: string, variables: Record<string, unknown>, extensions?: Record<string, unknown>) {
  return new Promise<any>((resolve, reject) => {
    let result: unknown;
    client.subscribe({ query, variables, ...(extensions ? { extensions } : {}) }, { next: (r) => (result = r), error: reject, complete: () => resolve(result) });
  });
}

/** Statements run on the replica's pool while `fn` runs. */
async function onReplica<T>(fn: () => Promise<T>): Promise<{ result: T; count: number }> {
  let count = 0;
  const stop = app.replicas!.list[0].db.onQuery(() => count++);
  try {
    return { result: await fn(), count };
  } finally {
    stop();
  }
}

const title = (client: Client, extensions?: Record<string, unknown>) => onReplica(async () => (await once(client, TITLE, { id: orgId }, extensions)).data.organization.title as string);

beforeAll(async () => {
  pair = await startPrimaryWithStandby();
  ({ app, base, orgId } = await startAppOnStandby(pair, { adminToken: ADMIN_TOKEN }));
}, 120_000);

afterAll(async () => {
  for (const c of clients) await c.dispose();
  await app?.close({ graceMs: 500 }).catch(() => {});
  await pair?.close();
}, 60_000);

describe('read-your-writes over graphql-ws', () => {
  it('a query over WebSocket runs on the replica', async () => {
    const q = await title(wsClient());
    expect(q.count).toBeGreaterThan(0);
  });

  it('with replay paused: the HTTP write token in connectionParams.lsn or extensions.lsn reads the write from the primary; without it the replica answers stale', async () => {
    const stale = await title(wsClient());
    await pair.pause();
    try {
      await pair.eventually(() => pair.replicaSql.query('SELECT pg_get_wal_replay_pause_state() AS s'), (r) => r.rows[0].s === 'paused');
      const w = await fetch(`${base}/graphql`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ query: RENAME, variables: { id: orgId, title: 'Written over HTTP' } }),
      });
      const token = w.headers.get(LSN_HEADER)!;
      expect(token).toMatch(/^[0-9A-F]+\/[0-9A-F]+$/);

      const byConnection = await title(wsClient({ lsn: token }));
      expect(byConnection).toEqual({ result: 'Written over HTTP', count: 0 });
      const plain = wsClient();
      const byOperation = await title(plain, { lsn: token });
      expect(byOperation).toEqual({ result: 'Written over HTTP', count: 0 });
      // The same connection without the token: the (stale) replica.
      const without = await title(plain);
      expect(without.result).toBe(stale.result);
      expect(without.count).toBeGreaterThan(0);
      // A token that does not parse: the primary, never an error.
      for (const bad of ['nonsense', 42, { a: 1 }, '0/']) {
        const r = await title(wsClient({ lsn: bad }));
        expect(r).toEqual({ result: 'Written over HTTP', count: 0 });
      }
      const badOp = await title(plain, { lsn: 'garbage' });
      expect(badOp).toEqual({ result: 'Written over HTTP', count: 0 });
    } finally {
      await pair.resume();
    }
  });

  it('a mutation over WebSocket answers extensions.lsn; the same connection then reads its own write, another one needs the token', async () => {
    const writer = wsClient({}, { lazy: false });
    await pair.pause();
    try {
      await pair.eventually(() => pair.replicaSql.query('SELECT pg_get_wal_replay_pause_state() AS s'), (r) => r.rows[0].s === 'paused');
      const m = await onReplica(() => once(writer, RENAME, { id: orgId, title: 'Written over WebSocket' }));
      expect(m.count).toBe(0);
      expect(m.result.data.updateOrganization.organization.title).toBe('Written over WebSocket');
      const lsn = m.result.extensions?.lsn as string;
      expect(parseLsn(lsn)).toBeDefined();

      // The writer's connection keeps its latest token.
      expect(await title(writer)).toEqual({ result: 'Written over WebSocket', count: 0 });
      // A reader on another connection is served by the paused replica unless it carries the token.
      const reader = wsClient();
      const stale = await title(reader);
      expect(stale.count).toBeGreaterThan(0);
      expect(stale.result).not.toBe('Written over WebSocket');
      expect(await title(reader, { lsn })).toEqual({ result: 'Written over WebSocket', count: 0 });
      // A lazy client (a new socket per burst of operations) keeps the token itself: connectionParams as a function.
      let latest: string | undefined;
      const lazy = wsClient(() => (latest ? { lsn: latest } : {}));
      const m1 = await once(lazy, RENAME, { id: orgId, title: 'Written lazily' });
      latest = m1.extensions.lsn;
      await new Promise((r) => setTimeout(r, 50)); // the lazy socket closes; the next operation opens another
      expect(await title(lazy)).toEqual({ result: 'Written lazily', count: 0 });
      // The WebSocket token works over HTTP too.
      const http = await onReplica(() =>
        fetch(`${base}/graphql`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json', [LSN_HEADER]: lsn }, body: JSON.stringify({ query: TITLE, variables: { id: orgId } }) }),
      );
      expect((await http.result.json()).data.organization.title).toBe('Written lazily');
      expect(http.count).toBe(0);
      // A later mutation's token is not older than the first (the connection keeps the latest).
      const m2 = await once(writer, RENAME, { id: orgId, title: 'Second write' });
      expect(parseLsn(m2.extensions.lsn)! >= parseLsn(lsn)!).toBe(true);
    } finally {
      await pair.resume();
    }
    // Once replayed, the writer's connection reads from the replica again.
    const caughtUp = await pair.eventually(() => title(writer), (r) => r.count > 0);
    expect(caughtUp).toMatchObject({ result: 'Second write' });
  });
});
