// Visitor authentication: a site's visitor keys (a generated HS256 secret, or
// the owner's RS256/ES256 public key), rotation with an overlap, the publishing-auth settings, over
// REST (official client + the official document, and the public-key extension) and GraphQL; and
// visitor tokens verified end to end through `publishedSite` on a visitor-auth site read by a
// user who is not a member: every hostile token is NOT_FOUND.
import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SignJWT, exportSPKI, generateKeyPair, type CryptoKey as JoseKey } from 'jose';
import { expectAccess, statusOf, type TestApp } from './helpers.ts';
import { expectValidResponse } from './openapi.ts';
import { createSite, createSpace, startSiteTests, type TestUser } from './fixtures/sites.ts';
import { loadConfig } from '../src/config.ts';

let t: TestApp;
let reader: TestUser;
let outsider: TestUser;
let ORG: string;

beforeAll(async () => {
  ({ t, ORG, reader, outsider } = await startSiteTests());
});
afterAll(async () => {
  await t?.close();
});

const AUTH_PATH = '/orgs/{organizationId}/sites/{siteId}/publishing/auth';
const auth = (siteId: string) => `${ORG}/sites/${siteId}/publishing/auth`;
const keyRows = (siteId: string) => t.app.prisma.siteVisitorKey.findMany({ where: { siteId }, orderBy: { createdAt: 'asc' } });
const nowSeconds = () => Math.floor(t.clock.now().getTime() / 1000);

/** A published visitor-auth site: a first section (the sample space) and "Enterprise", shown only with `visitor.claims.isEnterprise`. */
async function visitorSite(title = 'Members docs') {
  const site = await createSite(t, { title, visibility: 'visitor-auth', spaces: 'sample' });
  const enterprise = await t.client().orgs.addSectionToSite(t.org.id, site.id, { spaceId: await createSpace(t, 'Enterprise'), title: 'Enterprise' });
  await t.client().orgs.updateSiteSectionById(t.org.id, site.id, enterprise.data.id, { condition: 'visitor.claims.isEnterprise' });
  await t.client().orgs.publishSite(t.org.id, site.id);
  return site.id as string;
}

async function generatePair(alg: 'RS256' | 'ES256' | 'ES384') {
  const pair = await generateKeyPair(alg, { extractable: true });
  return { privateKey: pair.privateKey, pem: await exportSPKI(pair.publicKey) };
}

type Sign = { aud?: string; exp?: number | null; nbf?: number; claims?: Record<string, unknown> };
/** A visitor token for `siteId` signed with `key` (an HS256 secret in base64url, or a private key), valid 10 minutes unless told. */
async function sign(key: string | JoseKey | Uint8Array, alg: 'HS256' | 'RS256' | 'ES256', siteId: string, opts: Sign = {}) {
  const material = typeof key === 'string' ? Buffer.from(key, 'base64url') : key;
  const now = nowSeconds();
  const jwt = new SignJWT({ ...(opts.claims ?? {}) }).setProtectedHeader({ alg, typ: 'JWT' }).setAudience(opts.aud ?? siteId).setIssuedAt(now);
  if (opts.exp !== null) jwt.setExpirationTime(opts.exp ?? now + 600);
  if (opts.nbf !== undefined) jwt.setNotBefore(opts.nbf);
  return jwt.sign(material);
}

const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');

const READ = `query($id: ID!, $tok: String, $visitor: JSON) { publishedSite(siteId: $id, visitorToken: $tok, visitor: $visitor) { id sections { title } } }`;

/** `publishedSite` as the outsider (a token, not a member) with a visitor token: the section titles, or the error code. */
async function readAs(siteId: string, token: string | null, visitor?: unknown, caller: { token: string | null } = outsider) {
  const r = await t.gql(READ, { id: siteId, tok: token, visitor }, caller.token);
  if (r.errors?.length) return { code: r.errors[0].extensions?.code, field: r.errors[0].extensions?.field, data: r.data?.publishedSite ?? null };
  return { sections: (r.data.publishedSite.sections as Array<{ title: string }>).map((s) => s.title) };
}

