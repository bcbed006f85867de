// Idempotency keys on writes (src/http/idempotency.ts): a retry after a lost answer gets the first
// answer and never applies the write twice, through REST (raw and the official client) and GraphQL.
import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, startTestApp, type TestApp } from './helpers.ts';
import { purgeIdempotencyKeys } from '../src/http/idempotency.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.close();
});

const newKey = () => `k-${crypto.randomUUID().slice(0, 18)}`;

async function post(path: string, body: unknown, key: string | undefined, token: string = ADMIN_TOKEN) {
  const res = await fetch(`${t.baseUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, ...(key !== undefined ? { 'idempotency-key': key } : {}) },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, text, json: text ? JSON.parse(text) : undefined, headers: res.headers };
}

async function spacesTitled(title: string) {
  return t.app.prisma.space.count({ where: { title, organizationId: t.org.id } });
}

describe('Idempotency-Key on REST writes', () => {
  const spaces = () => `/v1/orgs/${t.org.id}/spaces`;

  it('a retry gets the first answer, marked replayed, and creates nothing more', async () => {
    const key = newKey();
    const title = `Idem ${key}`;
    const first = await post(spaces(), { title }, key);
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const again = await post(spaces(), { title }, key);
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.json).toEqual(first.json);
    expect(again.headers.get('content-type')).toBe(first.headers.get('content-type'));
    expect(await spacesTitled(title)).toBe(1);
  });

  it('concurrent requests with one key apply once; the others replay or are told to retry', async () => {
    const key = newKey();
    const title = `Race ${key}`;
    const answers = await Promise.all(Array.from({ length: 6 }, () => post(spaces(), { title }, key)));
    expect(await spacesTitled(title)).toBe(1);
    const created = answers.filter((a) => a.status === 201);
    expect(created.length).toBeGreaterThanOrEqual(1);
    const ids = new Set(created.map((a) => a.json.id));
    expect(ids.size).toBe(1);
    for (const a of answers.filter((x) => x.status !== 201)) {
      expect(a.status).toBe(409);
      expect(a.headers.get('retry-after')).toBe('1');
    }
    // Once the first has ended, every retry replays it.
    const later = await post(spaces(), { title }, key);
    expect([later.status, later.json.id]).toEqual([201, [...ids][0]]);
  });

  it('the key costs one statement before a retry is answered; a write three (claim, mark with the change, answer)', async () => {
    const onKey = (statements: string[]) => statements.filter((sql) => sql.includes('"IdempotencyKey"')).length;
    const key = newKey();
    const title = `Counted ${key}`;
    const first = await t.countQueries(() => post(spaces(), { title }, key));
    expect(first.result.status).toBe(201);
    expect(onKey(first.statements)).toBe(3);
    const again = await t.countQueries(() => post(spaces(), { title }, key));
    expect([again.result.status, again.result.headers.get('idempotent-replayed')]).toEqual([201, 'true']);
    expect(onKey(again.statements)).toBe(1);
    expect(await spacesTitled(title)).toBe(1);

    // A one-statement write (PATCH of a space) is marked right after it, on the pool.
    const patchKey = newKey();
    const renamed = `Renamed ${patchKey}`;
    const patch = await t.countQueries(() =>
      fetch(`${t.baseUrl}/v1/spaces/${first.result.json.id}`, {
        method: 'PATCH',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${ADMIN_TOKEN}`, 'idempotency-key': patchKey },
        body: JSON.stringify({ title: renamed }),
      }),
    );
    expect(patch.result.status).toBe(200);
    expect(onKey(patch.statements)).toBe(3);
    const [row] = await t.app.prisma.$queryRaw<Array<{ applied: boolean; state: string }>>`SELECT "applied", "state" FROM "IdempotencyKey" WHERE "key" = ${patchKey}`;
    expect(row).toEqual({ applied: true, state: 'done' });
    expect(await spacesTitled(renamed)).toBe(1);
  });

  it('the same key with another body is a 422 and changes nothing', async () => {
    const key = newKey();
    await post(spaces(), { title: `First ${key}` }, key);
    const other = await post(spaces(), { title: `Second ${key}` }, key);
    expect(other.status).toBe(422);
    expect(other.json.error.message).toMatch(/Idempotency-Key/);
    expect(await spacesTitled(`Second ${key}`)).toBe(0);
  });

  it('a malformed key is a 400 naming the header, and nothing is created', async () => {
    for (const bad of ['x'.repeat(256), 'has space', 'caf\u00e9']) {
      const title = `Bad ${bad.length} ${crypto.randomUUID()}`;
      const res = await fetch(`${t.baseUrl}${spaces()}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${ADMIN_TOKEN}`, 'idempotency-key': encodeURI(bad) === bad ? bad : Buffer.from(bad).toString('latin1') },
        body: JSON.stringify({ title }),
      });
      expect(res.status, bad).toBe(400);
      expect(((await res.json()) as any).error.message).toMatch(/Idempotency-Key/);
      expect(await spacesTitled(title)).toBe(0);
    }
  });

  it('a request that changed nothing (bad input) frees its key: the corrected request runs', async () => {
    const key = newKey();
    const bad = await post(spaces(), { title: 42 }, key);
    expect(bad.status).toBe(400);
    const title = `Fixed ${key}`;
    const good = await post(spaces(), { title }, key);
    expect(good.status).toBe(201);
    expect(good.headers.get('idempotent-replayed')).toBeNull();
    expect(await spacesTitled(title)).toBe(1);
  });

  it('keys are per caller: another user with the same key gets their own write', async () => {
    const key = newKey();
    const other = await t.as('creator');
    const title = `Shared key ${key}`;
    const mine = await post(spaces(), { title }, key);
    const theirs = await post(spaces(), { title }, key, other.token!);
    expect([mine.status, theirs.status]).toEqual([201, 201]);
    expect(theirs.json.id).not.toBe(mine.json.id);
    expect(await spacesTitled(title)).toBe(2);
  });

  it('works through the official client (a header on the request)', async () => {
    const key = newKey();
    const title = `Client ${key}`;
    const params = { headers: { 'Idempotency-Key': key } };
    const a = await t.client().orgs.createSpace(t.org.id, { title } as any, params);
    const b = await t.client().orgs.createSpace(t.org.id, { title } as any, params);
    expect(b.data.id).toBe(a.data.id);
    expect(b.headers.get('idempotent-replayed')).toBe('true');
    expect(await spacesTitled(title)).toBe(1);
  });

  it('a request without a token still gets its 401 (no key is claimed)', async () => {
    const res = await fetch(`${t.baseUrl}${spaces()}`, { method: 'POST', headers: { 'content-type': 'application/json', 'idempotency-key': newKey() }, body: '{"title":"x"}' });
    expect(res.status).toBe(401);
  });
});

