// Space content: live edits (extension), revision/page/file reads, file downloads, and the
// batched page-tree loading of GraphQL.
import { createRequire } from 'node:module';
import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers.ts';
import { expectValidResponse } from './openapi.ts';
import { contentCaches } from '../src/graphql/content-loading.ts';
import { makePng, serveFixtures } from './fixtures/content.ts';
import { versionIdsOf } from '../src/domain/revisions.ts';
import { revisionTree } from '../src/domain/revision-tree.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.close();
});

// The batch outcome shapes exist only in the newer document (0.202).
const require = createRequire(import.meta.url);
const nextSpec = require('gitbook-api-next/spec/openapi.json');
const ajvNext = new Ajv({ strict: false, allErrors: true, discriminator: false, logger: false });
addFormats(ajvNext);
ajvNext.addSchema(nextSpec, 'next');
function expectValidNext(schema: string, value: unknown) {
  const validate = ajvNext.getSchema(`next#/components/schemas/${schema}`)!;
  if (!validate(value)) throw new Error(`${schema}: ${ajvNext.errorsText(validate.errors)}\n${JSON.stringify(value, null, 2)}`);
}

async function newSpace(title = 'Docs') {
  const r = await t.rest('POST', `/v1/orgs/${t.org.id}/spaces`, { title });
  expect(r.status).toBe(201);
  return r.body.id as string;
}

function edit(spaceId: string, changes: unknown[], token: string | null = t.token) {
  return t.rest('POST', `/v1/spaces/${spaceId}/content`, { changes }, token);
}

async function revisionOf(spaceId: string) {
  return (await t.app.prisma.space.findUniqueOrThrow({ where: { id: spaceId } })).revisionId;
}

/** The download URL as served by this test server (config.publicUrl is not the test port). */
const local = (url: string) => url.replace(t.app.config.publicUrl, t.baseUrl);

const PNG = makePng(3, 2);

