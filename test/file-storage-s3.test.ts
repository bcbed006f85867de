// FILE_STORAGE=s3 against a real S3-compatible HTTP server (s3rver, in this process, on its own
// port and directory): two gateway processes that share the database and the bucket only (each
// its own FILES_DIR), uploads through REST and GraphQL, downloads streamed from the bucket,
// missing objects, hostile keys, the store stopped (503, nothing referenced), the orphan sweep.
import crypto from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSecondApp, startTestApp, type TestApp } from './helpers.ts';
import { loadConfig, type Config } from '../src/config.ts';
import { S3FileStorage, S3_UNAVAILABLE_MESSAGE } from '../src/lib/storage-s3.ts';
import { ORPHAN_GRACE_MS, sweepOrphanFiles } from '../src/domain/cleanup.ts';

// s3rver ships no types.
const S3rver = createRequire(import.meta.url)('s3rver') as new (opts: Record<string, unknown>) => { run(): Promise<{ port: number }>; close(): Promise<void> };

const BUCKET = 'docgraph-files';
let s3dir: string;
let server: InstanceType<typeof S3rver> | undefined;
let s3port = 0;
let t: TestApp;
let b: Awaited<ReturnType<typeof startSecondApp>>;
let otherFilesDir: string;

async function startS3() {
  server = new S3rver({ port: s3port, address: '127.0.0.1', silent: true, directory: s3dir, configureBuckets: [{ name: BUCKET }] });
  s3port = (await server.run()).port;
}
async function stopS3() {
  await server?.close();
  server = undefined;
}

const s3Settings = (): NonNullable<Config['s3']> => ({
  endpoint: `http://127.0.0.1:${s3port}`,
  bucket: BUCKET,
  region: 'us-east-1',
  accessKeyId: 'S3RVER',
  secretAccessKey: 'S3RVER',
  forcePathStyle: true,
});

beforeAll(async () => {
  s3dir = fs.mkdtempSync(path.join(os.tmpdir(), 'docgraph-s3-'));
  await startS3();
  t = await startTestApp({ config: { fileStorage: 's3', s3: s3Settings() } });
  otherFilesDir = fs.mkdtempSync(path.join(os.tmpdir(), 'docgraph-files-b-'));
  b = await startSecondApp(t, { filesDir: otherFilesDir });
});
afterAll(async () => {
  await b?.close();
  await t?.close();
  await stopS3();
  fs.rmSync(s3dir, { recursive: true, force: true });
  fs.rmSync(otherFilesDir, { recursive: true, force: true });
});

const auth = () => ({ authorization: `Bearer ${t.token}` });
const storage = () => t.app.services.storage as S3FileStorage;

async function newSpace(title: string) {
  const r = await t.rest('POST', `/v1/orgs/${t.org.id}/spaces`, { title });
  expect(r.status).toBe(201);
  return r.body.id as string;
}

const filesChange = (name: string, data: Buffer, contentType: string) => ({ operation: 'insert_files', files: [{ name, contentType, base64: data.toString('base64') }] });

function uploadRest(baseUrl: string, spaceId: string, name: string, data: Buffer, contentType: string) {
  return fetch(`${baseUrl}/v1/spaces/${spaceId}/content`, {
    method: 'POST',
    headers: { ...auth(), 'content-type': 'application/json' },
    body: JSON.stringify({ changes: [filesChange(name, data, contentType)] }),
  });
}

async function uploadGraphql(baseUrl: string, spaceId: string, name: string, data: Buffer, contentType: string) {
  const res = await fetch(`${baseUrl}/graphql`, {
    method: 'POST',
    headers: { ...auth(), 'content-type': 'application/json' },
    body: JSON.stringify({
      query: 'mutation($input: ApplySpaceContentChangesInput!) { applySpaceContentChanges(input: $input) { insertedFiles { id } } }',
      variables: { input: { spaceId, changes: [filesChange(name, data, contentType)] } },
    }),
  });
  return { status: res.status, body: (await res.json()) as any };
}

const download = (baseUrl: string, fileId: string, method = 'GET') => fetch(`${baseUrl}/files/${fileId}`, { method, headers: auth() });

