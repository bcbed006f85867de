// What a hostile client controls before any resolver runs: the raw path (dot segments, encoded
// slashes, bad percent-encoding, ids of the wrong kind), the body's size and nesting, and the
// GraphQL document's size. None of it may retarget a request, and none of it may be a 5xx.
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, ADMIN_TOKEN, type TestApp } from './helpers.ts';
import { createSite, createSpace } from './fixtures/sites.ts';

let t: TestApp;
let ORG: string;

const MAX_BODY = 64 * 1024;

beforeAll(async () => {
  t = await startTestApp({
    config: {
      limits: { maxBodyBytes: MAX_BODY, bodyBudgetBytes: 3 * MAX_BODY, maxJsonDepth: 64, graphqlMaxTokens: 2000, graphqlMaxAliases: 50, graphqlMaxDirectives: 20 },
    },
  });
  ORG = `/v1/orgs/${t.org.id}`;
});
afterAll(() => t.close());

type RawResponse = { status: number; headers: http.IncomingHttpHeaders; body: string };

/**
 * A request with the path sent byte for byte (fetch and URL would resolve `..` before sending,
 * which is exactly what a naive proxy or client library does not always do).
 */
function raw(method: string, path: string, opts: { body?: string | Buffer; headers?: Record<string, string>; chunks?: Buffer[] } = {}): Promise<RawResponse> {
  const port = Number(new URL(t.baseUrl).port);
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: '127.0.0.1', port, method, path, headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...(opts.body !== undefined || opts.chunks ? { 'content-type': 'application/json' } : {}), ...opts.headers } },
      (res) => {
        const parts: Buffer[] = [];
        res.on('data', (c) => parts.push(c));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(parts).toString('utf8') }));
      },
    );
    req.on('error', reject);
    if (opts.chunks) {
      // Chunked transfer: no Content-Length for the server to refuse up front.
      for (const c of opts.chunks) req.write(c);
      req.end();
    } else req.end(opts.body);
  });
}

const errorOf = (r: RawResponse) => JSON.parse(r.body) as { error: { code: number; message: string } };

describe('the raw path is routed, never normalised', () => {
  it('DELETE …/share-links/%2E%2E does not delete the site (the reported probe)', async () => {
    const site = await createSite(t);
    for (const seg of ['%2E%2E', '%2e%2e', '..', '.', '%2e', '.%2E']) {
      const r = await raw('DELETE', `${ORG}/sites/${site.id}/share-links/${seg}`);
      expect(r.status, seg).toBe(400);
      expect(errorOf(r).error.code).toBe(400);
    }
    expect((await t.rest('GET', `${ORG}/sites/${site.id}`)).status).toBe(200);
  });

  it('DELETE /v1/spaces/{space}/comments/%2e%2e does not delete the space', async () => {
    const spaceId = await createSpace(t, 'Kept');
    const r = await raw('DELETE', `/v1/spaces/${spaceId}/comments/%2e%2e`);
    expect(r.status).toBe(400);
    const space = await t.rest('GET', `/v1/spaces/${spaceId}`);
    expect(space.status).toBe(200);
    expect(space.body.title).toBe('Kept');
  });

  it('PATCH /v1/spaces/{space}/change-requests/.. with a body does not rename the space', async () => {
    const spaceId = await createSpace(t, 'Original title');
    for (const seg of ['..', '%2e%2e', '%2E.']) {
      const r = await raw('PATCH', `/v1/spaces/${spaceId}/change-requests/${seg}`, { body: JSON.stringify({ title: 'Hijacked' }) });
      expect(r.status, seg).toBe(400);
    }
    expect((await t.rest('GET', `/v1/spaces/${spaceId}`)).body.title).toBe('Original title');
  });

  it('an encoded slash, a backslash or a control character in a segment is a 400', async () => {
    const spaceId = await createSpace(t);
    for (const seg of [`${spaceId}%2Fcomments`, `${spaceId}%2fcomments`, `${spaceId}%5C..`, `${spaceId}%00`, `%0a${spaceId}`]) {
      const r = await raw('GET', `/v1/spaces/${seg}`);
      expect(r.status, seg).toBe(400);
      expect(errorOf(r).error.code).toBe(400);
    }
  });

  it('invalid percent-encoding is a 400 under every prefix, never a 500', async () => {
    for (const path of ['/v1/spaces/%E0%A4%A', '/v1/orgs/%ZZ', '/files/%E0%A4%A', '/files/pdf/%ff', '/sso/saml/%ZZ/start', '/sso/saml/%C0/metadata', '/graphql/%ZZ', '/%']) {
      const r = await raw('GET', path);
      expect(r.status, path).toBe(400);
      expect(errorOf(r).error.code).toBe(400);
    }
  });

  it('a request target that is not a plain path (`//host/…`, absolute-form) is a 400', async () => {
    const spaceId = await createSpace(t);
    expect((await raw('DELETE', `//evil.example/v1/spaces/${spaceId}`)).status).toBe(400);
    expect((await raw('DELETE', `http://evil.example/v1/spaces/${spaceId}`)).status).toBe(400);
    expect((await t.rest('GET', `/v1/spaces/${spaceId}`)).status).toBe(200);
  });

  it('an id of the wrong kind or shape is a 404 before any lookup', async () => {
    const site = await createSite(t);
    const spaceId = await createSpace(t);
    const cases: Array<[string, string]> = [
      ['DELETE', `${ORG}/sites/${site.id}/share-links/${site.id}`],
      ['DELETE', `${ORG}/sites/${site.id}/share-links/shl_`],
      ['DELETE', `${ORG}/sites/${site.id}/share-links/shl_a-b`],
      ['GET', `/v1/spaces/${t.org.id}`],
      ['GET', `/v1/spaces/${spaceId}x%20`],
      ['GET', `/v1/spaces/${spaceId}/change-requests/0`],
      ['GET', `/v1/spaces/${spaceId}/change-requests/-1`],
      ['GET', `/v1/spaces/${spaceId}/change-requests/${'9'.repeat(30)}`],
      ['GET', `/v1/orgs/${'x'.repeat(400)}`],
      ['GET', `/v1/orgs/${t.org.id}/openapi/not%20a%20slug`],
    ];
    for (const [method, path] of cases) {
      const r = await raw(method, path);
      expect(r.status, `${method} ${path}`).toBe(404);
      expect(errorOf(r).error.code).toBe(404);
    }
    expect((await t.rest('GET', `${ORG}/sites/${site.id}`)).status).toBe(200);
  });

  it('percent-encoded ids are decoded once, not twice', async () => {
    const spaceId = await createSpace(t);
    // `%2573` decodes to `%73` (not to `s`): no space has that id.
    expect((await raw('GET', `/v1/spaces/${spaceId.replace('space_', 'space%255F')}`)).status).toBe(404);
    // A plainly encoded id still works.
    expect((await raw('GET', `/v1/spaces/${spaceId.replace('_', '%5F')}`)).status).toBe(200);
  });
});

