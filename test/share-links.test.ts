// Share links: list, create, update, delete; and the reading operations that take `shareKey`
// answering for a share-link site only with an active key of that site.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectAccess, type TestApp } from './helpers.ts';
import { expectValidResponse } from './openapi.ts';
import { Access } from '../src/auth/access.ts';
import { createSite, createSpace, startSiteTests, type TestUser } from './fixtures/sites.ts';

let t: TestApp;
let reader: TestUser;
let outsider: TestUser;
let ORG: string;

beforeAll(async () => {
  ({ t, ORG, reader, outsider } = await startSiteTests());
});
afterAll(async () => {
  await t?.close();
});

const newSpace = (title?: string) => createSpace(t, title);
const newSite = async (body?: Record<string, unknown>) => (await createSite(t, { title: 'Shared docs', ...body })).id as string;

describe('share links', () => {
  it('creates (201) with an unguessable key, lists, updates, deletes (205 / 204)', async () => {
    const siteId = await newSite();
    const res = await t.client().orgs.createSiteShareLink(t.org.id, siteId, { name: 'Partners' });
    expect(res.status).toBe(201);
    expectValidResponse('POST', '/orgs/{organizationId}/sites/{siteId}/share-links', 201, res.data);
    expect(res.data).toMatchObject({ object: 'share-link', name: 'Partners', active: true });
    const key = new URL(res.data.urls.published!).searchParams.get('share')!;
    expect(key).toMatch(/^shk_[A-Za-z0-9_-]{43}$/);
    const other = await t.client().orgs.createSiteShareLink(t.org.id, siteId, { name: '' });
    expect(new URL(other.data.urls.published!).searchParams.get('share')).not.toBe(key);

    const list = await t.client().orgs.listSiteShareLinks(t.org.id, siteId);
    expectValidResponse('GET', '/orgs/{organizationId}/sites/{siteId}/share-links', 200, list.data);
    expect(list.data.items.map((l) => l.id)).toEqual([res.data.id, other.data.id]);
    expect(list.data.count).toBe(2);

    const upd = await t.client().orgs.updateSiteShareLinkById(t.org.id, siteId, res.data.id, { active: false, name: 'Old partners' });
    expectValidResponse('PATCH', '/orgs/{organizationId}/sites/{siteId}/share-links/{shareLinkId}', 200, upd.data);
    expect(upd.data).toMatchObject({ active: false, name: 'Old partners' });

    expect((await t.rest('DELETE', `${ORG}/sites/${siteId}/share-links/${other.data.id}`)).status).toBe(205);
    expect((await t.rest('DELETE', `${ORG}/sites/${siteId}/share-links/${other.data.id}`)).status).toBe(204);
    expect((await t.client().orgs.listSiteShareLinks(t.org.id, siteId)).data.count).toBe(1);
  });

  it('400 naming the field, and nothing changes', async () => {
    const siteId = await newSite();
    const link = (await t.client().orgs.createSiteShareLink(t.org.id, siteId, { name: 'Keep' })).data;
    for (const body of [{}, { name: 'n'.repeat(51) }, { name: 5 }, { name: 'x', key: 'mine' }]) {
      const r = await t.rest('POST', `${ORG}/sites/${siteId}/share-links`, body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error.message).toMatch(/name|key/);
    }
    for (const [body, field] of [
      [{}, 'body'],
      [{ active: 'no' }, 'active'],
      [{ name: 'n'.repeat(51) }, 'name'],
      [{ key: 'shk_mine' }, 'key'],
    ] as const) {
      const r = await t.rest('PATCH', `${ORG}/sites/${siteId}/share-links/${link.id}`, body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error.message).toContain(field);
    }
    const list = await t.client().orgs.listSiteShareLinks(t.org.id, siteId);
    expect(list.data.items).toHaveLength(1);
    expect(list.data.items[0]).toMatchObject({ name: 'Keep', active: true });
  });

  it('admins only (share links are credentials): 403 for readers, 404 for outsiders and missing ones, 401', async () => {
    const siteId = await newSite();
    const link = (await t.client().orgs.createSiteShareLink(t.org.id, siteId, { name: 'Team' })).data;
    const belowAdmin = { anonymous: 401, outsider: 404, guest: 403, reader: 403, editor: 403, creator: 403 };
    await expectAccess(t, (c) => c.client.orgs.listSiteShareLinks(t.org.id, siteId), { ...belowAdmin, admin: 200 }, 'listSiteShareLinks');
    await expectAccess(t, (c) => c.client.orgs.createSiteShareLink(t.org.id, siteId, { name: 'Mine' }), belowAdmin, 'createSiteShareLink');
    await expectAccess(t, (c) => c.client.orgs.updateSiteShareLinkById(t.org.id, siteId, link.id, { active: false }), { outsider: 404, reader: 403 }, 'updateSiteShareLinkById');
    await expectAccess(t, { method: 'GET', path: `${ORG}/sites/${siteId}/share-links` }, { ...belowAdmin, admin: 200 });
    await expectAccess(t, { method: 'PATCH', path: `${ORG}/sites/${siteId}/share-links/${link.id}`, body: { active: false } }, belowAdmin);
    await expectAccess(t, { method: 'DELETE', path: `${ORG}/sites/${siteId}/share-links/${link.id}` }, belowAdmin);
    expect((await t.client().orgs.listSiteShareLinks(t.org.id, siteId)).data.items.map((l) => [l.id, l.active])).toEqual([[link.id, true]]);
    expect((await t.rest('PATCH', `${ORG}/sites/${siteId}/share-links/shl_missing`, { active: false })).status).toBe(404);
    expect((await t.rest('GET', `${ORG}/sites/site_missing/share-links`)).status).toBe(404);
    expect((await t.rest('DELETE', `${ORG}/sites/site_missing/share-links/${link.id}`)).status).toBe(404);
    const node = await t.gql(`query($id: ID!) { node(id: $id) { id } }`, { id: link.id }, reader.token);
    expect(node.data?.node ?? null).toBeNull();
    expect((await t.gql(`query($id: ID!) { node(id: $id) { id } }`, { id: link.id })).data.node).toEqual({ id: link.id });
  });
});

