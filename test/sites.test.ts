// Sites: list, create, get, update, delete, publish / unpublish, the published view and adaptive
// content, over REST (official client + OpenAPI validation) and GraphQL.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectAccess, type Caller, type TestApp } from './helpers.ts';
import { expectValidResponse } from './openapi.ts';
import { createSite, createSpace, startSiteTests, statusOf, type TestUser } from './fixtures/sites.ts';

let t: TestApp;
let reader: TestUser;
let guest: TestUser;
let outsider: TestUser;
let ORG: string;

beforeAll(async () => {
  ({ t, ORG, reader, guest, outsider } = await startSiteTests());
});
afterAll(async () => {
  await t?.close();
});

const newSpace = (title?: string) => createSpace(t, title);
const newSite = (body?: Record<string, unknown>) => createSite(t, body);

const siteCount = () => t.app.prisma.site.count({ where: { organizationId: t.org.id } });

describe('create a site', () => {
  it('creates a site showing existing spaces, with the documented defaults (201)', async () => {
    const a = await newSpace('Alpha');
    const b = await newSpace('Beta');
    const res = await t.client().orgs.createSite(t.org.id, { title: 'Product docs', spaces: [a, b] });
    expect(res.status).toBe(201);
    expectValidResponse('POST', '/orgs/{organizationId}/sites', 201, res.data);
    expect(res.data).toMatchObject({ object: 'site', title: 'Product docs', type: 'basic', visibility: 'public', published: false, siteSpaces: 2, defaultSpace: a });
    const spaces = await t.client().orgs.listSiteSpaces(t.org.id, res.data.id);
    expect(spaces.data.items.map((s) => [s.space.id, s.path, s.default])).toEqual([
      [a, 'alpha', true],
      [b, 'beta', false],
    ]);
  });

  it('creates a new space for the site with `empty` or `sample`', async () => {
    const empty = await t.client().orgs.createSite(t.org.id, { title: 'Empty one', spaces: 'empty', visibility: 'unlisted' as never });
    expect(empty.data).toMatchObject({ siteSpaces: 1, visibility: 'unlisted' });
    const sample = await t.client().orgs.createSite(t.org.id, { title: 'Sample one', spaces: 'sample', type: 'premium' as never });
    expectValidResponse('POST', '/orgs/{organizationId}/sites', 201, sample.data);
    expect(sample.data.type).toBe('premium');
    const r = await t.gql(`query($id: ID!) { site(id: $id) { siteSpaces { space { title revision { pages { title pages { title } } } } } } }`, { id: sample.data.id });
    expect(r.errors).toBeUndefined();
    const space = r.data.site.siteSpaces[0].space;
    expect(space.title).toBe('Sample one');
    expect(space.revision.pages.map((p: any) => p.title)).toEqual(['Welcome', 'Getting started']);
    expect(space.revision.pages[1].pages[0].title).toBe('Quickstart');
    const e = await t.gql(`query($id: ID!) { site(id: $id) { siteSpaces { space { revision { pages { id } } } } } }`, { id: empty.data.id });
    expect(e.data.site.siteSpaces[0].space.revision.pages).toEqual([]);
  });

  it('400 naming the field, and nothing is created', async () => {
    const before = await siteCount();
    const other = await t.gql(`mutation { createOrganization(input: { title: "Elsewhere" }) { id } }`);
    const foreignSpace = (await t.rest('POST', `/v1/orgs/${other.data.createOrganization.id}/spaces`, { title: 'Foreign' })).body.id;
    const a = await newSpace();
    for (const [body, field] of [
      [{ title: 'x' }, 'title'],
      [{ title: 'y'.repeat(129) }, 'title'],
      [{ type: 'gold' }, 'type'],
      [{ visibility: 'private' }, 'visibility'],
      [{ spaces: ['space_missing'] }, 'spaces.0'],
      [{ spaces: [a, 'space_missing'] }, 'spaces.1'],
      [{ spaces: [foreignSpace] }, 'spaces.0'],
      [{ spaces: [a, a] }, 'spaces.1'],
      [{ spaces: 'template' }, 'spaces'],
      [{ colour: 'blue' }, 'colour'],
    ] as const) {
      const r = await t.rest('POST', `${ORG}/sites`, body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error.message).toContain(field);
    }
    expect(await siteCount()).toBe(before);
  });

  it('401 without a token, 403 below admin, 404 for outsiders', async () => {
    await expectAccess(t, { method: 'POST', path: `${ORG}/sites`, body: { title: 'No' } }, { anonymous: 401, outsider: 404, guest: 403, reader: 403, creator: 403 });
    await expectAccess(t, (c) => c.client.orgs.createSite(t.org.id, { title: 'No' }), { outsider: 404, reader: 403 }, 'createSite (official client)');
    expect((await t.rest('POST', `/v1/orgs/org_missing/sites`, { title: 'No' })).status).toBe(404);
  });
});

