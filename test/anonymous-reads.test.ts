// Anonymous reads at the edge: without a token, GraphQL operations whose
// every root field is a published read run as the anonymous reader, and the REST published reads
// answer; everything else is the usual 401. Anonymous GETs of public sites carry shared-cache
// headers; every other answer stays private. Readers of every kind alternating on one site never
// receive another's stored answer. Anonymous requests are rate-limited per client IP, by cost.
import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GitBookAPI } from '@gitbook/api';
import { complexityFromQuery } from '@pothos/plugin-complexity';
import { loadConfig } from '../src/config.ts';
import { COMPLEXITY_PER_POINT } from '../src/http/rate-limit.ts';
import { schema } from '../src/graphql/schema.ts';
import { routes as structureRoutes } from '../src/rest/site-structure.ts';
import { startTestApp, type TestApp } from './helpers.ts';
import { expectValidResponse } from './openapi.ts';

let t: TestApp;
let siteId: string;
let spaceIds: string[];
let revisionIds: string[];
let shareKey: string;
const other: Record<'unpublished' | 'shareLink' | 'visitorAuth' | 'unlisted', string> = {} as never;
let shareLinkSiteKey: string;

const SITE_QUERY = `query Site($siteId: ID!, $shareKey: String, $visitor: JSON) {
  publishedSite(siteId: $siteId, shareKey: $shareKey, visitor: $visitor) {
    id title
    structure { items { __typename ... on SiteSection { title condition siteSpaces { id space { id revision { id } } } } } }
  }
}`;
const UNAUTHENTICATED_BODY = { errors: [{ message: 'A valid API token is required (Authorization: Bearer <token>)', extensions: { code: 'UNAUTHENTICATED' } }] };

type Sent = { status: number; headers: Headers; text: string; json: any };

async function send(path: string, opts: { method?: string; token?: string | null; body?: unknown; headers?: Record<string, string> } = {}): Promise<Sent> {
  const res = await fetch(`${t.baseUrl}${path}`, {
    method: opts.method ?? (opts.body === undefined ? 'GET' : 'POST'),
    headers: { ...(opts.body === undefined ? {} : { 'content-type': 'application/json' }), ...(opts.token ? { authorization: `Bearer ${opts.token}` } : {}), ...opts.headers },
    body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
  });
  const text = await res.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
}

/** A GraphQL request: POST with a body, or GET with the query string. */
function gql(query: string, variables: Record<string, unknown>, opts: { token?: string | null; get?: boolean; operationName?: string; headers?: Record<string, string> } = {}) {
  if (opts.get) {
    const qs = new URLSearchParams({ query, variables: JSON.stringify(variables), ...(opts.operationName ? { operationName: opts.operationName } : {}) });
    return send(`/graphql?${qs}`, { token: opts.token, headers: opts.headers });
  }
  return send('/graphql', { token: opts.token, body: { query, variables, ...(opts.operationName ? { operationName: opts.operationName } : {}) }, headers: opts.headers });
}

async function mutate(document: string, input: Record<string, unknown>) {
  const r = await t.gql(document, { input });
  expect(r.errors).toBeUndefined();
  return r.data;
}

const sectionTitles = (r: Sent) => r.json.data.publishedSite.structure.items.filter((i: any) => i.__typename === 'SiteSection').map((i: any) => i.title);
const sectionConditions = (r: Sent) => r.json.data.publishedSite.structure.items.filter((i: any) => i.__typename === 'SiteSection').map((i: any) => i.condition);