describe('reading a share-link site with shareKey', () => {
  it('answers with an active key; 404 with a wrong, another site\'s, deactivated or deleted key', async () => {
    const spaceId = await newSpace('Secret guide');
    const siteId = await newSite({ visibility: 'share-link', spaces: [spaceId] });
    await t.client().orgs.publishSite(t.org.id, siteId);
    const link = (await t.client().orgs.createSiteShareLink(t.org.id, siteId, { name: 'Outside' })).data;
    const key = new URL(link.urls.published!).searchParams.get('share')!;
    const otherSite = await newSite({ visibility: 'share-link', spaces: [await newSpace()] });
    const otherLink = (await t.client().orgs.createSiteShareLink(t.org.id, otherSite, { name: 'Other' })).data;
    const otherKey = new URL(otherLink.urls.published!).searchParams.get('share')!;

    const readAll = async (token: string, shareKey?: string) => {
      const q = shareKey === undefined ? '' : `?shareKey=${encodeURIComponent(shareKey)}`;
      return Promise.all(
        ['published', 'structure', 'sections', 'site-spaces'].map(async (what) => (await t.rest('GET', `${ORG}/sites/${siteId}/${what}${q}`, undefined, token)).status),
      );
    };

    const ok = await outsider.client.orgs.getPublishedContentSite(t.org.id, siteId, { shareKey: key });
    expectValidResponse('GET', '/orgs/{organizationId}/sites/{siteId}/published', 200, ok.data);
    expect(ok.data.site.urls.published).toContain(`share=${encodeURIComponent(key)}`);
    expect((ok.data.structure.structure[0] as any).urls.published).toContain('share=');
    const sections = await outsider.client.orgs.listSiteSections(t.org.id, siteId, { shareKey: key });
    expectValidResponse('GET', '/orgs/{organizationId}/sites/{siteId}/sections', 200, sections.data);
    const siteSpaces = await outsider.client.orgs.listSiteSpaces(t.org.id, siteId, { shareKey: key });
    expectValidResponse('GET', '/orgs/{organizationId}/sites/{siteId}/site-spaces', 200, siteSpaces.data);
    expect(siteSpaces.data.items[0].space.id).toBe(spaceId);
    expect(siteSpaces.data.items[0].urls.published).toContain(`share=${encodeURIComponent(key)}`);
    expect(await readAll(outsider.token, key)).toEqual([200, 200, 200, 200]);

    expect(await readAll(outsider.token)).toEqual([404, 404, 404, 404]);
    expect(await readAll(outsider.token, 'shk_wrong')).toEqual([404, 404, 404, 404]);
    expect(await readAll(outsider.token, `${key}x`)).toEqual([404, 404, 404, 404]);
    expect(await readAll(outsider.token, otherKey)).toEqual([404, 404, 404, 404]);
    // Members preview without a key, but a key they give must still be valid.
    expect(await readAll(reader.token)).toEqual([200, 200, 200, 200]);
    expect(await readAll(reader.token, 'shk_wrong')).toEqual([404, 404, 404, 404]);

    // Deactivated: stops working at once; reactivated: works again.
    await t.client().orgs.updateSiteShareLinkById(t.org.id, siteId, link.id, { active: false });
    expect(await readAll(outsider.token, key)).toEqual([404, 404, 404, 404]);
    expect(await readAll(reader.token, key)).toEqual([404, 404, 404, 404]);
    await t.client().orgs.updateSiteShareLinkById(t.org.id, siteId, link.id, { active: true });
    expect(await readAll(outsider.token, key)).toEqual([200, 200, 200, 200]);

    // Unpublished: no audience at all, key or not.
    await t.client().orgs.unpublishSite(t.org.id, siteId);
    expect(await readAll(outsider.token, key)).toEqual([404, 404, 404, 404]);
    await t.client().orgs.publishSite(t.org.id, siteId);

    // GraphQL answers the same way.
    const q = `query($id: ID!, $key: String) { publishedSite(siteId: $id, shareKey: $key) { siteId structure { type } } }`;
    const viaGql = await t.gql(q, { id: siteId, key }, outsider.token);
    expect(viaGql.errors).toBeUndefined();
    expect(viaGql.data.publishedSite.siteId).toBe(siteId);
    expect((await t.gql(q, { id: siteId, key: 'shk_wrong' }, outsider.token)).errors?.[0].extensions?.code).toBe('NOT_FOUND');

    // Deleted: gone at once.
    expect((await t.rest('DELETE', `${ORG}/sites/${siteId}/share-links/${link.id}`)).status).toBe(205);
    expect(await readAll(outsider.token, key)).toEqual([404, 404, 404, 404]);
    expect((await t.rest('GET', `${ORG}/sites/${siteId}/published?shareKey=${key}`, undefined, null)).status).toBe(404); // no token: the anonymous reader, and the key is gone
  });

  it('resolveShareKey / spaceVisibleWithShareKey for the spaces area', async () => {
    const spaceId = await newSpace('Shared space');
    const hidden = await newSpace('Not on the site');
    const siteId = await newSite({ visibility: 'share-link', spaces: [spaceId] });
    const link = (await t.client().orgs.createSiteShareLink(t.org.id, siteId, { name: 'K' })).data;
    const key = new URL(link.urls.published!).searchParams.get('share')!;
    const access = new Access(t.app.prisma, null);
    expect(await access.resolveShareKey(siteId, key)).toMatchObject({ shareLinkId: link.id, siteId, organizationId: t.org.id });
    expect(await access.resolveShareKey(null, key)).toMatchObject({ siteId });
    expect(await access.resolveShareKey('site_other', key)).toBeNull();
    expect(await access.resolveShareKey(siteId, 'shk_nope')).toBeNull();
    expect(await access.resolveShareKey(siteId, 'nope')).toBeNull();
    expect(await access.spaceVisibleWithShareKey(spaceId, key)).toBe(false); // not published yet
    await t.client().orgs.publishSite(t.org.id, siteId);
    expect(await access.spaceVisibleWithShareKey(spaceId, key)).toBe(true);
    expect(await access.spaceVisibleWithShareKey(hidden, key)).toBe(false);
    await t.client().orgs.updateSiteShareLinkById(t.org.id, siteId, link.id, { active: false });
    expect(await access.resolveShareKey(siteId, key)).toBeNull();
    expect(await access.spaceVisibleWithShareKey(spaceId, key)).toBe(false);
  });
});