/** The same read with the token in the `X-Visitor-Token` header. */
async function readWithHeader(siteId: string, token: string) {
  const res = await fetch(`${t.baseUrl}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${outsider.token}`, 'x-visitor-token': token },
    body: JSON.stringify({ query: READ, variables: { id: siteId } }),
  });
  const json = (await res.json()) as any;
  return json.errors?.length ? { code: json.errors[0].extensions?.code } : { sections: json.data.publishedSite.sections.map((s: any) => s.title) };
}

// ------------------------------------------------------------------ key management

it('VISITOR_KEY_OVERLAP_SECONDS: default an hour, 0 to 604800, anything else refused at start-up', () => {
  expect(loadConfig({}).visitorKeyOverlapSeconds).toBe(3600);
  expect(loadConfig({ VISITOR_KEY_OVERLAP_SECONDS: '0' }).visitorKeyOverlapSeconds).toBe(0);
  expect(loadConfig({ VISITOR_KEY_OVERLAP_SECONDS: '604800' }).visitorKeyOverlapSeconds).toBe(604800);
  for (const bad of ['-1', '604801', '1.5', 'soon']) expect(() => loadConfig({ VISITOR_KEY_OVERLAP_SECONDS: bad }), bad).toThrow(/VISITOR_KEY_OVERLAP_SECONDS/);
});

