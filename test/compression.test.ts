// Large JSON responses are compressed when the client accepts it (REST and GraphQL alike); small
// ones, and clients that do not ask, get plain JSON.
import zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, ADMIN_TOKEN, type TestApp } from './helpers.ts';
import { applyChanges } from '../src/domain/revisions.ts';
import { pickEncoding, COMPRESS_MIN_BYTES } from '../src/http/compression.ts';
import { expectValidResponse } from './openapi.ts';

let t: TestApp;
let spaceId: string;
let pageId: string;
const BIG = Array.from({ length: 400 }, (_, i) => `Paragraph ${i} explains the configuration of the gateway in some detail.`).join('\n\n');

beforeAll(async () => {
  t = await startTestApp();
  spaceId = (await t.rest('POST', `/v1/orgs/${t.org.id}/spaces`, { title: 'Big' })).body.id;
  const s = await t.app.prisma.space.findUniqueOrThrow({ where: { id: spaceId } });
  const r = await t.app.prisma.$transaction(async (tx) => {
    const out = await applyChanges(tx, { spaceId, baseRevisionId: s.revisionId!, changes: [{ operation: 'insert_page', title: 'Big', document: { markdown: BIG } }], createdById: t.adminUser.id, storage: t.app.services.storage });
    await tx.space.update({ where: { id: spaceId }, data: { revisionId: out.revision.id } });
    return out;
  });
  pageId = r.outcomes[0].pageId!;
});
afterAll(async () => {
  await t?.close();
});

/** A raw request (node:http would do too; fetch is asked not to decode by reading the bytes). */
async function raw(path: string, init: { method?: string; body?: string; encoding?: string } = {}) {
  const res = await fetch(`${t.baseUrl}${path}`, {
    method: init.method ?? 'GET',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'accept-encoding': init.encoding ?? 'identity', ...(init.body ? { 'content-type': 'application/json' } : {}) },
    body: init.body,
  });
  return { status: res.status, encoding: res.headers.get('content-encoding'), vary: res.headers.get('vary'), text: await res.text() };
}

describe('response compression', () => {
  it('compresses a large REST response with brotli or gzip, as the client accepts', async () => {
    const path = `/v1/spaces/${spaceId}/content/page/${pageId}?format=markdown`;
    const plain = await raw(path);
    expect(plain.status).toBe(200);
    expect(plain.encoding).toBeNull();
    expect(plain.text.length).toBeGreaterThan(COMPRESS_MIN_BYTES);
    // fetch decodes the body and keeps the header, so the text must equal the plain one.
    const br = await raw(path, { encoding: 'gzip, deflate, br' });
    expect(br.encoding).toBe('br');
    expect(br.vary).toMatch(/accept-encoding/i);
    expect(br.text).toBe(plain.text);
    const gz = await raw(path, { encoding: 'gzip' });
    expect(gz.encoding).toBe('gzip');
    expect(gz.text).toBe(plain.text);
    // The compressed size is what goes on the wire.
    const res = await new Promise<{ length: number; body: Buffer }>((resolve, reject) => {
      import('node:http').then(({ default: http }) =>
        http
          .get(`${t.baseUrl}${path}`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'accept-encoding': 'gzip' } }, (r) => {
            const chunks: Buffer[] = [];
            r.on('data', (c) => chunks.push(c));
            r.on('end', () => resolve({ length: Number(r.headers['content-length']), body: Buffer.concat(chunks) }));
          })
          .on('error', reject),
      );
    });
    expect(res.body.length).toBe(res.length);
    expect(res.length).toBeLessThan(plain.text.length / 3);
    expect(zlib.gunzipSync(res.body).toString('utf8')).toBe(plain.text);
  });

  it('compresses a large GraphQL response, and leaves small ones alone', async () => {
    const body = JSON.stringify({ query: `query($id: ID!, $p: String!) { space(id: $id) { revision { page(id: $p) { markdown } } } }`, variables: { id: spaceId, p: pageId } });
    const plain = await raw('/graphql', { method: 'POST', body });
    expect(JSON.parse(plain.text).data.space.revision.page.markdown).toBe(BIG);
    const gz = await raw('/graphql', { method: 'POST', body, encoding: 'gzip' });
    expect(gz.encoding).toBe('gzip');
    expect(gz.text).toBe(plain.text);
    const small = await raw('/graphql', { method: 'POST', body: JSON.stringify({ query: '{ viewer { user { id } } }' }), encoding: 'gzip, br' });
    expect(small.encoding).toBeNull();
    expect(JSON.parse(small.text).data.viewer.user.id).toBe(t.adminUser.id);
    const smallRest = await raw(`/v1/spaces/${spaceId}`, { encoding: 'gzip, br' });
    expect(smallRest.encoding).toBeNull();
  });

  it('works through the official client (which asks for compressed responses)', async () => {
    // The client sends through fetch, which asks for compressed encodings by itself.
    const auto = await fetch(`${t.baseUrl}/v1/spaces/${spaceId}/content/page/${pageId}?format=markdown`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(auto.headers.get('content-encoding')).toMatch(/^(br|gzip)$/);
    const r = await t.client().spaces.getPageById(spaceId, pageId, { format: 'markdown' as never });
    expectValidResponse('GET', '/spaces/{spaceId}/content/page/{pageId}', 200, r.data);
    expect((r.data as { markdown?: string }).markdown).toBe(BIG);
  });

  it('reads Accept-Encoding with q-values and wildcards', () => {
    expect(pickEncoding(undefined)).toBeNull();
    expect(pickEncoding('identity')).toBeNull();
    expect(pickEncoding('gzip;q=0, br;q=0')).toBeNull();
    expect(pickEncoding('br;q=0, gzip')).toBe('gzip');
    expect(pickEncoding('*')).toBe('br');
    expect(pickEncoding('*;q=0, gzip;q=0.5')).toBe('gzip');
  });
});
