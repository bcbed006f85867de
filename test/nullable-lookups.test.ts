// Nullable lookups: every single-object root field on Query answers `null` plus one
// error for that field when the object is missing, invisible, forbidden or asked for wrongly, and
// every other root field of the request keeps its data (as GitHub's API does). The REST shim still
// turns those errors into 404/403/400, since it reads `errors`, not `data`.
import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getNamedType, isListType, isNonNullType, isObjectType, isInterfaceType, isUnionType, type GraphQLField } from 'graphql';
import { startTestApp, type TestApp } from './helpers.ts';
import { schema } from '../src/graphql/schema.ts';
import { newId } from '../src/lib/ids.ts';
import { applyChanges, createInitialRevision } from '../src/domain/revisions.ts';

let t: TestApp;
/** Ids of one existing object of every kind a lookup reads. */
const f = {} as Record<string, string>;

async function mutate(document: string, input: Record<string, unknown>) {
  const r = await t.gql(document, { input });
  expect(r.errors, document).toBeUndefined();
  return r.data;
}

beforeAll(async () => {
  t = await startTestApp();
  const org = t.org.id;
  f.space = newId('Space');
  f.site = newId('Site');
  f.siteSpace = newId('SiteSpace');
  await t.app.prisma.$transaction(
    async (tx) => {
      await tx.space.create({ data: { id: f.space, organizationId: org, title: 'Handbook' } });
      const rev0 = await createInitialRevision(tx, f.space, t.adminUser.id);
      const b = await applyChanges(tx, {
        spaceId: f.space,
        createdById: t.adminUser.id,
        storage: t.app.services.storage,
        baseRevisionId: rev0.id,
        changes: [{ operation: 'insert_page', title: 'Intro', document: { markdown: 'Welcome.' } }],
      });
      await tx.space.update({ where: { id: f.space }, data: { revisionId: b.revision.id } });
      await tx.site.create({ data: { id: f.site, organizationId: org, title: 'Docs', published: true, proxy: 'nullable.example.net/docs', defaultSiteSpaceId: f.siteSpace } });
      await tx.siteSpace.create({ data: { id: f.siteSpace, siteId: f.site, spaceId: f.space, path: 'handbook', position: 0 } });
    },
    { timeout: 60_000 },
  );
  f.collection = (await mutate(`mutation($input: CreateCollectionInput!) { createCollection(input: $input) { collection { id } } }`, { organizationId: org, title: 'Guides' })).createCollection.collection.id;
  f.changeRequest = (await mutate(`mutation($input: CreateChangeRequestInput!) { createChangeRequest(input: $input) { changeRequest { id } } }`, { spaceId: f.space, subject: 'Draft' })).createChangeRequest.changeRequest.id;
  f.comment = (await mutate(`mutation($input: PostCommentInput!) { postComment(input: $input) { comment { id } } }`, { spaceId: f.space, body: { markdown: 'A thread.' } })).postComment.comment.id;
  f.reply = (await mutate(`mutation($input: PostCommentReplyInput!) { postCommentReply(input: $input) { reply { id } } }`, { spaceId: f.space, commentId: f.comment, body: { markdown: 'A reply.' } })).postCommentReply.reply.id;
  f.team = (await mutate(`mutation($input: CreateTeamInput!) { createTeam(input: $input) { team { id } } }`, { organizationId: org, title: 'Writers' })).createTeam.team.id;
  f.saml = (await mutate(`mutation($input: CreateSamlProviderInput!) { createSamlProvider(input: $input) { samlProvider { id } } }`, { organizationId: org, label: 'Okta' })).createSamlProvider.samlProvider.id;
  f.translations = (await mutate(`mutation($input: CreateTranslationSettingsInput!) { createTranslationSettings(input: $input) { translationSettings { id } } }`, { organizationId: org, title: 'French' })).createTranslationSettings.translationSettings.id;
  f.webhook = (await mutate(`mutation($input: CreateWebhookInput!) { createWebhook(input: $input) { webhook { id } } }`, { organizationId: org, url: 'http://127.0.0.1:9/hook', eventTypes: ['space_created'] })).createWebhook.webhook.id;
  await mutate(`mutation($input: CreateSiteRedirectInput!) { createSiteRedirect(input: $input) { redirect { id } } }`, { siteId: f.site, source: '/old', destination: { kind: 'site_space', siteSpaceId: f.siteSpace } });
  await mutate(`mutation($input: UpdateSiteAdaptiveSchemaInput!) { updateSiteAdaptiveSchema(input: $input) { adaptiveSchema { updatedAt } } }`, { siteId: f.site, jsonSchema: { type: 'object', properties: { beta: { type: 'boolean', description: 'Beta tester' } }, additionalProperties: false } });
  f.spec = 'petstore';
  await mutate(`mutation($input: CreateOpenApiSpecInput!) { createOpenApiSpec(input: $input) { openApiSpec { id } } }`, { organizationId: org, slug: f.spec, source: { text: '{"openapi":"3.0.0","info":{"title":"Pets","version":"1"},"paths":{}}' } });
  const spec = await t.app.prisma.openApiSpec.findFirstOrThrow({ where: { organizationId: org, slug: f.spec } });
  // A version appears when the (absent) worker processes the spec: written here instead.
  f.specVersion = newId('OpenApiSpecVersion');
  await t.app.prisma.openApiSpecVersion.create({ data: { id: f.specVersion, specId: spec.id, url: 'https://example.com/pets.json', contentHash: 'x', filesystem: {} } });
  f.pdf = (await mutate(`mutation($input: StartChangeRequestPdfExportInput!) { startChangeRequestPdfExport(input: $input) { pdfExport { id } } }`, { spaceId: f.space, changeRequestId: f.changeRequest })).startChangeRequestPdfExport.pdfExport.id;
  // An import job's row as importSpaceContent writes it (the import itself needs a worker and a URL).
  f.importJob = newId('ImportJob');
  await t.app.prisma.importJob.create({ data: { id: f.importJob, spaceId: f.space, url: 'https://example.com/', source: 'website', createdById: t.adminUser.id } });
  const events = await t.gql(`query($id: ID!) { organization(id: $id) { auditEvents(first: 1) { nodes { id } } } }`, { id: org });
  f.auditEvent = events.data.organization.auditEvents.nodes[0].id;
}, 120_000);
afterAll(async () => {
  await t?.close();
});

