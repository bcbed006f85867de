// Sections, section groups, site spaces, the deprecated moves and `structure/sort`: one ordering
// model with dense positions per container, over REST (official client + OpenAPI) and GraphQL.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from './helpers.ts';
import { expectValidResponse } from './openapi.ts';
import { createSite, createSpace, startSiteTests, statusOf, type TestUser } from './fixtures/sites.ts';

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

const newSpace = (title?: string) => createSpace(t, title);
const newSite = async (body?: Record<string, unknown>) => (await createSite(t, body)).id as string;
async function addSection(siteId: string, title: string) {
  const r = await t.client().orgs.addSectionToSite(t.org.id, siteId, { spaceId: await newSpace(title), title });
  return r.data;
}

/** Every container of the site holds positions 0..n-1, no gaps, no duplicates. */
async function expectTotalOrder(siteId: string) {
  const [sections, groups, siteSpaces] = await Promise.all([
    t.app.prisma.siteSection.findMany({ where: { siteId } }),
    t.app.prisma.siteSectionGroup.findMany({ where: { siteId } }),
    t.app.prisma.siteSpace.findMany({ where: { siteId } }),
  ]);
  const containers = new Map<string, number[]>();
  const put = (key: string, p: number) => containers.set(key, [...(containers.get(key) ?? []), p]);
  for (const s of sections) put(s.groupId ?? 'root', s.position);
  for (const g of groups) put('root', g.position);
  for (const s of siteSpaces) put(s.sectionId ?? 'root', s.position);
  for (const [key, positions] of containers) {
    expect(positions.sort((a, b) => a - b), `container ${key}`).toEqual([...positions.keys()]);
  }
}

/** The structure as the API reports it: top-level ids, each group's and each section's children. */
async function structureOf(siteId: string) {
  const r = await t.gql(
    `query($id: ID!) { site(id: $id) { structure { type items { __typename id ... on SiteSectionGroup { sections { id } } } }
       sections { id siteSpaces { id } } } }`,
    { id: siteId },
  );
  expect(r.errors).toBeUndefined();
  const root = r.data.site.structure.items.map((i: any) => i.id);
  const groups = Object.fromEntries(r.data.site.structure.items.filter((i: any) => i.__typename === 'SiteSectionGroup').map((g: any) => [g.id, g.sections.map((s: any) => s.id)]));
  const sections = Object.fromEntries(r.data.site.sections.map((s: any) => [s.id, s.siteSpaces.map((x: any) => x.id)]));
  return { type: r.data.site.structure.type, root, groups, sections };
}