describe('publishing auth over REST (official operations)', () => {
  it('regenerate creates the current HS256 secret; GET shows it; a second regenerate rotates with the overlap', async () => {
    const siteId = await visitorSite();
    const first = await t.client().orgs.regenerateSitePublishingAuthById(t.org.id, siteId);
    expect(first.status).toBe(200);
    expectValidResponse('POST', `${AUTH_PATH}/regenerate`, 200, first.data);
    expect(first.data).toMatchObject({ object: 'publishing-auth', backend: 'custom' });
    expect(Buffer.from(first.data.privateKey, 'base64url')).toHaveLength(32);

    const got = await t.client().orgs.getSitePublishingAuthById(t.org.id, siteId);
    expectValidResponse('GET', AUTH_PATH, 200, got.data);
    expect(got.data.privateKey).toBe(first.data.privateKey);

    const before = t.clock.now().getTime();
    const second = await t.client().orgs.regenerateSitePublishingAuthById(t.org.id, siteId);
    expect(second.data.privateKey).not.toBe(first.data.privateKey);
    const rows = await keyRows(siteId);
    expect(rows.map((k) => [k.algorithm, k.secret, k.retiresAt === null])).toEqual([
      ['HS256', first.data.privateKey, false],
      ['HS256', second.data.privateKey, true],
    ]);
    // The default overlap: an hour after the rotation.
    const retires = rows[0].retiresAt!.getTime() - before;
    expect(retires).toBeGreaterThanOrEqual(3600_000 - 1000);
    expect(retires).toBeLessThanOrEqual(3600_000 + 60_000);
  });

  it('GET before any key is a 404 saying so, and writes nothing', async () => {
    const siteId = await visitorSite();
    const r = await t.rest('GET', auth(siteId));
    expect(r.status).toBe(404);
    expect(r.body.error.message).toMatch(/no visitor key yet/);
    expect(await keyRows(siteId)).toHaveLength(0);
  });

  it('PATCH sets the settings, creating the secret on first use; omitted keeps, null unsets', async () => {
    const siteId = await visitorSite();
    const res = await t.client().orgs.updateSitePublishingAuthById(t.org.id, siteId, { backend: 'custom', fallbackURL: 'https://login.example.com/docs' });
    expectValidResponse('PATCH', AUTH_PATH, 200, res.data);
    expect(res.data).toMatchObject({ object: 'publishing-auth', backend: 'custom', fallbackURL: 'https://login.example.com/docs' });
    expect(await keyRows(siteId)).toHaveLength(1);
    expect((await keyRows(siteId))[0].secret).toBe(res.data.privateKey);

    const integ = await t.rest('PATCH', auth(siteId), { backend: 'integration', integration: 'auth0' });
    expect(integ.status).toBe(200);
    expectValidResponse('PATCH', AUTH_PATH, 200, integ.body);
    // Still the same secret: a PATCH creates one only when there is none.
    expect(integ.body).toMatchObject({ backend: 'integration', integration: 'auth0', fallbackURL: 'https://login.example.com/docs', privateKey: res.data.privateKey });

    const unset = await t.rest('PATCH', auth(siteId), { backend: 'custom', fallbackURL: null });
    expect(unset.body.fallbackURL).toBeUndefined();
    expect(unset.body.backend).toBe('custom');
    expect((await t.client().orgs.getSitePublishingAuthById(t.org.id, siteId)).data).toMatchObject({ backend: 'custom', integration: 'auth0' });
    expect(await keyRows(siteId)).toHaveLength(1);
  });

  it('PATCH: 400 naming the field, nothing changed', async () => {
    const siteId = await visitorSite();
    await t.rest('PATCH', auth(siteId), { backend: 'custom', fallbackURL: 'https://a.example.com/' });
    const before = await t.rest('GET', auth(siteId));
    for (const [body, field] of [
      [{ fallbackURL: 'https://b.example.com/' }, 'backend'],
      [{ backend: 'ldap' }, 'backend'],
      [{ backend: 'integration' }, 'integration'],
      [{ backend: 'custom', fallbackURL: 'javascript:alert(1)' }, 'fallbackURL'],
      [{ backend: 'custom', fallbackURL: 'not a url' }, 'fallbackURL'],
      [{ backend: 'custom', integration: '' }, 'integration'],
      [{ backend: 'custom', privateKey: 'mine' }, 'privateKey'],
    ] as const) {
      const r = await t.rest('PATCH', auth(siteId), body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error.message, JSON.stringify(body)).toMatch(new RegExp(`^${field}\\b`));
    }
    expect((await t.rest('GET', auth(siteId))).body).toEqual(before.body);
  });

  it('404 for a site that does not exist or belongs to another organization path', async () => {
    const missing = 'site_doesnotexist000000000';
    for (const [method, p] of [
      ['GET', `${ORG}/sites/${missing}/publishing/auth`],
      ['POST', `${ORG}/sites/${missing}/publishing/auth/regenerate`],
      ['PATCH', `${ORG}/sites/${missing}/publishing/auth`],
      ['PUT', `${ORG}/sites/${missing}/publishing/auth/public-key`],
      ['DELETE', `${ORG}/sites/${missing}/publishing/auth/public-key`],
    ] as const) {
      const body = method === 'PATCH' ? { backend: 'custom' } : method === 'PUT' ? { algorithm: 'ES256', publicKey: (await generatePair('ES256')).pem } : undefined;
      expect((await t.rest(method, p, body)).status, `${method} ${p}`).toBe(404);
    }
  });

  it('site admins only: 401 without a token, 404 to outsiders, 403 to members below admin', async () => {
    const siteId = await visitorSite();
    await t.client().orgs.regenerateSitePublishingAuthById(t.org.id, siteId);
    const keysBefore = await keyRows(siteId);
    const table = { anonymous: 401, outsider: 404, guest: 403, reader: 403, creator: 403 } as const;
    const { pem } = await generatePair('ES256');
    await expectAccess(t, { method: 'GET', path: auth(siteId) }, { ...table, admin: 200 });
    await expectAccess(t, { method: 'PATCH', path: auth(siteId), body: { backend: 'custom' } }, table);
    await expectAccess(t, { method: 'POST', path: `${auth(siteId)}/regenerate` }, table);
    await expectAccess(t, { method: 'PUT', path: `${auth(siteId)}/public-key`, body: { algorithm: 'ES256', publicKey: pem } }, table);
    await expectAccess(t, { method: 'DELETE', path: `${auth(siteId)}/public-key` }, table);
    expect(await keyRows(siteId)).toEqual(keysBefore);
    await expectAccess(t, (c) => c.client.orgs.regenerateSitePublishingAuthById(t.org.id, siteId), { outsider: 404, reader: 403, admin: 200 }, 'regenerate (official client)');
  });
});

