// searchSite: full-text search of one published site, for its reader. A
// published public site with a section "Main" (its default site space Docs, and a site space of
// a private space) and a section "Enterprise" conditioned on a signed claim; inside Docs a page
// conditioned on an unsigned claim, with a child page. Every page mentions "zebrafish".
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SignJWT } from 'jose';
import { startTestApp, statusOf, type TestApp } from './helpers.ts';
import { expectValidResponse } from './openapi.ts';
import { applyChanges } from '../src/domain/revisions.ts';
import { newId } from '../src/lib/ids.ts';
import { SEARCH_SCAN } from '../src/domain/search.ts';
import { SITE_SEARCH_CANDIDATES } from '../src/domain/site-search.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.close();
});

const PRO = 'visitor.claims.unsigned.plan == "pro"';
const ENTERPRISE = 'visitor.claims.isEnterprise';
const SECRET = Buffer.alloc(32, 7);

async function space(title: string, visibility = 'private') {
  const r = await t.rest('POST', `/v1/orgs/${t.org.id}/spaces`, { title, visibility });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body.id as string;
}

/** Apply a change batch to a space's live content and make it current. */
async function edit(spaceId: string, changes: unknown[]) {
  const s = await t.app.prisma.space.findUniqueOrThrow({ where: { id: spaceId } });
  return t.app.prisma.$transaction(async (tx) => {
    const r = await applyChanges(tx, { spaceId, baseRevisionId: s.revisionId!, changes, createdById: t.adminUser.id, storage: t.app.services.storage });
    await tx.space.update({ where: { id: spaceId }, data: { revisionId: r.revision.id } });
    return r;
  });
}

/** A site of `sections` (each with its site spaces, the first its default). */
async function site(opts: { visibility?: 'public' | 'share_link' | 'visitor_auth'; published?: boolean; sections: Array<{ title: string; path: string; condition?: string; spaces: Array<{ spaceId: string; path: string; condition?: string }> }> }) {
  const siteId = newId('Site');
  const out = { siteId, sections: [] as string[], siteSpaces: [] as string[][] };
  await t.app.prisma.$transaction(async (tx) => {
    await tx.site.create({ data: { id: siteId, organizationId: t.org.id, title: 'Docs site', published: opts.published ?? true, visibility: opts.visibility ?? 'public' } });
    for (const [i, s] of opts.sections.entries()) {
      const sectionId = newId('SiteSection');
      await tx.siteSection.create({ data: { id: sectionId, siteId, title: s.title, path: s.path, position: i, condition: s.condition ?? null } });
      const ids: string[] = [];
      for (const [j, ss] of s.spaces.entries()) {
        const id = newId('SiteSpace');
        await tx.siteSpace.create({ data: { id, siteId, sectionId, spaceId: ss.spaceId, path: ss.path, position: j, condition: ss.condition ?? null } });
        ids.push(id);
      }
      await tx.siteSection.update({ where: { id: sectionId }, data: { defaultSiteSpaceId: ids[0] } });
      out.sections.push(sectionId);
      out.siteSpaces.push(ids);
    }
    await tx.site.update({ where: { id: siteId }, data: { defaultSiteSectionId: out.sections[0] } });
  });
  return out;
}

const SEARCH = `query($siteId: ID!, $query: String!, $shareKey: String, $visitor: JSON, $visitorToken: String, $first: Int, $after: String, $scope: SiteSearchScopeInput) {
  searchSite(siteId: $siteId, query: $query, shareKey: $shareKey, visitor: $visitor, visitorToken: $visitorToken, first: $first, after: $after, scope: $scope) {
    totalCount pageInfo { hasNextPage endCursor }
    edges { cursor node { section { id title path } siteSpace { id path title } spaceId pageId title path sitePath excerpt sections { id title path body urls { published app } } urls { published app } } }
  }
}`;

