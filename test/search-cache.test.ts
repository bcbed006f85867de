// Search answers come from a per-process cache of ranked candidates while the searched revisions
// are unchanged (domain/search.ts, `rankedCandidates`): a repeated search issues no ranking
// statement; an edit, a merge or a site's space moving on changes the key, so the next search
// ranks again and finds the new content; a cached ranking never shows a caller what they may not
// see; the cache is bounded by bytes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers.ts';
import { expectValidResponse } from './openapi.ts';
import { newId } from '../src/lib/ids.ts';
import { searchCache } from '../src/domain/search.ts';

const CACHE_BYTES = 256 * 1024;
let t: TestApp;
let open: string; // public space
let closed: string; // private space

beforeAll(async () => {
  t = await startTestApp({ config: { searchCacheBytes: CACHE_BYTES } });
  open = await space('Walrus guide', 'public');
  closed = await space('Walrus secrets', 'private');
  await insert(open, 'Walrus habits', 'The walrus rests on ice.');
  await insert(closed, 'Walrus plans', 'A walrus plan nobody outside may read.');
}, 120_000);
afterAll(async () => {
  await t?.close();
});

async function space(title: string, visibility: string) {
  const r = await t.rest('POST', `/v1/orgs/${t.org.id}/spaces`, { title, visibility });
  expect(r.status).toBe(201);
  return r.body.id as string;
}
async function insert(spaceId: string, title: string, markdown: string) {
  const r = await t.rest('POST', `/v1/spaces/${spaceId}/content`, { changes: [{ operation: 'insert_page', title, document: { markdown } }] });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
}

/** The statements a call issues, and how many of them rank (only the ranking computes `ts_rank`). */
async function measured<T>(fn: () => Promise<T>) {
  const { result, statements } = await t.countQueries(fn);
  return { result, statements: statements.length, ranking: statements.filter((s) => /ts_rank/.test(s)).length };
}

const spaceTitles = (body: any) => body.items.map((i: any) => i.title).sort();
const pageTitles = (body: any) => body.items.map((i: any) => i.title).sort();

describe('space search', () => {
  it('a repeat over the unchanged revision ranks nothing and answers the same', async () => {
    const first = await measured(() => t.rest('GET', `/v1/spaces/${open}/search?query=walrus`));
    expect(first.result.status).toBe(200);
    expect(first.ranking).toBe(1);
    const again = await measured(() => t.rest('GET', `/v1/spaces/${open}/search?query=walrus`));
    expect(again.ranking).toBe(0);
    expect(again.statements).toBeLessThan(first.statements);
    expect(again.result.body).toEqual(first.result.body);
    expectValidResponse('get', '/spaces/{spaceId}/search', 200, again.result.body);
    // Another query is another entry.
    expect((await measured(() => t.rest('GET', `/v1/spaces/${open}/search?query=ice`))).ranking).toBe(1);
  });

  it('an edit moves the space to a new revision: the next search ranks again and finds the new page', async () => {
    await t.rest('GET', `/v1/spaces/${open}/search?query=walrus`);
    await insert(open, 'Walrus diet', 'A walrus eats clams.');
    const after = await measured(() => t.rest('GET', `/v1/spaces/${open}/search?query=walrus`));
    expect(after.ranking).toBe(1);
    expect(pageTitles(after.result.body)).toEqual(['Walrus diet', 'Walrus habits']);
    expect((await measured(() => t.rest('GET', `/v1/spaces/${open}/search?query=walrus`))).ranking).toBe(0);
  });

  it('pages through a cached ranking by cursor, every result once', async () => {
    const s = await space('Many walruses', 'public');
    const changes = Array.from({ length: 7 }, (_, i) => ({ operation: 'insert_page', title: `Tusk ${i}`, document: { markdown: `tusk ${'tusk '.repeat(i)}` } }));
    expect((await t.rest('POST', `/v1/spaces/${s}/content`, { changes })).status).toBe(200);
    const seen: string[] = [];
    let page: string | undefined;
    let ranking = 0;
    do {
      const r = await measured(() => t.rest('GET', `/v1/spaces/${s}/search?query=tusk&limit=3${page ? `&page=${page}` : ''}`));
      ranking += r.ranking;
      expect(r.result.body.count).toBe(7);
      seen.push(...r.result.body.items.map((i: any) => i.title));
      page = r.result.body.next?.page;
    } while (page);
    expect(ranking).toBe(1);
    expect(seen).toHaveLength(7);
    expect(new Set(seen).size).toBe(7);
    expect(seen[0]).toBe('Tusk 6'); // the most mentions ranks first
  });
});

