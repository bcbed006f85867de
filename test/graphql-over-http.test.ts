// GraphQL over HTTP: the spec's own audit (graphql-http's `serverAudits`) against a live
// app, every MUST and SHOULD passing; request errors answer 200 with `errors` under
// `application/json` (what Apollo Client 3 and most clients accept) and 400 under
// `application/graphql-response+json`; the answer's type follows Accept (q-values included);
// transport-level statuses (401, 405) stay what they are under both; every 401 carries
// `WWW-Authenticate: Bearer` (RFC 6750), readable cross-origin.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serverAudits } from 'graphql-http';
import { startTestApp, ADMIN_TOKEN, type TestApp } from './helpers.ts';

let t: TestApp;
const ORIGIN = 'https://docs.example';
const GQL_RESPONSE = 'application/graphql-response+json';
const CHALLENGE = 'Bearer realm="docgraph"';
const INVALID_TOKEN_CHALLENGE = 'Bearer realm="docgraph", error="invalid_token"';

beforeAll(async () => {
  t = await startTestApp({ config: { cors: { origins: '*', credentials: false } } });
});
afterAll(async () => {
  await t?.close();
});

type Answer = { status: number; type: string; headers: Headers; json: any };

async function post(body: unknown, opts: { accept?: string; token?: string | null; raw?: string } = {}): Promise<Answer> {
  const token = opts.token === undefined ? ADMIN_TOKEN : opts.token;
  const res = await fetch(`${t.baseUrl}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(opts.accept ? { accept: opts.accept } : {}), ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: opts.raw ?? JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, type: res.headers.get('content-type') ?? '', headers: res.headers, json: text ? JSON.parse(text) : undefined };
}

async function get(params: Record<string, string>, opts: { accept?: string; token?: string | null } = {}): Promise<Answer> {
  const token = opts.token === undefined ? ADMIN_TOKEN : opts.token;
  const res = await fetch(`${t.baseUrl}/graphql?${new URLSearchParams(params)}`, {
    headers: { ...(opts.accept ? { accept: opts.accept } : {}), ...(token ? { authorization: `Bearer ${token}` } : {}) },
  });
  const text = await res.text();
  return { status: res.status, type: res.headers.get('content-type') ?? '', headers: res.headers, json: text ? JSON.parse(text) : undefined };
}

describe('the graphql-http audit', () => {
  it('passes every audit: MUST, SHOULD and MAY', async () => {
    // The audit sends no token: every request carries the admin's, as a signed-in front end does.
    const fetchFn = (input: RequestInfo | URL, init: RequestInit = {}) => {
      const headers = new Headers(init.headers);
      headers.set('authorization', `Bearer ${ADMIN_TOKEN}`);
      return fetch(input, { ...init, headers });
    };
    const results = [];
    for (const audit of serverAudits({ url: `${t.baseUrl}/graphql`, fetchFn })) results.push(await audit.fn());
    const failed = results.filter((r) => r.status !== 'ok').map((r) => `${r.id} ${r.name}: ${'reason' in r ? r.reason : ''}`);
    // graphql-http 1.23.1: 13 MUST, 23 SHOULD, 25 MAY.
    expect(results.filter((r) => /^(MUST|SHOULD) /.test(r.name)).length).toBeGreaterThanOrEqual(36);
    expect(failed).toEqual([]);
  });
});

describe('request errors follow the media type', () => {
  const cases = [
    ['a syntax error', { query: '{ viewer { user { id } ' }, /Syntax Error/],
    ['an unknown field', { query: '{ viewer { noSuchField } }' }, /noSuchField/],
    ['a variable of the wrong type', { query: 'query($id: ID!) { node(id: $id) { id } }', variables: { id: { not: 'an id' } } }, /cannot represent/],
    ['a missing variable', { query: 'query($id: ID!) { node(id: $id) { id } }' }, /\$id/],
  ] as const;

  it.each(cases)('%s: 200 with errors under application/json (and without Accept, and with */*)', async (_name, body, message) => {
    for (const accept of ['application/json', undefined, '*/*']) {
      const r = await post(body, { accept });
      expect(r.status, String(accept)).toBe(200);
      expect(r.type, String(accept)).toBe('application/json; charset=utf-8');
      expect(r.json.data, String(accept)).toBeUndefined();
      expect(r.json.errors, String(accept)).toHaveLength(1);
      expect(r.json.errors[0].extensions.code).toBe('BAD_REQUEST');
      expect(r.json.errors[0].message).toMatch(message);
    }
  });

  it.each(cases)('%s: 400 under application/graphql-response+json, without data', async (_name, body, message) => {
    const r = await post(body, { accept: GQL_RESPONSE });
    expect(r.status).toBe(400);
    expect(r.type).toBe(`${GQL_RESPONSE}; charset=utf-8`);
    expect(r.json).not.toHaveProperty('data');
    expect(r.json.errors[0]).toMatchObject({ message: expect.stringMatching(message), extensions: { code: 'BAD_REQUEST' } });
  });

  it('the same by GET, and a variable with a NUL byte (refused before anything runs) likewise', async () => {
    const params = { query: '{ viewer { noSuchField } }' };
    expect((await get(params, { accept: 'application/json' })).status).toBe(200);
    expect((await get(params, { accept: GQL_RESPONSE })).status).toBe(400);
    const nul = { query: 'query($id: ID!) { node(id: $id) { id } }', variables: { id: 'space_a\u0000b' } };
    const lenient = await post(nul, { accept: 'application/json' });
    expect(lenient.status).toBe(200);
    expect(lenient.json.errors[0].extensions).toMatchObject({ code: 'BAD_REQUEST', field: 'variables.id' });
    expect((await post(nul, { accept: GQL_RESPONSE })).status).toBe(400);
  });

  it('a request that is not well-formed (not JSON, variables not an object) is 400 under both', async () => {
    for (const accept of ['application/json', GQL_RESPONSE]) {
      const notJson = await post(undefined, { accept, raw: '{ "query": ' });
      expect(notJson.status, accept).toBe(400);
      const getNotJson = await get({ query: '{ viewer { user { id } } }', variables: '{nope' }, { accept });
      expect(getNotJson.status, accept).toBe(400);
      expect(getNotJson.type, accept).toBe(`${accept}; charset=utf-8`);
      expect(getNotJson.json.errors[0]).toMatchObject({ message: 'variables: not valid JSON', extensions: { code: 'BAD_REQUEST' } });
      expect((await post({ query: '{ viewer { user { id } } }', variables: [1] }, { accept })).status, accept).toBe(400);
      expect((await post({ query: '{ __typename }', operationName: 7 }, { accept })).status, accept).toBe(400);
    }
  });

  it('once execution began the answer is 200 under both, field errors included', async () => {
    for (const accept of ['application/json', GQL_RESPONSE]) {
      const r = await post({ query: '{ viewer { user { id } } space(id: "space_0000000000000000000000") { id } }' }, { accept });
      expect(r.status, accept).toBe(200);
      expect(r.type).toBe(`${accept}; charset=utf-8`);
      expect(r.json.errors.map((e: any) => e.extensions.code)).toEqual(['NOT_FOUND']);
    }
  });

  it('a `published`-scoped token outside published reads stays 403 under both', async () => {
    const created = await post({ query: 'mutation { createPublishedReadToken(input: { label: "front end" }) { token } }' });
    const scoped = created.json.data.createPublishedReadToken.token as string;
    for (const accept of ['application/json', GQL_RESPONSE]) {
      const r = await post({ query: '{ viewer { user { id } } }' }, { accept, token: scoped });
      expect(r.status, accept).toBe(403);
      expect(r.type).toBe(`${accept}; charset=utf-8`);
      expect(r.json.errors[0].extensions.code).toBe('FORBIDDEN');
      expect(r.headers.get('www-authenticate')).toBeNull();
    }
  });

  it('a mutation by GET stays 405 under both', async () => {
    for (const accept of ['application/json', GQL_RESPONSE]) {
      const r = await get({ query: 'mutation { __typename }' }, { accept });
      expect(r.status, accept).toBe(405);
    }
  });
});

describe('the answer\'s media type follows Accept', () => {
  const ok = { query: '{ viewer { user { id } } }' };
  it.each([
    [undefined, 'application/json'],
    ['*/*', 'application/json'],
    ['application/json', 'application/json'],
    ['application/*', 'application/json'],
    [GQL_RESPONSE, GQL_RESPONSE],
    // Apollo Client 4's default.
    [`${GQL_RESPONSE},application/json;q=0.9`, GQL_RESPONSE],
    // urql's default.
    [`${GQL_RESPONSE}, application/graphql+json, application/json, text/event-stream, multipart/mixed`, GQL_RESPONSE],
    [`application/json, ${GQL_RESPONSE}`, 'application/json'],
    // Preference by q, not by order.
    [`application/json;q=0.5, ${GQL_RESPONSE}`, GQL_RESPONSE],
    [`${GQL_RESPONSE};q=0.2, application/json`, 'application/json'],
  ])('Accept %s → %s', async (accept, type) => {
    const r = await post(ok, { accept });
    expect(r.status).toBe(200);
    expect(r.type).toBe(`${type}; charset=utf-8`);
    expect(r.json.data.viewer.user.id).toBe(t.adminUser.id);
    expect(r.headers.get('vary')?.toLowerCase()).toContain('accept');
  });
});

describe('401s carry WWW-Authenticate (RFC 6750)', () => {
  const viewer = { query: '{ viewer { user { id } } }' };

  it('GraphQL: no token → the bare challenge; a token that does not work → invalid_token; the body in the accepted type', async () => {
    for (const accept of ['application/json', GQL_RESPONSE]) {
      const none = await post(viewer, { accept, token: null });
      expect(none.status).toBe(401);
      expect(none.headers.get('www-authenticate')).toBe(CHALLENGE);
      expect(none.type).toBe(`${accept}; charset=utf-8`);
      expect(none.json.errors[0].extensions.code).toBe('UNAUTHENTICATED');
      const bad = await post(viewer, { accept, token: 'dg_not_a_token' });
      expect(bad.status).toBe(401);
      expect(bad.headers.get('www-authenticate')).toBe(INVALID_TOKEN_CHALLENGE);
      expect(bad.type).toBe(`${accept}; charset=utf-8`);
      // A body over the anonymous cap is refused before it is read: the same 401.
      const big = await post({ query: `{ viewer { user { id } } } # ${'x'.repeat(100_000)}` }, { accept, token: 'dg_not_a_token' });
      expect(big.status).toBe(401);
      expect(big.headers.get('www-authenticate')).toBe(INVALID_TOKEN_CHALLENGE);
      expect(big.type).toBe(`${accept}; charset=utf-8`);
      const byGet = await get(viewer, { accept, token: null });
      expect(byGet.status).toBe(401);
      expect(byGet.headers.get('www-authenticate')).toBe(CHALLENGE);
    }
  });

  it('REST and /files alike; a 200 or a 404 carries none', async () => {
    for (const path of ['/v1/user', `/v1/orgs/${t.org.id}/sites`, '/files/file_0000000000000000000000']) {
      const none = await fetch(`${t.baseUrl}${path}`);
      expect(none.status, path).toBe(401);
      expect(none.headers.get('www-authenticate'), path).toBe(CHALLENGE);
      const bad = await fetch(`${t.baseUrl}${path}`, { headers: { authorization: 'Bearer dg_not_a_token' } });
      expect(bad.status, path).toBe(401);
      expect(bad.headers.get('www-authenticate'), path).toBe(INVALID_TOKEN_CHALLENGE);
      // Another scheme is no bearer token: the bare challenge.
      const basic = await fetch(`${t.baseUrl}${path}`, { headers: { authorization: 'Basic dXNlcjpwYXNz' } });
      expect(basic.status, path).toBe(401);
      expect(basic.headers.get('www-authenticate'), path).toBe(CHALLENGE);
    }
    const fine = await fetch(`${t.baseUrl}/v1/user`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(fine.status).toBe(200);
    expect(fine.headers.get('www-authenticate')).toBeNull();
    const missing = await fetch(`${t.baseUrl}/files/file_0000000000000000000000`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(missing.status).toBe(404);
    expect(missing.headers.get('www-authenticate')).toBeNull();
  });

  it('a cross-origin page may read it', async () => {
    const r = await fetch(`${t.baseUrl}/graphql`, { method: 'POST', headers: { origin: ORIGIN, 'content-type': 'application/json' }, body: JSON.stringify(viewer) });
    expect(r.status).toBe(401);
    expect(r.headers.get('access-control-allow-origin')).toBe('*');
    expect(r.headers.get('access-control-expose-headers')?.toLowerCase().split(/\s*,\s*/)).toContain('www-authenticate');
  });
});