async function bucketKeys(): Promise<string[]> {
  const keys: string[] = [];
  for await (const { key } of storage().list()) keys.push(key);
  return keys;
}

describe('configuration', () => {
  const base = { FILE_STORAGE: 's3', S3_ENDPOINT: 'http://minio:9000', S3_BUCKET: 'docs', S3_ACCESS_KEY_ID: 'id', S3_SECRET_ACCESS_KEY: 'secret' };

  it('reads the S3 settings, with defaults for the region and the URL style', () => {
    const c = loadConfig(base);
    expect(c.fileStorage).toBe('s3');
    expect(c.s3).toEqual({ endpoint: 'http://minio:9000', bucket: 'docs', region: 'us-east-1', accessKeyId: 'id', secretAccessKey: 'secret', forcePathStyle: false });
    expect(loadConfig({ ...base, S3_FORCE_PATH_STYLE: 'true', S3_REGION: 'eu-west-3' }).s3).toMatchObject({ forcePathStyle: true, region: 'eu-west-3' });
    expect(loadConfig({}).s3).toBeUndefined();
  });

  it('refuses to start when FILE_STORAGE=s3 lacks a required setting, naming it', () => {
    for (const name of ['S3_ENDPOINT', 'S3_BUCKET', 'S3_ACCESS_KEY_ID', 'S3_SECRET_ACCESS_KEY'] as const) {
      const env: Record<string, string> = { ...base };
      delete env[name];
      expect(() => loadConfig(env)).toThrow(`Invalid configuration: ${name}: required when FILE_STORAGE=s3`);
    }
    expect(() => loadConfig({ ...base, S3_BUCKET: 'Bad_Bucket' })).toThrow(/S3_BUCKET: must be an S3 bucket name/);
    expect(() => loadConfig({ ...base, S3_ENDPOINT: 'ftp://x' })).toThrow(/S3_ENDPOINT/);
    expect(() => loadConfig({ ...base, S3_FORCE_PATH_STYLE: 'yes' })).toThrow(/S3_FORCE_PATH_STYLE/);
    // Settings of another storage are not required.
    expect(loadConfig({ FILE_STORAGE: 'postgres' }).fileStorage).toBe('postgres');
  });
});

