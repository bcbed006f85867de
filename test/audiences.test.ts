// Published sites for their real audiences: a table of reader kind × site visibility ×
// read path, asserting exactly the sections, site spaces and pages each reader gets — nothing more —
// and that conditions and counters reach members only. Every site has three sections: "Docs" (no
// condition), "Enterprise" (a signed claim: `visitor.claims.isEnterprise`) and "Pro" (an unsigned
// claim: `visitor.claims.unsigned.plan == "pro"`); Docs shows two site spaces, "Handbook" (no
// condition) and "Beta" (`visitor.claims.isBeta`); Handbook's pages are "Open", "Enterprise page"
// (signed condition) with its child "Enterprise child", and "Pro page" (unsigned condition).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import crypto from 'node:crypto';
import { SignJWT } from 'jose';
import { startTestApp, type TestApp } from './helpers.ts';
import { expectValidResponse } from './openapi.ts';
import { newId } from '../src/lib/ids.ts';
import { applyChanges, createInitialRevision } from '../src/domain/revisions.ts';
import type { Tx } from '../src/db/client.ts';

let t: TestApp;
let outsider: { token: string };
let reader: { token: string };
const VISIBILITIES = ['public', 'unlisted', 'share_link', 'visitor_auth', 'unpublished'] as const;
type Visibility = (typeof VISIBILITIES)[number];
type Seeded = { siteId: string; shareKey: string; secret: Buffer; sections: Record<string, string>; siteSpaces: Record<string, string>; handbookSpaceId: string; pages: Record<string, string> };
const sites = new Map<Visibility, Seeded>();

const SIGNED = 'visitor.claims.isEnterprise';
const UNSIGNED = 'visitor.claims.unsigned.plan == "pro"';
const BETA = 'visitor.claims.isBeta';

async function seedSpace(tx: Tx, title: string, withConditions: boolean): Promise<{ spaceId: string; pages: Record<string, string> }> {
  const spaceId = newId('Space');
  await tx.space.create({ data: { id: spaceId, organizationId: t.org.id, title, position: 0 } });
  const base = { spaceId, createdById: t.adminUser.id, storage: t.app.services.storage };
  const rev0 = await createInitialRevision(tx, spaceId, t.adminUser.id);
  const b1 = await applyChanges(tx, {
    ...base,
    baseRevisionId: rev0.id,
    changes: withConditions
      ? [
          { operation: 'insert_page', title: 'Open', document: { markdown: 'For everyone.' } },
          { operation: 'insert_page', title: 'Enterprise page', condition: SIGNED, document: { markdown: 'Enterprise secrets.' } },
          { operation: 'insert_page', title: 'Pro page', condition: UNSIGNED, document: { markdown: 'Pro tips.' } },
        ]
      : [{ operation: 'insert_page', title: `${title} intro`, document: { markdown: 'Hello.' } }],
  });
  let revisionId = b1.revision.id;
  const pages: Record<string, string> = {};
  if (withConditions) {
    pages.Open = b1.outcomes[0].pageId;
    pages['Enterprise page'] = b1.outcomes[1].pageId;
    pages['Pro page'] = b1.outcomes[2].pageId;
    const b2 = await applyChanges(tx, { ...base, baseRevisionId: revisionId, changes: [{ operation: 'insert_page', into: pages['Enterprise page'], title: 'Enterprise child', document: { markdown: 'Deeper.' } }] });
    pages['Enterprise child'] = b2.outcomes[0].pageId;
    revisionId = b2.revision.id;
  }
  await tx.space.update({ where: { id: spaceId }, data: { revisionId } });
  return { spaceId, pages };
}

