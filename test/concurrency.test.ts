// Races between writers of one change request, with real concurrent HTTP requests: a merge
// against a content batch, an update from main, or a second merge. Every round must answer
// without a 5xx (no deadlock, no serialization failure reaching the caller) and lose no accepted
// edit: what main and the change request hold is what the accepted operations imply. And a burst
// of writes larger than the connection pool, queued behind a lock, all succeed.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers.ts';
import { loadRevision } from '../src/domain/revisions.ts';
import { onTransactionRetry, retryableSqlState, transaction, type RetryInfo } from '../src/db/transaction.ts';
import { Access } from '../src/auth/access.ts';
import { treeLockKey } from '../src/db/locks.ts';
import { conflict } from '../src/lib/errors.ts';
import pg from 'pg';

const ROUNDS = 20;

let t: TestApp;
/** Every transaction retry in this process (the app runs in it). */
let retries: RetryInfo[] = [];
let unsubscribe: () => void;
beforeAll(async () => {
  t = await startTestApp();
  unsubscribe = onTransactionRetry((info) => retries.push(info));
});
afterAll(async () => {
  unsubscribe?.();
  await t?.close();
});
beforeEach(() => {
  retries = [];
});
/** The lock order alone keeps these races free of deadlocks: retries are only a safety net. */
const expectNoDeadlockRetried = () => expect(retries.map((r) => r.sqlState)).toEqual([]);

const CR = (spaceId: string, cr: string) => `/v1/spaces/${spaceId}/change-requests/${cr}`;
const statusOf = (r: { status: number; body: unknown }) => `${r.status} ${JSON.stringify(r.body)}`;

async function newSpace(title: string) {
  const r = await t.rest('POST', `/v1/orgs/${t.org.id}/spaces`, { title });
  expect(r.status).toBe(201);
  return r.body.id as string;
}
async function newCr(spaceId: string, subject = 'Change') {
  const r = await t.rest('POST', `/v1/spaces/${spaceId}/change-requests`, { subject });
  expect(r.status).toBe(201);
  return r.body.id as string;
}
function batch(spaceId: string, cr: string, changes: unknown[]) {
  return t.rest('POST', `${CR(spaceId, cr)}/content?compat=false`, { changes });
}
async function author(spaceId: string, cr: string, changes: unknown[]) {
  const r = await batch(spaceId, cr, changes);
  expect(r.status, statusOf(r)).toBe(200);
  return r.body.changes as Array<{ page: { id: string } }>;
}
const merge = (spaceId: string, cr: string) => t.rest('POST', `${CR(spaceId, cr)}/merge`);
const update = (spaceId: string, cr: string) => t.rest('POST', `${CR(spaceId, cr)}/update`);

/** pageId → markdown and title → pageId of a revision. */
async function contentOf(revisionId: string) {
  const loaded = await loadRevision(t.app.prisma, revisionId);
  const markdown = new Map<string, string>();
  const titles = new Map<string, string>();
  for (const v of loaded.versions.values()) {
    markdown.set(v.pageId, v.markdown);
    titles.set(v.title, v.pageId);
  }
  return { loaded, markdown, titles };
}
const mainOf = async (spaceId: string) => (await t.app.prisma.space.findUniqueOrThrow({ where: { id: spaceId } })).revisionId!;
const crRow = (id: string) => t.app.prisma.changeRequest.findUniqueOrThrow({ where: { id } });

/** A space whose main holds pages A and B (merged through a first change request). */
async function seeded(round: number) {
  const spaceId = await newSpace(`Race ${round}`);
  const seed = await newCr(spaceId, 'Seed');
  const [a, b] = (
    await author(spaceId, seed, [
      { operation: 'insert_page', title: 'A', document: { markdown: 'a0' } },
      { operation: 'insert_page', title: 'B', document: { markdown: 'b0' } },
    ])
  ).map((c) => c.page.id);
  const m = await merge(spaceId, seed);
  expect(m.status, statusOf(m)).toBe(200);
  return { spaceId, a, b };
}

