// GET /v1/openapi.json: the OpenAPI document of the REST shim, generated at start-up from the
// route table (src/rest/openapi-document.ts). Checked against the table itself and the official
// 0.130.0 document, so a new route is described without anyone writing a test for it.
import fs from 'node:fs';
import SwaggerParser from '@apidevtools/swagger-parser';
import Ajv from 'ajv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { schema } from '../src/graphql/schema.ts';
import { buildRestRouter } from '../src/rest/index.ts';
import { buildOpenApiDocument } from '../src/rest/openapi-document.ts';
import { startTestApp, type TestApp } from './helpers.ts';

const ROUTES = buildRestRouter(schema).routes;
const OFFICIAL = JSON.parse(fs.readFileSync('node_modules/@gitbook/api/spec/openapi.json', 'utf8')) as {
  paths: Record<string, Record<string, { operationId?: string; summary?: string }>>;
};
const PKG = JSON.parse(fs.readFileSync('package.json', 'utf8')) as { version: string };

/** A path with its parameters blanked: `/v1/orgs/:organizationId` and `/orgs/{id}` both → `/orgs/{}`. */
const shape = (p: string) => p.replace(/^\/v1(?=\/)/, '').replace(/:\w+/g, '{}').replace(/\{[^}]+\}/g, '{}');
const OFFICIAL_OPS = new Map(
  Object.entries(OFFICIAL.paths).flatMap(([p, item]) => Object.entries(item).map(([m, op]) => [`${m.toUpperCase()} ${shape(p)}`, op] as const)),
);
const routeKey = (method: string, path: string) => `${method.toUpperCase()} ${path.replace(/:(\w+)/g, '{$1}')}`;
const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

let t: TestApp;
let doc: any;
/** `METHOD /v1/path/{param}` → operation, for every operation of the served document. */
let ops: Map<string, any>;

beforeAll(async () => {
  t = await startTestApp();
  const r = await t.rest('GET', '/v1/openapi.json', undefined, null);
  expect(r.status, r.text).toBe(200);
  doc = r.body;
  ops = new Map();
  for (const [p, item] of Object.entries<any>(doc.paths)) {
    for (const [m, op] of Object.entries<any>(item)) if (HTTP_METHODS.includes(m)) ops.set(`${m.toUpperCase()} ${p}`, op);
  }
}, 60_000);
afterAll(async () => {
  await t?.close();
});

