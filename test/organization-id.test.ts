// `organizationId` is optional on the GraphQL inputs whose object has its own id: omitted, the
// object's own organization is used; given (as REST paths do), the object must belong to it, else
// NOT_FOUND. Also the enum values and deprecated move anchors GraphQL takes in the model's words.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers.ts';

let t: TestApp;
let otherOrg: string;
let outsider: Awaited<ReturnType<TestApp['createUser']>>;

beforeAll(async () => {
  t = await startTestApp();
  // The admin administers this second organization too, so a wrong `organizationId` is one they may see.
  otherOrg = (await t.gql(`mutation { createOrganization(input: { title: "Other" }) { id } }`)).data.createOrganization.id;
  outsider = await t.createUser(undefined);
});
afterAll(async () => {
  await t?.close();
});

const codeOf = (r: { errors?: Array<{ extensions?: { code?: string } }> }) => r.errors?.[0]?.extensions?.code;

async function newSite(title = 'Docs') {
  const space = await t.rest('POST', `/v1/orgs/${t.org.id}/spaces`, { title: 'Guide' });
  const site = await t.rest('POST', `/v1/orgs/${t.org.id}/sites`, { title, spaces: [space.body.id] });
  expect(site.status).toBe(201);
  return { siteId: site.body.id as string, spaceId: space.body.id as string };
}