describe('files in an S3 bucket', () => {
  it('a file uploaded through REST on one gateway streams byte-identical from another sharing only the bucket', async () => {
    expect(storage()).toBeInstanceOf(S3FileStorage);
    expect(b.app.services.storage).toBeInstanceOf(S3FileStorage);
    const spaceId = await newSpace('S3 files');
    const data = Buffer.concat([Buffer.from(Array.from({ length: 256 }, (_, i) => i)), crypto.randomBytes(700 * 1024)]);
    const res = await uploadRest(t.baseUrl, spaceId, 'blob.bin', data, 'application/octet-stream');
    expect(res.status).toBe(200);
    const fileId = ((await res.json()) as { insertedFiles: Array<{ id: string }> }).insertedFiles[0].id;

    const fromB = await download(b.baseUrl, fileId);
    expect(fromB.status).toBe(200);
    expect(fromB.headers.get('content-type')).toBe('application/octet-stream');
    expect(fromB.headers.get('content-length')).toBe(String(data.length));
    expect(Buffer.from(await fromB.arrayBuffer()).equals(data)).toBe(true);
    const head = await download(b.baseUrl, fileId, 'HEAD');
    expect(head.status).toBe(200);
    expect(head.headers.get('content-length')).toBe(String(data.length));

    // In the bucket, not in the database nor on either process's disk.
    const file = await t.app.prisma.file.findUniqueOrThrow({ where: { id: fileId } });
    expect(await bucketKeys()).toContain(file.storageKey);
    expect(await t.app.prisma.fileBlob.count()).toBe(0);
    expect(fs.readdirSync(t.app.config.filesDir)).toEqual([]);
    expect(fs.readdirSync(otherFilesDir)).toEqual([]);
    // Still access-checked on the other process.
    expect((await fetch(`${b.baseUrl}/files/${fileId}`)).status).toBe(401);
    const outsider = await t.createUser();
    expect((await fetch(`${b.baseUrl}/files/${fileId}`, { headers: { authorization: `Bearer ${outsider.token}` } })).status).toBe(404);
  });

  it('a file uploaded through GraphQL on the second gateway downloads from the first', async () => {
    const spaceId = await newSpace('S3 GraphQL');
    const r = await uploadGraphql(b.baseUrl, spaceId, 'notes.txt', Buffer.from('über & <xml>'), 'text/plain');
    expect(r.status).toBe(200);
    const fileId = r.body.data.applySpaceContentChanges.insertedFiles[0].id;
    const res = await download(t.baseUrl, fileId);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('über & <xml>');
  });

  it('answers 404 for a missing file and for a file whose object is gone; deletes are idempotent', async () => {
    expect((await download(b.baseUrl, 'file_missing')).status).toBe(404);
    // Refused by the edge (400) or not found: never a path into the bucket.
    for (const hostile of ['..%2F..%2Fetc%2Fpasswd', '%00', 'a%20b', 'file_x%2F..%2F..%2Fpdf%2Fy']) expect([400, 404], hostile).toContain((await download(t.baseUrl, hostile)).status);
    const spaceId = await newSpace('Lost objects');
    const res = await uploadRest(t.baseUrl, spaceId, 'a.txt', Buffer.from('here'), 'text/plain');
    const fileId = ((await res.json()) as any).insertedFiles[0].id;
    expect(await (await download(b.baseUrl, fileId)).text()).toBe('here');
    const file = await t.app.prisma.file.findUniqueOrThrow({ where: { id: fileId } });
    await storage().delete(file.storageKey);
    await storage().delete(file.storageKey);
    expect((await download(b.baseUrl, fileId)).status).toBe(404);
    expect(await storage().get(file.storageKey)).toBeNull();
    expect(await storage().stream(file.storageKey)).toBeNull();
  });

  it('stores keys with characters URLs and XML escape exactly, and refuses keys S3 cannot address faithfully', async () => {
    const odd = ['files/odd/a b+c%20d?e#f&g', 'files/odd/ünïcødé 文件 😀', 'files/odd/<tag>&amp;"\'', 'files/odd/!*()~$,;=@:'];
    for (const [i, key] of odd.entries()) await storage().put(key, Buffer.from(`v${i}`), 'text/plain');
    for (const [i, key] of odd.entries()) expect((await storage().get(key))?.toString()).toBe(`v${i}`);
    const listed = await bucketKeys();
    for (const key of odd) expect(listed).toContain(key);
    // A key that would escape, fold or collide is never sent.
    const before = (await bucketKeys()).length;
    for (const key of ['', '../outside', 'files/../../etc/passwd', 'files/./x', 'files//x', '/files/x', 'files/x/', 'files/\u0000x', 'files/\nx', `files/${'x'.repeat(1100)}`, 'files/\ud800']) {
      await expect(storage().put(key, Buffer.from('no'), 'text/plain'), JSON.stringify(key)).rejects.toThrow(/not a storable key/);
      await expect(storage().get(key)).rejects.toThrow(/not a storable key/);
    }
    expect((await bucketKeys()).length).toBe(before);
    for (const key of odd) await storage().delete(key);
    expect(await bucketKeys()).not.toContain(odd[0]);
  });

  it('a file name that looks like a path is only a name', async () => {
    const spaceId = await newSpace('Hostile names');
    const res = await uploadRest(t.baseUrl, spaceId, '../../../etc/passwd', Buffer.from('x'), 'text/plain');
    expect(res.status).toBe(200);
    const fileId = ((await res.json()) as any).insertedFiles[0].id;
    const file = await t.app.prisma.file.findUniqueOrThrow({ where: { id: fileId } });
    expect(file.storageKey).toBe(`files/${spaceId}/${fileId}`);
    const dl = await download(b.baseUrl, fileId);
    expect(dl.headers.get('content-disposition')).toBe(`inline; filename*=UTF-8''${encodeURIComponent('../../../etc/passwd')}`);
  });

  it('the orphan sweep lists the bucket: bytes nothing refers to go once past the grace period, referenced bytes stay', async () => {
    const spaceId = await newSpace('Sweep');
    const res = await uploadRest(t.baseUrl, spaceId, 'kept.txt', Buffer.from('kept'), 'text/plain');
    const fileId = ((await res.json()) as any).insertedFiles[0].id;
    const kept = (await t.app.prisma.file.findUniqueOrThrow({ where: { id: fileId } })).storageKey;
    // What a transaction that rolled back after its put leaves behind.
    const orphan = `files/${spaceId}/file_orphan0001`;
    await storage().put(orphan, Buffer.from('orphan'), 'text/plain');
    const outside = 'elsewhere/not-ours';
    await storage().put(outside, Buffer.from('theirs'), 'text/plain');
    const deps = (offsetMs: number) => ({ prisma: t.app.prisma, log: t.app.log, services: t.app.services, clock: { now: () => new Date(Date.now() + offsetMs) } });
    expect(await sweepOrphanFiles(deps(0) as never)).toBe(0);
    expect(await sweepOrphanFiles(deps(ORPHAN_GRACE_MS + 60_000) as never)).toBeGreaterThanOrEqual(1);
    const keys = await bucketKeys();
    expect(keys).not.toContain(orphan);
    expect(keys).toContain(kept);
    expect(keys).toContain(outside);
    await storage().delete(outside);
  });
});