async function newSite(title: string, visibility: string, sections: Array<{ title: string; condition?: string }>, publish = true) {
  const site = (await mutate(`mutation($input: CreateSiteInput!) { createSite(input: $input) { site { id } } }`, { organizationId: t.org.id, title, visibility })).createSite.site.id as string;
  const spaces: string[] = [];
  for (const s of sections) {
    const space = (await mutate(`mutation($input: CreateSpaceInput!) { createSpace(input: $input) { space { id } } }`, { organizationId: t.org.id, title: `${title} ${s.title}` })).createSpace.space.id as string;
    spaces.push(space);
    const section = (await mutate(`mutation($input: AddSectionToSiteInput!) { addSectionToSite(input: $input) { section { id } } }`, { siteId: site, spaceId: space, title: s.title })).addSectionToSite.section.id;
    if (s.condition) await mutate(`mutation($input: UpdateSiteSectionInput!) { updateSiteSection(input: $input) { section { id } } }`, { siteId: site, sectionId: section, condition: s.condition });
  }
  if (publish) await mutate(`mutation($input: SiteKeyInput!) { publishSite(input: $input) { site { id } } }`, { siteId: site });
  return { site, spaces };
}

async function newShareKey(site: string) {
  return (await mutate(`mutation($input: CreateSiteShareLinkInput!) { createSiteShareLink(input: $input) { shareLink { key } } }`, { siteId: site, name: 'link' })).createSiteShareLink.shareLink.key as string;
}

beforeAll(async () => {
  t = await startTestApp();
  // Docs (everyone), Enterprise (a signed claim: members and their previews), Beta (an unsigned claim anyone may assert).
  const main = await newSite('Main', 'public', [{ title: 'Docs' }, { title: 'Enterprise', condition: 'visitor.claims.isEnterprise' }, { title: 'Beta', condition: 'visitor.claims.unsigned.beta' }]);
  siteId = main.site;
  spaceIds = main.spaces;
  const revs = await t.app.prisma.space.findMany({ where: { id: { in: spaceIds } }, select: { id: true, revisionId: true } });
  revisionIds = spaceIds.map((id) => revs.find((r) => r.id === id)!.revisionId!).filter(Boolean);
  shareKey = await newShareKey(siteId);
  other.unpublished = (await newSite('Draft', 'public', [{ title: 'Docs' }], false)).site;
  other.shareLink = (await newSite('Shared', 'share_link', [{ title: 'Docs' }])).site;
  shareLinkSiteKey = await newShareKey(other.shareLink);
  other.visitorAuth = (await newSite('Visitors', 'visitor_auth', [{ title: 'Docs' }])).site;
  other.unlisted = (await newSite('Unlisted', 'unlisted', [{ title: 'Docs' }])).site;
}, 120_000);
afterAll(async () => {
  await t?.close();
});

