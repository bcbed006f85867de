// Hostile imports (archive bombs, huge pages, slow conversions): zip and docx bombs are
// refused on their declared sizes before anything is inflated, a lying declared size is caught
// while inflating, the process's memory stays bounded, an imported page over the page limit fails
// the import with nothing written, and a REST import still running after the wait answers 202
// with the job to poll.
import http from 'node:http';
import { once } from 'node:events';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import zlib from 'node:zlib';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers.ts';
import { expectValidNextResponse } from './openapi.ts';
import { makeZip, serveFixtures } from './fixtures/content.ts';
import { loadConfig } from '../src/config.ts';

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;

// ------------------------------------------------------------------ a zip writer for hostile archives

type RawEntry = {
  name: string;
  /** The bytes as stored (deflated unless `method` is 0). */
  data: Buffer;
  crc: number;
  /** The uncompressed size written in the headers: the truth, or a lie. */
  declaredSize: number;
  method?: 0 | 8;
  /** Point this central directory record at an earlier entry's local header (overlapping entries). */
  sameDataAs?: number;
};

/** A zip archive written by hand (local headers, data, central directory, end record), so sizes can lie. */
function rawZip(entries: RawEntry[]): Buffer {
  const parts: Buffer[] = [];
  const offsets: number[] = [];
  let at = 0;
  entries.forEach((e, i) => {
    if (e.sameDataAs !== undefined) {
      offsets.push(offsets[e.sameDataAs]);
      return;
    }
    const name = Buffer.from(e.name);
    const h = Buffer.alloc(30);
    h.writeUInt32LE(0x04034b50, 0);
    h.writeUInt16LE(20, 4);
    h.writeUInt16LE(e.method ?? 8, 8);
    h.writeUInt32LE(e.crc >>> 0, 14);
    h.writeUInt32LE(e.data.length, 18);
    h.writeUInt32LE(e.declaredSize, 22);
    h.writeUInt16LE(name.length, 26);
    offsets[i] = at;
    parts.push(h, name, e.data);
    at += h.length + name.length + e.data.length;
  });
  const cdStart = at;
  entries.forEach((e, i) => {
    const data = e.sameDataAs !== undefined ? entries[e.sameDataAs].data : e.data;
    const name = Buffer.from(e.name);
    const c = Buffer.alloc(46);
    c.writeUInt32LE(0x02014b50, 0);
    c.writeUInt16LE(20, 4);
    c.writeUInt16LE(20, 6);
    c.writeUInt16LE(e.method ?? 8, 10);
    c.writeUInt32LE(e.crc >>> 0, 16);
    c.writeUInt32LE(data.length, 20);
    c.writeUInt32LE(e.declaredSize, 24);
    c.writeUInt16LE(name.length, 28);
    c.writeUInt32LE(offsets[i], 42);
    parts.push(c, name);
    at += c.length + name.length;
  });
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(at - cdStart, 12);
  end.writeUInt32LE(cdStart, 16);
  parts.push(end);
  return Buffer.concat(parts);
}

/** `bytes` zeros, deflated as a stream (about 1 MiB per GiB), with their CRC. */
async function deflatedZeros(bytes: number): Promise<{ data: Buffer; crc: number }> {
  const zeros = Buffer.alloc(MiB);
  const deflate = zlib.createDeflateRaw({ level: 9, memLevel: 9 });
  const out: Buffer[] = [];
  deflate.on('data', (c: Buffer) => out.push(c));
  const ended = once(deflate, 'end');
  let crc = 0;
  for (let sent = 0; sent < bytes; sent += zeros.length) {
    const chunk = zeros.subarray(0, Math.min(zeros.length, bytes - sent));
    crc = zlib.crc32(chunk, crc);
    if (!deflate.write(chunk)) await once(deflate, 'drain');
  }
  deflate.end();
  await ended;
  return { data: Buffer.concat(out), crc };
}

const stored = (name: string, text: string): RawEntry => {
  const data = Buffer.from(text);
  return { name, data, crc: zlib.crc32(data), declaredSize: data.length, method: 0 };
};

const CONTENT_TYPES =
  '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>';

// ------------------------------------------------------------------ the app and the fixtures

