// Change request content: authoring batches (`POST CR/content`, 0.202), the PDF export, and
// the content reads of a change request.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GitBookAPI as GitBookAPINext } from 'gitbook-api-next';
import { extractText, getDocumentProxy } from 'unpdf';
import { waitForPdf } from './pdf-helpers.ts';
import { startTestApp, type TestApp } from './helpers.ts';
import { expectValidResponse, expectValidNextResponse } from './openapi.ts';
import { loadRevision } from '../src/domain/revisions.ts';
import { makePng, serveFixtures } from './fixtures/content.ts';

// Responses of 0.202 operations validate against that version of the document.
const expectValidNext = expectValidNextResponse;

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ worker: true });
});
afterAll(async () => {
  await t?.close();
});

const CR = (spaceId: string, cr: string | number) => `/v1/spaces/${spaceId}/change-requests/${cr}`;
const CONTENT_PATH = '/spaces/{spaceId}/change-requests/{changeRequestId}/content';
const next = (token = t.token) => new GitBookAPINext({ endpoint: t.baseUrl, authToken: token });

async function newSpace(title = 'Content space') {
  const r = await t.rest('POST', `/v1/orgs/${t.org.id}/spaces`, { title });
  expect(r.status).toBe(201);
  return r.body.id as string;
}
async function newCr(spaceId: string, subject = 'Edits') {
  const r = await t.rest('POST', `/v1/spaces/${spaceId}/change-requests`, { subject });
  expect(r.status).toBe(201);
  return r.body as { id: string; number: number; revision: string };
}
async function headOf(spaceId: string, cr: string) {
  return (await t.rest('GET', CR(spaceId, cr))).body.revision as string;
}