describe('anonymous GraphQL', () => {
  it('reads a published public site without a token, as the anonymous reader (no conditioned section)', async () => {
    for (const get of [false, true]) {
      const r = await gql(SITE_QUERY, { siteId }, { get });
      expect(r.status, r.text).toBe(200);
      expect(r.json.errors).toBeUndefined();
      expect(r.json.data.publishedSite.title).toBe('Main');
      expect(sectionTitles(r)).toEqual(['Docs']);
      expect(r.text).not.toContain('isEnterprise');
    }
    // An unsigned claim is the caller's to assert; a signed one is refused without a visitor token.
    const beta = await gql(SITE_QUERY, { siteId, visitor: { claims: { unsigned: { beta: true } } } });
    expect(sectionTitles(beta)).toEqual(['Docs', 'Beta']);
    const asserted = await gql(SITE_QUERY, { siteId, visitor: { claims: { isEnterprise: true } } });
    expect(asserted.json.errors[0].extensions.code).toBe('BAD_REQUEST');
    expect(asserted.json.data).toEqual({ publishedSite: null });
  });

  it('answers NOT_FOUND for an unpublished, share-link (without its key) or visitor-auth site, and opens the share-link site with its key', async () => {
    for (const id of [other.unpublished, other.shareLink, other.visitorAuth, 'site_0000000000000000000000']) {
      const r = await gql(SITE_QUERY, { siteId: id });
      expect(r.json.errors?.[0]?.extensions?.code, id).toBe('NOT_FOUND');
      expect(r.json.data?.publishedSite ?? null).toBeNull();
    }
    const wrongKey = await gql(SITE_QUERY, { siteId: other.shareLink, shareKey });
    expect(wrongKey.json.errors[0].extensions.code).toBe('NOT_FOUND');
    const withKey = await gql(SITE_QUERY, { siteId: other.shareLink, shareKey: shareLinkSiteKey });
    expect(withKey.json.errors).toBeUndefined();
    expect(sectionTitles(withKey)).toEqual(['Docs']);
    const unlisted = await gql(SITE_QUERY, { siteId: other.unlisted });
    expect(sectionTitles(unlisted)).toEqual(['Docs']);
  });

  it('is 401 with the usual body for anything but published reads: mutations, subscriptions, other fields, mixed documents', async () => {
    const refused: Array<[string, Record<string, unknown>, string?]> = [
      [`mutation { createOrganization(input: { title: "Mine" }) { id } }`, {}],
      [`query { viewer { organizations(first: 1) { nodes { id } } } }`, {}],
      [`query($org: ID!) { organization(id: $org) { id title } }`, { org: t.org.id }],
      [`query($siteId: ID!, $org: ID!) { publishedSite(siteId: $siteId) { id } organization(id: $org) { id } }`, { siteId, org: t.org.id }],
      [`query($siteId: ID!) { publishedSite(siteId: $siteId) { id } ...More } fragment More on Query { site(id: $siteId) { id } }`, { siteId }],
      [`query($siteId: ID!) { publishedSite(siteId: $siteId) { id } ... on Query { site(id: $siteId) { id } } }`, { siteId }],
      [`query A($siteId: ID!) { publishedSite(siteId: $siteId) { siteId } } query B($siteId: ID!) { site(id: $siteId) { id } }`, { siteId }, 'B'],
      [`subscription($spaceId: ID!) { publishedSite: changeRequestUpdated(spaceId: $spaceId) { __typename } }`, { spaceId: 'space_x' }],
    ];
    for (const [query, variables, operationName] of refused) {
      for (const get of query.startsWith('mutation') || query.startsWith('subscription') ? [false] : [false, true]) {
        const r = await gql(query, variables, { operationName, get });
        expect([r.status, r.json], query).toEqual([401, UNAUTHENTICATED_BODY]);
      }
    }
    // A published read beyond the anonymous body cap (64 KiB) is refused like any body without a token.
    const padded = await gql(`${SITE_QUERY}\n# ${'x'.repeat(70 * 1024)}`, { siteId });
    expect([padded.status, padded.json]).toEqual([401, UNAUTHENTICATED_BODY]);
    // Nothing was created by the refused mutation.
    expect(await t.app.prisma.organization.count({ where: { title: 'Mine' } })).toBe(0);
  });

  it('runs fragments and aliases on the root, and the operation named by operationName', async () => {
    const viaFragment = await gql(`query($siteId: ID!) { ...Root ... on Query { again: publishedSite(siteId: $siteId) { siteId } } } fragment Root on Query { site: publishedSite(siteId: $siteId) { title } }`, { siteId });
    expect(viaFragment.json).toEqual({ data: { site: { title: 'Main' }, again: { siteId } } });
    const named = await gql(`query A($siteId: ID!) { publishedSite(siteId: $siteId) { siteId } } query B($siteId: ID!) { site(id: $siteId) { id } }`, { siteId }, { operationName: 'A' });
    expect(named.json).toEqual({ data: { publishedSite: { siteId } } });
  });

  it('runs a trusted document (the REST published read) by id over GET without a token', async () => {
    const route = structureRoutes.find((r) => r.method === 'GET' && r.path.endsWith('/structure'))!;
    const documentId = crypto.createHash('sha256').update(route.document, 'utf8').digest('hex');
    const qs = new URLSearchParams({ documentId, variables: JSON.stringify({ id: siteId, org: t.org.id }) });
    const r = await send(`/graphql?${qs}`);
    expect(r.status, r.text).toBe(200);
    expect(r.json.data.publishedSite.structure.items.map((i: any) => i.title)).toEqual(['Docs']);
  });
});