describe('list and get sites', () => {
  it('lists with filters (space, title, published) and pages', async () => {
    const space = await newSpace('Filtered');
    const s1 = await newSite({ title: 'Filter Alpha', spaces: [space] });
    const s2 = await newSite({ title: 'Filter Beta' });
    const res = await t.client().orgs.listSites(t.org.id, { title: 'filter' });
    expectValidResponse('GET', '/orgs/{organizationId}/sites', 200, res.data);
    expect(res.data.items.map((s) => s.id)).toEqual([s1.id, s2.id]);
    expect(res.data.count).toBe(2);
    const bySpace = await t.client().orgs.listSites(t.org.id, { space });
    expect(bySpace.data.items.map((s) => s.id)).toEqual([s1.id]);
    await t.client().orgs.publishSite(t.org.id, s1.id);
    const published = await t.rest('GET', `${ORG}/sites?title=filter&published=true`);
    expect(published.body.items.map((s: any) => s.id)).toEqual([s1.id]);
    const unpublished = await t.rest('GET', `${ORG}/sites?title=filter&published=false`);
    expect(unpublished.body.items.map((s: any) => s.id)).toEqual([s2.id]);
    const page1 = await t.rest('GET', `${ORG}/sites?title=filter&limit=1`);
    expect(page1.body.items).toHaveLength(1);
    expectValidResponse('GET', '/orgs/{organizationId}/sites', 200, page1.body);
    const page2 = await t.rest('GET', `${ORG}/sites?title=filter&limit=1&page=${encodeURIComponent(page1.body.next.page)}`);
    expect(page2.body.items.map((s: any) => s.id)).toEqual([s2.id]);
    expect(page2.body.next).toBeUndefined();
    expect((await t.rest('GET', `${ORG}/sites?published=maybe`)).status).toBe(400);
    expect((await t.rest('GET', `${ORG}/sites?type=gold`)).status).toBe(400);
    const premium = await t.rest('GET', `${ORG}/sites?type=premium`);
    expect(premium.body.items.every((s: any) => s.type === 'premium')).toBe(true);
  });

  it('members with a role read sites; guests 403; outsiders 404; no token 401', async () => {
    const site = await newSite();
    const res = await reader.client.orgs.getSiteById(t.org.id, site.id);
    expectValidResponse('GET', '/orgs/{organizationId}/sites/{siteId}', 200, res.data);
    expect(res.data.id).toBe(site.id);
    const readers = { anonymous: 401, outsider: 404, guest: 403, reader: 200, admin: 200 };
    await expectAccess(t, (c) => c.client.orgs.getSiteById(t.org.id, site.id), readers, 'getSiteById');
    await expectAccess(t, (c) => c.client.orgs.listSites(t.org.id), readers, 'listSites');
    await expectAccess(t, { method: 'GET', path: `${ORG}/sites/${site.id}` }, readers);
    expect((await t.rest('GET', `${ORG}/sites/site_missing`)).status).toBe(404);
  });

  it('404 for a site under another organization\'s path', async () => {
    const site = await newSite();
    const other = await t.gql(`mutation { createOrganization(input: { title: "Other org" }) { id } }`);
    const r = await t.rest('GET', `/v1/orgs/${other.data.createOrganization.id}/sites/${site.id}`);
    expect(r.status).toBe(404);
    const d = await t.rest('DELETE', `/v1/orgs/${other.data.createOrganization.id}/sites/${site.id}`);
    expect(d.status).toBe(204);
    expect((await t.rest('GET', `${ORG}/sites/${site.id}`)).status).toBe(200);
  });
});

