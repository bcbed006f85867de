// Rules every REST route must keep, checked by iterating the route table itself: a new route
// that misses one fails here without anyone writing a test for it. Path parameters are filled
// with real ids of objects the admin can see (test/fixtures/route-fixture.ts).
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { schema } from '../src/graphql/schema.ts';
import { buildRestRouter, } from '../src/rest/index.ts';
import type { RestRoute } from '../src/rest/router.ts';
import { startTestApp, type TestApp } from './helpers.ts';
import { buildRouteFixture, type RouteFixture } from './fixtures/route-fixture.ts';

const ROUTES = buildRestRouter(schema).routes;

/** The official document (0.130.0); paths there are without the `/v1` prefix. */
const OFFICIAL = JSON.parse(fs.readFileSync('node_modules/@gitbook/api/spec/openapi.json', 'utf8')) as { paths: Record<string, Record<string, unknown>> };
const shapeOf = (p: string) => p.replace(/\{[^}]+\}/g, '{}');
const OFFICIAL_OPS = new Set(Object.entries(OFFICIAL.paths).flatMap(([p, item]) => Object.keys(item).map((m) => `${m.toUpperCase()} ${shapeOf(p)}`)));

/**
 * Operations the project serves beyond the official 0.130.0 document, on purpose (each is in
 * docs/decisions.md): the content batch edit of a space and of a change request (the
 * platform's newer `POST …/content` operation, in the 0.202.0 document).
 */
const DOCUMENTED_EXTENSIONS = new Set([
  'POST /v1/spaces/:spaceId/content',
  'POST /v1/spaces/:spaceId/change-requests/:changeRequestId/content',
  // A site space's and a section's `urls.location` must resolve; neither official document has these GETs.
  'GET /v1/orgs/:organizationId/sites/:siteId/site-spaces/:siteSpaceId',
  'GET /v1/orgs/:organizationId/sites/:siteId/sections/:siteSectionId',
  // The organization audit log, as the newer 0.202.0 document defines it (listOrganizationAuditEvents, getOrganizationAuditEvent).
  'GET /v1/orgs/:organizationId/audit-events',
  'GET /v1/orgs/:organizationId/audit-events/:auditEventId',
  // Signed webhooks: registration, deliveries, redelivery, secret rotation.
  'GET /v1/orgs/:organizationId/webhooks',
  'POST /v1/orgs/:organizationId/webhooks',
  'GET /v1/orgs/:organizationId/webhooks/:webhookId',
  'PATCH /v1/orgs/:organizationId/webhooks/:webhookId',
  'DELETE /v1/orgs/:organizationId/webhooks/:webhookId',
  'GET /v1/orgs/:organizationId/webhooks/:webhookId/deliveries',
  'POST /v1/orgs/:organizationId/webhooks/:webhookId/deliveries/:deliveryId/redeliver',
  'POST /v1/orgs/:organizationId/webhooks/:webhookId/rotate-secret',
  // Where a 202 from an import points: the newer 0.202.0 document's import run (getImportRun).
  'GET /v1/org/:organizationId/imports/:importRunId',
  // Starting a change request's PDF export (the contract's GET does not write for readers).
  'POST /v1/spaces/:spaceId/change-requests/:changeRequestId/pdf',
  // A site's visitor public key: the owner's RS256/ES256 key beside the official HS256 secret.
  'PUT /v1/orgs/:organizationId/sites/:siteId/publishing/auth/public-key',
  'DELETE /v1/orgs/:organizationId/sites/:siteId/publishing/auth/public-key',
  // Bulk upsert of site redirects, as the newer 0.202.0 document defines it (bulkUpsertSiteRedirects; live redirects only).
  'PUT /v1/orgs/:organizationId/sites/:siteId/redirects',
]);

/** Lists whose contract bounds `limit` otherwise than 0–1000: the audit log takes 1–100. */
const LIMIT_RANGES: Record<string, readonly [number, number]> = { 'GET /v1/orgs/:organizationId/audit-events': [1, 100] };