describe('Idempotency-Key on GraphQL mutations', () => {
  it('a retried mutation returns the first payload and applies once', async () => {
    const key = newKey();
    const title = `GQL ${key}`;
    const body = { query: 'mutation($input: CreateSpaceInput!) { createSpace(input: $input) { space { id title } } }', variables: { input: { organizationId: t.org.id, title } } };
    const first = await post('/graphql', body, key);
    expect(first.status).toBe(200);
    expect(first.json.errors).toBeUndefined();
    const again = await post('/graphql', body, key);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.json).toEqual(first.json);
    expect(await spacesTitled(title)).toBe(1);
  });
});

describe('a process that died mid-request', () => {
  it('nothing applied and the lease ran out: a retry takes the key over and runs', async () => {
    const key = newKey();
    await t.app.prisma.$executeRaw`INSERT INTO "IdempotencyKey" ("userId", "key", "fingerprint", "leaseUntil") VALUES (${t.adminUser.id}, ${key}, '', now() - interval '1 second')`;
    const title = `Taken over ${key}`;
    const r = await post(`/v1/orgs/${t.org.id}/spaces`, { title }, key);
    expect(r.status).toBe(201);
    expect(await spacesTitled(title)).toBe(1);
  });

  it('a running claim within its lease is a 409 with Retry-After', async () => {
    const key = newKey();
    await t.app.prisma.$executeRaw`INSERT INTO "IdempotencyKey" ("userId", "key", "fingerprint", "leaseUntil") VALUES (${t.adminUser.id}, ${key}, '', now() + interval '1 minute')`;
    const title = `Held ${key}`;
    const r = await post(`/v1/orgs/${t.org.id}/spaces`, { title }, key);
    expect([r.status, r.headers.get('retry-after')]).toEqual([409, '1']);
    expect(await spacesTitled(title)).toBe(0);
  });

  it('applied but its answer lost: a retry is told so and nothing is applied again', async () => {
    const key = newKey();
    await t.app.prisma.$executeRaw`INSERT INTO "IdempotencyKey" ("userId", "key", "fingerprint", "leaseUntil", "applied") VALUES (${t.adminUser.id}, ${key}, '', now() - interval '1 second', true)`;
    const title = `Lost ${key}`;
    const r = await post(`/v1/orgs/${t.org.id}/spaces`, { title }, key);
    expect(r.status).toBe(409);
    expect(r.json.error.message).toMatch(/applied/);
    expect(await spacesTitled(title)).toBe(0);
  });

  it('the mark is part of the write: the claim row is applied exactly when the space exists', async () => {
    const key = newKey();
    const title = `Marked ${key}`;
    await post(`/v1/orgs/${t.org.id}/spaces`, { title }, key);
    const [row] = await t.app.prisma.$queryRaw<Array<{ applied: boolean; state: string }>>`SELECT "applied", "state" FROM "IdempotencyKey" WHERE "key" = ${key}`;
    expect(row).toEqual({ applied: true, state: 'done' });
  });
});

it('keys older than a day are purged', async () => {
  const key = newKey();
  await t.app.prisma.$executeRaw`INSERT INTO "IdempotencyKey" ("userId", "key", "fingerprint", "leaseUntil", "createdAt") VALUES (${t.adminUser.id}, ${key}, '', now(), now() - interval '25 hours')`;
  expect(await purgeIdempotencyKeys({ prisma: t.app.prisma })).toBeGreaterThanOrEqual(1);
  expect(await t.app.prisma.idempotencyKey.count({ where: { key } })).toBe(0);
});