describe('update a site', () => {
  it('updates settings through the official client', async () => {
    const a = await newSpace('One');
    const b = await newSpace('Two');
    const site = await newSite({ spaces: [a, b] });
    const twoId = (await t.client().orgs.listSiteSpaces(t.org.id, site.id)).data.items[1].id;
    const res = await t.client().orgs.updateSiteById(t.org.id, site.id, {
      title: 'Renamed docs',
      visibility: 'share-link' as never,
      basename: 'api',
      adaptiveContent: { enabled: true },
      agentsContext: 'excluded' as never,
      proxy: 'example.com/docs',
      defaultSiteSpace: twoId,
    });
    expectValidResponse('PATCH', '/orgs/{organizationId}/sites/{siteId}', 200, res.data);
    expect(res.data).toMatchObject({
      title: 'Renamed docs',
      visibility: 'share-link',
      basename: 'api',
      adaptiveContent: { enabled: true },
      agentsContext: 'excluded',
      proxy: { origin: 'example.com/docs' },
      defaultSpace: b,
    });
    const cleared = await t.rest('PATCH', `${ORG}/sites/${site.id}`, { proxy: null });
    expect(cleared.status).toBe(200);
    expect(cleared.body.proxy).toBeUndefined();
    expect(cleared.body.title).toBe('Renamed docs');
  });

  it('sets the default section and, with sections, the default site space of the default section', async () => {
    const site = await newSite();
    const s1 = (await t.client().orgs.addSectionToSite(t.org.id, site.id, { spaceId: await newSpace('First') })).data;
    const s2 = (await t.client().orgs.addSectionToSite(t.org.id, site.id, { spaceId: await newSpace('Second') })).data;
    expect(s1.default).toBe(true);
    const extra = (await t.client().orgs.addSpaceToSite(t.org.id, site.id, { spaceId: await newSpace('Extra'), sectionId: s2.id })).data;
    const bad = await t.rest('PATCH', `${ORG}/sites/${site.id}`, { defaultSiteSpace: extra.id });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toContain('defaultSiteSpace');
    const res = await t.rest('PATCH', `${ORG}/sites/${site.id}`, { defaultSiteSection: s2.id, defaultSiteSpace: extra.id });
    expect(res.status).toBe(200);
    const sections = await t.client().orgs.listSiteSections(t.org.id, site.id);
    expect(sections.data.items.map((s) => s.default)).toEqual([false, true]);
    expect(sections.data.items[1].siteSpaces.map((s) => s.default)).toEqual([false, true]);
    expect(res.body.defaultSpace).toBe(extra.space.id);
    expect((await t.rest('PATCH', `${ORG}/sites/${site.id}`, { defaultSiteSection: 'sitesc_nope' })).status).toBe(400);
  });

  it('400 naming the field (published is read-only), and nothing changes', async () => {
    const site = await newSite({ title: 'Stable title' });
    for (const [body, field] of [
      [{ published: true }, 'published'],
      [{ title: 'x' }, 'title'],
      [{ basename: '' }, 'basename'],
      [{ basename: 'a'.repeat(101) }, 'basename'],
      [{ proxy: 'not a host' }, 'proxy'],
      [{ proxy: 'example.com' }, 'proxy'],
      [{ proxy: `example.com/${'a'.repeat(520)}` }, 'proxy'],
      [{ visibility: 'secret' }, 'visibility'],
      [{ adaptiveContent: { enabled: 'yes' } }, 'adaptiveContent.enabled'],
      [{ agentsContext: 'maybe' }, 'agentsContext'],
      [{ defaultSiteSpace: 'sitesp_nope' }, 'defaultSiteSpace'],
      [{ nonsense: 1 }, 'nonsense'],
    ] as const) {
      const r = await t.rest('PATCH', `${ORG}/sites/${site.id}`, body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error.message).toContain(field);
    }
    const after = await t.client().orgs.getSiteById(t.org.id, site.id);
    expect(after.data).toMatchObject({ title: 'Stable title', published: false, visibility: 'public' });
    expect(after.data.proxy).toBeUndefined();
  });

  it('404 missing site, 403 reader, 404 outsider, 401 no token', async () => {
    const site = await newSite();
    expect((await t.rest('PATCH', `${ORG}/sites/site_missing`, { title: 'Nope' })).status).toBe(404);
    await expectAccess(t, (c) => c.client.orgs.updateSiteById(t.org.id, site.id, { title: 'Nope' }), { outsider: 404, reader: 403 }, 'updateSiteById');
    await expectAccess(t, { method: 'PATCH', path: `${ORG}/sites/${site.id}`, body: { title: 'Nope' } }, { anonymous: 401, outsider: 404, guest: 403, reader: 403, creator: 403 });
  });
});

