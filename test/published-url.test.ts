// The URL lookup (`publishedContentByUrl`, REST GET/POST /v1/urls/published): from a web address of
// a published site to its section, site space and page, or a redirect, as the reader sees it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GitBookAPIError } from '@gitbook/api';
import { startTestApp, type TestApp } from './helpers.ts';
import { expectValidResponse } from './openapi.ts';
import { newId } from '../src/lib/ids.ts';
import { applyChanges, createInitialRevision } from '../src/domain/revisions.ts';
import type { Tx } from '../src/db/client.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.close();
});

type Seeded = { spaceId: string; pages: Record<string, string> };

/** A space with Intro; Guide → Setup → Advanced; and Secret (condition `visitor.claims.unsigned.beta`). */
async function seedSpace(tx: Tx, title: string): Promise<Seeded> {
  const spaceId = newId('Space');
  await tx.space.create({ data: { id: spaceId, organizationId: t.org.id, title } });
  const base = { spaceId, createdById: t.adminUser.id, storage: t.app.services.storage };
  const rev0 = await createInitialRevision(tx, spaceId, t.adminUser.id);
  const b1 = await applyChanges(tx, {
    ...base,
    baseRevisionId: rev0.id,
    changes: [
      { operation: 'insert_page', title: 'Intro', document: { markdown: `Welcome to ${title}.` } },
      { operation: 'insert_page', title: 'Guide', document: { markdown: 'How to.' } },
      { operation: 'insert_page', title: 'Secret', condition: 'visitor.claims.unsigned.beta', document: { markdown: 'Beta only.' } },
    ],
  });
  const b2 = await applyChanges(tx, { ...base, baseRevisionId: b1.revision.id, changes: [{ operation: 'insert_page', into: b1.outcomes[1].pageId, title: 'Setup', document: { markdown: 'Set up.' } }] });
  const b3 = await applyChanges(tx, { ...base, baseRevisionId: b2.revision.id, changes: [{ operation: 'insert_page', into: b2.outcomes[0].pageId, title: 'Advanced', document: { markdown: 'More.' } }] });
  await tx.space.update({ where: { id: spaceId }, data: { revisionId: b3.revision.id } });
  return { spaceId, pages: { intro: b1.outcomes[0].pageId!, guide: b1.outcomes[1].pageId!, secret: b1.outcomes[2].pageId!, setup: b2.outcomes[0].pageId!, advanced: b3.outcomes[0].pageId! } };
}

let s1: Seeded, s2: Seeded, s3: Seeded;
/** Site A: docs.example.com/product, sections `guides` (default; site spaces v2 default, v1) and `enterprise` (conditioned). */
const A = { id: newId('Site'), guides: newId('SiteSection'), enterprise: newId('SiteSection'), v2: newId('SiteSpace'), v1: newId('SiteSpace'), main: newId('SiteSpace') };
/** Site B: proxy example.org/help, root site space `start`. Site D: proxy example.org/help/api (longer). */
const B = { id: newId('Site'), start: newId('SiteSpace') };
const D = { id: newId('Site'), ref: newId('SiteSpace') };
/** Site C: share-link visibility, root site space `docs`. */
const C = { id: newId('Site'), docs: newId('SiteSpace') };
let shareKey: string;