describe('live edits: POST /v1/spaces/{spaceId}/content (extension)', () => {
  it('applies a batch as one new revision and answers {revision, changes, insertedFiles}', async () => {
    const spaceId = await newSpace();
    const before = await revisionOf(spaceId);
    const r = await edit(spaceId, [
      { operation: 'insert_page', ref: 'guide', document: { markdown: '# Guide\n\nRead [setup](./setup.md). ![Logo](./logo.png)' } },
      { operation: 'insert_page', ref: 'setup', title: 'Setup', document: { markdown: 'Install it.' } },
      { operation: 'insert_files', files: [{ ref: 'logo.png', name: 'logo.png', contentType: 'image/png', base64: PNG.toString('base64') }] },
    ]);
    expect(r.status).toBe(200);
    expect(r.body.object).toBe('space-content-update');
    expect(r.body.changes.map((c: any) => [c.object, c.ref])).toEqual([
      ['created_page', 'guide'],
      ['created_page', 'setup'],
    ]);
    for (const c of r.body.changes) expectValidNext('ChangeRequestContentUpdateChange', c);
    expect(r.body.insertedFiles).toHaveLength(1);
    expectValidNext('RevisionFile', r.body.insertedFiles[0]);
    expect(r.body.insertedFiles[0]).toMatchObject({ name: 'logo.png', contentType: 'image/png', size: PNG.length, dimensions: { width: 3, height: 2 } });
    const after = await revisionOf(spaceId);
    expect(after).toBe(r.body.revision);
    const rev = await t.app.prisma.revision.findUniqueOrThrow({ where: { id: after! } });
    expect(rev.parents).toEqual([before]);

    // The created page is where `urls.location` says.
    const guideId = r.body.changes[0].page.id;
    const page = await t.rest('GET', new URL(r.body.changes[0].page.urls.location).pathname);
    expect(page.status).toBe(200);
    expect(page.body.markdown).toBe(`Read [setup](/pages/${r.body.changes[1].page.id}). ![Logo](/files/${r.body.insertedFiles[0].id})`);
    expect(page.body.id).toBe(guideId);

    const upd = await edit(spaceId, [
      { operation: 'update_page', page: guideId, title: 'Guide 2' },
      { operation: 'delete_page', page: r.body.changes[1].page.id },
    ]);
    expect(upd.status).toBe(200);
    expect(upd.body.changes).toEqual([
      { object: 'updated_page', page: { object: 'page', id: guideId, urls: { location: expect.any(String) } } },
      { object: 'deleted_page', page: r.body.changes[1].page.id },
    ]);
    for (const c of upd.body.changes) expectValidNext('ChangeRequestContentUpdateChange', c);
  });

  it('400 naming the field, and nothing changes', async () => {
    const spaceId = await newSpace();
    const ok = await edit(spaceId, [{ operation: 'insert_page', title: 'Keep', document: { markdown: 'x' } }]);
    const keep = ok.body.changes[0].page.id;
    const before = await revisionOf(spaceId);
    const cases: Array<[unknown, string]> = [
      [{ changes: [] }, 'changes'],
      [{}, 'changes'],
      [{ changes: [{ operation: 'update_page', page: 'page_nope', title: 'x' }] }, 'changes.0.page'],
      [{ changes: [{ operation: 'insert_page', document: { markdown: 'x' }, bogus: 1 }] }, 'changes.0.bogus'],
      [{ changes: [{ operation: 'explode_page' }] }, 'changes.0.operation'],
      [{ changes: [{ operation: 'insert_page', document: { markdown: 'x' } }], extra: true }, 'extra'],
      [{ changes: [{ operation: 'insert_page', title: 'A', document: { markdown: 'a' } }, { operation: 'update_page', page: keep, slug: 'BAD SLUG!' }] }, 'changes.1.slug'],
      [{ changes: [{ operation: 'insert_files', files: [{ name: 'a.png', base64: 'AAAA' }] }] }, 'changes.0.files.0.contentType'],
      [{ changes: Array.from({ length: 51 }, () => ({ operation: 'delete_page', page: keep })) }, 'changes'],
    ];
    for (const [body, field] of cases) {
      const r = await t.rest('POST', `/v1/spaces/${spaceId}/content`, body);
      expect(r.status, JSON.stringify(body).slice(0, 200)).toBe(400);
      expect(r.body.error.message).toContain(field);
    }
    expect(await revisionOf(spaceId)).toBe(before);
    const gql = await t.gql(`mutation($input: ApplySpaceContentChangesInput!) { applySpaceContentChanges(input: $input) { revision { id } } }`, {
      input: { spaceId, changes: [{ operation: 'delete_page', page: 'page_nope' }] },
    });
    expect(gql.errors?.[0].extensions).toMatchObject({ code: 'BAD_REQUEST', field: 'changes.0.page' });
    expect(await revisionOf(spaceId)).toBe(before);
  });

  it('401 without a token, 404 for a missing space and outsiders, 403 for readers, 409 when locked', async () => {
    const spaceId = await newSpace();
    const change = [{ operation: 'insert_page', title: 'x', document: { markdown: 'x' } }];
    expect((await edit(spaceId, change, null)).status).toBe(401);
    expect((await edit('space_missing', change)).status).toBe(404);
    const reader = await t.createUser('read');
    expect((await edit(spaceId, change, reader.token)).status).toBe(403);
    const outsider = await t.createUser(undefined);
    expect((await edit(spaceId, change, outsider.token)).status).toBe(404);
    const editor = await t.createUser('edit');
    expect((await edit(spaceId, change, editor.token)).status).toBe(200);

    await t.app.prisma.space.update({ where: { id: spaceId }, data: { editMode: 'locked' } });
    const before = await revisionOf(spaceId);
    const locked = await edit(spaceId, change);
    expect(locked.status).toBe(409);
    expect(locked.body.error.message).toMatch(/locked/);
    expect(await revisionOf(spaceId)).toBe(before);
  });

  it('stores page flags (hidden, noIndex, noRobotsIndex, condition) and clears them', async () => {
    const spaceId = await newSpace();
    const r = await edit(spaceId, [{ operation: 'insert_page', title: 'Flags', hidden: true, noIndex: true, noRobotsIndex: true, condition: 'visitor.claims.beta', document: { markdown: 'x' } }]);
    const pageId = r.body.changes[0].page.id;
    const q = `query($id: ID!, $p: String!) { space(id: $id) { revision { page(id: $p) { hidden noIndex noRobotsIndex condition } } } }`;
    expect((await t.gql(q, { id: spaceId, p: pageId })).data.space.revision.page).toEqual({ hidden: true, noIndex: true, noRobotsIndex: true, condition: 'visitor.claims.beta' });
    const rest = await t.rest('GET', `/v1/spaces/${spaceId}/content/page/${pageId}`);
    expectValidResponse('GET', '/spaces/{spaceId}/content/page/{pageId}', 200, rest.body);
    expect(rest.body).toMatchObject({ hidden: true, noIndex: true, noRobotsIndex: true });
    // Stored layout options override the defaults (rows are immutable; this one is rewritten only for the test).
    const rev = await t.app.prisma.revision.findUniqueOrThrow({ where: { id: (await revisionOf(spaceId))! } });
    await t.app.prisma.pageVersion.update({ where: { id: versionIdsOf(await revisionTree(t.app.prisma, rev))[0] }, data: { layout: { width: 'wide', outline: false } } });
    // The process keeps page trees by (immutable) revision id: drop them, as a rewrite behind its back needs.
    contentCaches(t.app.config).trees?.clear();
    const wide = await t.rest('GET', `/v1/spaces/${spaceId}/content/page/${pageId}`);
    expect(wide.body.layout).toMatchObject({ width: 'wide', outline: false, cover: true });
    expectValidResponse('GET', '/spaces/{spaceId}/content/page/{pageId}', 200, wide.body);
    await edit(spaceId, [{ operation: 'update_page', page: pageId, noIndex: false, condition: '' }]);
    expect((await t.gql(q, { id: spaceId, p: pageId })).data.space.revision.page).toEqual({ hidden: true, noIndex: false, noRobotsIndex: true, condition: null });
  });

  it('concurrent batches never lose an edit', async () => {
    const spaceId = await newSpace();
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) => edit(spaceId, [{ operation: 'insert_page', title: `Page ${i}`, document: { markdown: `Body ${i}` } }])),
    );
    expect(results.map((r) => r.status)).toEqual(Array(8).fill(200));
    const pages = await t.rest('GET', `/v1/spaces/${spaceId}/content/pages`);
    expect(pages.body.pages.map((p: any) => p.title).sort()).toEqual(Array.from({ length: 8 }, (_, i) => `Page ${i}`).sort());
    // A linear history: every batch applied on the previous one.
    const revisions = await t.app.prisma.revision.findMany({ where: { spaceId } });
    expect(new Set(revisions.flatMap((r) => r.parents)).size).toBe(8);
  });

  it('accepts the JSON document form and url files (fetched through the SSRF guard)', async () => {
    const server = await serveFixtures({ '/pic.png': { body: PNG, contentType: 'image/png' } });
    try {
      const spaceId = await newSpace();
      const r = await edit(spaceId, [
        {
          operation: 'insert_page',
          title: 'From JSON',
          document: { document: { object: 'document', data: {}, nodes: [{ object: 'block', type: 'paragraph', nodes: [{ object: 'text', leaves: [{ object: 'leaf', text: 'Hello', marks: [{ object: 'mark', type: 'bold' }] }] }] }] } },
        },
        { operation: 'insert_files', files: [{ name: 'pic.png', url: `${server.base}/pic.png` }] },
      ]);
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(r.body.insertedFiles[0]).toMatchObject({ contentType: 'image/png', size: PNG.length });
      const page = await t.rest('GET', `/v1/spaces/${spaceId}/content/page/${r.body.changes[0].page.id}`);
      expect(page.body.markdown.trim()).toBe('**Hello**');
      const missing = await edit(spaceId, [{ operation: 'insert_files', files: [{ name: 'x.png', url: `${server.base}/nope.png` }] }]);
      expect(missing.status).toBe(400);
      expect(missing.body.error.message).toContain('changes.0.files.0.url');
    } finally {
      await server.close();
    }
  });

  it('refuses private addresses unless configured', async () => {
    const strict = await startTestApp({ config: { allowPrivateFetch: false } });
    try {
      const s = await strict.rest('POST', `/v1/orgs/${strict.org.id}/spaces`, { title: 'S' });
      const r = await strict.rest('POST', `/v1/spaces/${s.body.id}/content`, { changes: [{ operation: 'insert_files', files: [{ name: 'x', url: `${strict.baseUrl}/healthz` }] }] });
      expect(r.status).toBe(400);
      expect(r.body.error.message).toMatch(/changes\.0\.files\.0\.url.*non-public/);
    } finally {
      await strict.close();
    }
  });
});