describe('delete a site', () => {
  it('205 then 204; the organization default content stops pointing at it', async () => {
    const site = await newSite();
    await t.rest('PATCH', ORG, { defaultContent: { type: 'site', site: site.id } });
    await expectAccess(t, { method: 'PATCH', path: `${ORG}/sites/${site.id}`, body: { title: 'Still here' } }, { reader: 403 });
    await expectAccess(t, { method: 'DELETE', path: `${ORG}/sites/${site.id}` }, { anonymous: 401, outsider: 404, guest: 403, reader: 403, creator: 403 });
    const first = await t.rest('DELETE', `${ORG}/sites/${site.id}`);
    expect(first.status).toBe(205);
    expect(first.text).toBe('');
    expect((await t.rest('DELETE', `${ORG}/sites/${site.id}`)).status).toBe(204);
    expect((await t.rest('GET', `${ORG}/sites/${site.id}`)).status).toBe(404);
    expect((await t.rest('GET', ORG)).body.defaultContent).toBeUndefined();
    expect((await t.rest('DELETE', `/v1/orgs/org_missing/sites/${site.id}`)).status).toBe(404);
  });
});

describe('publish and the published view', () => {
  it('a site without content cannot be published; with content it can, and unpublish reverts', async () => {
    const site = await newSite();
    expect(await statusOf(t.client().orgs.publishSite(t.org.id, site.id))).toBe(400);
    await t.client().orgs.addSpaceToSite(t.org.id, site.id, { spaceId: await newSpace('Content') });
    await expectAccess(t, (c) => c.client.orgs.publishSite(t.org.id, site.id), { anonymous: 401, outsider: 404, guest: 403, reader: 403, creator: 403 }, 'publishSite');
    const res = await t.client().orgs.publishSite(t.org.id, site.id);
    expectValidResponse('POST', '/orgs/{organizationId}/sites/{siteId}/publish', 200, res.data);
    expect(res.data).toMatchObject({ published: true, urls: { published: expect.stringContaining(site.id) } });
    const un = await t.client().orgs.unpublishSite(t.org.id, site.id);
    expectValidResponse('POST', '/orgs/{organizationId}/sites/{siteId}/unpublish', 200, un.data);
    expect(un.data.published).toBe(false);
    expect(un.data.urls.published).toBeUndefined();
  });

  it('answers the published view with sections or root-level site spaces', async () => {
    const flat = await newSite({ spaces: [await newSpace('Flat')] });
    const r1 = await t.client().orgs.getPublishedContentSite(t.org.id, flat.id);
    expectValidResponse('GET', '/orgs/{organizationId}/sites/{siteId}/published', 200, r1.data);
    expect(r1.data.object).toBe('published-content-site');
    expect(r1.data.structure.type).toBe('siteSpaces');
    expect(r1.data.structure.structure.map((s: any) => s.object)).toEqual(['site-space']);

    const sectioned = await newSite();
    const section = (await t.client().orgs.addSectionToSite(t.org.id, sectioned.id, { spaceId: await newSpace('In a section') })).data;
    await t.client().orgs.addSectionGroupToSite(t.org.id, sectioned.id, { title: 'Group', sections: [section.id] });
    const r2 = await t.client().orgs.getPublishedContentSite(t.org.id, sectioned.id);
    expectValidResponse('GET', '/orgs/{organizationId}/sites/{siteId}/published', 200, r2.data);
    expect(r2.data.structure.type).toBe('sections');
    expect(r2.data.structure.structure.map((s: any) => s.object)).toEqual(['site-section-group']);
    const structure = await t.client().orgs.getSiteStructure(t.org.id, sectioned.id);
    expectValidResponse('GET', '/orgs/{organizationId}/sites/{siteId}/structure', 200, structure.data);
    expect(structure.data).toEqual(r2.data.structure);
  });

  it('outsiders read only published public or unlisted sites', async () => {
    const site = await newSite({ spaces: [await newSpace('Public content')] });
    const published = (c: Caller) => c.client.orgs.getPublishedContentSite(t.org.id, site.id);
    // Unpublished: a preview for members with a role, hidden from everyone else.
    await expectAccess(t, published, { outsider: 404, guest: 404, reader: 200, admin: 200 }, 'unpublished site');
    await t.client().orgs.publishSite(t.org.id, site.id);
    const r = await outsider.client.orgs.getPublishedContentSite(t.org.id, site.id);
    expectValidResponse('GET', '/orgs/{organizationId}/sites/{siteId}/published', 200, r.data);
    expect((r.data.structure.structure[0] as any).space.permissions.edit).toBe(false);
    await t.rest('PATCH', `${ORG}/sites/${site.id}`, { visibility: 'unlisted' });
    await expectAccess(t, published, { outsider: 200, guest: 200, reader: 200 }, 'published unlisted site');
    await t.rest('PATCH', `${ORG}/sites/${site.id}`, { visibility: 'visitor-auth' });
    await expectAccess(t, published, { outsider: 404, guest: 404, reader: 200 }, 'published visitor-auth site');
    // Management reads stay member-only.
    await expectAccess(t, (c) => c.client.orgs.getSiteById(t.org.id, site.id), { outsider: 404, guest: 403 }, 'getSiteById of a published site');
    expect((await t.rest('GET', `${ORG}/sites/${site.id}/published?shareKey=`, undefined, null)).status).toBe(404); // no token: the anonymous reader, who cannot open a visitor-auth site
    expect((await t.rest('GET', `${ORG}/sites/site_missing/published`)).status).toBe(404);
    expect((await t.rest('GET', `${ORG}/sites/${site.id}/published?other=1`)).status).toBe(400);
  });
});

