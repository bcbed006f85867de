import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers.ts';
import { expectValidResponse } from './openapi.ts';
import { applyChanges, versionIdsOf } from '../src/domain/revisions.ts';
import { revisionTree } from '../src/domain/revision-tree.ts';
import { newId } from '../src/lib/ids.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.close();
});

async function space(orgId: string, body: Record<string, unknown> = {}) {
  const r = await t.rest('POST', `/v1/orgs/${orgId}/spaces`, { title: 'S', ...body });
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

const INSTALL = `Read this first.

## Prerequisites

You need PostgreSQL and a terminal.

## Troubleshooting

If the zebra crossing blinks, restart the daemon.

## Uninstalling

Remove the package.
`;

describe('space search', () => {
  let spaceId: string;
  let guideId: string;
  let installId: string;

  beforeAll(async () => {
    spaceId = await space(t.org.id, { title: 'Handbook' });
    const r = await edit(spaceId, [
      { operation: 'insert_page', ref: 'guide', title: 'Guide', document: { markdown: 'The guide to everything.' } },
      { operation: 'insert_page', title: 'Other', document: { markdown: 'Nothing about animals.' } },
    ]);
    guideId = r.outcomes[0].pageId;
    const r2 = await edit(spaceId, [{ operation: 'insert_page', title: 'Installation', into: guideId, document: { markdown: INSTALL } }]);
    installId = r2.outcomes[0].pageId;
  });

  it('finds a word in a nested page and returns the matching section (official client)', async () => {
    const res = await t.client().spaces.searchSpaceContent(spaceId, { query: 'zebra' });
    expectValidResponse('GET', '/spaces/{spaceId}/search', 200, res.data);
    expect(res.data.count).toBe(1);
    expect(res.data.next).toBeUndefined();
    const [page] = res.data.items;
    expect(page).toMatchObject({ id: installId, title: 'Installation', path: 'guide/installation' });
    expect(page.urls.app).toContain(`/s/${spaceId}/guide/installation`);
    expect(page.sections).toEqual([
      {
        id: `${installId}#troubleshooting`,
        title: 'Troubleshooting',
        path: 'guide/installation#troubleshooting',
        body: 'If the zebra crossing blinks, restart the daemon.',
        urls: { app: expect.stringContaining('/guide/installation#troubleshooting') },
      },
    ]);
  });

  it('stems words, ranks titles first, and falls back to sections with any of the terms', async () => {
    const stemmed = await t.rest('GET', `/v1/spaces/${spaceId}/search?query=${encodeURIComponent('crossings')}`);
    expect(stemmed.body.items.map((i: any) => i.id)).toEqual([installId]);

    const both = await t.rest('GET', `/v1/spaces/${spaceId}/search?query=${encodeURIComponent('zebra postgresql')}`);
    expect(both.body.items).toHaveLength(1);
    expect(both.body.items[0].sections.map((s: any) => s.title).sort()).toEqual(['Prerequisites', 'Troubleshooting']);

    await edit(spaceId, [{ operation: 'insert_page', title: 'Appendix', document: { markdown: 'Notes written after the installation.' } }]);
    const ranked = await t.rest('GET', `/v1/spaces/${spaceId}/search?query=installation`);
    expect(ranked.body.items.map((i: any) => i.title)).toEqual(['Installation', 'Appendix']);
    expect(ranked.body.count).toBe(2);
    // A page matching only by title has no matching section to show.
    expect(ranked.body.items[0].sections).toEqual([]);
    expectValidResponse('GET', '/spaces/{spaceId}/search', 200, ranked.body);

    const phrase = await t.rest('GET', `/v1/spaces/${spaceId}/search?query=${encodeURIComponent('"zebra crossing" -daemonless')}`);
    expect(phrase.body.items.map((i: any) => i.id)).toEqual([installId]);
    const none = await t.rest('GET', `/v1/spaces/${spaceId}/search?query=the`);
    expect(none.body).toEqual({ items: [], count: 0 });
  });

  it('pages through results with cursors', async () => {
    const s = await space(t.org.id, { title: 'Many' });
    await edit(s, Array.from({ length: 5 }, (_, i) => ({ operation: 'insert_page', title: `Page ${i}`, document: { markdown: `lighthouse ${'keeper '.repeat(i)}` } })));
    const seen: string[] = [];
    let page: string | undefined;
    do {
      const r = await t.rest('GET', `/v1/spaces/${s}/search?query=lighthouse&limit=2${page ? `&page=${encodeURIComponent(page)}` : ''}`);
      expect(r.status).toBe(200);
      expect(r.body.count).toBe(5);
      seen.push(...r.body.items.map((i: any) => i.id));
      page = r.body.next?.page;
    } while (page);
    expect(new Set(seen).size).toBe(5);
    expect((await t.rest('GET', `/v1/spaces/${s}/search?query=lighthouse&page=garbage`)).status).toBe(400);
  });

  it('searches the current revision only', async () => {
    const s = await space(t.org.id, { title: 'Changing' });
    const r = await edit(s, [{ operation: 'insert_page', title: 'Notes', document: { markdown: 'A platypus appears.' } }]);
    expect((await t.rest('GET', `/v1/spaces/${s}/search?query=platypus`)).body.count).toBe(1);
    await edit(s, [{ operation: 'update_page', page: r.outcomes[0].pageId, document: { markdown: 'An echidna appears.' } }]);
    expect((await t.rest('GET', `/v1/spaces/${s}/search?query=platypus`)).body.count).toBe(0);
    expect((await t.rest('GET', `/v1/spaces/${s}/search?query=echidna`)).body.count).toBe(1);
  });

  it('400 naming query; 401, 404 for outsiders, missing and deleted spaces', async () => {
    for (const qs of ['', '?query=', `?query=${'a'.repeat(513)}`, '?query=x&bogus=1']) {
      const r = await t.rest('GET', `/v1/spaces/${spaceId}/search${qs}`);
      expect(r.status, qs).toBe(400);
      expect(r.body.error.message).toContain(qs.includes('bogus') ? 'bogus' : 'query');
    }
    const g = await t.gql(`query($id: ID!) { space(id: $id) { search(query: "${'b'.repeat(513)}") { totalCount } } }`, { id: spaceId });
    expect(g.errors?.[0].extensions).toMatchObject({ code: 'BAD_REQUEST', field: 'query' });
    expect((await t.rest('GET', `/v1/spaces/${spaceId}/search?query=zebra`, undefined, null)).status).toBe(401);
    const outsider = await t.createUser(undefined);
    expect((await t.rest('GET', `/v1/spaces/${spaceId}/search?query=zebra`, undefined, outsider.token)).status).toBe(404);
    expect((await t.rest('GET', `/v1/spaces/space_missing/search?query=zebra`)).status).toBe(404);
    const doomed = await space(t.org.id, { title: 'Doomed' });
    await edit(doomed, [{ operation: 'insert_page', title: 'Zebra', document: { markdown: 'zebra' } }]);
    await t.rest('DELETE', `/v1/spaces/${doomed}`);
    expect((await t.rest('GET', `/v1/spaces/${doomed}/search?query=zebra`)).status).toBe(404);
  });
});

describe('the search index', () => {
  const search = async (spaceId: string, query: string) => (await t.rest('GET', `/v1/spaces/${spaceId}/search?query=${encodeURIComponent(query)}`)).body;

  it('follows merges, renames of parent pages and noIndex', async () => {
    const s = await space(t.org.id, { title: 'Index' });
    const manualId = (await edit(s, [{ operation: 'insert_page', title: 'Manual', document: { markdown: 'Top.' } }])).outcomes[0].pageId;
    const r = await edit(s, [{ operation: 'insert_page', into: manualId, title: 'Pelican', document: { markdown: '## Habitat\n\nThe pelican fishes.' } }]);
    const pelicanId = r.outcomes[0].pageId;
    expect((await search(s, 'pelican')).items[0].path).toBe('manual/pelican');

    // Renaming the parent moves the child's path, though the child's version is unchanged.
    await edit(s, [{ operation: 'update_page', page: manualId, title: 'Handbook', slug: 'handbook' }]);
    expect((await search(s, 'pelican')).items[0]).toMatchObject({ path: 'handbook/pelican', sections: [expect.objectContaining({ path: 'handbook/pelican#habitat' })] });

    // A merged change request is what search sees next.
    const cr = (await t.rest('POST', `/v1/spaces/${s}/change-requests`, { subject: 'Rewrite' })).body;
    const content = await t.rest('POST', `/v1/spaces/${s}/change-requests/${cr.id}/content`, {
      changes: [{ operation: 'update_page', page: pelicanId, document: { markdown: '## Diet\n\nThe cormorant dives.' } }],
    });
    expect(content.status, JSON.stringify(content.body)).toBe(200);
    expect((await search(s, 'cormorant')).count).toBe(0); // not merged yet
    expect((await t.rest('POST', `/v1/spaces/${s}/change-requests/${cr.id}/merge`)).body.result).toBe('merge');
    expect((await search(s, 'cormorant')).items[0].sections.map((x: any) => x.title)).toEqual(['Diet']);
    expect((await search(s, 'fishes')).count).toBe(0);

    // noIndex pages are never found; clearing the flag brings them back.
    await edit(s, [{ operation: 'update_page', page: pelicanId, noIndex: true }]);
    expect((await search(s, 'cormorant')).count).toBe(0);
    expect((await t.rest('GET', `/v1/orgs/${t.org.id}/search?query=cormorant`)).body.count).toBe(0);
    await edit(s, [{ operation: 'update_page', page: pelicanId, noIndex: false }]);
    expect((await search(s, 'cormorant')).count).toBe(1);

    // The index holds exactly the current revision's pages.
    const rows = await t.app.prisma.currentPage.findMany({ where: { spaceId: s }, select: { pageId: true, path: true } });
    expect(rows.map((x) => `${x.pageId}:${x.path}`).sort()).toEqual([`${manualId}:handbook`, `${pelicanId}:handbook/pelican`].sort());
  });

  it('still finds sections of page versions written before sections were stored', async () => {
    const s = await space(t.org.id, { title: 'Old data' });
    const r = await edit(s, [{ operation: 'insert_page', title: 'Heron', document: { markdown: 'Intro.\n\n## Wading\n\nThe heron wades.' } }]);
    const before = await search(s, 'wades');
    const versionId = versionIdsOf(await revisionTree(t.app.prisma, r.revision))[0];
    expect(await t.app.prisma.pageSection.count({ where: { versionId } })).toBe(2);
    await t.app.prisma.pageSection.deleteMany({ where: { versionId } });
    const after = await search(s, 'wades');
    expect(after).toEqual(before);
    expect(after.items[0].sections.map((x: any) => x.title)).toEqual(['Wading']);
  });

  it('answers an organization search in a fixed number of statements, however many spaces match', async () => {
    const org = (await t.gql(`mutation { createOrganization(input: { title: "Counted search" }) { id } }`)).data.createOrganization.id;
    const counts: number[] = [];
    for (const n of [2, 6]) {
      while ((await t.app.prisma.space.count({ where: { organizationId: org } })) < n) {
        const id = await space(org, { title: 'Counted' });
        await edit(id, [{ operation: 'insert_page', title: 'Ibis', document: { markdown: '## Ibis\n\nThe ibis probes.' } }]);
      }
      const { result, count } = await t.countQueries(() => t.rest('GET', `/v1/orgs/${org}/search?query=ibis`));
      expect(result.body.count).toBe(n);
      counts.push(count);
    }
    expect(counts[1]).toBe(counts[0]);
  });
});

describe('organization search', () => {
  it('returns only pages of spaces the caller may read, never deleted ones', async () => {
    const org = (await t.gql(`mutation { createOrganization(input: { title: "Search org" }) { id } }`)).data.createOrganization.id;
    const col = (await t.rest('POST', `/v1/orgs/${org}/collections`, { title: 'Shared' })).body.id;
    const granted = await space(org, { title: 'Granted' });
    const secret = await space(org, { title: 'Secret' });
    const pub = await space(org, { title: 'Public', visibility: 'public' });
    const viaCollection = await space(org, { title: 'Via collection', parent: col });
    const deleted = await space(org, { title: 'Deleted' });
    for (const id of [granted, secret, pub, viaCollection, deleted]) {
      await edit(id, [
        { operation: 'insert_page', title: 'Animals', document: { markdown: '# Animals\n\n## Stripes\n\nThe okapi has stripes.' } },
        { operation: 'insert_page', title: 'Okapi facts', document: { markdown: 'okapi okapi okapi' } },
      ]);
    }
    await t.rest('DELETE', `/v1/spaces/${deleted}`);
    const guest = await t.createUser(null, { organizationId: org });
    await t.app.prisma.contentGrant.createMany({
      data: [
        { id: newId('ContentGrant'), organizationId: org, spaceId: granted, userId: guest.user.id, role: 'read' },
        { id: newId('ContentGrant'), organizationId: org, collectionId: col, userId: guest.user.id, role: 'read' },
      ],
    });

    const adminRes = await t.client().orgs.searchOrganizationContent(org, { query: 'okapi' });
    expectValidResponse('GET', '/orgs/{organizationId}/search', 200, adminRes.data);
    expect(adminRes.data.count).toBe(4);
    expect(adminRes.data.items.map((i) => i.id).sort()).toEqual([granted, secret, pub, viaCollection].sort());
    const item = adminRes.data.items.find((i) => i.id === secret)!;
    expect(item.title).toBe('Secret');
    expect(item.pages.map((p) => p.title)).toEqual(['Okapi facts', 'Animals']);
    expect(item.pages[1].sections?.map((s) => s.title)).toEqual(['Stripes']);

    const guestRes = await t.client(guest.token).orgs.searchOrganizationContent(org, { query: 'okapi', limit: 2 });
    expectValidResponse('GET', '/orgs/{organizationId}/search', 200, guestRes.data);
    expect(guestRes.data.count).toBe(3);
    const next = await t.client(guest.token).orgs.searchOrganizationContent(org, { query: 'okapi', limit: 2, page: guestRes.data.next!.page });
    const ids = [...guestRes.data.items, ...next.data.items].map((i) => i.id);
    expect(ids.sort()).toEqual([granted, pub, viaCollection].sort());
    expect(next.data.next).toBeUndefined();

    // GraphQL: the same search on the organization.
    const g = await t.gql(`query($id: ID!) { organization(id: $id) { search(query: "okapi", first: 10) { totalCount nodes { id pages { id path } } } } }`, { id: org }, guest.token);
    expect(g.errors).toBeUndefined();
    expect(g.data.organization.search.totalCount).toBe(3);
  });

  it('400 naming query, 401, 404 for outsiders', async () => {
    expect((await t.rest('GET', `/v1/orgs/${t.org.id}/search`)).body.error.message).toContain('query');
    expect((await t.rest('GET', `/v1/orgs/${t.org.id}/search?query=${'q'.repeat(513)}`)).status).toBe(400);
    expect((await t.rest('GET', `/v1/orgs/${t.org.id}/search?query=x`, undefined, null)).status).toBe(401);
    const outsider = await t.createUser(undefined);
    expect((await t.rest('GET', `/v1/orgs/${t.org.id}/search?query=x`, undefined, outsider.token)).status).toBe(404);
    expect((await t.rest('GET', `/v1/orgs/org_missing/search?query=x`)).status).toBe(404);
  });
});
