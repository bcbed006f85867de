// node(id:) and nodes(ids:) reach every type by its prefixed id — and must never reveal an
// object to someone who may not see it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers.ts';
import { ID_PREFIXES, newId, type IdType } from '../src/lib/ids.ts';

let t: TestApp;
let ids: Record<string, string> = {};

beforeAll(async () => {
  t = await startTestApp();
  const org = t.org.id;
  const post = async (path: string, body?: unknown, method = 'POST') => {
    const r = await t.rest(method, path, body);
    expect(r.status, `${method} ${path}: ${JSON.stringify(r.body)}`).toBeLessThan(300);
    return r.body;
  };
  const space = await post(`/v1/orgs/${org}/spaces`, { title: 'Private stuff' });
  const collection = await post(`/v1/orgs/${org}/collections`, { title: 'Coll' });
  const content = await post(`/v1/spaces/${space.id}/content`, {
    changes: [
      { operation: 'insert_page', title: 'P', document: { markdown: 'x' } },
      { operation: 'insert_files', files: [{ name: 'a.txt', contentType: 'text/plain', base64: Buffer.from('hi').toString('base64') }] },
    ],
  });
  const cr = await post(`/v1/spaces/${space.id}/change-requests`, { subject: 'cr' });
  const comment = await post(`/v1/spaces/${space.id}/comments`, { body: { markdown: 'c' } });
  const reply = await post(`/v1/spaces/${space.id}/comments/${comment.id}/replies`, { body: { markdown: 'r' } });
  const team = await post(`/v1/orgs/${org}/teams`, { title: 'Team' }, 'PUT');
  const site = await post(`/v1/orgs/${org}/sites`, { title: 'Site', spaces: [space.id] });
  const section = await post(`/v1/orgs/${org}/sites/${site.id}/sections`, { spaceId: space.id });
  const group = await post(`/v1/orgs/${org}/sites/${site.id}/section-groups`, { title: 'G', sections: [section.id] });
  const siteSpaces = await t.rest('GET', `/v1/orgs/${org}/sites/${site.id}/site-spaces`);
  const link = await post(`/v1/orgs/${org}/sites/${site.id}/share-links`, { name: 'l' });
  const saml = await post(`/v1/orgs/${org}/saml`, { label: 'IdP' });
  const spec = await post(`/v1/orgs/${org}/openapi`, { slug: 'pets', source: { text: '{"openapi":"3.0.3","info":{"title":"x","version":"1"},"paths":{}}' } });
  const translation = await post(`/v1/orgs/${org}/translations`, { title: 'French' });
  const webhook = await post(`/v1/orgs/${org}/webhooks`, { url: 'http://127.0.0.1:9/hook' });
  const webhookDelivery = (await t.rest('GET', `/v1/orgs/${org}/webhooks/${webhook.id}/deliveries`)).body.items[0];
  const member = await t.app.prisma.member.findFirstOrThrow({ where: { organizationId: org, userId: t.adminUser.id } });
  ids = {
    Organization: org,
    User: t.adminUser.id,
    Member: member.id,
    Team: team.id,
    Collection: collection.id,
    Space: space.id,
    Revision: content.revision,
    File: content.insertedFiles[0].id,
    ChangeRequest: cr.id,
    Comment: comment.id,
    CommentReply: reply.id,
    Site: site.id,
    SiteSection: section.id,
    SiteSectionGroup: group.id,
    SiteSpace: siteSpaces.body.items[0].id,
    ShareLink: link.id,
    SamlProvider: saml.id,
    OpenApiSpec: spec.id,
    TranslationSettings: translation.id,
    Webhook: webhook.id,
    WebhookDelivery: webhookDelivery.id,
  };
});
afterAll(async () => {
  await t?.close();
});

describe('node(id:)', () => {
  it('finds every type for someone who may see it', async () => {
    for (const [type, id] of Object.entries(ids)) {
      const r = await t.gql(`query($id: ID!) { node(id: $id) { id __typename } }`, { id });
      expect(r.data?.node, `${type} ${id}: ${JSON.stringify(r.errors)}`).toEqual({ id, __typename: type });
    }
  });

  it('reveals nothing to an outsider', async () => {
    const outsider = await t.createUser(undefined);
    for (const [type, id] of Object.entries(ids)) {
      if (type === 'User') continue; // people are visible to those who share an organization; the outsider shares none
      const r = await t.gql(`query($id: ID!) { node(id: $id) { id __typename } }`, { id }, outsider.token);
      expect(r.data?.node ?? null, `${type} leaked to an outsider`).toBeNull();
      // Indistinguishable from an id that does not exist.
      expect(r.errors?.map((e) => e.extensions?.code), `${type} for an outsider`).toEqual(['NOT_FOUND']);
    }
    const user = await t.gql(`query($id: ID!) { node(id: $id) { id } }`, { id: t.adminUser.id }, outsider.token);
    expect(user.data?.node ?? null).toBeNull();
  });
});