/** Keys a route's query schema accepts, and those it requires. */
function queryKeys(route: RestRoute): { keys: string[]; required: string[] } {
  if (!route.query) return { keys: [], required: [] };
  const json = z.toJSONSchema(route.query as z.ZodType, { io: 'input', unrepresentable: 'any' }) as { properties?: Record<string, unknown>; required?: string[] };
  return { keys: Object.keys(json.properties ?? {}), required: json.required ?? [] };
}

/** A list: its query takes a cursor (`page`) and a page size (`limit`). */
const isList = (route: RestRoute) => {
  const { keys } = queryKeys(route);
  return keys.includes('page') && keys.includes('limit');
};

/** Values for the query keys some routes require. */
const REQUIRED_VALUES: Record<string, string> = { query: 'guide' };

let t: TestApp;
let fx: RouteFixture;
/** Valid `next.page` cursors of two lists of different kinds (teams, sites). */
let teamsCursor: string;
let sitesCursor: string;

beforeAll(async () => {
  t = await startTestApp({ worker: true });
  fx = await buildRouteFixture(t);
  const teams = await t.rest('GET', `/v1/orgs/${t.org.id}/teams?limit=1`);
  const sites = await t.rest('GET', `/v1/orgs/${t.org.id}/sites?limit=1`);
  teamsCursor = teams.body?.next?.page;
  sitesCursor = sites.body?.next?.page;
  expect(teamsCursor, 'a second page of teams').toBeTruthy();
  expect(sitesCursor, 'a second page of sites').toBeTruthy();
}, 60_000);
afterAll(async () => {
  await t?.close();
});

/** The contract's error body, with the status and (when given) the field it names. */
function expectError(r: { status: number; body: any; text: string }, status: number, field?: string) {
  expect(r.status, r.text).toBe(status);
  expect(r.body, r.text).toEqual({ error: { code: status, message: expect.any(String) } });
  if (field) expect(r.body.error.message, r.text).toMatch(new RegExp(`(^|[^\\w])${field}([^\\w]|$)`));
}

function url(route: RestRoute, query: Record<string, string> = {}) {
  const { required } = queryKeys(route);
  const sp = new URLSearchParams();
  for (const k of required) sp.set(k, REQUIRED_VALUES[k] ?? 'x');
  for (const [k, v] of Object.entries(query)) sp.set(k, v);
  const qs = sp.toString();
  return `${fx.fill(route.path)}${qs ? `?${qs}` : ''}`;
}

const routeName = (r: RestRoute) => `${r.method} ${r.path}`;

/** Bodies of the lists read with POST (a search with its query in the body). */
const LIST_BODIES: Record<string, unknown> = { 'POST /v1/orgs/:organizationId/sites/:siteId/search': { query: 'guide' } };
/** One page of a list route, with its method (and body when it takes one). */
const listPage = (route: RestRoute, query: Record<string, string>) => t.rest(route.method, url(route, query), LIST_BODIES[routeName(route)]);

it('the route table has routes and lists to check', () => {
  expect(ROUTES.length).toBeGreaterThan(100);
  expect(ROUTES.filter(isList).length).toBeGreaterThanOrEqual(30);
});