let t: TestApp;
let server: Awaited<ReturnType<typeof serveFixtures>>;
let gigabyte: { data: Buffer; crc: number };

beforeAll(async () => {
  t = await startTestApp({ worker: true });
  gigabyte = await deflatedZeros(GiB);
  const fifteen = await deflatedZeros(15 * MiB);
  const docx = (declaredSize: number) =>
    rawZip([stored('[Content_Types].xml', CONTENT_TYPES), { name: 'word/document.xml', ...gigabyte, declaredSize }]);
  const many = Array.from({ length: 60_000 }, (_, i) => stored(`n/${i}.md`, ''));
  server = await serveFixtures({
    // One entry declaring its true 1 GiB.
    '/bomb.zip': { contentType: 'application/zip', body: rawZip([stored('README.md', '# Hi\n'), { name: 'big.md', ...gigabyte, declaredSize: GiB }]) },
    // The same entry declaring 1 KiB: only inflating can tell.
    '/liar.zip': { contentType: 'application/zip', body: rawZip([stored('README.md', '# Hi\n'), { name: 'big.md', ...gigabyte, declaredSize: 1024 }]) },
    // Five records over the same 15 MiB of data: each under the entry limit, 75 MiB together.
    '/overlap.zip': {
      contentType: 'application/zip',
      body: rawZip([0, 1, 2, 3, 4].map((i) => ({ name: `p${i}.md`, ...fifteen, declaredSize: 15 * MiB, ...(i ? { sameDataAs: 0 } : {}) }))),
    },
    // A large file the import does not read (not markdown, not an image) beside a page.
    '/with-video.zip': { contentType: 'application/zip', body: rawZip([stored('README.md', '# Welcome\n\nHello.\n'), { name: 'media/talk.mp4', ...gigabyte, declaredSize: GiB }]) },
    '/many.zip': { contentType: 'application/zip', body: rawZip(many) },
    '/bomb.docx': { contentType: 'application/octet-stream', body: docx(GiB) },
    '/liar.docx': { contentType: 'application/octet-stream', body: docx(1024) },
    '/huge-page.zip': {
      contentType: 'application/zip',
      body: await makeZip({ 'book/small.md': '# Small\n\nfine\n', 'book/image.png': Buffer.from('89504e470d0a1a0a', 'hex'), 'book/guide/huge.md': `# Huge\n\n${'word '.repeat(60_000)}\n` }),
    },
    // About 1 MiB of HTML: seconds of parsing and conversion (node-html-parser, turndown).
    '/heavy.html': {
      contentType: 'text/html',
      body: `<html><head><title>Heavy</title></head><body><main>${'<p>Some <strong>bold</strong> text and a <a href="x.html">link</a> here.</p>\n'.repeat(14_000)}</main></body></html>`,
    },
    '/huge.md': { contentType: 'text/markdown', body: `# One long page\n\n${'x'.repeat(300 * 1024)}\n` },
  });
});
afterAll(async () => {
  await server?.close();
  await t?.close();
});

async function newSpace(title = 'Hostile imports') {
  const r = await t.rest('POST', `/v1/orgs/${t.org.id}/spaces`, { title });
  await t.rest('POST', `/v1/spaces/${r.body.id}/content`, { changes: [{ operation: 'insert_page', title: 'Existing', document: { markdown: 'kept' } }] });
  return r.body.id as string;
}

/** What an import could have written to a space: its revision, page versions and files. */
async function stateOf(spaceId: string) {
  const p = t.app.prisma;
  return {
    revision: (await p.space.findUniqueOrThrow({ where: { id: spaceId } })).revisionId,
    versions: await p.pageVersion.count({ where: { spaceId } }),
    files: await p.file.count({ where: { spaceId } }),
  };
}

/** Import through REST; the process's peak resident memory above where it was when the call started. */
async function importMeasured(spaceId: string, file: string, source: string) {
  const before = process.memoryUsage().rss;
  let sampled = before;
  const timer = setInterval(() => (sampled = Math.max(sampled, process.memoryUsage().rss)), 10);
  try {
    const r = await t.rest('POST', `/v1/spaces/${spaceId}/content/import`, { url: `${server.base}/${file}`, source });
    // maxRSS (KiB) is the process's peak: it also sees a spike between two samples.
    const peak = Math.max(sampled, process.resourceUsage().maxRSS * 1024);
    if (process.env.SHOW_RSS) console.log(file, Math.round(before / MiB), "MiB before; peak +", Math.round((peak - before) / MiB), "MiB; sampled +", Math.round((sampled - before) / MiB));
    return { r, grewBy: peak - before };
  } finally {
    clearInterval(timer);
  }
}

