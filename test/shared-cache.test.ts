// A shared cache in front: which answers it may keep (public, strong ETag, surrogate keys) and
// which stay private (members, visitor tokens, outsiders); the REST published read served by the
// in-process published cache; and the purge feed, against a real HTTP server acting as the purger:
// purges after API and plain-SQL changes, catch-up after the purger was down, the repeat of older
// versions' keys after the race window, deleted sites, the three purge styles, and the job worker
// running the feed on its own.
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SignJWT } from 'jose';
import type { Config } from '../src/config.ts';
import { banRegex, purgePass, PURGE_TASK } from '../src/http/purge.ts';
import { etagForCoding } from '../src/http/compression.ts';
import { ifNoneMatchMatches } from '../src/http/conditional.ts';
import { startTestApp, type TestApp } from './helpers.ts';
import { expectValidResponse } from './openapi.ts';

type Received = { method: string; url: string; headers: http.IncomingHttpHeaders; body: string };

/**
 * The purger: records every request; `down()` closes its port (connection refused), `up()` listens
 * again on it. Raw TCP, not node:http: node's parser refuses methods it does not know (BAN).
 */
async function startPurger() {
  const received: Received[] = [];
  let server: net.Server | undefined;
  const sockets = new Set<net.Socket>();
  let port = 0;
  const listen = () =>
    new Promise<void>((resolve) => {
      server = net.createServer((socket) => {
        sockets.add(socket);
        socket.on('close', () => sockets.delete(socket));
        let data = Buffer.alloc(0);
        socket.on('data', (chunk) => {
          data = Buffer.concat([data, chunk]);
          const end = data.indexOf('\r\n\r\n');
          if (end < 0) return;
          const [requestLine, ...lines] = data.subarray(0, end).toString('latin1').split('\r\n');
          const headers: http.IncomingHttpHeaders = {};
          for (const line of lines) headers[line.slice(0, line.indexOf(':')).trim().toLowerCase()] = line.slice(line.indexOf(':') + 1).trim();
          const length = Number(headers['content-length'] ?? 0);
          if (data.length < end + 4 + length) return;
          const [method, url] = requestLine.split(' ');
          received.push({ method, url, headers, body: data.subarray(end + 4, end + 4 + length).toString('utf8') });
          data = Buffer.alloc(0);
          socket.end('HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok');
        });
      });
      server.listen(port, '127.0.0.1', () => {
        port = (server!.address() as AddressInfo).port;
        resolve();
      });
    });
  const close = () =>
    new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      if (!server?.listening) return resolve();
      server.close(() => resolve());
    });
  await listen();
  return {
    received,
    url: () => `http://127.0.0.1:${port}/purge`,
    /** The keys of every purge received since the last call, and forget them. */
    take(): string[] {
      const keys = received.flatMap((r) => String(r.headers['x-purge-keys'] ?? r.headers['xkey-purge'] ?? '').split(' ').filter(Boolean).concat(r.body ? (JSON.parse(r.body).surrogate_keys ?? []) : []));
      received.length = 0;
      return keys;
    },
    down: close,
    up: listen,
    close,
  };
}

let t: TestApp;
let purger: Awaited<ReturnType<typeof startPurger>>;
const ORG = () => `/v1/orgs/${t.org.id}`;

async function mutate(document: string, input: Record<string, unknown>) {
  const r = await t.gql(document, { input });
  expect(r.errors).toBeUndefined();
  return r.data;
}

async function newSpace(title: string) {
  return (await mutate(`mutation($input: CreateSpaceInput!) { createSpace(input: $input) { space { id } } }`, { organizationId: t.org.id, title })).createSpace.space.id as string;
}

async function newSite(title: string, spaces: string[], visibility = 'public') {
  const site = (await mutate(`mutation($input: CreateSiteInput!) { createSite(input: $input) { site { id } } }`, { organizationId: t.org.id, title, visibility })).createSite.site.id as string;
  for (const spaceId of spaces) await mutate(`mutation($input: AddSectionToSiteInput!) { addSectionToSite(input: $input) { section { id } } }`, { siteId: site, spaceId, title: `Section ${spaceId.slice(-4)}` });
  await mutate(`mutation($input: SiteKeyInput!) { publishSite(input: $input) { site { id } } }`, { siteId: site });
  return site;
}

const versionOf = async (siteId: string) => String((await t.app.prisma.siteStructureVersion.findUniqueOrThrow({ where: { siteId } })).version);

