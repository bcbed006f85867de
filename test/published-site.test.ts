// The flagship use case: a front end reads a published site's whole structure — sections, groups,
// site spaces, each space and its page tree to any depth — in ONE GraphQL request, with a number
// of SQL statements that does not grow with the size of the site.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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

const PAGES = `pages { id title path pages { id title path pages { id title path pages { id title path } } } }`;
const SITE_SPACE = `id path title default condition space { id title revision { id ${PAGES} } }`;
const SECTION = `id title path condition default group { id title } siteSpaces { ${SITE_SPACE} }`;
const STRUCTURE_QUERY = `query($id: ID!, $shareKey: String, $visitor: JSON) {
  publishedSite(siteId: $id, shareKey: $shareKey, visitor: $visitor) {
    id title published
    structure {
      type
      items {
        __typename id position
        ... on SiteSection { ${SECTION} }
        ... on SiteSectionGroup { title sections { ${SECTION} } }
        ... on SiteSpace { ${SITE_SPACE} }
      }
    }
    sections { id title group { id } }
    sectionGroups { id title sections { id } }
  }
}`;

/** A space with four pages three levels deep (Intro; Guide → Setup → Advanced), written with applyChanges. */
async function seedSpace(tx: Tx, title: string, position: number): Promise<string> {
  const spaceId = newId('Space');
  await tx.space.create({ data: { id: spaceId, organizationId: t.org.id, title, position } });
  const base = { spaceId, createdById: t.adminUser.id, storage: t.app.services.storage };
  const rev0 = await createInitialRevision(tx, spaceId, t.adminUser.id);
  const b1 = await applyChanges(tx, {
    ...base,
    baseRevisionId: rev0.id,
    changes: [
      { operation: 'insert_page', title: 'Intro', document: { markdown: `Welcome to ${title}.` } },
      { operation: 'insert_page', title: 'Guide', document: { markdown: 'How to.' } },
    ],
  });
  const b2 = await applyChanges(tx, { ...base, baseRevisionId: b1.revision.id, changes: [{ operation: 'insert_page', into: b1.outcomes[1].pageId, title: 'Setup', document: { markdown: 'Set up.' } }] });
  const b3 = await applyChanges(tx, { ...base, baseRevisionId: b2.revision.id, changes: [{ operation: 'insert_page', into: b2.outcomes[0].pageId, title: 'Advanced', document: { markdown: 'More.' } }] });
  await tx.space.update({ where: { id: spaceId }, data: { revisionId: b3.revision.id } });
  return spaceId;
}

/**
 * A published site of `sections` sections (`grouped` of them in `groups` groups, the rest at the
 * top level) and `siteSpaces` site spaces spread over the sections, written with createMany.
 */
async function seedSite(opts: { sections: number; groups: number; grouped: number; siteSpaces: number; conditions?: Record<number, string> }) {
  return t.app.prisma.$transaction(
    async (tx) => {
      const siteId = newId('Site');
      const spaceIds: string[] = [];
      for (let i = 0; i < opts.siteSpaces; i++) spaceIds.push(await seedSpace(tx, `Space ${i + 1}`, i));
      const groups = Array.from({ length: opts.groups }, (_, i) => ({ id: newId('SiteSectionGroup'), siteId, title: `Group ${i + 1}`, position: 0 }));
      const sections = Array.from({ length: opts.sections }, (_, i) => ({
        id: newId('SiteSection'),
        siteId,
        title: `Section ${i + 1}`,
        path: `section-${i + 1}`,
        groupId: null as string | null,
        position: 0,
        condition: opts.conditions?.[i] ?? null,
        defaultSiteSpaceId: null as string | null,
      }));
      // The first `grouped` sections go round-robin into the groups; groups and the other
      // sections alternate at the top level.
      const perGroup = new Map(groups.map((g) => [g.id, 0]));
      sections.slice(0, opts.grouped).forEach((s, i) => {
        const g = groups[i % groups.length];
        s.groupId = g.id;
        s.position = perGroup.get(g.id)!;
        perGroup.set(g.id, s.position + 1);
      });
      const root = [...groups.map((g) => ({ kind: 'g', row: g })), ...sections.slice(opts.grouped).map((s) => ({ kind: 's', row: s }))];
      root.forEach((r, i) => (r.row.position = i));
      const siteSpaces = spaceIds.map((spaceId, i) => ({ id: newId('SiteSpace'), siteId, sectionId: sections[i % sections.length].id, spaceId, path: `space-${i + 1}`, position: 0 }));
      const perSection = new Map<string, number>();
      for (const ss of siteSpaces) {
        ss.position = perSection.get(ss.sectionId) ?? 0;
        perSection.set(ss.sectionId, ss.position + 1);
        const section = sections.find((s) => s.id === ss.sectionId)!;
        section.defaultSiteSpaceId ??= ss.id;
      }
      await tx.site.create({ data: { id: siteId, organizationId: t.org.id, title: `Site ${opts.sections}`, published: true, defaultSiteSectionId: sections[opts.grouped]?.id ?? sections[0].id } });
      await tx.siteSectionGroup.createMany({ data: groups });
      await tx.siteSection.createMany({ data: sections });
      await tx.siteSpace.createMany({ data: siteSpaces });
      return { siteId, sections, groups, siteSpaces };
    },
    { timeout: 120_000 },
  );
}

