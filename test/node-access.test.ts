// node(id:) and nodes(ids:) reach every type by its prefixed id — and must never reveal an
// object to someone who may not see it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers.ts';

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
    }
    const user = await t.gql(`query($id: ID!) { node(id: $id) { id } }`, { id: t.adminUser.id }, outsider.token);
    expect(user.data?.node ?? null).toBeNull();
  });
});