describe('sections', () => {
  it('adds a section from a space (201): the section and its first site space', async () => {
    const siteId = await newSite();
    const spaceId = await newSpace('Getting started');
    const res = await t.client().orgs.addSectionToSite(t.org.id, siteId, { spaceId });
    expect(res.status).toBe(201);
    expectValidResponse('POST', '/orgs/{organizationId}/sites/{siteId}/sections', 201, res.data);
    expect(res.data).toMatchObject({ object: 'site-section', title: 'Getting started', path: 'getting-started', default: true });
    expect(res.data.siteSpaces).toHaveLength(1);
    expect(res.data.siteSpaces[0]).toMatchObject({ object: 'site-space', default: true, section: res.data.id, space: { id: spaceId } });
    const second = await t.client().orgs.addSectionToSite(t.org.id, siteId, { spaceId: await newSpace('Getting started'), title: null, icon: 'book' });
    expect(second.data).toMatchObject({ path: 'getting-started-2', default: false, icon: 'book' });
    await expectTotalOrder(siteId);
  });

  it('the first section of a site with root-level site spaces gathers them into a section', async () => {
    const a = await newSpace('Alpha');
    const b = await newSpace('Beta');
    const siteId = await newSite({ title: 'Handbook', spaces: [a, b] });
    const added = await addSection(siteId, 'API reference');
    const s = await structureOf(siteId);
    expect(s.type).toBe('sections');
    expect(s.root).toHaveLength(2);
    expect(s.root[1]).toBe(added.id);
    const list = await t.client().orgs.listSiteSections(t.org.id, siteId);
    expectValidResponse('GET', '/orgs/{organizationId}/sites/{siteId}/sections', 200, list.data);
    expect(list.data.items.map((x) => [x.title, x.default, x.siteSpaces.map((ss) => ss.space.id)])).toEqual([
      ['Handbook', true, [a, b]],
      ['API reference', false, [expect.any(String)]],
    ]);
    await expectTotalOrder(siteId);
  });

  it('lists sections in reading order, paged', async () => {
    const siteId = await newSite();
    const s1 = await addSection(siteId, 'One');
    const s2 = await addSection(siteId, 'Two');
    const s3 = await addSection(siteId, 'Three');
    await t.client().orgs.addSectionGroupToSite(t.org.id, siteId, { title: 'G', sections: [s3.id] });
    await t.client().orgs.sortSiteStructure(t.org.id, siteId, { item: { type: 'site-section-group' as never, id: (await t.client().orgs.listSiteSectionGroups(t.org.id, siteId)).data.items[0].id }, position: { before: { type: 'site-section' as never, id: s1.id } } });
    const all = await t.client().orgs.listSiteSections(t.org.id, siteId);
    expect(all.data.items.map((s) => s.id)).toEqual([s3.id, s1.id, s2.id]);
    expect(all.data.items[0].sectionGroup).toBeDefined();
    const p1 = await t.rest('GET', `${ORG}/sites/${siteId}/sections?limit=2`);
    expect(p1.body.items.map((s: any) => s.id)).toEqual([s3.id, s1.id]);
    expect(p1.body.count).toBe(3);
    const p2 = await t.rest('GET', `${ORG}/sites/${siteId}/sections?limit=2&page=${encodeURIComponent(p1.body.next.page)}`);
    expect(p2.body.items.map((s: any) => s.id)).toEqual([s2.id]);
    expect(p2.body.next).toBeUndefined();
    expectValidResponse('GET', '/orgs/{organizationId}/sites/{siteId}/sections', 200, p2.body);
  });

  it('updates a section; condition omitted keeps it, null removes it', async () => {
    const siteId = await newSite();
    const section = await addSection(siteId, 'Main');
    const extra = (await t.client().orgs.addSpaceToSite(t.org.id, siteId, { spaceId: await newSpace('Variant'), sectionId: section.id })).data;
    const res = await t.client().orgs.updateSiteSectionById(t.org.id, siteId, section.id, {
      title: 'Main docs',
      path: 'main',
      condition: 'visitor.claims.isBeta',
      icon: 'star',
      description: 'The main docs',
      defaultSiteSpace: extra.id,
    });
    expectValidResponse('PATCH', '/orgs/{organizationId}/sites/{siteId}/sections/{siteSectionId}', 200, res.data);
    expect(res.data).toMatchObject({ title: 'Main docs', path: 'main', condition: 'visitor.claims.isBeta', icon: 'star', description: 'The main docs' });
    expect(res.data.siteSpaces.map((s) => [s.id, s.default])).toEqual([
      [section.siteSpaces[0].id, false],
      [extra.id, true],
    ]);
    const kept = await t.rest('PATCH', `${ORG}/sites/${siteId}/sections/${section.id}`, { title: 'Main docs 2' });
    expect(kept.body.condition).toBe('visitor.claims.isBeta');
    const removed = await t.rest('PATCH', `${ORG}/sites/${siteId}/sections/${section.id}`, { condition: null, icon: null, description: null });
    expect(removed.status).toBe(200);
    expect(removed.body.condition).toBeUndefined();
    expect(removed.body.icon).toBeUndefined();
    expect(removed.body.description).toBeUndefined();
  });

  it('400 naming the field (invalid conditions included), 409 on a path clash; nothing changes', async () => {
    const siteId = await newSite();
    const a = await addSection(siteId, 'Alpha');
    const b = await addSection(siteId, 'Beta');
    await t.rest('PATCH', `${ORG}/sites/${siteId}/sections/${a.id}`, { condition: 'visitor.claims.ok' });
    for (const [body, field] of [
      [{ title: 'x' }, 'title'],
      [{ path: '' }, 'path'],
      [{ path: 'has/slash' }, 'path'],
      [{ path: 'p'.repeat(101) }, 'path'],
      [{ condition: '' }, 'condition'],
      [{ condition: 'visitor.claims.a &&' }, 'condition'],
      [{ condition: 'process.exit(1)' }, 'condition'],
      [{ condition: 'visitor.claims.constructor' }, 'condition'],
      [{ condition: 'x'.repeat(1025) }, 'condition'],
      [{ icon: 'i'.repeat(51) }, 'icon'],
      [{ description: 'd'.repeat(257) }, 'description'],
      [{ defaultSiteSpace: b.siteSpaces[0].id }, 'defaultSiteSpace'],
      [{ weird: true }, 'weird'],
    ] as const) {
      const r = await t.rest('PATCH', `${ORG}/sites/${siteId}/sections/${a.id}`, body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error.message).toContain(field);
    }
    const clash = await t.rest('PATCH', `${ORG}/sites/${siteId}/sections/${a.id}`, { path: b.path });
    expect(clash.status).toBe(409);
    expect(clash.body.error.message).toContain('path');
    const after = (await t.client().orgs.listSiteSections(t.org.id, siteId)).data.items.find((s) => s.id === a.id)!;
    expect(after).toMatchObject({ title: 'Alpha', path: 'alpha', condition: 'visitor.claims.ok' });
    expect(after.icon).toBeUndefined();
    const badSpace = await t.rest('POST', `${ORG}/sites/${siteId}/sections`, { spaceId: 'space_missing' });
    expect(badSpace.status).toBe(400);
    expect(badSpace.body.error.message).toContain('spaceId');
    expect((await t.rest('POST', `${ORG}/sites/${siteId}/sections`, { title: 'No space' })).status).toBe(400);
    expect((await t.client().orgs.listSiteSections(t.org.id, siteId)).data.count).toBe(2);
  });

  it('deletes a section (205, then 204); the next one becomes the default', async () => {
    const siteId = await newSite();
    const a = await addSection(siteId, 'Alpha');
    const b = await addSection(siteId, 'Beta');
    const first = await t.rest('DELETE', `${ORG}/sites/${siteId}/sections/${a.id}`);
    expect(first.status).toBe(205);
    expect((await t.rest('DELETE', `${ORG}/sites/${siteId}/sections/${a.id}`)).status).toBe(204);
    const list = await t.client().orgs.listSiteSections(t.org.id, siteId);
    expect(list.data.items.map((s) => [s.id, s.default])).toEqual([[b.id, true]]);
    expect(await t.app.prisma.siteSpace.count({ where: { sectionId: a.id } })).toBe(0);
    await expectTotalOrder(siteId);
    expect((await t.rest('DELETE', `${ORG}/sites/site_missing/sections/${a.id}`)).status).toBe(404);
  });

  it('moves a section (deprecated move) at the top level and into a group', async () => {
    const siteId = await newSite();
    const a = await addSection(siteId, 'Alpha');
    const b = await addSection(siteId, 'Beta');
    const c = await addSection(siteId, 'Gamma');
    const g = (await t.client().orgs.addSectionGroupToSite(t.org.id, siteId, { title: 'G', sections: [c.id] })).data;
    const res = await t.client().orgs.moveSiteSection(t.org.id, siteId, b.id, { position: { before: { type: 'site-section' as never, siteSection: a.id } } });
    expectValidResponse('POST', '/orgs/{organizationId}/sites/{siteId}/sections/{siteSectionId}/move', 200, res.data);
    expect((await structureOf(siteId)).root).toEqual([b.id, a.id, g.id]);
    const into = await t.client().orgs.moveSiteSection(t.org.id, siteId, a.id, { position: { after: { type: 'site-section' as never, siteSection: c.id } } });
    expect(into.data.sectionGroup).toBe(g.id);
    expect((await structureOf(siteId)).groups[g.id]).toEqual([c.id, a.id]);
    const toEnd = await t.rest('POST', `${ORG}/sites/${siteId}/sections/${b.id}/move`, {});
    expect(toEnd.status).toBe(200);
    expect((await structureOf(siteId)).root).toEqual([g.id, b.id]);
    expect((await t.rest('POST', `${ORG}/sites/${siteId}/sections/${b.id}/move`, {})).status).toBe(409);
    const wrongType = await t.rest('POST', `${ORG}/sites/${siteId}/sections/${b.id}/move`, { position: { before: { type: 'site-space', siteSection: a.id } } });
    expect(wrongType.status).toBe(400);
    expect(wrongType.body.error.message).toContain('position.before.type');
    expect((await t.rest('POST', `${ORG}/sites/${siteId}/sections/${b.id}/move`, { position: { before: { type: 'site-section', siteSection: 'sitesc_missing' } } })).status).toBe(400);
    expect((await t.rest('POST', `${ORG}/sites/${siteId}/sections/sitesc_missing/move`, {})).status).toBe(404);
    expect((await t.rest('POST', `${ORG}/sites/${siteId}/sections/${b.id}/move`, {}, reader.token)).status).toBe(403);
    await expectTotalOrder(siteId);
  });

  it('401, 403 for readers on writes, 404 for outsiders', async () => {
    const siteId = await newSite();
    const a = await addSection(siteId, 'Alpha');
    const spaceId = await newSpace();
    expect((await t.rest('POST', `${ORG}/sites/${siteId}/sections`, { spaceId }, null)).status).toBe(401);
    expect(await statusOf(reader.client.orgs.addSectionToSite(t.org.id, siteId, { spaceId }))).toBe(403);
    expect(await statusOf(reader.client.orgs.updateSiteSectionById(t.org.id, siteId, a.id, { title: 'Nope' }))).toBe(403);
    expect((await t.rest('DELETE', `${ORG}/sites/${siteId}/sections/${a.id}`, undefined, reader.token)).status).toBe(403);
    expect(await statusOf(outsider.client.orgs.addSectionToSite(t.org.id, siteId, { spaceId }))).toBe(404);
    expect(await statusOf(outsider.client.orgs.listSiteSections(t.org.id, siteId))).toBe(404);
    expect(await statusOf(reader.client.orgs.listSiteSections(t.org.id, siteId))).toBe(200);
    expect((await t.rest('PATCH', `${ORG}/sites/${siteId}/sections/sitesc_missing`, { title: 'Nope' })).status).toBe(404);
  });
});

