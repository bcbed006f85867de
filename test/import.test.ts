// Imports: POST SPACE/content/import runs a background job (graphile-worker) that fetches the URL
// from a local fixture server and writes pages and files as one new revision.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers.ts';
import { expectValidResponse } from './openapi.ts';
import { makePng, makeZip, serveFixtures } from './fixtures/content.ts';

let t: TestApp;
let server: Awaited<ReturnType<typeof serveFixtures>>;
const PNG = makePng(4, 3);

beforeAll(async () => {
  t = await startTestApp({ worker: true });
  server = await serveFixtures({
    '/handbook.zip': {
      contentType: 'application/zip',
      body: await makeZip({
        'handbook/getting-started.md': '# Getting started\n\nSee the [API guide](guides/api.md) and ![diagram](images/diagram.png).\n',
        'handbook/guides/README.md': '# Guides\n\nAll the guides.\n',
        'handbook/guides/api.md': '# API\n\nBack to [the start](../getting-started.md).\n',
        'handbook/images/diagram.png': PNG,
      }),
    },
    '/summary.zip': {
      contentType: 'application/zip',
      body: await makeZip({
        'SUMMARY.md': '# Summary\n\n* [Welcome](README.md)\n* [Install](install.md)\n  * [Linux](install/linux.md)\n',
        'README.md': '# Welcome\n\nHello.\n',
        'install.md': '# Install\n\nSteps.\n',
        'install/linux.md': '# Linux\n\nUse apt.\n',
      }),
    },
    '/notes.md': { contentType: 'text/markdown', body: '# Release notes\n\n- Fixed things\n' },
    '/article.html': { contentType: 'text/html', body: '<html><head><title>An article</title></head><body><main><h2>Part one</h2><p>Some <strong>bold</strong> text.</p></main></body></html>' },
    '/garbage.zip': { contentType: 'application/zip', body: Buffer.from('this is not a zip archive at all') },
    '/site/index.html': {
      contentType: 'text/html',
      body: '<html><head><title>Home</title></head><body><h1>Home</h1><p>Go to <a href="/site/about.html">about</a> or <a href="https://elsewhere.example/x">away</a>.</p></body></html>',
    },
    '/site/about.html': {
      contentType: 'text/html',
      body: '<html><head><title>About</title></head><body><p>About us. <a href="/site/deep.html">deeper</a> <a href="/site/index.html">home</a></p></body></html>',
    },
    '/site/deep.html': { contentType: 'text/html', body: '<html><head><title>Deep</title></head><body><p>Deep page <a href="/site/deeper.html">more</a></p></body></html>' },
    '/site/deeper.html': { contentType: 'text/html', body: '<html><head><title>Deeper</title></head><body><p>Too deep</p></body></html>' },
  });
});
afterAll(async () => {
  await server?.close();
  await t?.close();
});

async function newSpace(title = 'Imports') {
  const r = await t.rest('POST', `/v1/orgs/${t.org.id}/spaces`, { title });
  return r.body.id as string;
}

async function revisionOf(spaceId: string) {
  return (await t.app.prisma.space.findUniqueOrThrow({ where: { id: spaceId } })).revisionId;
}