function countSiteSpaces(structure: any): number {
  let n = 0;
  for (const item of structure.items) {
    if (item.__typename === 'SiteSection') n += item.siteSpaces.length;
    if (item.__typename === 'SiteSectionGroup') for (const s of item.sections) n += s.siteSpaces.length;
    if (item.__typename === 'SiteSpace') n += 1;
  }
  return n;
}

describe('the whole published structure in one request', () => {
  let small: Awaited<ReturnType<typeof seedSite>>;
  let big: Awaited<ReturnType<typeof seedSite>>;

  beforeAll(async () => {
    small = await seedSite({ sections: 3, groups: 2, grouped: 3, siteSpaces: 5 });
    big = await seedSite({ sections: 30, groups: 3, grouped: 15, siteSpaces: 100 });
  }, 180_000);

  it('returns sections, groups, site spaces and page trees to any depth', async () => {
    const r = await t.gql(STRUCTURE_QUERY, { id: big.siteId });
    expect(r.errors).toBeUndefined();
    const site = r.data.publishedSite;
    expect(site.structure.type).toBe('sections');
    expect(site.structure.items).toHaveLength(3 + 15);
    expect(site.structure.items.map((i: any) => i.position)).toEqual([...Array(18).keys()]);
    expect(countSiteSpaces(site.structure)).toBe(100);
    expect(site.sections).toHaveLength(30);
    expect(site.sectionGroups.map((g: any) => g.sections.length)).toEqual([5, 5, 5]);
    const firstSection = site.structure.items.find((i: any) => i.__typename === 'SiteSection');
    const tree = firstSection.siteSpaces[0].space.revision.pages;
    expect(tree.map((p: any) => p.title)).toEqual(['Intro', 'Guide']);
    expect(tree[1].pages[0].title).toBe('Setup');
    expect(tree[1].pages[0].pages[0]).toMatchObject({ title: 'Advanced', path: 'guide/setup/advanced' });
  });

  it('costs the same number of SQL statements for 3 sections / 5 site spaces as for 30 / 100', async () => {
    // Warm up (schema caches, prepared plans) so both measurements see the same state.
    await t.gql(STRUCTURE_QUERY, { id: small.siteId });
    const a = await t.countQueries(() => t.gql(STRUCTURE_QUERY, { id: small.siteId }));
    const b = await t.countQueries(() => t.gql(STRUCTURE_QUERY, { id: big.siteId }));
    expect(a.result.errors).toBeUndefined();
    expect(b.result.errors).toBeUndefined();
    expect(countSiteSpaces(a.result.data.publishedSite.structure)).toBe(5);
    expect(countSiteSpaces(b.result.data.publishedSite.structure)).toBe(100);
    console.log(`statements: small site ${a.count}, big site ${b.count}\n${b.statements.map((s) => s.slice(0, 160)).join('\n')}`);
    expect(b.count).toBe(a.count);
    // Token, the whole structure (one statement), membership, revisions, page versions.
    expect(b.count).toBeLessThanOrEqual(6);

    // The REST published view (full Space objects with counters and permissions) is constant too.
    const ra = await t.countQueries(() => t.rest('GET', `/v1/orgs/${t.org.id}/sites/${small.siteId}/published`));
    const rb = await t.countQueries(() => t.rest('GET', `/v1/orgs/${t.org.id}/sites/${big.siteId}/published`));
    expect(ra.result.status).toBe(200);
    expect(rb.result.status).toBe(200);
    console.log(`REST published view: small site ${ra.count}, big site ${rb.count}`);
    expect(rb.count).toBe(ra.count);
    const rl = await t.countQueries(() => t.rest('GET', `/v1/orgs/${t.org.id}/sites/${big.siteId}/site-spaces?limit=1000`));
    expect(rl.result.status).toBe(200);
    expect(rl.result.body.items).toHaveLength(100);
    const rs = await t.rest('GET', `/v1/orgs/${t.org.id}/sites/${big.siteId}/sections?limit=1000`);
    expect(rs.status).toBe(200);
    expect(rs.body.items).toHaveLength(30);
  });
});