beforeAll(async () => {
  await t.app.prisma.$transaction(
    async (tx) => {
      s1 = await seedSpace(tx, 'Space one');
      s2 = await seedSpace(tx, 'Space two');
      s3 = await seedSpace(tx, 'Space three');
      const org = t.org.id;
      await tx.site.create({ data: { id: A.id, organizationId: org, title: 'Product', published: true, hostname: 'docs.example.com', basename: 'product', defaultSiteSectionId: A.guides } });
      await tx.siteSection.createMany({
        data: [
          { id: A.guides, siteId: A.id, title: 'Guides', path: 'guides', position: 0, defaultSiteSpaceId: A.v2 },
          { id: A.enterprise, siteId: A.id, title: 'Enterprise', path: 'enterprise', position: 1, defaultSiteSpaceId: A.main, condition: 'visitor.claims.unsigned.enterprise' },
        ],
      });
      await tx.siteSpace.createMany({
        data: [
          { id: A.v2, siteId: A.id, sectionId: A.guides, spaceId: s1.spaceId, path: 'v2', position: 0 },
          { id: A.v1, siteId: A.id, sectionId: A.guides, spaceId: s2.spaceId, path: 'v1', position: 1 },
          { id: A.main, siteId: A.id, sectionId: A.enterprise, spaceId: s3.spaceId, path: 'main', position: 0 },
        ],
      });
      await tx.site.create({ data: { id: B.id, organizationId: org, title: 'Help', published: true, proxy: 'example.org/help', defaultSiteSpaceId: B.start } });
      await tx.siteSpace.create({ data: { id: B.start, siteId: B.id, spaceId: s1.spaceId, path: 'start', position: 0 } });
      await tx.site.create({ data: { id: D.id, organizationId: org, title: 'API', published: true, proxy: 'example.org/help/api', defaultSiteSpaceId: D.ref } });
      await tx.siteSpace.create({ data: { id: D.ref, siteId: D.id, spaceId: s2.spaceId, path: 'ref', position: 0 } });
      await tx.site.create({ data: { id: C.id, organizationId: org, title: 'Partners', published: true, visibility: 'share_link', defaultSiteSpaceId: C.docs } });
      await tx.siteSpace.create({ data: { id: C.docs, siteId: C.id, spaceId: s3.spaceId, path: 'docs', position: 0 } });
    },
    { timeout: 60_000 },
  );
  const link = await t.client().orgs.createSiteShareLink(t.org.id, C.id, { name: 'Partners' });
  // The key travels in the link's published URL (`?share=`).
  shareKey = new URL((link.data as any).urls.published).searchParams.get('share')!;
  expect(shareKey).toMatch(/^shk_/);
}, 120_000);

const LOOKUP = `query($url: String!, $shareKey: String, $visitor: JSON) {
  publishedContentByUrl(url: $url, shareKey: $shareKey, visitor: $visitor) {
    redirect target pathname basePath siteBasePath canonicalUrl complete revisionId organizationId
    site { id: siteId title } siteSection { id: siteSectionId path } siteSpace { id: siteSpaceId path } space { id: spaceId } page { id: pageId title path }
  } }`;

async function lookup(url: string, opts: { token?: string | null; shareKey?: string; visitor?: unknown } = {}) {
  const r = await t.gql(LOOKUP, { url, shareKey: opts.shareKey ?? null, visitor: opts.visitor ?? null }, opts.token === undefined ? t.token : opts.token);
  return { data: r.data?.publishedContentByUrl, code: r.errors?.[0]?.extensions?.code as string | undefined, errors: r.errors };
}