/** Resident memory an import may add. The unbounded inflater took it from 339 MiB to 2,344 MiB. */
const RSS_BOUND = 150 * MiB; // the worker thread's own heap (30–60 MiB) included

describe('archive bombs', () => {
  it('a 1 MiB zip with a 1 GiB entry is refused on its declared size, before inflating', async () => {
    expect(gigabyte.data.length).toBeLessThan(2 * MiB);
    const spaceId = await newSpace();
    const before = await stateOf(spaceId);
    const { r, grewBy } = await importMeasured(spaceId, 'bomb.zip', 'zip');
    expect(r.status).toBe(400);
    expect(r.body.error.message).toMatch(/^url: the archive: big\.md expands to 1024 MiB; an entry may expand to at most 20 MiB/);
    expect(grewBy).toBeLessThan(RSS_BOUND);
    expect(await stateOf(spaceId)).toEqual(before);
    const job = await t.app.prisma.importJob.findFirstOrThrow({ where: { spaceId } });
    expect(job).toMatchObject({ state: 'failed', revisionId: null });
  });

  it('a zip whose entry lies about its size (1 KiB declared, 1 GiB inside) stops at the lie', async () => {
    const spaceId = await newSpace();
    const before = await stateOf(spaceId);
    const { r, grewBy } = await importMeasured(spaceId, 'liar.zip', 'zip');
    expect(r.status).toBe(400);
    expect(r.body.error.message).toMatch(/^url: the archive: big\.md expands past its declared size of 1 KiB/);
    expect(grewBy).toBeLessThan(RSS_BOUND);
    expect(await stateOf(spaceId)).toEqual(before);
  });

  it('overlapping entries, each under the entry limit, are refused on their declared total', async () => {
    const spaceId = await newSpace();
    const before = await stateOf(spaceId);
    const { r, grewBy } = await importMeasured(spaceId, 'overlap.zip', 'zip');
    expect(r.status).toBe(400);
    expect(r.body.error.message).toMatch(/^url: the archive expands to more than 50 MiB/);
    expect(grewBy).toBeLessThan(RSS_BOUND);
    expect(await stateOf(spaceId)).toEqual(before);
  });

  it('a large entry the import does not read is skipped unread, not refused', async () => {
    const spaceId = await newSpace();
    const { r, grewBy } = await importMeasured(spaceId, 'with-video.zip', 'zip');
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ importedResources: 1, totalResources: 1 });
    expect(grewBy).toBeLessThan(RSS_BOUND);
    expect((await t.rest('GET', `/v1/spaces/${spaceId}/content/pages`)).body.pages.map((p: any) => p.title)).toEqual(['Existing', 'Welcome']);
  });

  it('an archive of 60,000 entries is refused on its count', async () => {
    const spaceId = await newSpace();
    const before = await stateOf(spaceId);
    const r = await t.rest('POST', `/v1/spaces/${spaceId}/content/import`, { url: `${server.base}/many.zip`, source: 'zip' });
    expect(r.status).toBe(400);
    expect(r.body.error.message).toBe('url: the archive has 60000 entries; at most 5000 are accepted');
    expect(await stateOf(spaceId)).toEqual(before);
  });

  it('a docx bomb is refused the same way, declared or lying, before mammoth sees it', async () => {
    const spaceId = await newSpace();
    const before = await stateOf(spaceId);
    const declared = await importMeasured(spaceId, 'bomb.docx', 'docx');
    expect(declared.r.status).toBe(400);
    expect(declared.r.body.error.message).toMatch(/^url: the Word document: word\/document\.xml expands to 1024 MiB/);
    expect(declared.grewBy).toBeLessThan(RSS_BOUND);
    const lying = await importMeasured(spaceId, 'liar.docx', 'docx');
    expect(lying.r.status).toBe(400);
    expect(lying.r.body.error.message).toMatch(/^url: the Word document: word\/document\.xml expands past its declared size of 1 KiB/);
    expect(lying.grewBy).toBeLessThan(RSS_BOUND);
    expect(await stateOf(spaceId)).toEqual(before);
  });
});