describe('adaptive content: a visitor sees what its claims allow', () => {
  let siteId: string;
  let ids: Record<string, string>;

  beforeAll(async () => {
    // Sections: Pro (unsigned.plan == "pro") in a group, Beta (isBeta) and Open; Pro's second
    // site space is for admins only.
    const seeded = await seedSite({
      sections: 3,
      groups: 1,
      grouped: 1,
      siteSpaces: 4,
      conditions: { 0: 'visitor.claims.unsigned.plan == "pro"', 1: 'visitor.claims.isBeta' },
    });
    siteId = seeded.siteId;
    const [pro, beta, open] = seeded.sections;
    const proSecond = seeded.siteSpaces.find((s) => s.sectionId === pro.id && s.position === 1)!;
    await t.app.prisma.siteSpace.update({ where: { id: proSecond.id }, data: { condition: 'visitor.claims.isAdmin === true' } });
    ids = { pro: pro.id, beta: beta.id, open: open.id, group: seeded.groups[0].id, adminOnly: proSecond.id };
  });

  const query = `query($id: ID!, $visitor: JSON) { publishedSite(siteId: $id, visitor: $visitor) {
    structure { items { __typename id ... on SiteSectionGroup { sections { id siteSpaces { id } } } ... on SiteSection { siteSpaces { id } } } }
    sections { id } sectionGroups { id }
  } }`;
  const visible = async (visitor?: unknown) => {
    const r = await t.gql(query, { id: siteId, visitor });
    expect(r.errors).toBeUndefined();
    const s = r.data.publishedSite;
    // The items themselves (a filtered view answers `<id>~<view>`, see test/unique-ids.test.ts).
    const own = (x: any) => String(x.id).split('~')[0];
    const siteSpaces = s.structure.items.flatMap((i: any) => (i.sections ?? [i]).flatMap((x: any) => x.siteSpaces.map(own)));
    return { top: s.structure.items.map(own), sections: s.sections.map(own), groups: s.sectionGroups.map(own), siteSpaces };
  };

  it('without a visitor, everything is returned with its condition', async () => {
    const all = await visible();
    expect(all.top).toEqual([ids.group, ids.beta, ids.open]);
    expect(all.sections).toEqual([ids.pro, ids.beta, ids.open]);
    expect(all.siteSpaces).toContain(ids.adminOnly);
  });

  it('a visitor without a claim does not see what is conditioned on it', async () => {
    const anonymous = await visible({ claims: {} });
    expect(anonymous.top).toEqual([ids.open]);
    expect(anonymous.sections).toEqual([ids.open]);
    expect(anonymous.groups).toEqual([]);
    const beta = await visible({ claims: { isBeta: true } });
    expect(beta.top).toEqual([ids.beta, ids.open]);
    const pro = await visible({ claims: { unsigned: { plan: 'pro' } } });
    expect(pro.top).toEqual([ids.group, ids.open]);
    expect(pro.groups).toEqual([ids.group]);
    expect(pro.siteSpaces).not.toContain(ids.adminOnly);
    const admin = await visible({ claims: { isAdmin: true, isBeta: true, unsigned: { plan: 'pro' } } });
    expect(admin.top).toEqual([ids.group, ids.beta, ids.open]);
    expect(admin.siteSpaces).toContain(ids.adminOnly);
    const almost = await visible({ claims: { isAdmin: 'true' } });
    expect(almost.siteSpaces).not.toContain(ids.adminOnly);
  });

  it('members preview a visitor through site(id:, visitor:) too; bad visitors are BAD_REQUEST', async () => {
    const r = await t.gql(`query($id: ID!, $v: JSON) { site(id: $id, visitor: $v) { sections { id } } }`, { id: siteId, v: { claims: { isBeta: true } } });
    expect(r.data.site.sections.map((s: any) => s.id.split('~')[0])).toEqual([ids.beta, ids.open]);
    for (const v of ['beta', { claims: 5 }, { roles: [] }]) {
      const bad = await t.gql(`query($id: ID!, $v: JSON) { publishedSite(siteId: $id, visitor: $v) { id } }`, { id: siteId, v });
      expect(bad.errors?.[0].extensions?.code, JSON.stringify(v)).toBe('BAD_REQUEST');
      expect(String(bad.errors?.[0].extensions?.field)).toMatch(/^visitor/);
    }
  });

  it('filtering by a visitor costs no extra statement', async () => {
    await t.gql(STRUCTURE_QUERY, { id: siteId });
    const plain = await t.countQueries(() => t.gql(STRUCTURE_QUERY, { id: siteId }));
    const filtered = await t.countQueries(() => t.gql(STRUCTURE_QUERY, { id: siteId, visitor: { claims: { isBeta: true } } }));
    expect(filtered.result.errors).toBeUndefined();
    expect(filtered.count).toBe(plain.count);
  });
});

