// Translation settings over REST (official client + raw requests) and GraphQL.
//
// The seeds define TranslationSettings (`object: 'translation-settings'`, `title`, `languages`).
// The OpenAPI document of @gitbook/api@0.130.0 describes another resource ("Translation":
// `source`, `language`, `instructions`, `status`, `stats`) under the same paths, so responses are
// validated against the seed's resource (below) and the document's list envelope, not against
// the document's `Translation` schema. The official client still works: it sends the body we
// give it and returns the JSON it gets.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import { expectAccess, startTestApp, type TestApp } from './helpers.ts';
import { openapiSpec } from './openapi.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.close();
});

const ajv = new Ajv({ strict: false, allErrors: true });
addFormats(ajv);
const TranslationSettingsSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['object', 'id', 'title', 'languages', 'createdAt', 'updatedAt', 'permissions', 'urls'],
  properties: {
    object: { enum: ['translation-settings'] },
    id: { type: 'string' },
    title: { type: 'string', minLength: 1, maxLength: 100 },
    languages: { type: 'array', items: { type: 'string' } },
    createdAt: { type: 'string', format: 'date-time' },
    updatedAt: { type: 'string', format: 'date-time' },
    permissions: {
      type: 'object',
      additionalProperties: false,
      required: ['view', 'edit'],
      properties: { view: { type: 'boolean' }, edit: { type: 'boolean' } },
    },
    urls: { type: 'object', required: ['location'], properties: { location: { type: 'string', format: 'uri' } } },
  },
};
const validateOne = ajv.compile(TranslationSettingsSchema);
const validateList = ajv.compile({
  allOf: [openapiSpec.components.schemas.List, { type: 'object', required: ['items'], properties: { items: { type: 'array', items: TranslationSettingsSchema } } }],
});

function expectValidSettings(body: unknown) {
  if (!validateOne(body)) throw new Error(`invalid TranslationSettings: ${ajv.errorsText(validateOne.errors)}\n${JSON.stringify(body)}`);
}
function expectValidList(body: unknown) {
  if (!validateList(body)) throw new Error(`invalid TranslationSettings list: ${ajv.errorsText(validateList.errors)}\n${JSON.stringify(body)}`);
}

const base = () => `/v1/orgs/${t.org.id}/translations`;
const count = () => t.app.prisma.translationSettings.count({ where: { organizationId: t.org.id } });

