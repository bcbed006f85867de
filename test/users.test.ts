// Users: GET /v1/user, GET /v1/users/{userId}, GraphQL viewer and user(id:), and the rule that
// every `urls.location` the API hands out resolves.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers.ts';
import { expectValidResponse } from './openapi.ts';
import { newId } from '../src/lib/ids.ts';

let t: TestApp;
let guest: Awaited<ReturnType<TestApp['createUser']>>;
let reader: Awaited<ReturnType<TestApp['createUser']>>;
let outsider: Awaited<ReturnType<TestApp['createUser']>>;
let elsewhere: Awaited<ReturnType<TestApp['createUser']>>;

beforeAll(async () => {
  t = await startTestApp();
  guest = await t.createUser(null);
  reader = await t.createUser('read');
  outsider = await t.createUser(undefined);
  // A member of another organization only.
  const org = await t.app.prisma.organization.create({ data: { id: newId('Organization'), title: 'Elsewhere' } });
  elsewhere = await t.createUser('admin', { organizationId: org.id });
});
afterAll(async () => {
  await t?.close();
});

/** The path of an API URL the server handed out (its origin is PUBLIC_URL, not the test port). */
const pathOf = (url: string) => new URL(url).pathname + new URL(url).search;

describe('GET /v1/user', () => {
  it('answers the caller, through the official client, valid against the document', async () => {
    const me = await reader.client.user.getAuthenticatedUser();
    expect(me.status).toBe(200);
    expectValidResponse('GET', '/user', 200, me.data);
    expect(me.data).toMatchObject({ object: 'user', id: reader.user.id, displayName: reader.user.displayName, email: reader.user.email });
    expect(pathOf(me.data.urls.location)).toBe(`/v1/users/${reader.user.id}`);
    // An outsider has a profile too.
    expect((await outsider.client.user.getAuthenticatedUser()).data.id).toBe(outsider.user.id);
  });

  it('needs a token', async () => {
    const r = await t.rest('GET', '/v1/user', undefined, null);
    expect(r.status).toBe(401);
    expect(r.body.error.code).toBe(401);
  });
});

describe('GET /v1/users/{userId}', () => {
  it('answers yourself and members of an organization you share (guests included)', async () => {
    const cases: Array<[string, Awaited<ReturnType<TestApp['createUser']>>, string]> = [
      ['self', reader, reader.user.id],
      ['a reader reads the admin', reader, t.adminUser.id],
      ['the admin reads a guest', { token: t.token, client: t.client() } as never, guest.user.id],
      ['a guest reads a reader', guest, reader.user.id],
    ];
    for (const [label, caller, id] of cases) {
      const r = await caller.client.users.getUserById(id);
      expect(r.status, label).toBe(200);
      expectValidResponse('GET', '/users/{userId}', 200, r.data);
      expect(r.data.id, label).toBe(id);
      expect(pathOf(r.data.urls.location), label).toBe(`/v1/users/${id}`);
    }
  });

  it('is a 404 for users you share no organization with, unknown ids and malformed ids', async () => {
    const cases: Array<[string, string, string]> = [
      ['outsider reads the admin', outsider.token, t.adminUser.id],
      ['admin reads an outsider', t.token, outsider.user.id],
      ['admin reads a member of another organization', t.token, elsewhere.user.id],
      ['member of another organization reads the admin', elsewhere.token, t.adminUser.id],
      ['unknown id', t.token, newId('User')],
      ['malformed id', t.token, 'space_abc'],
    ];
    for (const [label, token, id] of cases) {
      const r = await t.rest('GET', `/v1/users/${id}`, undefined, token);
      expect(r.status, label).toBe(404);
      expectValidResponse('GET', '/users/{userId}', 404, r.body);
    }
    // The official client sees the same 404.
    await expect(outsider.client.users.getUserById(t.adminUser.id)).rejects.toMatchObject({ code: 404 });
    expect((await t.rest('GET', `/v1/users/${t.adminUser.id}`, undefined, null)).status).toBe(401);
    const unknownKey = await t.rest('GET', `/v1/users/${t.adminUser.id}?foo=1`);
    expect(unknownKey.status).toBe(400);
    expect(unknownKey.body.error.message).toContain('foo');
  });
});