/** One pass of the feed as the worker runs it, with the purge settings given. */
function pass(purge: Partial<Config['purge']> = {}) {
  return purgePass({ prisma: t.app.prisma, clock: t.clock, config: { ...t.app.config, purge: { ...t.app.config.purge, url: purger.url(), ...purge } } });
}

/** Run passes until nothing is left to purge now (first pass after set-up purges every site once). */
async function settle() {
  for (let i = 0; i < 5 && (await pass()).length > 0; i++);
  purger.take();
}

/** Everything the feed owes, repeats included: shift the clock past the race window and pass. */
async function settleRepeats() {
  t.clock.advance(t.app.config.purge.repeatSeconds * 1000 + 1000);
  await settle();
}

let spaceA: string;
let spaceB: string;
let siteA: string;
let siteB: string;
let shareKey: string;

beforeAll(async () => {
  purger = await startPurger();
  t = await startTestApp({ config: { purge: { url: undefined, style: 'varnish-ban', intervalMs: 100, repeatSeconds: 15, timeoutMs: 2000 } } as Partial<Config> });
  spaceA = await newSpace('Alpha');
  spaceB = await newSpace('Beta');
  // Space A is shown by both sites: a change to it purges both.
  siteA = await newSite('Site A', [spaceA]);
  siteB = await newSite('Site B', [spaceA, spaceB]);
  shareKey = (await mutate(`mutation($input: CreateSiteShareLinkInput!) { createSiteShareLink(input: $input) { shareLink { key } } }`, { siteId: siteA, name: 'link' })).createSiteShareLink.shareLink.key;
}, 120_000);
afterAll(async () => {
  await t?.close();
  await purger?.close();
});

const PUBLIC = 'public, max-age=0, s-maxage=60, stale-while-revalidate=300';
const SITE_QUERY = `query($siteId: ID!, $shareKey: String) { publishedSite(siteId: $siteId, shareKey: $shareKey) { id title structure { items { __typename ... on SiteSection { siteSpaces { space { id revision { id } } } } } } } }`;