describe('anonymous REST', () => {
  const SITE = () => `/v1/orgs/${t.org.id}/sites/${siteId}`;

  it('answers the published structure reads without a token, valid per the contract', async () => {
    for (const [path, template] of [
      ['structure', '/orgs/{organizationId}/sites/{siteId}/structure'],
      ['sections', '/orgs/{organizationId}/sites/{siteId}/sections'],
      ['site-spaces', '/orgs/{organizationId}/sites/{siteId}/site-spaces'],
    ]) {
      const r = await send(`${SITE()}/${path}`);
      expect(r.status, `${path}: ${r.text}`).toBe(200);
      expectValidResponse('GET', template, 200, r.json);
    }
    // The structure as the anonymous reader sees it. (What the paged `sections` and
    // `site-spaces` lists hold for each reader is checked in test/audiences.test.ts.)
    const structure = await send(`${SITE()}/structure`);
    expect(structure.json.structure.map((s: any) => s.title)).toEqual(['Docs']);
    // Not published, or a share-link site without its key: NOT_FOUND without a token.
    expect((await send(`/v1/orgs/${t.org.id}/sites/${other.unpublished}/structure`)).status).toBe(404);
    expect((await send(`/v1/orgs/${t.org.id}/sites/${other.shareLink}/structure`)).status).toBe(404);
    expect((await send(`/v1/orgs/${t.org.id}/sites/${other.visitorAuth}/structure`)).status).toBe(404);
    const shared = await send(`/v1/orgs/${t.org.id}/sites/${other.shareLink}/structure?shareKey=${encodeURIComponent(shareLinkSiteKey)}`);
    expect(shared.status).toBe(200);
  });

  // The REST document's Site fields reload the row (a fallback load): allowed for the anonymous
  // reader because the request read the site (`Access.canSeeSite`), filtered for it (`viewFor`).
  it('answers GET …/published without a token, through the official client, with shared-cache headers', async () => {
    const published = await send(`${SITE()}/published`);
    expect(published.status, published.text).toBe(200);
    expectValidResponse('GET', '/orgs/{organizationId}/sites/{siteId}/published', 200, published.json);
    expect(published.json.structure.structure.map((s: any) => s.title)).toEqual(['Docs']);
    expect(published.headers.get('cache-control')).toBe('public, max-age=0, s-maxage=60, stale-while-revalidate=300');
    const viaClient = await new GitBookAPI({ endpoint: t.baseUrl }).orgs.getPublishedContentSite(t.org.id, siteId);
    expect(viaClient.data.site.id).toBe(siteId);
  });

  it('keeps every other route at 401, and a published read with a token that does not work', async () => {
    expect((await send(`${SITE()}/structure`, { token: 'dg_not_a_token' })).status).toBe(401);
    expect((await send(`${SITE()}/structure`, { headers: { authorization: 'Basic eDp5' } })).status).toBe(401);
    expect((await gql(SITE_QUERY, { siteId }, { token: 'dg_not_a_token' })).status).toBe(401);
    for (const [method, path] of [
      ['GET', SITE()],
      ['GET', `/v1/orgs/${t.org.id}/sites`],
      ['GET', `${SITE()}/section-groups`],
      ['GET', `${SITE()}/share-links`],
      ['GET', `/v1/orgs/${t.org.id}`],
      ['POST', `${SITE()}/publish`],
      ['POST', `${SITE()}/sections`],
    ]) {
      const r = await send(path, { method });
      expect(r.status, `${method} ${path}`).toBe(401);
    }
  });
});