// Twenty rounds of real concurrent requests each: correctness, not speed, so room for a busy machine.
describe('concurrent writers of one change request', { timeout: 120_000 }, () => {
  it(`merge vs content batch on the same change request (${ROUNDS} rounds): no 5xx, no lost batch`, async () => {
    const tally = { batchFirst: 0, refused: 0 };
    for (let round = 0; round < ROUNDS; round++) {
      const { spaceId, a } = await seeded(round);
      const cr = await newCr(spaceId);
      await author(spaceId, cr, [{ operation: 'update_page', page: a, document: { markdown: `a by cr ${round}` } }]);

      const late = `Late ${round}`;
      const [m, c] = await Promise.all([merge(spaceId, cr), batch(spaceId, cr, [{ operation: 'insert_page', title: late, document: { markdown: 'late' } }])]);
      expect(m.status, `round ${round} merge: ${statusOf(m)}`).toBe(200);
      expect(m.body.result).toBe('merge');
      // The batch either landed before the merge, or found the change request merged (409).
      expect([200, 409], `round ${round} batch: ${statusOf(c)}`).toContain(c.status);

      const main = await contentOf(await mainOf(spaceId));
      expect(main.loaded.revision.id).toBe(m.body.revision);
      expect(main.markdown.get(a)).toBe(`a by cr ${round}`);
      const row = await crRow(cr);
      expect(row).toMatchObject({ status: 'merged', revisionMergedId: m.body.revision });
      if (c.status === 200) {
        // Accepted before the merge: it is in the merged head, hence in main.
        tally.batchFirst++;
        expect(main.titles.has(late), `round ${round}: accepted batch missing from main`).toBe(true);
        expect(row.revisionId).toBe(c.body.changeRequest.revision);
      } else {
        tally.refused++;
        expect(c.body.error.message).toMatch(/merged/);
        expect(main.titles.has(late)).toBe(false);
        // Nothing was written to the merged change request either.
        expect((await contentOf(row.revisionId)).titles.has(late)).toBe(false);
      }
    }
    expect(tally.batchFirst + tally.refused).toBe(ROUNDS);
    expectNoDeadlockRetried();
  });

  it(`update from main vs merge of the same change request (${ROUNDS} rounds)`, async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const { spaceId, a, b } = await seeded(round);
      const cr = await newCr(spaceId);
      await author(spaceId, cr, [{ operation: 'update_page', page: a, document: { markdown: `a by cr ${round}` } }]);
      // Main moves on: the change request is outdated, so its update has work to do.
      const other = await newCr(spaceId);
      await author(spaceId, other, [{ operation: 'update_page', page: b, document: { markdown: `b by other ${round}` } }]);
      expect((await merge(spaceId, other)).status).toBe(200);

      const [u, m] = await Promise.all([update(spaceId, cr), merge(spaceId, cr)]);
      expect(m.status, `round ${round} merge: ${statusOf(m)}`).toBe(200);
      expect(m.body.result).toBe('merge');
      expect([200, 409], `round ${round} update: ${statusOf(u)}`).toContain(u.status);
      if (u.status === 200) expect(u.body.result).toBe('update');
      else expect(u.body.error.message).toMatch(/merged/);

      const main = await contentOf(await mainOf(spaceId));
      expect(main.loaded.revision.id).toBe(m.body.revision);
      expect(main.markdown.get(a)).toBe(`a by cr ${round}`);
      expect(main.markdown.get(b)).toBe(`b by other ${round}`);
      const row = await crRow(cr);
      expect(row).toMatchObject({ status: 'merged', revisionMergedId: m.body.revision });
      // An accepted update is the head that was merged.
      if (u.status === 200) expect(main.loaded.revision.parents[1]).toBe(u.body.revision);
    }
    expectNoDeadlockRetried();
  });

  it(`update from main vs a merge of another change request (${ROUNDS} rounds)`, async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const { spaceId, a, b } = await seeded(round);
      const cr = await newCr(spaceId);
      await author(spaceId, cr, [{ operation: 'update_page', page: a, document: { markdown: `a by cr ${round}` } }]);
      const first = await newCr(spaceId);
      await author(spaceId, first, [{ operation: 'insert_page', title: 'First', document: { markdown: 'first' } }]);
      expect((await merge(spaceId, first)).status).toBe(200);
      const mainBefore = await mainOf(spaceId);
      const other = await newCr(spaceId);
      await author(spaceId, other, [{ operation: 'update_page', page: b, document: { markdown: `b by other ${round}` } }]);

      const [u, m] = await Promise.all([update(spaceId, cr), merge(spaceId, other)]);
      expect(m.status, `round ${round} merge: ${statusOf(m)}`).toBe(200);
      expect(m.body.result).toBe('merge');
      expect(u.status, `round ${round} update: ${statusOf(u)}`).toBe(200);
      expect(u.body.result).toBe('update');

      // The update pulled in main as it was either before or after the racing merge, and says so.
      const row = await crRow(cr);
      expect(row.revisionId).toBe(u.body.revision);
      expect([mainBefore, m.body.revision]).toContain(row.revisionMergedAncestorId);
      const head = await contentOf(row.revisionId);
      expect(head.markdown.get(a)).toBe(`a by cr ${round}`);
      expect(head.titles.has('First')).toBe(true);
      expect(head.markdown.get(b)).toBe(row.revisionMergedAncestorId === m.body.revision ? `b by other ${round}` : 'b0');
      const main = await contentOf(await mainOf(spaceId));
      expect(main.loaded.revision.id).toBe(m.body.revision);
      expect(main.markdown.get(b)).toBe(`b by other ${round}`);
      expect(main.markdown.get(a)).toBe('a0');
    }
    expectNoDeadlockRetried();
  });

  it(`two merges of the same change request (${ROUNDS} rounds): one merges, the other is a 409`, async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const { spaceId, a } = await seeded(round);
      const cr = await newCr(spaceId);
      await author(spaceId, cr, [
        { operation: 'update_page', page: a, document: { markdown: `a by cr ${round}` } },
        { operation: 'insert_page', title: 'New', document: { markdown: 'new' } },
      ]);
      const mainBefore = await mainOf(spaceId);
      const merges = async () => t.app.prisma.revision.count({ where: { spaceId, type: 'merge' } });
      const mergesBefore = await merges();

      const results = await Promise.all([merge(spaceId, cr), merge(spaceId, cr)]);
      const statuses = results.map((r) => r.status).sort();
      expect(statuses, `round ${round}: ${results.map(statusOf).join(' / ')}`).toEqual([200, 409]);
      const ok = results.find((r) => r.status === 200)!;
      const refused = results.find((r) => r.status === 409)!;
      expect(ok.body.result).toBe('merge');
      expect(refused.body.error.message).toMatch(/already merged/);

      // Exactly one merge revision, on top of the main both saw.
      expect(await merges()).toBe(mergesBefore + 1);
      const main = await contentOf(await mainOf(spaceId));
      expect(main.loaded.revision).toMatchObject({ id: ok.body.revision, type: 'merge' });
      expect(main.loaded.revision.parents[0]).toBe(mainBefore);
      expect(main.markdown.get(a)).toBe(`a by cr ${round}`);
      expect([...main.loaded.versions.values()].filter((v) => v.title === 'New')).toHaveLength(1);
    }
    expectNoDeadlockRetried();
  });
});