describe('section groups', () => {
  it('creates a group with sections (201) in place of the first; lists, updates', async () => {
    const siteId = await newSite();
    const a = await addSection(siteId, 'Alpha');
    const b = await addSection(siteId, 'Beta');
    const c = await addSection(siteId, 'Gamma');
    const res = await t.client().orgs.addSectionGroupToSite(t.org.id, siteId, { title: 'Guides', icon: 'book', sections: [c.id, b.id] });
    expect(res.status).toBe(201);
    expectValidResponse('POST', '/orgs/{organizationId}/sites/{siteId}/section-groups', 201, res.data);
    expect(res.data).toMatchObject({ object: 'site-section-group', title: 'Guides', icon: 'book' });
    expect(res.data.sections.map((s) => [s.id, s.sectionGroup])).toEqual([
      [c.id, res.data.id],
      [b.id, res.data.id],
    ]);
    expect((await structureOf(siteId)).root).toEqual([a.id, res.data.id]);
    const list = await reader.client.orgs.listSiteSectionGroups(t.org.id, siteId);
    expectValidResponse('GET', '/orgs/{organizationId}/sites/{siteId}/section-groups', 200, list.data);
    expect(list.data.items.map((g) => g.id)).toEqual([res.data.id]);
    const upd = await t.client().orgs.updateSiteSectionGroupById(t.org.id, siteId, res.data.id, { title: 'All guides', icon: null });
    expectValidResponse('PATCH', '/orgs/{organizationId}/sites/{siteId}/section-groups/{siteSectionGroupId}', 200, upd.data);
    expect(upd.data.title).toBe('All guides');
    expect(upd.data.icon).toBeUndefined();
    await expectTotalOrder(siteId);
  });

  it('400 naming the field and nothing changes; 403, 404', async () => {
    const siteId = await newSite();
    const a = await addSection(siteId, 'Alpha');
    const groups = () => t.app.prisma.siteSectionGroup.count({ where: { siteId } });
    for (const [body, field] of [
      [{}, 'title'],
      [{ title: '' }, 'title'],
      [{ title: 't'.repeat(101) }, 'title'],
      [{ title: 'G', sections: ['sitesc_missing'] }, 'sections.0'],
      [{ title: 'G', sections: [a.id, a.id] }, 'sections.1'],
      [{ title: 'G', icon: 'i'.repeat(51) }, 'icon'],
    ] as const) {
      const r = await t.rest('POST', `${ORG}/sites/${siteId}/section-groups`, body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error.message).toContain(field);
    }
    expect(await groups()).toBe(0);
    expect(await statusOf(reader.client.orgs.addSectionGroupToSite(t.org.id, siteId, { title: 'G' }))).toBe(403);
    expect(await statusOf(outsider.client.orgs.listSiteSectionGroups(t.org.id, siteId))).toBe(404);
    expect((await t.rest('PATCH', `${ORG}/sites/${siteId}/section-groups/sitesg_missing`, { title: 'G' })).status).toBe(404);
    expect((await t.rest('GET', `${ORG}/sites/${siteId}/section-groups`, undefined, null)).status).toBe(401);
  });

  it('adds (201) and removes (205 / 204) a section; deleting a group returns its sections in its place', async () => {
    const siteId = await newSite();
    const a = await addSection(siteId, 'Alpha');
    const b = await addSection(siteId, 'Beta');
    const c = await addSection(siteId, 'Gamma');
    const g = (await t.client().orgs.addSectionGroupToSite(t.org.id, siteId, { title: 'G', sections: [b.id] })).data;
    const added = await t.client().orgs.addSectionToGroup(t.org.id, siteId, g.id, { sectionId: a.id });
    expect(added.status).toBe(201);
    expectValidResponse('POST', '/orgs/{organizationId}/sites/{siteId}/section-groups/{siteSectionGroupId}/sections', 201, added.data);
    expect(added.data.sections.map((s) => s.id)).toEqual([b.id, a.id]);
    expect((await structureOf(siteId)).root).toEqual([g.id, c.id]);
    const again = await t.rest('POST', `${ORG}/sites/${siteId}/section-groups/${g.id}/sections`, { sectionId: a.id });
    expect(again.status).toBe(201);
    expect((await t.rest('POST', `${ORG}/sites/${siteId}/section-groups/${g.id}/sections`, { sectionId: 'sitesc_missing' })).status).toBe(400);
    await expectTotalOrder(siteId);

    const removed = await t.rest('DELETE', `${ORG}/sites/${siteId}/section-groups/${g.id}/sections/${b.id}`);
    expect(removed.status).toBe(205);
    expect((await t.rest('DELETE', `${ORG}/sites/${siteId}/section-groups/${g.id}/sections/${b.id}`)).status).toBe(204);
    expect((await t.rest('DELETE', `${ORG}/sites/${siteId}/section-groups/sitesg_missing/sections/${b.id}`)).status).toBe(404);
    expect((await structureOf(siteId)).root).toEqual([g.id, b.id, c.id]);
    await expectTotalOrder(siteId);

    await t.client().orgs.addSectionToGroup(t.org.id, siteId, g.id, { sectionId: c.id });
    expect((await structureOf(siteId)).groups[g.id]).toEqual([a.id, c.id]);
    const del = await t.rest('DELETE', `${ORG}/sites/${siteId}/section-groups/${g.id}`);
    expect(del.status).toBe(205);
    expect((await t.rest('DELETE', `${ORG}/sites/${siteId}/section-groups/${g.id}`)).status).toBe(204);
    expect((await structureOf(siteId)).root).toEqual([a.id, c.id, b.id]);
    await expectTotalOrder(siteId);
  });

  it('moves a group (deprecated move)', async () => {
    const siteId = await newSite();
    const a = await addSection(siteId, 'Alpha');
    const b = await addSection(siteId, 'Beta');
    const g = (await t.client().orgs.addSectionGroupToSite(t.org.id, siteId, { title: 'G', sections: [b.id] })).data;
    const res = await t.client().orgs.moveSiteSectionGroup(t.org.id, siteId, g.id, { position: { before: { type: 'site-section' as never, id: a.id } } });
    expectValidResponse('POST', '/orgs/{organizationId}/sites/{siteId}/section-groups/{siteSectionGroupId}/move', 200, res.data);
    expect((await structureOf(siteId)).root).toEqual([g.id, a.id]);
    const noop = await t.rest('POST', `${ORG}/sites/${siteId}/section-groups/${g.id}/move`, { position: { before: { type: 'site-section', id: a.id } } });
    expect(noop.status).toBe(409);
    const inside = await t.rest('POST', `${ORG}/sites/${siteId}/section-groups/${g.id}/move`, { position: { after: { type: 'site-section', id: b.id } } });
    expect(inside.status).toBe(400);
    expect(inside.body.error.message).toContain('position.after');
    const end = await t.rest('POST', `${ORG}/sites/${siteId}/section-groups/${g.id}/move`, {});
    expect(end.status).toBe(200);
    expect((await structureOf(siteId)).root).toEqual([a.id, g.id]);
  });
});