describe('HEAD answers wherever GET does', () => {
  it('REST, health, downloads and GraphQL GET', async () => {
    const spaceId = await createSpace(t);
    const get = await raw('GET', `/v1/spaces/${spaceId}`);
    const head = await raw('HEAD', `/v1/spaces/${spaceId}`);
    expect(head.status).toBe(200);
    expect(head.body).toBe('');
    expect(head.headers['content-type']).toBe(get.headers['content-type']);
    expect((await raw('HEAD', `/v1/spaces/space_missing0000`)).status).toBe(404);
    expect((await raw('HEAD', '/healthz')).status).toBe(200);
    const allowed = await raw('PUT', `/v1/spaces/${spaceId}`);
    expect(allowed.status).toBe(405);
    expect(allowed.headers.allow).toContain('HEAD');
    const gql = await raw('HEAD', `/graphql?query=${encodeURIComponent('{ viewer { user { id } } }')}`, { headers: { accept: 'application/json' } });
    expect(gql.status).toBe(200);
    expect(gql.body).toBe('');
  });
});

describe('bodies are bounded', () => {
  const big = () => JSON.stringify({ title: 'x'.repeat(MAX_BODY) });

  it('a body over the cap is a 413 (declared length or chunked), REST and GraphQL, and nothing changes', async () => {
    const spaceId = await createSpace(t, 'Before');
    const declared = await raw('PATCH', `/v1/spaces/${spaceId}`, { body: big() });
    expect(declared.status).toBe(413);
    expect(errorOf(declared).error.code).toBe(413);
    const chunked = await raw('PATCH', `/v1/spaces/${spaceId}`, { chunks: [Buffer.from(big().slice(0, 40_000)), Buffer.from(big().slice(40_000))] });
    expect(chunked.status).toBe(413);
    const gql = await raw('POST', '/graphql', { body: JSON.stringify({ query: `mutation { updateSpace(input: {id: "${spaceId}", title: "${'y'.repeat(MAX_BODY)}"}) { space { id } } }` }) });
    expect(gql.status).toBe(413);
    expect((await t.rest('GET', `/v1/spaces/${spaceId}`)).body.title).toBe('Before');
  });

  it('bodies held at once share a budget: beyond it a 503 with Retry-After, then service resumes', async () => {
    // Three slow bodies just under the cap hold the whole budget while they are being sent.
    const port = Number(new URL(t.baseUrl).port);
    const holders = [0, 1, 2].map(() => {
      const req = http.request({ host: '127.0.0.1', port, method: 'POST', path: '/graphql', headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' } });
      req.on('error', () => {});
      req.write(Buffer.alloc(MAX_BODY - 1024, 0x20));
      return req;
    });
    await new Promise((r) => setTimeout(r, 300));
    const refused = await raw('POST', '/graphql', { chunks: [Buffer.from(' '.repeat(4096)), Buffer.from(JSON.stringify({ query: '{ viewer { user { id } } }' }))] });
    expect(refused.status).toBe(503);
    expect(refused.headers['retry-after']).toBeDefined();
    for (const h of holders) h.destroy();
    await new Promise((r) => setTimeout(r, 300));
    expect((await t.gql('{ viewer { user { id } } }')).data.viewer.user.id).toBe(t.adminUser.id);
  });

  it('JSON nested beyond the limit is a 400 (GraphQL: a request error, 200 under application/json), REST and GraphQL variables', async () => {
    const spaceId = await createSpace(t);
    const deep = '['.repeat(10_000) + ']'.repeat(10_000);
    const rest = await raw('PATCH', `/v1/spaces/${spaceId}`, { body: `{"title": ${deep}}` });
    expect(rest.status).toBe(400);
    expect(errorOf(rest).error.message).toMatch(/nested/);
    // GraphQL: a request error, answered as GraphQL over HTTP answers one (test/graphql-over-http.test.ts).
    const deepBody = `{"query": "{ viewer { user { id } } }", "variables": {"a": ${deep}}}`;
    const gql = await raw('POST', '/graphql', { body: deepBody });
    expect(gql.status).toBe(200);
    expect(JSON.parse(gql.body).errors[0]).toMatchObject({ message: expect.stringMatching(/nested/), extensions: { code: 'BAD_REQUEST' } });
    expect((await raw('POST', '/graphql', { body: deepBody, headers: { accept: 'application/graphql-response+json' } })).status).toBe(400);
    const deepGet = '['.repeat(100) + ']'.repeat(100);
    const getPath = `/graphql?query=${encodeURIComponent('{ viewer { user { id } } }')}&variables=${encodeURIComponent(`{"a": ${deepGet}}`)}`;
    const get = await raw('GET', getPath, { headers: { accept: 'application/json' } });
    expect(get.status).toBe(200);
    expect(JSON.parse(get.body).errors[0].message).toMatch(/nested/);
    expect((await raw('GET', getPath, { headers: { accept: 'application/graphql-response+json' } })).status).toBe(400);
    // Brackets inside strings do not count.
    const fine = await raw('PATCH', `/v1/spaces/${spaceId}`, { body: JSON.stringify({ title: '[{'.repeat(20) }) });
    expect(fine.status).toBe(200);
  });
});

describe('GraphQL documents are bounded', () => {
  // Request errors: 200 with `errors` under application/json (t.gql's), 400 under application/graphql-response+json.
  it('too many tokens, aliases or directives: BAD_REQUEST naming the limit', async () => {
    const fields = Array.from({ length: 2_000 }, () => 'id').join(' ');
    const tokens = await t.gql(`{ viewer { user { ${fields} } } }`);
    expect(tokens.status).toBe(200);
    expect(tokens.errors?.[0].extensions?.code).toBe('BAD_REQUEST');
    expect(tokens.errors?.[0].message).toMatch(/token/i);

    const aliases = Array.from({ length: 3_000 }, (_, i) => `a${i}: __typename`).join(' ');
    const manyAliases = await t.gql(`{ ${aliases} }`);
    expect(manyAliases.status).toBe(200);
    expect(manyAliases.errors?.[0].extensions?.code).toBe('BAD_REQUEST');

    const someAliases = Array.from({ length: 60 }, (_, i) => `a${i}: __typename`).join(' ');
    const overAliases = await t.gql(`{ ${someAliases} }`);
    expect(overAliases.status).toBe(200);
    expect(overAliases.errors?.[0].message).toMatch(/alias/i);

    const directives = Array.from({ length: 30 }, () => '@include(if: true)').join(' ');
    const overDirectives = await t.gql(`{ __typename ${directives} }`);
    expect(overDirectives.status).toBe(200);
    expect(overDirectives.errors?.[0].extensions?.code).toBe('BAD_REQUEST');

    // Under the limits the same shapes run.
    const ok = await t.gql(`{ ${Array.from({ length: 10 }, (_, i) => `a${i}: __typename`).join(' ')} }`);
    expect(ok.errors).toBeUndefined();
  });

  it('malformed variables on a GraphQL GET are a 400, not an internal error', async () => {
    const q = encodeURIComponent('query($id: ID!) { node(id: $id) { id } }');
    for (const variables of ['{not json', '[1,2]', '"str"', '{"id": ']) {
      const r = await raw('GET', `/graphql?query=${q}&variables=${encodeURIComponent(variables)}`, { headers: { accept: 'application/json' } });
      expect(r.status, variables).toBe(400);
      const body = JSON.parse(r.body);
      expect(body.errors[0].extensions.code, variables).toBe('BAD_REQUEST');
    }
  });

  it('the process is alive after every worst case above', async () => {
    expect((await raw('GET', '/healthz')).status).toBe(200);
    expect((await t.rest('GET', '/v1/orgs')).status).toBe(200);
  });
});
