// Links and their status: GET SPACE/links and GET SPACE/content/page/{pageId}/links.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers.ts';
import { expectValidResponse } from './openapi.ts';

let t: TestApp;
let spaceId: string;
let guide: string;
let faq: string;

beforeAll(async () => {
  t = await startTestApp();
  spaceId = (await t.rest('POST', `/v1/orgs/${t.org.id}/spaces`, { title: 'Links' })).body.id;
  const r = await edit([
    {
      operation: 'insert_page',
      title: 'Guide',
      document: {
        markdown: [
          'Read the [setup](./setup.md) first.',
          'Also see the [FAQ](./faq.md), [the FAQ again](/faq), [Example](https://example.com/docs) and',
          `[our app](${t.app.config.appUrl}/s/somewhere), a [missing file](/files/file_0000000000000000000000) and [an anchor](#top).`,
        ].join('\n'),
      },
    },
    { operation: 'insert_page', title: 'FAQ', document: { markdown: 'Questions. Back to the [guide](./guide.md).' } },
  ]);
  [guide, faq] = r.body.changes.map((c: any) => c.page.id);
});
afterAll(async () => {
  await t?.close();
});

function edit(changes: unknown[]) {
  return t.rest('POST', `/v1/spaces/${spaceId}/content`, { changes });
}

const byStatus = (items: any[], status: string) => items.filter((i) => i.status === status);