describe('site spaces', () => {
  it('adds a space to a section, to the default section, or at the root level (201)', async () => {
    const flat = await newSite();
    const root = await t.client().orgs.addSpaceToSite(t.org.id, flat, { spaceId: await newSpace('Root space') });
    expect(root.status).toBe(201);
    expectValidResponse('POST', '/orgs/{organizationId}/sites/{siteId}/site-spaces', 201, root.data);
    expect(root.data).toMatchObject({ object: 'site-space', path: 'root-space', default: true, title: 'Root space' });
    expect(root.data.section).toBeUndefined();

    const siteId = await newSite();
    const a = await addSection(siteId, 'Alpha');
    const b = await addSection(siteId, 'Beta');
    const toDefault = await t.client().orgs.addSpaceToSite(t.org.id, siteId, { spaceId: await newSpace('Variant') });
    expect(toDefault.data).toMatchObject({ section: a.id, default: false });
    const toB = await t.client().orgs.addSpaceToSite(t.org.id, siteId, { spaceId: await newSpace('Variant'), sectionId: b.id });
    expect(toB.data).toMatchObject({ section: b.id, path: 'variant' });
    const all = await t.client().orgs.listSiteSpaces(t.org.id, siteId);
    expectValidResponse('GET', '/orgs/{organizationId}/sites/{siteId}/site-spaces', 200, all.data);
    expect(all.data.items.map((s) => s.id)).toEqual([a.siteSpaces[0].id, toDefault.data.id, b.siteSpaces[0].id, toB.data.id]);
    const defaults = await t.client().orgs.listSiteSpaces(t.org.id, siteId, { default: true });
    expect(defaults.data.items.map((s) => s.id)).toEqual([a.siteSpaces[0].id, b.siteSpaces[0].id]);
    const others = await t.rest('GET', `${ORG}/sites/${siteId}/site-spaces?default=false`);
    expect(others.body.items.map((s: any) => s.id)).toEqual([toDefault.data.id, toB.data.id]);
    await expectTotalOrder(siteId);
  });

  it('updates path, condition and space; 409 on clashes; 400 naming the field; nothing changes', async () => {
    const siteId = await newSite();
    const section = await addSection(siteId, 'Main');
    const first = section.siteSpaces[0];
    const other = (await t.client().orgs.addSpaceToSite(t.org.id, siteId, { spaceId: await newSpace('Other'), sectionId: section.id })).data;
    const replacement = await newSpace('Replacement');
    const res = await t.client().orgs.updateSiteSpaceById(t.org.id, siteId, other.id, { path: 'v2', condition: 'visitor.claims.unsigned.beta == true', spaceId: replacement });
    expectValidResponse('PATCH', '/orgs/{organizationId}/sites/{siteId}/site-spaces/{siteSpaceId}', 200, res.data);
    expect(res.data).toMatchObject({ path: 'v2', condition: 'visitor.claims.unsigned.beta == true', space: { id: replacement }, title: 'Replacement' });
    const removed = await t.rest('PATCH', `${ORG}/sites/${siteId}/site-spaces/${other.id}`, { condition: null });
    expect(removed.body.condition).toBeUndefined();
    expect(removed.body.path).toBe('v2');

    expect((await t.rest('PATCH', `${ORG}/sites/${siteId}/site-spaces/${other.id}`, { path: first.path })).status).toBe(409);
    expect((await t.rest('PATCH', `${ORG}/sites/${siteId}/site-spaces/${other.id}`, { spaceId: first.space.id })).status).toBe(409);
    expect((await t.rest('POST', `${ORG}/sites/${siteId}/site-spaces`, { spaceId: replacement, sectionId: section.id })).status).toBe(409);
    for (const [body, field] of [
      [{ path: '' }, 'path'],
      [{ path: '-bad' }, 'path'],
      [{ condition: 'visitor.claims.a ||| b' }, 'condition'],
      [{ condition: 'eval("1")' }, 'condition'],
      [{ spaceId: 'space_missing' }, 'spaceId'],
      [{ sectionId: section.id }, 'sectionId'],
    ] as const) {
      const r = await t.rest('PATCH', `${ORG}/sites/${siteId}/site-spaces/${other.id}`, body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error.message).toContain(field);
    }
    for (const [body, field] of [
      [{}, 'spaceId'],
      [{ spaceId: 'space_missing' }, 'spaceId'],
      [{ spaceId: replacement, sectionId: 'sitesc_missing' }, 'sectionId'],
    ] as const) {
      const r = await t.rest('POST', `${ORG}/sites/${siteId}/site-spaces`, body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error.message).toContain(field);
    }
    const after = await t.app.prisma.siteSpace.findUniqueOrThrow({ where: { id: other.id } });
    expect(after).toMatchObject({ path: 'v2', condition: null, spaceId: replacement });
    expect(await t.app.prisma.siteSpace.count({ where: { siteId } })).toBe(2);
    expect((await t.rest('PATCH', `${ORG}/sites/${siteId}/site-spaces/sitesp_missing`, { path: 'x' })).status).toBe(404);
  });

  it('deletes (205, then 204); the next one becomes the default; 403 / 404 / 401', async () => {
    const siteId = await newSite({ spaces: [await newSpace('One'), await newSpace('Two')] });
    const [one, two] = (await t.client().orgs.listSiteSpaces(t.org.id, siteId)).data.items;
    expect((await t.rest('DELETE', `${ORG}/sites/${siteId}/site-spaces/${one.id}`, undefined, reader.token)).status).toBe(403);
    expect((await t.rest('DELETE', `${ORG}/sites/${siteId}/site-spaces/${one.id}`, undefined, outsider.token)).status).toBe(404);
    expect((await t.rest('DELETE', `${ORG}/sites/${siteId}/site-spaces/${one.id}`, undefined, null)).status).toBe(401);
    expect((await t.rest('DELETE', `${ORG}/sites/${siteId}/site-spaces/${one.id}`)).status).toBe(205);
    expect((await t.rest('DELETE', `${ORG}/sites/${siteId}/site-spaces/${one.id}`)).status).toBe(204);
    const rest = await t.client().orgs.listSiteSpaces(t.org.id, siteId);
    expect(rest.data.items.map((s) => [s.id, s.default])).toEqual([[two.id, true]]);
    expect(((await t.client().orgs.getSiteById(t.org.id, siteId)).data as any).defaultSpace).toBe(two.space.id);
    await expectTotalOrder(siteId);
    expect(await statusOf(reader.client.orgs.addSpaceToSite(t.org.id, siteId, { spaceId: one.space.id }))).toBe(403);
    expect(await statusOf(outsider.client.orgs.listSiteSpaces(t.org.id, siteId))).toBe(404);
  });

  it('moves a site space into another section (deprecated move); defaults follow', async () => {
    const siteId = await newSite();
    const a = await addSection(siteId, 'Alpha');
    const b = await addSection(siteId, 'Beta');
    const aOnly = a.siteSpaces[0];
    const bFirst = b.siteSpaces[0];
    const res = await t.client().orgs.moveSiteSpace(t.org.id, siteId, aOnly.id, { position: { before: { type: 'site-space' as never, siteSpace: bFirst.id } } });
    expectValidResponse('POST', '/orgs/{organizationId}/sites/{siteId}/site-spaces/{siteSpaceId}/move', 200, res.data);
    expect(res.data).toMatchObject({ section: b.id, default: false });
    const s = await structureOf(siteId);
    expect(s.sections[a.id]).toEqual([]);
    expect(s.sections[b.id]).toEqual([aOnly.id, bFirst.id]);
    await expectTotalOrder(siteId);
    const back = await t.rest('POST', `${ORG}/sites/${siteId}/site-spaces/${aOnly.id}/move`, { position: { after: { type: 'site-space', siteSpace: bFirst.id } } });
    expect(back.status).toBe(200);
    expect((await structureOf(siteId)).sections[b.id]).toEqual([bFirst.id, aOnly.id]);
    expect((await t.rest('POST', `${ORG}/sites/${siteId}/site-spaces/${aOnly.id}/move`, { position: { after: { type: 'site-space', siteSpace: bFirst.id } } })).status).toBe(409);
    expect((await t.rest('POST', `${ORG}/sites/${siteId}/site-spaces/${aOnly.id}/move`, { position: { after: { type: 'site-section', siteSection: a.id } } })).status).toBe(400);
    expect((await t.rest('POST', `${ORG}/sites/${siteId}/site-spaces/${aOnly.id}/move`, { position: { after: { type: 'site-space', siteSpace: 'sitesp_missing' } } })).status).toBe(400);
    expect((await t.rest('POST', `${ORG}/sites/${siteId}/site-spaces/sitesp_missing/move`, {})).status).toBe(404);
  });
});