describe('transaction(): retries of deadlocks and serialization failures', () => {
  it('re-runs the loser of a real deadlock; both transactions commit', async () => {
    const x = await newSpace('X');
    const y = await newSpace('Y');
    // Both take their first row, wait for each other, then want the other's row: a deadlock.
    let waiting = 0;
    let release!: () => void;
    const bothLocked = new Promise<void>((r) => (release = r));
    let runs = 0;
    const crosswise = (first: string, second: string, title: string) =>
      transaction(t.app.prisma, async (tx) => {
        const attempt = ++runs;
        await tx.$queryRaw`SELECT 1 AS locked FROM "Space" WHERE id = ${first} FOR UPDATE`;
        if (attempt <= 2) {
          if (++waiting === 2) release();
          await bothLocked;
        }
        await tx.space.update({ where: { id: second }, data: { title } });
      });
    await Promise.all([crosswise(x, y, 'Y by one'), crosswise(y, x, 'X by two')]);
    expect(runs).toBe(3);
    expect(retries.map((r) => r.sqlState)).toEqual(['40P01']);
    expect(retryableSqlState(retries[0].error)).toBe('40P01');
    const titles = await t.app.prisma.space.findMany({ where: { id: { in: [x, y] } }, select: { id: true, title: true } });
    expect(Object.fromEntries(titles.map((s) => [s.id, s.title]))).toEqual({ [x]: 'X by two', [y]: 'Y by one' });

    // The same error again and again: a bounded number of attempts, then the error itself.
    const deadlock = retries[0].error;
    let calls = 0;
    const failing = { $transaction: async () => (calls++, Promise.reject(deadlock)) } as any;
    await expect(transaction(failing, async () => 1, { attempts: 3 })).rejects.toBe(deadlock);
    expect(calls).toBe(3);
    // Anything else is not retried.
    calls = 0;
    const refused = conflict('no');
    const other = { $transaction: async () => (calls++, Promise.reject(refused)) } as any;
    await expect(transaction(other, async () => 1)).rejects.toBe(refused);
    expect(calls).toBe(1);
  });

  it('re-runs a transaction that hit a serialization failure (SERIALIZABLE)', async () => {
    const x = await newSpace('S');
    let waiting = 0;
    let release!: () => void;
    const bothRead = new Promise<void>((r) => (release = r));
    let runs = 0;
    // Read-modify-write of one row under SERIALIZABLE: the second writer fails with 40001.
    const bump = (suffix: string) =>
      transaction(
        t.app.prisma,
        async (tx) => {
          const attempt = ++runs;
          const row = await tx.space.findUniqueOrThrow({ where: { id: x }, select: { title: true } });
          if (attempt <= 2) {
            if (++waiting === 2) release();
            await bothRead;
          }
          await tx.space.update({ where: { id: x }, data: { title: `${row.title}${suffix}` } });
        },
        { isolationLevel: 'Serializable' },
      );
    await Promise.all([bump('+a'), bump('+b')]);
    expect(retries.map((r) => r.sqlState)).toEqual(['40001']);
    const { title } = await t.app.prisma.space.findUniqueOrThrow({ where: { id: x } });
    expect(['S+a+b', 'S+b+a']).toContain(title);
  });
});