describe('translation settings over REST', () => {
  it('creates through the official client (201), canonicalizing languages', async () => {
    const res = await t.client().orgs.createTranslation(t.org.id, { title: 'Localized docs', languages: ['fr', 'en-us', 'de', 'FR'] } as never);
    expect(res.status).toBe(201);
    const body = res.data as any;
    expect(body).toMatchObject({
      object: 'translation-settings',
      title: 'Localized docs',
      languages: ['fr', 'en-US', 'de'],
      permissions: { view: true, edit: true },
      urls: { location: `${t.app.config.publicUrl}/v1/orgs/${t.org.id}/translations/${body.id}` },
    });
    expect(body.id).toMatch(/^trs_/);
    expectValidSettings(body);

    const noLanguages = await t.rest('POST', base(), { title: 'Only a title' });
    expect(noLanguages.status).toBe(201);
    expect(noLanguages.body.languages).toEqual([]);
    expectValidSettings(noLanguages.body);
  });

  it('rejects bad create bodies with 400 naming the field, creating nothing', async () => {
    const before = await count();
    for (const [body, field] of [
      [{}, 'title'],
      [{ title: '' }, 'title'],
      [{ title: '   ' }, 'title'],
      [{ title: 'x'.repeat(101) }, 'title'],
      [{ title: 42 }, 'title'],
      [{ title: 'ok', languages: ['en', 'not a tag!'] }, 'languages'],
      [{ title: 'ok', languages: 'en' }, 'languages'],
      [{ title: 'ok', color: 'blue' }, 'color'],
    ] as const) {
      const r = await t.rest('POST', base(), body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body).toEqual({ error: { code: 400, message: expect.stringContaining(field) } });
    }
    expect((await t.rest('POST', base(), '{"title": ')).status).toBe(400);
    expect(await count()).toBe(before);
  });

  it('lists with the envelope and pages with a cursor', async () => {
    const res = await t.client().orgs.listTranslations(t.org.id);
    expectValidList(res.data);
    const total = await count();
    expect(res.data.count).toBe(total);
    expect(res.data.items.length).toBe(total);
    expect(res.data.next).toBeUndefined();

    const page1 = await t.rest('GET', `${base()}?limit=1`);
    expect(page1.status).toBe(200);
    expectValidList(page1.body);
    expect(page1.body.items).toHaveLength(1);
    expect(page1.body.next.page).toEqual(expect.any(String));
    const page2 = await t.rest('GET', `${base()}?limit=1&page=${encodeURIComponent(page1.body.next.page)}`);
    expect(page2.body.items[0].id).not.toBe(page1.body.items[0].id);
    expect((await t.rest('GET', `${base()}?limit=5000`)).status).toBe(400);
  });

  it('lists in a constant number of SQL statements', async () => {
    const few = await t.countQueries(() => t.rest('GET', base()));
    for (let i = 0; i < 3; i++) await t.rest('POST', base(), { title: `Bulk ${i}` });
    const many = await t.countQueries(() => t.rest('GET', base()));
    expect(many.result.body.items.length).toBe(few.result.body.items.length + 3);
    expect(many.count).toBe(few.count);
  });

  it('gets one; 404 for missing ids and ids of another organization', async () => {
    const created = await t.rest('POST', base(), { title: 'Get me', languages: ['ja'] });
    const res = await t.client().orgs.getTranslation(t.org.id, created.body.id);
    expect(res.data).toEqual(created.body);
    expectValidSettings(res.data);

    expect((await t.rest('GET', `${base()}/trs_missing`)).status).toBe(404);
    const other = await t.gql(`mutation { createOrganization(input: { title: "Other org" }) { id } }`);
    const otherId = other.data.createOrganization.id;
    expect((await t.rest('GET', `/v1/orgs/${otherId}/translations/${created.body.id}`)).status).toBe(404);
    expect((await t.rest('GET', `/v1/orgs/org_missing/translations`)).status).toBe(404);
  });

  it('updates with PUT (title required; languages replaced when given, kept when omitted)', async () => {
    const created = await t.rest('POST', base(), { title: 'Before', languages: ['es'] });
    const id = created.body.id;
    t.clock.advance(60_000);
    const res = await t.client().orgs.updateTranslation(t.org.id, id, { title: 'After' } as never);
    expect(res.status).toBe(200);
    expect(res.data).toMatchObject({ id, title: 'After', languages: ['es'] });
    expect(new Date((res.data as any).updatedAt).getTime()).toBeGreaterThan(new Date(created.body.updatedAt).getTime());
    expectValidSettings(res.data);

    const replaced = await t.rest('PUT', `${base()}/${id}`, { title: 'After', languages: ['pt-br', 'zh-Hant-TW'] });
    expect(replaced.status).toBe(200);
    expect(replaced.body.languages).toEqual(['pt-BR', 'zh-Hant-TW']);
    expectValidSettings(replaced.body);

    for (const [body, field] of [
      [{}, 'title'],
      [{ languages: ['en'] }, 'title'],
      [{ title: '' }, 'title'],
      [{ title: 'ok', languages: ['en_US!'] }, 'languages'],
      [{ title: 'ok', extra: 1 }, 'extra'],
    ] as const) {
      const r = await t.rest('PUT', `${base()}/${id}`, body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error.message).toContain(field);
    }
    const after = await t.rest('GET', `${base()}/${id}`);
    expect(after.body).toMatchObject({ title: 'After', languages: ['pt-BR', 'zh-Hant-TW'] });

    expect((await t.rest('PUT', `${base()}/trs_missing`, { title: 'x' })).status).toBe(404);
  });

  it('deletes idempotently: 205, then 204; a missing organization is 404', async () => {
    const created = await t.rest('POST', base(), { title: 'Doomed' });
    const first = await t.client().orgs.deleteTranslation(t.org.id, created.body.id);
    expect(first.status).toBe(205);
    expect(await first.text()).toBe('');
    const second = await t.rest('DELETE', `${base()}/${created.body.id}`);
    expect(second.status).toBe(204);
    expect(second.text).toBe('');
    expect((await t.rest('GET', `${base()}/${created.body.id}`)).status).toBe(404);
    expect((await t.rest('DELETE', `/v1/orgs/org_missing/translations/${created.body.id}`)).status).toBe(404);
  });

  it('401 without a token on every operation', async () => {
    const created = await t.rest('POST', base(), { title: 'Auth' });
    const id = created.body.id;
    for (const [method, path, body] of [
      ['GET', base(), undefined],
      ['POST', base(), { title: 'x' }],
      ['GET', `${base()}/${id}`, undefined],
      ['PUT', `${base()}/${id}`, { title: 'x' }],
      ['DELETE', `${base()}/${id}`, undefined],
    ] as const) {
      await expectAccess(t, { method, path, body }, { anonymous: 401 });
    }
    expect((await t.rest('GET', `${base()}/${id}`)).body.title).toBe('Auth');
  });

  it('members without admin may read but not write (403); guests may not read; outsiders get 404', async () => {
    const created = await t.rest('POST', base(), { title: 'Guarded' });
    const id = created.body.id;
    const before = await count();

    for (const name of ['reader', 'creator'] as const) {
      const member = await t.as(name);
      const list = await t.rest('GET', base(), undefined, member.token);
      expect(list.status).toBe(200);
      expect(list.body.items.find((i: any) => i.id === id).permissions).toEqual({ view: true, edit: false });
      const one = await t.rest('GET', `${base()}/${id}`, undefined, member.token);
      expect(one.status).toBe(200);
      expectValidSettings(one.body);
    }

    // translations:read is `read` (not guests); translations:write is `admin`.
    const read = { anonymous: 401, outsider: 404, guest: 403, reader: 200, creator: 200, admin: 200 };
    const write = { anonymous: 401, outsider: 404, guest: 403, reader: 403, editor: 403, creator: 403 };
    await expectAccess(t, { method: 'GET', path: base() }, read);
    await expectAccess(t, { method: 'GET', path: `${base()}/${id}` }, read);
    await expectAccess(t, { method: 'POST', path: base(), body: { title: 'x' } }, write);
    await expectAccess(t, { method: 'PUT', path: `${base()}/${id}`, body: { title: 'x' } }, write);
    await expectAccess(t, { method: 'DELETE', path: `${base()}/${id}` }, write);
    expect(await count()).toBe(before);
    expect((await t.rest('GET', `${base()}/${id}`)).body.title).toBe('Guarded');
  });
});

