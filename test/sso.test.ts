// SAML providers over REST (official client + raw requests) and GraphQL, the SSO login list, and
// the service-provider endpoints (/sso/saml/{id}/start, /acs, /metadata) with responses signed
// by a test identity provider key.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemberRole } from '@gitbook/api';
import { expectAccess, startTestApp, type TestApp } from './helpers.ts';
import { expectValidResponse } from './openapi.ts';
import { newId } from '../src/lib/ids.ts';
import { makeSelfSignedCert } from './fixtures/make-cert.ts';
import { buildSignedSamlResponse } from './fixtures/saml.ts';

let t: TestApp;
let idp: ReturnType<typeof makeSelfSignedCert>;
let otherIdp: ReturnType<typeof makeSelfSignedCert>;
let teamId: string;
let otherOrgTeamId: string;
const IDP_ENTITY_ID = 'https://idp.example.test/metadata';
const IDP_SSO_URL = 'https://idp.example.test/sso';

beforeAll(async () => {
  t = await startTestApp();
  idp = makeSelfSignedCert();
  otherIdp = makeSelfSignedCert('other-idp');
  teamId = (await t.app.prisma.team.create({ data: { id: newId('Team'), organizationId: t.org.id, title: 'SSO people' } })).id;
  const other = await t.gql(`mutation { createOrganization(input: { title: "Other org" }) { id } }`);
  otherOrgTeamId = (
    await t.app.prisma.team.create({ data: { id: newId('Team'), organizationId: other.data.createOrganization.id, title: 'Elsewhere' } })
  ).id;
});
afterAll(async () => {
  await t?.close();
});

const base = () => `/v1/orgs/${t.org.id}/saml`;
const providerCount = () => t.app.prisma.samlProvider.count({ where: { organizationId: t.org.id } });

/**
 * The document requires `ssoURL` (a URI) even on providers that are not configured yet; those
 * carry an empty string, the one value that does not validate. Everything else must.
 */
function validProvider(body: any) {
  return body.ssoURL === '' ? { ...body, ssoURL: 'https://unset.invalid/' } : body;
}
function validProviderList(body: any) {
  return { ...body, items: body.items.map(validProvider) };
}

async function createActive(label = 'Okta') {
  const r = await t.rest('POST', base(), {
    label,
    entityID: IDP_ENTITY_ID,
    certificate: idp.certPem,
    ssoURL: IDP_SSO_URL,
    defaultTeam: teamId,
    defaultRole: 'edit',
  });
  expect(r.status).toBe(201);
  return r.body;
}