describe('public keys (REST extension)', () => {
  it('PUT makes the owner’s key current, the previous key retires after the overlap; GET and PATCH say there is no private key; DELETE is idempotent', async () => {
    const siteId = await visitorSite();
    const hs = await t.client().orgs.regenerateSitePublishingAuthById(t.org.id, siteId);
    const { pem } = await generatePair('RS256');
    const put = await t.rest('PUT', `${auth(siteId)}/public-key`, { algorithm: 'RS256', publicKey: pem });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ object: 'site-visitor-auth', backend: 'custom' });
    expect(put.body.keys.map((k: any) => [k.algorithm, k.current, k.publicKey ?? null, typeof k.retiresAt])).toEqual([
      ['RS256', true, pem.trim(), 'undefined'],
      ['HS256', false, null, 'string'],
    ]);
    expect(JSON.stringify(put.body)).not.toContain(hs.data.privateKey);
    // The extension is documented in /v1/openapi.json.
    const doc = await t.rest('GET', '/v1/openapi.json', undefined, null);
    expect(doc.body.paths['/v1/orgs/{organizationId}/sites/{siteId}/publishing/auth/public-key'].put.operationId).toBe('setSitePublishingAuthPublicKey');

    const get = await t.rest('GET', auth(siteId));
    expect(get.status).toBe(404);
    expect(get.body.error.message).toMatch(/RS256 public key/);
    const patch = await t.rest('PATCH', auth(siteId), { backend: 'custom', fallbackURL: 'https://x.example.com/' });
    expect(patch.status).toBe(409);
    // GraphQL changes the settings of a site on a public key.
    const g = await t.gql(`mutation($input: UpdateSitePublishingAuthInput!) { updateSitePublishingAuth(input: $input) { publishingAuth { fallbackURL privateKey keys { algorithm current } } } }`, {
      input: { siteId, fallbackURL: 'https://x.example.com/' },
    });
    expect(g.errors).toBeUndefined();
    expect(g.data.updateSitePublishingAuth.publishingAuth).toMatchObject({ fallbackURL: 'https://x.example.com/', privateKey: null });

    const del = await t.rest('DELETE', `${auth(siteId)}/public-key`);
    expect(del.status).toBe(205);
    expect((await keyRows(siteId)).map((k) => k.algorithm)).toEqual(['HS256']);
    expect((await t.rest('DELETE', `${auth(siteId)}/public-key`)).status).toBe(204);
  });

  it('400 naming the field for a bad key or algorithm, nothing changed', async () => {
    const siteId = await visitorSite();
    await t.client().orgs.regenerateSitePublishingAuthById(t.org.id, siteId);
    const before = await keyRows(siteId);
    const rsa = await generatePair('RS256');
    const ec = await generatePair('ES256');
    const p384 = await generatePair('ES384');
    const rsa1024 = crypto.generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey.export({ type: 'spki', format: 'pem' }).toString();
    const privatePem = crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    for (const [body, field, message] of [
      [{ algorithm: 'HS256', publicKey: rsa.pem }, 'algorithm', /RS256 or ES256/],
      [{ algorithm: 'none', publicKey: rsa.pem }, 'algorithm', /RS256 or ES256/],
      [{ algorithm: 'RS256', publicKey: 'garbage' }, 'publicKey', /SPKI PEM/],
      [{ algorithm: 'RS256', publicKey: ec.pem }, 'publicKey', /SPKI PEM/],
      [{ algorithm: 'ES256', publicKey: rsa.pem }, 'publicKey', /SPKI PEM/],
      [{ algorithm: 'ES256', publicKey: p384.pem }, 'publicKey', /P-256/],
      [{ algorithm: 'RS256', publicKey: rsa1024 }, 'publicKey', /1024 bits/],
      [{ algorithm: 'ES256', publicKey: privatePem }, 'publicKey', /SPKI PEM/],
      [{ algorithm: 'ES256', publicKey: 'A'.repeat(9000) }, 'publicKey', /./],
      [{ algorithm: 'ES256' }, 'publicKey', /./],
    ] as const) {
      const r = await t.rest('PUT', `${auth(siteId)}/public-key`, body);
      expect(r.status, `${field} ${String(body.algorithm)}`).toBe(400);
      expect(r.body.error.message).toMatch(new RegExp(`^${field}\\b`));
      expect(r.body.error.message).toMatch(message);
      // A private key pasted by mistake is never echoed back.
      expect(r.body.error.message).not.toContain('PRIVATE KEY');
    }
    expect(await keyRows(siteId)).toEqual(before);
  });
});