const NODE_QUERY = `query($id: ID!) { node(id: $id) { id __typename } }`;
const NODES_QUERY = `query($ids: [ID!]!) { nodes(ids: $ids) { id __typename } }`;

/** Ids that name nothing: a fresh id of every prefix, and garbage. */
function unknownIds(): Array<[string, string]> {
  const fresh = (Object.keys(ID_PREFIXES) as IdType[]).map((type): [string, string] => [`unknown ${type}`, newId(type)]);
  return [
    ...fresh,
    ['empty', ''],
    ['dots', '..'],
    ['no prefix', 'abc'],
    ['unknown prefix', 'foo_0000000000000000000000'],
    ['prefix only', 'space_'],
    ['space_ + nonsense', 'space_ 💥 ; DROP TABLE "Space"; --'],
    ['space_ + path', 'space_../../etc/passwd'],
    ['nested prefix', `space_${newId('Organization')}`],
    ['very long', `space_${'x'.repeat(100_000)}`],
    ['unicode', 'ünïcødé_✓'],
    ['unicode prefix', 'spacé_0000000000000000000000'],
    ['lone surrogate', 'space_\ud800'],
    ['whitespace', ' \t\n'],
  ];
}

describe('node(id:) with ids that name nothing', () => {
  it('answers null with NOT_FOUND for every prefix and for garbage, whoever asks', async () => {
    const guest = await t.createUser(null);
    const outsider = await t.createUser(undefined);
    for (const [who, token] of [['admin', t.token], ['guest', guest.token], ['outsider', outsider.token]] as const) {
      for (const [label, id] of unknownIds()) {
        const r = await t.gql(NODE_QUERY, { id }, token);
        expect(r.status, `${who}: ${label}`).toBe(200);
        expect(r.data?.node, `${who}: ${label}`).toBeNull();
        expect(r.errors?.map((e) => e.extensions?.code), `${who}: ${label}: ${JSON.stringify(r.errors)}`).toEqual(['NOT_FOUND']);
      }
    }
  });
});

describe('node(id:) with a NUL byte', () => {
  it('is a BAD_REQUEST naming the variable, refused before any lookup (input hygiene)', async () => {
    const r = await t.gql(NODE_QUERY, { id: 'space_abc\u0000def' });
    expect(r.status).toBe(200); // a request error under application/json (GraphQL over HTTP): nothing ran
    expect(r.data).toBeUndefined();
    expect(r.errors?.map((e) => [e.extensions?.code, e.extensions?.field])).toEqual([['BAD_REQUEST', 'variables.id']]);
  });
});

describe('nodes(ids:)', () => {
  it('answers every id in place: found ones, and null with its own NOT_FOUND for the others', async () => {
    const garbage = unknownIds().map(([, id]) => id);
    const input = [ids.Space, ...garbage, ids.Organization, ids.Revision];
    const r = await t.gql(NODES_QUERY, { ids: input });
    expect(r.status).toBe(200);
    expect(r.data.nodes).toHaveLength(input.length);
    expect(r.data.nodes[0]).toEqual({ id: ids.Space, __typename: 'Space' });
    expect(r.data.nodes.slice(1, 1 + garbage.length)).toEqual(garbage.map(() => null));
    expect(r.data.nodes.at(-2)).toEqual({ id: ids.Organization, __typename: 'Organization' });
    expect(r.data.nodes.at(-1)).toEqual({ id: ids.Revision, __typename: 'Revision' });
    const errors = (r.errors ?? []) as Array<{ path?: Array<string | number>; extensions?: { code?: string } }>;
    expect(errors.map((e) => e.extensions?.code)).toEqual(garbage.map(() => 'NOT_FOUND'));
    expect(errors.map((e) => e.path).sort((a, b) => Number(a![1]) - Number(b![1]))).toEqual(garbage.map((_, i) => ['nodes', i + 1]));
  });

  it('hides from an outsider exactly what node(id:) hides', async () => {
    const outsider = await t.createUser(undefined);
    const visible = Object.entries(ids).filter(([type]) => type !== 'User');
    const r = await t.gql(NODES_QUERY, { ids: visible.map(([, id]) => id) }, outsider.token);
    expect(r.data.nodes).toEqual(visible.map(() => null));
    expect(r.errors?.map((e) => e.extensions?.code)).toEqual(visible.map(() => 'NOT_FOUND'));
  });
});