describe('SAML providers over REST', () => {
  it('creates a fully configured provider through the official client (201, active)', async () => {
    const res = await t.client().orgs.createOrganizationSamlProvider(t.org.id, {
      label: 'Okta',
      entityID: IDP_ENTITY_ID,
      certificate: idp.certPem,
      ssoURL: IDP_SSO_URL,
      defaultTeam: teamId,
      defaultRole: MemberRole.Edit,
    });
    expect(res.status).toBe(201);
    const p = res.data;
    const svc = `${t.app.config.publicUrl}/sso/saml/${p.id}`;
    expect(p).toMatchObject({
      object: 'saml-provider',
      label: 'Okta',
      entityID: IDP_ENTITY_ID,
      ssoURL: IDP_SSO_URL,
      defaultRole: 'edit',
      status: 'active',
      service: { acsURL: `${svc}/acs`, startURL: `${svc}/start`, entityID: `${svc}/metadata` },
      urls: { location: `${t.app.config.publicUrl}/v1/orgs/${t.org.id}/saml/${p.id}` },
      defaultTeam: { object: 'team', id: teamId, title: 'SSO people', members: 0 },
    });
    expect(p.id).toMatch(/^saml_/);
    expect(p.certificate).toContain('BEGIN CERTIFICATE');
    expectValidResponse('POST', '/orgs/{organizationId}/saml', 201, p);
  });

  it('creates with only a label (pending); a bare base64 certificate is accepted and stored as PEM', async () => {
    const r = await t.rest('POST', base(), { label: 'Later' });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ label: 'Later', status: 'pending', entityID: '', certificate: '', ssoURL: '', defaultRole: null });
    expect(r.body.defaultTeam).toBeUndefined();
    expectValidResponse('POST', '/orgs/{organizationId}/saml', 201, validProvider(r.body));

    const bare = idp.certPem.replace(/-----(BEGIN|END) CERTIFICATE-----/g, '').replace(/\s+/g, '');
    const b = await t.rest('POST', base(), { label: 'Bare', certificate: bare, entityID: IDP_ENTITY_ID, ssoURL: IDP_SSO_URL });
    expect(b.status).toBe(201);
    expect(b.body.status).toBe('active');
    expect(b.body.certificate).toMatch(/^-----BEGIN CERTIFICATE-----/);
  });

  it('rejects bad create bodies with 400 naming the field, creating nothing', async () => {
    const before = await providerCount();
    for (const [body, field] of [
      [{}, 'label'],
      [{ label: '' }, 'label'],
      [{ label: 'x'.repeat(31) }, 'label'],
      [{ label: 7 }, 'label'],
      [{ label: 'ok', entityID: 'x'.repeat(1025) }, 'entityID'],
      [{ label: 'ok', certificate: 'not a certificate' }, 'certificate'],
      [{ label: 'ok', certificate: 'x'.repeat(10001) }, 'certificate'],
      [{ label: 'ok', ssoURL: 'not a url' }, 'ssoURL'],
      [{ label: 'ok', ssoURL: `https://idp.example.test/${'a'.repeat(2048)}` }, 'ssoURL'],
      [{ label: 'ok', defaultTeam: 'team_missing' }, 'defaultTeam'],
      [{ label: 'ok', defaultTeam: otherOrgTeamId }, 'defaultTeam'],
      [{ label: 'ok', defaultRole: 'owner' }, 'defaultRole'],
      [{ label: 'ok', colour: 'blue' }, 'colour'],
    ] as const) {
      const r = await t.rest('POST', base(), body);
      expect(r.status, JSON.stringify(body).slice(0, 80)).toBe(400);
      expect(r.body).toEqual({ error: { code: 400, message: expect.stringContaining(field) } });
    }
    expect(await providerCount()).toBe(before);
  });

  it('lists with the envelope and pages', async () => {
    const res = await t.client().orgs.listSamlProvidersInOrganizationById(t.org.id);
    expect(res.data.count).toBe(await providerCount());
    expect(res.data.items.length).toBe(res.data.count);
    expectValidResponse('GET', '/orgs/{organizationId}/saml', 200, validProviderList(res.data));
    const page = await t.rest('GET', `${base()}?limit=1`);
    expect(page.body.items).toHaveLength(1);
    expect(page.body.next.page).toEqual(expect.any(String));
    const page2 = await t.rest('GET', `${base()}?limit=1&page=${encodeURIComponent(page.body.next.page)}`);
    expect(page2.body.items[0].id).not.toBe(page.body.items[0].id);
  });

  it('lists in a constant number of SQL statements (default teams folded in)', async () => {
    const few = await t.countQueries(() => t.rest('GET', base()));
    for (let i = 0; i < 4; i++) await createActive(`Bulk ${i}`);
    const many = await t.countQueries(() => t.rest('GET', base()));
    expect(many.result.body.items.length).toBeGreaterThan(few.result.body.items.length);
    expect(many.count).toBe(few.count);
  });

  it('gets one; 404 for a missing id or an id of another organization', async () => {
    const p = await createActive('Get me');
    const res = await t.client().orgs.getOrganizationSamlProviderById(t.org.id, p.id);
    expect(res.data).toEqual(p);
    expectValidResponse('GET', '/orgs/{organizationId}/saml/{samlProviderId}', 200, res.data);
    expect((await t.rest('GET', `${base()}/saml_missing`)).status).toBe(404);
    const other = await t.gql(`mutation { createOrganization(input: { title: "Third org" }) { id } }`);
    expect((await t.rest('GET', `/v1/orgs/${other.data.createOrganization.id}/saml/${p.id}`)).status).toBe(404);
  });

  it('updates with PATCH (all optional); status follows the configuration; bad input changes nothing', async () => {
    const p = await createActive('Patch me');
    const res = await t.client().orgs.updateOrganizationSamlProvider(t.org.id, p.id, { label: 'Patched' });
    expect(res.status).toBe(200);
    expect(res.data).toMatchObject({ label: 'Patched', entityID: IDP_ENTITY_ID, status: 'active', defaultRole: 'edit' });
    expectValidResponse('PATCH', '/orgs/{organizationId}/saml/{samlProviderId}', 200, res.data);

    const cleared = await t.rest('PATCH', `${base()}/${p.id}`, { entityID: '', defaultRole: null, defaultTeam: '' });
    expect(cleared.status).toBe(200);
    expect(cleared.body).toMatchObject({ status: 'pending', entityID: '', defaultRole: null });
    expect(cleared.body.defaultTeam).toBeUndefined();
    expectValidResponse('PATCH', '/orgs/{organizationId}/saml/{samlProviderId}', 200, cleared.body);

    const restored = await t.rest('PATCH', `${base()}/${p.id}`, { entityID: IDP_ENTITY_ID, defaultTeam: teamId, certificate: otherIdp.certPem });
    expect(restored.body).toMatchObject({ status: 'active', defaultTeam: { id: teamId } });

    for (const [body, field] of [
      [{ label: '' }, 'label'],
      [{ certificate: '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----' }, 'certificate'],
      [{ ssoURL: 'ftp://idp.example.test' }, 'ssoURL'],
      [{ defaultTeam: 'team_missing' }, 'defaultTeam'],
      [{ defaultRole: 'superuser' }, 'defaultRole'],
      [{ id: 'saml_other' }, 'id'],
    ] as const) {
      const r = await t.rest('PATCH', `${base()}/${p.id}`, body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error.message).toContain(field);
    }
    const after = await t.rest('GET', `${base()}/${p.id}`);
    expect(after.body).toEqual(restored.body);
    expect((await t.rest('PATCH', `${base()}/saml_missing`, { label: 'x' })).status).toBe(404);
  });

  it('deletes with 204, also when absent; a missing organization is 404', async () => {
    const p = await createActive('Doomed');
    const first = await t.client().orgs.deleteOrganizationSamlProvider(t.org.id, p.id);
    expect(first.status).toBe(204);
    const second = await t.rest('DELETE', `${base()}/${p.id}`);
    expect(second.status).toBe(204);
    expect(second.text).toBe('');
    expect((await t.rest('GET', `${base()}/${p.id}`)).status).toBe(404);
    expect((await t.rest('DELETE', `/v1/orgs/org_missing/saml/${p.id}`)).status).toBe(404);
  });

  it('GET ORG/sso lists only active providers, for any member (guests too)', async () => {
    const active = await createActive('Active one');
    const pendingOne = await t.rest('POST', base(), { label: 'Pending one' });
    const res = await t.client().orgs.listSsoProviderLoginsInOrganization(t.org.id);
    expect(res.data.items).toContainEqual({ id: active.id, label: 'Active one', startURL: active.service.startURL });
    expect(res.data.items.find((i) => i.id === pendingOne.body.id)).toBeUndefined();
    expect(Object.keys(res.data)).toEqual(['items']);
    expectValidResponse('GET', '/orgs/{organizationId}/sso', 200, res.data);

    const asGuest = await t.rest('GET', `/v1/orgs/${t.org.id}/sso`, undefined, (await t.as('guest')).token);
    expect(asGuest.status).toBe(200);
    expect(asGuest.body).toEqual(res.data);
    await expectAccess(t, { method: 'GET', path: `/v1/orgs/${t.org.id}/sso` }, { anonymous: 401, outsider: 404, guest: 200, reader: 200, admin: 200 });
  });

  it('401 without a token on every operation', async () => {
    const p = await createActive('Auth');
    for (const [method, path, body] of [
      ['GET', base(), undefined],
      ['POST', base(), { label: 'x' }],
      ['GET', `${base()}/${p.id}`, undefined],
      ['PATCH', `${base()}/${p.id}`, { label: 'x' }],
      ['DELETE', `${base()}/${p.id}`, undefined],
    ] as const) {
      await expectAccess(t, { method, path, body }, { anonymous: 401 });
    }
    expect((await t.rest('GET', `${base()}/${p.id}`)).body.label).toBe('Auth');
  });

  it('members without admin may read but not write (403); guests may not read; outsiders get 404', async () => {
    const p = await createActive('Guarded');
    const before = await providerCount();
    const one = await t.rest('GET', `${base()}/${p.id}`, undefined, (await t.as('creator')).token);
    expect(one.status).toBe(200);
    expectValidResponse('GET', '/orgs/{organizationId}/saml/{samlProviderId}', 200, one.body);
    // samlProvider:read is `read`; samlProvider:write is `admin`.
    const read = { anonymous: 401, outsider: 404, guest: 403, reader: 200, creator: 200, admin: 200 };
    const write = { anonymous: 401, outsider: 404, guest: 403, reader: 403, editor: 403, creator: 403 };
    await expectAccess(t, { method: 'GET', path: base() }, read);
    await expectAccess(t, { method: 'GET', path: `${base()}/${p.id}` }, read);
    await expectAccess(t, { method: 'POST', path: base(), body: { label: 'x' } }, write);
    await expectAccess(t, { method: 'PATCH', path: `${base()}/${p.id}`, body: { label: 'x' } }, write);
    await expectAccess(t, { method: 'DELETE', path: `${base()}/${p.id}` }, write);
    expect(await providerCount()).toBe(before);
    expect((await t.rest('GET', `${base()}/${p.id}`)).body.label).toBe('Guarded');
  });
});