describe('GraphQL', () => {
  it('mutations and sitePublishingAuth for admins; Site.visitorAuth for members, without secrets; null for other readers', async () => {
    const siteId = await visitorSite();
    const regen = await t.gql(`mutation($input: SiteVisitorKeyInput!) { regenerateSiteVisitorKey(input: $input) { publishingAuth { siteId privateKey keys { id algorithm current } } } }`, { input: { siteId } });
    expect(regen.errors).toBeUndefined();
    const secret = regen.data.regenerateSiteVisitorKey.publishingAuth.privateKey;
    expect(regen.data.regenerateSiteVisitorKey.publishingAuth.keys).toEqual([{ id: expect.stringMatching(/^svk_/), algorithm: 'HS256', current: true }]);
    const { pem } = await generatePair('ES256');
    const set = await t.gql(`mutation($input: SetSiteVisitorPublicKeyInput!) { setSiteVisitorPublicKey(input: $input) { publishingAuth { privateKey keys { algorithm current retiresAt } } } }`, {
      input: { organizationId: t.org.id, siteId, algorithm: 'ES256', publicKey: pem },
    });
    expect(set.data.setSiteVisitorPublicKey.publishingAuth.keys.map((k: any) => [k.algorithm, k.current, k.retiresAt === null])).toEqual([
      ['ES256', true, true],
      ['HS256', false, false],
    ]);
    const bad = await t.gql(`mutation($input: SetSiteVisitorPublicKeyInput!) { setSiteVisitorPublicKey(input: $input) { publishingAuth { privateKey } } }`, { input: { siteId, algorithm: 'RS256', publicKey: pem } });
    expect(bad.errors?.[0].extensions).toMatchObject({ code: 'BAD_REQUEST', field: 'publicKey' });
    const upd = await t.gql(`mutation($input: UpdateSitePublishingAuthInput!) { updateSitePublishingAuth(input: $input) { publishingAuth { backend integration } } }`, { input: { siteId, backend: 'integration' } });
    expect(upd.errors?.[0].extensions).toMatchObject({ code: 'BAD_REQUEST', field: 'integration' });

    const admin = await t.gql(`query($id: ID!) { sitePublishingAuth(siteId: $id) { backend privateKey keys { algorithm } } }`, { id: siteId });
    expect(admin.data.sitePublishingAuth).toMatchObject({ backend: 'custom', privateKey: null });
    const denied = await t.gql(`query($id: ID!) { sitePublishingAuth(siteId: $id) { privateKey } }`, { id: siteId }, reader.token);
    expect(denied.errors?.[0].extensions?.code).toBe('FORBIDDEN');
    const hidden = await t.gql(`query($id: ID!) { sitePublishingAuth(siteId: $id) { privateKey } }`, { id: siteId }, outsider.token);
    expect(hidden.errors?.[0].extensions?.code).toBe('NOT_FOUND');

    const VIEW = `query($id: ID!) { site(id: $id) { visitorAuth { backend fallbackURL keys { id algorithm createdAt retiresAt current publicKey } } } }`;
    const seen = await t.gql(VIEW, { id: siteId }, reader.token);
    expect(seen.errors).toBeUndefined();
    expect(seen.data.site.visitorAuth.keys.map((k: any) => [k.algorithm, k.current])).toEqual([
      ['ES256', true],
      ['HS256', false],
    ]);
    expect(JSON.stringify(seen.data)).not.toContain(secret);
    const rm = await t.gql(`mutation($input: SiteVisitorKeyInput!) { removeSiteVisitorPublicKey(input: $input) { deleted publishingAuth { keys { algorithm } } } }`, { input: { siteId } });
    expect(rm.data.removeSiteVisitorPublicKey).toEqual({ deleted: true, publishingAuth: { keys: [{ algorithm: 'HS256' }] } });

    // A reader of the published site who is not a member: the field is null.
    const pub = await createSite(t, { title: 'Open docs', visibility: 'public', spaces: 'sample' });
    await t.client().orgs.publishSite(t.org.id, pub.id);
    await t.client().orgs.regenerateSitePublishingAuthById(t.org.id, pub.id);
    const outside = await t.gql(`query($id: ID!) { publishedSite(siteId: $id) { siteId visitorAuth { backend keys { id } } } }`, { id: pub.id }, outsider.token);
    expect(outside.errors).toBeUndefined();
    expect(outside.data.publishedSite).toEqual({ siteId: pub.id, visitorAuth: null });
  });
});

// ------------------------------------------------------------------ tokens end to end

