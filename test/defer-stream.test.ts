// Incremental delivery: `@defer` and `@stream` through @graphql-yoga/plugin-defer-stream,
// answered as `multipart/mixed` parts, read with a real client (@urql/core's fetch exchange, which
// merges incremental parts into one result as they arrive). A front end paints a published site's
// navigation (its sections) from the first part and the page trees from the later ones.
// Interplay checked here: the published cache never stores or serves an incremental answer; the
// complexity limits count deferred fragments; the rate limiter charges the request once;
// compression and the conditional-GET plugin leave the stream alone; subscriptions still work.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, fetchExchange, gql as urqlGql, type OperationResult } from '@urql/core';
import { complexityFromQuery } from '@pothos/plugin-complexity';
import { loadConfig } from '../src/config.ts';
import { COMPLEXITY_PER_POINT } from '../src/http/rate-limit.ts';
import { schema } from '../src/graphql/schema.ts';
import { analyse } from '../src/http/published-cache.ts';
import { parse } from 'graphql';
import { startTestApp, type TestApp } from './helpers.ts';
import { newId } from '../src/lib/ids.ts';
import { applyChanges, createInitialRevision } from '../src/domain/revisions.ts';
import type { Tx } from '../src/db/client.ts';

let t: TestApp;
let siteId: string;

/** Over compression.ts's threshold once a query reads it (markdown): the plain answer is compressed. */
const LONG_TEXT = Array.from({ length: 400 }, (_, i) => `Line ${i} of the guide, with words enough to weigh.`).join('\n\n');

/** A space with pages Intro and Guide (long) → Setup. */
async function seedSpace(tx: Tx, title: string, position: number): Promise<string> {
  const spaceId = newId('Space');
  await tx.space.create({ data: { id: spaceId, organizationId: t.org.id, title, position } });
  const base = { spaceId, createdById: t.adminUser.id, storage: t.app.services.storage };
  const rev0 = await createInitialRevision(tx, spaceId, t.adminUser.id);
  const b1 = await applyChanges(tx, {
    ...base,
    baseRevisionId: rev0.id,
    changes: [
      { operation: 'insert_page', title: `${title} intro`, document: { markdown: `Welcome to ${title}.` } },
      { operation: 'insert_page', title: `${title} guide`, document: { markdown: LONG_TEXT } },
    ],
  });
  const b2 = await applyChanges(tx, { ...base, baseRevisionId: b1.revision.id, changes: [{ operation: 'insert_page', into: b1.outcomes[1].pageId, title: 'Setup', document: { markdown: 'Set up.' } }] });
  await tx.space.update({ where: { id: spaceId }, data: { revisionId: b2.revision.id } });
  return spaceId;
}

/** A public published site of three sections, one space each. */
async function seedSite(): Promise<{ siteId: string; spaceIds: string[] }> {
  return t.app.prisma.$transaction(
    async (tx) => {
      const id = newId('Site');
      const spaceIds = [await seedSpace(tx, 'Alpha', 0), await seedSpace(tx, 'Beta', 1), await seedSpace(tx, 'Gamma', 2)];
      const sections = ['Guides', 'Reference', 'Changelog'].map((title, i) => ({ id: newId('SiteSection'), siteId: id, title, path: title.toLowerCase(), position: i }));
      await tx.site.create({ data: { id, organizationId: t.org.id, title: 'Deferred', published: true, visibility: 'public', defaultSiteSectionId: sections[0].id } });
      await tx.siteSection.createMany({ data: sections });
      await tx.siteSpace.createMany({ data: spaceIds.map((spaceId, i) => ({ id: newId('SiteSpace'), siteId: id, sectionId: sections[i].id, spaceId, path: `space-${i + 1}`, position: 0 })) });
      return { siteId: id, spaceIds };
    },
    { timeout: 60_000 },
  );
}