describe('adaptive content', () => {
  const schema = {
    $schema: 'http://json-schema.org/draft-07/schema#',
    type: 'object',
    properties: {
      isBetaUser: { type: 'boolean', description: 'Is in the beta program' },
      isAdmin: { type: 'boolean', description: 'Administers an account' },
      unsigned: {
        type: 'object',
        description: 'Unsigned claims of the site visitor.',
        properties: { prefersDark: { type: 'boolean', description: 'Likes dark mode' } },
        additionalProperties: false,
      },
    },
    additionalProperties: false,
  } as const;

  it('404 before a schema exists; PUT then GET; template conditions per boolean claim', async () => {
    const site = await newSite();
    expect(await statusOf(t.client().orgs.getSiteAdaptiveSchema(t.org.id, site.id))).toBe(404);
    const empty = await t.client().orgs.listSiteAdaptiveTemplateConditions(t.org.id, site.id);
    expect(empty.data.items).toEqual([]);
    const put = await t.client().orgs.updateSiteAdaptiveSchema(t.org.id, site.id, { jsonSchema: schema as never });
    expectValidResponse('PUT', '/orgs/{organizationId}/sites/{siteId}/adaptive-schema', 200, put.data);
    expect(put.data).toMatchObject({ object: 'site-adaptive-schema', jsonSchema: schema });
    const got = await reader.client.orgs.getSiteAdaptiveSchema(t.org.id, site.id);
    expectValidResponse('GET', '/orgs/{organizationId}/sites/{siteId}/adaptive-schema', 200, got.data);
    expect(got.data.jsonSchema).toEqual(schema);
    const conditions = await reader.client.orgs.listSiteAdaptiveTemplateConditions(t.org.id, site.id);
    expectValidResponse('GET', '/orgs/{organizationId}/sites/{siteId}/adaptive-schema/template-conditions', 200, conditions.data);
    expect(conditions.data.items).toEqual([
      { condition: 'visitor.claims.isAdmin', description: 'Administers an account' },
      { condition: 'visitor.claims.isBetaUser', description: 'Is in the beta program' },
      { condition: 'visitor.claims.unsigned.prefersDark', description: 'Likes dark mode' },
    ]);
    const gql = await t.gql(`query($id: ID!) { site(id: $id) { adaptiveSchema { jsonSchema } templateConditions { condition } } }`, { id: site.id });
    expect(gql.data.site.templateConditions).toHaveLength(3);
  });

  it('400 with the reason for a schema of another shape, and nothing changes', async () => {
    const site = await newSite();
    await t.client().orgs.updateSiteAdaptiveSchema(t.org.id, site.id, { jsonSchema: schema as never });
    const p = schema.properties;
    for (const [jsonSchema, field] of [
      [{ ...schema, type: 'array' }, 'jsonSchema.type'],
      [{ ...schema, additionalProperties: true }, 'jsonSchema.additionalProperties'],
      [{ ...schema, $id: 'https://example.com/s' }, 'jsonSchema.$id'],
      [{ ...schema, properties: { ...p, plan: { type: 'string', description: 'Plan' } } }, 'jsonSchema.properties.plan.type'],
      [{ ...schema, properties: { ...p, isPro: { type: 'boolean' } } }, 'jsonSchema.properties.isPro.description'],
      [{ ...schema, properties: { ...p, isPro: { type: 'boolean', description: 'Pro', default: true } } }, 'jsonSchema.properties.isPro.default'],
      [{ ...schema, properties: { ...p, 'is-pro': { type: 'boolean', description: 'Pro' } } }, 'jsonSchema.properties.is-pro'],
      [{ ...schema, properties: { ...p, unsigned: { ...p.unsigned, additionalProperties: true } } }, 'jsonSchema.properties.unsigned.additionalProperties'],
      [{ ...schema, properties: { ...p, unsigned: { ...p.unsigned, description: 'Other' } } }, 'jsonSchema.properties.unsigned.description'],
      [{ ...schema, properties: { ...p, unsigned: { ...p.unsigned, properties: { n: { type: 'number', description: 'N' } } } } }, 'jsonSchema.properties.unsigned.properties.n.type'],
      [{ type: 'object', additionalProperties: false }, 'jsonSchema.properties'],
      [{ ...schema, $schema: 'https://json-schema.org/draft/2020-12/schema' }, 'jsonSchema.$schema'],
    ] as const) {
      const r = await t.rest('PUT', `${ORG}/sites/${site.id}/adaptive-schema`, { jsonSchema });
      expect(r.status, JSON.stringify(jsonSchema)).toBe(400);
      expect(r.body.error.message).toContain(field);
    }
    for (const body of [{}, { jsonSchema: 'nope' }, { jsonSchema: schema, extra: 1 }]) {
      expect((await t.rest('PUT', `${ORG}/sites/${site.id}/adaptive-schema`, body)).status).toBe(400);
    }
    expect((await t.client().orgs.getSiteAdaptiveSchema(t.org.id, site.id)).data.jsonSchema).toEqual(schema);
  });

  it('403 for readers, 404 for outsiders and missing sites', async () => {
    const site = await newSite();
    expect(await statusOf(reader.client.orgs.updateSiteAdaptiveSchema(t.org.id, site.id, { jsonSchema: schema as never }))).toBe(403);
    expect(await statusOf(outsider.client.orgs.updateSiteAdaptiveSchema(t.org.id, site.id, { jsonSchema: schema as never }))).toBe(404);
    expect(await statusOf(outsider.client.orgs.getSiteAdaptiveSchema(t.org.id, site.id))).toBe(404);
    expect(await statusOf(outsider.client.orgs.listSiteAdaptiveTemplateConditions(t.org.id, site.id))).toBe(404);
    expect(await statusOf(t.client().orgs.getSiteAdaptiveSchema(t.org.id, 'site_missing'))).toBe(404);
    expect((await t.rest('GET', `${ORG}/sites/${site.id}/adaptive-schema`, undefined, null)).status).toBe(401);
  });
});