describe('visitor tokens through publishedSite (a reader who is not a member)', () => {
  let siteId: string;
  let otherSiteId: string;
  let secret: string;
  const ALL = ['Members docs', 'Enterprise'];
  const PUBLIC = ['Members docs'];

  beforeAll(async () => {
    siteId = await visitorSite();
    otherSiteId = await visitorSite('Other docs');
    secret = (await t.client().orgs.regenerateSitePublishingAuthById(t.org.id, siteId)).data.privateKey;
    await t.client().orgs.regenerateSitePublishingAuthById(t.org.id, otherSiteId);
  });

  it('no token: NOT_FOUND; a valid HS256 token opens the site (argument or X-Visitor-Token); signed claims drive conditions', async () => {
    expect(await readAs(siteId, null)).toMatchObject({ code: 'NOT_FOUND', data: null });
    expect(await readAs(siteId, await sign(secret, 'HS256', siteId))).toEqual({ sections: PUBLIC });
    expect(await readAs(siteId, await sign(secret, 'HS256', siteId, { claims: { isEnterprise: true } }))).toEqual({ sections: ALL });
    expect(await readAs(siteId, await sign(secret, 'HS256', siteId, { claims: { isEnterprise: false } }))).toEqual({ sections: PUBLIC });
    expect(await readWithHeader(siteId, await sign(secret, 'HS256', siteId, { claims: { isEnterprise: true } }))).toEqual({ sections: ALL });
    expect(await readWithHeader(siteId, 'garbage')).toEqual({ code: 'NOT_FOUND' });
    // `nbf` within the 30 s clock skew is accepted.
    expect(await readAs(siteId, await sign(secret, 'HS256', siteId, { nbf: nowSeconds() + 10 }))).toEqual({ sections: PUBLIC });
  });

  it('a reader may not assert signed claims (400 naming the claim), with or without a token; unsigned ones are its own', async () => {
    expect(await readAs(siteId, null, { claims: { isEnterprise: true } })).toMatchObject({ code: 'BAD_REQUEST', field: 'visitor.claims.isEnterprise' });
    expect(await readAs(siteId, await sign(secret, 'HS256', siteId), { claims: { isEnterprise: true } })).toMatchObject({ code: 'BAD_REQUEST', field: 'visitor.claims.isEnterprise' });
    // `unsigned` inside the token is not a way round it either: the token's `unsigned` is dropped.
    expect(await readAs(siteId, await sign(secret, 'HS256', siteId), { claims: { unsigned: { isEnterprise: true } } })).toEqual({ sections: PUBLIC });
    // A member previews as any visitor.
    expect(await readAs(siteId, null, { claims: { isEnterprise: true } }, { token: t.token })).toEqual({ sections: ALL });
  });

  it('hostile tokens are NOT_FOUND, each of them', async () => {
    const now = nowSeconds();
    const { pem } = await generatePair('RS256');
    const cases: Array<[string, string]> = [
      ['expired', await sign(secret, 'HS256', siteId, { exp: now - 120 })],
      ['not yet valid (nbf beyond the skew)', await sign(secret, 'HS256', siteId, { nbf: now + 120 })],
      ['without exp', await sign(secret, 'HS256', siteId, { exp: null })],
      ['for another site (aud)', await sign(secret, 'HS256', siteId, { aud: otherSiteId })],
      ['signed with another site’s key', await sign(secret, 'HS256', otherSiteId)],
      ['signed with a made-up secret', await sign(crypto.randomBytes(32).toString('base64url'), 'HS256', siteId)],
      ['alg none', `${b64({ alg: 'none', typ: 'JWT' })}.${b64({ aud: siteId, exp: now + 600, isEnterprise: true })}.`],
      ['alg none with the HS256 signature kept', (() => {
        const parts = `${b64({ alg: 'none' })}.${b64({ aud: siteId, exp: now + 600 })}`;
        return `${parts}.${crypto.createHmac('sha256', Buffer.from(secret, 'base64url')).update(parts).digest('base64url')}`;
      })()],
      ['HS256 signed with an RSA public key PEM as the secret', await sign(new TextEncoder().encode(pem), 'HS256', siteId)],
      ['oversized (> 8 KiB)', await sign(secret, 'HS256', siteId, { claims: { pad: 'x'.repeat(9000) } })],
      ['garbage', 'garbage'],
      ['three dots of garbage', 'a.b.c'],
      ['empty JSON header', `${b64({})}.${b64({ aud: siteId })}.sig`],
    ];
    const actual = Object.fromEntries(await Promise.all(cases.map(async ([name, token]) => [name, (await readAs(siteId, token)).code ?? 'READ'])));
    expect(actual).toEqual(Object.fromEntries(cases.map(([name]) => [name, 'NOT_FOUND'])));
  });

  it('RS256 and ES256 tokens verify with the owner’s public key; HS/RS confusion with the site’s own public key is refused', async () => {
    const rsSite = await visitorSite('RS docs');
    const rs = await generatePair('RS256');
    expect((await t.rest('PUT', `${auth(rsSite)}/public-key`, { algorithm: 'RS256', publicKey: rs.pem })).status).toBe(200);
    expect(await readAs(rsSite, await sign(rs.privateKey, 'RS256', rsSite, { claims: { isEnterprise: true } }))).toEqual({ sections: ['RS docs', 'Enterprise'] });
    // The classic confusion: an HS256 token whose HMAC secret is the site's RS256 public key.
    expect(await readAs(rsSite, await sign(new TextEncoder().encode(rs.pem), 'HS256', rsSite))).toMatchObject({ code: 'NOT_FOUND' });
    expect(await readAs(rsSite, await sign(new TextEncoder().encode(rs.pem.trim()), 'HS256', rsSite))).toMatchObject({ code: 'NOT_FOUND' });
    // Another RSA key, and the right key announced as ES256.
    expect(await readAs(rsSite, await sign((await generatePair('RS256')).privateKey, 'RS256', rsSite))).toMatchObject({ code: 'NOT_FOUND' });

    const esSite = await visitorSite('ES docs');
    const es = await generatePair('ES256');
    await t.client().orgs.regenerateSitePublishingAuthById(t.org.id, esSite);
    expect((await t.rest('PUT', `${auth(esSite)}/public-key`, { algorithm: 'ES256', publicKey: es.pem })).status).toBe(200);
    expect(await readAs(esSite, await sign(es.privateKey, 'ES256', esSite))).toEqual({ sections: ['ES docs'] });
    expect(await readAs(esSite, await sign(es.privateKey, 'ES256', rsSite))).toMatchObject({ code: 'NOT_FOUND' });
    expect(await readAs(esSite, await sign(new TextEncoder().encode(es.pem), 'HS256', esSite))).toMatchObject({ code: 'NOT_FOUND' });
    // Removing the public key stops its tokens at once.
    expect((await t.rest('DELETE', `${auth(esSite)}/public-key`)).status).toBe(205);
    expect(await readAs(esSite, await sign(es.privateKey, 'ES256', esSite))).toMatchObject({ code: 'NOT_FOUND' });
  });

  it('rotation: a token signed with the rotated-out key verifies during the overlap, not after; expired keys are cleaned up', async () => {
    const site = await visitorSite('Rotating docs');
    const old = (await t.client().orgs.regenerateSitePublishingAuthById(t.org.id, site)).data.privateKey;
    const fresh = (await t.client().orgs.regenerateSitePublishingAuthById(t.org.id, site)).data.privateKey;
    expect(await readAs(site, await sign(old, 'HS256', site))).toEqual({ sections: ['Rotating docs'] });
    expect(await readAs(site, await sign(fresh, 'HS256', site))).toEqual({ sections: ['Rotating docs'] });

    t.clock.advance(3600_000 + 5_000);
    // Tokens signed now (valid exp), with the key whose overlap ended.
    expect(await readAs(site, await sign(old, 'HS256', site))).toMatchObject({ code: 'NOT_FOUND' });
    expect(await readAs(site, await sign(fresh, 'HS256', site))).toEqual({ sections: ['Rotating docs'] });
    expect(await keyRows(site)).toHaveLength(2);
    // The next rotation deletes the expired key; the one it retires stays for its overlap.
    const third = (await t.client().orgs.regenerateSitePublishingAuthById(t.org.id, site)).data.privateKey;
    expect((await keyRows(site)).map((k) => k.secret)).toEqual([fresh, third]);
    expect(await readAs(site, await sign(fresh, 'HS256', site))).toEqual({ sections: ['Rotating docs'] });
  });
});