async function seedSite(visibility: Visibility): Promise<Seeded> {
  return t.app.prisma.$transaction(
    async (tx) => {
      const siteId = newId('Site');
      const handbook = await seedSpace(tx, 'Handbook', true);
      const beta = await seedSpace(tx, 'Beta', false);
      const enterprise = await seedSpace(tx, 'Enterprise space', false);
      const pro = await seedSpace(tx, 'Pro space', false);
      // A change request and a comment: counters a reader must not see.
      const revisionId = (await tx.space.findUniqueOrThrow({ where: { id: handbook.spaceId } })).revisionId!;
      await tx.changeRequest.create({ data: { id: newId('ChangeRequest'), spaceId: handbook.spaceId, number: 1, subject: 'Secret plans', createdById: t.adminUser.id, revisionInitialId: revisionId, revisionId } });
      const sections = {
        Docs: { id: newId('SiteSection'), title: 'Docs', path: 'docs', condition: null as string | null, position: 0 },
        Enterprise: { id: newId('SiteSection'), title: 'Enterprise', path: 'enterprise', condition: SIGNED, position: 1 },
        Pro: { id: newId('SiteSection'), title: 'Pro', path: 'pro', condition: UNSIGNED, position: 2 },
      };
      const siteSpaces = {
        Handbook: { id: newId('SiteSpace'), sectionId: sections.Docs.id, spaceId: handbook.spaceId, path: 'handbook', position: 0, condition: null as string | null },
        Beta: { id: newId('SiteSpace'), sectionId: sections.Docs.id, spaceId: beta.spaceId, path: 'beta', position: 1, condition: BETA },
        'Enterprise space': { id: newId('SiteSpace'), sectionId: sections.Enterprise.id, spaceId: enterprise.spaceId, path: 'enterprise-space', position: 0, condition: null },
        'Pro space': { id: newId('SiteSpace'), sectionId: sections.Pro.id, spaceId: pro.spaceId, path: 'pro-space', position: 0, condition: null },
      };
      await tx.site.create({
        data: {
          id: siteId,
          organizationId: t.org.id,
          title: `Site ${visibility}`,
          published: visibility !== 'unpublished',
          visibility: visibility === 'unpublished' ? 'public' : visibility,
          adaptiveContentEnabled: true,
          defaultSiteSectionId: sections.Docs.id,
        },
      });
      await tx.siteSection.createMany({
        data: Object.values(sections).map((s) => ({ ...s, siteId, defaultSiteSpaceId: Object.values(siteSpaces).find((ss) => ss.sectionId === s.id)!.id })),
      });
      await tx.siteSpace.createMany({ data: Object.values(siteSpaces).map((ss) => ({ ...ss, siteId })) });
      const shareKey = `shk_${crypto.randomBytes(32).toString('base64url')}`;
      await tx.shareLink.create({ data: { id: newId('ShareLink'), siteId, name: 'Partners', key: shareKey } });
      const secret = crypto.randomBytes(32);
      await tx.siteVisitorKey.create({ data: { id: newId('SiteVisitorKey'), siteId, algorithm: 'HS256', secret: secret.toString('base64url') } });
      return {
        siteId,
        shareKey,
        secret,
        sections: Object.fromEntries(Object.entries(sections).map(([k, v]) => [k, v.id])),
        siteSpaces: Object.fromEntries(Object.entries(siteSpaces).map(([k, v]) => [k, v.id])),
        handbookSpaceId: handbook.spaceId,
        pages: handbook.pages,
      };
    },
    { timeout: 60_000 },
  );
}

async function visitorToken(site: Seeded, claims: Record<string, unknown>, opts: { expiresIn?: string; audience?: string } = {}) {
  return new SignJWT(claims)
    .setProtectedHeader({ alg: 'HS256' })
    .setAudience(opts.audience ?? site.siteId)
    .setIssuedAt()
    .setExpirationTime(opts.expiresIn ?? '10m')
    .sign(site.secret);
}

beforeAll(async () => {
  t = await startTestApp();
  outsider = await t.createUser(); // a token, no membership
  reader = await t.createUser('read'); // a member with the read role
  for (const v of VISIBILITIES) sites.set(v, await seedSite(v));
}, 180_000);
afterAll(async () => {
  await t?.close();
});

// ------------------------------------------------------------------ the readers

type ReaderName = 'member' | 'memberPreview' | 'outsider' | 'outsiderPro' | 'shareLink' | 'visitor' | 'visitorBeta';
type Ask = { token: string | null; shareKey?: string; visitor?: unknown; visitorToken?: string };

async function askOf(name: ReaderName, site: Seeded): Promise<Ask> {
  switch (name) {
    case 'member':
      return { token: reader.token };
    case 'memberPreview':
      return { token: reader.token, visitor: { claims: { isEnterprise: true } } };
    case 'outsider':
      return { token: outsider.token };
    case 'outsiderPro':
      return { token: outsider.token, visitor: { claims: { unsigned: { plan: 'pro' } } } };
    case 'shareLink':
      return { token: outsider.token, shareKey: site.shareKey };
    case 'visitor':
      return { token: outsider.token, visitorToken: await visitorToken(site, { isEnterprise: true }) };
    case 'visitorBeta':
      return { token: outsider.token, visitorToken: await visitorToken(site, { isBeta: true }), visitor: { claims: { unsigned: { plan: 'pro' } } } };
  }
}