describe('organization search', () => {
  it('a repeat ranks nothing; a merge changes the key and the next search finds the merged page', async () => {
    const first = await measured(() => t.rest('GET', `/v1/orgs/${t.org.id}/search?query=walrus`));
    expect(first.result.status).toBe(200);
    expect(spaceTitles(first.result.body)).toEqual(['Walrus guide', 'Walrus secrets']);
    const again = await measured(() => t.rest('GET', `/v1/orgs/${t.org.id}/search?query=walrus`));
    expect(again.ranking).toBe(0);
    expect(again.result.body).toEqual(first.result.body);
    expectValidResponse('get', '/orgs/{organizationId}/search', 200, again.result.body);

    const cr = (await t.rest('POST', `/v1/spaces/${closed}/change-requests`, { subject: 'More' })).body.id;
    await t.rest('POST', `/v1/spaces/${closed}/change-requests/${cr}/content`, { changes: [{ operation: 'insert_page', title: 'Walrus merged', document: { markdown: 'A merged walrus.' } }] });
    // The change request's draft is not the space's content: still cached.
    expect((await measured(() => t.rest('GET', `/v1/orgs/${t.org.id}/search?query=walrus`))).ranking).toBe(0);
    expect((await t.rest('POST', `/v1/spaces/${closed}/change-requests/${cr}/merge`)).status).toBe(200);
    const merged = await measured(() => t.rest('GET', `/v1/orgs/${t.org.id}/search?query=walrus`));
    expect(merged.ranking).toBe(1);
    const secrets = merged.result.body.items.find((i: any) => i.title === 'Walrus secrets');
    expect(secrets.pages.map((p: any) => p.title).sort()).toEqual(['Walrus merged', 'Walrus plans']);
  });

  it('a space renamed (no new revision) shows its new title from a cached ranking', async () => {
    await t.rest('GET', `/v1/orgs/${t.org.id}/search?query=walrus`);
    expect((await t.rest('PATCH', `/v1/spaces/${open}`, { title: 'Walrus handbook' })).status).toBe(200);
    const r = await measured(() => t.rest('GET', `/v1/orgs/${t.org.id}/search?query=walrus`));
    expect(r.ranking).toBe(0);
    expect(spaceTitles(r.result.body)).toEqual(['Walrus handbook', 'Walrus secrets']);
  });

  it('never shows a guest a space a member cached: the key is the spaces the caller may read', async () => {
    const guest = await t.createUser(null);
    await t.rest('GET', `/v1/orgs/${t.org.id}/search?query=walrus`); // the admin: both spaces, cached
    const g = await measured(() => t.rest('GET', `/v1/orgs/${t.org.id}/search?query=walrus`, undefined, guest.token));
    expect(g.result.status).toBe(200);
    expect(spaceTitles(g.result.body)).toEqual(['Walrus handbook']);
    expect(JSON.stringify(g.result.body)).not.toContain('secret');
    expect(g.result.body.count).toBe(1);
    // And the other way round: the guest's entry does not narrow the admin's answer.
    const guestFirst = 'clams';
    await t.rest('GET', `/v1/orgs/${t.org.id}/search?query=${guestFirst}`, undefined, guest.token);
    await insert(closed, 'Walrus clams', 'Clams for the walrus.');
    const admin = await t.rest('GET', `/v1/orgs/${t.org.id}/search?query=${guestFirst}`);
    expect(spaceTitles(admin.body)).toEqual(['Walrus handbook', 'Walrus secrets']);
    const guestAgain = await t.rest('GET', `/v1/orgs/${t.org.id}/search?query=${guestFirst}`, undefined, guest.token);
    expect(spaceTitles(guestAgain.body)).toEqual(['Walrus handbook']);
  });

  it('a deleted space drops out at once', async () => {
    const gone = await space('Walrus archive', 'public');
    await insert(gone, 'Old walrus', 'An old walrus.');
    expect(spaceTitles((await t.rest('GET', `/v1/orgs/${t.org.id}/search?query=walrus`)).body)).toContain('Walrus archive');
    expect([204, 205]).toContain((await t.rest('DELETE', `/v1/spaces/${gone}`)).status);
    const r = await t.rest('GET', `/v1/orgs/${t.org.id}/search?query=walrus`);
    expect(spaceTitles(r.body)).not.toContain('Walrus archive');
  });
});