describe('authoring a change request (POST CR/content)', () => {
  it('applies a batch through the 0.202 client; compat=true answers the change request', async () => {
    const spaceId = await newSpace();
    const cr = await newCr(spaceId);
    const res = await next().spaces.updateChangeRequestContent(spaceId, cr.id, {
      changes: [{ operation: 'insert_page', title: 'Getting started', document: { markdown: 'Hello' } } as any],
    });
    expect(res.status).toBe(200);
    expectValidNext('POST', CONTENT_PATH, 200, res.data);
    expectValidResponse('GET', '/spaces/{spaceId}/change-requests/{changeRequestId}', 200, res.data);
    const body = res.data as any;
    expect(body).toMatchObject({ object: 'change-request', id: cr.id, space: spaceId });
    expect(body.revision).not.toBe(cr.revision);
    const head = await loadRevision(t.app.prisma, body.revision);
    expect(head.revision).toMatchObject({ parents: [cr.revision], changeRequestId: cr.id, createdById: t.adminUser.id });
    expect([...head.versions.values()].map((v) => v.title)).toEqual(['Getting started']);
    // The space itself is untouched.
    const space = await t.app.prisma.space.findUniqueOrThrow({ where: { id: spaceId } });
    expect(space.revisionId).toBe(cr.revision);
  });

  it('compat=false answers the change request, the affected pages and the inserted files', async () => {
    const spaceId = await newSpace();
    const cr = await newCr(spaceId);
    const first = await t.rest('POST', `${CR(spaceId, cr.number)}/content?compat=false`, {
      changes: [
        { operation: 'insert_page', ref: 'guide', title: 'Guide', document: { markdown: 'See ![logo](./logo)' } },
        { operation: 'insert_page', title: 'Old', document: { markdown: 'bye' } },
        { operation: 'insert_files', files: [{ ref: 'logo', name: 'logo.png', contentType: 'image/png', base64: Buffer.from('not really a png').toString('base64') }] },
      ],
    });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expectValidNext('POST', CONTENT_PATH, 200, first.body);
    expect(first.body.changes).toEqual([
      { object: 'created_page', ref: 'guide', page: { object: 'page', id: expect.stringMatching(/^page_/), urls: { location: expect.stringContaining(`/change-requests/${cr.id}/content/page/`) } } },
      { object: 'created_page', page: expect.objectContaining({ object: 'page' }) },
    ]);
    expect(first.body.insertedFiles).toEqual([expect.objectContaining({ id: expect.stringMatching(/^file_/), name: 'logo.png', contentType: 'image/png', size: 16, downloadURL: expect.any(String) })]);
    const [guide, old] = first.body.changes.map((c: any) => c.page.id);

    const second = await t.rest('POST', `${CR(spaceId, cr.id)}/content?compat=false`, {
      changes: [
        { operation: 'update_page', page: guide, title: 'The guide' },
        { operation: 'delete_page', page: old },
      ],
    });
    expectValidNext('POST', CONTENT_PATH, 200, second.body);
    expect(second.body.changes).toEqual([
      { object: 'updated_page', page: expect.objectContaining({ id: guide }) },
      { object: 'deleted_page', page: old },
    ]);
    expect(second.body.insertedFiles).toEqual([]);
  });

  it('rejects bad batches with 400 naming the field, and nothing changes', async () => {
    const spaceId = await newSpace();
    const cr = await newCr(spaceId);
    const revisions = () => t.app.prisma.revision.count({ where: { spaceId } });
    const before = await revisions();
    for (const [body, field] of [
      [{ changes: [] }, 'changes'],
      [{ changes: Array.from({ length: 51 }, () => ({ operation: 'delete_page', page: 'x' })) }, 'changes'],
      [{ changes: [{ operation: 'explode_page' }] }, 'changes.0.operation'],
      [{ changes: [{ operation: 'insert_page', title: 'x'.repeat(300), document: { markdown: '' } }] }, 'changes.0.title'],
      [{ changes: [{ operation: 'insert_page', title: 'ok', document: { markdown: 'x' } }, { operation: 'update_page', page: 'page_missing', title: 'y' }] }, 'changes.1.page'],
      [{ changes: [{ operation: 'delete_page', page: 'p' }], extra: 1 }, 'extra'],
      [{}, 'changes'],
    ] as const) {
      const r = await t.rest('POST', `${CR(spaceId, cr.id)}/content`, body);
      expect(r.status, JSON.stringify(body).slice(0, 200)).toBe(400);
      expect(r.body.error.message).toContain(field);
    }
    expect((await t.rest('POST', `${CR(spaceId, cr.id)}/content?compat=maybe`, { changes: [{ operation: 'delete_page', page: 'p' }] })).status).toBe(400);
    expect(await revisions()).toBe(before);
    expect(await headOf(spaceId, cr.id)).toBe(cr.revision);
  });

  it('needs edit: readers 403, outsiders 404, 401; missing change request 404; merged 409; locked space 409', async () => {
    const spaceId = await newSpace();
    const cr = await newCr(spaceId);
    const changes = [{ operation: 'insert_page', title: 'X', document: { markdown: 'x' } }];
    const reader = await t.createUser('read');
    expect((await t.rest('POST', `${CR(spaceId, cr.id)}/content`, { changes }, reader.token)).status).toBe(403);
    const outsider = await t.createUser(undefined);
    expect((await t.rest('POST', `${CR(spaceId, cr.id)}/content`, { changes }, outsider.token)).status).toBe(404);
    expect((await t.rest('POST', `${CR(spaceId, cr.id)}/content`, { changes }, null)).status).toBe(401);
    expect((await t.rest('POST', `${CR(spaceId, 404)}/content`, { changes })).status).toBe(404);
    expect(await headOf(spaceId, cr.id)).toBe(cr.revision);

    await t.app.prisma.space.update({ where: { id: spaceId }, data: { editMode: 'locked' } });
    expect((await t.rest('POST', `${CR(spaceId, cr.id)}/content`, { changes })).status).toBe(409);
    await t.app.prisma.space.update({ where: { id: spaceId }, data: { editMode: 'live' } });

    const editor = await t.createUser('edit');
    expect((await t.rest('POST', `${CR(spaceId, cr.id)}/content`, { changes }, editor.token)).status).toBe(200);
    await t.rest('POST', `${CR(spaceId, cr.id)}/merge`);
    const merged = await t.rest('POST', `${CR(spaceId, cr.id)}/content`, { changes });
    expect(merged.status).toBe(409);
  });

  it('GraphQL applyChangeRequestContentChanges returns the outcomes; errors carry the field', async () => {
    const spaceId = await newSpace();
    const cr = await newCr(spaceId);
    const doc = `mutation($input: ApplyChangeRequestContentChangesInput!) { applyChangeRequestContentChanges(input: $input) {
      revision { id parents } changeRequest { id revisionId } changes { object pageId ref location page { title } } insertedFiles { id } } }`;
    const ok = await t.gql(doc, { input: { spaceId, changeRequestId: cr.id, changes: [{ operation: 'insert_page', ref: 'r', title: 'Via GraphQL', document: { markdown: 'x' } }] } });
    expect(ok.errors).toBeUndefined();
    const out = ok.data.applyChangeRequestContentChanges;
    expect(out.changeRequest.revisionId).toBe(out.revision.id);
    expect(out.revision.parents).toEqual([cr.revision]);
    expect(out.changes).toEqual([{ object: 'created_page', pageId: expect.stringMatching(/^page_/), ref: 'r', location: expect.any(String), page: { title: 'Via GraphQL' } }]);
    const bad = await t.gql(doc, { input: { spaceId, changeRequestId: cr.id, changes: [{ operation: 'update_page', page: 'nope' }] } });
    expect(bad.errors?.[0].extensions).toMatchObject({ code: 'BAD_REQUEST', field: 'changes.0.page' });
  });
});

