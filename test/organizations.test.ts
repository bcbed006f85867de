import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers.ts';
import { MemberRole } from '@gitbook/api';
import { expectValidResponse } from './openapi.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.close();
});

describe('organizations over REST', () => {
  it('401 without a token, with the error envelope', async () => {
    const r = await t.rest('GET', '/v1/orgs', undefined, null);
    expect(r.status).toBe(401);
    expect(r.body).toEqual({ error: { code: 401, message: expect.any(String) } });
    const bad = await t.rest('GET', '/v1/orgs', undefined, 'nope');
    expect(bad.status).toBe(401);
  });

  it('lists my organizations through the official client, valid against the OpenAPI document', async () => {
    const res = await t.client().orgs.listOrganizationsForAuthenticatedUser();
    expect(res.data.items.map((o) => o.id)).toEqual([t.org.id]);
    expect(res.data.count).toBe(1);
    expect(res.data.next).toBeUndefined();
    expectValidResponse('GET', '/orgs', 200, res.data);
  });

  it('gets one organization; outsiders get 404', async () => {
    const res = await t.client().orgs.getOrganizationById(t.org.id);
    expect(res.data).toMatchObject({ object: 'organization', id: t.org.id, title: t.org.title });
    expect(res.data.permissions.admin).toBe(true);
    expectValidResponse('GET', '/orgs/{organizationId}', 200, res.data);

    const outsider = await t.createUser(undefined);
    const r = await t.rest('GET', `/v1/orgs/${t.org.id}`, undefined, outsider.token);
    expect(r.status).toBe(404);
    const missing = await t.rest('GET', `/v1/orgs/org_doesnotexist`);
    expect(missing.status).toBe(404);
    expectValidResponse('GET', '/orgs/{organizationId}', 404, missing.body);
  });

  it('updates an organization with validation naming the field, and nothing changes on error', async () => {
    const res = await t.client().orgs.updateOrganizationById(t.org.id, { title: 'Renamed Org', emailDomains: ['example.com'], defaultRole: MemberRole.Edit });
    expect(res.data.title).toBe('Renamed Org');
    expect(res.data.emailDomains).toEqual(['example.com']);
    expect(res.data.defaultRole).toBe('edit');
    expectValidResponse('PATCH', '/orgs/{organizationId}', 200, res.data);

    for (const [body, field] of [
      [{ title: 'x' }, 'title'],
      [{ title: 42 }, 'title'],
      [{ hostname: 'UPPER' }, 'hostname'],
      [{ defaultRole: 'boss' }, 'defaultRole'],
      [{ unknownThing: true }, 'unknownThing'],
    ] as const) {
      const r = await t.rest('PATCH', `/v1/orgs/${t.org.id}`, body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error.code).toBe(400);
      expect(r.body.error.message).toContain(field);
      expectValidResponse('PATCH', '/orgs/{organizationId}', 400, r.body);
    }
    const malformed = await t.rest('PATCH', `/v1/orgs/${t.org.id}`, '{"title": ');
    expect(malformed.status).toBe(400);
    const after = await t.rest('GET', `/v1/orgs/${t.org.id}`);
    expect(after.body.title).toBe('Renamed Org');
  });

  it('403 for a member without admin, 404 for outsiders', async () => {
    const reader = await t.createUser('read');
    const r = await t.rest('PATCH', `/v1/orgs/${t.org.id}`, { title: 'Hacked' }, reader.token);
    expect(r.status).toBe(403);
    const outsider = await t.createUser(undefined);
    const o = await t.rest('PATCH', `/v1/orgs/${t.org.id}`, { title: 'Hacked' }, outsider.token);
    expect(o.status).toBe(404);
    expect((await t.rest('GET', `/v1/orgs/${t.org.id}`)).body.title).not.toBe('Hacked');
  });

  it('deletes link invites idempotently (205, then 204)', async () => {
    const invite = await t.app.prisma.linkInvite.create({ data: { id: 'inv_test1', organizationId: t.org.id } });
    const first = await t.rest('DELETE', `/v1/orgs/${t.org.id}/link-invites/${invite.id}`);
    expect(first.status).toBe(205);
    expect(first.text).toBe('');
    const second = await t.rest('DELETE', `/v1/orgs/${t.org.id}/link-invites/${invite.id}`);
    expect(second.status).toBe(204);
    const reader = await t.createUser('read');
    expect((await t.rest('DELETE', `/v1/orgs/${t.org.id}/link-invites/inv_x`, undefined, reader.token)).status).toBe(403);
    // A malformed id names nothing: 404 before any lookup or role check.
    expect((await t.rest('DELETE', `/v1/orgs/${t.org.id}/link-invites/x`, undefined, reader.token)).status).toBe(404);
    expect((await t.rest('DELETE', `/v1/orgs/org_missing/link-invites/x`)).status).toBe(404);
  });

  it('finds organizations by e-mail domain', async () => {
    await t.rest('PATCH', `/v1/orgs/${t.org.id}`, { emailDomains: ['acme.test'] });
    const res = await t.client().emailDomains.getOrganizationsForEmailDomain('acme.test');
    expect(res.data.organizations?.map((o) => o.id)).toEqual([t.org.id]);
    expectValidResponse('GET', '/email-domains/{emailDomain}/orgs', 200, res.data);
    const stranger = await t.createUser(undefined);
    const none = await t.rest('GET', '/v1/email-domains/acme.test/orgs', undefined, stranger.token);
    expect(none.body.organizations).toEqual([]);
    const colleague = await t.createUser(undefined, { email: 'someone@acme.test' });
    const joinable = await t.rest('GET', '/v1/email-domains/acme.test/orgs', undefined, colleague.token);
    expect(joinable.body.organizations.map((o: any) => o.id)).toEqual([t.org.id]);
  });

  it('answers 404 for unknown routes and 405 for a wrong method', async () => {
    expect((await t.rest('GET', '/v1/nothing-here')).status).toBe(404);
    const r = await t.rest('POST', `/v1/orgs/${t.org.id}`, {});
    expect(r.status).toBe(405);
    expect(r.body.error.code).toBe(405);
  });
});