/** Who opens which site (the table in src/auth/audience.ts). */
function opens(name: ReaderName, v: Visibility): boolean {
  if (name === 'member' || name === 'memberPreview') return true;
  if (v === 'unpublished') return false;
  if (v === 'public' || v === 'unlisted') return true;
  if (v === 'share_link') return name === 'shareLink';
  return name === 'visitor' || name === 'visitorBeta'; // visitor_auth
}

/** What each reader sees of a site it opens. */
const EXPECTED: Record<ReaderName, { sections: string[]; siteSpaces: string[]; pages: string[]; conditions: boolean }> = {
  member: { sections: ['Docs', 'Enterprise', 'Pro'], siteSpaces: ['Handbook', 'Beta', 'Enterprise space', 'Pro space'], pages: ['Open', 'Enterprise page', 'Enterprise child', 'Pro page'], conditions: true },
  memberPreview: { sections: ['Docs', 'Enterprise'], siteSpaces: ['Handbook', 'Enterprise space'], pages: ['Open', 'Enterprise page', 'Enterprise child'], conditions: true },
  outsider: { sections: ['Docs'], siteSpaces: ['Handbook'], pages: ['Open'], conditions: false },
  outsiderPro: { sections: ['Docs', 'Pro'], siteSpaces: ['Handbook', 'Pro space'], pages: ['Open', 'Pro page'], conditions: false },
  shareLink: { sections: ['Docs'], siteSpaces: ['Handbook'], pages: ['Open'], conditions: false },
  visitor: { sections: ['Docs', 'Enterprise'], siteSpaces: ['Handbook', 'Enterprise space'], pages: ['Open', 'Enterprise page', 'Enterprise child'], conditions: false },
  visitorBeta: { sections: ['Docs', 'Pro'], siteSpaces: ['Handbook', 'Beta', 'Pro space'], pages: ['Open', 'Pro page'], conditions: false },
};
const READERS = Object.keys(EXPECTED) as ReaderName[];
/** REST reads take a share key and a visitor token (X-Visitor-Token), not a `visitor` argument: what REST shows each reader. */
const REST_EXPECTED: Record<ReaderName, { sections: string[]; siteSpaces: string[] }> = {
  ...EXPECTED,
  memberPreview: EXPECTED.member,
  outsiderPro: EXPECTED.outsider,
  visitorBeta: { sections: ['Docs'], siteSpaces: ['Handbook', 'Beta'] },
};

const ARGS = `$id: ID!, $shareKey: String, $visitor: JSON, $visitorToken: String`;
const PASS = `siteId: $id, shareKey: $shareKey, visitor: $visitor, visitorToken: $visitorToken`;
const PAGE_FIELDS = `title condition pages { title condition pages { title condition } }`;

async function gqlAs(ask: Ask, query: string, vars: Record<string, unknown> = {}) {
  return t.gql(query, { shareKey: ask.shareKey ?? null, visitor: ask.visitor ?? null, visitorToken: ask.visitorToken ?? null, ...vars }, ask.token);
}

function flattenPages(pages: any[]): Array<{ title: string; condition: string | null }> {
  return pages.flatMap((p) => [{ title: p.title, condition: p.condition }, ...flattenPages(p.pages ?? [])]);
}

// ------------------------------------------------------------------ the table