describe.each(ROUTES.map((r) => [routeName(r), r] as const))('%s', (_name, route) => {
  it('is an operation of the official document (or a documented extension)', () => {
    const op = `${route.method} ${shapeOf(route.path.replace(/^\/v1/, '').replace(/:(\w+)/g, '{$1}'))}`;
    if (DOCUMENTED_EXTENSIONS.has(routeName(route))) return;
    expect(OFFICIAL_OPS.has(op), `${op} is not in @gitbook/api's openapi.json`).toBe(true);
  });

  it('answers 401 without a token (a published read: runs as the anonymous reader)', async () => {
    const r = await t.rest(route.method, url(route), route.body ? {} : undefined, null);
    // A published read runs as the anonymous reader: the route's made-up ids name nothing (404), or its
    // empty input is refused (400 naming the field) — never 401 (test/anonymous-reads.test.ts reads real sites).
    if (route.published) expectError(r, r.status === 400 ? 400 : 404);
    else expectError(r, 401);
  });

  it('refuses an unknown query key with a 400 naming it', async () => {
    const r = await t.rest(route.method, url(route, { unknownKeyXyz: '1' }), route.body ? {} : undefined);
    expectError(r, 400, 'unknownKeyXyz');
  });

  if (!isList(route)) return;

  const [minLimit, maxLimit] = LIMIT_RANGES[routeName(route)] ?? [0, 1000];
  it.each([...new Set([String(minLimit), '1', String(maxLimit)])])('answers 200 at limit=%s', async (limit) => {
    const r = await listPage(route, { limit });
    expect(r.status, r.text).toBe(200);
    expect(Array.isArray(r.body.items), r.text).toBe(true);
    expect(r.body.items.length).toBeLessThanOrEqual(Number(limit));
    if (limit === '0') expect(r.body.items).toEqual([]);
  });

  it.each([String(maxLimit + 1), String(minLimit - 1), 'abc', '1.5'])('answers 400 naming limit at limit=%s', async (limit) => {
    expectError(await listPage(route, { limit }), 400, 'limit');
  });

  it('answers 400 naming page for a garbage cursor', async () => {
    expectError(await listPage(route, { page: 'garbage' }), 400, 'page');
  });

  it('answers 400 naming page for a cursor of another list', async () => {
    const foreign = /\/teams$/.test(route.path) ? sitesCursor : teamsCursor;
    expectError(await listPage(route, { page: foreign }), 400, 'page');
  });

  it('answers 400 naming page for a truncated cursor', async () => {
    // The list's own cursor when it has a second page, else another list's.
    const first = await listPage(route, { limit: '1' });
    const own: string | undefined = first.body?.next?.page;
    const cursor = own ?? (/\/teams$/.test(route.path) ? sitesCursor : teamsCursor);
    expectError(await listPage(route, { page: cursor.slice(0, Math.ceil(cursor.length / 2)) }), 400, 'page');
  });
});