describe('SAML providers over GraphQL', () => {
  it('Organization.samlProviders, samlProvider(…), node(id:), certificateExpiresAt and the mutations', async () => {
    const created = await t.gql(
      `mutation($input: CreateSamlProviderInput!) { createSamlProvider(input: $input) { samlProvider { id label status certificateExpiresAt defaultRole defaultTeam { id title } service { acsURL } } } }`,
      { input: { organizationId: t.org.id, label: 'GraphQL', entityID: IDP_ENTITY_ID, certificate: idp.certPem, ssoURL: IDP_SSO_URL, defaultTeam: teamId, defaultRole: 'read' } },
    );
    expect(created.errors).toBeUndefined();
    const p = created.data.createSamlProvider.samlProvider;
    expect(p).toMatchObject({ label: 'GraphQL', status: 'active', defaultRole: 'read', defaultTeam: { id: teamId, title: 'SSO people' } });
    expect(new Date(p.certificateExpiresAt).getTime()).toBeGreaterThan(Date.now());

    const list = await t.gql(`query($id: ID!) { organization(id: $id) { samlProviders(first: 100) { totalCount nodes { id status } } ssoProviderLogins { id startURL } } }`, { id: t.org.id });
    expect(list.errors).toBeUndefined();
    expect(list.data.organization.samlProviders.totalCount).toBe(await providerCount());
    expect(list.data.organization.ssoProviderLogins.map((l: any) => l.id)).toContain(p.id);

    const one = await t.gql(`query($o: ID!, $id: ID!) { samlProvider(organizationId: $o, id: $id) { id label } }`, { o: t.org.id, id: p.id });
    expect(one.data.samlProvider).toEqual({ id: p.id, label: 'GraphQL' });
    const node = await t.gql(`query($id: ID!) { node(id: $id) { id ... on SamlProvider { label } } }`, { id: p.id });
    expect(node.data.node).toEqual({ id: p.id, label: 'GraphQL' });

    const updated = await t.gql(
      `mutation($input: UpdateSamlProviderInput!) { updateSamlProvider(input: $input) { samlProvider { id label defaultRole } } }`,
      { input: { organizationId: t.org.id, id: p.id, label: 'Renamed', defaultRole: null } },
    );
    expect(updated.data.updateSamlProvider.samlProvider).toEqual({ id: p.id, label: 'Renamed', defaultRole: null });

    const del = await t.gql(`mutation($input: DeleteSamlProviderInput!) { deleteSamlProvider(input: $input) { deleted deletedId } }`, {
      input: { organizationId: t.org.id, id: p.id },
    });
    expect(del.data.deleteSamlProvider).toEqual({ deleted: true, deletedId: p.id });
  });

  it('BAD_REQUEST names the field; FORBIDDEN for non-admins; outsiders cannot load by node id', async () => {
    const bad = await t.gql(`mutation($input: CreateSamlProviderInput!) { createSamlProvider(input: $input) { samlProvider { id } } }`, {
      input: { organizationId: t.org.id, label: 'Bad', certificate: 'nope' },
    });
    expect(bad.errors?.[0].extensions?.code).toBe('BAD_REQUEST');
    expect(bad.errors?.[0].extensions?.field).toBe('certificate');

    const editor = await t.createUser('edit');
    const denied = await t.gql(
      `mutation($input: CreateSamlProviderInput!) { createSamlProvider(input: $input) { samlProvider { id } } }`,
      { input: { organizationId: t.org.id, label: 'Nope' } },
      editor.token,
    );
    expect(denied.errors?.[0].extensions?.code).toBe('FORBIDDEN');

    const p = await createActive('Hidden');
    const outsider = await t.createUser(undefined);
    const node = await t.gql(`query($id: ID!) { node(id: $id) { id } }`, { id: p.id }, outsider.token);
    expect(node.data?.node ?? null).toBeNull();
  });
});