type Args = Record<string, string | number>;
/** One lookup: its arguments for an existing object and for a missing one, and the type it answers. */
type Lookup = { field: string; type: string; found: () => Args; missing: () => Args };

const LOOKUPS: Lookup[] = [
  { field: 'auditEvent', type: 'AuditEvent', found: () => ({ organizationId: t.org.id, id: f.auditEvent }), missing: () => ({ organizationId: t.org.id, id: crypto.randomUUID() }) },
  { field: 'changeRequest', type: 'ChangeRequest', found: () => ({ spaceId: f.space, idOrNumber: f.changeRequest }), missing: () => ({ spaceId: f.space, idOrNumber: '999' }) },
  { field: 'collection', type: 'Collection', found: () => ({ id: f.collection }), missing: () => ({ id: newId('Collection') }) },
  { field: 'comment', type: 'Comment', found: () => ({ spaceId: f.space, id: f.comment }), missing: () => ({ spaceId: f.space, id: newId('Comment') }) },
  { field: 'commentReply', type: 'CommentReply', found: () => ({ spaceId: f.space, commentId: f.comment, id: f.reply }), missing: () => ({ spaceId: f.space, commentId: f.comment, id: newId('Comment') }) },
  { field: 'importJob', type: 'ImportJob', found: () => ({ id: f.importJob }), missing: () => ({ id: newId('ImportJob') }) },
  { field: 'member', type: 'Member', found: () => ({ organizationId: t.org.id, userId: t.adminUser.id }), missing: () => ({ organizationId: t.org.id, userId: newId('User') }) },
  { field: 'openApiSpec', type: 'OpenApiSpec', found: () => ({ organizationId: t.org.id, slug: f.spec }), missing: () => ({ organizationId: t.org.id, slug: 'no-such-spec' }) },
  { field: 'openApiSpecVersion', type: 'OpenApiSpecVersion', found: () => ({ organizationId: t.org.id, slug: f.spec, versionId: f.specVersion }), missing: () => ({ organizationId: t.org.id, slug: f.spec, versionId: newId('OpenApiSpecVersion') }) },
  { field: 'organization', type: 'Organization', found: () => ({ id: t.org.id }), missing: () => ({ id: newId('Organization') }) },
  { field: 'pdfExport', type: 'PdfExport', found: () => ({ id: f.pdf }), missing: () => ({ id: newId('PdfExport') }) },
  { field: 'publishedContentByUrl', type: 'PublishedContentLookup', found: () => ({ url: 'https://nullable.example.net/docs' }), missing: () => ({ url: 'https://nowhere.example.net/docs' }) },
  { field: 'publishedSite', type: 'Site', found: () => ({ siteId: f.site }), missing: () => ({ siteId: newId('Site') }) },
  { field: 'samlProvider', type: 'SamlProvider', found: () => ({ organizationId: t.org.id, id: f.saml }), missing: () => ({ organizationId: t.org.id, id: newId('SamlProvider') }) },
  { field: 'site', type: 'Site', found: () => ({ id: f.site }), missing: () => ({ id: newId('Site') }) },
  { field: 'siteAdaptiveSchema', type: 'SiteAdaptiveSchema', found: () => ({ siteId: f.site }), missing: () => ({ siteId: newId('Site') }) },
  { field: 'sitePublishingAuth', type: 'SitePublishingAuth', found: () => ({ siteId: f.site }), missing: () => ({ siteId: newId('Site') }) },
  { field: 'siteRedirectBySource', type: 'SiteRedirectLookup', found: () => ({ siteId: f.site, source: '/old' }), missing: () => ({ siteId: f.site, source: '/never-there' }) },
  { field: 'space', type: 'Space', found: () => ({ id: f.space }), missing: () => ({ id: newId('Space') }) },
  { field: 'team', type: 'Team', found: () => ({ organizationId: t.org.id, id: f.team }), missing: () => ({ organizationId: t.org.id, id: newId('Team') }) },
  { field: 'translationSettings', type: 'TranslationSettings', found: () => ({ organizationId: t.org.id, id: f.translations }), missing: () => ({ organizationId: t.org.id, id: newId('TranslationSettings') }) },
  { field: 'user', type: 'User', found: () => ({ id: t.adminUser.id }), missing: () => ({ id: newId('User') }) },
  { field: 'webhook', type: 'Webhook', found: () => ({ id: f.webhook }), missing: () => ({ id: newId('Webhook') }) },
];