describe('cache headers', () => {
  const PUBLIC = 'public, max-age=0, s-maxage=60, stale-while-revalidate=300';

  it('marks an anonymous GET of a public site for shared caches: s-maxage, strong ETag, Surrogate-Key, Vary on Authorization and X-Visitor-Token', async () => {
    const r = await gql(SITE_QUERY, { siteId }, { get: true });
    expect(r.status).toBe(200);
    expect(r.headers.get('cache-control')).toBe(PUBLIC);
    const etag = r.headers.get('etag');
    expect(etag).toMatch(/^"/);
    const keys = r.headers.get('surrogate-key')!.split(' ');
    // The site, the site at its version, then the space and revision ids of the answer (Docs only: not the conditioned sections').
    expect(keys[0]).toBe(siteId);
    expect(keys[1]).toMatch(new RegExp(`^${siteId}@v\\d+$`));
    expect(keys).toContain(spaceIds[0]);
    expect(keys).toContain(revisionIds[0]);
    expect(keys).not.toContain(spaceIds[1]);
    expect(keys).not.toContain(spaceIds[2]);
    // A request with a token is another entry of a shared cache (a member's answer differs).
    expect(r.headers.get('vary')?.toLowerCase()).toContain('authorization');
    expect(r.headers.get('vary')?.toLowerCase()).toContain('x-visitor-token');
    const again = await gql(SITE_QUERY, { siteId }, { get: true, headers: { 'if-none-match': etag! } });
    expect(again.status).toBe(304);
    // Unlisted sites too.
    expect((await gql(SITE_QUERY, { siteId: other.unlisted }, { get: true })).headers.get('cache-control')).toBe(PUBLIC);
  });

  it('keeps every other answer private: members, outsiders, claims, POST, errors (share keys in the URL are public)', async () => {
    const outsider = await t.createUser();
    const cases: Array<[string, Promise<Sent>]> = [
      ['member', gql(SITE_QUERY, { siteId }, { get: true, token: t.token })],
      ['outsider', gql(SITE_QUERY, { siteId }, { get: true, token: outsider.token })],
      ['unsigned claims', gql(SITE_QUERY, { siteId, visitor: { claims: { unsigned: { beta: true } } } }, { get: true })],
    ];
    for (const [name, p] of cases) {
      const r = await p;
      expect(r.status, name).toBe(200);
      expect(r.headers.get('cache-control'), name).toBe('private, no-cache');
      expect(r.headers.get('surrogate-key'), name).toBeNull();
      expect(r.headers.get('vary')?.toLowerCase(), name).toContain('authorization');
    }
    for (const [name, vars] of [['share key', { siteId, shareKey }], ['share-link site', { siteId: other.shareLink, shareKey: shareLinkSiteKey }]] as const) {
      expect((await gql(SITE_QUERY, vars, { get: true })).headers.get('cache-control'), name).toBe(PUBLIC);
    }
    const post = await gql(SITE_QUERY, { siteId });
    expect(post.headers.get('cache-control')).toBeNull();
    expect(post.headers.get('surrogate-key')).toBeNull();
    const missing = await gql(SITE_QUERY, { siteId: other.unpublished }, { get: true });
    expect(missing.headers.get('cache-control')).toBeNull();
    expect(missing.headers.get('surrogate-key')).toBeNull();
  });

  it('gives the REST published reads of a public site the same headers without a token, private with one', async () => {
    const path = `/v1/orgs/${t.org.id}/sites/${siteId}/structure`;
    const anonymous = await send(path);
    expect(anonymous.headers.get('cache-control')).toBe(PUBLIC);
    const keys = anonymous.headers.get('surrogate-key')!.split(' ');
    expect(keys[0]).toBe(siteId);
    expect(keys).toContain(spaceIds[0]);
    expect(anonymous.headers.get('vary')?.toLowerCase()).toContain('authorization');
    const etag = anonymous.headers.get('etag')!;
    expect((await send(path, { headers: { 'if-none-match': etag } })).status).toBe(304);
    const member = await send(path, { token: t.token });
    expect(member.headers.get('cache-control')).toBe('private, no-cache');
    expect(member.headers.get('surrogate-key')).toBeNull();
    const keyed = await send(`${path}?shareKey=${encodeURIComponent(shareKey)}`);
    expect(keyed.headers.get('cache-control')).toBe(PUBLIC);
    const keyedMember = await send(`${path}?shareKey=${encodeURIComponent(shareKey)}`, { token: t.token });
    expect(keyedMember.headers.get('cache-control')).toBe('private, no-cache');
  });
});

describe('shared-cache settings', () => {
  it('are validated, with defaults 60 and 300 seconds', () => {
    expect(loadConfig({}).sharedCache).toEqual({ sMaxAgeSeconds: 60, staleWhileRevalidateSeconds: 300 });
    expect(loadConfig({ PUBLISHED_S_MAXAGE_SECONDS: '0', PUBLISHED_STALE_WHILE_REVALIDATE_SECONDS: '30' }).sharedCache).toEqual({ sMaxAgeSeconds: 0, staleWhileRevalidateSeconds: 30 });
    expect(() => loadConfig({ PUBLISHED_S_MAXAGE_SECONDS: '-1' })).toThrow(/PUBLISHED_S_MAXAGE_SECONDS/);
    expect(() => loadConfig({ PUBLISHED_STALE_WHILE_REVALIDATE_SECONDS: 'soon' })).toThrow(/PUBLISHED_STALE_WHILE_REVALIDATE_SECONDS/);
  });

  it('set the header a server started with other values sends', async () => {
    const other = await startTestApp({ config: { sharedCache: { sMaxAgeSeconds: 5, staleWhileRevalidateSeconds: 7 } } });
    try {
      const space = (await other.gql(`mutation($input: CreateSpaceInput!) { createSpace(input: $input) { space { id } } }`, { input: { organizationId: other.org.id, title: 'Short' } })).data.createSpace.space.id;
      const site = (await other.gql(`mutation($input: CreateSiteInput!) { createSite(input: $input) { site { id } } }`, { input: { organizationId: other.org.id, title: 'Short', visibility: 'public', spaceIds: [space] } })).data.createSite.site.id;
      const published = await other.gql(`mutation($input: SiteKeyInput!) { publishSite(input: $input) { site { id } } }`, { input: { siteId: site } });
      expect(published.errors).toBeUndefined();
      const qs = new URLSearchParams({ query: SITE_QUERY, variables: JSON.stringify({ siteId: site }) });
      const r = await fetch(`${other.baseUrl}/graphql?${qs}`);
      expect(r.status).toBe(200);
      expect(r.headers.get('cache-control')).toBe('public, max-age=0, s-maxage=5, stale-while-revalidate=7');
      expect(r.headers.get('surrogate-key')?.split(' ')[0]).toBe(site);
    } finally {
      await other.close();
    }
  });
});

describe('the published cache per audience', () => {
  it('never hands one reader another reader’s stored answer, readers of every kind alternating on one site', async () => {
    const outsider = await t.createUser();
    const revoked = await t.createUser();
    const tokenId = (await t.gql(`{ viewer { apiTokens { id } } }`, {}, revoked.token)).data.viewer.apiTokens[0].id;
    const cache = t.app.server.publishedCache;
    cache.clear();
    const before = { ...cache.stats };
    type Reader = { name: string; read: (get: boolean) => Promise<Sent>; titles: string[] | null; conditions?: Array<string | null> };
    const readers: Reader[] = [
      { name: 'member', read: (get) => gql(SITE_QUERY, { siteId }, { get, token: t.token }), titles: ['Docs', 'Enterprise', 'Beta'], conditions: [null, 'visitor.claims.isEnterprise', 'visitor.claims.unsigned.beta'] },
      { name: 'outsider', read: (get) => gql(SITE_QUERY, { siteId }, { get, token: outsider.token }), titles: ['Docs'] },
      { name: 'anonymous', read: (get) => gql(SITE_QUERY, { siteId }, { get }), titles: ['Docs'] },
      { name: 'share-link holder', read: (get) => gql(SITE_QUERY, { siteId, shareKey }, { get }), titles: ['Docs'] },
      { name: 'member preview', read: (get) => gql(SITE_QUERY, { siteId, visitor: { claims: { isEnterprise: true } } }, { get, token: t.token }), titles: ['Docs', 'Enterprise'], conditions: [null, 'visitor.claims.isEnterprise'] },
      { name: 'anonymous with an unsigned claim', read: (get) => gql(SITE_QUERY, { siteId, visitor: { claims: { unsigned: { beta: true } } } }, { get }), titles: ['Docs', 'Beta'] },
      { name: 'revoked token', read: (get) => gql(SITE_QUERY, { siteId }, { get, token: revoked.token }), titles: null },
    ];
    for (let round = 0; round < 3; round++) {
      if (round === 1) {
        // Revoked between rounds: it was served (and stored) in round 0, refused from now on.
        const r = await t.gql(`mutation($input: RevokeApiTokenInput!) { revokeApiToken(input: $input) { deleted } }`, { input: { id: tokenId } }, revoked.token);
        expect(r.data.revokeApiToken.deleted).toBe(true);
      }
      // A different order each round, GET and POST alternating.
      const order = round === 1 ? [...readers].reverse() : round === 2 ? [...readers.slice(3), ...readers.slice(0, 3)] : readers;
      for (const [i, reader] of order.entries()) {
        const r = await reader.read((i + round) % 2 === 0);
        const expected = reader.name === 'revoked token' && round === 0 ? ['Docs'] : reader.titles;
        if (expected === null) {
          expect([r.status, r.json], `${reader.name}, round ${round}`).toEqual([401, UNAUTHENTICATED_BODY]);
          continue;
        }
        expect(r.status, `${reader.name}, round ${round}: ${r.text}`).toBe(200);
        expect(sectionTitles(r), `${reader.name}, round ${round}`).toEqual(expected);
        if (reader.conditions) expect(sectionConditions(r)).toEqual(reader.conditions);
        else expect(r.text, reader.name).not.toContain('isEnterprise');
      }
    }
    // The cache was in play: later rounds were served from it.
    expect(cache.stats.hits - before.hits).toBeGreaterThanOrEqual(10);
  });
});

describe('rate limits', () => {
  let s: TestApp;
  beforeAll(async () => {
    s = await startTestApp({ config: { rateLimit: { ...loadConfig({}).rateLimit, points: 1000, anonymousPoints: 6, windowSeconds: 60 } } });
  });
  afterAll(async () => {
    await s?.close();
  });

  it('charges an anonymous published read its cost to the client IP, 429 over the budget, while a token holder still reads', async () => {
    const space = (await s.gql(`mutation($input: CreateSpaceInput!) { createSpace(input: $input) { space { id } } }`, { input: { organizationId: s.org.id, title: 'Limited' } })).data.createSpace.space.id;
    const site = (await s.gql(`mutation($input: CreateSiteInput!) { createSite(input: $input) { site { id } } }`, { input: { organizationId: s.org.id, title: 'Limited', visibility: 'public', spaceIds: [space] } })).data.createSite.site.id;
    expect((await s.gql(`mutation($input: SiteKeyInput!) { publishSite(input: $input) { site { id } } }`, { input: { siteId: site } })).errors).toBeUndefined();
    const cost = Math.max(1, Math.ceil(complexityFromQuery(SITE_QUERY, { schema, variables: { siteId: site } }).complexity / COMPLEXITY_PER_POINT));
    const read = (token: string | null) =>
      fetch(`${s.baseUrl}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) }, body: JSON.stringify({ query: SITE_QUERY, variables: { siteId: site } }) });
    const first = await read(null);
    expect(first.status).toBe(200);
    expect(((await first.clone().json()) as any).data.publishedSite.title).toBe('Limited');
    expect(first.headers.get('x-ratelimit-limit')).toBe('6');
    expect(Number(first.headers.get('x-ratelimit-remaining'))).toBe(6 - cost);
    let last = first;
    for (let i = 0; i < 8 && last.status !== 429; i++) last = await read(null);
    expect(last.status).toBe(429);
    expect(((await last.json()) as any).errors[0].extensions.code).toBe('RATE_LIMITED');
    expect(Number(last.headers.get('retry-after'))).toBeGreaterThan(0);
    // REST published reads share the address's budget.
    expect((await fetch(`${s.baseUrl}/v1/orgs/${s.org.id}/sites/${site}/published`)).status).toBe(429);
    const member = await read(s.token);
    expect(member.status).toBe(200);
    expect(member.headers.get('x-ratelimit-limit')).toBe('1000');
  });
});