describe('reader kind × site visibility × read path', () => {
  for (const v of VISIBILITIES) {
    for (const name of READERS) {
      it(`${name} on a ${v} site`, async () => {
        const site = sites.get(v)!;
        const ask = await askOf(name, site);
        const nested = await gqlAs(
          ask,
          `query(${ARGS}) { publishedSite(${PASS}) {
            siteSpaceCount
            structure { items { __typename ... on SiteSection { title condition siteSpaces { title condition space { id changeRequests commentCount revision { pages { ${PAGE_FIELDS} } } } } } } }
            sections { title condition }
            sectionsConnection(first: 50) { totalCount nodes { title condition } }
            siteSpacesConnection(first: 50) { totalCount nodes { title condition } }
          } }`,
          { id: site.siteId },
        );
        if (!opens(name, v)) {
          expect(nested.errors?.[0].extensions?.code, JSON.stringify(nested.errors)).toBe('NOT_FOUND');
          expect(nested.data?.publishedSite ?? null).toBeNull();
          // The REST reads answer 404 the same way.
          for (const path of ['published', 'sections', 'site-spaces', 'structure']) {
            const r = await restAs(ask, `/v1/orgs/${t.org.id}/sites/${site.siteId}/${path}`);
            expect(r.status, path).toBe(404);
          }
          return;
        }
        expect(nested.errors, JSON.stringify(nested.errors)).toBeUndefined();
        const want = EXPECTED[name];
        const s = nested.data.publishedSite;
        const structureSections = s.structure.items.filter((i: any) => i.__typename === 'SiteSection');
        expect(structureSections.map((x: any) => x.title)).toEqual(want.sections);
        expect(s.sections.map((x: any) => x.title)).toEqual(want.sections);
        expect(s.sectionsConnection.nodes.map((x: any) => x.title)).toEqual(want.sections);
        expect(s.sectionsConnection.totalCount).toBe(want.sections.length);
        const nestedSpaces = structureSections.flatMap((x: any) => x.siteSpaces);
        expect(nestedSpaces.map((x: any) => x.title)).toEqual(want.siteSpaces);
        expect(s.siteSpacesConnection.nodes.map((x: any) => x.title)).toEqual(want.siteSpaces);
        expect(s.siteSpacesConnection.totalCount).toBe(want.siteSpaces.length);
        expect(s.siteSpaceCount).toBe(want.siteSpaces.length);
        const handbook = nestedSpaces.find((x: any) => x.title === 'Handbook');
        const pages = flattenPages(handbook.space.revision.pages);
        expect(pages.map((p) => p.title)).toEqual(want.pages);
        // Conditions (of sections, site spaces and pages) and counters: members only.
        const conditions = [...s.sections, ...s.sectionsConnection.nodes, ...nestedSpaces, ...s.siteSpacesConnection.nodes, ...pages].map((x: any) => x.condition).filter(Boolean);
        if (want.conditions) expect(conditions.length).toBeGreaterThan(0);
        else expect(conditions).toEqual([]);
        if (name === 'member' || name === 'memberPreview') expect(handbook.space.changeRequests).toBe(1);
        else expect([handbook.space.changeRequests, handbook.space.commentCount]).toEqual([null, null]);

        // REST: the published view, the structure, the paged sections and site spaces.
        const published = await restAs(ask, `/v1/orgs/${t.org.id}/sites/${site.siteId}/published`);
        expect(published.status).toBe(200);
        expectValidResponse('GET', '/orgs/{organizationId}/sites/{siteId}/published', 200, published.body);
        const restWant = REST_EXPECTED[name];
        const restSections = published.body.structure.structure.map((x: any) => x.title);
        expect(restSections).toEqual(restWant.sections);
        const restSpaces = published.body.structure.structure.flatMap((x: any) => x.siteSpaces.map((ss: any) => ss.title));
        expect(restSpaces).toEqual(restWant.siteSpaces);
        const restConditions = JSON.stringify(published.body).includes('visitor.claims');
        expect(restConditions).toBe(want.conditions);
        const listed = await restAs(ask, `/v1/orgs/${t.org.id}/sites/${site.siteId}/sections`);
        expect(listed.status).toBe(200);
        expect(listed.body.items.map((x: any) => x.title)).toEqual(restWant.sections);
        const listedSpaces = await restAs(ask, `/v1/orgs/${t.org.id}/sites/${site.siteId}/site-spaces`);
        expect(listedSpaces.status).toBe(200);
        expect(listedSpaces.body.items.map((x: any) => x.title)).toEqual(restWant.siteSpaces);
      });
    }
  }
});