describe('publishedContentByUrl: hostname and basename', () => {
  it('the site root resolves to the default section, its default site space and the first page, in one request', async () => {
    const { data, errors } = await lookup('https://docs.example.com/product');
    expect(errors).toBeUndefined();
    expect(data).toMatchObject({
      site: { id: A.id, title: 'Product' },
      siteSection: { id: A.guides, path: 'guides' },
      siteSpace: { id: A.v2 },
      space: { id: s1.spaceId },
      page: { id: s1.pages.intro, title: 'Intro', path: 'intro' },
      pathname: '',
      siteBasePath: '/product/',
      basePath: '/product/',
      canonicalUrl: 'https://docs.example.com/product/guides/',
      organizationId: t.org.id,
      redirect: null,
    });
  });

  it('nested pages, the default site space without its segment, another site space by its segment', async () => {
    const deep = await lookup('https://docs.example.com/product/guides/guide/setup/advanced');
    expect(deep.data).toMatchObject({ siteSection: { id: A.guides }, siteSpace: { id: A.v2 }, page: { id: s1.pages.advanced, title: 'Advanced' }, pathname: 'guide/setup/advanced', basePath: '/product/guides/', complete: true });
    expect(deep.data.canonicalUrl).toBe('https://docs.example.com/product/guides/guide/setup/advanced');
    const v1 = await lookup('https://docs.example.com/product/guides/v1/guide/setup?x=1#top');
    expect(v1.data).toMatchObject({ siteSpace: { id: A.v1 }, space: { id: s2.spaceId }, page: { id: s2.pages.setup }, basePath: '/product/guides/v1/' });
    // Without the section segment: the default section.
    const short = await lookup('https://docs.example.com/product/guide');
    expect(short.data).toMatchObject({ siteSection: { id: A.guides }, page: { id: s1.pages.guide } });
  });

  it('unknown hosts, basenames and pages are NOT_FOUND; a bad URL is a 400 naming url', async () => {
    for (const url of ['https://nowhere.example.com/product/guides', 'https://docs.example.com/other/guides', 'https://docs.example.com/product/guides/nope', 'https://docs.example.com/product/guides/v1/guide/nope']) {
      expect((await lookup(url)).code, url).toBe('NOT_FOUND');
    }
    const bad = await lookup('not a url');
    expect(bad.code).toBe('BAD_REQUEST');
    expect(bad.errors?.[0].message).toMatch(/^url/);
    const r = await t.rest('GET', `/v1/urls/published?url=${encodeURIComponent('ftp://docs.example.com/product')}`);
    expect(r.status).toBe(400);
    expect(r.body.error.message).toMatch(/^url/);
  });
});

describe('publishedContentByUrl: cost', () => {
  it('a fixed number of statements, whatever the site and the depth of the page', async () => {
    const urls = ['https://docs.example.com/product/guides/v1/guide/setup/advanced', 'https://docs.example.com/product/enterprise/intro', 'https://docs.example.com/product'];
    for (const url of urls) await lookup(url); // warm the shared page trees
    const counts = [];
    for (const url of urls) counts.push((await t.countQueries(() => lookup(url))).count);
    expect(new Set(counts).size, String(counts)).toBe(1);
    // Site, reader, structure, space, and one planned read per object the query selects.
    expect(counts[0]).toBeLessThanOrEqual(10);
  });
});