const PAGE_TREES = `siteSpaces { id space { id revision { id pages { title pages { title } } } } }`;
const DEFERRED = `query Nav($siteId: ID!) { publishedSite(siteId: $siteId) { id title sections { id title ... @defer(label: "pages") { ${PAGE_TREES} } } } }`;
const PLAIN = `query Nav($siteId: ID!) { publishedSite(siteId: $siteId) { id title sections { id title ${PAGE_TREES} } } }`;

/** What Apollo Client sends for a query: multipart first. urql's default lists text/event-stream first (see below). */
const MULTIPART_FIRST = 'multipart/mixed;deferSpec=20220824, application/graphql-response+json, application/json';

function client(token: string | null, fetchImpl: typeof fetch = fetch, accept: string | null = MULTIPART_FIRST) {
  return new Client({
    url: `${t.baseUrl}/graphql`,
    exchanges: [fetchExchange],
    // No cache exchange: every result the client emits is what the server sent, merged.
    requestPolicy: 'network-only',
    fetch: fetchImpl,
    fetchOptions: () => ({ headers: { ...(accept ? { accept } : {}), ...(token ? { authorization: `Bearer ${token}` } : {}) } }),
  });
}

/** Every result urql emits for one query (one per incremental part it merged), until hasNext is false. */
function results(c: Client, query: string, variables: Record<string, unknown>): Promise<OperationResult[]> {
  return new Promise((resolve, reject) => {
    const seen: OperationResult[] = [];
    const { unsubscribe } = c.query(urqlGql(query), variables).subscribe((r) => {
      // A structured clone: urql merges later parts into fresh objects, but keep each snapshot as it was.
      seen.push({ ...r, data: r.data === undefined ? undefined : structuredClone(r.data) });
      if (r.error) {
        unsubscribe();
        reject(r.error);
      } else if (!r.hasNext) {
        unsubscribe();
        resolve(seen);
      }
    });
  });
}

/** The JSON parts of a multipart/mixed body (boundary `-`, as yoga writes it). */
function parts(body: string): any[] {
  return body
    .split(/\r\n---/)
    .map((chunk) => chunk.split('\r\n\r\n').slice(1).join('\r\n\r\n').trim())
    .filter((json) => json.startsWith('{'))
    .map((json) => JSON.parse(json));
}

/** A fetch that records the content type and the raw parts of each response it hands urql. */
function recordingFetch(log: Array<{ contentType: string; encoding: string | null; etag: string | null; body: string }>): typeof fetch {
  return async (input, init) => {
    const res = await fetch(input, init);
    const body = await res.clone().text();
    log.push({ contentType: res.headers.get('content-type') ?? '', encoding: res.headers.get('content-encoding'), etag: res.headers.get('etag'), body });
    return res;
  };
}

beforeAll(async () => {
  t = await startTestApp();
  const seeded = await seedSite();
  siteId = seeded.siteId;
}, 120_000);
afterAll(async () => {
  await t?.close();
});

