// HTTP conventions shared by both APIs: one CORS policy for every route, conditional GET (ETag →
// 304) on REST and GraphQL reads, and trusted documents (persisted operations) on /graphql.
import fs from 'node:fs';
import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, ADMIN_TOKEN, type TestApp } from './helpers.ts';
import { createSite, createSpace } from './fixtures/sites.ts';
import { expectValidResponse } from './openapi.ts';
import { loadConfig, type Config } from '../src/config.ts';
import { createHttpServer } from '../src/http/server.ts';
import { loadTrustedDocuments, sha256Hex } from '../src/http/trusted-documents.ts';

const APP_ORIGIN = 'https://app.example';
const OTHER_ORIGIN = 'https://evil.example';
const SITE_TITLE_DOC = 'query SiteTitle($id: ID!) { site(id: $id) { id title } }';

let t: TestApp;
let ORG: string;
let dir: string;
/** The same gateway (same database) under other configurations: no CORS at all, and `*` with trusted documents only. */
let closedUrl: string;
let starUrl: string;
const extraServers: http.Server[] = [];

async function serveWith(overrides: Partial<Config>): Promise<string> {
  const { prisma, clock, log, services, schema, rest, obs } = t.app;
  const server = createHttpServer({ prisma, clock, log, services, schema, rest, obs, config: { ...t.app.config, ...overrides } });
  extraServers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'docgraph-trusted-'));
  const file = path.join(dir, 'documents.json');
  fs.writeFileSync(file, JSON.stringify({ 'site-title': SITE_TITLE_DOC }));
  t = await startTestApp({ config: { cors: { origins: [APP_ORIGIN], credentials: true }, trustedDocuments: { mode: 'allow', file } } });
  ORG = `/v1/orgs/${t.org.id}`;
  closedUrl = await serveWith({ cors: { origins: [], credentials: false } });
  starUrl = await serveWith({ cors: { origins: '*', credentials: false }, trustedDocuments: { mode: 'only', file } });
});
afterAll(async () => {
  for (const s of extraServers) await new Promise((resolve) => s.close(resolve));
  await t?.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

type Raw = { status: number; headers: Headers; text: string; json: any };
async function call(url: string, init: { method?: string; headers?: Record<string, string>; body?: unknown; token?: string | null } = {}): Promise<Raw> {
  const token = init.token === undefined ? ADMIN_TOKEN : init.token;
  const res = await fetch(url, {
    method: init.method ?? 'GET',
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...init.headers,
    },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  const text = await res.text();
  let json: any;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
}
const preflight = (url: string, origin: string, method = 'GET', requestHeaders = 'authorization, content-type') =>
  call(url, { method: 'OPTIONS', token: null, headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': requestHeaders } });
const varyOf = (r: Raw) => (r.headers.get('vary') ?? '').toLowerCase().split(/\s*,\s*/);

describe('CORS', () => {
  it('answers a preflight from a listed origin 204, on /v1, /graphql and paths it does not serve', async () => {
    for (const p of [`${ORG}/sites`, '/graphql', '/files/anything', '/v1/no-such-route']) {
      const r = await preflight(`${t.baseUrl}${p}`, APP_ORIGIN, 'PATCH');
      expect(r.status, p).toBe(204);
      expect(r.text).toBe('');
      expect(r.headers.get('access-control-allow-origin'), p).toBe(APP_ORIGIN);
      expect(r.headers.get('access-control-allow-credentials')).toBe('true');
      expect(r.headers.get('access-control-allow-methods')).toMatch(/\bPATCH\b/);
      const allowHeaders = r.headers.get('access-control-allow-headers')!.toLowerCase();
      for (const h of ['authorization', 'content-type', 'x-request-id', 'if-none-match']) expect(allowHeaders).toContain(h);
      expect(Number(r.headers.get('access-control-max-age'))).toBeGreaterThan(0);
      expect(varyOf(r)).toContain('origin');
    }
  });

  it('gives an origin not listed a 204 preflight without any permission, and no CORS header on the real call', async () => {
    for (const p of [`${ORG}/sites`, '/graphql']) {
      const r = await preflight(`${t.baseUrl}${p}`, OTHER_ORIGIN, 'POST');
      expect(r.status).toBe(204);
      for (const h of ['access-control-allow-origin', 'access-control-allow-credentials', 'access-control-allow-methods', 'access-control-allow-headers']) expect(r.headers.get(h), `${p} ${h}`).toBeNull();
    }
    const rest = await call(`${t.baseUrl}${ORG}/sites`, { headers: { origin: OTHER_ORIGIN } });
    expect(rest.status).toBe(200);
    expect(rest.headers.get('access-control-allow-origin')).toBeNull();
    expect(varyOf(rest)).toContain('origin');
    const gql = await call(`${t.baseUrl}/graphql`, { method: 'POST', headers: { origin: OTHER_ORIGIN }, body: { query: '{ viewer { user { id } } }' } });
    expect(gql.status).toBe(200);
    expect(gql.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('lets a listed origin read REST and GraphQL answers, errors included, and the headers it needs', async () => {
    const answers = [
      await call(`${t.baseUrl}${ORG}/sites`, { headers: { origin: APP_ORIGIN } }),
      await call(`${t.baseUrl}${ORG}/sites/site_missing`, { headers: { origin: APP_ORIGIN } }),
      await call(`${t.baseUrl}${ORG}/sites`, { headers: { origin: APP_ORIGIN }, token: null }),
      await call(`${t.baseUrl}/graphql`, { method: 'POST', headers: { origin: APP_ORIGIN }, body: { query: '{ viewer { user { id } } }' } }),
      await call(`${t.baseUrl}/graphql?query=${encodeURIComponent('{ viewer { user { id } } }')}`, { headers: { origin: APP_ORIGIN } }),
    ];
    expect(answers.map((r) => r.status)).toEqual([200, 404, 401, 200, 200]);
    for (const r of answers) {
      expect(r.headers.get('access-control-allow-origin')).toBe(APP_ORIGIN);
      expect(r.headers.get('access-control-allow-credentials')).toBe('true');
      const exposed = r.headers.get('access-control-expose-headers')!.toLowerCase();
      for (const h of ['etag', 'x-request-id', 'x-ratelimit-remaining', 'retry-after', 'location']) expect(exposed).toContain(h);
      expect(varyOf(r)).toContain('origin');
    }
    // Compression's Vary survives next to the CORS one.
    for (const i of [0, 1, 4]) expect(varyOf(answers[i]), `answer ${i}`).toContain('accept-encoding');
  });

  it('with CORS_ORIGINS=*, any origin may call, never with credentials', async () => {
    const pre = await preflight(`${starUrl}${ORG}/sites`, OTHER_ORIGIN, 'DELETE');
    expect(pre.status).toBe(204);
    expect(pre.headers.get('access-control-allow-origin')).toBe('*');
    expect(pre.headers.get('access-control-allow-credentials')).toBeNull();
    expect(pre.headers.get('access-control-allow-headers')).toMatch(/Authorization/);
    const r = await call(`${starUrl}${ORG}/sites`, { headers: { origin: OTHER_ORIGIN } });
    expect(r.status).toBe(200);
    expect(r.headers.get('access-control-allow-origin')).toBe('*');
    expect(r.headers.get('access-control-allow-credentials')).toBeNull();
    expect(() => loadConfig({ CORS_ORIGINS: '*', CORS_CREDENTIALS: 'true' })).toThrow(/CORS_CREDENTIALS/);
  });

  it('by default no origin gets cross-origin access, GraphQL included (yoga no longer reflects every origin)', async () => {
    expect(loadConfig({}).cors).toEqual({ origins: [], credentials: false });
    const pre = await preflight(`${closedUrl}/graphql`, APP_ORIGIN, 'POST');
    expect(pre.status).toBe(204);
    expect(pre.headers.get('access-control-allow-origin')).toBeNull();
    const gql = await call(`${closedUrl}/graphql`, { method: 'POST', headers: { origin: APP_ORIGIN }, body: { query: '{ viewer { user { id } } }' } });
    expect(gql.status).toBe(200);
    expect(gql.headers.get('access-control-allow-origin')).toBeNull();
    expect(gql.headers.get('access-control-allow-credentials')).toBeNull();
    const rest = await call(`${closedUrl}${ORG}/sites`, { headers: { origin: APP_ORIGIN } });
    expect(rest.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('refuses a CORS_ORIGINS entry that is not an origin', () => {
    expect(loadConfig({ CORS_ORIGINS: 'https://a.example, http://localhost:5173/' }).cors.origins).toEqual(['https://a.example', 'http://localhost:5173']);
    expect(() => loadConfig({ CORS_ORIGINS: 'https://a.example/app' })).toThrow(/CORS_ORIGINS/);
    expect(() => loadConfig({ CORS_ORIGINS: 'a.example' })).toThrow(/CORS_ORIGINS/);
  });
});

describe('conditional GET', () => {
  let siteId: string;
  let sectionId: string;
  let publishedPath: string;

  beforeAll(async () => {
    siteId = (await createSite(t, { title: 'Cached docs' })).id;
    const section = await t.client().orgs.addSectionToSite(t.org.id, siteId, { spaceId: await createSpace(t, 'Guides'), title: 'Guides' });
    sectionId = section.data.id;
    expect((await t.client().orgs.publishSite(t.org.id, siteId)).status).toBe(200);
    publishedPath = `${t.baseUrl}${ORG}/sites/${siteId}/published`;
  });

  it('tags the published site, answers 304 to a client that holds it, and a new tag after a change', async () => {
    const first = await call(publishedPath);
    expect(first.status).toBe(200);
    expectValidResponse('GET', '/orgs/{organizationId}/sites/{siteId}/published', 200, first.json);
    const etag = first.headers.get('etag')!;
    expect(etag).toMatch(/^W\/"[A-Za-z0-9_-]+"$/);
    expect(first.headers.get('cache-control')).toBe('private, no-cache');
    expect(varyOf(first)).toEqual(expect.arrayContaining(['authorization', 'accept-encoding', 'origin']));

    const again = await call(publishedPath, { headers: { 'if-none-match': etag } });
    expect(again.status).toBe(304);
    expect(again.text).toBe('');
    expect(again.headers.get('etag')).toBe(etag);
    expect(again.headers.get('cache-control')).toBe('private, no-cache');
    expect(varyOf(again)).toEqual(expect.arrayContaining(['authorization', 'accept-encoding']));
    // A list, the strong form of the same tag (weak comparison), and `*` all match.
    expect((await call(publishedPath, { headers: { 'if-none-match': `"nope", ${etag}` } })).status).toBe(304);
    expect((await call(publishedPath, { headers: { 'if-none-match': etag.slice(2) } })).status).toBe(304);
    expect((await call(publishedPath, { headers: { 'if-none-match': '*' } })).status).toBe(304);
    expect((await call(publishedPath, { headers: { 'if-none-match': 'W/"other"' } })).status).toBe(200);

    const renamed = await call(`${t.baseUrl}${ORG}/sites/${siteId}/sections/${sectionId}`, { method: 'PATCH', body: { title: 'Handbook' } });
    expect(renamed.status).toBe(200);
    expect(renamed.headers.get('etag')).toBeNull();
    const changed = await call(publishedPath, { headers: { 'if-none-match': etag } });
    expect(changed.status).toBe(200);
    expect(changed.headers.get('etag')).not.toBe(etag);
    expect(JSON.stringify(changed.json)).toContain('Handbook');
    expect((await call(publishedPath, { headers: { 'if-none-match': changed.headers.get('etag')! } })).status).toBe(304);
  });

  it('HEAD carries the same tag without a body; errors and non-GET answers carry none', async () => {
    const get = await call(publishedPath);
    const head = await call(publishedPath, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.text).toBe('');
    expect(head.headers.get('etag')).toBe(get.headers.get('etag'));
    expect((await call(publishedPath, { method: 'HEAD', headers: { 'if-none-match': get.headers.get('etag')! } })).status).toBe(304);

    const missing = await call(`${t.baseUrl}${ORG}/sites/site_missing/published`);
    expect(missing.status).toBe(404);
    expect(missing.headers.get('etag')).toBeNull();
    const created = await call(`${t.baseUrl}${ORG}/spaces`, { method: 'POST', body: { title: 'Fresh' } });
    expect(created.status).toBe(201);
    expect(created.headers.get('etag')).toBeNull();
  });

  it('tags GraphQL GET queries, not POSTs nor results with errors, and a mutation changes the tag', async () => {
    const url = (q: string, variables?: unknown) => `${t.baseUrl}/graphql?query=${encodeURIComponent(q)}${variables ? `&variables=${encodeURIComponent(JSON.stringify(variables))}` : ''}`;
    const q = url('query($id: ID!) { site(id: $id) { title } }', { id: siteId });
    const first = await call(q);
    expect(first.status).toBe(200);
    expect(first.json.data.site.title).toBe('Cached docs');
    const etag = first.headers.get('etag')!;
    expect(etag).toMatch(/^W\//);
    expect(first.headers.get('cache-control')).toBe('private, no-cache');
    expect(varyOf(first)).toEqual(expect.arrayContaining(['authorization', 'accept-encoding', 'origin']));
    const again = await call(q, { headers: { 'if-none-match': etag } });
    expect(again.status).toBe(304);
    expect(again.text).toBe('');
    expect(again.headers.get('etag')).toBe(etag);
    const head = await call(q, { method: 'HEAD', headers: { 'if-none-match': etag } });
    expect(head.status).toBe(304);

    const update = await t.rest('PATCH', `${ORG}/sites/${siteId}`, { title: 'Renamed docs' });
    expect(update.status).toBe(200);
    const after = await call(q, { headers: { 'if-none-match': etag } });
    expect(after.status).toBe(200);
    expect(after.json.data.site.title).toBe('Renamed docs');
    expect(after.headers.get('etag')).not.toBe(etag);

    const post = await call(`${t.baseUrl}/graphql`, { method: 'POST', body: { query: 'query($id: ID!) { site(id: $id) { title } }', variables: { id: siteId } } });
    expect(post.status).toBe(200);
    expect(post.headers.get('etag')).toBeNull();
    const partial = await call(url('query($id: ID!) { site(id: $id) { title } }', { id: 'site_missing' }));
    expect(partial.json.errors?.length).toBeGreaterThan(0);
    expect(partial.headers.get('etag')).toBeNull();
    // A validation error: 200 with `errors` under application/json (graphql-over-http.test.ts).
    const invalid = await call(url('{ noSuchField }'));
    expect(invalid.status).toBe(200);
    expect(invalid.json.errors[0].extensions.code).toBe('BAD_REQUEST');
    expect(invalid.headers.get('etag')).toBeNull();
  });

  it('one tag whatever the compression: the tag names the uncompressed JSON', async () => {
    // Introspection of every type is well over the compression threshold.
    const q = `${t.baseUrl}/graphql?query=${encodeURIComponent('{ __schema { types { name description fields { name description } } } }')}`;
    const plain = await call(q, { headers: { 'accept-encoding': 'identity' } });
    const gz = await call(q, { headers: { 'accept-encoding': 'gzip' } });
    expect(plain.headers.get('content-encoding')).toBeNull();
    expect(gz.headers.get('content-encoding')).toBe('gzip');
    expect(gz.text).toBe(plain.text);
    expect(gz.headers.get('etag')).toBe(plain.headers.get('etag'));
    const cached = await call(q, { headers: { 'accept-encoding': 'br', 'if-none-match': plain.headers.get('etag')! } });
    expect(cached.status).toBe(304);
    expect(cached.headers.get('content-encoding')).toBeNull();
  });
});

describe('trusted documents', () => {
  const persisted = (hash: string) => ({ persistedQuery: { version: 1, sha256Hash: hash } });

  it('runs a document sent by its sha256 (APQ shape) or its id, by POST and by GET', async () => {
    const siteId = (await createSite(t, { title: 'By hash' })).id;
    const byHash = await call(`${t.baseUrl}/graphql`, { method: 'POST', body: { variables: { id: siteId }, extensions: persisted(sha256Hex(SITE_TITLE_DOC)) } });
    expect(byHash.status).toBe(200);
    expect(byHash.json.data.site).toEqual({ id: siteId, title: 'By hash' });
    const byId = await call(`${t.baseUrl}/graphql`, { method: 'POST', body: { documentId: 'site-title', variables: { id: siteId } } });
    expect(byId.json.data.site.title).toBe('By hash');
    const get = await call(`${t.baseUrl}/graphql?documentId=site-title&variables=${encodeURIComponent(JSON.stringify({ id: siteId }))}`);
    expect(get.json.data.site.title).toBe('By hash');
    expect(get.headers.get('etag')).toMatch(/^W\//);
    // The REST shim's documents are trusted too: the published view, by the hash of the route's document.
    const route = t.app.rest.routes.find((r) => r.method === 'GET' && r.path.endsWith('/sites/:siteId/published'))!;
    const published = await call(`${t.baseUrl}/graphql`, { method: 'POST', body: { variables: { id: siteId, org: t.org.id }, extensions: persisted(sha256Hex(route.document)) } });
    expect(published.status).toBe(200);
    expect(published.json.data.publishedSite.title).toBe('By hash');
  });

  it('serves the manifest of known documents (sha256 → text), REST documents included', async () => {
    const r = await call(`${t.baseUrl}/graphql/documents.json`, { token: null });
    expect(r.status).toBe(200);
    expect(r.json[sha256Hex(SITE_TITLE_DOC)]).toBe(SITE_TITLE_DOC);
    for (const [hash, text] of Object.entries(r.json as Record<string, string>)) expect(sha256Hex(text)).toBe(hash);
    for (const route of t.app.rest.routes) expect(r.json[sha256Hex(route.document)]).toBe(route.document);
    expect(r.headers.get('etag')).toMatch(/^W\//);
  });

  it('names an unknown id clearly (PERSISTED_QUERY_NOT_FOUND), in either mode', async () => {
    // A request error: 200 with `errors` under application/json (what Apollo's APQ link reads), 400 under application/graphql-response+json.
    for (const base of [t.baseUrl, starUrl]) {
      const r = await call(`${base}/graphql`, { method: 'POST', body: { extensions: persisted('0'.repeat(64)) } });
      expect(r.status).toBe(200);
      expect(r.json.errors[0].extensions.code).toBe('PERSISTED_QUERY_NOT_FOUND');
      expect(r.json.errors[0].message).toContain('0'.repeat(64));
      const strict = await call(`${base}/graphql`, { method: 'POST', body: { extensions: persisted('0'.repeat(64)) }, headers: { accept: 'application/graphql-response+json' } });
      expect(strict.status).toBe(400);
    }
    // Neither a document nor an id: not a well-formed request, 400 whatever the client accepts.
    const nothing = await call(`${t.baseUrl}/graphql`, { method: 'POST', body: { variables: {} } });
    expect(nothing.status).toBe(400);
    expect(nothing.json.errors[0].extensions.code).toBe('BAD_REQUEST');
  });

  it('in `only` mode refuses arbitrary text but runs known documents and introspection', async () => {
    const siteId = (await createSite(t, { title: 'Only' })).id;
    const text = await call(`${starUrl}/graphql`, { method: 'POST', body: { query: 'query($id: ID!) { site(id: $id) { title } }', variables: { id: siteId } } });
    expect(text.status).toBe(200); // a request error under application/json
    expect(text.json.errors[0].extensions.code).toBe('PERSISTED_QUERY_ONLY');
    expect(text.json.data).toBeUndefined();
    const viaGet = await call(`${starUrl}/graphql?query=${encodeURIComponent('{ viewer { user { id } } }')}`);
    expect(viaGet.status).toBe(200);
    expect(viaGet.json.errors[0].extensions.code).toBe('PERSISTED_QUERY_ONLY');

    const known = await call(`${starUrl}/graphql`, { method: 'POST', body: { variables: { id: siteId }, extensions: persisted(sha256Hex(SITE_TITLE_DOC)) } });
    expect(known.status).toBe(200);
    expect(known.json.data.site.title).toBe('Only');
    // The text of a known document is that document.
    const knownText = await call(`${starUrl}/graphql`, { method: 'POST', body: { query: SITE_TITLE_DOC, variables: { id: siteId } } });
    expect(knownText.json.data.site.title).toBe('Only');
    // GraphiQL's Docs pane keeps working: introspection reads only the schema.
    const intro = await call(`${starUrl}/graphql`, { method: 'POST', token: null, body: { query: '{ __schema { queryType { name } } }' } });
    expect(intro.status).toBe(200);
    expect(intro.json.data.__schema.queryType.name).toBe('Query');
  });

  it('refuses to start on a documents file that does not validate, naming the entry', () => {
    const bad = path.join(dir, 'bad.json');
    fs.writeFileSync(bad, JSON.stringify({ good: SITE_TITLE_DOC, broken: '{ noSuchField }' }));
    expect(() => loadTrustedDocuments(t.app.schema, [], { mode: 'allow', file: bad })).toThrow(/"broken".*noSuchField/);
    fs.writeFileSync(bad, '[1, 2]');
    expect(() => loadTrustedDocuments(t.app.schema, [], { mode: 'only', file: bad })).toThrow(/TRUSTED_DOCUMENTS_FILE/);
  });
});