describe('PDF export (GET CR/pdf)', () => {
  /** The PDF at `url` once its job has rendered it (202 with Retry-After until then). */
  async function pdfText(url: string) {
    const key = new URL(url).pathname; // /files/pdf/<exportId>
    const res = await waitForPdf(`${t.baseUrl}${key}`, t.token);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/pdf');
    const buf = Buffer.from(await res.arrayBuffer());
    expect(buf.subarray(0, 5).toString()).toBe('%PDF-');
    const doc = await getDocumentProxy(new Uint8Array(buf));
    const { text } = await extractText(doc, { mergePages: true });
    return text as string;
  }

  it('renders the change request’s pages into a real PDF served at the returned url', async () => {
    const spaceId = await newSpace();
    const cr = await newCr(spaceId, 'Release notes');
    const authored = await t.rest('POST', `${CR(spaceId, cr.id)}/content?compat=false`, {
      changes: [
        { operation: 'insert_page', ref: 'p', title: 'Alpha Chapter', document: { markdown: 'First **bold** words.' } },
        { operation: 'insert_page', title: 'Beta Chapter', document: { markdown: '- item one\n- item two' } },
        { operation: 'insert_page', into: undefined, title: 'Gamma Chapter', document: { markdown: '```\ncode\n```' } },
      ],
    });
    const alpha = authored.body.changes[0].page.id;
    const res = await t.client().spaces.getChangeRequestPdf(spaceId, cr.id);
    expectValidResponse('GET', '/spaces/{spaceId}/change-requests/{changeRequestId}/pdf', 200, res.data);
    expect(res.data.url).toMatch(new RegExp(`^${t.app.config.publicUrl}/files/pdf/pdf_`));
    const text = await pdfText(res.data.url);
    for (const title of ['Alpha Chapter', 'Beta Chapter', 'Gamma Chapter']) expect(text).toContain(title);
    const exp = await t.app.prisma.pdfExport.findFirstOrThrow({ where: { changeRequestId: cr.id } });
    expect(exp).toMatchObject({ state: 'complete', storageKey: `pdf/${exp.id}.pdf`, pageCount: 3 });
    // Asked again for the same head: the same export.
    expect((await t.client().spaces.getChangeRequestPdf(spaceId, cr.id)).data.url).toBe(res.data.url);

    const only = await t.rest('GET', `${CR(spaceId, cr.number)}/pdf?only=true&page=${alpha}`);
    expect(only.status).toBe(200);
    const onlyText = await pdfText(only.body.url);
    expect(onlyText).toContain('Alpha Chapter');
    expect(onlyText).not.toContain('Beta Chapter');

    // Served only to callers who may read the space.
    const outsider = await t.createUser(undefined);
    const path = new URL(res.data.url).pathname;
    expect((await fetch(`${t.baseUrl}${path}`, { headers: { authorization: `Bearer ${outsider.token}` } })).status).toBe(404);
    expect((await fetch(`${t.baseUrl}${path}`)).status).toBe(401);
  });

  it('400 naming page when it is missing or unknown; readers get an existing export only; outsiders 404; 401', async () => {
    const spaceId = await newSpace();
    const cr = await newCr(spaceId);
    const missing = await t.rest('GET', `${CR(spaceId, cr.id)}/pdf?only=true`);
    expect(missing.status).toBe(400);
    expect(missing.body.error.message).toContain('page');
    const unknown = await t.rest('GET', `${CR(spaceId, cr.id)}/pdf?page=page_nope`);
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.message).toContain('page');
    expect((await t.rest('GET', `${CR(spaceId, cr.id)}/pdf?only=yes`)).body.error.message).toContain('only');
    expect(await t.app.prisma.pdfExport.count({ where: { changeRequestId: cr.id } })).toBe(0);

    const reader = await t.createUser('read');
    // No export yet: starting one needs the edit role.
    expect((await t.rest('GET', `${CR(spaceId, cr.id)}/pdf`, undefined, reader.token)).status).toBe(403);
    const outsider = await t.createUser(undefined);
    expect((await t.rest('GET', `${CR(spaceId, cr.id)}/pdf`, undefined, outsider.token)).status).toBe(404);
    expect((await t.rest('GET', `${CR(spaceId, cr.id)}/pdf`, undefined, null)).status).toBe(401);
    expect((await t.rest('GET', `${CR(spaceId, 9)}/pdf`)).status).toBe(404);
    // Once an editor asked for it, the reader gets the same URL.
    const editor = await t.rest('GET', `${CR(spaceId, cr.id)}/pdf`);
    expect(editor.status).toBe(200);
    const asReader = await t.rest('GET', `${CR(spaceId, cr.id)}/pdf`, undefined, reader.token);
    expect(asReader.status).toBe(200);
    expect(asReader.body.url).toBe(editor.body.url);
  });
});

