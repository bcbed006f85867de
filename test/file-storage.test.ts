// Uploaded files live in shared storage: PostgreSQL by default (FILE_STORAGE=postgres), so a file
// uploaded through one gateway process downloads from any other on the same database.
// FILE_STORAGE=disk keeps them under FILES_DIR, on the disk of the process that received them.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSecondApp, startTwoGateways } from './helpers.ts';
import { loadConfig } from '../src/config.ts';
import { LIST_PAGE_SIZE, LocalDiskStorage, PostgresFileStorage } from '../src/lib/storage.ts';
import { ORPHAN_GRACE_MS, sweepOrphanFiles } from '../src/domain/cleanup.ts';

let g: Awaited<ReturnType<typeof startTwoGateways>>;
beforeAll(async () => {
  g = await startTwoGateways();
});
afterAll(async () => {
  await g?.close();
});

const auth = () => ({ authorization: `Bearer ${g.t.token}` });

async function newSpace(title: string) {
  const r = await g.t.rest('POST', `/v1/orgs/${g.t.org.id}/spaces`, { title });
  expect(r.status).toBe(201);
  return r.body.id as string;
}

async function upload(baseUrl: string, spaceId: string, name: string, data: Buffer, contentType: string) {
  const res = await fetch(`${baseUrl}/v1/spaces/${spaceId}/content`, {
    method: 'POST',
    headers: { ...auth(), 'content-type': 'application/json' },
    body: JSON.stringify({ changes: [{ operation: 'insert_files', files: [{ name, contentType, base64: data.toString('base64') }] }] }),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { insertedFiles: Array<{ id: string }> }).insertedFiles[0].id;
}

const download = (baseUrl: string, fileId: string) => fetch(`${baseUrl}/files/${fileId}`, { headers: auth() });

describe('files in PostgreSQL (the default)', () => {
  it('a file uploaded through one gateway downloads byte-identical through another', async () => {
    expect(g.t.app.config.fileStorage).toBe('postgres');
    expect(g.t.app.services.storage).toBeInstanceOf(PostgresFileStorage);
    const spaceId = await newSpace('Shared files');
    // Every byte value, then random bytes: nothing may be lost to an encoding.
    const data = Buffer.concat([Buffer.from(Array.from({ length: 256 }, (_, i) => i)), crypto.randomBytes(700 * 1024)]);
    const fileId = await upload(g.t.baseUrl, spaceId, 'blob.bin', data, 'application/octet-stream');

    const fromB = await download(g.bUrl, fileId);
    expect(fromB.status).toBe(200);
    expect(fromB.headers.get('content-type')).toBe('application/octet-stream');
    expect(Buffer.from(await fromB.arrayBuffer()).equals(data)).toBe(true);

    // Nothing on either process's disk: the bytes are one row of the database.
    const file = await g.t.app.prisma.file.findUniqueOrThrow({ where: { id: fileId } });
    const row = await g.t.app.prisma.fileBlob.findUniqueOrThrow({ where: { key: file.storageKey }, select: { size: true, contentType: true } });
    expect(row).toEqual({ size: data.length, contentType: 'application/octet-stream' });
    expect(fs.readdirSync(g.t.app.config.filesDir)).toEqual([]);

    // Still access-checked on the other process.
    expect((await fetch(`${g.bUrl}/files/${fileId}`)).status).toBe(401);
  });

  it('answers 404 for a missing file, and for a file whose bytes are gone', async () => {
    expect((await download(g.bUrl, 'file_missing')).status).toBe(404);
    const spaceId = await newSpace('Lost bytes');
    const fileId = await upload(g.bUrl, spaceId, 'a.txt', Buffer.from('here'), 'text/plain');
    expect(await (await download(g.t.baseUrl, fileId)).text()).toBe('here');
    const file = await g.t.app.prisma.file.findUniqueOrThrow({ where: { id: fileId } });
    await g.t.app.services.storage.delete(file.storageKey);
    await g.t.app.services.storage.delete(file.storageKey); // idempotent
    expect((await download(g.bUrl, fileId)).status).toBe(404);
    expect(await g.t.app.services.storage.get(file.storageKey)).toBeNull();
  });

  it('stores and reads back a blob larger than one read slice, and overwrites a key', async () => {
    const storage = g.t.app.services.storage;
    const big = crypto.randomBytes(3 * 1024 * 1024 + 17);
    await storage.put('pdf/big_test.pdf', big, 'application/pdf');
    expect((await storage.get('pdf/big_test.pdf'))!.equals(big)).toBe(true);
    const smaller = crypto.randomBytes(1024 * 1024 + 1);
    await storage.put('pdf/big_test.pdf', smaller, 'application/pdf');
    expect((await storage.get('pdf/big_test.pdf'))!.equals(smaller)).toBe(true);
    await storage.delete('pdf/big_test.pdf');
    expect(await storage.get('pdf/big_test.pdf')).toBeNull();
  });

  it('lists keys page by page, and the sweep deletes orphan blobs from the table while it pages', async () => {
    const spaceId = await newSpace('Swept');
    const fileId = await upload(g.t.baseUrl, spaceId, 'kept.txt', Buffer.from('kept'), 'text/plain');
    const kept = (await g.t.app.prisma.file.findUniqueOrThrow({ where: { id: fileId } })).storageKey;
    // More orphans than two pages of `list()`, as a rolled-back upload or an interrupted purge leaves them.
    const orphans = 2 * LIST_PAGE_SIZE + 7;
    await g.t.app.prisma.$executeRaw`INSERT INTO "FileBlob" ("key", "content", "contentType", "size")
      SELECT 'files/space_gone/file_' || lpad(i::text, 5, '0'), decode('00', 'hex'), 'text/plain', 1 FROM generate_series(1, ${orphans}::int) AS i`;
    const before = await g.t.app.prisma.fileBlob.count();
    const listed: string[] = [];
    for await (const { key, modifiedAt } of g.t.app.services.storage.list()) {
      expect(modifiedAt).toBeInstanceOf(Date);
      listed.push(key);
    }
    expect(listed).toHaveLength(before);
    expect(new Set(listed).size).toBe(before);

    const deps = { prisma: g.t.app.prisma, clock: g.t.clock, log: g.t.app.log, services: g.t.app.services };
    // Young blobs are never swept: a transaction may be about to refer to them.
    expect(await sweepOrphanFiles(deps)).toBe(0);
    g.t.clock.advance(ORPHAN_GRACE_MS + 60_000);
    expect(await sweepOrphanFiles(deps)).toBe(orphans);
    expect(await g.t.app.prisma.fileBlob.count({ where: { key: { startsWith: 'files/space_gone/' } } })).toBe(0);
    // The referenced file stays, and still downloads through the other gateway.
    expect(await g.t.app.prisma.fileBlob.count({ where: { key: kept } })).toBe(1);
    expect(await (await download(g.bUrl, fileId)).text()).toBe('kept');
    expect(await sweepOrphanFiles(deps)).toBe(0);
  });
});

describe('FILE_STORAGE', () => {
  it('defaults to postgres, accepts disk and refuses anything else naming the setting', () => {
    expect(loadConfig({}).fileStorage).toBe('postgres');
    expect(loadConfig({ FILE_STORAGE: 'disk' }).fileStorage).toBe('disk');
    expect(() => loadConfig({ FILE_STORAGE: 's3' })).toThrow(/FILE_STORAGE/);
  });

  it('disk keeps files under FILES_DIR of the process that received them', async () => {
    const filesDir = fs.mkdtempSync(path.join(os.tmpdir(), 'docgraph-disk-files-'));
    const disk = await startSecondApp(g.t, { fileStorage: 'disk', filesDir });
    try {
      expect(disk.app.services.storage).toBeInstanceOf(LocalDiskStorage);
      const spaceId = await newSpace('On disk');
      const data = crypto.randomBytes(4096);
      const fileId = await upload(disk.baseUrl, spaceId, 'd.bin', data, 'application/octet-stream');
      const res = await download(disk.baseUrl, fileId);
      expect(res.status).toBe(200);
      expect(Buffer.from(await res.arrayBuffer()).equals(data)).toBe(true);
      const file = await g.t.app.prisma.file.findUniqueOrThrow({ where: { id: fileId } });
      expect(fs.readFileSync(path.join(filesDir, file.storageKey)).equals(data)).toBe(true);
      expect(await g.t.app.prisma.fileBlob.count({ where: { key: file.storageKey } })).toBe(0);
      // Which is why it suits one process only (or FILES_DIR on a volume every process mounts).
      expect((await download(g.t.baseUrl, fileId)).status).toBe(404);
    } finally {
      await disk.close();
      fs.rmSync(filesDir, { recursive: true, force: true });
    }
  });
});