async function search(vars: Record<string, unknown>, token: string | null) {
  const r = await t.gql(SEARCH, { query: 'zebrafish', ...vars }, token);
  return r;
}
const titles = (r: any) => r.data.searchSite.edges.map((e: any) => e.node.title).sort();

let docs: string, enterprise: string, internal: string;
let main: Awaited<ReturnType<typeof site>>;
let outsider: Awaited<ReturnType<TestApp['createUser']>>;
let reader: Awaited<ReturnType<TestApp['createUser']>>;
const ALL = ['Getting started', 'Internal API', 'Pro features', 'SSO', 'Turbo tuning'];
const OPEN = ['Getting started', 'Internal API'];

beforeAll(async () => {
  docs = await space('Docs', 'public');
  enterprise = await space('Enterprise docs');
  internal = await space('Internal');
  await edit(docs, [
    { operation: 'insert_page', title: 'Getting started', description: 'First steps.', document: { markdown: 'Install the zebrafish toolkit.\n\n## Configure\n\nSet the zebrafish colour.' } },
    { operation: 'insert_page', ref: 'pro', title: 'Pro features', condition: PRO, document: { markdown: 'The zebrafish turbo mode.' } },
    { operation: 'insert_page', title: 'Unrelated', document: { markdown: 'Nothing to see.' } },
  ]);
  const pro = (await t.app.prisma.currentPage.findMany({ where: { spaceId: docs } })).find((p) => p.path === 'pro-features')!;
  await edit(docs, [{ operation: 'insert_page', into: pro.pageId, title: 'Turbo tuning', document: { markdown: 'Tune the zebrafish turbo.' } }]);
  await edit(enterprise, [{ operation: 'insert_page', title: 'SSO', document: { markdown: 'Zebrafish single sign-on.' } }]);
  await edit(internal, [{ operation: 'insert_page', title: 'Internal API', document: { markdown: 'The zebrafish internal API.' } }]);
  main = await site({
    sections: [
      { title: 'Main', path: 'main', spaces: [{ spaceId: docs, path: 'docs' }, { spaceId: internal, path: 'internal' }] },
      { title: 'Enterprise', path: 'enterprise', condition: ENTERPRISE, spaces: [{ spaceId: enterprise, path: 'sso' }] },
    ],
  });
  outsider = await t.createUser();
  reader = await t.createUser('read');
});