describe('GET /v1/openapi.json', () => {
  it('is public JSON, the same on every call', async () => {
    const a = await t.rest('GET', '/v1/openapi.json', undefined, null);
    const b = await t.rest('GET', '/v1/openapi.json', undefined, null);
    expect(a.status).toBe(200);
    expect(a.headers.get('content-type')).toMatch(/^application\/json/);
    expect(b.text).toBe(a.text);
    // A token changes nothing either: the document describes the API, not anyone's data.
    expect((await t.rest('GET', '/v1/openapi.json')).text).toBe(a.text);
    const head = await fetch(`${t.baseUrl}/v1/openapi.json`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    const post = await t.rest('POST', '/v1/openapi.json', {}, null);
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
    expect(post.body).toEqual({ error: { code: 405, message: expect.any(String) } });
  });

  it('validates as OpenAPI 3.0, every $ref resolving', async () => {
    expect(doc.openapi).toMatch(/^3\.0\./);
    expect(doc.info).toMatchObject({ title: 'docgraph', version: PKG.version });
    expect(doc.servers).toEqual([{ url: '/' }]);
    expect(doc.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(doc.security).toEqual([{ bearer: [] }]);
    // SwaggerParser dereferences in place: it gets a copy.
    await expect(SwaggerParser.validate(structuredClone(doc))).resolves.toBeTruthy();
  });

  it('describes every route of the table exactly once, and nothing else', () => {
    const routeKeys = ROUTES.map((r) => routeKey(r.method, r.path));
    expect(new Set(routeKeys).size, 'the table has no duplicate rows').toBe(routeKeys.length);
    expect([...ops.keys()].sort()).toEqual([...routeKeys].sort());
    // Once also by shape: no second spelling of a route's path (parameter names, trailing slash).
    const shapes = [...ops.keys()].map((k) => shape(k));
    expect(new Set(shapes).size).toBe(shapes.length);
  });

  it('keeps the official operationId and summary of every operation the official document has', () => {
    let shared = 0;
    for (const route of ROUTES) {
      const official = OFFICIAL_OPS.get(`${route.method} ${shape(route.path)}`);
      if (!official) continue;
      shared++;
      const op = ops.get(routeKey(route.method, route.path));
      expect(op.operationId, `${route.method} ${route.path}`).toBe(official.operationId);
      if (official.summary) expect(op.summary).toBe(official.summary);
      expect(op['x-docgraph-extension'], `${route.method} ${route.path} is in the contract`).toBeUndefined();
    }
    expect(shared).toBeGreaterThan(100);
    // And its response schemas, with the components they reference.
    const members = ops.get('GET /v1/orgs/{organizationId}/members');
    expect(JSON.stringify(members.responses['200'])).toContain('#/components/schemas/OrganizationMember');
    expect(doc.components.schemas.OrganizationMember).toBeTruthy();
  });

  it('marks the routes the official document lacks as docgraph extensions', () => {
    const extensions = ROUTES.filter((r) => !OFFICIAL_OPS.has(`${r.method} ${shape(r.path)}`)).map((r) => routeKey(r.method, r.path));
    expect(extensions).toContain('POST /v1/spaces/{spaceId}/content');
    const marked = [...ops].filter(([, op]) => op['x-docgraph-extension'] === true).map(([k]) => k);
    expect(marked.sort()).toEqual(extensions.sort());
    const ids = [...ops.values()].map((op) => op.operationId);
    expect(new Set(ids).size, 'operationIds are unique').toBe(ids.length);
    for (const key of extensions) {
      const op = ops.get(key);
      expect(op.tags, key).toEqual(['docgraph extensions']);
      expect(op.operationId, key).toMatch(/^[a-z]\w+$/);
      const success = Object.keys(op.responses).filter((s) => /^2/.test(s));
      expect(success.length, `${key} has a success response`).toBe(1);
    }
    expect(doc.tags).toContainEqual(expect.objectContaining({ name: 'docgraph extensions' }));
    // The space content batch answers the shape its row declares.
    const batch = ops.get('POST /v1/spaces/{spaceId}/content');
    expect(batch.operationId).toBe('updateSpaceContent');
    expect(batch.responses['200'].content['application/json'].schema.required).toEqual(expect.arrayContaining(['object', 'revision', 'changes', 'insertedFiles']));
  });

  it('describes a new row without its own `openapi` field: derived operationId, a generic answer', () => {
    const row = { method: 'GET' as const, path: '/v1/orgs/:organizationId/widgets/:teamId', document: '{ __typename }', variables: () => ({}) };
    const built = buildOpenApiDocument([...ROUTES, row]);
    const op = built.paths['/v1/orgs/{organizationId}/widgets/{teamId}'].get;
    expect(op).toMatchObject({ operationId: 'getOrgsWidgetsById', 'x-docgraph-extension': true, tags: ['docgraph extensions'] });
    expect(op.responses['200'].content['application/json'].schema).toEqual({ type: 'object', additionalProperties: true });
    expect(op.parameters.map((p: any) => p.name)).toEqual(['organizationId', 'teamId']);
    // A row the generator cannot describe stops the start-up, not a client later.
    const clash = { ...row, path: '/v1/orgs/:organizationId/gadgets', openapi: { operationId: 'listMembersInOrganizationById' } };
    expect(() => buildOpenApiDocument([...ROUTES, clash])).toThrow(/reuses the official operationId/);
  });

  it('takes request bodies and query parameters from the routes’ schemas', async () => {
    const create = ops.get('POST /v1/orgs/{organizationId}/openapi');
    const body = create.requestBody.content['application/json'].schema;
    expect(create.requestBody.required).toBe(true);
    expect(body.required).toEqual(expect.arrayContaining(['slug', 'source']));
    // What the document says is what the route does: without `slug`, a 400 naming it.
    const missing = await t.rest('POST', `/v1/orgs/${t.org.id}/openapi`, { source: { url: 'https://example.com/spec.yaml' } });
    expect(missing.status, missing.text).toBe(400);
    expect(missing.body.error.message).toMatch(/\bslug\b/);

    // Query parameters as the client sends them (strings), with their constraints.
    const list = ops.get('GET /v1/orgs/{organizationId}/members');
    const params = Object.fromEntries(list.parameters.map((p: any) => [`${p.in}:${p.name}`, p]));
    expect(params['query:limit']).toMatchObject({ required: false, schema: { type: 'integer', minimum: 0, maximum: 1000 } });
    expect(params['query:page']).toMatchObject({ required: false, schema: { type: 'string' } });
    const search = ops.get('GET /v1/orgs/{organizationId}/search');
    expect(search.parameters.find((p: any) => p.name === 'query')).toMatchObject({ in: 'query', required: true });

    // Path parameters carry the id shape the router checks: a real id matches, a foreign one not.
    const org = params['path:organizationId'];
    expect(org).toMatchObject({ required: true, schema: { type: 'string' } });
    const pattern = new RegExp(org.schema.pattern);
    expect(pattern.test(t.org.id)).toBe(true);
    expect(pattern.test('space_abc')).toBe(false);
  });

  it('documents the contract’s error responses on every operation, matching what the server sends', async () => {
    for (const [key, op] of ops) {
      for (const status of ['400', '401', '403', '404', '429', '503']) expect(op.responses[status], `${key} ${status}`).toBeTruthy();
    }
    const ajv = new Ajv({ strict: false });
    ajv.addFormat('int32', true);
    const unauthorized = doc.components.responses.UnauthorizedError.content['application/json'].schema;
    const r = await t.rest('GET', `/v1/orgs/${t.org.id}/members`, undefined, null);
    expect(r.status).toBe(401);
    expect(ajv.validate(unauthorized, r.body), JSON.stringify(ajv.errors)).toBe(true);
    expect(doc.components.responses.TooManyRequestsError.headers['Retry-After']).toBeTruthy();
  });
});