describe('POST /v1/spaces/{spaceId}/content/import', () => {
  it('imports a zip with nested folders and an image as one new revision', async () => {
    const spaceId = await newSpace();
    await t.rest('POST', `/v1/spaces/${spaceId}/content`, { changes: [{ operation: 'insert_page', title: 'Existing', document: { markdown: 'kept' } }] });
    const before = await revisionOf(spaceId);
    const res = await t.client().spaces.importContent(spaceId, { url: `${server.base}/handbook.zip`, source: 'zip' as never });
    expect(res.status).toBe(201);
    expectValidResponse('POST', '/spaces/{spaceId}/content/import', 201, res.data);
    expect(res.data).toEqual({ revision: await revisionOf(spaceId), importedResources: 4, totalResources: 4 });
    const rev = await t.app.prisma.revision.findUniqueOrThrow({ where: { id: res.data.revision } });
    expect(rev.parents).toEqual([before]);

    const pages = (await t.rest('GET', `/v1/spaces/${spaceId}/content/pages`)).body.pages;
    const shape = (list: any[]): unknown => list.map((p) => [p.title, p.path, shape(p.pages ?? [])]);
    expect(shape(pages)).toEqual([
      ['Existing', 'existing', []],
      ['Getting started', 'getting-started', []],
      ['Guides', 'guides', [['API', 'guides/api', []]]],
    ]);
    const files = (await t.rest('GET', `/v1/spaces/${spaceId}/content/files`)).body.items;
    expect(files).toHaveLength(1);
    expect(files[0]).toMatchObject({ name: 'diagram.png', contentType: 'image/png', size: PNG.length, dimensions: { width: 4, height: 3 } });

    // Links between imported files now point at the pages and the file they became.
    const [start, guides] = [pages[1], pages[2]];
    const api = guides.pages[0];
    expect(start.markdown).toContain(`[API guide](/pages/${api.id})`);
    expect(start.markdown).toContain(`![diagram](/files/${files[0].id})`);
    expect(api.markdown).toContain(`[the start](/pages/${start.id})`);
    const links = (await t.rest('GET', `/v1/spaces/${spaceId}/links`)).body;
    expect(links.stats).toEqual({ total: 3, broken: { total: 0 } });

    // The file bytes are served.
    const dl = await fetch(files[0].downloadURL.replace(t.app.config.publicUrl, t.baseUrl), { headers: { authorization: `Bearer ${t.token}` } });
    expect(Buffer.from(await dl.arrayBuffer()).equals(PNG)).toBe(true);

    // Re-running the finished job changes nothing.
    const job = await t.app.prisma.importJob.findFirstOrThrow({ where: { spaceId } });
    expect(job).toMatchObject({ state: 'complete', revisionId: res.data.revision, importedResources: 4 });
    await t.app.jobs.runNow('importContent', { jobId: job.id });
    expect(await revisionOf(spaceId)).toBe(res.data.revision);
  });

  it('follows SUMMARY.md and imports a single markdown file', async () => {
    const spaceId = await newSpace();
    const r = await t.rest('POST', `/v1/spaces/${spaceId}/content/import`, { url: `${server.base}/summary.zip`, source: 'zip' });
    expect(r.status).toBe(201);
    const pages = (await t.rest('GET', `/v1/spaces/${spaceId}/content/pages`)).body.pages;
    expect(pages.map((p: any) => [p.title, p.pages.map((c: any) => c.title)])).toEqual([
      ['Welcome', []],
      ['Install', ['Linux']],
    ]);
    const md = await t.rest('POST', `/v1/spaces/${spaceId}/content/import`, { url: `${server.base}/notes.md`, source: 'markdown' });
    expect(md.status).toBe(201);
    expect(md.body).toMatchObject({ importedResources: 1, totalResources: 1 });
    const after = (await t.rest('GET', `/v1/spaces/${spaceId}/content/pages`)).body.pages;
    expect(after.at(-1)).toMatchObject({ title: 'Release notes', markdown: '- Fixed things\n' });
    const html = await t.rest('POST', `/v1/spaces/${spaceId}/content/import`, { url: `${server.base}/article.html`, source: 'html' });
    expect(html.status).toBe(201);
    const last = (await t.rest('GET', `/v1/spaces/${spaceId}/content/pages`)).body.pages.at(-1);
    expect(last.title).toBe('An article');
    expect(last.markdown).toContain('## Part one');
    expect(last.markdown).toContain('**bold**');
  });

  it('crawls a website: same-site links only, bounded depth', async () => {
    const spaceId = await newSpace();
    const r = await t.rest('POST', `/v1/spaces/${spaceId}/content/import`, { url: `${server.base}/site/index.html`, source: 'website' });
    expect(r.status).toBe(201);
    const pages = (await t.rest('GET', `/v1/spaces/${spaceId}/content/pages`)).body.pages;
    const titles: string[] = [];
    const walk = (list: any[]) => list.forEach((p) => (titles.push(p.title), walk(p.pages ?? [])));
    walk(pages);
    expect(titles.sort()).toEqual(['About', 'Deep', 'Home']);
    expect(server.hits).not.toContain('/site/deeper.html');
    const flat = pages.flatMap((p: any) => [p, ...p.pages, ...p.pages.flatMap((c: any) => c.pages)]);
    const home = flat.find((p: any) => p.title === 'Home');
    const about = flat.find((p: any) => p.title === 'About');
    // Links between crawled pages point at the pages they became; other sites stay URLs.
    expect(home.markdown).toContain(`/pages/${about.id}`);
    expect(home.markdown).toContain('https://elsewhere.example/x');
  });

  it('a failing import (404 URL, garbage zip) answers 400 naming url and changes nothing', async () => {
    const spaceId = await newSpace();
    const before = await revisionOf(spaceId);
    const missing = await t.rest('POST', `/v1/spaces/${spaceId}/content/import`, { url: `${server.base}/nope.zip`, source: 'zip' });
    expect(missing.status).toBe(400);
    expect(missing.body.error.message).toMatch(/^url: .*404/);
    const garbage = await t.rest('POST', `/v1/spaces/${spaceId}/content/import`, { url: `${server.base}/garbage.zip`, source: 'zip' });
    expect(garbage.status).toBe(400);
    expect(garbage.body.error.message).toMatch(/^url: .*zip/);
    expect(await revisionOf(spaceId)).toBe(before);
    expect(await t.app.prisma.pageVersion.count({ where: { spaceId } })).toBe(0);
    expect(await t.app.prisma.file.count({ where: { spaceId } })).toBe(0);
    const jobs = await t.app.prisma.importJob.findMany({ where: { spaceId } });
    expect(jobs.map((j) => j.state)).toEqual(['failed', 'failed']);
  });

  it('400 naming the field for bad input (nothing enqueued), 401, 403, 404', async () => {
    const spaceId = await newSpace();
    for (const [body, field] of [
      [{ url: 'not a url', source: 'zip' }, 'url'],
      [{ url: `${server.base}/x.zip` }, 'source'],
      [{ url: `${server.base}/x.zip`, source: 'floppy' }, 'source'],
      [{ url: `${server.base}/x.zip`, source: 'notion' }, 'source'],
      [{ url: `ftp://example.com/x.zip`, source: 'zip' }, 'url'],
      [{ url: `${server.base}/x.zip`, source: 'zip', extra: 1 }, 'extra'],
    ] as const) {
      const r = await t.rest('POST', `/v1/spaces/${spaceId}/content/import`, body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error.message).toContain(field);
    }
    expect(await t.app.prisma.importJob.count({ where: { spaceId } })).toBe(0);
    const body = { url: `${server.base}/notes.md`, source: 'markdown' };
    expect((await t.rest('POST', `/v1/spaces/${spaceId}/content/import`, body, null)).status).toBe(401);
    const reader = await t.createUser('read');
    expect((await t.rest('POST', `/v1/spaces/${spaceId}/content/import`, body, reader.token)).status).toBe(403);
    const outsider = await t.createUser(undefined);
    expect((await t.rest('POST', `/v1/spaces/${spaceId}/content/import`, body, outsider.token)).status).toBe(404);
    expect((await t.rest('POST', `/v1/spaces/space_missing/content/import`, body)).status).toBe(404);
    await t.app.prisma.space.update({ where: { id: spaceId }, data: { editMode: 'locked' } });
    expect((await t.rest('POST', `/v1/spaces/${spaceId}/content/import`, body)).status).toBe(409);
    expect(await t.app.prisma.importJob.count({ where: { spaceId } })).toBe(0);
  });

  it('GraphQL: importSpaceContent answers at once with the job; importJob shows its state', async () => {
    const spaceId = await newSpace();
    const before = await revisionOf(spaceId);
    const m = await t.gql(
      `mutation($input: ImportSpaceContentInput!) { importSpaceContent(input: $input) { importJob { id state url } revision { id } } }`,
      { input: { spaceId, url: `${server.base}/notes.md`, source: 'markdown' } },
    );
    expect(m.errors).toBeUndefined();
    expect(m.data.importSpaceContent.revision.id).toBe(before);
    const jobId = m.data.importSpaceContent.importJob.id;
    let state = m.data.importSpaceContent.importJob.state;
    for (let i = 0; i < 100 && state !== 'complete' && state !== 'failed'; i++) {
      await new Promise((r) => setTimeout(r, 100));
      const q = await t.gql(`query($id: ID!) { importJob(id: $id) { state importedResources revision { id pages { title } } } }`, { id: jobId });
      state = q.data.importJob.state;
      if (state === 'complete') {
        expect(q.data.importJob.importedResources).toBe(1);
        expect(q.data.importJob.revision.pages.map((p: any) => p.title)).toEqual(['Release notes']);
      }
    }
    expect(state).toBe('complete');
    const outsider = await t.createUser(undefined);
    const hidden = await t.gql(`query($id: ID!) { importJob(id: $id) { id } }`, { id: jobId }, outsider.token);
    expect(hidden.errors?.[0].extensions?.code).toBe('NOT_FOUND');
  });

  it('refuses private and loopback addresses unless configured', async () => {
    const strict = await startTestApp({ config: { allowPrivateFetch: false } });
    try {
      const s = await strict.rest('POST', `/v1/orgs/${strict.org.id}/spaces`, { title: 'S' });
      const r = await strict.rest('POST', `/v1/spaces/${s.body.id}/content/import`, { url: `${server.base}/notes.md`, source: 'markdown' });
      expect(r.status).toBe(400);
      expect(r.body.error.message).toMatch(/^url: .*non-public/);
      expect(await strict.app.prisma.importJob.count()).toBe(0);
    } finally {
      await strict.close();
    }
  });
});