/** `field(a: "x", b: 2)`: ids and keys written as GraphQL literals (JSON strings are valid ones). */
const call = (field: string, args: Args) => `${field}(${Object.entries(args).map(([k, v]) => `${k}: ${JSON.stringify(v)}`).join(', ')})`;

/**
 * The root fields that look up one object: they return an object (or interface or union) type,
 * not a list and not a connection, and take at least one required argument (an id or a key).
 */
function lookupRootFields(): GraphQLField<unknown, unknown>[] {
  return Object.values(schema.getQueryType()!.getFields()).filter((field) => {
    const inner = isNonNullType(field.type) ? field.type.ofType : field.type;
    if (isListType(inner)) return false;
    const named = getNamedType(field.type);
    if (!isObjectType(named) && !isInterfaceType(named) && !isUnionType(named)) return false;
    if ((isObjectType(named) || isInterfaceType(named)) && 'pageInfo' in named.getFields()) return false;
    return field.args.some((a) => isNonNullType(a.type));
  });
}

describe('the schema: single-object lookups are nullable', () => {
  it('every root field that looks up one object by id or key is nullable (a future one cannot regress)', () => {
    const fields = lookupRootFields();
    const nonNull = fields.filter((field) => isNonNullType(field.type)).map((field) => `${field.name}: ${String(field.type)}`);
    expect(nonNull).toEqual([]);
    // The walk finds every lookup this file exercises (so the rule above is not vacuous), and
    // `viewer` (no argument) and the connections stay non-null.
    const names = fields.map((field) => field.name);
    for (const l of LOOKUPS) expect(names, l.field).toContain(l.field);
    const query = schema.getQueryType()!.getFields();
    expect(isNonNullType(query.viewer.type)).toBe(true);
    expect(isNonNullType(query.comments.type)).toBe(true);
    expect(isNonNullType(query.members.type)).toBe(true);
  });
});