describe('reading content', () => {
  let spaceId: string;
  let ids: Record<string, string>;
  beforeAll(async () => {
    spaceId = await newSpace('Handbook');
    const r = await edit(spaceId, [
      { operation: 'insert_page', ref: 'intro', title: 'Intro', emoji: '👋', description: 'Start here', document: { markdown: '# Intro\n\nWelcome. See [child](./child.md).' } },
      { operation: 'insert_page', ref: 'group', type: 'group', title: 'Reference', document: {} },
      { operation: 'insert_page', ref: 'link', type: 'link', title: 'Website', href: 'https://example.com', document: {} },
      { operation: 'insert_files', files: [{ ref: 'pic', name: 'pic.png', contentType: 'image/png', base64: PNG.toString('base64') }] },
    ]);
    expect(r.status).toBe(200);
    const [intro, group, link] = r.body.changes.map((c: any) => c.page.id);
    const r2 = await edit(spaceId, [
      { operation: 'insert_page', ref: 'child', into: intro, title: 'Child', document: { markdown: 'Nested ![pic](/files/' + r.body.insertedFiles[0].id + ')' } },
      { operation: 'insert_page', ref: 'api', into: group, title: 'API', document: { markdown: '## Endpoints\n\n- one\n- two' } },
    ]);
    const [child, api] = r2.body.changes.map((c: any) => c.page.id);
    ids = { intro, group, link, child, api, file: r.body.insertedFiles[0].id };
  });

  it('GET content: the revision with its nested pages and files (official client, valid)', async () => {
    const res = await t.client().spaces.getCurrentRevision(spaceId);
    expectValidResponse('GET', '/spaces/{spaceId}/content', 200, res.data);
    const rev: any = res.data;
    expect(rev.object).toBe('revision');
    expect(rev.id).toBe(await revisionOf(spaceId));
    expect(rev.type).toBe('edits');
    expect(rev.parents).toHaveLength(1);
    expect(rev.pages.map((p: any) => [p.title, p.type, p.path])).toEqual([
      ['Intro', 'document', 'intro'],
      ['Reference', 'group', 'reference'],
      ['Website', 'link', undefined],
    ]);
    expect(rev.pages[0].pages.map((p: any) => [p.title, p.path])).toEqual([['Child', 'intro/child']]);
    expect(rev.pages[1].pages[0]).toMatchObject({ title: 'API', path: 'reference/api', markdown: '## Endpoints\n\n- one\n- two' });
    expect(rev.pages[2]).toMatchObject({ href: 'https://example.com', target: { kind: 'url', url: 'https://example.com' } });
    expect(rev.files.map((f: any) => f.id)).toEqual([ids.file]);
    const q = await t.rest('GET', `/v1/spaces/${spaceId}/content?metadata=false&computed=false`);
    expect(q.status).toBe(200);
    expect((await t.rest('GET', `/v1/spaces/${spaceId}/content?metadata=maybe`)).body.error.message).toContain('metadata');
    expect((await t.rest('GET', `/v1/spaces/${spaceId}/content?nope=1`)).status).toBe(400);
  });

  it('GET content/pages (official client, valid)', async () => {
    const res = await t.client().spaces.listPages(spaceId);
    expectValidResponse('GET', '/spaces/{spaceId}/content/pages', 200, res.data);
    expect(res.data.pages).toHaveLength(3);
  });

  it('GET content/page/{pageId} as markdown or document, with its subtree; 404 when not in the revision', async () => {
    const md = await t.client().spaces.getPageById(spaceId, ids.intro, { format: 'markdown' as never });
    expectValidResponse('GET', '/spaces/{spaceId}/content/page/{pageId}', 200, md.data);
    expect(md.data).toMatchObject({ id: ids.intro, title: 'Intro', emoji: '👋', description: 'Start here', markdown: 'Welcome. See [child](./child.md).' });
    expect((md.data as any).pages.map((p: any) => p.id)).toEqual([ids.child]);
    const doc = await t.client().spaces.getPageById(spaceId, ids.intro, { format: 'document' as never, evaluated: true });
    expectValidResponse('GET', '/spaces/{spaceId}/content/page/{pageId}', 200, doc.data);
    expect((doc.data as any).markdown).toBeUndefined();
    expect((doc.data as any).document).toMatchObject({ object: 'document', nodes: [{ object: 'block', type: 'paragraph' }] });
    const group = await t.rest('GET', `/v1/spaces/${spaceId}/content/page/${ids.group}`);
    expectValidResponse('GET', '/spaces/{spaceId}/content/page/{pageId}', 200, group.body);
    expect(group.body.pages[0].id).toBe(ids.api);

    expect((await t.rest('GET', `/v1/spaces/${spaceId}/content/page/page_missing`)).status).toBe(404);
    expect((await t.rest('GET', `/v1/spaces/space_missing/content/page/${ids.intro}`)).status).toBe(404);
    expect((await t.rest('GET', `/v1/spaces/${spaceId}/content/page/${ids.intro}?format=pdf`)).body.error.message).toContain('format');
    expect((await t.rest('GET', `/v1/spaces/${spaceId}/content/page/${ids.intro}`, undefined, null)).status).toBe(401);
    const outsider = await t.createUser(undefined);
    expect((await t.rest('GET', `/v1/spaces/${spaceId}/content/page/${ids.intro}`, undefined, outsider.token)).status).toBe(404);
    const reader = await t.createUser('read');
    expect((await t.rest('GET', `/v1/spaces/${spaceId}/content/page/${ids.intro}`, undefined, reader.token)).status).toBe(200);
  });

  it('reads are 404 for outsiders and 401 without a token on every content route', async () => {
    const outsider = await t.createUser(undefined);
    for (const p of ['content', 'content/pages', 'content/files', `content/files/${ids.file}`, `content/files/${ids.file}/backlinks`, 'links', `content/page/${ids.intro}/links`]) {
      expect((await t.rest('GET', `/v1/spaces/${spaceId}/${p}`, undefined, outsider.token)).status, p).toBe(404);
      expect((await t.rest('GET', `/v1/spaces/${spaceId}/${p}`, undefined, null)).status, p).toBe(401);
      expect((await t.rest('GET', `/v1/spaces/space_missing/${p}`)).status, p).toBe(404);
    }
  });

  it('GET content/files (paginated), files/{fileId}, and 404 for a file not in the revision', async () => {
    const more = await edit(spaceId, [{ operation: 'insert_files', files: [{ name: 'b.txt', contentType: 'text/plain', base64: Buffer.from('hello').toString('base64') }] }]);
    const second = more.body.insertedFiles[0].id;
    const all = await t.client().spaces.listFiles(spaceId);
    expectValidResponse('GET', '/spaces/{spaceId}/content/files', 200, all.data);
    expect(all.data.count).toBe(2);
    const first = await t.client().spaces.listFiles(spaceId, { limit: 1 });
    expect(first.data.items).toHaveLength(1);
    expect(first.data.next?.page).toBeTruthy();
    const next = await t.client().spaces.listFiles(spaceId, { limit: 1, page: first.data.next!.page });
    expect(next.data.next).toBeUndefined();
    expect([first.data.items[0].id, next.data.items[0].id].sort()).toEqual([ids.file, second].sort());

    const one = await t.client().spaces.getFileById(spaceId, ids.file);
    expectValidResponse('GET', '/spaces/{spaceId}/content/files/{fileId}', 200, one.data);
    expect(one.data).toMatchObject({ id: ids.file, name: 'pic.png', contentType: 'image/png', size: PNG.length, dimensions: { width: 3, height: 2 } });
    expect((await t.rest('GET', `/v1/spaces/${spaceId}/content/files/file_missing`)).status).toBe(404);
    // A file of another space is not in this revision.
    const other = await newSpace('Other');
    const foreign = await edit(other, [{ operation: 'insert_files', files: [{ name: 'o.txt', contentType: 'text/plain', base64: 'aGk=' }] }]);
    expect((await t.rest('GET', `/v1/spaces/${spaceId}/content/files/${foreign.body.insertedFiles[0].id}`)).status).toBe(404);
    expect((await t.rest('GET', `/v1/spaces/${spaceId}/content/files?limit=5000`)).body.error.message).toContain('limit');
  });

  it('serves files at downloadURL with access checks', async () => {
    const file = (await t.rest('GET', `/v1/spaces/${spaceId}/content/files/${ids.file}`)).body;
    const url = local(file.downloadURL);
    const ok = await fetch(url, { headers: { authorization: `Bearer ${t.token}` } });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('content-type')).toBe('image/png');
    expect(Buffer.from(await ok.arrayBuffer()).equals(PNG)).toBe(true);
    expect((await fetch(url)).status).toBe(401);
    const outsider = await t.createUser(undefined);
    expect((await fetch(url, { headers: { authorization: `Bearer ${outsider.token}` } })).status).toBe(404);
    const reader = await t.createUser('read');
    expect((await fetch(url, { headers: { authorization: `Bearer ${reader.token}` } })).status).toBe(200);
    expect((await fetch(`${t.baseUrl}/files/file_missing`, { headers: { authorization: `Bearer ${t.token}` } })).status).toBe(404);
  });

  it('serves change-request PDF exports at /files/pdf/{exportId}', async () => {
    const rev = await revisionOf(spaceId);
    const crId = 'cr_pdftest0000000000000001';
    const exportId = 'pdf_test000000000000000001';
    const pdf = Buffer.from('%PDF-1.4\n%test\n');
    await t.app.services.storage.put(`pdf/${exportId}.pdf`, pdf, 'application/pdf');
    await t.app.prisma.changeRequest.create({
      data: { id: crId, spaceId, number: 1, createdById: t.adminUser.id, revisionInitialId: rev!, revisionId: rev! },
    });
    await t.app.prisma.pdfExport.create({
      data: { id: exportId, spaceId, changeRequestId: crId, revisionId: rev!, state: 'complete', storageKey: `pdf/${exportId}.pdf`, byteSize: pdf.length, createdById: t.adminUser.id },
    });
    const res = await fetch(`${t.baseUrl}/files/pdf/${exportId}`, { headers: { authorization: `Bearer ${t.token}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/pdf');
    expect(Buffer.from(await res.arrayBuffer()).equals(pdf)).toBe(true);
    const outsider = await t.createUser(undefined);
    expect((await fetch(`${t.baseUrl}/files/pdf/${exportId}`, { headers: { authorization: `Bearer ${outsider.token}` } })).status).toBe(404);
    expect((await fetch(`${t.baseUrl}/files/pdf/pdf_missing`, { headers: { authorization: `Bearer ${t.token}` } })).status).toBe(404);
    await t.app.prisma.changeRequest.delete({ where: { id: crId } });
  });

  it('GET content/files/{fileId}/backlinks lists the pages referencing the file', async () => {
    const res = await t.client().spaces.listSpaceFileBacklinks(spaceId, ids.file);
    expectValidResponse('GET', '/spaces/{spaceId}/content/files/{fileId}/backlinks', 200, res.data);
    expect(res.data.count).toBe(1);
    expect(res.data.items[0]).toMatchObject({ kind: 'page', page: { id: ids.child }, space: { id: spaceId }, organization: { id: t.org.id } });
    expect((await t.rest('GET', `/v1/spaces/${spaceId}/content/files/file_missing/backlinks`)).status).toBe(404);
  });
});

describe('GraphQL', () => {
  it('Space.revision with nested pages, page(id), files and node()', async () => {
    const spaceId = await newSpace('GQL');
    const r = await edit(spaceId, [
      { operation: 'insert_page', ref: 'a', title: 'A', document: { markdown: 'alpha' } },
      { operation: 'insert_files', files: [{ name: 'f.txt', contentType: 'text/plain', base64: 'aGk=' }] },
    ]);
    const a = r.body.changes[0].page.id;
    await edit(spaceId, [{ operation: 'insert_page', into: a, title: 'B', document: { markdown: 'beta' } }]);
    const q = await t.gql(
      `query($id: ID!, $page: String!) { space(id: $id) { revision { id type parents createdAt
        pages { pageId title type slug path markdown pages { title path pages { title } } }
        page(id: $page) { title document }
        files(first: 10) { totalCount nodes { id name downloadURL } }
        urls { app } } } }`,
      { id: spaceId, page: a },
    );
    expect(q.errors).toBeUndefined();
    const rev = q.data.space.revision;
    expect(rev.pages).toEqual([{ pageId: a, title: 'A', type: 'document', slug: 'a', path: 'a', markdown: 'alpha', pages: [{ title: 'B', path: 'a/b', pages: [] }] }]);
    expect(rev.page.document.object).toBe('document');
    expect(rev.files.totalCount).toBe(1);
    const n = await t.gql(`query($id: ID!) { node(id: $id) { id ... on Revision { pages { title } } } }`, { id: rev.id });
    expect(n.data.node.pages[0].title).toBe('A');
    const outsider = await t.createUser(undefined);
    const hidden = await t.gql(`query($id: ID!) { node(id: $id) { id } revision(id: $id) { id } }`, { id: rev.id }, outsider.token);
    expect(hidden.data.node).toBeNull();
    expect(hidden.data.revision).toBeNull();
    const f = await t.gql(`query($id: ID!) { node(id: $id) { id ... on File { name } } }`, { id: rev.files.nodes[0].id }, outsider.token);
    expect(f.data.node).toBeNull();
  });

  it('the page trees of many spaces cost the same number of SQL statements (2 vs 20 spaces)', async () => {
    async function orgWithSpaces(n: number) {
      const org = await t.gql(`mutation($title: String!) { createOrganization(input: { title: $title }) { id } }`, { title: `Org ${n}` });
      const orgId = org.data.createOrganization.id;
      for (let i = 0; i < n; i++) {
        const s = await t.rest('POST', `/v1/orgs/${orgId}/spaces`, { title: `S${i}` });
        const top = await edit(s.body.id, [
          { operation: 'insert_page', title: 'One', document: { markdown: 'one' } },
          { operation: 'insert_page', title: 'Two', document: { markdown: 'two' } },
        ]);
        const mid = await edit(s.body.id, [{ operation: 'insert_page', into: top.body.changes[0].page.id, title: 'Mid', document: { markdown: 'mid' } }]);
        await edit(s.body.id, [{ operation: 'insert_page', into: mid.body.changes[0].page.id, title: 'Leaf', document: { markdown: 'leaf' } }]);
      }
      return orgId;
    }
    const small = await orgWithSpaces(2);
    const big = await orgWithSpaces(20);
    const query = `query($id: ID!) { organization(id: $id) { spaces(first: 100) { nodes { id revision { id pages { id title path pages { title pages { title } } } } } } } }`;
    const withBodies = `query($id: ID!) { organization(id: $id) { spaces(first: 100) { nodes { id revision { pages { title markdown pages { title markdown } } } } } } }`;
    for (const q of [query, withBodies]) {
      // First loads, both sizes: page trees are cached across requests by (immutable) revision id.
      const a = await t.countQueries(() => t.gql(q, { id: small }));
      const b = await t.countQueries(() => t.gql(q, { id: big }));
      expect(a.result.errors).toBeUndefined();
      expect(b.result.errors).toBeUndefined();
      expect(b.result.data.organization.spaces.nodes).toHaveLength(20);
      expect(b.result.data.organization.spaces.nodes[0].revision.pages[0].pages[0].title).toBe('Mid');
      expect(b.count, b.statements.join('\n')).toBe(a.count);
    }
    // Without bodies the page rows are loaded without the markdown column…
    const fresh = await orgWithSpaces(3);
    const meta = await t.countQueries(() => t.gql(query, { id: fresh }));
    const pageSql = meta.statements.filter((s) => s.includes('"PageVersion"'));
    expect(pageSql).toHaveLength(1);
    expect(pageSql[0]).not.toContain('markdown');
    // …and once loaded, a tree is served from the cache: no revision or page statements at all.
    const again = await t.countQueries(() => t.gql(query, { id: fresh }));
    expect(again.statements.filter((s) => s.includes('"PageVersion"') || s.includes('"Revision"'))).toEqual([]);
    expect(again.result.data.organization.spaces.nodes[0].revision.pages[0].pages[0].title).toBe('Mid');
  });
});