describe('publishedContentByUrl: hostile URLs', () => {
  it('oversized, non-http and deep URLs are refused without a lookup', async () => {
    const long = await t.rest('GET', `/v1/urls/published?url=${encodeURIComponent(`https://docs.example.com/${'a'.repeat(3000)}`)}`);
    expect(long.status).toBe(400);
    expect(long.body.error.message).toMatch(/^url/);
    for (const url of ['javascript:alert(1)', 'file:///etc/passwd', '//docs.example.com/product']) {
      const r = await lookup(url);
      expect(r.code, url).toBe('BAD_REQUEST');
    }
    const deep = await lookup(`https://example.org/help/${'x/'.repeat(100)}`);
    expect(deep.code).toBe('NOT_FOUND');
    // Encoded separators and dot segments do not escape the site's address.
    expect((await lookup('https://docs.example.com/product/guides/..%2F..%2Fother')).code).toBe('NOT_FOUND');
    expect((await lookup('https://docs.example.com/other/../product/guides/guide')).data.page.id).toBe(s1.pages.guide);
  });
});

describe('publishedContentByUrl: proxy and gateway addresses', () => {
  it('a proxy: the longest proxy path that prefixes the URL wins', async () => {
    const help = await lookup('https://example.org/help/start/guide/setup');
    expect(help.data).toMatchObject({ site: { id: B.id }, siteSection: null, siteSpace: { id: B.start }, page: { id: s1.pages.setup }, siteBasePath: '/help/', basePath: '/help/start/' });
    expect(help.data.canonicalUrl).toBe('https://example.org/help/start/guide/setup');
    const api = await lookup('https://example.org/help/api/ref/intro');
    expect(api.data).toMatchObject({ site: { id: D.id }, siteSpace: { id: D.ref }, page: { id: s2.pages.intro }, siteBasePath: '/help/api/' });
    expect((await lookup('https://example.org/elsewhere/start')).code).toBe('NOT_FOUND');
  });

  it("the gateway's own address /sites/{siteId}/", async () => {
    const base = t.app.config.publicUrl;
    const r = await lookup(`${base}/sites/${B.id}/start/guide`);
    expect(r.data).toMatchObject({ site: { id: B.id }, page: { id: s1.pages.guide } });
    expect((await lookup(`${base}/sites/${newId('Site')}/start`)).code).toBe('NOT_FOUND');
  });
});

describe('publishedContentByUrl: readers', () => {
  it('a conditioned section is NOT_FOUND for an outsider, found for a member and for an outsider with the claim', async () => {
    const outsider = await t.createUser();
    const url = 'https://docs.example.com/product/enterprise/';
    expect((await lookup(url, { token: outsider.token })).code).toBe('NOT_FOUND');
    expect((await lookup('https://docs.example.com/product/enterprise/guide/setup', { token: outsider.token })).code).toBe('NOT_FOUND');
    expect((await lookup(url)).data).toMatchObject({ siteSection: { id: A.enterprise }, siteSpace: { id: A.main }, page: { id: s3.pages.intro } });
    const claimed = await lookup(url, { token: outsider.token, visitor: { claims: { unsigned: { enterprise: true } } } });
    expect(claimed.data).toMatchObject({ siteSection: { id: A.enterprise } });
    // The outsider still sees the rest of the site.
    expect((await lookup('https://docs.example.com/product/guides/guide', { token: outsider.token })).data.page.id).toBe(s1.pages.guide);
  });

  it('the objects answer nested fields as the reader sees the site (one request for a front end)', async () => {
    const outsider = await t.createUser();
    const r = await t.gql(
      `query($url: String!) { publishedContentByUrl(url: $url) {
        site { id: siteId sections { id: siteSectionId } } siteSection { id: siteSectionId condition siteSpaces { id: siteSpaceId } } siteSpace { id: siteSpaceId title urls { published } } space { id: spaceId title }
        page { id: pageId title path } } }`,
      { url: 'https://docs.example.com/product/guides/v1/guide' },
      outsider.token,
    );
    expect(r.errors).toBeUndefined();
    const l = r.data.publishedContentByUrl;
    expect(l.site.sections.map((s: any) => s.id)).toEqual([A.guides]);
    expect(l.siteSection).toEqual({ id: A.guides, condition: null, siteSpaces: [{ id: A.v2 }, { id: A.v1 }] });
    expect(l.siteSpace).toMatchObject({ id: A.v1, title: 'Space two', urls: { published: 'https://docs.example.com/product/guides/v1/' } });
    expect(l.space).toEqual({ id: s2.spaceId, title: 'Space two' });
    expect(l.page).toEqual({ id: s2.pages.guide, title: 'Guide', path: 'guide' });
  });

  it('a conditioned page is NOT_FOUND for an outsider and found for a member; the first page skips it', async () => {
    const outsider = await t.createUser();
    const url = 'https://docs.example.com/product/guides/secret';
    expect((await lookup(url, { token: outsider.token })).code).toBe('NOT_FOUND');
    expect((await lookup(url)).data.page).toMatchObject({ id: s1.pages.secret, title: 'Secret' });
    expect((await lookup(url, { token: outsider.token, visitor: { claims: { unsigned: { beta: true } } } })).data.page.id).toBe(s1.pages.secret);
    const r = await t.rest('POST', '/v1/urls/published', { url }, outsider.token);
    expect(r.status).toBe(404);
    expectValidResponse('POST', '/urls/published', 404, r.body);
    // An outsider asserting a signed claim gets a 400 naming it.
    const signed = await lookup(url, { token: outsider.token, visitor: { claims: { beta: true } } });
    expect(signed.code).toBe('BAD_REQUEST');
  });

  it('a share-link site needs a valid share key (argument or the URL\'s `share`)', async () => {
    const outsider = await t.createUser();
    const base = `${t.app.config.publicUrl}/sites/${C.id}`;
    expect((await lookup(`${base}/docs/guide`, { token: outsider.token })).code).toBe('NOT_FOUND');
    expect((await lookup(`${base}/docs/guide`, { token: outsider.token, shareKey: 'shk_wrong' })).code).toBe('NOT_FOUND');
    const keyed = await lookup(`${base}/docs/guide`, { token: outsider.token, shareKey });
    expect(keyed.data, JSON.stringify(keyed.errors)).toMatchObject({ site: { id: C.id }, page: { id: s3.pages.guide } });
    const viaUrl = await t.rest('GET', `/v1/urls/published?url=${encodeURIComponent(`${base}/docs/guide?share=${shareKey}`)}`, undefined, outsider.token);
    expect(viaUrl.status).toBe(200);
    expect(viaUrl.body).toMatchObject({ site: C.id, siteSpace: C.docs, space: s3.spaceId, shareKey });
    expectValidResponse('GET', '/urls/published', 200, viaUrl.body);
  });
});

describe('REST /v1/urls/published through the official client', () => {
  it('GET and POST answer PublishedSiteContent', async () => {
    const url = 'https://docs.example.com/product/guides/v1/guide';
    const got = await t.client().urls.getPublishedContentByUrl({ url });
    expectValidResponse('GET', '/urls/published', 200, got.data);
    expect(got.data).toEqual({
      site: A.id,
      siteSection: A.guides,
      siteSpace: A.v1,
      space: s2.spaceId,
      revision: expect.stringMatching(/^rev/),
      pathname: 'guide',
      basePath: '/product/guides/v1/',
      siteBasePath: '/product/',
      apiToken: '',
      organization: t.org.id,
      complete: true,
      canonicalUrl: 'https://docs.example.com/product/guides/v1/guide',
    });
    const outsider = await t.createUser();
    const posted = await outsider.client.urls.resolvePublishedContentByUrl({ url: 'https://docs.example.com/product/guides/secret', visitor: { unsignedClaims: { beta: true } } });
    expectValidResponse('POST', '/urls/published', 200, posted.data);
    expect(posted.data).toMatchObject({ site: A.id, pathname: 'secret' });
    const missing = await t.client().urls.getPublishedContentByUrl({ url: 'https://docs.example.com/product/nothing/here' }).catch((e) => e);
    expect(missing).toBeInstanceOf(GitBookAPIError);
    expect(missing.code).toBe(404);
  });

  it('a path that is no page but a redirect source answers the redirect', async () => {
    const created = await t.client().orgs.createSiteRedirect(t.org.id, A.id, { source: '/old/setup', destination: { kind: 'site-page', siteSpaceId: A.v2, pageId: s1.pages.setup } });
    expect(created.status).toBe(201);
    const got = await t.client().urls.getPublishedContentByUrl({ url: 'https://docs.example.com/product/old/setup/' });
    expectValidResponse('GET', '/urls/published', 200, got.data);
    expect(got.data).toEqual({ target: 'content', redirect: 'https://docs.example.com/product/guides/guide/setup' });
    // A redirect to a conditioned section is NOT_FOUND for a reader who may not see it.
    await t.client().orgs.createSiteRedirect(t.org.id, A.id, { source: '/ent', destination: { kind: 'site-section', siteSectionId: A.enterprise } });
    expect((await lookup('https://docs.example.com/product/ent')).data).toMatchObject({ target: 'content', redirect: 'https://docs.example.com/product/enterprise/' });
    const outsider = await t.createUser();
    expect((await lookup('https://docs.example.com/product/ent', { token: outsider.token })).code).toBe('NOT_FOUND');
  });
});