describe('searchSite: what each reader finds', () => {
  it('an outsider finds only unconditioned content, including a private space the site publishes', async () => {
    const r = await search({ siteId: main.siteId }, outsider.token);
    expect(r.errors).toBeUndefined();
    expect(titles(r)).toEqual(OPEN);
    expect(r.data.searchSite.totalCount).toBe(2);
    const started = r.data.searchSite.edges.map((e: any) => e.node).find((n: any) => n.title === 'Getting started');
    expect(started).toMatchObject({
      section: { id: main.sections[0], title: 'Main', path: 'main' },
      siteSpace: { id: main.siteSpaces[0][0], path: 'docs', title: 'Docs' },
      spaceId: docs,
      path: 'getting-started',
      sitePath: 'main/getting-started', // the section's default site space sits at the section's path
      urls: { published: `${t.app.config.publicUrl}/sites/${main.siteId}/main/getting-started` },
    });
    expect(started.excerpt).toContain('zebrafish');
    expect(started.sections.map((s: any) => s.title)).toEqual(['Getting started', 'Configure']);
    expect(started.sections[1].urls.published).toBe(`${t.app.config.publicUrl}/sites/${main.siteId}/main/getting-started#configure`);
    const api = r.data.searchSite.edges.map((e: any) => e.node).find((n: any) => n.title === 'Internal API');
    expect(api.sitePath).toBe('main/internal/internal-api');
    // The site opens the private space's published pages, not the space itself.
    const own = await t.gql(`query($id: ID!) { space(id: $id) { search(query: "zebrafish") { totalCount } } }`, { id: internal }, outsider.token);
    expect(own.errors?.[0].extensions?.code).toBe('NOT_FOUND');
  });

  it('unsigned claims unlock the pages conditioned on them (and their children), never a signed condition', async () => {
    const pro = await search({ siteId: main.siteId, visitor: { claims: { unsigned: { plan: 'pro' } } } }, outsider.token);
    expect(pro.errors).toBeUndefined();
    expect(titles(pro)).toEqual(['Getting started', 'Internal API', 'Pro features', 'Turbo tuning']);
    const free = await search({ siteId: main.siteId, visitor: { claims: { unsigned: { plan: 'free' } } } }, outsider.token);
    expect(titles(free)).toEqual(OPEN);
    // Signed claims come only from a visitor token.
    const asserted = await search({ siteId: main.siteId, visitor: { claims: { isEnterprise: true } } }, outsider.token);
    expect(asserted.errors?.[0].extensions).toMatchObject({ code: 'BAD_REQUEST', field: 'visitor.claims.isEnterprise' });
  });

  it('a visitor token with the signed claim opens the conditioned section', async () => {
    await t.app.prisma.siteVisitorKey.create({ data: { id: newId('SiteVisitorKey'), siteId: main.siteId, algorithm: 'HS256', secret: SECRET.toString('base64url') } });
    const token = await new SignJWT({ isEnterprise: true }).setProtectedHeader({ alg: 'HS256' }).setAudience(main.siteId).setExpirationTime('10m').sign(SECRET);
    const r = await search({ siteId: main.siteId, visitorToken: token }, outsider.token);
    expect(r.errors).toBeUndefined();
    expect(titles(r)).toEqual(['Getting started', 'Internal API', 'SSO']);
    const sso = r.data.searchSite.edges.find((e: any) => e.node.title === 'SSO').node;
    expect(sso).toMatchObject({ section: { title: 'Enterprise', path: 'enterprise' }, sitePath: 'enterprise/sso' });
    // A token for another site opens nothing more.
    const other = await new SignJWT({ isEnterprise: true }).setProtectedHeader({ alg: 'HS256' }).setAudience('site_other').setExpirationTime('10m').sign(SECRET);
    expect(titles(await search({ siteId: main.siteId, visitorToken: other }, outsider.token))).toEqual(OPEN);
  });

  it('a member finds everything, and previews a visitor with claims', async () => {
    for (const token of [t.token, reader.token]) {
      const r = await search({ siteId: main.siteId }, token);
      expect(r.errors).toBeUndefined();
      expect(titles(r)).toEqual(ALL);
      expect(r.data.searchSite.totalCount).toBe(5);
    }
    const preview = await search({ siteId: main.siteId, visitor: { claims: { isEnterprise: true } } }, reader.token);
    expect(titles(preview)).toEqual(['Getting started', 'Internal API', 'SSO']);
  });

  it('pages forwards through every result once, best first', async () => {
    const seen: string[] = [];
    let after: string | null = null;
    for (let i = 0; i < 10; i++) {
      const r: any = await search({ siteId: main.siteId, first: 2, after }, t.token);
      expect(r.errors).toBeUndefined();
      expect(r.data.searchSite.totalCount).toBe(5);
      seen.push(...r.data.searchSite.edges.map((e: any) => e.node.title));
      if (!r.data.searchSite.pageInfo.hasNextPage) break;
      after = r.data.searchSite.pageInfo.endCursor;
    }
    expect(seen).toHaveLength(5);
    expect([...seen].sort()).toEqual(ALL);
    // A phrase ranks the page that has it first.
    const best = await search({ siteId: main.siteId, query: 'zebrafish turbo tuning' }, t.token);
    expect(best.data.searchSite.edges[0].node.title).toBe('Turbo tuning');
  });

  it('scopes: specific site spaces, or the default site space of each section', async () => {
    const specific = await search({ siteId: main.siteId, scope: { mode: 'specific', siteSpaceIds: [main.siteSpaces[0][1]] } }, outsider.token);
    expect(titles(specific)).toEqual(['Internal API']);
    const defaults = await search({ siteId: main.siteId, scope: { mode: 'default' } }, t.token);
    expect(titles(defaults)).toEqual(['Getting started', 'Pro features', 'SSO', 'Turbo tuning']);
    // Naming a site space the reader cannot see finds nothing in it.
    const hidden = await search({ siteId: main.siteId, scope: { mode: 'specific', siteSpaceIds: [main.siteSpaces[1][0]] } }, outsider.token);
    expect(hidden.data.searchSite.totalCount).toBe(0);
  });

  it('deleted spaces and noIndex pages are never found', async () => {
    const gone = await space('Gone');
    await edit(gone, [{ operation: 'insert_page', title: 'Gone page', document: { markdown: 'zebrafish leftovers' } }]);
    await edit(docs, [{ operation: 'insert_page', title: 'Secret robots', noIndex: true, document: { markdown: 'zebrafish unindexed' } }]);
    const s = await site({ sections: [{ title: 'A', path: 'a', spaces: [{ spaceId: gone, path: 'gone' }, { spaceId: docs, path: 'docs' }] }] });
    await t.app.prisma.space.update({ where: { id: gone }, data: { deletedAt: new Date() } });
    const r = await search({ siteId: s.siteId }, outsider.token);
    expect(titles(r)).toEqual(['Getting started']);
  });
});