describe('sites over GraphQL', () => {
  it('organization → sites → structure, node(id:) only for members', async () => {
    const site = await newSite({ spaces: [await newSpace('Node space')] });
    const r = await t.gql(`query($org: ID!) { organization(id: $org) { sites(first: 100) { totalCount nodes { id title structure { type items { __typename } } } } } }`, { org: t.org.id });
    expect(r.errors).toBeUndefined();
    expect(r.data.organization.sites.nodes.some((s: any) => s.id === site.id)).toBe(true);
    const node = await t.gql(`query($id: ID!) { node(id: $id) { id ... on Site { title } } }`, { id: site.id });
    expect(node.data.node).toEqual({ id: site.id, title: 'Docs' });
    const hidden = await t.gql(`query($id: ID!) { node(id: $id) { id } }`, { id: site.id }, outsider.token);
    expect(hidden.data?.node ?? null).toBeNull();
    const denied = await t.gql(`query($id: ID!) { site(id: $id) { id } }`, { id: site.id }, outsider.token);
    expect(denied.errors?.[0].extensions?.code).toBe('NOT_FOUND');
  });

  it('mutations report BAD_REQUEST with the field, FORBIDDEN for readers', async () => {
    const bad = await t.gql(`mutation($org: ID!) { createSite(input: { organizationId: $org, title: "x" }) { site { id } } }`, { org: t.org.id });
    expect(bad.errors?.[0].extensions).toMatchObject({ code: 'BAD_REQUEST', field: 'title' });
    const denied = await t.gql(`mutation($org: ID!) { createSite(input: { organizationId: $org, title: "Nope" }) { site { id } } }`, { org: t.org.id }, reader.token);
    expect(denied.errors?.[0].extensions?.code).toBe('FORBIDDEN');
    const ok = await t.gql(`mutation($org: ID!) { createSite(input: { organizationId: $org, title: "Via GraphQL", newSpace: sample, visibility: share_link }) { site { id visibility siteSpaceCount defaultSpaceId } } }`, { org: t.org.id });
    expect(ok.errors).toBeUndefined();
    expect(ok.data.createSite.site).toMatchObject({ visibility: 'share_link', siteSpaceCount: 1 });
  });
});