describe('sorting the structure', () => {
  it('PATCH structure/sort moves sections, groups and site spaces; 400 bad anchors, 409 no-ops, 404 missing items', async () => {
    const siteId = await newSite();
    const a = await addSection(siteId, 'Alpha');
    const b = await addSection(siteId, 'Beta');
    const c = await addSection(siteId, 'Gamma');
    const g = (await t.client().orgs.addSectionGroupToSite(t.org.id, siteId, { title: 'G', sections: [c.id] })).data;
    const res = await t.client().orgs.sortSiteStructure(t.org.id, siteId, { item: { type: 'site-section' as never, id: b.id }, position: { before: { type: 'site-section' as never, id: a.id } } });
    expectValidResponse('PATCH', '/orgs/{organizationId}/sites/{siteId}/structure/sort', 200, res.data);
    expect(res.data).toMatchObject({ object: 'site-section', id: b.id });
    expect((await structureOf(siteId)).root).toEqual([b.id, a.id, g.id]);
    // Into a group by anchoring on one of its sections, out of it by anchoring on a top-level item.
    await t.client().orgs.sortSiteStructure(t.org.id, siteId, { item: { type: 'site-section' as never, id: a.id }, position: { after: { type: 'site-section' as never, id: c.id } } });
    let s = await structureOf(siteId);
    expect(s.root).toEqual([b.id, g.id]);
    expect(s.groups[g.id]).toEqual([c.id, a.id]);
    const grp = await t.client().orgs.sortSiteStructure(t.org.id, siteId, { item: { type: 'site-section-group' as never, id: g.id }, position: { before: { type: 'site-section' as never, id: b.id } } });
    expectValidResponse('PATCH', '/orgs/{organizationId}/sites/{siteId}/structure/sort', 200, grp.data);
    expect(grp.data).toMatchObject({ object: 'site-section-group', id: g.id });
    const ss = await t.client().orgs.sortSiteStructure(t.org.id, siteId, { item: { type: 'site-space' as never, id: a.siteSpaces[0].id }, position: { before: { type: 'site-space' as never, id: b.siteSpaces[0].id } } });
    expectValidResponse('PATCH', '/orgs/{organizationId}/sites/{siteId}/structure/sort', 200, ss.data);
    s = await structureOf(siteId);
    expect(s.root).toEqual([g.id, b.id]);
    expect(s.sections[b.id]).toEqual([a.siteSpaces[0].id, b.siteSpaces[0].id]);
    await expectTotalOrder(siteId);

    const sort = (body: unknown) => t.rest('PATCH', `${ORG}/sites/${siteId}/structure/sort`, body);
    const pos = (type: string, id: string) => ({ type, id });
    for (const [body, field] of [
      [{ item: pos('site-section', b.id), position: { before: pos('site-section', 'sitesc_missing') } }, 'position.before'],
      [{ item: pos('site-section', b.id), position: { before: pos('site-section', b.id) } }, 'position.before'],
      [{ item: pos('site-section', b.id), position: { before: pos('site-space', b.siteSpaces[0].id) } }, 'position.before'],
      [{ item: pos('site-section-group', g.id), position: { after: pos('site-section', c.id) } }, 'position.after'],
      [{ item: pos('site-space', b.siteSpaces[0].id), position: { after: pos('site-section', b.id) } }, 'position.after'],
      [{ item: pos('site-section', b.id), position: { before: pos('site-section', a.id), after: pos('site-section', c.id) } }, 'position'],
      [{ item: pos('site-page', b.id), position: {} }, 'item.type'],
      [{ item: pos('site-section', b.id) }, 'position'],
    ] as const) {
      const r = await sort(body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error.message).toContain(field);
    }
    expect((await sort({ item: pos('site-section', b.id), position: { after: pos('site-section-group', g.id) } })).status).toBe(409);
    expect((await sort({ item: pos('site-section', b.id), position: {} })).status).toBe(409);
    expect((await sort({ item: pos('site-section', 'sitesc_missing'), position: {} })).status).toBe(404);
    expect((await t.rest('PATCH', `${ORG}/sites/${siteId}/structure/sort`, { item: pos('site-section', b.id), position: {} }, reader.token)).status).toBe(403);
    expect((await t.rest('PATCH', `${ORG}/sites/${siteId}/structure/sort`, { item: pos('site-section', b.id), position: {} }, outsider.token)).status).toBe(404);
    expect((await t.rest('PATCH', `${ORG}/sites/${siteId}/structure/sort`, { item: pos('site-section', b.id), position: {} }, null)).status).toBe(401);
    const after = await structureOf(siteId);
    expect(after).toEqual(s);
  });

  it('moving and sorting keep a total order with no gaps or duplicates (random sequence against a model)', async () => {
    const siteId = await newSite();
    const sections: string[] = [];
    for (let i = 0; i < 6; i++) sections.push((await addSection(siteId, `S${i}`)).id);
    for (const s of sections.slice(0, 3)) await t.client().orgs.addSpaceToSite(t.org.id, siteId, { spaceId: await newSpace('Extra'), sectionId: s });
    const g1 = (await t.client().orgs.addSectionGroupToSite(t.org.id, siteId, { title: 'G1', sections: [sections[1], sections[2]] })).data.id;
    const g2 = (await t.client().orgs.addSectionGroupToSite(t.org.id, siteId, { title: 'G2', sections: [sections[4]] })).data.id;

    // The model: the API's structure, updated by the rules the ordering model documents.
    const model = await structureOf(siteId);
    expect(model.groups[g1]).toEqual([sections[1], sections[2]]);
    expect(model.groups[g2]).toEqual([sections[4]]);
    const containerOf = (id: string): string[] => {
      if (model.root.includes(id)) return model.root;
      for (const list of Object.values(model.groups) as string[][]) if (list.includes(id)) return list;
      for (const list of Object.values(model.sections) as string[][]) if (list.includes(id)) return list;
      throw new Error(`unknown ${id}`);
    };
    const typeOf = (id: string) => (id.startsWith('sitesg_') ? 'site-section-group' : id.startsWith('sitesc_') ? 'site-section' : 'site-space');
    let seed = 42;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const siteSpaceIds = () => (Object.values(model.sections) as string[][]).flat();
    const sectionIds = () => Object.keys(model.sections);
    const groupIds = () => Object.keys(model.groups);

    const outcomes = { moved: 0, noop: 0, clash: 0 };
    for (let step = 0; step < 40; step++) {
      const kind = rand(3);
      let item: string;
      let anchorPool: string[];
      if (kind === 0) {
        item = sectionIds()[rand(sectionIds().length)];
        anchorPool = [...sectionIds(), ...groupIds()].filter((x) => x !== item);
      } else if (kind === 1) {
        item = groupIds()[rand(groupIds().length)];
        anchorPool = model.root.filter((x: string) => x !== item);
      } else {
        item = siteSpaceIds()[rand(siteSpaceIds().length)];
        anchorPool = siteSpaceIds().filter((x) => x !== item);
      }
      const anchor = anchorPool[rand(anchorPool.length)];
      const where = rand(2) === 0 ? 'before' : 'after';
      const from = containerOf(item);
      const to = containerOf(anchor);
      const target = to.filter((x) => x !== item);
      const index = target.indexOf(anchor) + (where === 'after' ? 1 : 0);
      const expected = [...target.slice(0, index), item, ...target.slice(index)];
      const r = await t.rest('PATCH', `${ORG}/sites/${siteId}/structure/sort`, { item: { type: typeOf(item), id: item }, position: { [where]: { type: typeOf(anchor), id: anchor } } });
      if (from === to && expected.every((x, i) => x === from[i])) {
        expect(r.status, `step ${step}`).toBe(409);
        outcomes.noop++;
      } else if (r.status === 409 && typeOf(item) === 'site-space') {
        // A site space whose path (or space) already exists in the target section stays put.
        expect(r.body.error.message).toMatch(/path|space/);
        outcomes.clash++;
      } else {
        outcomes.moved++;
        expect(r.status, `step ${step}: ${JSON.stringify(r.body)}`).toBe(200);
        if (from !== to) from.splice(from.indexOf(item), 1);
        to.splice(0, to.length, ...expected);
      }
      await expectTotalOrder(siteId);
      const actual = await structureOf(siteId);
      expect(actual.root, `step ${step}`).toEqual(model.root);
      expect(actual.groups, `step ${step}`).toEqual(model.groups);
      expect(actual.sections, `step ${step}`).toEqual(model.sections);
    }
    expect(outcomes.moved).toBeGreaterThan(25);
  }, 60_000);
});