async function restAs(ask: Ask, path: string) {
  const url = new URL(`${t.baseUrl}${path}`);
  if (ask.shareKey) url.searchParams.set('shareKey', ask.shareKey);
  const headers: Record<string, string> = {};
  if (ask.token) headers.authorization = `Bearer ${ask.token}`;
  if (ask.visitorToken) headers['x-visitor-token'] = ask.visitorToken;
  const res = await fetch(url, { headers });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

// ------------------------------------------------------------------ the leaks the issue found, one by one

describe('the leaks of the issue are closed', () => {
  it('an outsider asserting a signed claim gets a 400 naming it, and nothing', async () => {
    const site = sites.get('public')!;
    const r = await t.gql(`query($id: ID!, $v: JSON) { publishedSite(siteId: $id, visitor: $v) { sections { title } } }`, { id: site.siteId, v: { claims: { isEnterprise: true } } }, outsider.token);
    expect(r.errors?.[0].extensions).toMatchObject({ code: 'BAD_REQUEST', field: 'visitor.claims.isEnterprise' });
    expect(r.data?.publishedSite ?? null).toBeNull();
  });

  it('node(id:) of a conditioned section, site space or page path answers nothing to a reader', async () => {
    const site = sites.get('public')!;
    // A refetch (Relay's node query) in a request of its own, as a front end sends it.
    const q = `query($sec: ID!, $ss: ID!) {
      sec: node(id: $sec) { id ... on SiteSection { title siteSpaces { title } } }
      ss: node(id: $ss) { id ... on SiteSpace { title } }
    }`;
    const asOutsider = await t.gql(q, { sec: site.sections.Enterprise, ss: site.siteSpaces.Beta }, outsider.token);
    expect(asOutsider.data.sec).toBeNull();
    expect(asOutsider.data.ss).toBeNull();
    // The unconditioned ones are found by a reader of the public site, lists filtered for it.
    const open = await t.gql(q, { sec: site.sections.Docs, ss: site.siteSpaces.Handbook }, outsider.token);
    expect(open.data.sec).toMatchObject({ title: 'Docs', siteSpaces: [{ title: 'Handbook' }] });
    expect(open.data.ss.title).toBe('Handbook');
    // A visitor token (the header) opens what its claims open.
    const asVisitor = await fetch(`${t.baseUrl}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${outsider.token}`, 'x-visitor-token': await visitorToken(site, { isEnterprise: true }) },
      body: JSON.stringify({ query: q, variables: { sec: site.sections.Enterprise, ss: site.siteSpaces.Beta } }),
    }).then((r) => r.json() as Promise<any>);
    expect(asVisitor.data.sec.title).toBe('Enterprise');
    expect(asVisitor.data.ss).toBeNull();
    // Nothing of a share-link site without its key.
    const shared = sites.get('share_link')!;
    expect((await t.gql(q, { sec: shared.sections.Docs, ss: shared.siteSpaces.Handbook }, outsider.token)).data.sec).toBeNull();
    // A member sees them all.
    const member = await t.gql(q, { sec: site.sections.Enterprise, ss: site.siteSpaces.Beta }, reader.token);
    expect(member.data.sec.title).toBe('Enterprise');
    expect(member.data.ss.title).toBe('Beta');
  });

  it('relations lead back to the same reader view (site space → site → sections; section → site space → section)', async () => {
    const site = sites.get('public')!;
    const r = await t.gql(
      `query($id: ID!) { publishedSite(siteId: $id) { siteSpacesConnection(first: 10) { nodes { title site { sections { title condition } siteSpacesConnection(first: 10) { nodes { title } } } section { title site { structure { items { ... on SiteSection { title } } } } } } } } }`,
      { id: site.siteId },
      outsider.token,
    );
    expect(r.errors).toBeUndefined();
    for (const node of r.data.publishedSite.siteSpacesConnection.nodes) {
      expect(node.site.sections).toEqual([{ title: 'Docs', condition: null }]);
      expect(node.site.siteSpacesConnection.nodes.map((x: any) => x.title)).toEqual(['Handbook']);
      expect(node.section.site.structure.items.map((x: any) => x.title)).toEqual(['Docs']);
    }
  });

  it('pages by path and by id: a conditioned page is not there for a reader, and is for a member', async () => {
    const site = sites.get('public')!;
    const q = `query($id: ID!, $page: String!) { publishedSite(siteId: $id) { sections { siteSpaces { title space { revision {
      byPath: pageByPath(path: "enterprise-page") { title }
      child: pageByPath(path: "enterprise-page/enterprise-child") { title }
      byId: page(id: $page) { title }
      allPages { title }
    } } } } } }`;
    const asOutsider = await t.gql(q, { id: site.siteId, page: site.pages['Enterprise page'] }, outsider.token);
    expect(asOutsider.errors).toBeUndefined();
    const rev = asOutsider.data.publishedSite.sections[0].siteSpaces[0].space.revision;
    expect(rev).toMatchObject({ byPath: null, child: null, byId: null });
    expect(rev.allPages.map((p: any) => p.title)).toEqual(['Open']);
    const asMember = await t.gql(q, { id: site.siteId, page: site.pages['Enterprise page'] }, reader.token);
    expect(asMember.data.publishedSite.sections[0].siteSpaces[0].space.revision.byId.title).toBe('Enterprise page');
  });

  it('a share key opens only the unconditioned site spaces behind it, and never conditioned pages', async () => {
    const site = sites.get('share_link')!;
    const q = `query($id: ID!, $key: String) { space(id: $id, shareKey: $key) { title changeRequests revision { allPages { title condition } } } }`;
    const handbook = await t.gql(q, { id: site.handbookSpaceId, key: site.shareKey }, outsider.token);
    expect(handbook.errors).toBeUndefined();
    expect(handbook.data.space.revision.allPages).toEqual([{ title: 'Open', condition: null }]);
    expect(handbook.data.space.changeRequests).toBeNull();
    // The Beta space is shown only behind a conditioned site space: the key does not open it.
    const betaSpaceId = (await t.app.prisma.siteSpace.findUniqueOrThrow({ where: { id: site.siteSpaces.Beta } })).spaceId;
    const beta = await t.gql(q, { id: betaSpaceId, key: site.shareKey }, outsider.token);
    expect(beta.errors?.[0].extensions?.code).toBe('NOT_FOUND');
    // The Enterprise space sits in a conditioned section: not opened either.
    const entSpaceId = (await t.app.prisma.siteSpace.findUniqueOrThrow({ where: { id: site.siteSpaces['Enterprise space'] } })).spaceId;
    expect((await t.gql(q, { id: entSpaceId, key: site.shareKey }, outsider.token)).errors?.[0].extensions?.code).toBe('NOT_FOUND');
  });

  it('a member with a role sees the space of a share link whole, conditions and counters included', async () => {
    const site = sites.get('share_link')!;
    const r = await t.gql(`query($id: ID!) { space(id: $id) { changeRequests revision { allPages { title condition } } } }`, { id: site.handbookSpaceId }, reader.token);
    expect(r.data.space.changeRequests).toBe(1);
    expect(r.data.space.revision.allPages.map((p: any) => p.title)).toEqual(['Open', 'Enterprise page', 'Enterprise child', 'Pro page']);
  });
});