describe('SAML sign-in endpoints', () => {
  let provider: any;
  beforeAll(async () => {
    provider = await createActive('Sign-in');
  });

  function samlResponse(email: string, opts: Partial<Parameters<typeof buildSignedSamlResponse>[0]> = {}) {
    return buildSignedSamlResponse({
      keyPem: idp.keyPem,
      certPem: idp.certPem,
      issuer: IDP_ENTITY_ID,
      audience: provider.service.entityID,
      acsUrl: provider.service.acsURL,
      email,
      ...opts,
    });
  }

  async function postAcs(providerId: string, form: Record<string, string>) {
    const res = await fetch(`${t.baseUrl}/sso/saml/${providerId}/acs`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(form).toString(),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined, headers: res.headers };
  }

  it('accepts a signed response once: replaying it is refused', async () => {
    const response = samlResponse('replay@example.com');
    const first = await postAcs(provider.id, { SAMLResponse: response });
    expect(first.status).toBe(200);
    const again = await postAcs(provider.id, { SAMLResponse: response });
    expect(again.status).toBe(403);
    expect(again.body.error.message).toContain('already used');
  });

  it('start redirects (302) to the identity provider; pending providers 400; unknown 404', async () => {
    const res = await fetch(`${t.baseUrl}/sso/saml/${provider.id}/start`, { redirect: 'manual' });
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe(IDP_SSO_URL);
    const pendingOne = await t.rest('POST', base(), { label: 'Not ready' });
    const p = await fetch(`${t.baseUrl}/sso/saml/${pendingOne.body.id}/start`, { redirect: 'manual' });
    expect(p.status).toBe(400);
    expect((await p.json()).error.code).toBe(400);
    expect((await fetch(`${t.baseUrl}/sso/saml/saml_missing/start`, { redirect: 'manual' })).status).toBe(404);
    expect((await fetch(`${t.baseUrl}/sso/saml/${provider.id}/start`, { method: 'POST' })).status).toBe(405);
  });

  it('serves the service provider metadata at its entity ID', async () => {
    const res = await fetch(provider.service.entityID.replace(t.app.config.publicUrl, t.baseUrl));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('xml');
    const xml = await res.text();
    expect(xml).toContain(`entityID="${provider.service.entityID}"`);
    expect(xml).toContain(`Location="${provider.service.acsURL}"`);
  });

  it('a valid signed response creates the member with the default role and team, marks it SSO, and issues a token', async () => {
    const email = 'new.person@corp.example';
    const res = await postAcs(provider.id, { SAMLResponse: samlResponse(email) });
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.body).toMatchObject({
      user: { object: 'user', email },
      organization: { object: 'organization', id: t.org.id },
      member: { role: 'edit', sso: true },
      token: expect.any(String),
    });
    const user = await t.app.prisma.user.findUniqueOrThrow({ where: { email } });
    const member = await t.app.prisma.member.findUniqueOrThrow({ where: { organizationId_userId: { organizationId: t.org.id, userId: user.id } } });
    expect(member).toMatchObject({ role: 'edit', sso: true, disabled: false });
    expect(await t.app.prisma.teamMember.findUnique({ where: { teamId_userId: { teamId, userId: user.id } } })).not.toBeNull();

    // The token works against the API, as that user.
    const me = await t.rest('GET', `/v1/orgs/${t.org.id}`, undefined, res.body.token);
    expect(me.status).toBe(200);
    expect(me.body.permissions.admin).toBe(false);

    // Signing in again keeps the membership (and a role changed meanwhile).
    await t.app.prisma.member.update({ where: { id: member.id }, data: { role: 'admin' } });
    const again = await postAcs(provider.id, { SAMLResponse: samlResponse(email) });
    expect(again.status).toBe(200);
    expect(again.body.member.role).toBe('admin');
    expect(await t.app.prisma.member.count({ where: { userId: user.id } })).toBe(1);
  });

  it('an existing user (by e-mail) who was not a member becomes one, marked SSO', async () => {
    const existing = await t.createUser(undefined, { email: 'existing@corp.example' });
    const res = await postAcs(provider.id, { SAMLResponse: samlResponse('Existing@Corp.example') });
    expect(res.status).toBe(200);
    expect(res.body.user.id).toBe(existing.user.id);
    const m = await t.app.prisma.member.findUniqueOrThrow({ where: { organizationId_userId: { organizationId: t.org.id, userId: existing.user.id } } });
    expect(m.sso).toBe(true);
  });

  it('rejects tampered, foreign-signed, misaddressed and missing responses; nothing is created', async () => {
    const users = await t.app.prisma.user.count();
    const members = await t.app.prisma.member.count();

    const good = samlResponse('victim@corp.example');
    const xml = Buffer.from(good, 'base64').toString('utf8');
    const tampered = Buffer.from(xml.replace('victim@corp.example', 'attacker@corp.example')).toString('base64');
    expect(tampered).not.toBe(good);
    const r1 = await postAcs(provider.id, { SAMLResponse: tampered });
    expect(r1.status).toBe(403);
    expect(r1.body).toEqual({ error: { code: 403, message: expect.any(String) } });

    const foreign = buildSignedSamlResponse({
      keyPem: otherIdp.keyPem,
      certPem: otherIdp.certPem,
      issuer: IDP_ENTITY_ID,
      audience: provider.service.entityID,
      acsUrl: provider.service.acsURL,
      email: 'victim@corp.example',
    });
    expect((await postAcs(provider.id, { SAMLResponse: foreign })).status).toBe(403);

    const wrongAudience = samlResponse('victim@corp.example', { audience: 'https://someone-else.example/metadata' });
    expect((await postAcs(provider.id, { SAMLResponse: wrongAudience })).status).toBe(403);

    const missing = await postAcs(provider.id, {});
    expect(missing.status).toBe(400);
    expect(missing.body.error.message).toContain('SAMLResponse');
    expect((await postAcs(provider.id, { SAMLResponse: 'not base64 xml at all' })).status).toBe(403);
    expect((await postAcs('saml_missing', { SAMLResponse: good })).status).toBe(404);
    expect((await fetch(`${t.baseUrl}/sso/saml/${provider.id}/acs`)).status).toBe(405);

    expect(await t.app.prisma.user.count()).toBe(users);
    expect(await t.app.prisma.member.count()).toBe(members);
  });

  it('a disabled member cannot sign in; a pending provider refuses responses', async () => {
    const u = await t.createUser('read', { email: 'disabled@corp.example' });
    await t.app.prisma.member.updateMany({ where: { userId: u.user.id }, data: { disabled: true } });
    const r = await postAcs(provider.id, { SAMLResponse: samlResponse('disabled@corp.example') });
    expect(r.status).toBe(403);

    const pendingOne = await t.rest('POST', base(), { label: 'Half done', certificate: idp.certPem });
    const p = await postAcs(pendingOne.body.id, { SAMLResponse: samlResponse('someone@corp.example') });
    expect(p.status).toBe(400);
  });
});