describe('a group\'s sections are the site\'s own section rows', () => {
  it('asks different fields of grouped and top-level sections and gets each, in the same number of statements', async () => {
    const { siteId, sections } = await seedSite({ sections: 4, groups: 2, grouped: 2, siteSpaces: 4 });
    const mixed = `query($id: ID!) { publishedSite(siteId: $id) { structure { items {
      __typename id
      ... on SiteSection { title }
      ... on SiteSectionGroup { sections { id path siteSpaces { path space { title } } } }
    } } } }`;
    await t.gql(mixed, { id: siteId });
    const plain = await t.countQueries(() => t.gql(STRUCTURE_QUERY, { id: siteId }));
    const r = await t.countQueries(() => t.gql(mixed, { id: siteId }));
    expect(r.result.errors).toBeUndefined();
    const items = r.result.data.publishedSite.structure.items;
    const grouped = items.filter((i: any) => i.__typename === 'SiteSectionGroup').flatMap((g: any) => g.sections);
    expect(grouped.map((s: any) => s.path).sort()).toEqual([sections[0].path, sections[1].path].sort());
    for (const s of grouped) {
      expect(s.siteSpaces).toHaveLength(1);
      expect(s.siteSpaces[0].space.title).toMatch(/^Space \d$/);
    }
    const top = items.filter((i: any) => i.__typename === 'SiteSection');
    expect(top.map((s: any) => s.title)).toEqual(['Section 3', 'Section 4']);
    expect(top[0]).not.toHaveProperty('siteSpaces');
    expect(r.count).toBeLessThanOrEqual(plain.count);
  });
});

describe('freshness and the REST view', () => {
  it('a content change is visible at once (the space points at a new revision)', async () => {
    const { siteId, siteSpaces } = await seedSite({ sections: 1, groups: 0, grouped: 0, siteSpaces: 1 });
    const titles = async () => {
      const r = await t.gql(STRUCTURE_QUERY, { id: siteId });
      return r.data.publishedSite.structure.items[0].siteSpaces[0].space.revision.pages.map((p: any) => p.title);
    };
    expect(await titles()).toEqual(['Intro', 'Guide']);
    const spaceId = siteSpaces[0].spaceId;
    await t.app.prisma.$transaction(async (tx) => {
      const space = await tx.space.findUniqueOrThrow({ where: { id: spaceId } });
      const { revision } = await applyChanges(tx, {
        spaceId,
        baseRevisionId: space.revisionId!,
        changes: [{ operation: 'insert_page', title: 'Changelog', document: { markdown: 'New.' } }],
        createdById: t.adminUser.id,
        storage: t.app.services.storage,
      });
      await tx.space.update({ where: { id: spaceId }, data: { revisionId: revision.id } });
    });
    expect(await titles()).toEqual(['Intro', 'Guide', 'Changelog']);
  });

  it('the REST published view of the big structure validates against the OpenAPI document', async () => {
    const { siteId } = await seedSite({ sections: 6, groups: 2, grouped: 4, siteSpaces: 12 });
    const r = await t.client().orgs.getPublishedContentSite(t.org.id, siteId);
    expectValidResponse('GET', '/orgs/{organizationId}/sites/{siteId}/published', 200, r.data);
    expect(r.data.structure.type).toBe('sections');
    expect(r.data.structure.structure.map((i: any) => i.object)).toEqual(['site-section-group', 'site-section-group', 'site-section', 'site-section']);
  });
});