// ------------------------------------------------------------------ visitor tokens

describe('visitor tokens', () => {
  it('a visitor-auth site is not found without a valid token, whatever is wrong with it', async () => {
    const site = sites.get('visitor_auth')!;
    const other = sites.get('public')!;
    const bad = {
      expired: await visitorToken(site, { isEnterprise: true }, { expiresIn: '-5m' }),
      otherSite: await visitorToken(site, { isEnterprise: true }, { audience: other.siteId }),
      otherKey: await new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setAudience(site.siteId).setExpirationTime('10m').sign(crypto.randomBytes(32)),
      algNone: `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url')}.${Buffer.from(JSON.stringify({ aud: site.siteId, exp: Math.floor(Date.now() / 1000) + 600, isEnterprise: true })).toString('base64url')}.`,
      noExp: await new SignJWT({ isEnterprise: true }).setProtectedHeader({ alg: 'HS256' }).setAudience(site.siteId).sign(site.secret),
      oversized: await visitorToken(site, { pad: 'x'.repeat(10_000) }),
      garbage: 'not.a.token',
    };
    for (const [what, token] of Object.entries(bad)) {
      const r = await t.gql(`query($id: ID!, $tok: String) { publishedSite(siteId: $id, visitorToken: $tok) { id } }`, { id: site.siteId, tok: token }, outsider.token);
      expect(r.errors?.[0].extensions?.code, what).toBe('NOT_FOUND');
    }
    const ok = await t.gql(`query($id: ID!, $tok: String) { publishedSite(siteId: $id, visitorToken: $tok) { siteId } }`, { id: site.siteId, tok: await visitorToken(site, {}) }, outsider.token);
    expect(ok.data.publishedSite.siteId).toBe(site.siteId);
  });

  it('signed claims inside a token under `unsigned` do not replace the caller\'s unsigned claims', async () => {
    const site = sites.get('public')!;
    const tok = await visitorToken(site, { unsigned: { plan: 'pro' } });
    const r = await t.gql(`query($id: ID!, $tok: String) { publishedSite(siteId: $id, visitorToken: $tok) { sections { title } } }`, { id: site.siteId, tok }, outsider.token);
    // `unsigned` is the caller's namespace: the token's own `unsigned` is dropped (no Pro section).
    expect(r.data.publishedSite.sections.map((s: any) => s.title)).toEqual(['Docs']);
  });
});
