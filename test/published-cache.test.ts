// The published-structure cache (src/http/published-cache.ts): a hit costs one SQL statement and
// answers the very bytes the uncached path would; every kind of write a reader would see makes
// the next read a miss with the new data; access is decided on every hit.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startSecondApp, startTestApp, type TestApp } from './helpers.ts';

let t: TestApp;
let siteId: string;
let spaceA: string;
let spaceB: string;
let sectionId: string;
let groupId: string;
let siteSpaceA: string;

const STRUCTURE = `query Structure($siteId: ID!, $shareKey: String, $visitor: JSON) {
  publishedSite(siteId: $siteId, shareKey: $shareKey, visitor: $visitor) {
    id title visibility published urls { published }
    structure {
      type
      items {
        __typename
        ... on SiteSectionGroup { id title sections { ...Section } }
        ... on SiteSection { ...Section }
        ... on SiteSpace { ...SiteSpace }
      }
    }
  }
}
fragment Section on SiteSection { id title path condition siteSpaces { ...SiteSpace } }
fragment SiteSpace on SiteSpace { id path title condition space { id title emoji revision { id allPages { id title slug path depth } } } }`;

const stats = () => ({ ...t.app.server.publishedCache.stats });

async function read(token: string | null = t.token, variables: Record<string, unknown> = {}) {
  const res = await fetch(`${t.baseUrl}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify({ query: STRUCTURE, variables: { siteId, ...variables } }),
  });
  const text = await res.text();
  return { status: res.status, text, json: JSON.parse(text) };
}

async function mutate(document: string, input: Record<string, unknown>) {
  const r = await t.gql(document, { input });
  expect(r.errors).toBeUndefined();
  return r.data;
}

beforeAll(async () => {
  t = await startTestApp();
  const space = async (title: string) =>
    (await mutate(`mutation($input: CreateSpaceInput!) { createSpace(input: $input) { space { id } } }`, { organizationId: t.org.id, title })).createSpace.space.id as string;
  spaceA = await space('Alpha');
  spaceB = await space('Beta');
  const site = await mutate(`mutation($input: CreateSiteInput!) { createSite(input: $input) { site { id } } }`, { organizationId: t.org.id, title: 'Docs', visibility: 'public' });
  siteId = site.createSite.site.id;
  sectionId = (await mutate(`mutation($input: AddSectionToSiteInput!) { addSectionToSite(input: $input) { section { id } } }`, { siteId, spaceId: spaceA, title: 'Guides' })).addSectionToSite.section.id;
  groupId = (await mutate(`mutation($input: AddSectionGroupToSiteInput!) { addSectionGroupToSite(input: $input) { group { id } } }`, { siteId, title: 'More' })).addSectionGroupToSite.group.id;
  await mutate(`mutation($input: SiteKeyInput!) { publishSite(input: $input) { site { id } } }`, { siteId });
  const first = await read();
  siteSpaceA = first.json.data.publishedSite.structure.items.find((i: any) => i.id === sectionId).siteSpaces[0].id;
});
afterAll(async () => {
  await t?.close();
});
beforeEach(() => {
  t.app.server.publishedCache.clear();
});

describe('published-structure cache', () => {
  it('answers a repeated read from the cache with one SQL statement and the same bytes', async () => {
    const miss = await read();
    expect(miss.status).toBe(200);
    const before = stats();
    const { result: hit, count, statements } = await t.countQueries(() => read());
    expect(stats().hits).toBe(before.hits + 1);
    expect(hit.text).toBe(miss.text);
    // The gate: structure version and the reader's access, together (the token is cached).
    expect(count).toBe(1);
    expect(statements[0]).toContain('SiteStructureVersion');
  });

  it('keys by variables: another visitor or share key is another entry', async () => {
    await read();
    const before = stats();
    await read(t.token, { visitor: { claims: { beta: true } } });
    expect(stats().misses).toBe(before.misses + 1);
  });

  it('does not cache documents that read outside the versioned data', async () => {
    const r = await t.gql(`query($siteId: ID!) { publishedSite(siteId: $siteId) { id organization { id title } } }`, { siteId });
    expect(r.errors).toBeUndefined();
    const before = stats();
    await t.gql(`query($siteId: ID!) { publishedSite(siteId: $siteId) { id organization { id title } } }`, { siteId });
    expect(stats()).toEqual(before);
    // Two root fields: uncached too.
    await t.gql(`query($siteId: ID!) { publishedSite(siteId: $siteId) { id } viewer { id } }`, { siteId });
    expect(stats()).toEqual(before);
  });

  // Every kind of write that changes what a reader sees: the read after it is a miss, and shows the change.
  // (The other kinds — deletes and moves of sections, groups, site spaces — go through the same row triggers.)
  const writes: Array<[string, () => Promise<unknown>, ((body: string) => boolean) | null]> = [
    ['site title', () => mutate(`mutation($input: UpdateSiteInput!) { updateSite(input: $input) { site { id } } }`, { siteId, title: 'Docs 2' }), (b) => b.includes('"Docs 2"')],
    ['section title', () => mutate(`mutation($input: UpdateSiteSectionInput!) { updateSiteSection(input: $input) { section { id } } }`, { siteId, sectionId, title: 'Tutorials' }), (b) => b.includes('"Tutorials"')],
    ['section condition', () => mutate(`mutation($input: UpdateSiteSectionInput!) { updateSiteSection(input: $input) { section { id } } }`, { siteId, sectionId, condition: 'visitor.claims.beta' }), (b) => b.includes('visitor.claims.beta')],
    ['group title', () => mutate(`mutation($input: UpdateSiteSectionGroupInput!) { updateSiteSectionGroup(input: $input) { group { id } } }`, { siteId, groupId, title: 'Extras' }), (b) => b.includes('"Extras"')],
    ['new section', () => mutate(`mutation($input: AddSectionToSiteInput!) { addSectionToSite(input: $input) { section { id } } }`, { siteId, spaceId: spaceB, title: 'Reference' }), (b) => b.includes('"Reference"')],
    ['site space path', () => mutate(`mutation($input: UpdateSiteSpaceInput!) { updateSiteSpace(input: $input) { siteSpace { id } } }`, { siteId, siteSpaceId: siteSpaceA, path: 'alpha-docs' }), (b) => b.includes('"alpha-docs"')],
    ['new site space', () => mutate(`mutation($input: AddSpaceToSiteInput!) { addSpaceToSite(input: $input) { siteSpace { id } } }`, { siteId, spaceId: spaceB, sectionId }), (b) => (b.match(new RegExp(spaceB, 'g')) ?? []).length >= 2],
    ['shown space title', () => mutate(`mutation($input: UpdateSpaceInput!) { updateSpace(input: $input) { space { id } } }`, { id: spaceA, title: 'Alpha renamed' }), (b) => b.includes('"Alpha renamed"')],
    ['shown space content', () => mutate(`mutation($input: ApplySpaceContentChangesInput!) { applySpaceContentChanges(input: $input) { revision { id } } }`, { spaceId: spaceA, changes: [{ operation: 'insert_page', title: 'Brand new page', document: { markdown: 'Hi.' } }] }), (b) => b.includes('"Brand new page"')],
    ['visibility', () => mutate(`mutation($input: UpdateSiteInput!) { updateSite(input: $input) { site { id } } }`, { siteId, visibility: 'unlisted' }), (b) => b.includes('"unlisted"')],
    ['adaptive schema', () => mutate(`mutation($input: UpdateSiteAdaptiveSchemaInput!) { updateSiteAdaptiveSchema(input: $input) { adaptiveSchema { updatedAt } } }`, { siteId, jsonSchema: { type: 'object', properties: { beta: { type: 'boolean', description: 'Beta tester' } }, additionalProperties: false } }), null],
    ['share link created', () => mutate(`mutation($input: CreateSiteShareLinkInput!) { createSiteShareLink(input: $input) { shareLink { id } } }`, { siteId, name: 'Partners' }), null],
    ['unpublished', () => mutate(`mutation($input: SiteKeyInput!) { unpublishSite(input: $input) { site { id } } }`, { siteId }), (b) => b.includes('"published":false')],
    ['published again', () => mutate(`mutation($input: SiteKeyInput!) { publishSite(input: $input) { site { id } } }`, { siteId }), (b) => b.includes('"published":true')],
    ['site space removed', () => mutate(`mutation($input: SiteSpaceKeyInput!) { deleteSiteSpace(input: $input) { deleted } }`, { siteId, siteSpaceId: siteSpaceA }), (b) => !b.includes(siteSpaceA)],
  ];
  for (const [name, write, shows] of writes) {
    it(`a write of kind "${name}" makes the next read a miss that shows it`, async () => {
      const cached = await read();
      await read();
      const before = stats();
      await write();
      const after = await read();
      expect(stats().misses).toBe(before.misses + 1);
      expect(stats().hits).toBe(before.hits);
      expect(after.status).toBe(200);
      // null: nothing this document selects shows the change (still a new version, so a miss).
      if (shows) {
        expect(after.text).not.toBe(cached.text);
        expect(shows(after.text)).toBe(true);
      }
    });
  }

  it('a write from plain SQL (another process, the CLI) invalidates too', async () => {
    await read();
    const before = stats();
    await t.app.prisma.$executeRaw`UPDATE "SiteSection" SET "title" = 'Renamed in SQL' WHERE "id" = ${sectionId}`;
    const after = await read();
    expect(stats().misses).toBe(before.misses + 1);
    expect(after.text).toContain('Renamed in SQL');
  });

  it('opening a change request on a shown space changes nothing a reader sees and keeps the entry', async () => {
    await read();
    await mutate(`mutation($input: CreateChangeRequestInput!) { createChangeRequest(input: $input) { changeRequest { id } } }`, { spaceId: spaceB, subject: 'Draft' });
    const before = stats();
    await read();
    expect(stats().hits).toBe(before.hits + 1);
  });

  it('a removed member stops getting hits at once, on an unpublished site only members may read', async () => {
    const reader = await t.createUser('read');
    await mutate(`mutation($input: SiteKeyInput!) { unpublishSite(input: $input) { site { id } } }`, { siteId });
    try {
      expect((await read(reader.token)).status).toBe(200);
      expect((await read(reader.token)).status).toBe(200);
      const before = stats();
      await mutate(`mutation($input: RemoveMemberInput!) { removeMember(input: $input) { deleted } }`, { organizationId: t.org.id, userId: reader.user.id });
      const denied = await read(reader.token);
      expect(denied.json.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
      expect(denied.json.data?.publishedSite ?? null).toBeNull();
      expect(stats().hits).toBe(before.hits);
    } finally {
      await mutate(`mutation($input: SiteKeyInput!) { publishSite(input: $input) { site { id } } }`, { siteId });
    }
  });

  it('a revoked token stops getting hits at once', async () => {
    const reader = await t.createUser('read');
    expect((await read(reader.token)).status).toBe(200);
    expect((await read(reader.token)).status).toBe(200);
    const tokens = await t.app.prisma.apiToken.findMany({ where: { userId: reader.user.id } });
    await t.gql(`mutation($input: RevokeApiTokenInput!) { revokeApiToken(input: $input) { deleted } }`, { input: { id: tokens[0].id } }, reader.token);
    const before = stats();
    const after = await read(reader.token);
    expect(after.status).toBe(401);
    expect(stats().hits).toBe(before.hits);
  });

  it('a deactivated share key stops getting hits at once', async () => {
    await mutate(`mutation($input: UpdateSiteInput!) { updateSite(input: $input) { site { id } } }`, { siteId, visibility: 'share_link' });
    const link = (await mutate(`mutation($input: CreateSiteShareLinkInput!) { createSiteShareLink(input: $input) { shareLink { id key } } }`, { siteId, name: 'Outside' })).createSiteShareLink.shareLink;
    const outsider = await t.createUser(undefined);
    try {
      expect((await read(outsider.token, { shareKey: link.key })).status).toBe(200);
      expect((await read(outsider.token, { shareKey: link.key })).status).toBe(200);
      // Without the key the outsider gets nothing, cached entry or not.
      expect((await read(outsider.token)).json.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
      // Deactivating the key bumps the version too, but the gate refuses first: this is the access check, not the version.
      await t.app.prisma.$executeRaw`UPDATE "ShareLink" SET "active" = false WHERE "id" = ${link.id}`;
      const before = stats();
      const denied = await read(outsider.token, { shareKey: link.key });
      expect(denied.json.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
      expect(stats().hits).toBe(before.hits);
    } finally {
      await mutate(`mutation($input: UpdateSiteInput!) { updateSite(input: $input) { site { id } } }`, { siteId, visibility: 'public' });
    }
  });

  it('two processes on one database agree: a write through one invalidates the other', async () => {
    const other = await startSecondApp(t);
    try {
      const readOther = () =>
        fetch(`${other.baseUrl}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${t.token}` }, body: JSON.stringify({ query: STRUCTURE, variables: { siteId } }) }).then((r) => r.text());
      await readOther();
      await readOther();
      expect(other.app.server.publishedCache.stats.hits).toBe(1);
      await mutate(`mutation($input: UpdateSiteInput!) { updateSite(input: $input) { site { id } } }`, { siteId, title: 'Changed elsewhere' });
      expect(await readOther()).toContain('Changed elsewhere');
      expect(other.app.server.publishedCache.stats.hits).toBe(1);
    } finally {
      await other.close();
    }
  }, 120_000);
});

describe('published-structure cache: bounded by bytes', () => {
  it('visitor claims over the bound are a BAD_REQUEST naming visitor.claims', async () => {
    const outsider = await t.createUser();
    expect((await read(outsider.token)).status).toBe(200);
    const refused = async (claims: unknown) => {
      const r = await read(outsider.token, { visitor: { claims } });
      // The field fails, not the request: its lookup is null (nullable lookups).
      expect(r.json.data).toEqual({ publishedSite: null });
      expect(r.json.errors?.[0].extensions).toMatchObject({ code: 'BAD_REQUEST', field: 'visitor.claims' });
    };
    await refused({ pad: 'x'.repeat(8 * 1024) });
    await refused(Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`k${i}`, true])));
    await refused({ a: { b: { c: { d: { e: { f: true } } } } } });
    await refused({ unsigned: Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`k${i}`, [1, 2]])) });
    // Within the bounds: fine.
    expect((await read(outsider.token, { visitor: { claims: { unsigned: { beta: true, plan: 'pro', region: ['eu'] } } } })).status).toBe(200);
  });

  it('requests with distinct 3 MiB pads (the attack) are refused and leave the cache as it was', async () => {
    const outsider = await t.createUser();
    await read(outsider.token);
    const cache = t.app.server.publishedCache;
    const before = { ...cache.size(), stores: cache.stats.stores };
    const pad = 'p'.repeat(3 * 1024 * 1024);
    // 40 (the attack took 135; each is refused the same way), one at a time: one client's
    // share of the body budget (4 MiB, src/http/limits.ts) answers a second 3 MiB body at once 503.
    for (let i = 0; i < 40; i++) {
      const r = await read(outsider.token, { visitor: { claims: { pad: `${i}${pad}` } } });
      expect(r.json.errors?.[0].extensions?.field, r.text.slice(0, 300)).toBe('visitor.claims');
    }
    expect(cache.stats.stores).toBe(before.stores);
    expect(cache.size().bytes).toBe(before.bytes);
  }, 120_000);

  it('pads just under the bound: the counted size (keys and values) stays under the bound, and keys are digests', async () => {
    const maxBytes = 128 * 1024;
    const other = await startSecondApp(t, { structureCacheBytes: maxBytes, rateLimit: { ...t.app.config.rateLimit, enabled: false } });
    try {
      const outsider = await t.createUser();
      const cache = other.app.server.publishedCache;
      let ok = 0;
      for (let i = 0; i < 200; i += 4) {
        const rs = await Promise.all(
          [0, 1, 2, 3].map((k) =>
            fetch(`${other.baseUrl}/graphql`, {
              method: 'POST',
              headers: { 'content-type': 'application/json', authorization: `Bearer ${outsider.token}` },
              body: JSON.stringify({ query: STRUCTURE, variables: { siteId, visitor: { claims: { unsigned: { pad: `${i + k}`.padEnd(8000, 'x') } } }, unused: 'u'.repeat(100_000) } }),
            }),
          ),
        );
        for (const r of rs) if (r.status === 200) ok++;
        expect(cache.size().bytes).toBeLessThanOrEqual(maxBytes);
      }
      expect(ok).toBe(200);
      expect(cache.stats.stores).toBe(200);
      // Evicted as it filled: fewer entries than requests, the bound nearly used.
      expect(cache.size().entries).toBeLessThan(200);
      expect(cache.size().bytes).toBeGreaterThan(maxBytes / 2);
      // Each key is a sha256 digest (43 base64url characters), whatever the claims' size.
      for (const key of cache.keys()) expect(key).toMatch(/^[A-Za-z0-9_-]{43}$/);
    } finally {
      await other.close();
    }
  }, 120_000);
});