describe('space links', () => {
  it('lists links once per target with status ok, broken and in-app (official client, valid)', async () => {
    const res = await t.client().spaces.listSpaceLinks(spaceId);
    expectValidResponse('GET', '/spaces/{spaceId}/links', 200, res.data);
    const items = res.data.items as any[];
    expect(res.data.count).toBe(6);
    expect(res.data.stats).toEqual({ total: 6, broken: { total: 2 } });
    // The two links to the FAQ (relative and absolute path) are one target with one location.
    const toFaq = items.find((i) => i.targetReference.kind === 'page' && i.targetReference.page.id === faq);
    expect(toFaq).toMatchObject({ status: 'ok', relation: 'reference', locationReferences: [{ kind: 'page', page: { id: guide }, space: { id: spaceId } }] });
    const toGuide = items.find((i) => i.targetReference.kind === 'page' && i.targetReference.page.id === guide);
    expect(toGuide.locationReferences.map((l: any) => l.page.id)).toEqual([faq]);
    expect(byStatus(items, 'broken').map((i) => [i.targetReference.url, i.relation]).sort()).toEqual([
      ['file:file_0000000000000000000000', 'dependsOn'],
      ['setup', 'reference'],
    ]);
    expect(byStatus(items, 'in-app').map((i) => i.targetReference.url)).toEqual([`${t.app.config.appUrl}/s/somewhere`]);
    expect(byStatus(items, 'ok').map((i) => i.targetReference.kind).sort()).toEqual(['page', 'page', 'url']);
  });

  it('filters by status and pages with keyset cursors', async () => {
    const broken = await t.client().spaces.listSpaceLinks(spaceId, { status: 'broken' as never });
    expectValidResponse('GET', '/spaces/{spaceId}/links', 200, broken.data);
    expect(broken.data.items.map((i: any) => i.status)).toEqual(['broken', 'broken']);
    expect(broken.data.count).toBe(2);
    expect(broken.data.stats.total).toBe(6);
    const inApp = await t.rest('GET', `/v1/spaces/${spaceId}/links?status=in-app`);
    expect(inApp.body.items).toHaveLength(1);

    const seen: string[] = [];
    let page: string | undefined;
    do {
      const r = await t.rest('GET', `/v1/spaces/${spaceId}/links?limit=4${page ? `&page=${encodeURIComponent(page)}` : ''}`);
      expect(r.status).toBe(200);
      seen.push(...r.body.items.map((i: any) => JSON.stringify(i.targetReference.url ?? i.targetReference.page?.id)));
      page = r.body.next?.page;
    } while (page);
    expect(seen).toHaveLength(6);
    expect(new Set(seen).size).toBe(6);

    const big = await t.rest('GET', `/v1/spaces/${spaceId}/links?limit=1000`);
    expect(big.status).toBe(200);
    expectValidResponse('GET', '/spaces/{spaceId}/links', 200, big.body);

    for (const [q, field] of [
      ['status=dead', 'status'],
      ['limit=-1', 'limit'],
      ['sort=x', 'sort'],
    ]) {
      const r = await t.rest('GET', `/v1/spaces/${spaceId}/links?${q}`);
      expect(r.status, q).toBe(400);
      expect(r.body.error.message).toContain(field);
    }
  });

  it('a broken link becomes ok once its target page exists', async () => {
    const before = await t.rest('GET', `/v1/spaces/${spaceId}/content/page/${guide}/links?status=broken`);
    expect(before.body.items.map((i: any) => i.targetReference.url)).toContain('setup');
    await edit([{ operation: 'insert_page', title: 'Setup', document: { markdown: 'Install.' } }]);
    const after = await t.client().spaces.listPageLinksInSpace(spaceId, guide);
    expectValidResponse('GET', '/spaces/{spaceId}/content/page/{pageId}/links', 200, after.data);
    const setup = (after.data.items as any[]).find((i) => i.targetReference.kind === 'page' && i.targetReference.page.title === 'Setup');
    expect(setup.status).toBe('ok');
    expect(after.data.stats.broken.total).toBe(1);
    const space = await t.rest('GET', `/v1/spaces/${spaceId}/links`);
    expect(space.body.stats).toEqual({ total: 6, broken: { total: 1 } });
  });

  it('a page link breaks when its target is deleted', async () => {
    await edit([{ operation: 'delete_page', page: faq }]);
    const links = await t.rest('GET', `/v1/spaces/${spaceId}/content/page/${guide}/links?status=broken`);
    expect(links.body.items.map((i: any) => i.targetReference.url).sort()).toEqual(['file:file_0000000000000000000000', '/faq', 'faq'].sort());
  });

  it('page links: 404 for a page not in the revision, outsiders and missing spaces; 401 without a token', async () => {
    expect((await t.rest('GET', `/v1/spaces/${spaceId}/content/page/page_missing/links`)).status).toBe(404);
    expect((await t.rest('GET', `/v1/spaces/${spaceId}/content/page/${faq}/links`)).status).toBe(404); // deleted above
    expect((await t.rest('GET', `/v1/spaces/space_missing/content/page/${guide}/links`)).status).toBe(404);
    const outsider = await t.createUser(undefined);
    expect((await t.rest('GET', `/v1/spaces/${spaceId}/content/page/${guide}/links`, undefined, outsider.token)).status).toBe(404);
    expect((await t.rest('GET', `/v1/spaces/${spaceId}/links`, undefined, outsider.token)).status).toBe(404);
    expect((await t.rest('GET', `/v1/spaces/${spaceId}/links`, undefined, null)).status).toBe(401);
    const reader = await t.createUser('read');
    expect((await t.rest('GET', `/v1/spaces/${spaceId}/links`, undefined, reader.token)).status).toBe(200);
  });

  it('GraphQL: Revision.links and RevisionPage.links with stats', async () => {
    const r = await t.gql(
      `query($id: ID!) { space(id: $id) { revision {
        links(status: broken) { totalCount stats { total broken } nodes { status relation target { kind raw pageId fileId } locations { pageId } } }
        pages { title links(first: 1) { totalCount pageInfo { hasNextPage } } }
      } } }`,
      { id: spaceId },
    );
    expect(r.errors).toBeUndefined();
    const links = r.data.space.revision.links;
    expect(links.stats.broken).toBe(links.totalCount);
    expect(links.nodes.every((n: any) => n.status === 'broken' && n.locations[0].pageId === guide)).toBe(true);
    const g = r.data.space.revision.pages.find((p: any) => p.title === 'Guide');
    expect(g.links.totalCount).toBeGreaterThan(1);
    expect(g.links.pageInfo.hasNextPage).toBe(true);
  });
});