describe('searchSite: who may search', () => {
  it('a share-link site needs a valid share key; its URLs carry it', async () => {
    const s = await site({ visibility: 'share_link', sections: [{ title: 'Main', path: 'main', spaces: [{ spaceId: docs, path: 'docs' }] }] });
    const key = `shk_${newId('ShareLink').slice(-20)}abcdefghij`;
    await t.app.prisma.shareLink.create({ data: { id: newId('ShareLink'), siteId: s.siteId, name: 'Partners', key } });
    const without = await search({ siteId: s.siteId }, outsider.token);
    expect(without.errors?.[0].extensions?.code).toBe('NOT_FOUND');
    const wrong = await search({ siteId: s.siteId, shareKey: 'shk_nothing' }, outsider.token);
    expect(wrong.errors?.[0].extensions?.code).toBe('NOT_FOUND');
    const ok = await search({ siteId: s.siteId, shareKey: key }, outsider.token);
    expect(ok.errors).toBeUndefined();
    expect(titles(ok)).toEqual(['Getting started']);
    expect(ok.data.searchSite.edges[0].node.urls.published).toBe(`${t.app.config.publicUrl}/sites/${s.siteId}/main/getting-started?share=${key}`);
    // REST: the key in the query string.
    const path = `/v1/orgs/${t.org.id}/sites/${s.siteId}/search`;
    expect((await t.rest('POST', path, { query: 'zebrafish', scope: { mode: 'all' } }, outsider.token)).status).toBe(404);
    const rest = await t.rest('POST', `${path}?shareKey=${key}`, { query: 'zebrafish', scope: { mode: 'all' } }, outsider.token);
    expect(rest.status).toBe(200);
    expectValidResponse('POST', '/orgs/{organizationId}/sites/{siteId}/search', 200, rest.body);
    expect(rest.body.items[0].pages[0].title).toBe('Getting started');
  });

  it('a visitor-auth site needs a valid visitor token', async () => {
    const s = await site({ visibility: 'visitor_auth', sections: [{ title: 'Main', path: 'main', spaces: [{ spaceId: docs, path: 'docs' }] }] });
    await t.app.prisma.siteVisitorKey.create({ data: { id: newId('SiteVisitorKey'), siteId: s.siteId, algorithm: 'HS256', secret: SECRET.toString('base64url') } });
    expect((await search({ siteId: s.siteId }, outsider.token)).errors?.[0].extensions?.code).toBe('NOT_FOUND');
    const expired = await new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setAudience(s.siteId).setExpirationTime(Math.floor(Date.now() / 1000) - 3600).sign(SECRET);
    expect((await search({ siteId: s.siteId, visitorToken: expired }, outsider.token)).errors?.[0].extensions?.code).toBe('NOT_FOUND');
    const token = await new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setAudience(s.siteId).setExpirationTime('10m').sign(SECRET);
    const ok = await search({ siteId: s.siteId, visitorToken: token }, outsider.token);
    expect(ok.errors).toBeUndefined();
    expect(titles(ok)).toEqual(['Getting started']);
    // The X-Visitor-Token header does the same, on REST too.
    const rest = await fetch(`${t.baseUrl}/v1/orgs/${t.org.id}/sites/${s.siteId}/search`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${outsider.token}`, 'x-visitor-token': token },
      body: JSON.stringify({ query: 'zebrafish', mode: 'all' }),
    });
    expect(rest.status).toBe(200);
    expect(((await rest.json()) as any).items[0].pages[0].title).toBe('Getting started');
  });

  it('an unpublished site is NOT_FOUND to outsiders; members preview it (no published URL yet)', async () => {
    const s = await site({ published: false, sections: [{ title: 'Main', path: 'main', spaces: [{ spaceId: docs, path: 'docs' }] }] });
    const r = await search({ siteId: s.siteId }, outsider.token);
    expect(r.errors?.[0].extensions?.code).toBe('NOT_FOUND');
    expect(await statusOf(outsider.client.orgs.searchSiteContent(t.org.id, s.siteId, { query: 'zebrafish', scope: { mode: 'all' } }))).toBe(404);
    const member = await search({ siteId: s.siteId }, reader.token);
    expect(member.errors).toBeUndefined();
    const node = member.data.searchSite.edges.find((e: any) => e.node.title === 'Getting started').node;
    expect(node.urls).toEqual({ published: null, app: `${t.app.config.appUrl}/s/${docs}/getting-started` });
  });

  it('a missing site, or one of another organization on the REST path, is NOT_FOUND', async () => {
    const r = await search({ siteId: 'site_missing' }, t.token);
    expect(r.errors?.[0].extensions?.code).toBe('NOT_FOUND');
    const other = await t.rest('POST', `/v1/orgs/org_other/sites/${main.siteId}/search`, { query: 'zebrafish', scope: { mode: 'all' } });
    expect(other.status).toBe(404);
  });

  it('bad input is a 400 naming the field, before anything is read', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ query: '' }, 'query'],
      [{ query: '   ' }, 'query'],
      [{ query: 'z'.repeat(513) }, 'query'],
      [{ first: 101 }, 'first'],
      [{ first: -1 }, 'first'],
      [{ after: 'nonsense' }, 'after'],
      [{ visitor: 'pro' }, 'visitor'],
      [{ scope: { mode: 'specific', siteSpaceIds: Array.from({ length: 101 }, (_, i) => `sitesp_${i}`) } }, 'scope.siteSpaceIds'],
    ];
    for (const [vars, field] of cases) {
      const r = await search({ siteId: main.siteId, ...vars }, outsider.token);
      expect(r.errors?.[0].extensions, JSON.stringify(vars)).toMatchObject({ code: 'BAD_REQUEST', field });
    }
    // Hostile but valid queries: stop words, operators only, quotes and SQL find nothing or match as words.
    for (const query of ['the', '!!! & | <->', '"unterminated', "zebrafish'; DROP TABLE \"Space\"; --", '-zebrafish']) {
      const r = await search({ siteId: main.siteId, query }, outsider.token);
      expect(r.errors, query).toBeUndefined();
      expect(r.data.searchSite.totalCount, query).toBeLessThanOrEqual(2);
    }
    // A cursor of another list.
    const list = await t.gql(`query($id: ID!) { space(id: $id) { search(query: "zebrafish", first: 1) { pageInfo { endCursor } } } }`, { id: docs });
    const foreign = await search({ siteId: main.siteId, after: list.data.space.search.pageInfo.endCursor }, t.token);
    expect(foreign.errors?.[0].extensions).toMatchObject({ code: 'BAD_REQUEST', field: 'after' });
  });
});

describe('REST POST /v1/orgs/{organizationId}/sites/{siteId}/search', () => {
  const path = () => `/v1/orgs/${t.org.id}/sites/${main.siteId}/search`;

  it('answers through the official client, grouped by site space, for each reader', async () => {
    const res = await outsider.client.orgs.searchSiteContent(t.org.id, main.siteId, { query: 'zebrafish', scope: { mode: 'all' } });
    expectValidResponse('POST', '/orgs/{organizationId}/sites/{siteId}/search', 200, res.data);
    expect(res.data.count).toBe(2);
    expect(res.data.items.map((s) => s.title).sort()).toEqual(['Docs', 'Internal']);
    const page = res.data.items.find((s) => s.title === 'Docs')!.pages[0];
    expect(page).toMatchObject({ title: 'Getting started', path: 'getting-started', urls: { app: `${t.app.config.publicUrl}/sites/${main.siteId}/main/getting-started` } });
    expect(page.sections?.map((s) => s.title)).toEqual(['Getting started', 'Configure']);

    // Unsigned claims in the body (an extension of the contract's body).
    const pro = await t.rest('POST', path(), { query: 'zebrafish', mode: 'all', visitor: { claims: { unsigned: { plan: 'pro' } } } }, outsider.token);
    expect(pro.status).toBe(200);
    expectValidResponse('POST', '/orgs/{organizationId}/sites/{siteId}/search', 200, pro.body);
    expect(pro.body.items.flatMap((s: any) => s.pages.map((p: any) => p.title)).sort()).toEqual(['Getting started', 'Internal API', 'Pro features', 'Turbo tuning']);

    const member = await t.client().orgs.searchSiteContent(t.org.id, main.siteId, { query: 'zebrafish', mode: 'all' });
    expectValidResponse('POST', '/orgs/{organizationId}/sites/{siteId}/search', 200, member.data);
    expect(member.data.count).toBe(5);
    expect(member.data.items.flatMap((s) => s.pages.map((p) => p.title)).sort()).toEqual(ALL);
  });

  it('scopes in every form the contract names', async () => {
    const titlesOf = (b: any) => b.items.flatMap((s: any) => s.pages.map((p: any) => p.title)).sort();
    const internalSp = main.siteSpaces[0][1];
    const forms: Array<[Record<string, unknown>, string[]]> = [
      [{ scope: { mode: 'specific', siteSpaceIds: [internalSp] } }, ['Internal API']],
      [{ siteSpaceIds: [internalSp] }, ['Internal API']],
      [{ mode: 'specific', siteSpaceIds: [internalSp] }, ['Internal API']],
      [{ scope: { mode: 'default' } }, ['Getting started']],
      [{ scope: { mode: 'default', includedSiteSpaces: [internalSp] } }, OPEN],
      [{ mode: 'current', siteSpaceId: internalSp }, OPEN],
      [{ mode: 'all' }, OPEN],
    ];
    for (const [body, expected] of forms) {
      const r = await t.rest('POST', path(), { query: 'zebrafish', ...body }, outsider.token);
      expect(r.status, JSON.stringify(body)).toBe(200);
      expectValidResponse('POST', '/orgs/{organizationId}/sites/{siteId}/search', 200, r.body);
      expect(titlesOf(r.body), JSON.stringify(body)).toEqual(expected);
    }
  });

  it('pages with limit and next', async () => {
    const first = await t.rest('POST', `${path()}?limit=3`, { query: 'zebrafish', mode: 'all' });
    expect(first.status).toBe(200);
    expectValidResponse('POST', '/orgs/{organizationId}/sites/{siteId}/search', 200, first.body);
    const firstTitles = first.body.items.flatMap((s: any) => s.pages.map((p: any) => p.title));
    expect(firstTitles).toHaveLength(3);
    const second = await t.rest('POST', `${path()}?limit=3&page=${first.body.next.page}`, { query: 'zebrafish', mode: 'all' });
    expect(second.body.next).toBeUndefined();
    const all = [...firstTitles, ...second.body.items.flatMap((s: any) => s.pages.map((p: any) => p.title))];
    expect(all.sort()).toEqual(ALL);
  });

  it('bad bodies are a 400 naming the field', async () => {
    const cases: Array<[unknown, string]> = [
      [{}, 'query'],
      [{ query: 'z'.repeat(513), mode: 'all' }, 'query'],
      [{ query: 'zebrafish', scope: { mode: 'sideways' } }, 'scope'],
      [{ query: 'zebrafish', mode: 'current' }, 'siteSpaceId'],
      [{ query: 'zebrafish', scope: { mode: 'specific', siteSpaceIds: [] } }, 'scope.siteSpaceIds'],
      [{ query: 'zebrafish', bogus: 1 }, 'bogus'],
      [{ query: 'zebrafish', visitor: { claims: { isEnterprise: true } } }, 'visitor.claims.isEnterprise'],
    ];
    for (const [body, field] of cases) {
      const r = await t.rest('POST', path(), body, outsider.token);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error.message, JSON.stringify(body)).toContain(field);
    }
    const limit = await t.rest('POST', `${path()}?limit=5000`, { query: 'zebrafish' }, outsider.token);
    expect(limit.status).toBe(400);
    expect(limit.body.error.message).toContain('limit');
  });
});

describe('statements', () => {
  it('searching costs the same number of SQL statements for 2 sections as for 8', async () => {
    const spaces: string[] = [];
    for (let i = 0; i < 8; i++) {
      const id = await space(`Part ${i}`);
      await edit(id, [{ operation: 'insert_page', title: `Chapter ${i}`, document: { markdown: `The axolotl part ${i}.` } }]);
      spaces.push(id);
    }
    const sections = (n: number) =>
      Array.from({ length: n }, (_, i) => ({ title: `S${i}`, path: `s${i}`, condition: i % 2 ? PRO : undefined, spaces: [{ spaceId: spaces[i], path: `p${i}` }] }));
    const small = await site({ sections: sections(2) });
    const big = await site({ sections: sections(8) });
    const run = (siteId: string) => t.gql(SEARCH, { siteId, query: 'axolotl', visitor: { claims: { unsigned: { plan: 'pro' } } } }, outsider.token);
    await run(small.siteId);
    await run(big.siteId);
    const a = await t.countQueries(() => run(small.siteId));
    const b = await t.countQueries(() => run(big.siteId));
    expect(a.result.data.searchSite.totalCount).toBe(2);
    expect(b.result.data.searchSite.totalCount).toBe(8);
    expect(b.count, b.statements.join('\n')).toBe(a.count);
    // The site, the membership, the site spaces with sections and spaces, the hits, the matching sections (trees: cached).
    expect(b.count).toBeLessThanOrEqual(6);
  });
});

describe('bounded: a common word over a large site', () => {
  it('reads at most SEARCH_SCAN matches and says the count is capped (GraphQL and REST)', async () => {
    const big = await space('Plankton', 'public');
    await edit(big, [{ operation: 'insert_page', title: 'Krill guide', document: { markdown: 'Krill and the rare copepod.' } }]);
    // More matching rows than the scan reads, in one statement: they sit in CurrentPage as a
    // space's pages do (none is in the revision's tree, so readers never see them).
    const seeded = SEARCH_SCAN + 200;
    await t.app.prisma.$executeRaw`
      INSERT INTO "PageVersion" ("id", "pageId", "spaceId", "title", "slug", "markdown")
      SELECT 'pv_krill_' || i, 'page_krill_' || i, ${big}, 'Krill ' || i, 'krill-' || i, 'krill swarm ' || i FROM generate_series(1, ${seeded}::int) i`;
    await t.app.prisma.$executeRaw`
      INSERT INTO "CurrentPage" ("spaceId", "pageId", "versionId", "path", "searchVector")
      SELECT pv."spaceId", pv."pageId", pv."id", pv."slug", pv."searchVector" FROM "PageVersion" pv WHERE pv."spaceId" = ${big} AND pv."id" LIKE 'pv_krill_%'`;
    const s = await site({ sections: [{ title: 'Sea', path: 'sea', spaces: [{ spaceId: big, path: 'plankton' }] }] });

    const q = `query($siteId: ID!, $query: String!) { searchSite(siteId: $siteId, query: $query) { totalCount totalCountIsCapped nodes { title } } }`;
    const common = await t.countQueries(() => t.gql(q, { siteId: s.siteId, query: 'krill' }, outsider.token));
    expect(common.result.errors).toBeUndefined();
    expect(common.result.data.searchSite.totalCountIsCapped).toBe(true);
    expect(common.result.data.searchSite.totalCount).toBeLessThanOrEqual(SITE_SEARCH_CANDIDATES);
    const ranking = common.statements.filter((x) => /ts_rank/.test(x));
    expect(ranking).toHaveLength(1);
    expect(ranking[0]).toMatch(/LIMIT/);
    const rest = await t.rest('POST', `/v1/orgs/${t.org.id}/sites/${s.siteId}/search`, { query: 'krill' }, outsider.token);
    expect(rest.status).toBe(200);
    expectValidResponse('POST', '/orgs/{organizationId}/sites/{siteId}/search', 200, rest.body);
    expect(rest.body.countIsCapped).toBe(true);

    // A rare word: every match ranked, exact count, no flag.
    const rare = await t.gql(q, { siteId: s.siteId, query: 'copepod' }, outsider.token);
    expect(rare.data.searchSite).toEqual({ totalCount: 1, totalCountIsCapped: false, nodes: [{ title: 'Krill guide' }] });
    const rareRest = await t.rest('POST', `/v1/orgs/${t.org.id}/sites/${s.siteId}/search`, { query: 'copepod' }, outsider.token);
    expect(rareRest.body.countIsCapped).toBeUndefined();
  });

  it('hostile queries: long, operators only, unicode, cursors of another query: 400 naming the field or an answer, never 500', async () => {
    for (const query of ['🦈 naïve 北京 ١٢٣', ':* & | ! ( ) <-> "', 'krill '.repeat(85), 'a'.repeat(512)]) {
      const r = await search({ siteId: main.siteId, query }, outsider.token);
      expect(r.errors, JSON.stringify(query.slice(0, 20))).toBeUndefined();
    }
    const nul = await search({ siteId: main.siteId, query: 'krill\u0000' }, outsider.token);
    expect(nul.errors?.[0].extensions).toMatchObject({ code: 'BAD_REQUEST', field: 'variables.query' });
    const tooLong = await t.rest('POST', `/v1/orgs/${t.org.id}/sites/${main.siteId}/search`, { query: '北'.repeat(513) }, outsider.token);
    expect(tooLong.status).toBe(400);
    expect(tooLong.body.error.message).toContain('query');
    // A cursor of another query of the same list answers from that position (never an error).
    const page = await search({ siteId: main.siteId, query: 'zebrafish', first: 1 }, t.token);
    const other = await search({ siteId: main.siteId, query: 'toolkit', after: page.data.searchSite.pageInfo.endCursor }, t.token);
    expect(other.errors).toBeUndefined();
    const restOther = await t.rest('POST', `/v1/orgs/${t.org.id}/sites/${main.siteId}/search?page=${encodeURIComponent(page.data.searchSite.pageInfo.endCursor)}`, { query: 'toolkit' }, t.token);
    expect(restOther.status).toBe(200);
    const garbage = await t.rest('POST', `/v1/orgs/${t.org.id}/sites/${main.siteId}/search?page=%00%FF`, { query: 'toolkit' }, t.token);
    expect(garbage.status).toBe(400);
    expect(garbage.body.error.message).toContain('page');
  });
});