describe('spaces leaving for good', () => {
  it('removeSpacesFromSites keeps positions dense and defaults valid', async () => {
    const { removeSpacesFromSites } = await import('../src/domain/site-structure.ts');
    const siteId = await newSite();
    const a = await addSection(siteId, 'Alpha');
    const extra = (await t.client().orgs.addSpaceToSite(t.org.id, siteId, { spaceId: await newSpace('Extra'), sectionId: a.id })).data;
    const gone = a.siteSpaces[0].space.id;
    const removed = await t.app.prisma.$transaction((tx) => removeSpacesFromSites(tx, [gone]));
    expect(removed).toBe(1);
    const list = await t.client().orgs.listSiteSpaces(t.org.id, siteId);
    expect(list.data.items.map((s) => [s.id, s.default])).toEqual([[extra.id, true]]);
    await expectTotalOrder(siteId);
  });
});

describe('concurrent structural writes', () => {
  it('serialize on the site: concurrent adds and sorts never duplicate a position', async () => {
    const siteId = await newSite();
    const first = await addSection(siteId, 'First');
    const spaces = await Promise.all(Array.from({ length: 6 }, (_, i) => newSpace(`Concurrent ${i}`)));
    const results = await Promise.all([
      ...spaces.map((spaceId) => t.rest('POST', `${ORG}/sites/${siteId}/sections`, { spaceId })),
      t.rest('PATCH', `${ORG}/sites/${siteId}/structure/sort`, { item: { type: 'site-section', id: first.id }, position: {} }),
    ]);
    expect(results.slice(0, 6).map((r) => r.status)).toEqual(Array(6).fill(201));
    await expectTotalOrder(siteId);
    expect((await structureOf(siteId)).root).toHaveLength(7);
  });
});