describe('the store stopped', () => {
  it('answers 503 with Retry-After (never 500) for downloads and uploads, and a failed upload leaves nothing referenced', async () => {
    const spaceId = await newSpace('Outage');
    const res = await uploadRest(t.baseUrl, spaceId, 'before.txt', Buffer.from('before'), 'text/plain');
    const fileId = ((await res.json()) as any).insertedFiles[0].id;
    const filesBefore = await t.app.prisma.file.count({ where: { spaceId } });
    const revisionBefore = (await t.app.prisma.space.findUniqueOrThrow({ where: { id: spaceId } })).revisionId;

    await stopS3();
    try {
      for (const base of [t.baseUrl, b.baseUrl]) {
        const dl = await download(base, fileId);
        expect(dl.status).toBe(503);
        expect(dl.headers.get('retry-after')).toBeTruthy();
        expect(((await dl.json()) as any).error.message).toBe(S3_UNAVAILABLE_MESSAGE);
      }
      const up = await uploadRest(t.baseUrl, spaceId, 'during.txt', Buffer.from('during'), 'text/plain');
      expect(up.status).toBe(503);
      expect(up.headers.get('retry-after')).toBeTruthy();
      const gql = await uploadGraphql(b.baseUrl, spaceId, 'during.txt', Buffer.from('during'), 'text/plain');
      expect(gql.status).toBe(503);
      expect(gql.body.errors[0].extensions.code).toBe('SERVICE_UNAVAILABLE');
      // The official client sees the same 503.
      const err = await t.client().spaces.getSpaceById(spaceId).then(() => undefined, (e) => e);
      expect(err).toBeUndefined(); // reads that touch no file are unaffected
      // Nothing referenced: no File row, no new revision.
      expect(await t.app.prisma.file.count({ where: { spaceId } })).toBe(filesBefore);
      expect((await t.app.prisma.space.findUniqueOrThrow({ where: { id: spaceId } })).revisionId).toBe(revisionBefore);
    } finally {
      await startS3(); // same port and directory
    }
    expect(await (await download(b.baseUrl, fileId)).text()).toBe('before');
    const again = await uploadRest(t.baseUrl, spaceId, 'after.txt', Buffer.from('after'), 'text/plain');
    expect(again.status).toBe(200);
  });

  it('wrong credentials are a configuration fault (500, logged), not an outage', async () => {
    // s3rver knows its access key ids (it does not verify SigV4 signatures themselves).
    const wrong = new S3FileStorage({ ...s3Settings(), accessKeyId: 'NOT-A-KEY' });
    const err = await wrong.put('files/x/y', Buffer.from('x'), 'text/plain').then(() => undefined, (e: Error) => e);
    expect(err?.message).toBe('S3 PUT "files/x/y": 403 InvalidAccessKeyId');
    expect((err as { code?: string }).code).toBeUndefined();
  });
});