describe('@defer: the navigation first, the page trees after', () => {
  it('answers multipart/mixed: the first part has the section titles, later parts the page trees, and the merged result equals the plain query', async () => {
    const log: Parameters<typeof recordingFetch>[0] = [];
    const seen = await results(client(t.token, recordingFetch(log)), DEFERRED, { siteId });
    expect(log).toHaveLength(1);
    expect(log[0].contentType).toMatch(/^multipart\/mixed/);
    // More than one emission: the initial payload, then the deferred parts merged in.
    expect(seen.length).toBeGreaterThan(1);
    const first = seen[0].data.publishedSite;
    expect(first.sections.map((s: any) => s.title)).toEqual(['Guides', 'Reference', 'Changelog']);
    expect(first.sections.every((s: any) => s.siteSpaces === undefined)).toBe(true);
    expect(seen[0].hasNext).toBe(true);
    const last = seen.at(-1)!;
    expect(last.hasNext).toBe(false);
    expect(last.data.publishedSite.sections[0].siteSpaces[0].space.revision.pages.map((p: any) => p.title)).toEqual(['Alpha intro', 'Alpha guide']);
    expect(last.data.publishedSite.sections[2].siteSpaces[0].space.revision.pages[1].pages[0].title).toBe('Setup');

    const plain = await t.gql(PLAIN, { siteId });
    expect(plain.errors).toBeUndefined();
    expect(last.data).toEqual(plain.data);

    // On the wire: the first part carries no page tree; each section's tree comes in a labelled part.
    const wire = parts(log[0].body);
    expect(wire.length).toBeGreaterThanOrEqual(2);
    expect(JSON.stringify(wire[0])).not.toContain('Alpha intro');
    expect(wire[0].hasNext).toBe(true);
    const incremental = wire.slice(1).flatMap((p) => p.incremental ?? []);
    expect(incremental.map((i: any) => i.path).sort()).toEqual([0, 1, 2].map((i) => ['publishedSite', 'sections', i]));
    expect(incremental.every((i: any) => i.label === 'pages')).toBe(true);
    expect(wire.at(-1).hasNext).toBe(false);
  });

  it("with urql's default Accept (text/event-stream listed first) is answered as server-sent events", async () => {
    const log: Parameters<typeof recordingFetch>[0] = [];
    await results(client(t.token, recordingFetch(log), null), DEFERRED, { siteId });
    expect(log[0].contentType).toMatch(/^text\/event-stream/);
    expect(log[0].body).toContain('Guides');
  });

  // urql's default Accept lists text/event-stream first: the SSE transport (live-sse.ts) carries the
  // incremental parts (`incremental`, `hasNext`) as well as plain results.
  it('over SSE, the deferred parts merge to the same data as the plain query', async () => {
    // A recording fetch reads the whole body first, so urql's abort on unsubscribe has nothing left to cut.
    const seen = await results(client(t.token, recordingFetch([]), null), DEFERRED, { siteId });
    expect(seen.at(-1)!.data).toEqual((await t.gql(PLAIN, { siteId })).data);
  });

  it('works for an anonymous reader (no token): published reads run without one', async () => {
    const log: Parameters<typeof recordingFetch>[0] = [];
    const seen = await results(client(null, recordingFetch(log)), DEFERRED, { siteId });
    expect(log[0].contentType).toMatch(/^multipart\/mixed/);
    expect(seen[0].data.publishedSite.sections.map((s: any) => s.title)).toEqual(['Guides', 'Reference', 'Changelog']);
    expect(seen.at(-1)!.data).toEqual((await t.gql(PLAIN, { siteId }, null)).data);
  });

  it('is never stored in nor served from the published cache', async () => {
    // Control: the plain query is cacheable (the second read is a hit).
    const cache = t.app.server.publishedCache;
    await t.gql(PLAIN, { siteId });
    const hitsBefore = cache.stats.hits;
    await t.gql(PLAIN, { siteId });
    expect(cache.stats.hits).toBe(hitsBefore + 1);
    // Why: a document with a directive other than @include/@skip has no cache plan (and the
    // plugin's onExecuteDone skips async iterables besides).
    expect(analyse(schema, parse(PLAIN), 'Nav')).not.toBeNull();
    expect(analyse(schema, parse(DEFERRED), 'Nav')).toBeNull();
    // The deferred one neither hits nor stores, for members and anonymous readers, and still streams.
    const before = { ...cache.stats };
    const keys = cache.keys().sort();
    const log: Parameters<typeof recordingFetch>[0] = [];
    for (const token of [t.token, t.token, null]) expect((await results(client(token, recordingFetch(log)), DEFERRED, { siteId })).length).toBeGreaterThan(1);
    expect(log.map((l) => l.contentType.split(';')[0])).toEqual(['multipart/mixed', 'multipart/mixed', 'multipart/mixed']);
    expect(cache.stats.stores).toBe(before.stores);
    expect(cache.stats.hits).toBe(before.hits);
    expect(cache.keys().sort()).toEqual(keys);
  });
});