describe('reading a change request’s content', () => {
  async function authoredCr() {
    const spaceId = await newSpace();
    const cr = await newCr(spaceId);
    const png = makePng(3, 2);
    const r = await t.rest('POST', `${CR(spaceId, cr.id)}/content?compat=false`, {
      changes: [
        { operation: 'insert_files', files: [{ ref: 'img', name: 'pic.png', contentType: 'image/png', base64: png.toString('base64') }] },
        { operation: 'insert_page', ref: 'guide', title: 'Guide', document: { markdown: 'Look: ![pic](./img)\n\nAnd [setup](./setup).' } },
        { operation: 'insert_page', ref: 'setup', title: 'Setup', document: { markdown: 'Install. [Broken](/pages/page_nowhere)' } },
        { operation: 'insert_page', ref: 'child', into: undefined, title: 'Child', document: { markdown: 'c' } },
      ],
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const [guide, setup] = r.body.changes.map((c: any) => c.page.id);
    const file = r.body.insertedFiles[0].id;
    // Nest "Child" under Guide in a second batch.
    const child = r.body.changes[2].page.id;
    await t.rest('POST', `${CR(spaceId, cr.id)}/content`, { changes: [{ operation: 'update_page', page: child, into: guide }] });
    return { spaceId, cr, guide, setup, child, file };
  }

  it('serves the head revision, its pages, a page, files, a file and backlinks (valid, official client)', async () => {
    const { spaceId, cr, guide, child, file } = await authoredCr();
    const api = t.client().spaces;
    const content = await api.getRevisionOfChangeRequestById(spaceId, cr.id);
    expectValidResponse('GET', '/spaces/{spaceId}/change-requests/{changeRequestId}/content', 200, content.data);
    expect(content.data.id).toBe(await headOf(spaceId, cr.id));
    expect(content.data.pages.map((p: any) => p.title)).toEqual(['Guide', 'Setup']);
    expect((content.data.pages[0] as any).pages.map((p: any) => p.title)).toEqual(['Child']);
    // The space itself has none of it.
    expect((await t.rest('GET', `/v1/spaces/${spaceId}/content`)).body.pages).toEqual([]);

    const pages = await api.listPagesInChangeRequest(spaceId, String(cr.number));
    expectValidResponse('GET', '/spaces/{spaceId}/change-requests/{changeRequestId}/content/pages', 200, pages.data);
    expect(pages.data.pages.map((p: any) => p.id)).toHaveLength(2);

    const page = await api.getPageInChangeRequestById(spaceId, cr.id, guide);
    expectValidResponse('GET', '/spaces/{spaceId}/change-requests/{changeRequestId}/content/page/{pageId}', 200, page.data);
    expect(page.data).toMatchObject({ id: guide, title: 'Guide', path: 'guide', markdown: expect.stringContaining(`/files/${file}`) });
    expect((page.data as any).pages.map((p: any) => p.id)).toEqual([child]);
    const asDoc = await t.rest('GET', `${CR(spaceId, cr.id)}/content/page/${guide}?format=document`);
    expect(asDoc.body.document).toMatchObject({ object: 'document' });
    expect((await t.rest('GET', `${CR(spaceId, cr.id)}/content/page/page_nope`)).status).toBe(404);
    expect((await t.rest('GET', `${CR(spaceId, cr.id)}/content/page/${guide}?format=pdf`)).body.error.message).toContain('format');

    const files = await api.listFilesInChangeRequestById(spaceId, cr.id);
    expectValidResponse('GET', '/spaces/{spaceId}/change-requests/{changeRequestId}/content/files', 200, files.data);
    expect(files.data.items.map((f) => f.id)).toEqual([file]);
    const one = await api.getFileInChangeRequestById(spaceId, cr.id, file);
    expectValidResponse('GET', '/spaces/{spaceId}/change-requests/{changeRequestId}/content/files/{fileId}', 200, one.data);
    expect(one.data).toMatchObject({ name: 'pic.png', contentType: 'image/png' });
    expect((await t.rest('GET', `${CR(spaceId, cr.id)}/content/files/file_nope`)).status).toBe(404);

    const backlinks = await api.listChangeRequestFileBacklinks(spaceId, cr.id, file);
    expectValidResponse('GET', '/spaces/{spaceId}/change-requests/{changeRequestId}/content/files/{fileId}/backlinks', 200, backlinks.data);
    expect(backlinks.data.items.map((i: any) => i.page.id)).toEqual([guide]);
  });

  it('lists page links with stats', async () => {
    const { spaceId, cr, setup } = await authoredCr();
    const links = await t.client().spaces.listPageLinksInChangeRequest(spaceId, cr.id, setup);
    expectValidResponse('GET', '/spaces/{spaceId}/change-requests/{changeRequestId}/content/page/{pageId}/links', 200, links.data);
    expect(links.data.items.map((l: any) => l.status)).toEqual(['broken']);
    expect((links.data as any).stats).toMatchObject({ total: 1, broken: { total: 1 } });
    expect((await t.rest('GET', `${CR(spaceId, cr.id)}/content/page/${setup}/links?status=ok`)).status).toBe(400);
  });

  it('content reads: readers may, outsiders 404, 401, missing change request 404', async () => {
    const { spaceId, cr } = await authoredCr();
    const reader = await t.createUser('read');
    expect((await t.rest('GET', `${CR(spaceId, cr.id)}/content`, undefined, reader.token)).status).toBe(200);
    const outsider = await t.createUser(undefined);
    for (const path of ['content', 'content/pages', 'content/files']) {
      expect((await t.rest('GET', `${CR(spaceId, cr.id)}/${path}`, undefined, outsider.token)).status).toBe(404);
      expect((await t.rest('GET', `${CR(spaceId, cr.id)}/${path}`, undefined, null)).status).toBe(401);
      expect((await t.rest('GET', `${CR(spaceId, 999)}/${path}`)).status).toBe(404);
    }
    expect((await t.rest('GET', `${CR(spaceId, cr.id)}/content?metadata=nope`)).status).toBe(400);
  });

  it('a merge revision of the space names the change request it came from (mergedFrom)', async () => {
    const { spaceId, cr } = await authoredCr();
    const merged = await t.rest('POST', `${CR(spaceId, cr.id)}/merge`);
    const content = await t.client().spaces.getCurrentRevision(spaceId);
    expectValidResponse('GET', '/spaces/{spaceId}/content', 200, content.data);
    expect(content.data).toMatchObject({ id: merged.body.revision, type: 'merge', mergedFrom: { object: 'change-request', id: cr.id, status: 'merged' } });
    expect(content.data.pages.map((p: any) => p.title)).toEqual(['Guide', 'Setup']);
    const gql = await t.gql(`query($s: ID!) { changeRequest(spaceId: $s, idOrNumber: "1") { revisionMerged { type mergedFrom { id } } revision { allPages { title } } } }`, { s: spaceId });
    expect(gql.data.changeRequest.revisionMerged).toEqual({ type: 'merge', mergedFrom: { id: cr.id } });
  });

  it('imports a URL into the change request (201), not into the space; failures change nothing', async () => {
    const fixtures = await serveFixtures({ '/notes.md': { body: '# Imported notes\n\nFrom a file.', contentType: 'text/markdown' } });
    try {
      const spaceId = await newSpace();
      const cr = await newCr(spaceId);
      const res = await t.client().spaces.importContentInChangeRequest(spaceId, String(cr.number), { url: `${fixtures.base}/notes.md`, source: 'markdown' as any });
      expect(res.status).toBe(201);
      expectValidResponse('POST', '/spaces/{spaceId}/change-requests/{changeRequestId}/content/import', 201, res.data);
      expect(res.data.revision).toBe(await headOf(spaceId, cr.id));
      const pages = await t.rest('GET', `${CR(spaceId, cr.id)}/content/pages`);
      expect(pages.body.pages.map((p: any) => p.title)).toEqual(['Imported notes']);
      expect((await t.rest('GET', `/v1/spaces/${spaceId}/content/pages`)).body.pages).toEqual([]);

      const before = await headOf(spaceId, cr.id);
      const failed = await t.rest('POST', `${CR(spaceId, cr.id)}/content/import`, { url: `${fixtures.base}/missing.md`, source: 'markdown' });
      expect(failed.status).toBe(400);
      expect(failed.body.error.message).toContain('url');
      const bad = await t.rest('POST', `${CR(spaceId, cr.id)}/content/import`, { url: 'not a url', source: 'markdown' });
      expect(bad.status).toBe(400);
      expect(bad.body.error.message).toContain('url');
      const reader = await t.createUser('read');
      expect((await t.rest('POST', `${CR(spaceId, cr.id)}/content/import`, { url: `${fixtures.base}/notes.md`, source: 'markdown' }, reader.token)).status).toBe(403);
      const outsider = await t.createUser(undefined);
      expect((await t.rest('POST', `${CR(spaceId, cr.id)}/content/import`, { url: `${fixtures.base}/notes.md`, source: 'markdown' }, outsider.token)).status).toBe(404);
      expect(await headOf(spaceId, cr.id)).toBe(before);
    } finally {
      await fixtures.close();
    }
  });
});