describe('a burst of writes larger than the connection pool', () => {
  it('queues behind the organization tree lock and every request succeeds (one connection per transaction)', async () => {
    // The test app's pool holds 5 connections. An outside session holds the lock every space
    // creation takes (db/locks.ts lockTree) for longer than Prisma's default 2 s wait for a
    // transaction's connection, and shorter than the statement timeout (3 s in production).
    const holder = new pg.Client({ connectionString: t.databaseUrl });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [treeLockKey(t.org.id)]);
      const titles = Array.from({ length: 7 }, (_, i) => `Burst ${i}`);
      const pending = Promise.all(titles.map((title) => t.rest('POST', `/v1/orgs/${t.org.id}/spaces`, { title })));
      await new Promise((resolve) => setTimeout(resolve, 2300));
      await holder.query('COMMIT');
      const responses = await pending;
      expect(responses.map((r) => r.status)).toEqual(titles.map(() => 201));
      const created = await t.app.prisma.space.findMany({ where: { organizationId: t.org.id, title: { in: titles } } });
      expect(created).toHaveLength(7);
      const all = await t.app.prisma.space.findMany({ where: { organizationId: t.org.id, parentId: null }, select: { position: true } });
      expect(new Set(all.map((s) => s.position)).size).toBe(all.length);
    } finally {
      await holder.end();
    }
  });
});

describe('one connection per transaction', () => {
  it('reports a query through the pool inside a transaction, and nothing for the same work through it', async () => {
    t.secondConnections.length = 0;
    const access = new Access(t.app.prisma, { user: t.adminUser, tokenId: 'test' });
    // Through the transaction: its client and `access.within(tx)`. Work after the callback is outside it.
    let after: Promise<unknown> = Promise.resolve();
    await transaction(t.app.prisma, async (tx) => {
      await tx.space.count();
      await access.within(tx).requireOrg(t.org.id, 'content:create');
      after = new Promise((resolve) => setTimeout(resolve, 50)).then(() => t.app.prisma.space.count());
    });
    await after;
    expect(t.secondConnections).toEqual([]);
    // Through the pool: the request's loaders and the outer client are each reported.
    await transaction(t.app.prisma, async () => {
      await access.requireOrg(t.org.id, 'content:create');
      await t.app.prisma.space.count();
    });
    expect(t.secondConnections).toHaveLength(2);
    expect(t.secondConnections[0]).toMatch(/second pooled connection/);
    t.secondConnections.length = 0;
  });
});