describe('the page limit', () => {
  it('a zip page over 256 KiB of markdown fails the import, naming the page, and writes nothing', async () => {
    const spaceId = await newSpace();
    const before = await stateOf(spaceId);
    const r = await t.rest('POST', `/v1/spaces/${spaceId}/content/import`, { url: `${server.base}/huge-page.zip`, source: 'zip' });
    expect(r.status).toBe(400);
    expect(r.body.error.message).toBe(
      'url: the page "Huge" (from guide/huge.md) has 300,000 characters of markdown; a page may have at most 262,144 (256 KiB). Nothing was imported',
    );
    // Neither the small page nor the image went in.
    expect(await stateOf(spaceId)).toEqual(before);
    expect((await t.rest('GET', `/v1/spaces/${spaceId}/content/pages`)).body.pages.map((p: any) => p.title)).toEqual(['Existing']);
  });

  it('a single markdown file over the limit too', async () => {
    const spaceId = await newSpace();
    const before = await stateOf(spaceId);
    const r = await t.rest('POST', `/v1/spaces/${spaceId}/content/import`, { url: `${server.base}/huge.md`, source: 'markdown' });
    expect(r.status).toBe(400);
    expect(r.body.error.message).toMatch(/^url: the page "One long page" \(from huge\.md\) has 307,201 characters of markdown/);
    expect(await stateOf(spaceId)).toEqual(before);
  });
});

describe('conversion off the event loop', () => {
  it('the event loop (and /healthz) never waits 1 s while a heavy HTML page converts', async () => {
    const spaceId = await newSpace();
    const before = await stateOf(spaceId);
    // The test and the server share this process's event loop: a conversion on it would show as a
    // stall of the loop (the bug: seconds), whichever of the two was waiting.
    const stalls = monitorEventLoopDelay({ resolution: 10 });
    stalls.enable();
    let done = false;
    const importing = t.rest('POST', `/v1/spaces/${spaceId}/content/import`, { url: `${server.base}/heavy.html`, source: 'html' }).finally(() => (done = true));
    let answered = 0;
    while (!done) {
      expect((await fetch(`${t.baseUrl}/healthz`)).status).toBe(200);
      answered++;
      await new Promise((r) => setTimeout(r, 50));
    }
    const r = await importing;
    stalls.disable();
    if (process.env.SHOW_RSS) console.log('healthz answers', answered, 'longest stall ms', Math.round(stalls.max / 1e6));
    // The page it makes is over the page limit: refused, after a conversion that took its thread seconds.
    expect(r.status).toBe(400);
    expect(r.body.error.message).toMatch(/^url: the page "Heavy" \(from heavy\.html\) has [\d,]+ characters of markdown/);
    expect(await stateOf(spaceId)).toEqual(before);
    expect(answered).toBeGreaterThan(5);
    expect(stalls.max / 1e6).toBeLessThan(1000);
  });
});

describe('the deadline of an import', () => {
  let quick: TestApp;
  let tarpit: http.Server;
  beforeAll(async () => {
    quick = await startTestApp({ worker: true, config: { imports: { ...loadConfig({}).imports, timeoutSeconds: 2 } } });
    tarpit = http.createServer(() => {}); // accepts, never answers
    tarpit.listen(0, '127.0.0.1');
    await once(tarpit, 'listening');
  });
  afterAll(async () => {
    tarpit?.closeAllConnections();
    tarpit?.close();
    await quick?.close();
  });

  it('an import past its deadline fails with the reason, and the space is unchanged', async () => {
    const s = await quick.rest('POST', `/v1/orgs/${quick.org.id}/spaces`, { title: 'Tarpit' });
    const before = (await quick.app.prisma.space.findUniqueOrThrow({ where: { id: s.body.id } })).revisionId;
    const r = await quick.rest('POST', `/v1/spaces/${s.body.id}/content/import`, { url: `http://127.0.0.1:${(tarpit.address() as AddressInfo).port}/slow.md`, source: 'markdown' });
    expect(r.status).toBe(400);
    expect(r.body.error.message).toBe('url: the import did not finish within 2 s (fetching and converting)');
    expect((await quick.app.prisma.space.findUniqueOrThrow({ where: { id: s.body.id } })).revisionId).toBe(before);
  });
});

