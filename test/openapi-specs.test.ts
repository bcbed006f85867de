// OpenAPI specifications: CRUD over REST (official client + raw requests) and GraphQL, and the
// background processing job, fed by a local HTTP server (loopback fetches are allowed in tests).
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectAccess, startTestApp, type TestApp } from './helpers.ts';
import { expectValidResponse } from './openapi.ts';
import { openApiFetchLimits } from '../src/domain/openapi.ts';

const FIXTURES = path.join(import.meta.dirname, 'fixtures', 'openapi');
const fixture = (name: string) => fs.readFileSync(path.join(FIXTURES, name), 'utf8');

let t: TestApp;
let server: http.Server;
let fixtureBase: string;
/** What the fixture server answers for `/petstore.yaml` (changed by the tests). */
let petstore = fixture('petstore.yaml');
const pending = new Set<http.ServerResponse>();

beforeAll(async () => {
  t = await startTestApp({ worker: true });
  server = http.createServer((req, res) => {
    const url = req.url ?? '/';
    const send = (body: string, type = 'application/yaml') => {
      res.writeHead(200, { 'content-type': type });
      res.end(body);
    };
    if (url === '/petstore.yaml') return send(petstore);
    if (url === '/big.yaml') return send(bigSpec(5000));
    if (url === '/schemas/pet.yaml') return send(fixture('pet.yaml'));
    if (url === '/inline.json') return send(fixture('inline.json'), 'application/json');
    if (url === '/broken.yaml') return send('openapi: 3.0.0\ninfo: [this is: not, valid\n  - at all');
    if (url === '/not-openapi.json') return send('{"hello": "world"}', 'application/json');
    if (url === '/slow.yaml') {
      pending.add(res); // never answers; closed in afterAll
      return;
    }
    res.writeHead(404);
    res.end('not found');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fixtureBase = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
});

afterAll(async () => {
  for (const res of pending) res.destroy();
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  await t?.close();
});

const base = () => `/v1/orgs/${t.org.id}/openapi`;
const specCount = () => t.app.prisma.openApiSpec.count({ where: { organizationId: t.org.id } });

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const port = (srv.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  return port;
}

/** Poll the spec until the job has completed (state `complete`). */
async function waitProcessed(slug: string, timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const r = await t.rest('GET', `${base()}/${slug}`);
    expect(r.status).toBe(200);
    if (r.body.processingState === 'complete') return r.body;
    if (Date.now() > deadline) throw new Error(`spec ${slug} still ${r.body.processingState}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function versionCount(slug: string) {
  const r = await t.rest('GET', `${base()}/${slug}/versions`);
  expect(r.status).toBe(200);
  return r.body.count as number;
}

describe('OpenAPI specifications: processing', () => {
  it('creates from a URL (201, pending) and processes it to a first version with its content', async () => {
    const res = await t.client().orgs.createOpenApiSpec(t.org.id, { slug: 'petstore', source: { url: `${fixtureBase}/petstore.yaml` } });
    expect(res.status).toBe(201);
    expect(res.data).toMatchObject({
      object: 'openapi-spec',
      slug: 'petstore',
      sourceURL: `${fixtureBase}/petstore.yaml`,
      processingState: 'pending',
      permissions: { view: true, edit: true, delete: true },
      urls: { location: `${t.app.config.publicUrl}/v1/orgs/${t.org.id}/openapi/petstore`, app: expect.any(String) },
    });
    expect(res.data.lastVersion).toBeUndefined();
    expectValidResponse('POST', '/orgs/{organizationId}/openapi', 201, res.data);

    const done = await waitProcessed('petstore');
    expect(done.lastProcessErrorCode).toBeUndefined();
    expect(done.lastVersion).toMatch(/^oasv_/);
    expect(done.lastProcessedAt).toEqual(expect.any(String));
    expectValidResponse('GET', '/orgs/{organizationId}/openapi/{specSlug}', 200, done);

    const got = await t.client().orgs.getOpenApiSpecBySlug(t.org.id, 'petstore');
    expect(got.data).toEqual(done);

    const versions = await t.client().orgs.listOpenApiSpecVersions(t.org.id, 'petstore');
    expect(versions.data.count).toBe(1);
    expect(versions.data.items[0]).toMatchObject({ object: 'openapi-spec-version', id: done.lastVersion });
    expectValidResponse('GET', '/orgs/{organizationId}/openapi/{specSlug}/versions', 200, versions.data);

    const latest = await t.client().orgs.getLatestOpenApiSpecVersion(t.org.id, 'petstore');
    const contentUrl = `${t.app.config.publicUrl}/v1/orgs/${t.org.id}/openapi/petstore/versions/${done.lastVersion}/content`;
    expect(latest.data).toEqual({
      object: 'openapi-spec-version',
      id: done.lastVersion,
      createdAt: expect.any(String),
      url: contentUrl,
      urls: { location: `${t.app.config.publicUrl}/v1/orgs/${t.org.id}/openapi/petstore/versions/${done.lastVersion}` },
    });
    expectValidResponse('GET', '/orgs/{organizationId}/openapi/{specSlug}/versions/latest', 200, latest.data);

    const byId = await t.client().orgs.getOpenApiSpecVersionById(t.org.id, 'petstore', done.lastVersion);
    expect(byId.data).toEqual(latest.data);
    expectValidResponse('GET', '/orgs/{organizationId}/openapi/{specSlug}/versions/{versionId}', 200, byId.data);

    const content = await t.client().orgs.getLatestOpenApiSpecVersionContent(t.org.id, 'petstore');
    expect(content.data.url).toBe(contentUrl);
    const text = JSON.stringify(content.data.filesystem);
    expect(text).toContain('Petstore');
    expect(text).toContain('listPets');
    expect(Object.keys(content.data.filesystem)).toEqual([`${fixtureBase}/petstore.yaml`, `${fixtureBase}/schemas/pet.yaml`]); // the external $ref was fetched
    expectValidResponse('GET', '/orgs/{organizationId}/openapi/{specSlug}/versions/latest/content', 200, content.data);
    const contentById = await t.client().orgs.getOpenApiSpecVersionContentById(t.org.id, 'petstore', done.lastVersion);
    expect(contentById.data).toEqual(content.data);
    expectValidResponse('GET', '/orgs/{organizationId}/openapi/{specSlug}/versions/{versionId}/content', 200, contentById.data);

    // The content URL works for the caller's token (REST, not the official client).
    const fetched = await fetch(contentUrl.replace(t.app.config.publicUrl, t.baseUrl), { headers: { authorization: `Bearer ${t.token}` } });
    expect(fetched.status).toBe(200);
    expect(await fetched.json()).toEqual(content.data);
  });

  it('a large specification (1.8 MB of YAML, ~3 s to parse and validate) is processed without stalling the event loop', async () => {
    // Parsing and validation run in a thread of their own (src/lib/openapi-thread.ts); on the
    // event loop this document held it for seconds, every request of the process waiting.
    const loop = monitorEventLoopDelay({ resolution: 10 });
    loop.enable();
    const started = performance.now();
    const res = await t.rest('PUT', `${base()}/big`, { source: { url: `${fixtureBase}/big.yaml` } });
    expect(res.status, res.text).toBe(201);
    // Generous: the job shares a busy CI machine's two cores; the assertion is the event loop's, not the job's speed.
    const done = await waitProcessed('big', 100_000);
    const elapsedMs = performance.now() - started;
    loop.disable();
    expect(done.lastProcessErrorCode).toBeUndefined();
    expect(done.lastVersion).toMatch(/^oasv_/);
    // On the event loop the parse would stall it for most of the job's time; in its thread the
    // longest stall is a fraction of it, however loaded the machine (GC and a busy core included).
    expect(loop.max / 1e6).toBeLessThan(Math.max(1000, elapsedMs / 2));
  }, 120_000);

  it('re-fetches on PUT with the same source: unchanged content adds no version, changed content adds one', async () => {
    const before = await waitProcessed('petstore');
    t.clock.advance(60_000);
    const same = await t.client().orgs.createOrUpdateOpenApiSpecBySlug(t.org.id, 'petstore', { source: { url: `${fixtureBase}/petstore.yaml` } });
    expect(same.status).toBe(200);
    // The PUT queued a reprocess; its answer reads the spec after commit, when the worker may
    // already have picked the job up. That the job ran is checked through lastProcessedAt below.
    expect(['pending', 'progress', 'complete']).toContain(same.data.processingState);
    expectValidResponse('PUT', '/orgs/{organizationId}/openapi/{specSlug}', 200, same.data);
    const unchanged = await waitProcessed('petstore');
    expect(unchanged.lastVersion).toBe(before.lastVersion);
    expect(new Date(unchanged.lastProcessedAt).getTime()).toBeGreaterThan(new Date(before.lastProcessedAt).getTime());
    expect(await versionCount('petstore')).toBe(1);

    petstore = fixture('petstore-v2.yaml');
    t.clock.advance(60_000);
    const changed = await t.rest('PUT', `${base()}/petstore`, { source: { url: `${fixtureBase}/petstore.yaml` } });
    expect(changed.status).toBe(200);
    const after = await waitProcessed('petstore');
    expect(after.lastVersion).not.toBe(before.lastVersion);
    expect(after.lastProcessErrorCode).toBeUndefined();
    expect(await versionCount('petstore')).toBe(2);
    const versions = await t.rest('GET', `${base()}/petstore/versions`);
    expect(versions.body.items.map((v: any) => v.id)).toEqual([after.lastVersion, before.lastVersion]); // newest first
    const content = await t.rest('GET', `${base()}/petstore/versions/latest/content`);
    expect(JSON.stringify(content.body.filesystem)).toContain('getPet');
    const old = await t.rest('GET', `${base()}/petstore/versions/${before.lastVersion}/content`);
    expect(JSON.stringify(old.body.filesystem)).not.toContain('getPet');

    // Paging through versions.
    const page1 = await t.rest('GET', `${base()}/petstore/versions?limit=1`);
    expect(page1.body.items).toHaveLength(1);
    expectValidResponse('GET', '/orgs/{organizationId}/openapi/{specSlug}/versions', 200, page1.body);
    const page2 = await t.rest('GET', `${base()}/petstore/versions?limit=1&page=${encodeURIComponent(page1.body.next.page)}`);
    expect(page2.body.items[0].id).toBe(before.lastVersion);
    expect(page2.body.next).toBeUndefined();
  });

  it('an unparseable source completes with PARSE_ERROR and keeps the previous version', async () => {
    const before = await waitProcessed('petstore');
    const r = await t.rest('PUT', `${base()}/petstore`, { source: { url: `${fixtureBase}/broken.yaml` } });
    expect(r.status).toBe(200);
    const failed = await waitProcessed('petstore');
    expect(failed.lastProcessErrorCode).toBe('PARSE_ERROR');
    expect(failed.lastVersion).toBe(before.lastVersion);
    expect(failed.sourceURL).toBe(`${fixtureBase}/broken.yaml`);
    expectValidResponse('GET', '/orgs/{organizationId}/openapi/{specSlug}', 200, failed);
    expect((await t.rest('GET', `${base()}/petstore/versions/latest`)).body.id).toBe(before.lastVersion);

    await t.rest('PUT', `${base()}/petstore`, { source: { url: `${fixtureBase}/not-openapi.json` } });
    expect((await waitProcessed('petstore')).lastProcessErrorCode).toBe('PARSE_ERROR');

    // Back to a good source: the error clears.
    await t.rest('PUT', `${base()}/petstore`, { source: { url: `${fixtureBase}/petstore.yaml` } });
    const ok = await waitProcessed('petstore');
    expect(ok.lastProcessErrorCode).toBeUndefined();
    expect(ok.lastVersion).toBe(before.lastVersion);
  });

  it('an unreachable source completes with FETCH_ERROR; a 404 too', async () => {
    const port = await closedPort();
    const created = await t.rest('POST', base(), { slug: 'unreachable', source: { url: `http://127.0.0.1:${port}/spec.yaml` } });
    expect(created.status).toBe(201);
    const done = await waitProcessed('unreachable');
    expect(done.lastProcessErrorCode).toBe('FETCH_ERROR');
    expect(done.lastVersion).toBeUndefined();
    expectValidResponse('GET', '/orgs/{organizationId}/openapi/{specSlug}', 200, done);
    expect((await t.rest('GET', `${base()}/unreachable/versions/latest`)).status).toBe(404);
    expect((await t.rest('GET', `${base()}/unreachable/versions/latest/content`)).status).toBe(404);
    const versions = await t.rest('GET', `${base()}/unreachable/versions`);
    expect(versions.body).toEqual({ items: [], count: 0 });
    expectValidResponse('GET', '/orgs/{organizationId}/openapi/{specSlug}/versions', 200, versions.body);

    await t.rest('PUT', `${base()}/missing-file`, { source: { url: `${fixtureBase}/nothing-here.yaml` } });
    expect((await waitProcessed('missing-file')).lastProcessErrorCode).toBe('FETCH_ERROR');
  });

  it('a slow source is `progress` while fetched, then completes with FETCH_TIMEOUT', async () => {
    const saved = openApiFetchLimits.timeoutMs;
    openApiFetchLimits.timeoutMs = 1500;
    try {
      await t.rest('POST', base(), { slug: 'slow', source: { url: `${fixtureBase}/slow.yaml` } });
      const states = new Set<string>();
      // Watch until it completes (generous deadline: a loaded machine starts jobs late).
      for (const deadline = Date.now() + 20_000; Date.now() < deadline && !states.has('complete'); ) {
        states.add((await t.rest('GET', `${base()}/slow`)).body.processingState);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(states.has('progress')).toBe(true);
      const done = await waitProcessed('slow');
      expect(done.lastProcessErrorCode).toBe('FETCH_TIMEOUT');
    } finally {
      openApiFetchLimits.timeoutMs = saved;
    }
  });

  it('the job is idempotent: rerunning it adds no version; a deleted spec is skipped', async () => {
    const before = await waitProcessed('petstore');
    const count = await versionCount('petstore');
    await t.app.jobs.runNow('processOpenApiSpec', { specId: before.id });
    await t.app.jobs.runNow('processOpenApiSpec', { specId: before.id });
    const after = await waitProcessed('petstore');
    expect(after.lastVersion).toBe(before.lastVersion);
    expect(await versionCount('petstore')).toBe(count);
    await t.app.jobs.runNow('processOpenApiSpec', { specId: 'oas_deleted' });
  });

  it('creates from text, and PUT creates a missing spec (201)', async () => {
    const res = await t.client().orgs.createOrUpdateOpenApiSpecBySlug(t.org.id, 'inline', { source: { text: fixture('inline.json') } });
    expect(res.status).toBe(201);
    expect(res.data.sourceURL).toBeUndefined();
    expectValidResponse('PUT', '/orgs/{organizationId}/openapi/{specSlug}', 201, res.data);
    const done = await waitProcessed('inline');
    expect(done.lastProcessErrorCode).toBeUndefined();
    const content = await t.rest('GET', `${base()}/inline/versions/latest/content`);
    expect(JSON.stringify(content.body.filesystem)).toContain('ping');
  });
});

describe('OpenAPI specifications: validation and access', () => {
  it('rejects bad create bodies with 400 naming the field, creating nothing', async () => {
    const before = await specCount();
    for (const [body, field] of [
      [{ source: { url: 'https://example.com/a.yaml' } }, 'slug'],
      [{ slug: 'Upper', source: { url: 'https://example.com/a.yaml' } }, 'slug'],
      [{ slug: 'double--hyphen', source: { url: 'https://example.com/a.yaml' } }, 'slug'],
      [{ slug: '-leading', source: { url: 'https://example.com/a.yaml' } }, 'slug'],
      [{ slug: 'x'.repeat(101), source: { url: 'https://example.com/a.yaml' } }, 'slug'],
      [{ slug: 'ok' }, 'source'],
      [{ slug: 'ok', source: {} }, 'source'],
      [{ slug: 'ok', source: { url: 'not a url' } }, 'source.url'],
      [{ slug: 'ok', source: { url: 'ftp://example.com/a.yaml' } }, 'source.url'],
      [{ slug: 'ok', source: { url: `https://example.com/${'a'.repeat(2048)}` } }, 'source.url'],
      [{ slug: 'ok', source: { text: '' } }, 'source.text'],
      [{ slug: 'ok', source: { url: 'https://example.com/a.yaml', text: 'openapi: 3.0.0' } }, 'source'],
      [{ slug: 'ok', source: { url: 'https://example.com/a.yaml' }, visibility: 'public' }, 'visibility'],
    ] as const) {
      const r = await t.rest('POST', base(), body);
      expect(r.status, JSON.stringify(body).slice(0, 100)).toBe(400);
      expect(r.body).toEqual({ error: { code: 400, message: expect.stringContaining(field) } });
    }
    expect(await specCount()).toBe(before);
  });

  it('409 when the slug exists', async () => {
    await t.rest('PUT', `${base()}/taken`, { source: { text: fixture('inline.json') } });
    const r = await t.rest('POST', base(), { slug: 'taken', source: { text: fixture('inline.json') } });
    expect(r.status).toBe(409);
    expect(r.body.error.code).toBe(409);
  });

  it('PUT validates the body and the slug in the path', async () => {
    for (const [p, body, field] of [
      ['taken', {}, 'source'],
      ['taken', { source: { url: 'nope' } }, 'source.url'],
      ['taken', { source: { text: 'x' }, slug: 'other' }, 'slug'],
      ['Not_A_Slug', { source: { text: 'x' } }, 'specSlug'],
    ] as const) {
      const r = await t.rest('PUT', `${base()}/${p}`, body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error.message).toContain(field);
    }
    expect((await t.rest('GET', `${base()}/Not_A_Slug`)).status).toBe(404);
  });

  it('lists specs and versions in a constant number of SQL statements', async () => {
    const specs = await t.countQueries(() => t.rest('GET', base()));
    expect(specs.result.body.count).toBeGreaterThan(3);
    const versions = await t.countQueries(() => t.rest('GET', `${base()}/petstore/versions`));
    expect(versions.result.body.count).toBe(2);
    expect(specs.statements.join('\n')).not.toContain('sourceText');
    expect(specs.count).toBeLessThanOrEqual(6);
    expect(versions.count).toBeLessThanOrEqual(6);
  });

  it('lists specs with the envelope', async () => {
    const res = await t.client().orgs.listOpenApiSpecs(t.org.id);
    expect(res.data.count).toBe(await specCount());
    expect(res.data.items.map((s) => s.slug)).toContain('petstore');
    expectValidResponse('GET', '/orgs/{organizationId}/openapi', 200, res.data);
    const page = await t.rest('GET', `${base()}?limit=1`);
    expect(page.body.items).toHaveLength(1);
    expect(page.body.next.page).toEqual(expect.any(String));
    expectValidResponse('GET', '/orgs/{organizationId}/openapi', 200, page.body);
  });

  it('404 for missing specs and versions; deletes are idempotent (205, then 204)', async () => {
    for (const p of ['nope', 'nope/versions', 'nope/versions/latest', 'nope/versions/latest/content', 'petstore/versions/oasv_missing', 'petstore/versions/oasv_missing/content']) {
      const r = await t.rest('GET', `${base()}/${p}`);
      expect(r.status, p).toBe(404);
      expect(r.body.error.code).toBe(404);
    }
    // A version of another spec is not reachable through this one.
    const inline = await waitProcessed('inline');
    expect((await t.rest('GET', `${base()}/petstore/versions/${inline.lastVersion}`)).status).toBe(404);

    await t.rest('PUT', `${base()}/doomed`, { source: { text: fixture('inline.json') } });
    await waitProcessed('doomed');
    const first = await t.client().orgs.deleteOpenApiSpecBySlug(t.org.id, 'doomed');
    expect(first.status).toBe(205);
    const second = await t.rest('DELETE', `${base()}/doomed`);
    expect(second.status).toBe(204);
    expect(second.text).toBe('');
    expect((await t.rest('GET', `${base()}/doomed`)).status).toBe(404);
    expect(await t.app.prisma.openApiSpecVersion.count({ where: { spec: { slug: 'doomed' } } })).toBe(0);
    expect((await t.rest('DELETE', `/v1/orgs/org_missing/openapi/doomed`)).status).toBe(404);
  });

  it('401 without a token', async () => {
    for (const [method, p, body] of [
      ['GET', base(), undefined],
      ['POST', base(), { slug: 'x', source: { text: 'x' } }],
      ['GET', `${base()}/petstore`, undefined],
      ['PUT', `${base()}/petstore`, { source: { text: 'x' } }],
      ['DELETE', `${base()}/petstore`, undefined],
      ['GET', `${base()}/petstore/versions`, undefined],
      ['GET', `${base()}/petstore/versions/latest`, undefined],
      ['GET', `${base()}/petstore/versions/latest/content`, undefined],
    ] as const) {
      await expectAccess(t, { method, path: p, body }, { anonymous: 401 });
    }
    expect((await t.rest('GET', `${base()}/petstore`)).body.sourceURL).toBe(`${fixtureBase}/petstore.yaml`);
  });

  it('readers may read but not write (403); creators may write; guests may not read; outsiders get 404', async () => {
    const before = await specCount();
    const one = await t.rest('GET', `${base()}/petstore`, undefined, (await t.as('editor')).token);
    expect(one.status).toBe(200);
    expect(one.body.permissions).toEqual({ view: true, edit: false, delete: false });
    expectValidResponse('GET', '/orgs/{organizationId}/openapi/{specSlug}', 200, one.body);
    // openApiSpec:read is `read` (not guests); openApiSpec:write is `create`.
    const read = { anonymous: 401, outsider: 404, guest: 403, reader: 200, editor: 200, creator: 200 };
    const write = { anonymous: 401, outsider: 404, guest: 403, reader: 403, editor: 403, reviewer: 403 };
    for (const path of [base(), `${base()}/petstore`, `${base()}/petstore/versions`, `${base()}/petstore/versions/latest/content`]) {
      await expectAccess(t, { method: 'GET', path }, read);
    }
    await expectAccess(t, { method: 'POST', path: base(), body: { slug: 'by-reader', source: { text: 'x' } } }, write);
    await expectAccess(t, { method: 'PUT', path: `${base()}/petstore`, body: { source: { text: 'x' } } }, write);
    await expectAccess(t, { method: 'DELETE', path: `${base()}/petstore` }, write);
    expect(await specCount()).toBe(before);

    // Writing specs follows the organization's `createOpenAPISpec` permission (role `create`).
    const creator = await t.as('creator');
    const org = await t.rest('GET', `/v1/orgs/${t.org.id}`, undefined, creator.token);
    expect(org.body.permissions.createOpenAPISpec).toBe(true);
    const byCreator = await t.rest('PUT', `${base()}/by-creator`, { source: { text: fixture('inline.json') } }, creator.token);
    expect(byCreator.status).toBe(201);
    expect(byCreator.body.permissions).toEqual({ view: true, edit: true, delete: true });

    expect((await t.rest('GET', `${base()}/petstore`)).body.sourceURL).toBe(`${fixtureBase}/petstore.yaml`);
  });
});

describe('OpenAPI specifications over GraphQL', () => {
  it('Organization.openApiSpecs, openApiSpec(…) with versions, node(id:), and the mutations', async () => {
    const list = await t.gql(`query($id: ID!) { organization(id: $id) { openApiSpecs(first: 100) { totalCount nodes { id slug processingState } } } }`, { id: t.org.id });
    expect(list.errors).toBeUndefined();
    expect(list.data.organization.openApiSpecs.totalCount).toBe(await specCount());

    const spec = await t.gql(
      `query($o: ID!) { openApiSpec(organizationId: $o, slug: "petstore") { id slug lastVersion latestVersion { id url } versions(first: 10) { totalCount nodes { id createdAt hash } } } }`,
      { o: t.org.id },
    );
    expect(spec.errors).toBeUndefined();
    const s = spec.data.openApiSpec;
    expect(s.latestVersion.id).toBe(s.lastVersion);
    expect(s.versions.totalCount).toBe(2);

    const node = await t.gql(`query($id: ID!) { node(id: $id) { id ... on OpenApiSpec { slug } } }`, { id: s.id });
    expect(node.data.node).toEqual({ id: s.id, slug: 'petstore' });
    const vnode = await t.gql(`query($id: ID!) { node(id: $id) { id ... on OpenApiSpecVersion { filesystem } } }`, { id: s.lastVersion });
    expect(JSON.stringify(vnode.data.node.filesystem)).toContain('Petstore');

    const created = await t.gql(
      `mutation($input: CreateOpenApiSpecInput!) { createOpenApiSpec(input: $input) { openApiSpec { slug processingState } } }`,
      { input: { organizationId: t.org.id, slug: 'from-graphql', source: { text: fixture('inline.json') } } },
    );
    expect(created.data.createOpenApiSpec.openApiSpec).toEqual({ slug: 'from-graphql', processingState: 'pending' });
    const upserted = await t.gql(
      `mutation($input: UpsertOpenApiSpecInput!) { upsertOpenApiSpec(input: $input) { created openApiSpec { slug } } }`,
      { input: { organizationId: t.org.id, slug: 'from-graphql', source: { text: fixture('inline.json') } } },
    );
    expect(upserted.data.upsertOpenApiSpec.created).toBe(false);
    await waitProcessed('from-graphql');
    const del = await t.gql(`mutation($input: DeleteOpenApiSpecInput!) { deleteOpenApiSpec(input: $input) { deleted } }`, {
      input: { organizationId: t.org.id, slug: 'from-graphql' },
    });
    expect(del.data.deleteOpenApiSpec.deleted).toBe(true);
  });

  it('BAD_REQUEST names the field; FORBIDDEN for readers; outsiders cannot load by node id', async () => {
    const bad = await t.gql(`mutation($input: CreateOpenApiSpecInput!) { createOpenApiSpec(input: $input) { openApiSpec { id } } }`, {
      input: { organizationId: t.org.id, slug: 'Bad Slug', source: { text: 'x' } },
    });
    expect(bad.errors?.[0].extensions?.code).toBe('BAD_REQUEST');
    expect(bad.errors?.[0].extensions?.field).toBe('slug');

    const reader = await t.createUser('read');
    const denied = await t.gql(
      `mutation($input: UpsertOpenApiSpecInput!) { upsertOpenApiSpec(input: $input) { openApiSpec { id } } }`,
      { input: { organizationId: t.org.id, slug: 'petstore', source: { text: 'x' } } },
      reader.token,
    );
    expect(denied.errors?.[0].extensions?.code).toBe('FORBIDDEN');

    const spec = await t.rest('GET', `${base()}/petstore`);
    const outsider = await t.createUser(undefined);
    const node = await t.gql(`query($id: ID!) { node(id: $id) { id } }`, { id: spec.body.id }, outsider.token);
    expect(node.data?.node ?? null).toBeNull();
    const vnode = await t.gql(`query($id: ID!) { node(id: $id) { id } }`, { id: spec.body.lastVersion }, outsider.token);
    expect(vnode.data?.node ?? null).toBeNull();
  });
});

/** An OpenAPI 3 document with `paths` operations, in YAML (about 370 bytes each). */
function bigSpec(paths: number) {
  const lines = ['openapi: 3.0.0', 'info:', '  title: Big', '  version: 1.0.0', 'paths:'];
  for (let i = 0; i < paths; i++) {
    lines.push(`  /items${i}/{id}:`, '    get:', `      operationId: get${i}`, '      parameters:', '        - name: id', '          in: path', '          required: true');
    lines.push('          schema: { type: string }', '      responses:', "        '200':", `          description: item ${i} ${'lorem ipsum '.repeat(10)}`);
  }
  return lines.join('\n');
}
