// Scoped tokens: a `published` token, issued by `createPublishedReadToken` or the
// admin CLI, runs published reads only (GraphQL root fields in PUBLISHED_READ_ROOT_FIELDS, REST
// routes marked `published`), reads as a reader who is not a member whatever its user is,
// optionally only some sites; anything else is 403. Revoking it works like any token.
import { execFile, execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
let t: TestApp;
let siteA: string;
let siteB: string;
let draft: string;
let otherOrgSite: string;

const SITE_QUERY = `query($siteId: ID!) { publishedSite(siteId: $siteId) { id title structure { items { __typename ... on SiteSection { title condition } } } } }`;
const CREATE = `mutation($input: CreatePublishedReadTokenInput!) { createPublishedReadToken(input: $input) { token apiToken { id label scope siteIds } } }`;
const FORBIDDEN = { errors: [{ message: 'this token may only read published content', extensions: { code: 'FORBIDDEN' } }] };

async function mutate(document: string, input: Record<string, unknown>, token = t.token) {
  const r = await t.gql(document, { input }, token);
  expect(r.errors).toBeUndefined();
  return r.data;
}

async function newSite(title: string, organizationId: string, sections: Array<{ title: string; condition?: string }>, publish = true, token = t.token) {
  const site = (await mutate(`mutation($input: CreateSiteInput!) { createSite(input: $input) { site { id } } }`, { organizationId, title, visibility: 'public' }, token)).createSite.site.id as string;
  for (const s of sections) {
    const space = (await mutate(`mutation($input: CreateSpaceInput!) { createSpace(input: $input) { space { id } } }`, { organizationId, title: `${title} ${s.title}` }, token)).createSpace.space.id;
    const section = (await mutate(`mutation($input: AddSectionToSiteInput!) { addSectionToSite(input: $input) { section { id } } }`, { siteId: site, spaceId: space, title: s.title }, token)).addSectionToSite.section.id;
    if (s.condition) await mutate(`mutation($input: UpdateSiteSectionInput!) { updateSiteSection(input: $input) { section { id } } }`, { siteId: site, sectionId: section, condition: s.condition }, token);
  }
  if (publish) await mutate(`mutation($input: SiteKeyInput!) { publishSite(input: $input) { site { id } } }`, { siteId: site }, token);
  return site;
}

async function raw(pathname: string, opts: { token: string; method?: string; body?: unknown }) {
  const res = await fetch(`${t.baseUrl}${pathname}`, {
    method: opts.method ?? (opts.body === undefined ? 'GET' : 'POST'),
    headers: { authorization: `Bearer ${opts.token}`, ...(opts.body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
  });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : undefined, text };
}

const titles = (data: any) => data.publishedSite.structure.items.map((i: any) => i.title);

beforeAll(async () => {
  t = await startTestApp();
  siteA = await newSite('Alpha', t.org.id, [{ title: 'Docs' }, { title: 'Enterprise', condition: 'visitor.claims.isEnterprise' }]);
  siteB = await newSite('Bravo', t.org.id, [{ title: 'Docs' }]);
  draft = await newSite('Draft', t.org.id, [{ title: 'Docs' }], false);
  // A published site of an organization the bootstrap admin is not a member of.
  const stranger = await t.createUser();
  const org = (await t.gql(`mutation { createOrganization(input: { title: "Elsewhere" }) { id } }`, {}, stranger.token)).data.createOrganization.id;
  otherOrgSite = await newSite('Elsewhere', org, [{ title: 'Docs' }], true, stranger.token);
}, 120_000);
afterAll(async () => {
  await t?.close();
});

describe('createPublishedReadToken', () => {
  it('issues a token shown once, scoped to published reads and the sites given', async () => {
    const r = await mutate(CREATE, { label: ' front end ', siteIds: [siteA, siteA] });
    expect(r.createPublishedReadToken.token).toMatch(/^dg_/);
    expect(r.createPublishedReadToken.apiToken).toMatchObject({ label: 'front end', scope: 'published', siteIds: [siteA] });
    const listed = (await t.gql(`{ viewer { apiTokens { id scope siteIds } } }`)).data.viewer.apiTokens;
    expect(listed).toContainEqual({ id: r.createPublishedReadToken.apiToken.id, scope: 'published', siteIds: [siteA] });
    const stored = await t.app.prisma.apiToken.findUniqueOrThrow({ where: { id: r.createPublishedReadToken.apiToken.id } });
    expect(stored.tokenHash).not.toContain(r.createPublishedReadToken.token);
    // Without sites: any published site.
    const any = await mutate(CREATE, { label: 'any site' });
    expect(any.createPublishedReadToken.apiToken).toMatchObject({ scope: 'published', siteIds: [] });
  });

  it('refuses bad input and sites the caller cannot read as a member, creating nothing', async () => {
    const outsider = await t.createUser();
    const before = await t.app.prisma.apiToken.count();
    const empty = await t.gql(CREATE, { input: { label: '  ', siteIds: [siteA] } });
    expect(empty.errors?.[0].extensions).toMatchObject({ code: 'BAD_REQUEST', field: 'input.label' });
    const missing = await t.gql(CREATE, { input: { label: 'x', siteIds: [siteA, 'site_0000000000000000000000'] } });
    expect(missing.errors?.[0].extensions).toMatchObject({ code: 'NOT_FOUND', field: 'input.siteIds.1' });
    const foreign = await t.gql(CREATE, { input: { label: 'x', siteIds: [otherOrgSite] } });
    expect(foreign.errors?.[0].extensions).toMatchObject({ code: 'NOT_FOUND', field: 'input.siteIds.0' });
    const tooMany = await t.gql(CREATE, { input: { label: 'x', siteIds: Array.from({ length: 101 }, (_, i) => `site_${i}`) } });
    expect(tooMany.errors?.[0].extensions).toMatchObject({ code: 'BAD_REQUEST', field: 'input.siteIds' });
    // An outsider may issue one for itself, but not limited to sites it is not a member of.
    const outsiders = await t.gql(CREATE, { input: { label: 'x', siteIds: [siteA] } }, outsider.token);
    expect(outsiders.errors?.[0].extensions).toMatchObject({ code: 'NOT_FOUND', field: 'input.siteIds.0' });
    expect(await t.app.prisma.apiToken.count()).toBe(before);
    // Without a token: 401.
    expect((await t.gql(CREATE, { input: { label: 'x' } }, null)).status).toBe(401);
  });
});

describe('a published-scoped token', () => {
  let token: string;
  let tokenId: string;
  beforeAll(async () => {
    // The bootstrap admin's: an admin of the organization, yet the token reads as an outsider.
    const r = await mutate(CREATE, { label: 'renderer', siteIds: [siteA, draft] });
    token = r.createPublishedReadToken.token;
    tokenId = r.createPublishedReadToken.apiToken.id;
  });

  it('reads a published site as an outsider: no conditioned section, no unpublished site', async () => {
    const admin = await t.gql(SITE_QUERY, { siteId: siteA });
    expect(titles(admin.data)).toEqual(['Docs', 'Enterprise']);
    const scoped = await t.gql(SITE_QUERY, { siteId: siteA }, token);
    expect(scoped.errors).toBeUndefined();
    expect(titles(scoped.data)).toEqual(['Docs']);
    expect(scoped.data.publishedSite.structure.items[0].condition).toBeNull();
    // Its user may preview the draft; the token may not, though the draft is among its sites.
    expect((await t.gql(SITE_QUERY, { siteId: draft })).errors).toBeUndefined();
    expect((await t.gql(SITE_QUERY, { siteId: draft }, token)).errors?.[0].extensions?.code).toBe('NOT_FOUND');
    // REST published reads too.
    const structure = await raw(`/v1/orgs/${t.org.id}/sites/${siteA}/structure`, { token });
    expect(structure.status).toBe(200);
    expect(structure.json.structure.map((s: any) => s.title)).toEqual(['Docs']);
  });

  it('reads only its sites: another published site is NOT_FOUND', async () => {
    expect((await t.gql(SITE_QUERY, { siteId: siteB }, token)).errors?.[0].extensions?.code).toBe('NOT_FOUND');
    expect((await raw(`/v1/orgs/${t.org.id}/sites/${siteB}/structure`, { token })).status).toBe(404);
    expect((await t.gql(SITE_QUERY, { siteId: siteB })).errors).toBeUndefined();
  });

  it('cannot run mutations or queries that are not published reads: 403', async () => {
    const refused: Array<[string, Record<string, unknown>]> = [
      [`mutation($input: SiteKeyInput!) { unpublishSite(input: $input) { site { id } } }`, { input: { siteId: siteA } }],
      [CREATE, { input: { label: 'more' } }],
      [`{ viewer { user { id } } }`, {}],
      [`query($org: ID!) { organization(id: $org) { id } }`, { org: t.org.id }],
      [`query($id: ID!) { site(id: $id) { id title } }`, { id: siteA }],
      [`query($id: ID!) { publishedSite(siteId: $id) { id } site(id: $id) { id } }`, { id: siteA }],
    ];
    for (const [query, variables] of refused) {
      const r = await fetch(`${t.baseUrl}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: JSON.stringify({ query, variables }) });
      expect([r.status, await r.json()], query).toEqual([403, FORBIDDEN]);
    }
    // Nothing changed: the site is still published.
    expect((await t.app.prisma.site.findUniqueOrThrow({ where: { id: siteA } })).published).toBe(true);
    for (const [method, p, body] of [
      ['GET', `/v1/orgs/${t.org.id}/sites/${siteA}`],
      ['GET', `/v1/orgs/${t.org.id}/sites`],
      ['GET', '/v1/user'],
      ['POST', `/v1/orgs/${t.org.id}/sites/${siteA}/unpublish`],
      ['POST', `/v1/orgs/${t.org.id}/spaces`, { title: 'x' }],
    ] as const) {
      const r = await raw(p, { token, method, body });
      expect([r.status, r.json], `${method} ${p}`).toEqual([403, { error: { code: 403, message: 'this token may only read published content' } }]);
    }
    expect((await t.app.prisma.site.findUniqueOrThrow({ where: { id: siteA } })).published).toBe(true);
  });

  it('stops working once revoked (by its user, with a full token)', async () => {
    const r = await mutate(`mutation($input: RevokeApiTokenInput!) { revokeApiToken(input: $input) { deleted } }`, { id: tokenId });
    expect(r.revokeApiToken.deleted).toBe(true);
    expect((await t.gql(SITE_QUERY, { siteId: siteA }, token)).status).toBe(401);
    expect((await raw(`/v1/orgs/${t.org.id}/sites/${siteA}/structure`, { token })).status).toBe(401);
  });
});

describe('admin CLI', () => {
  function admin(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    return new Promise((resolve) => {
      execFile(process.execPath, ['.build/cli/admin.mjs', ...args], { cwd: ROOT, env: { ...process.env, DATABASE_URL: t.databaseUrl }, timeout: 60_000 }, (err, stdout, stderr) =>
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout: stdout.trim(), stderr }),
      );
    });
  }

  it('issues a published token limited to sites with create-token --published --site', { timeout: 180_000 }, async () => {
    execFileSync(process.execPath, ['scripts/build.mjs'], { cwd: ROOT, stdio: 'pipe' });
    const email = t.adminUser.email;
    const r = await admin('create-token', '--email', email, '--label', 'renderer', '--published', '--site', siteA);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^dg_\S+$/);
    const stored = await t.app.prisma.apiToken.findFirstOrThrow({ where: { label: 'renderer', siteIds: { equals: [siteA] } } });
    expect(stored.scope).toBe('published');
    expect(titles((await t.gql(SITE_QUERY, { siteId: siteA }, r.stdout)).data)).toEqual(['Docs']);
    expect((await t.gql(SITE_QUERY, { siteId: siteB }, r.stdout)).errors?.[0].extensions?.code).toBe('NOT_FOUND');
    expect((await t.gql(`{ viewer { user { id } } }`, {}, r.stdout)).status).toBe(403);

    const before = await t.app.prisma.apiToken.count();
    const notMember = await admin('create-token', '--email', email, '--published', '--site', otherOrgSite);
    expect(notMember.code).toBe(1);
    expect(notMember.stderr).toContain(otherOrgSite);
    const siteWithoutScope = await admin('create-token', '--email', email, '--site', siteA);
    expect(siteWithoutScope.code).toBe(2);
    expect(siteWithoutScope.stderr).toContain('--published');
    expect(await t.app.prisma.apiToken.count()).toBe(before);
  });
});