describe('@stream: list items one by one', () => {
  it('delivers allPages after the initial count in later parts, merged in order', async () => {
    const STREAMED = `query Pages($siteId: ID!) { publishedSite(siteId: $siteId) { sections { title siteSpaces { space { revision { allPages @stream(initialCount: 1) { title } } } } } } }`;
    const log: Parameters<typeof recordingFetch>[0] = [];
    const seen = await results(client(null, recordingFetch(log)), STREAMED, { siteId });
    expect(log[0].contentType).toMatch(/^multipart\/mixed/);
    const wire = parts(log[0].body);
    // The first part has one page per space; the rest come as `items` at their list index.
    const firstSpaces = wire[0].data.publishedSite.sections.map((s: any) => s.siteSpaces[0].space.revision.allPages);
    expect(firstSpaces.map((pages: any[]) => pages.length)).toEqual([1, 1, 1]);
    const items = wire.slice(1).flatMap((p) => p.incremental ?? []).filter((i: any) => i.items);
    expect(items.length).toBeGreaterThanOrEqual(3);
    const merged = seen.at(-1)!.data.publishedSite.sections[0].siteSpaces[0].space.revision.allPages.map((p: any) => p.title);
    const plain = await t.gql(`query($siteId: ID!) { publishedSite(siteId: $siteId) { sections { siteSpaces { space { revision { allPages { title } } } } } } }`, { siteId }, null);
    expect(merged).toEqual(plain.data.publishedSite.sections[0].siteSpaces[0].space.revision.allPages.map((p: any) => p.title));
    expect(merged).toHaveLength(3);
  });

  it('refuses @stream on a field that is not a list (a request error, nothing executed)', async () => {
    const query = `query($siteId: ID!) { publishedSite(siteId: $siteId) { title @stream(initialCount: 1) } }`;
    // Under application/json a request error is a 200 with `errors` and no data (GraphQL over HTTP).
    const r = await t.gql(query, { siteId });
    expect(r.status).toBe(200);
    expect(r.data).toBeUndefined();
    expect(r.errors?.[0].message).toMatch(/stream/i);
    // Under application/graphql-response+json, a 400.
    const res = await fetch(`${t.baseUrl}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json', authorization: `Bearer ${t.token}` },
      body: JSON.stringify({ query, variables: { siteId } }),
    });
    expect(res.status).toBe(400);
  });
});

describe('limits and transport around incremental answers', () => {
  it('counts deferred fragments in the depth limit: a too-deep deferred tree is refused like a plain one', async () => {
    let tree = 'title';
    for (let i = 0; i < 20; i++) tree = `title pages { ${tree} }`;
    const deep = (defer: boolean) =>
      `query($siteId: ID!) { publishedSite(siteId: $siteId) { title sections { title ${defer ? '... @defer {' : ''} siteSpaces { space { revision { pages { ${tree} } } } } ${defer ? '}' : ''} } } }`;
    const plain = await t.gql(deep(false), { siteId });
    expect(plain.errors?.[0].message).toMatch(/Query depth \d+ exceeds the limit of 24/);
    const res = await fetch(`${t.baseUrl}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: MULTIPART_FIRST, authorization: `Bearer ${t.token}` },
      body: JSON.stringify({ query: deep(true), variables: { siteId } }),
    });
    const text = await res.text();
    // Refused before anything streams: no site title, no page, the same message.
    expect(text).toMatch(/Query depth \d+ exceeds the limit of 24/);
    expect(text).not.toContain('Deferred');
    expect(text).not.toContain('Setup');
  });

  it('leaves the multipart stream uncompressed and untagged (the plain answer is compressed and tagged), and If-None-Match never turns it into a 304', async () => {
    const q = (defer: boolean) => `query($siteId: ID!) { publishedSite(siteId: $siteId) { title sections { title ${defer ? '... @defer {' : ''} siteSpaces { space { revision { allPages { title markdown } } } } ${defer ? '}' : ''} } } }`;
    const get = (query: string, headers: Record<string, string> = {}) =>
      fetch(`${t.baseUrl}/graphql?${new URLSearchParams({ query, variables: JSON.stringify({ siteId }) })}`, {
        headers: { accept: MULTIPART_FIRST, 'accept-encoding': 'br, gzip', ...headers },
      });
    // Control: the same read without @defer is large enough to be compressed, and gets an ETag.
    const plain = await get(q(false));
    expect(plain.status).toBe(200);
    expect(plain.headers.get('content-encoding')).toBe('br');
    expect(plain.headers.get('etag')).toMatch(/^(W\/)?"/); // strong on this anonymous public read (shared caches)
    const plainData = ((await plain.json()) as any).data;

    const streamed = await get(q(true));
    expect(streamed.status).toBe(200);
    expect(streamed.headers.get('content-type')).toMatch(/^multipart\/mixed/);
    expect(streamed.headers.get('content-encoding')).toBeNull();
    expect(streamed.headers.get('etag')).toBeNull();
    // Not an answer for shared caches: the published cache's shared headers are for complete JSON answers.
    expect(streamed.headers.get('cache-control') ?? '').not.toMatch(/public/);
    const wire = parts(await streamed.text());
    expect(wire.length).toBeGreaterThanOrEqual(2);
    const tree = wire.slice(1).flatMap((p) => p.incremental ?? []).find((i: any) => i.path.join('.') === 'publishedSite.sections.0');
    expect(tree.data).toEqual({ siteSpaces: plainData.publishedSite.sections[0].siteSpaces });
    expect(JSON.stringify(tree.data)).toContain('Line 399 of the guide');

    const again = await get(q(true), { 'if-none-match': '*' });
    expect(again.status).toBe(200);
    expect(again.headers.get('content-type')).toMatch(/^multipart\/mixed/);
    expect(parts(await again.text()).length).toBeGreaterThanOrEqual(2);
  });

  it('charges the rate limit once per request, by the same cost as the plain query', async () => {
    const s = await startTestApp({ config: { rateLimit: { ...loadConfig({}).rateLimit, points: 100_000, anonymousPoints: 1000, windowSeconds: 60 } } });
    try {
      const space = (await s.gql(`mutation($input: CreateSpaceInput!) { createSpace(input: $input) { space { id } } }`, { input: { organizationId: s.org.id, title: 'Limited' } })).data.createSpace.space.id;
      const site = (await s.gql(`mutation($input: CreateSiteInput!) { createSite(input: $input) { site { id } } }`, { input: { organizationId: s.org.id, title: 'Limited', visibility: 'public', spaceIds: [space] } })).data.createSite.site.id;
      expect((await s.gql(`mutation($input: SiteKeyInput!) { publishSite(input: $input) { site { id } } }`, { input: { siteId: site } })).errors).toBeUndefined();
      // This site's top level is site spaces (createSite with spaceIds): defer those.
      const deferred = `query($siteId: ID!) { publishedSite(siteId: $siteId) { title ... @defer { siteSpaces { id space { title revision { pages { title } } } } } } }`;
      const plain = deferred.replace(' ... @defer {', '').replace(/ } } }$/, ' } }');
      const costOf = (query: string) => Math.max(1, Math.ceil(complexityFromQuery(query, { schema, variables: { siteId: site } }).complexity / COMPLEXITY_PER_POINT));
      expect(costOf(deferred)).toBe(costOf(plain));
      const read = () =>
        fetch(`${s.baseUrl}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', accept: MULTIPART_FIRST }, body: JSON.stringify({ query: deferred, variables: { siteId: site } }) });
      const first = await read();
      expect(first.headers.get('content-type')).toMatch(/^multipart\/mixed/);
      expect(parts(await first.text()).length).toBeGreaterThanOrEqual(2);
      const second = await read();
      await second.text();
      expect(first.headers.get('x-ratelimit-limit')).toBe('1000');
      expect(Number(first.headers.get('x-ratelimit-remaining'))).toBe(1000 - costOf(deferred));
      expect(Number(second.headers.get('x-ratelimit-remaining'))).toBe(1000 - 2 * costOf(deferred));
    } finally {
      await s.close();
    }
  });
});