describe('input hygiene at the edge', () => {
  const orgTitle = async () => (await t.app.prisma.organization.findUniqueOrThrow({ where: { id: t.org.id } })).title;

  it('a NUL or control character in a JSON body is a 400 naming the field, and nothing changes', async () => {
    const before = await orgTitle();
    for (const [body, field] of [
      [{ title: 'Acme\u0000' }, 'title'],
      [{ title: 'Acme\u0007bell' }, 'title'],
      [{ defaultContent: { type: 'x\u001b' } }, 'defaultContent.type'],
    ] as const) {
      const r = await t.rest('PATCH', `/v1/orgs/${t.org.id}`, body);
      expectError(r, 400, field);
      expect(r.body.error.message).toMatch(/control character/);
    }
    const revision = async () => (await t.app.prisma.space.findUniqueOrThrow({ where: { id: fx.space.id } })).revisionId;
    const revBefore = await revision();
    const nested = await t.rest('POST', `/v1/spaces/${fx.space.id}/content`, {
      changes: [{ operation: 'insert_page', title: 'Fine', document: { markdown: 'ok' } }, { operation: 'insert_page', title: 'Bad\u0000', document: { markdown: 'x' } }],
    });
    expectError(nested, 400, 'changes.1.title');
    expect(await orgTitle()).toBe(before);
    expect(await revision()).toBe(revBefore);
  });

  it('tabs, newlines and carriage returns are ordinary text', async () => {
    const r = await t.rest('POST', `/v1/spaces/${fx.space.id}/comments`, { body: { markdown: 'line 1\r\n\tline 2\n' } });
    expect(r.status, r.text).toBe(200);
    expect(r.body.body.markdown).toBe('line 1\r\n\tline 2\n');
  });

  it('a NUL in a query value or key is a 400 naming the key', async () => {
    expectError(await t.rest('GET', `/v1/orgs/${t.org.id}/teams?title=a%00b`), 400, 'title');
    expectError(await t.rest('GET', `/v1/orgs/${t.org.id}/search?query=%00`), 400, 'query');
    const key = await t.rest('GET', `/v1/orgs/${t.org.id}/teams?ti%00tle=a`);
    expectError(key, 400);
  });

  it('unknown query keys are refused on routes without query parameters too', async () => {
    expectError(await t.rest('GET', `/v1/orgs/${t.org.id}?foo=1`), 400, 'foo');
    // A DELETE refused for its query string deletes nothing.
    expectError(await t.rest('DELETE', `/v1/orgs/${t.org.id}/teams/${fx.team2.id}?force=true`), 400, 'force');
    expect((await t.rest('GET', `/v1/orgs/${t.org.id}/teams/${fx.team2.id}`)).status).toBe(200);
  });

  it('a body that is not JSON by its content type is a 415 with the contract error body, and nothing changes', async () => {
    const before = await orgTitle();
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/xml']) {
      const res = await fetch(`${t.baseUrl}/v1/orgs/${t.org.id}`, {
        method: 'PATCH',
        headers: { authorization: `Bearer ${t.token}`, 'content-type': type },
        body: JSON.stringify({ title: 'Changed by form' }),
      });
      expect(res.status, type).toBe(415);
      expect(await res.json()).toEqual({ error: { code: 415, message: expect.stringContaining('application/json') } });
    }
    expect(await orgTitle()).toBe(before);
  });

  it('JSON content types (with parameters, +json) and a missing content type are accepted', async () => {
    for (const type of ['application/json; charset=utf-8', 'Application/JSON', 'application/merge-patch+json', undefined]) {
      const title = `Acme ${type ?? 'none'}`.slice(0, 40).replace(/[^\w ]/g, ' ');
      const res = await fetch(`${t.baseUrl}/v1/orgs/${t.org.id}`, {
        method: 'PATCH',
        headers: { authorization: `Bearer ${t.token}`, ...(type ? { 'content-type': type } : {}) },
        body: new TextEncoder().encode(JSON.stringify({ title })),
      });
      expect(res.status, `${type}: ${await res.clone().text()}`).toBe(200);
      expect((await res.json()).title).toBe(title);
    }
    // The official client sends application/json.
    const viaClient = await t.client().orgs.updateOrganizationById(t.org.id, { title: 'Acme' });
    expect(viaClient.status).toBe(200);
  });

  it('GraphQL: a NUL or control character in variables or literals is a BAD_REQUEST naming it, and nothing changes', async () => {
    const before = await orgTitle();
    const m = 'mutation($i: UpdateOrganizationInput!) { updateOrganization(input: $i) { organization { id } } }';
    const v = await t.gql(m, { i: { id: t.org.id, title: 'Acme\u0000' } });
    expect(v.status).toBe(200); // request errors under application/json: 200 with `errors` (GraphQL over HTTP)
    expect(v.errors?.[0].extensions).toMatchObject({ code: 'BAD_REQUEST', field: 'variables.i.title' });
    const lit = await t.gql(`mutation { updateOrganization(input: { id: "${t.org.id}", title: "Acme\\u0000" }) { organization { id } } }`);
    expect(lit.errors?.[0].extensions).toMatchObject({ code: 'BAD_REQUEST', field: 'input.title' });
    const bell = await t.gql(`{ node(id: "x\\u0007") { id } }`);
    expect(bell.errors?.[0].extensions).toMatchObject({ code: 'BAD_REQUEST', field: 'id' });
    // GET with variables in the query string.
    const res = await fetch(`${t.baseUrl}/graphql?query=${encodeURIComponent('query($id: ID!) { node(id: $id) { id } }')}&variables=${encodeURIComponent(JSON.stringify({ id: 'a\u0000' }))}`, {
      headers: { authorization: `Bearer ${t.token}` },
    });
    const json = await res.json();
    expect(res.status).toBe(200);
    expect(json.errors[0].extensions).toMatchObject({ code: 'BAD_REQUEST', field: 'variables.id' });
    expect(await orgTitle()).toBe(before);
  });
});