describe('translation settings over GraphQL', () => {
  it('Organization.translations, translationSettings(…) and node(id:)', async () => {
    const created = await t.gql(
      `mutation($input: CreateTranslationSettingsInput!) { createTranslationSettings(input: $input) { translationSettings { id title languages permissions { view edit } } } }`,
      { input: { organizationId: t.org.id, title: 'From GraphQL', languages: ['it'] } },
    );
    expect(created.errors).toBeUndefined();
    const s = created.data.createTranslationSettings.translationSettings;
    expect(s).toMatchObject({ title: 'From GraphQL', languages: ['it'], permissions: { view: true, edit: true } });

    const list = await t.gql(`query($id: ID!) { organization(id: $id) { translations(first: 100) { totalCount nodes { id title } } } }`, { id: t.org.id });
    expect(list.errors).toBeUndefined();
    expect(list.data.organization.translations.totalCount).toBe(await count());
    expect(list.data.organization.translations.nodes.map((n: any) => n.id)).toContain(s.id);

    const one = await t.gql(`query($o: ID!, $id: ID!) { translationSettings(organizationId: $o, id: $id) { id title urls { location } } }`, { o: t.org.id, id: s.id });
    expect(one.data.translationSettings.title).toBe('From GraphQL');
    const node = await t.gql(`query($id: ID!) { node(id: $id) { id ... on TranslationSettings { title } } }`, { id: s.id });
    expect(node.data.node).toEqual({ id: s.id, title: 'From GraphQL' });

    const updated = await t.gql(
      `mutation($input: UpdateTranslationSettingsInput!) { updateTranslationSettings(input: $input) { translationSettings { id title languages } } }`,
      { input: { organizationId: t.org.id, id: s.id, title: 'Renamed', languages: [] } },
    );
    expect(updated.data.updateTranslationSettings.translationSettings).toEqual({ id: s.id, title: 'Renamed', languages: [] });

    const del = await t.gql(`mutation($input: DeleteTranslationSettingsInput!) { deleteTranslationSettings(input: $input) { deleted deletedId } }`, {
      input: { organizationId: t.org.id, id: s.id },
    });
    expect(del.data.deleteTranslationSettings).toEqual({ deleted: true, deletedId: s.id });
  });

  it('BAD_REQUEST names the field; FORBIDDEN for non-admins; outsiders cannot load by node id', async () => {
    const bad = await t.gql(`mutation($input: CreateTranslationSettingsInput!) { createTranslationSettings(input: $input) { translationSettings { id } } }`, {
      input: { organizationId: t.org.id, title: 'ok', languages: ['??'] },
    });
    expect(bad.errors?.[0].extensions?.code).toBe('BAD_REQUEST');
    expect(bad.errors?.[0].extensions?.field).toMatch(/^languages/);

    const reader = await t.createUser('read');
    const denied = await t.gql(
      `mutation($input: CreateTranslationSettingsInput!) { createTranslationSettings(input: $input) { translationSettings { id } } }`,
      { input: { organizationId: t.org.id, title: 'Nope' } },
      reader.token,
    );
    expect(denied.errors?.[0].extensions?.code).toBe('FORBIDDEN');

    const created = await t.rest('POST', base(), { title: 'Hidden' });
    const outsider = await t.createUser(undefined);
    const node = await t.gql(`query($id: ID!) { node(id: $id) { id } }`, { id: created.body.id }, outsider.token);
    expect(node.data?.node ?? null).toBeNull();
  });
});