describe('GraphQL viewer and user(id:)', () => {
  it('answers the same users as REST, NOT_FOUND otherwise', async () => {
    const q = `query($id: ID!) { viewer { user { id } } user(id: $id) { id displayName urls { location } } }`;
    const ok = await t.gql(q, { id: t.adminUser.id }, guest.token);
    expect(ok.errors).toBeUndefined();
    expect(ok.data.viewer.user.id).toBe(guest.user.id);
    expect(ok.data.user.id).toBe(t.adminUser.id);
    const refused = await t.gql(`query($id: ID!) { user(id: $id) { id } }`, { id: t.adminUser.id }, outsider.token);
    expect(refused.errors?.[0].extensions?.code).toBe('NOT_FOUND');
    // node(id:) follows the same rule.
    const node = await t.gql(`query($id: ID!) { node(id: $id) { id } }`, { id: t.adminUser.id }, outsider.token);
    expect(node.data.node).toBeNull();
  });
});

describe('urls.location resolves', () => {
  it('for embedded users, site spaces and the objects around them', async () => {
    const space = await t.rest('POST', `/v1/orgs/${t.org.id}/spaces`, { title: 'Located' });
    const comment = await t.rest('POST', `/v1/spaces/${space.body.id}/comments`, { body: { markdown: 'hi' } });
    expect(comment.status).toBe(200);
    const site = await t.rest('POST', `/v1/orgs/${t.org.id}/sites`, { title: 'Located site', spaces: [space.body.id] });
    expect(site.status).toBe(201);
    const siteSpaces = await t.rest('GET', `/v1/orgs/${t.org.id}/sites/${site.body.id}/site-spaces`);
    expect(siteSpaces.body.items).toHaveLength(1);
    const siteSpace = siteSpaces.body.items[0];

    const locations: Array<[string, string]> = [
      ['comment author', comment.body.postedBy.urls.location],
      ['comment', comment.body.urls.location],
      ['space', space.body.urls.location],
      ['site', site.body.urls.location],
      ['site space', siteSpace.urls.location],
      ["site space's space", siteSpace.space.urls.location],
    ];
    for (const [label, url] of locations) {
      const r = await t.rest('GET', pathOf(url));
      expect(r.status, `${label}: ${url}`).toBe(200);
      expect(r.body.id, label).toBeDefined();
    }

    // The site space's own URL answers the site space as the listing does.
    const got = await t.rest('GET', pathOf(siteSpace.urls.location));
    expect(got.body).toEqual(siteSpace);
    // Members of the organization only; another site's path is a 404.
    expect((await t.rest('GET', pathOf(siteSpace.urls.location), undefined, outsider.token)).status).toBe(404);
    const other = await t.rest('POST', `/v1/orgs/${t.org.id}/sites`, { title: 'Other site' });
    expect((await t.rest('GET', `/v1/orgs/${t.org.id}/sites/${other.body.id}/site-spaces/${siteSpace.id}`)).status).toBe(404);
  });

  it('for site sections', async () => {
    const site = await t.rest('POST', `/v1/orgs/${t.org.id}/sites`, { title: 'Sectioned site' });
    const space = await t.rest('POST', `/v1/orgs/${t.org.id}/spaces`, { title: 'Section space' });
    const added = await t.rest('POST', `/v1/orgs/${t.org.id}/sites/${site.body.id}/sections`, { spaceId: space.body.id, title: 'Guides' });
    expect(added.status, JSON.stringify(added.body)).toBe(201);
    const got = await t.rest('GET', pathOf(added.body.urls.location));
    expect(got.status).toBe(200);
    expect(got.body).toEqual(added.body);
    expect((await t.rest('GET', pathOf(added.body.urls.location), undefined, outsider.token)).status).toBe(404);
    const other = await t.rest('POST', `/v1/orgs/${t.org.id}/sites`, { title: 'Other site' });
    expect((await t.rest('GET', `/v1/orgs/${t.org.id}/sites/${other.body.id}/sections/${added.body.id}`)).status).toBe(404);
  });
});
