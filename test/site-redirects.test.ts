// Site redirects: CRUD through the official client, REST and GraphQL (validated against the
// official documents), access, and the redirects a merge or a live edit records when a page moves.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GitBookAPIError } from '@gitbook/api';
import { expectAccess, startTestApp, type TestApp } from './helpers.ts';
import { expectValidNextResponse, expectValidResponse } from './openapi.ts';
import { newId } from '../src/lib/ids.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.close();
});

const SITE = (siteId: string) => `/v1/orgs/${t.org.id}/sites/${siteId}`;
const LIST = '/orgs/{organizationId}/sites/{siteId}/redirects';
const ONE = '/orgs/{organizationId}/sites/{siteId}/redirects/{siteRedirectId}';
const BY_SOURCE = '/orgs/{organizationId}/sites/{siteId}/redirect';

async function edit(spaceId: string, changes: unknown[]) {
  const r = await t.rest('POST', `/v1/spaces/${spaceId}/content`, { changes });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body;
}

/** A published site showing one new space (Intro; Guide → Setup) at the root level. */
async function newSite(title = 'Docs site') {
  const s = await t.rest('POST', `/v1/orgs/${t.org.id}/spaces`, { title: `${title} space` });
  expect(s.status).toBe(201);
  const spaceId = s.body.id as string;
  await edit(spaceId, [
    { operation: 'insert_page', ref: 'intro', title: 'Intro', document: { markdown: 'Hi' } },
    { operation: 'insert_page', ref: 'guide', title: 'Guide', document: { markdown: 'How' } },
  ]);
  const pages = await t.app.prisma.pageVersion.findMany({ where: { spaceId }, select: { pageId: true, slug: true } });
  const guide = pages.find((p) => p.slug === 'guide')!.pageId;
  await edit(spaceId, [{ operation: 'insert_page', into: guide, title: 'Setup', document: { markdown: 'Set up' } }]);
  const all = await t.app.prisma.pageVersion.findMany({ where: { spaceId }, select: { pageId: true, slug: true } });
  const page = (slug: string) => all.find((p) => p.slug === slug)!.pageId;
  const site = await t.rest('POST', `/v1/orgs/${t.org.id}/sites`, { title, spaces: [spaceId] });
  expect(site.status, JSON.stringify(site.body)).toBe(201);
  const siteId = site.body.id as string;
  expect((await t.rest('POST', `${SITE(siteId)}/publish`)).status).toBe(200);
  const siteSpace = await t.app.prisma.siteSpace.findFirstOrThrow({ where: { siteId } });
  return { siteId, spaceId, siteSpaceId: siteSpace.id, ssPath: siteSpace.path, pages: { intro: page('intro'), guide, setup: page('setup') } };
}

let site: Awaited<ReturnType<typeof newSite>>;
let other: Awaited<ReturnType<typeof newSite>>;
beforeAll(async () => {
  site = await newSite('Main site');
  other = await newSite('Other site');
}, 60_000);

const count = (siteId: string) => t.app.prisma.siteRedirect.count({ where: { siteId } });