describe('organizations over GraphQL', () => {
  it('reads the organization row once (membership decides visibility, then one read with the selection)', async () => {
    const { result, statements } = await t.countQueries(() => t.gql(`query($id: ID!) { organization(id: $id) { id title } }`, { id: t.org.id }));
    expect(result.data.organization.id).toBe(t.org.id);
    expect(statements.filter((sql) => /FROM "public"\."Organization"/.test(sql))).toHaveLength(1);
    const outsider = await t.createUser(undefined);
    const hidden = await t.gql(`query($id: ID!) { organization(id: $id) { id } }`, { id: t.org.id }, outsider.token);
    expect(hidden.errors?.[0].extensions?.code).toBe('NOT_FOUND');
  });

  it('UNAUTHENTICATED without a token', async () => {
    const r = await t.gql('{ viewer { user { id } } }', {}, null);
    expect(r.status).toBe(401);
    expect(r.errors?.[0].extensions?.code).toBe('UNAUTHENTICATED');
  });

  it('viewer → organizations, node() with the same id REST uses', async () => {
    const r = await t.gql(`{ viewer { user { id email } organizations(first: 10) { totalCount nodes { id title permissions { admin } } } } }`);
    expect(r.errors).toBeUndefined();
    expect(r.data.viewer.organizations.nodes[0].id).toBe(t.org.id);
    const n = await t.gql(`query($id: ID!) { node(id: $id) { id ... on Organization { title } } }`, { id: t.org.id });
    expect(n.data.node.id).toBe(t.org.id);
  });

  it('updateOrganization reports BAD_REQUEST with the field, FORBIDDEN for non-admins', async () => {
    const bad = await t.gql(`mutation { updateOrganization(input: { id: "${t.org.id}", title: "x" }) { organization { id } } }`);
    expect(bad.errors?.[0].extensions?.code).toBe('BAD_REQUEST');
    expect(bad.errors?.[0].extensions?.field).toBe('title');
    const reader = await t.createUser('read');
    const denied = await t.gql(`mutation { updateOrganization(input: { id: "${t.org.id}", title: "Nope" }) { organization { id } } }`, {}, reader.token);
    expect(denied.errors?.[0].extensions?.code).toBe('FORBIDDEN');
  });

  it('creates organizations and API tokens; revoked tokens stop working', async () => {
    const org = await t.gql(`mutation { createOrganization(input: { title: "Second" }) { id title permissions { admin } } }`);
    expect(org.data.createOrganization.permissions.admin).toBe(true);
    const tok = await t.gql(`mutation { createApiToken(input: { label: "ci" }) { token apiToken { id } } }`);
    const token = tok.data.createApiToken.token;
    expect((await t.rest('GET', '/v1/orgs', undefined, token)).body.count).toBe(2);
    await t.gql(`mutation($id: ID!) { revokeApiToken(input: { id: $id }) { deleted } }`, { id: tok.data.createApiToken.apiToken.id });
    expect((await t.rest('GET', '/v1/orgs', undefined, token)).status).toBe(401);
  });
});
