// Cross-area rules: a share link's key opens a space of a published share-link site, and the
// purge of deleted spaces takes them out of sites without leaving gaps.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers.ts';
import { DAY_MS } from '../src/lib/clock.ts';
import { purgeDeletedSpaces } from '../src/domain/cleanup.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.close();
});

async function siteWithSpaces(titles: string[], visibility = 'share-link') {
  const ids: string[] = [];
  for (const title of titles) ids.push((await t.rest('POST', `/v1/orgs/${t.org.id}/spaces`, { title })).body.id);
  const site = await t.rest('POST', `/v1/orgs/${t.org.id}/sites`, { title: 'Shared docs', visibility, spaces: ids });
  expect(site.status).toBe(201);
  return { siteId: site.body.id as string, spaceIds: ids };
}

describe('GET /v1/spaces/{id}?shareKey', () => {
  it('lets anyone with an active key of a published share-link site read the space, and stops at once when deactivated', async () => {
    const { siteId, spaceIds } = await siteWithSpaces(['Secret manual']);
    expect((await t.rest('POST', `/v1/orgs/${t.org.id}/sites/${siteId}/publish`)).status).toBe(200);
    const link = await t.rest('POST', `/v1/orgs/${t.org.id}/sites/${siteId}/share-links`, { name: 'partners' });
    const key = link.body.key ?? (await t.app.prisma.shareLink.findUniqueOrThrow({ where: { id: link.body.id } })).key;
    const outsider = await t.createUser(undefined);
    const url = `/v1/spaces/${spaceIds[0]}`;
    expect((await t.rest('GET', url, undefined, outsider.token)).status).toBe(404);
    expect((await t.rest('GET', `${url}?shareKey=${encodeURIComponent(key)}`, undefined, outsider.token)).status).toBe(200);
    expect((await t.rest('GET', `${url}?shareKey=shk_wrong`, undefined, outsider.token)).status).toBe(404);
    await t.rest('PATCH', `/v1/orgs/${t.org.id}/sites/${siteId}/share-links/${link.body.id}`, { active: false });
    expect((await t.rest('GET', `${url}?shareKey=${encodeURIComponent(key)}`, undefined, outsider.token)).status).toBe(404);
  });
});

describe('purging deleted spaces', () => {
  it('removes them from sites, keeping the remaining site spaces densely ordered', async () => {
    const { siteId, spaceIds } = await siteWithSpaces(['One', 'Two', 'Three'], 'public');
    expect((await t.rest('DELETE', `/v1/spaces/${spaceIds[1]}`)).status).toBe(205);
    t.clock.advance(8 * DAY_MS);
    try {
      expect(await purgeDeletedSpaces({ prisma: t.app.prisma, clock: t.clock, services: t.app.services, log: t.app.log })).toBeGreaterThanOrEqual(1);
    } finally {
      t.clock.reset();
    }
    const rows = await t.app.prisma.siteSpace.findMany({ where: { siteId }, orderBy: { position: 'asc' } });
    expect(rows.map((r) => r.spaceId)).toEqual([spaceIds[0], spaceIds[2]]);
    const positions = new Map<string, number[]>();
    for (const r of rows) positions.set(r.sectionId ?? 'root', [...(positions.get(r.sectionId ?? 'root') ?? []), r.position]);
    for (const list of positions.values()) expect(list).toEqual(list.map((_, i) => i));
    const site = await t.rest('GET', `/v1/orgs/${t.org.id}/sites/${siteId}`);
    expect(site.body.siteSpaces).toBe(2);
  });
});