describe('site search', () => {
  const SEARCH = `query($siteId: ID!, $q: String!, $visitor: JSON) { searchSite(siteId: $siteId, query: $q, visitor: $visitor) { totalCount totalCountIsCapped nodes { title } } }`;
  let siteId: string;
  let docs: string;

  beforeAll(async () => {
    docs = await space('Seal docs', 'private');
    expect((await t.rest('POST', `/v1/spaces/${docs}/content`, {
      changes: [
        { operation: 'insert_page', title: 'Seal basics', document: { markdown: 'The seal swims.' } },
        { operation: 'insert_page', title: 'Seal pro', condition: 'visitor.claims.unsigned.plan == "pro"', document: { markdown: 'The pro seal swims faster.' } },
      ],
    })).status).toBe(200);
    siteId = newId('Site');
    await t.app.prisma.$transaction(async (tx) => {
      await tx.site.create({ data: { id: siteId, organizationId: t.org.id, title: 'Seals', published: true, visibility: 'public' } });
      const ss = newId('SiteSpace');
      await tx.siteSpace.create({ data: { id: ss, siteId, spaceId: docs, path: 'docs', position: 0 } });
      await tx.site.update({ where: { id: siteId }, data: { defaultSiteSpaceId: ss } });
    });
  });

  const titles = (r: any) => r.data.searchSite.nodes.map((n: any) => n.title).sort();

  it('readers share one ranking and each is filtered on its own: a pro visitor\'s cached ranking never shows an anonymous reader the pro page', async () => {
    const outsider = await t.createUser();
    const pro = await measured(() => t.gql(SEARCH, { siteId, q: 'seal', visitor: { claims: { unsigned: { plan: 'pro' } } } }, outsider.token));
    expect(pro.result.errors).toBeUndefined();
    expect(titles(pro.result)).toEqual(['Seal basics', 'Seal pro']);
    expect(pro.ranking).toBe(1);
    const anonymous = await measured(() => t.gql(SEARCH, { siteId, q: 'seal' }, null));
    expect(anonymous.result.errors).toBeUndefined();
    expect(anonymous.ranking).toBe(0);
    expect(titles(anonymous.result)).toEqual(['Seal basics']);
    expect(anonymous.result.data.searchSite).toMatchObject({ totalCount: 1, totalCountIsCapped: false });
  });

  it('an edit of a space the site shows: the next search ranks again and finds it (REST too)', async () => {
    await t.gql(SEARCH, { siteId, q: 'seal' }, null);
    await insert(docs, 'Seal pups', 'A seal pup.');
    const r = await measured(() => t.rest('POST', `/v1/orgs/${t.org.id}/sites/${siteId}/search`, { query: 'seal' }, null));
    expect(r.result.status).toBe(200);
    expectValidResponse('post', '/orgs/{organizationId}/sites/{siteId}/search', 200, r.result.body);
    expect(r.ranking).toBe(1);
    expect(r.result.body.items[0].pages.map((p: any) => p.title).sort()).toEqual(['Seal basics', 'Seal pups']);
    expect((await measured(() => t.rest('POST', `/v1/orgs/${t.org.id}/sites/${siteId}/search`, { query: 'seal' }, null))).ranking).toBe(0);
  });
});

describe('bounded memory', () => {
  it('the cache holds at most SEARCH_CACHE_MB: old entries are evicted and rank again', async () => {
    const cache = searchCache(t.app.config)!;
    expect(cache.maxSize).toBe(CACHE_BYTES);
    await t.rest('GET', `/v1/spaces/${open}/search?query=walrus`);
    for (let i = 0; i < 200; i++) {
      const r = await t.rest('GET', `/v1/spaces/${open}/search?query=${encodeURIComponent(`walrus or ${'q'.repeat(450)}${i}`)}`);
      expect(r.status).toBe(200);
      expect(cache.calculatedSize).toBeLessThanOrEqual(CACHE_BYTES);
    }
    expect((await measured(() => t.rest('GET', `/v1/spaces/${open}/search?query=walrus`))).ranking).toBe(1);
  });
});