describe('site redirects through the official client', () => {
  it('create, list, get by source, update, delete (205 then 204)', async () => {
    const api = t.client();
    const created = await api.orgs.createSiteRedirect(t.org.id, site.siteId, { source: '/old/setup', destination: { kind: 'site-page', siteSpaceId: site.siteSpaceId, pageId: site.pages.setup } });
    expect(created.status).toBe(201);
    expectValidResponse('POST', LIST, 201, created.data);
    expect(created.data).toEqual({ object: 'site-redirect', id: expect.stringMatching(/^sitered_/), source: '/old/setup', destination: { kind: 'site-page', siteSpaceId: site.siteSpaceId, pageId: site.pages.setup } });
    const id = created.data.id;

    const list = await api.orgs.listSiteRedirects(t.org.id, site.siteId);
    expectValidResponse('GET', LIST, 200, list.data);
    expect(list.data.items.map((r) => r.id)).toEqual([id]);
    expect(list.data.count).toBe(1);

    // The source is normalized: a trailing slash and a query do not matter.
    const found = await t.rest('GET', `${SITE(site.siteId)}/redirect?source=${encodeURIComponent('/old/setup/?utm=x')}`);
    expect(found.status).toBe(200);
    expectValidResponse('GET', BY_SOURCE, 200, found.body);
    expect(found.body).toEqual({ redirect: created.data, target: `${t.app.config.publicUrl}/sites/${site.siteId}/${site.ssPath}/guide/setup` });
    const viaClient = await api.orgs.getSiteRedirectBySource(t.org.id, site.siteId, { source: '/old/setup' });
    expect(viaClient.data.redirect.id).toBe(id);
    const none = await t.rest('GET', `${SITE(site.siteId)}/redirect?source=/nothing`);
    expect(none.status).toBe(404);
    expectValidResponse('GET', BY_SOURCE, 404, none.body);

    const updated = await api.orgs.updateSiteRedirectById(t.org.id, site.siteId, id, { source: '/older/setup', destination: { kind: 'site-space', siteSpaceId: site.siteSpaceId } });
    expectValidResponse('PATCH', ONE, 200, updated.data);
    expect(updated.data).toMatchObject({ source: '/older/setup', destination: { kind: 'site-space', siteSpaceId: site.siteSpaceId } });

    const del = await t.rest('DELETE', `${SITE(site.siteId)}/redirects/${id}`);
    expect(del.status).toBe(205);
    expect((await t.rest('DELETE', `${SITE(site.siteId)}/redirects/${id}`)).status).toBe(204);
    expect(await count(site.siteId)).toBe(0);
    // Each write is in the site's event log.
    const events = await t.app.prisma.event.findMany({ where: { objectId: site.siteId, type: { startsWith: 'site_redirect_' } }, orderBy: { seq: 'asc' } });
    expect(events.map((e) => [e.type, (e.payload as any).redirectId])).toEqual([
      ['site_redirect_created', id],
      ['site_redirect_updated', id],
      ['site_redirect_deleted', id],
    ]);
    const gone = await api.orgs.updateSiteRedirectById(t.org.id, site.siteId, id, { source: '/x' }).catch((e) => e);
    expect(gone).toBeInstanceOf(GitBookAPIError);
    expect(gone.code).toBe(404);
  });

  it('bad input is a 400 naming the field, and nothing changes', async () => {
    const before = await count(site.siteId);
    const page = { kind: 'site-page', siteSpaceId: site.siteSpaceId, pageId: site.pages.setup };
    const cases: Array<[unknown, RegExp]> = [
      [{ source: '/a b', destination: page }, /^source/],
      [{ source: '/docs/../admin', destination: page }, /^source/],
      [{ source: '', destination: page }, /^source/],
      [{ source: '/?only=query', destination: page }, /^source/],
      [{ source: `/${'a'.repeat(600)}`, destination: page }, /^source/],
      [{ source: '/ok', destination: { kind: 'site-page', siteSpaceId: other.siteSpaceId, pageId: other.pages.setup } }, /^destination\.siteSpaceId/],
      [{ source: '/ok', destination: { kind: 'site-page', siteSpaceId: site.siteSpaceId, pageId: other.pages.setup } }, /^destination\.pageId/],
      [{ source: '/ok', destination: { kind: 'site-section', siteSectionId: newId('SiteSection') } }, /^destination\.siteSectionId/],
      [{ source: '/ok', destination: { kind: 'external', url: 'https://evil.example' } }, /^destination\.kind/],
      [{ source: '/ok', destination: page, extra: 1 }, /^extra/],
    ];
    for (const [body, field] of cases) {
      const r = await t.rest('POST', `${SITE(site.siteId)}/redirects`, body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error.message, JSON.stringify(body)).toMatch(field);
    }
    // The same source twice.
    expect((await t.rest('POST', `${SITE(site.siteId)}/redirects`, { source: '/dup', destination: page })).status).toBe(201);
    const dup = await t.rest('POST', `${SITE(site.siteId)}/redirects`, { source: '/dup/', destination: page });
    expect(dup.status).toBe(400);
    expect(dup.body.error.message).toMatch(/^source/);
    expect(await count(site.siteId)).toBe(before + 1);
    // GraphQL names the field too.
    const g = await t.gql(`mutation($input: CreateSiteRedirectInput!) { createSiteRedirect(input: $input) { redirect { id } } }`, {
      input: { siteId: site.siteId, source: '/g', destination: { kind: 'site_space', siteSpaceId: other.siteSpaceId } },
    });
    expect(g.errors?.[0].message).toMatch(/^destination\.siteSpaceId/);
  });

  it('a site of another organization (given on the path) or a missing site is 404', async () => {
    const r = await t.rest('GET', `/v1/orgs/${t.org.id}/sites/${newId('Site')}/redirects`);
    expect(r.status).toBe(404);
    const wrong = await t.rest('PATCH', `${SITE(site.siteId)}/redirects/${newId('SiteRedirect')}`, { source: '/x' });
    expect(wrong.status).toBe(404);
  });
});