describe('sites without organizationId', () => {
  const UPDATE = `mutation($input: UpdateSiteInput!) { updateSite(input: $input) { site { id title visibility } } }`;

  it('updateSite acts in the site’s own organization; a wrong organizationId is NOT_FOUND, as is a wrong REST path', async () => {
    const { siteId } = await newSite();
    const ok = await t.gql(UPDATE, { input: { siteId, title: 'Renamed', visibility: 'share_link' } });
    expect(ok.errors).toBeUndefined();
    expect(ok.data.updateSite.site).toEqual({ id: siteId, title: 'Renamed', visibility: 'share_link' });

    const wrong = await t.gql(UPDATE, { input: { organizationId: otherOrg, siteId, title: 'Nope' } });
    expect(codeOf(wrong)).toBe('NOT_FOUND');
    const rest = await t.rest('PATCH', `/v1/orgs/${otherOrg}/sites/${siteId}`, { title: 'Nope' });
    expect(rest.status).toBe(404);
    expect((await t.app.prisma.site.findUniqueOrThrow({ where: { id: siteId } })).title).toBe('Renamed');
    // REST still speaks the contract's spelling.
    expect((await t.rest('GET', `/v1/orgs/${t.org.id}/sites/${siteId}`)).body.visibility).toBe('share-link');
  });

  it('an outsider omitting organizationId gets NOT_FOUND; deleting a site that does not exist is deleted: false', async () => {
    const { siteId } = await newSite();
    const r = await t.gql(UPDATE, { input: { siteId, title: 'Mine' } }, outsider.token);
    expect(codeOf(r)).toBe('NOT_FOUND');
    const DELETE = `mutation($input: SiteKeyInput!) { deleteSite(input: $input) { deleted } }`;
    expect((await t.gql(DELETE, { input: { siteId } }, outsider.token)).errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    expect((await t.gql(DELETE, { input: { siteId } })).data.deleteSite.deleted).toBe(true);
    expect((await t.gql(DELETE, { input: { siteId } })).data.deleteSite.deleted).toBe(false);
    expect(codeOf(await t.gql(DELETE, { input: { siteId } }, null))).toBe('UNAUTHENTICATED');
  });

  it('sections and site spaces: add and move without organizationId; the deprecated moves keep their anchor types', async () => {
    const { siteId, spaceId } = await newSite();
    const ADD = `mutation($input: AddSectionToSiteInput!) { addSectionToSite(input: $input) { section { id } } }`;
    const a = (await t.gql(ADD, { input: { siteId, spaceId, title: 'Alpha' } })).data.addSectionToSite.section.id;
    const b = (await t.gql(ADD, { input: { siteId, spaceId, title: 'Beta' } })).data.addSectionToSite.section.id;
    const MOVE = `mutation($input: MoveSiteStructureItemInput!) { moveSiteSection(input: $input) { section { id } } }`;
    const moved = await t.gql(MOVE, { input: { siteId, id: b, position: { before: { type: 'site_section', id: a } } } });
    expect(moved.errors).toBeUndefined();
    const order = await t.app.prisma.siteSection.findMany({ where: { siteId, id: { in: [a, b] } }, orderBy: { position: 'asc' }, select: { id: true } });
    expect(order.map((s) => s.id)).toEqual([b, a]);

    const group = await t.gql(`mutation($input: AddSectionGroupToSiteInput!) { addSectionGroupToSite(input: $input) { group { id } } }`, {
      input: { siteId, title: 'Group' },
    });
    const badAnchor = await t.gql(MOVE, { input: { siteId, id: b, position: { after: { type: 'site_section_group', id: group.data.addSectionGroupToSite.group.id } } } });
    expect(codeOf(badAnchor)).toBe('BAD_REQUEST');
    expect(badAnchor.errors![0].message).toMatch(/^position\.after\.type: must be site_section/);

    const SORT = `mutation($input: SortSiteStructureInput!) { sortSiteStructure(input: $input) { item { ... on SiteSection { id } } } }`;
    const wrongOrg = await t.gql(SORT, { input: { organizationId: otherOrg, siteId, item: { type: 'site_section', id: a }, position: { before: { type: 'site_section', id: b } } } });
    expect(codeOf(wrongOrg)).toBe('NOT_FOUND');
    const sorted = await t.gql(SORT, { input: { siteId, item: { type: 'site_section', id: a }, position: { before: { type: 'site_section', id: b } } } });
    expect(sorted.data.sortSiteStructure.item).toEqual({ id: a });
  });
});

describe('teams, SAML providers and translation settings without organizationId', () => {
  it('updateTeam and deleteTeam act in the team’s organization; a wrong organizationId is NOT_FOUND', async () => {
    const team = (await t.gql(`mutation { createTeam(input: { organizationId: "${t.org.id}", title: "Writers" }) { team { id } } }`)).data.createTeam.team.id;
    const UPDATE = `mutation($input: UpdateTeamInput!) { updateTeam(input: $input) { team { id title } } }`;
    expect((await t.gql(UPDATE, { input: { teamId: team, title: 'Editors' } })).data.updateTeam.team).toEqual({ id: team, title: 'Editors' });
    expect(codeOf(await t.gql(UPDATE, { input: { organizationId: otherOrg, teamId: team, title: 'Nope' } }))).toBe('NOT_FOUND');
    expect(codeOf(await t.gql(UPDATE, { input: { teamId: 'team_missing', title: 'Nope' } }))).toBe('NOT_FOUND');
    expect((await t.app.prisma.team.findUniqueOrThrow({ where: { id: team } })).title).toBe('Editors');
    const DELETE = `mutation($input: DeleteTeamInput!) { deleteTeam(input: $input) { deleted } }`;
    expect((await t.gql(DELETE, { input: { teamId: team } })).data.deleteTeam.deleted).toBe(true);
    expect((await t.gql(DELETE, { input: { teamId: team } })).data.deleteTeam.deleted).toBe(false);
  });

  it('updateSamlProvider: the provider’s organization when omitted, NOT_FOUND under another', async () => {
    const created = await t.gql(`mutation { createSamlProvider(input: { organizationId: "${t.org.id}", label: "Okta" }) { samlProvider { id } } }`);
    const id = created.data.createSamlProvider.samlProvider.id;
    const UPDATE = `mutation($input: UpdateSamlProviderInput!) { updateSamlProvider(input: $input) { samlProvider { id label } } }`;
    expect((await t.gql(UPDATE, { input: { id, label: 'Okta 2' } })).data.updateSamlProvider.samlProvider).toEqual({ id, label: 'Okta 2' });
    expect(codeOf(await t.gql(UPDATE, { input: { organizationId: otherOrg, id, label: 'Nope' } }))).toBe('NOT_FOUND');
    expect(codeOf(await t.gql(UPDATE, { input: { id, label: 'Mine' } }, outsider.token))).toBe('NOT_FOUND');
  });

  it('translation settings: update and delete without organizationId; a wrong one is NOT_FOUND', async () => {
    const created = await t.gql(`mutation { createTranslationSettings(input: { organizationId: "${t.org.id}", title: "French" }) { translationSettings { id } } }`);
    const id = created.data.createTranslationSettings.translationSettings.id;
    const UPDATE = `mutation($input: UpdateTranslationSettingsInput!) { updateTranslationSettings(input: $input) { translationSettings { id title } } }`;
    expect((await t.gql(UPDATE, { input: { id, title: 'Français' } })).data.updateTranslationSettings.translationSettings).toEqual({ id, title: 'Français' });
    expect(codeOf(await t.gql(UPDATE, { input: { organizationId: otherOrg, id, title: 'Nope' } }))).toBe('NOT_FOUND');
    const rest = await t.rest('PUT', `/v1/orgs/${otherOrg}/translations/${id}`, { title: 'Nope' });
    expect(rest.status).toBe(404);
    const DELETE = `mutation($input: DeleteTranslationSettingsInput!) { deleteTranslationSettings(input: $input) { deleted } }`;
    expect((await t.gql(DELETE, { input: { id } })).data.deleteTranslationSettings.deleted).toBe(true);
  });
});

describe('the contract’s spelling stays at the REST edge', () => {
  it('POST sites names `spaces` in its 400s, and takes `share-link` and `legacy-basic`', async () => {
    const bad = await t.rest('POST', `/v1/orgs/${t.org.id}/sites`, { title: 'Docs', spaces: ['space_missing'] });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toMatch(/^spaces\.0: /);
    const ok = await t.rest('POST', `/v1/orgs/${t.org.id}/sites`, { title: 'Docs', type: 'legacy-basic', visibility: 'share-link' });
    expect(ok.status).toBe(201);
    expect(ok.body).toMatchObject({ type: 'legacy-basic', visibility: 'share-link' });
    const underscore = await t.rest('POST', `/v1/orgs/${t.org.id}/sites`, { title: 'Docs', visibility: 'share_link' });
    expect(underscore.status).toBe(400);
    expect(underscore.body.error.message).toMatch(/^visibility: /);
  });
});