// ------------------------------------------------------------------ an import that outlasts the wait

describe('a REST import still running after the wait', () => {
  let slow: TestApp;
  let release!: () => void;
  let fixture: http.Server;
  let base: string;
  let requested!: Promise<void>;

  beforeAll(async () => {
    // Wait 1 s instead of 20 s; the fixture holds its answer until the test lets it go.
    slow = await startTestApp({ worker: true, config: { imports: { ...loadConfig({}).imports, waitSeconds: 1 } } });
    const released = new Promise<void>((r) => (release = r));
    let arrived!: () => void;
    requested = new Promise<void>((r) => (arrived = r));
    fixture = http.createServer(async (_req, res) => {
      arrived();
      await released;
      res.writeHead(200, { 'content-type': 'text/markdown' });
      res.end('# Late page\n\nIt came.\n');
    });
    fixture.listen(0, '127.0.0.1');
    await once(fixture, 'listening');
    base = `http://127.0.0.1:${(fixture.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    release?.();
    fixture?.close();
    await slow?.close();
  });

  it('answers 202 with the import run and a Location to poll, which shows the revision once done', async () => {
    const s = await slow.rest('POST', `/v1/orgs/${slow.org.id}/spaces`, { title: 'Slow' });
    const spaceId = s.body.id as string;
    const before = (await slow.app.prisma.space.findUniqueOrThrow({ where: { id: spaceId } })).revisionId;

    const r = await slow.rest('POST', `/v1/spaces/${spaceId}/content/import`, { url: `${base}/late.md`, source: 'markdown' });
    await requested; // the job really is waiting on the source
    expect(r.status).toBe(202);
    expect(r.body).toMatchObject({ object: 'import-run', status: expect.stringMatching(/^(pending|in-progress)$/), target: { space: spaceId }, importedResources: 0 });
    expect(r.body.revision).toBeUndefined(); // no old revision passed off as the result
    const location = r.body.urls.location as string;
    expect(r.headers.get('location')).toBe(location);
    expect(location).toBe(`${slow.app.config.publicUrl}/v1/org/${slow.org.id}/imports/${r.body.id}`);
    expectValidNextResponse('POST', '/org/{organizationId}/imports', 201, r.body);
    // The served document says so too.
    const doc = (await slow.rest('GET', '/v1/openapi.json', undefined, null)).body;
    expect(doc.paths['/v1/spaces/{spaceId}/content/import'].post.responses['202'].headers.Location).toBeDefined();
    const path = location.slice(slow.app.config.publicUrl.length);

    const running = await slow.rest('GET', path);
    expect(running.status).toBe(200);
    expect(running.body).toMatchObject({ id: r.body.id, status: 'in-progress' });
    expectValidNextResponse('GET', '/org/{organizationId}/imports/{importRunId}', 200, running.body);
    // The job is the caller's business only: another organization's path or an outsider is a 404.
    expect((await slow.rest('GET', path.replace(slow.org.id, 'org_0000000000000000000000'))).status).toBe(404);
    const outsider = await slow.createUser(undefined);
    expect((await slow.rest('GET', path, undefined, outsider.token)).status).toBe(404);
    expect((await slow.rest('GET', path, undefined, null)).status).toBe(401);

    release();
    let run = running.body;
    for (let i = 0; i < 300 && run.status !== 'completed' && run.status !== 'failed'; i++) {
      await new Promise((res) => setTimeout(res, 100));
      run = (await slow.rest('GET', path)).body;
    }
    expect(run).toMatchObject({ status: 'completed', importedResources: 1, totalResources: 1 });
    expectValidNextResponse('GET', '/org/{organizationId}/imports/{importRunId}', 200, run);
    const now = (await slow.app.prisma.space.findUniqueOrThrow({ where: { id: spaceId } })).revisionId;
    expect(now).not.toBe(before);
    expect(run.revision).toBe(now);
    expect((await slow.rest('GET', `/v1/spaces/${spaceId}/content/pages`)).body.pages.map((p: any) => p.title)).toEqual(['Late page']);

  });
});