describe('bulk upsert (PUT …/redirects, the newer API)', () => {
  it('creates, updates and deletes by source in one transaction', async () => {
    const page = { kind: 'site-page', siteSpaceId: site.siteSpaceId, pageId: site.pages.guide };
    const first = await t.rest('PUT', `${SITE(site.siteId)}/redirects`, { redirects: [{ source: '/bulk/a', destination: page }, { source: '/bulk/b/', destination: page }] });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expectValidNextResponse('PUT', LIST, 200, first.body);
    expect(first.body.results.map((r: any) => [r.status, r.source])).toEqual([['created', '/bulk/a'], ['created', '/bulk/b']]);
    const second = await t.rest('PUT', `${SITE(site.siteId)}/redirects`, {
      redirects: [{ source: '/bulk/a', destination: { kind: 'site-space', siteSpaceId: site.siteSpaceId } }, { source: '/bulk/b', destination: null }],
    });
    expectValidNextResponse('PUT', LIST, 200, second.body);
    expect(second.body.results.map((r: any) => r.status)).toEqual(['updated', 'deleted']);
    const a = await t.app.prisma.siteRedirect.findUniqueOrThrow({ where: { siteId_source: { siteId: site.siteId, source: '/bulk/a' } } });
    expect(a.destination).toEqual({ kind: 'site_space', siteSpaceId: site.siteSpaceId });
    // One bad entry: a 400 naming it, and nothing of the batch is written.
    const bad = await t.rest('PUT', `${SITE(site.siteId)}/redirects`, {
      redirects: [{ source: '/bulk/c', destination: page }, { source: '/bulk/d', destination: { kind: 'site-space', siteSpaceId: other.siteSpaceId } }],
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toMatch(/^redirects\.1\.destination\.siteSpaceId/);
    expect(await t.app.prisma.siteRedirect.findFirst({ where: { siteId: site.siteId, source: '/bulk/c' } })).toBeNull();
  });

  it('GraphQL: Site.redirects pages with cursors; upsertSiteRedirects and deleteSiteRedirect', async () => {
    const up = await t.gql(`mutation($input: UpsertSiteRedirectsInput!) { upsertSiteRedirects(input: $input) { results { status source redirect { id automatic destination { kind siteSpaceId } } } } }`, {
      input: { siteId: other.siteId, redirects: ['/p/1', '/p/2', '/p/3'].map((source) => ({ source, destination: { kind: 'site_space', siteSpaceId: other.siteSpaceId } })) },
    });
    expect(up.errors).toBeUndefined();
    expect(up.data.upsertSiteRedirects.results).toHaveLength(3);
    const q = `query($id: ID!, $after: String) { site(id: $id) { redirects(first: 2, after: $after) { totalCount pageInfo { hasNextPage endCursor } nodes { source } } } }`;
    const p1 = await t.gql(q, { id: other.siteId });
    expect(p1.data.site.redirects).toMatchObject({ totalCount: 3, pageInfo: { hasNextPage: true }, nodes: [{ source: '/p/1' }, { source: '/p/2' }] });
    const p2 = await t.gql(q, { id: other.siteId, after: p1.data.site.redirects.pageInfo.endCursor });
    expect(p2.data.site.redirects.nodes).toEqual([{ source: '/p/3' }]);
    const id = up.data.upsertSiteRedirects.results[0].redirect.id;
    const upd = `mutation($input: UpdateSiteRedirectInput!) { updateSiteRedirect(input: $input) { redirect { id source automatic } } }`;
    const changed = await t.gql(upd, { input: { siteId: other.siteId, siteRedirectId: id, source: 'p/one/' } });
    expect(changed.data.updateSiteRedirect.redirect).toEqual({ id, source: '/p/one', automatic: false });
    const missing = await t.gql(upd, { input: { siteId: other.siteId, siteRedirectId: newId('SiteRedirect'), source: '/p/x' } });
    expect(missing.errors?.[0].extensions?.code).toBe('NOT_FOUND');
    const taken = await t.gql(upd, { input: { siteId: other.siteId, siteRedirectId: id, source: '/p/2' } });
    expect(taken.errors?.[0].message).toMatch(/^source/);
    const byGql = await t.gql(`query($s: ID!) { siteRedirectBySource(siteId: $s, source: "/p/one?x") { target redirect { id } } }`, { s: other.siteId });
    expect(byGql.data.siteRedirectBySource).toEqual({ target: `${t.app.config.publicUrl}/sites/${other.siteId}/${other.ssPath}/`, redirect: { id } });
    const badSource = await t.rest('GET', `${SITE(other.siteId)}/redirect?source=${encodeURIComponent('/a b')}`);
    expect(badSource.status).toBe(400);
    expect(badSource.body.error.message).toMatch(/^source/);
    const del = `mutation($input: SiteRedirectKeyInput!) { deleteSiteRedirect(input: $input) { deleted deletedId } }`;
    expect((await t.gql(del, { input: { siteId: other.siteId, siteRedirectId: id } })).data.deleteSiteRedirect).toEqual({ deleted: true, deletedId: id });
    expect((await t.gql(del, { input: { siteId: other.siteId, siteRedirectId: id } })).data.deleteSiteRedirect.deleted).toBe(false);
  });
});

describe('access', () => {
  it('members with a role read; admins write; outsiders get 404 and guests 403', async () => {
    const created = await t.client().orgs.createSiteRedirect(t.org.id, site.siteId, { source: '/access', destination: { kind: 'site-space', siteSpaceId: site.siteSpaceId } });
    const id = created.data.id;
    await expectAccess(t, { method: 'GET', path: `${SITE(site.siteId)}/redirects` }, { anonymous: 401, outsider: 404, guest: 403, reader: 200, editor: 200, admin: 200 });
    await expectAccess(t, { method: 'GET', path: `${SITE(site.siteId)}/redirect?source=/access` }, { anonymous: 401, outsider: 404, guest: 403, reader: 200 });
    const body = { source: '/access-new', destination: { kind: 'site-space', siteSpaceId: site.siteSpaceId } };
    await expectAccess(t, (c) => c.client.orgs.createSiteRedirect(t.org.id, site.siteId, body as any), { anonymous: 401, outsider: 404, guest: 403, reader: 403, creator: 403, admin: 201 });
    await expectAccess(t, { method: 'PATCH', path: `${SITE(site.siteId)}/redirects/${id}`, body: { source: '/access-2' } }, { outsider: 404, reader: 403, admin: 200 });
    await expectAccess(t, { method: 'PUT', path: `${SITE(site.siteId)}/redirects`, body: { redirects: [body] } }, { outsider: 404, editor: 403, admin: 200 });
    await expectAccess(t, { method: 'DELETE', path: `${SITE(site.siteId)}/redirects/${id}` }, { outsider: 404, reader: 403, admin: 205 });
    // node(id:) of a redirect: members only.
    const again = await t.client().orgs.createSiteRedirect(t.org.id, site.siteId, { source: '/node', destination: { kind: 'site-space', siteSpaceId: site.siteSpaceId } });
    const nodeQ = `query($id: ID!) { node(id: $id) { ... on SiteRedirect { source } } }`;
    expect((await t.gql(nodeQ, { id: again.data.id })).data.node).toEqual({ source: '/node' });
    const outsider = await t.as('outsider');
    expect((await t.gql(nodeQ, { id: again.data.id }, outsider.token)).data?.node ?? null).toBeNull();
  });
});

describe('automatic redirects when a page moves', () => {
  const lookup = (url: string) => t.gql(`query($url: String!) { publishedContentByUrl(url: $url) { redirect target page { id: pageId } } }`, { url });
  const base = () => `${t.app.config.publicUrl}/sites/${site.siteId}/${site.ssPath}`;
  const redirectAt = (source: string) => t.app.prisma.siteRedirect.findUnique({ where: { siteId_source: { siteId: site.siteId, source } } });

  async function mergeRename(pageId: string, slug: string) {
    const cr = await t.rest('POST', `/v1/spaces/${site.spaceId}/change-requests`, { subject: `Rename to ${slug}` });
    expect(cr.status).toBe(201);
    const content = await t.rest('POST', `/v1/spaces/${site.spaceId}/change-requests/${cr.body.id}/content`, { changes: [{ operation: 'update_page', page: pageId, slug }] });
    expect(content.status, JSON.stringify(content.body)).toBe(200);
    const merged = await t.rest('POST', `/v1/spaces/${site.spaceId}/change-requests/${cr.body.id}/merge`);
    expect(merged.status, JSON.stringify(merged.body)).toBe(200);
  }

  it('a merge that renames a page records a redirect from the old URL (children too); the old URL answers the redirect', async () => {
    await mergeRename(site.pages.guide, 'handbook');
    const guide = await redirectAt(`/${site.ssPath}/guide`);
    expect(guide).toMatchObject({ automatic: true, destination: { kind: 'site_page', siteSpaceId: site.siteSpaceId, pageId: site.pages.guide } });
    expect(await redirectAt(`/${site.ssPath}/guide/setup`)).toMatchObject({ automatic: true, destination: { pageId: site.pages.setup } });
    const old = await lookup(`${base()}/guide/setup`);
    expect(old.data.publishedContentByUrl).toEqual({ redirect: `${base()}/handbook/setup`, target: 'content', page: null });
    expect((await lookup(`${base()}/handbook/setup`)).data.publishedContentByUrl.page.id).toBe(site.pages.setup);
    // Through the official client as well.
    const viaRest = await t.client().urls.getPublishedContentByUrl({ url: `${base()}/guide` });
    expect(viaRest.data).toEqual({ target: 'content', redirect: `${base()}/handbook` });
  });

  it('a manual redirect on the same source is kept; moving back removes the automatic redirect that would shadow the page', async () => {
    // A manual redirect from the path Intro will leave.
    await t.client().orgs.createSiteRedirect(t.org.id, site.siteId, { source: `/${site.ssPath}/intro`, destination: { kind: 'site-space', siteSpaceId: site.siteSpaceId } });
    await mergeRename(site.pages.intro, 'welcome');
    expect(await redirectAt(`/${site.ssPath}/intro`)).toMatchObject({ automatic: false, destination: { kind: 'site_space' } });

    // Handbook back to guide: the automatic redirect from /guide goes, one from /handbook comes.
    await mergeRename(site.pages.guide, 'guide');
    expect(await redirectAt(`/${site.ssPath}/guide`)).toBeNull();
    expect(await redirectAt(`/${site.ssPath}/guide/setup`)).toBeNull();
    expect(await redirectAt(`/${site.ssPath}/handbook/setup`)).toMatchObject({ automatic: true, destination: { pageId: site.pages.setup } });
    expect((await lookup(`${base()}/guide/setup`)).data.publishedContentByUrl.page.id).toBe(site.pages.setup);
  });

  it('a live edit that moves a page records the redirect too; a space on no site records nothing', async () => {
    await edit(site.spaceId, [{ operation: 'update_page', page: site.pages.setup, into: null }]);
    expect(await redirectAt(`/${site.ssPath}/guide/setup`)).toMatchObject({ automatic: true, destination: { pageId: site.pages.setup } });
    expect((await lookup(`${base()}/guide/setup`)).data.publishedContentByUrl.redirect).toBe(`${base()}/setup`);

    const s = await t.rest('POST', `/v1/orgs/${t.org.id}/spaces`, { title: 'Unpublished' });
    const before = await t.app.prisma.siteRedirect.count();
    await edit(s.body.id, [{ operation: 'insert_page', title: 'A', document: { markdown: 'a' } }]);
    const a = (await t.app.prisma.pageVersion.findFirstOrThrow({ where: { spaceId: s.body.id } })).pageId;
    await edit(s.body.id, [{ operation: 'update_page', page: a, slug: 'b' }]);
    expect(await t.app.prisma.siteRedirect.count()).toBe(before);
  });
});