async function get(path: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${t.baseUrl}${path}`, { headers });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text };
}
const gqlGet = (variables: Record<string, unknown>, headers: Record<string, string> = {}) => get(`/graphql?${new URLSearchParams({ query: SITE_QUERY, variables: JSON.stringify(variables) })}`, headers);
const publishedPath = (siteId: string, query = '') => `${ORG()}/sites/${siteId}/published${query}`;

function expectShared(r: { status: number; headers: Headers }, siteId: string, name: string) {
  expect(r.status, name).toBe(200);
  expect(r.headers.get('cache-control'), name).toBe(PUBLIC);
  // Strong: a shared cache revalidates with it.
  expect(r.headers.get('etag'), name).toMatch(/^"[A-Za-z0-9_-]{22}"$/);
  const keys = r.headers.get('surrogate-key')!.split(' ');
  expect(r.headers.get('xkey'), name).toBe(r.headers.get('surrogate-key'));
  expect(keys[0], name).toBe(siteId);
  expect(keys[1], name).toMatch(new RegExp(`^${siteId}@v\\d+$`));
  const vary = r.headers.get('vary')!.toLowerCase().split(/,\s*/);
  expect(vary, name).toEqual(expect.arrayContaining(['authorization', 'x-visitor-token', 'accept-encoding']));
  return keys;
}

function expectPrivate(r: { status: number; headers: Headers }, name: string) {
  expect(r.status, name).toBe(200);
  expect(r.headers.get('cache-control'), name).toBe('private, no-cache');
  expect(r.headers.get('etag'), name).toMatch(/^W\//);
  expect(r.headers.get('surrogate-key'), name).toBeNull();
  expect(r.headers.get('xkey'), name).toBeNull();
  expect(r.headers.get('vary')!.toLowerCase(), name).toContain('authorization');
}

describe('headers for shared caches', () => {
  it('marks anonymous reads public with a strong ETag and the site, its version and its spaces as keys (GraphQL GET and REST)', async () => {
    const version = await versionOf(siteB);
    const g = await gqlGet({ siteId: siteB });
    const keys = expectShared(g, siteB, 'GraphQL');
    expect(keys[1]).toBe(`${siteB}@v${version}`);
    expect(keys).toEqual(expect.arrayContaining([spaceA, spaceB]));
    const r = await get(publishedPath(siteB));
    expect(expectShared(r, siteB, 'REST')).toEqual(expect.arrayContaining([`${siteB}@v${version}`, spaceA, spaceB]));
    expectValidResponse('GET', '/orgs/{organizationId}/sites/{siteId}/published', 200, JSON.parse(r.text));
    // Revalidation with the strong tag: 304, headers kept.
    const again = await get(publishedPath(siteB), { 'if-none-match': r.headers.get('etag')! });
    expect(again.status).toBe(304);
    expect(again.headers.get('cache-control')).toBe(PUBLIC);
    // Through the official client too (what a site renderer calls).
    const viaClient = await (await t.as('anonymous')).client.orgs.getPublishedContentSite(t.org.id, siteB);
    expect(viaClient.data).toEqual(JSON.parse(r.text));
  });

  it('marks share-key reads public too (the key is in the URL, so in the cache key)', async () => {
    expectShared(await gqlGet({ siteId: siteA, shareKey }), siteA, 'GraphQL share key');
    expectShared(await get(publishedPath(siteA, `?shareKey=${encodeURIComponent(shareKey)}`)), siteA, 'REST share key');
    // A key that is not one: not found, nothing for a cache.
    const bad = await get(publishedPath(siteA, '?shareKey=nope'));
    expect(bad.status).toBe(404);
    expect(bad.headers.get('cache-control')).toBeNull();
    expect(bad.headers.get('surrogate-key')).toBeNull();
  });

  it('never marks a member, an outsider or a visitor-token answer public', async () => {
    const member = await t.as('reader');
    const outsider = await t.as('outsider');
    const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
    // A visitor token signed with the site's key: adaptive content for that reader.
    const secret = (await t.client().orgs.regenerateSitePublishingAuthById(t.org.id, siteA)).data.privateKey;
    const now = Math.floor(t.clock.now().getTime() / 1000);
    const visitorToken = await new SignJWT({ isEnterprise: true }).setProtectedHeader({ alg: 'HS256' }).setAudience(siteA).setIssuedAt(now).setExpirationTime(now + 600).sign(Buffer.from(secret, 'base64url'));
    const cases: Array<[string, Promise<{ status: number; headers: Headers }>]> = [
      ['member GraphQL', gqlGet({ siteId: siteA }, bearer(member.token!))],
      ['member REST', get(publishedPath(siteA), bearer(member.token!))],
      ['admin REST with share key', get(publishedPath(siteA, `?shareKey=${encodeURIComponent(shareKey)}`), bearer(t.token))],
      ['outsider REST', get(publishedPath(siteA), bearer(outsider.token!))],
      ['visitor token GraphQL', gqlGet({ siteId: siteA }, { 'x-visitor-token': visitorToken })],
      ['visitor token REST', get(publishedPath(siteA), { 'x-visitor-token': visitorToken })],
      ['visitor token REST with share key', get(publishedPath(siteA, `?shareKey=${encodeURIComponent(shareKey)}`), { 'x-visitor-token': visitorToken })],
    ];
    for (const [name, p] of cases) expectPrivate(await p, name);
  });
});

describe('strong tags and compression', () => {
  it('gives a coded body its own strong tag, accepts it back, and leaves weak tags alone', () => {
    expect(etagForCoding('"abc"', 'gzip')).toBe('"abc-gzip"');
    expect(etagForCoding('W/"abc"', 'gzip')).toBeUndefined();
    expect(ifNoneMatchMatches('"abc-gzip"', '"abc"')).toBe(true);
    expect(ifNoneMatchMatches('"abc-br", "x"', '"abc"')).toBe(true);
    expect(ifNoneMatchMatches('"abd-gzip"', '"abc"')).toBe(false);
  });

  it('escapes keys in the ban regex (a key is matched literally, as a whole word)', () => {
    const regex = new RegExp(banRegex(['site_a@v1', 'a.b']));
    expect(regex.test('x site_a@v1 y')).toBe(true);
    expect(regex.test('axb')).toBe(false);
    expect(regex.test('site_a@v10')).toBe(false);
  });
});

describe('the REST published read and the published cache', () => {
  it('serves a second identical read from the cache: no SQL for the content, same body, valid against the OpenAPI document', async () => {
    const path = publishedPath(siteB);
    for (const token of [null, t.token]) {
      // A new version: the first read is a miss.
      await t.rest('PATCH', `${ORG()}/sites/${siteB}`, { title: `Site B for ${token ? 'a member' : 'anonymous'}` });
      const first = await t.countQueries(() => t.rest('GET', path, undefined, token));
      expect(first.result.status).toBe(200);
      const second = await t.countQueries(() => t.rest('GET', path, undefined, token));
      expect(second.result.status).toBe(200);
      expect(second.result.body).toEqual(first.result.body);
      expectValidResponse('GET', '/orgs/{organizationId}/sites/{siteId}/published', 200, second.result.body);
      // Only the access gate's statement (which also reads the version); the token is cached.
      expect(second.count, second.statements.join('\n')).toBe(1);
      expect(second.statements[0]).toContain('SiteStructureVersion');
      expect(first.count).toBeGreaterThan(second.count);
    }
    // A change to the site is seen at once (new version, new key).
    await t.rest('PATCH', `${ORG()}/sites/${siteB}`, { title: 'Site B renamed' });
    expect((await t.rest('GET', path, undefined, null)).body.site.title).toBe('Site B renamed');
  });

  it('shows spaces as published content: no counters, a reader of published content\'s permissions, whoever asks', async () => {
    const r = await t.client().orgs.getPublishedContentSite(t.org.id, siteA);
    const space = (r.data.structure.structure[0] as any).siteSpaces[0].space;
    expect(space.id).toBe(spaceA);
    expect(space.permissions).toMatchObject({ view: true, edit: false, admin: false });
    expect(space.comments).toBe(0);
    // The member's own counters and permissions are the space's read.
    expect((await t.client().spaces.getSpaceById(spaceA)).data.permissions.admin).toBe(true);
  });
});

describe('the purge feed', () => {
  it('purges the sites a change through the API touches, with the style\'s request (varnish-ban)', async () => {
    await settleRepeats();
    await t.rest('PATCH', `${ORG()}/sites/${siteA}`, { title: 'Site A renamed' });
    expect(await pass()).toEqual([siteA]);
    const [ban] = purger.received;
    expect(ban.method).toBe('BAN');
    expect(ban.headers['x-purge-keys']).toBe(siteA);
    // The regex Varnish bans with matches the key as a whole word of obj.http.xkey, not a prefix.
    const regex = new RegExp(String(ban.headers['x-purge-regex']));
    expect(regex.test(`${spaceA} ${siteA} ${siteA}@v3`)).toBe(true);
    expect(regex.test(`${siteA}x ${siteA}@v3`)).toBe(false);
    purger.take();
    // Nothing changed since: a pass purges nothing.
    expect(await pass()).toEqual([]);
    expect(purger.received).toHaveLength(0);
  });

  it('purges after a plain-SQL change, every site showing a changed space', async () => {
    await settleRepeats();
    await t.app.prisma.$executeRawUnsafe(`UPDATE "Space" SET "title" = 'Alpha by SQL' WHERE "id" = $1`, spaceA);
    expect((await pass()).sort()).toEqual([siteA, siteB].sort());
    expect(purger.take().sort()).toEqual([siteA, siteB].sort());
    await t.app.prisma.$executeRawUnsafe(`UPDATE "Space" SET "title" = 'Beta by SQL' WHERE "id" = $1`, spaceB);
    expect(await pass()).toEqual([siteB]);
  });

  it('purges older versions\' keys once more after the race window, and only then', async () => {
    await settleRepeats();
    const before = BigInt(await versionOf(siteA));
    await t.rest('PATCH', `${ORG()}/sites/${siteA}`, { title: 'A, first' });
    await pass();
    await t.rest('PATCH', `${ORG()}/sites/${siteA}`, { title: 'A, second' });
    await pass();
    const now = BigInt(await versionOf(siteA));
    purger.take();
    // Within the window: nothing yet.
    t.clock.advance(5_000);
    expect(await pass()).toEqual([]);
    t.clock.advance(t.app.config.purge.repeatSeconds * 1000);
    const repeated = await pass();
    // Every version an answer could have been built from before the current one, never the current one.
    const expected: string[] = [];
    for (let v = before; v < now; v++) expected.push(`${siteA}@v${v}`);
    expect(repeated).toEqual(expected);
    expect(repeated).not.toContain(`${siteA}@v${now}`);
    expect(await pass()).toEqual([]);
  });

  it('catches up after the purger was down: the missed purge arrives when it is back, and is recorded only then', async () => {
    await settleRepeats();
    await purger.down();
    await t.rest('PATCH', `${ORG()}/sites/${siteB}`, { title: 'B while the purger is down' });
    await expect(pass()).rejects.toThrow();
    await t.app.prisma.$executeRawUnsafe(`UPDATE "Site" SET "title" = 'B by SQL, still down' WHERE "id" = $1`, siteB);
    await expect(pass()).rejects.toThrow();
    const row = await t.app.prisma.sharedCachePurge.findUniqueOrThrow({ where: { siteId: siteB } });
    expect(String(row.purgedVersion)).not.toBe(await versionOf(siteB));
    await purger.up();
    // A restarted worker reads the same state: the pass is a fresh call with nothing in memory.
    expect(await pass()).toEqual([siteB]);
    expect(purger.take()).toEqual([siteB]);
    expect(String((await t.app.prisma.sharedCachePurge.findUniqueOrThrow({ where: { siteId: siteB } })).purgedVersion)).toBe(await versionOf(siteB));
  });

  it('purges a deleted site (now and after the race window), then forgets it', async () => {
    const doomed = await newSite('Doomed', [spaceB]);
    await settleRepeats();
    expect((await t.rest('DELETE', `${ORG()}/sites/${doomed}`)).status).toBe(205);
    expect(await pass()).toEqual([doomed]);
    expect(await pass()).toEqual([]);
    t.clock.advance(t.app.config.purge.repeatSeconds * 1000 + 1000);
    expect(await pass()).toEqual([doomed]);
    expect(await t.app.prisma.sharedCachePurge.findUnique({ where: { siteId: doomed } })).toBeNull();
    expect(await pass()).toEqual([]);
  });

  it('speaks xkey (PURGE + xkey-purge) and http (POST of the keys as JSON, bearer token)', async () => {
    await settleRepeats();
    await t.rest('PATCH', `${ORG()}/sites/${siteA}`, { title: 'A for xkey' });
    await pass({ style: 'xkey' });
    expect(purger.received.map((r) => [r.method, r.headers['xkey-purge']])).toEqual([['PURGE', siteA]]);
    purger.take();
    await t.rest('PATCH', `${ORG()}/sites/${siteA}`, { title: 'A for http' });
    await pass({ style: 'http', token: 'cdn-token' });
    const [post] = purger.received;
    expect(post.method).toBe('POST');
    expect(post.headers['content-type']).toBe('application/json');
    expect(post.headers.authorization).toBe('Bearer cdn-token');
    expect(JSON.parse(post.body)).toEqual({ surrogate_keys: [siteA], tags: [siteA] });
    purger.take();
  });

  it('does nothing without PURGE_URL', async () => {
    await t.rest('PATCH', `${ORG()}/sites/${siteA}`, { title: 'A, no purger' });
    expect(await pass({ url: undefined })).toEqual([]);
    expect(purger.received).toHaveLength(0);
    await settle();
  });
});

describe('the purge feed in the job worker', () => {
  it('runs as a task that re-enqueues itself: a change is purged without anyone calling it', async () => {
    const own = await startPurger();
    const w = await startTestApp({ worker: true, config: { purge: { url: own.url(), style: 'xkey', intervalMs: 100, repeatSeconds: 15, timeoutMs: 2000 } } as Partial<Config> });
    try {
      const space = (await w.gql(`mutation($input: CreateSpaceInput!) { createSpace(input: $input) { space { id } } }`, { input: { organizationId: w.org.id, title: 'Worker space' } })).data.createSpace.space.id;
      const created = await w.gql(`mutation($input: CreateSiteInput!) { createSite(input: $input) { site { id } } }`, { input: { organizationId: w.org.id, title: 'Worker site', visibility: 'public' } });
      expect(created.errors).toBeUndefined();
      const site = created.data.createSite.site.id;
      await w.gql(`mutation($input: AddSectionToSiteInput!) { addSectionToSite(input: $input) { section { id } } }`, { input: { siteId: site, spaceId: space, title: 'Section' } });
      // Start the chain (the cron row would within a minute).
      await w.app.services.jobs.enqueue(w.app.prisma, PURGE_TASK, {}, { jobKey: PURGE_TASK });
      const purgedOnce = async (key: string) => {
        for (let i = 0; i < 300; i++) {
          if (own.received.some((r) => String(r.headers['xkey-purge']).split(' ').includes(key))) return true;
          await new Promise((r) => setTimeout(r, 100));
        }
        return false;
      };
      expect(await purgedOnce(site)).toBe(true);
      own.received.length = 0;
      await w.app.prisma.$executeRawUnsafe(`UPDATE "Site" SET "title" = 'W by SQL' WHERE "id" = $1`, site);
      expect(await purgedOnce(site)).toBe(true);
    } finally {
      await w.close();
      await own.close();
    }
  }, 60_000);
});