describe('a missing object nulls its own field only', () => {
  it.each(LOOKUPS.map((l) => [l.field, l] as const))('%s: `found` answers, `missing` is null with one NOT_FOUND at [missing]', async (_name, l) => {
    const r = await t.gql(`{ found: ${call(l.field, l.found())} { __typename } missing: ${call(l.field, l.missing())} { __typename } }`);
    expect(r.status).toBe(200);
    expect(r.data).toEqual({ found: { __typename: l.type }, missing: null });
    expect(r.errors).toHaveLength(1);
    expect(r.errors![0]).toMatchObject({ path: ['missing'], extensions: { code: 'NOT_FOUND' } });
  });

  it('an object the caller may not see is null + NOT_FOUND too (never revealed), beside what they may see', async () => {
    const outsider = await t.createUser();
    const r = await t.gql(`query($space: ID!) { viewer { user { id } } hidden: space(id: $space) { title } }`, { space: f.space }, outsider.token);
    expect(r.status).toBe(200);
    expect(r.data).toEqual({ viewer: { user: { id: outsider.user.id } }, hidden: null });
    expect(r.errors).toHaveLength(1);
    expect(r.errors![0]).toMatchObject({ path: ['hidden'], extensions: { code: 'NOT_FOUND' } });
  });

  it('several failures in one request: one error per failed field, each at its path, and the rest survives', async () => {
    const r = await t.gql(`query($s: ID!, $gone: ID!) {
      space(id: $s) { title }
      a: space(id: $gone) { title }
      b: collection(id: $gone) { title }
      site: site(id: "${f.site}") { title }
    }`, { s: f.space, gone: newId('Space') });
    expect(r.data).toEqual({ space: { title: 'Handbook' }, a: null, b: null, site: { title: 'Docs' } });
    expect(r.errors!.map((e: any) => [e.path, e.extensions.code]).sort()).toEqual([[['a'], 'NOT_FOUND'], [['b'], 'NOT_FOUND']]);
  });
});

describe('FORBIDDEN and BAD_REQUEST keep their errors, with null for that field only', () => {
  it('FORBIDDEN: a reader sees the site but may not read its publishing auth', async () => {
    const reader = await t.createUser('read');
    const r = await t.gql(`query($s: ID!) { allowed: site(id: $s) { title } forbidden: sitePublishingAuth(siteId: $s) { __typename } }`, { s: f.site }, reader.token);
    expect(r.status).toBe(200);
    expect(r.data).toEqual({ allowed: { title: 'Docs' }, forbidden: null });
    expect(r.errors).toHaveLength(1);
    expect(r.errors![0]).toMatchObject({ path: ['forbidden'], extensions: { code: 'FORBIDDEN' } });
  });

  it('BAD_REQUEST: a reader asserting a signed claim gets null + BAD_REQUEST naming the claim; the plain read beside it answers', async () => {
    const outsider = await t.createUser();
    const r = await t.gql(
      `query($s: ID!) { plain: publishedSite(siteId: $s) { title } asserted: publishedSite(siteId: $s, visitor: { claims: { beta: true } }) { title } }`,
      { s: f.site },
      outsider.token,
    );
    expect(r.data).toEqual({ plain: { title: 'Docs' }, asserted: null });
    expect(r.errors).toHaveLength(1);
    expect(r.errors![0]).toMatchObject({ path: ['asserted'], extensions: { code: 'BAD_REQUEST', field: 'visitor.claims.beta' } });
  });
});

describe('the REST shim still answers 404, 403 and 400 from those errors', () => {
  it('404: GET a missing space, site, collection, change request (official client too)', async () => {
    for (const p of [`/v1/spaces/${newId('Space')}`, `/v1/collections/${newId('Collection')}`, `/v1/spaces/${f.space}/change-requests/999`, `/v1/orgs/${t.org.id}/sites/${newId('Site')}`]) {
      const r = await t.rest('GET', p);
      expect(r.status, p).toBe(404);
      expect(r.body, p).toEqual({ error: { code: 404, message: expect.any(String) } });
    }
    await expect(t.client().spaces.getSpaceById(newId('Space'))).rejects.toMatchObject({ code: 404 });
  });

  it('403: a reader GETs the site publishing auth; 400: a bad argument still names its field', async () => {
    const reader = await t.createUser('read');
    const forbidden = await t.rest('GET', `/v1/orgs/${t.org.id}/sites/${f.site}/publishing/auth`, undefined, reader.token);
    expect(forbidden.status).toBe(403);
    expect(forbidden.body).toEqual({ error: { code: 403, message: expect.any(String) } });
    const bad = await t.rest('GET', `/v1/orgs/${t.org.id}/sites/${f.site}/redirect?source=`);
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ error: { code: 400, message: expect.stringMatching(/source/) } });
  });
});
