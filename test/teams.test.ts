import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TeamMemberRole } from '@gitbook/api';
import { expectAccess, startTestApp, type TestApp } from './helpers.ts';
import { expectValidResponse } from './openapi.ts';
import { newId } from '../src/lib/ids.ts';

let t: TestApp;
let org: string;
const T = (teamId: string) => `/v1/orgs/${org}/teams/${teamId}`;

beforeAll(async () => {
  t = await startTestApp();
  org = t.org.id;
});
afterAll(async () => {
  await t?.close();
});

async function team(title: string, members: Array<[string, 'owner' | 'member']> = []) {
  const row = await t.app.prisma.team.create({ data: { id: newId('Team'), organizationId: org, title } });
  for (const [userId, role] of members) await t.app.prisma.teamMember.create({ data: { teamId: row.id, userId, role } });
  return row;
}

const teamMembers = async (teamId: string) =>
  Object.fromEntries((await t.app.prisma.teamMember.findMany({ where: { teamId } })).map((m) => [m.userId, m.role]));

describe('creating teams', () => {
  it('creates a team with members through the official client (201)', async () => {
    const a = await t.createUser('read');
    const b = await t.createUser(null);
    const res = await t.client().orgs.createOrganizationTeam(org, { title: 'Writers', members: [a.user.id, b.user.id] });
    expect(res.status).toBe(201);
    expectValidResponse('PUT', '/orgs/{organizationId}/teams', 201, res.data);
    expect(res.data).toMatchObject({ object: 'team', title: 'Writers', members: 2, spaces: 0, permissions: { admin: true, view: true } });
    expect(res.data.id).toMatch(/^team_/);
    expect(await teamMembers(res.data.id)).toEqual({ [a.user.id]: 'member', [b.user.id]: 'member' });
  });

  it('a creator who is not an org admin becomes the owner', async () => {
    const editor = await t.createUser('edit');
    const res = await editor.client.orgs.createOrganizationTeam(org, { title: 'Mine' });
    expect(res.data).toMatchObject({ members: 1, permissions: { admin: true, view: true } });
    expect(await teamMembers(res.data.id)).toEqual({ [editor.user.id]: 'owner' });
  });

  it('400 naming the field, and nothing is created', async () => {
    const outsider = await t.createUser(undefined);
    const before = await t.app.prisma.team.count();
    for (const [body, field] of [
      [{}, 'title'],
      [{ title: '' }, 'title'],
      [{ title: 'x'.repeat(65) }, 'title'],
      [{ title: 42 }, 'title'],
      [{ title: 'Ok', members: [outsider.user.id] }, 'members'],
      [{ title: 'Ok', members: 'nope' }, 'members'],
      [{ title: 'Ok', colour: 'red' }, 'colour'],
    ] as const) {
      const r = await t.rest('PUT', `/v1/orgs/${org}/teams`, body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error.message).toContain(field);
    }
    expect(await t.app.prisma.team.count()).toBe(before);
  });

  it('401 without token, 403 for guests, 404 for outsiders and missing organizations', async () => {
    const before = await t.app.prisma.team.count();
    await expectAccess(t, { method: 'PUT', path: `/v1/orgs/${org}/teams`, body: { title: 'X' } }, { anonymous: 401, guest: 403, outsider: 404 });
    expect((await t.rest('PUT', `/v1/orgs/org_missing/teams`, { title: 'X' })).status).toBe(404);
    expect(await t.app.prisma.team.count()).toBe(before);
  });
});

describe('listing, reading, renaming and deleting teams', () => {
  let listOrg: string;
  let owner: Awaited<ReturnType<TestApp['createUser']>>;
  const ids = (body: any) => body.items.map((x: any) => x.title);

  beforeAll(async () => {
    listOrg = (await t.gql(`mutation { createOrganization(input: { title: "Team List Org" }) { id } }`)).data.createOrganization.id;
    owner = await t.createUser('read', { organizationId: listOrg });
    const mk = async (title: string, ownerId?: string) => {
      const row = await t.app.prisma.team.create({ data: { id: newId('Team'), organizationId: listOrg, title } });
      if (ownerId) await t.app.prisma.teamMember.create({ data: { teamId: row.id, userId: ownerId, role: 'owner' } });
      await new Promise((r) => setTimeout(r, 5));
      return row;
    };
    await mk('Alpha Engineering', owner.user.id);
    await mk('Beta Design');
    await mk('Gamma engineering');
  });

  it('lists through the official client, filters by title and owner, pages', async () => {
    const res = await t.client().orgs.listTeamsInOrganizationById(listOrg);
    expectValidResponse('GET', '/orgs/{organizationId}/teams', 200, res.data);
    expect(ids(res.data)).toEqual(['Alpha Engineering', 'Beta Design', 'Gamma engineering']);
    expect(res.data.count).toBe(3);
    expect(res.data.items[0]).toMatchObject({ object: 'team', members: 1, spaces: 0 });

    const eng = await t.client().orgs.listTeamsInOrganizationById(listOrg, { title: 'ENGINEERING' });
    expect(ids(eng.data)).toEqual(['Alpha Engineering', 'Gamma engineering']);
    const owned = await t.client().orgs.listTeamsInOrganizationById(listOrg, { owner: owner.user.id });
    expectValidResponse('GET', '/orgs/{organizationId}/teams', 200, owned.data);
    expect(ids(owned.data)).toEqual(['Alpha Engineering']);

    const p1 = await t.rest('GET', `/v1/orgs/${listOrg}/teams?limit=2`);
    expect(ids(p1.body)).toEqual(['Alpha Engineering', 'Beta Design']);
    const p2 = await t.rest('GET', `/v1/orgs/${listOrg}/teams?limit=2&page=${encodeURIComponent(p1.body.next.page)}`);
    expect(ids(p2.body)).toEqual(['Gamma engineering']);
    expect(p2.body.next).toBeUndefined();
  });

  it('list: 400 naming the parameter, 401, 403 for guests, 404 for outsiders', async () => {
    for (const [qs, field] of [['limit=-1', 'limit'], ['colour=red', 'colour'], [`title=${'x'.repeat(65)}`, 'title']]) {
      const r = await t.rest('GET', `/v1/orgs/${listOrg}/teams?${qs}`);
      expect(r.status, qs).toBe(400);
      expect(r.body.error.message).toContain(field);
    }
    await expectAccess(t, { method: 'GET', path: `/v1/orgs/${listOrg}/teams` }, { anonymous: 401, guest: 403, outsider: 404 }, { organizationId: listOrg });
  });

  it('gets a team; guests only their own teams; 404 for missing teams and outsiders', async () => {
    const reader = await t.createUser('read');
    const guest = await t.createUser(null);
    const tm = await team('Readable', [[guest.user.id, 'member']]);
    const other = await team('Not mine');
    const res = await reader.client.orgs.getTeamInOrganizationById(org, tm.id);
    expectValidResponse('GET', '/orgs/{organizationId}/teams/{teamId}', 200, res.data);
    expect(res.data).toMatchObject({ id: tm.id, title: 'Readable', members: 1, permissions: { admin: false, view: true } });
    expect((await t.rest('GET', T(tm.id), undefined, guest.token)).status).toBe(200);
    expect((await t.rest('GET', T(other.id), undefined, guest.token)).status).toBe(403);
    expect((await t.rest('GET', T('team_missing'))).status).toBe(404);
    expect((await t.rest('GET', `/v1/orgs/${listOrg}/teams/${tm.id}`)).status).toBe(404); // another org's id
    const outsider = await t.createUser(undefined);
    expect((await t.rest('GET', T(tm.id), undefined, outsider.token)).status).toBe(404);
    expect((await t.rest('GET', T(tm.id), undefined, null)).status).toBe(401);
  });

  it('counts spaces granted to the team', async () => {
    const tm = await team('Granted');
    for (const deletedAt of [null, null, new Date()]) {
      const space = await t.app.prisma.space.create({ data: { id: newId('Space'), organizationId: org, title: 'S', deletedAt } });
      await t.app.prisma.contentGrant.create({ data: { id: newId('ContentGrant'), organizationId: org, spaceId: space.id, teamId: tm.id, role: 'read' } });
    }
    expect((await t.client().orgs.getTeamInOrganizationById(org, tm.id)).data.spaces).toBe(2);
  });

  it('renames (admins and team owners); 400 naming the field; 403; 404', async () => {
    const teamOwner = await t.createUser('read');
    const plain = await t.createUser('edit');
    const tm = await team('Old name', [[teamOwner.user.id, 'owner'], [plain.user.id, 'member']]);
    const res = await t.client().orgs.updateTeamInOrganizationById(org, tm.id, { title: 'New name' });
    expectValidResponse('PATCH', '/orgs/{organizationId}/teams/{teamId}', 200, res.data);
    expect(res.data.title).toBe('New name');
    const byOwner = await teamOwner.client.orgs.updateTeamInOrganizationById(org, tm.id, { title: 'Owner name' });
    expect(byOwner.data).toMatchObject({ title: 'Owner name', permissions: { admin: true } });

    for (const [body, field] of [[{}, 'title'], [{ title: '' }, 'title'], [{ title: 'y'.repeat(65) }, 'title'], [{ title: 'Ok', x: 1 }, 'x']] as const) {
      const r = await t.rest('PATCH', T(tm.id), body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error.message).toContain(field);
    }
    expect((await t.rest('PATCH', T(tm.id), { title: 'Hacked' }, plain.token)).status).toBe(403);
    const outsider = await t.createUser(undefined);
    expect((await t.rest('PATCH', T(tm.id), { title: 'Hacked' }, outsider.token)).status).toBe(404);
    expect((await t.rest('PATCH', T('team_missing'), { title: 'X' })).status).toBe(404);
    expect((await t.rest('PATCH', T(tm.id), { title: 'X' }, null)).status).toBe(401);
    expect((await t.app.prisma.team.findUnique({ where: { id: tm.id } }))!.title).toBe('Owner name');
  });

  it('deletes with its grants; 204 when deleted and when absent; 403; 404', async () => {
    const plain = await t.createUser('create');
    const tm = await team('Doomed', [[plain.user.id, 'member']]);
    const space = await t.app.prisma.space.create({ data: { id: newId('Space'), organizationId: org, title: 'S' } });
    await t.app.prisma.contentGrant.create({ data: { id: newId('ContentGrant'), organizationId: org, spaceId: space.id, teamId: tm.id, role: 'read' } });
    expect((await t.rest('DELETE', T(tm.id), undefined, plain.token)).status).toBe(403);
    const outsider = await t.createUser(undefined);
    expect((await t.rest('DELETE', T(tm.id), undefined, outsider.token)).status).toBe(404);
    expect((await t.rest('DELETE', T(tm.id), undefined, null)).status).toBe(401);
    expect(await t.app.prisma.team.count({ where: { id: tm.id } })).toBe(1);

    const res = await t.client().orgs.removeTeamFromOrganizationById(org, tm.id);
    expect(res.status).toBe(204);
    expectValidResponse('DELETE', '/orgs/{organizationId}/teams/{teamId}', 204, undefined);
    expect(await t.app.prisma.team.count({ where: { id: tm.id } })).toBe(0);
    expect(await t.app.prisma.contentGrant.count({ where: { teamId: tm.id } })).toBe(0);
    const again = await t.rest('DELETE', T(tm.id));
    expect(again.status).toBe(204);
    expect((await t.rest('DELETE', `/v1/orgs/org_missing/teams/${tm.id}`)).status).toBe(404);
  });
});

describe('team members', () => {
  it('lists members as {organization, team, permissions} through the official client, and pages', async () => {
    const a = await t.createUser('edit');
    const b = await t.createUser(null);
    const tm = await team('Listed', [[a.user.id, 'owner'], [b.user.id, 'member']]);
    const res = await t.client().orgs.listTeamMembersInOrganizationById(org, tm.id);
    expectValidResponse('GET', '/orgs/{organizationId}/teams/{teamId}/members', 200, res.data);
    expect(res.data.count).toBe(2);
    // Both memberships may be written in the same instant: the list's order is (joined, user id).
    expect(res.data.items).toHaveLength(2);
    expect(res.data.items).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ organization: expect.objectContaining({ object: 'member', id: a.user.id, role: 'edit' }), team: { role: 'owner' }, permissions: { view: true } }),
        expect.objectContaining({ organization: expect.objectContaining({ id: b.user.id, role: null }), team: { role: 'member' } }),
      ]),
    );
    const p1 = await t.rest('GET', `${T(tm.id)}/members?limit=1`);
    expectValidResponse('GET', '/orgs/{organizationId}/teams/{teamId}/members', 200, p1.body);
    const p2 = await t.rest('GET', `${T(tm.id)}/members?limit=1&page=${encodeURIComponent(p1.body.next.page)}`);
    expect([p1.body.items[0].organization.id, p2.body.items[0].organization.id]).toEqual(res.data.items.map((i) => i.organization!.id));
    expect(p2.body.next).toBeUndefined();

    // A guest sees the members of their own team, not of others.
    expect((await t.rest('GET', `${T(tm.id)}/members`, undefined, b.token)).status).toBe(200);
    const other = await team('Other');
    expect((await t.rest('GET', `${T(other.id)}/members`, undefined, b.token)).status).toBe(403);
    const outsider = await t.createUser(undefined);
    expect((await t.rest('GET', `${T(tm.id)}/members`, undefined, outsider.token)).status).toBe(404);
    expect((await t.rest('GET', `${T('team_missing')}/members`)).status).toBe(404);
    expect((await t.rest('GET', `${T(tm.id)}/members?limit=abc`)).status).toBe(400);
    expect((await t.rest('GET', `${T(tm.id)}/members`, undefined, null)).status).toBe(401);
  });

  it('bulk update: add by id or e-mail, remove, roles; a user both added and removed ends up removed', async () => {
    const [a, b, c, d] = [await t.createUser('read'), await t.createUser('read'), await t.createUser('read'), await t.createUser(null)];
    const tm = await team('Bulk', [[c.user.id, 'member']]);
    const res = await t.client().orgs.updateMembersInOrganizationTeam(org, tm.id, {
      add: [a.user.id, b.user.email.toUpperCase(), d.user.id],
      remove: [c.user.email, d.user.id],
      memberships: { [b.user.email]: { role: TeamMemberRole.Owner } },
    });
    expect(res.status).toBe(204);
    expectValidResponse('PUT', '/orgs/{organizationId}/teams/{teamId}/members', 204, undefined);
    expect(await teamMembers(tm.id)).toEqual({ [a.user.id]: 'member', [b.user.id]: 'owner' });

    // memberships alone change roles (and add).
    await t.client().orgs.updateMembersInOrganizationTeam(org, tm.id, { memberships: { [a.user.id]: { role: TeamMemberRole.Owner }, [c.user.id]: { role: TeamMemberRole.Member } } });
    expect(await teamMembers(tm.id)).toEqual({ [a.user.id]: 'owner', [b.user.id]: 'owner', [c.user.id]: 'member' });
  });

  it('bulk update: 400 naming the entry and nothing changes; 403 for plain members; owners may; 404', async () => {
    const [a, owner, plain] = [await t.createUser('read'), await t.createUser('read'), await t.createUser('edit')];
    const outsider = await t.createUser(undefined);
    const tm = await team('Strict', [[owner.user.id, 'owner'], [plain.user.id, 'member']]);
    const before = await teamMembers(tm.id);
    for (const [body, field] of [
      [{ add: [a.user.id, outsider.user.id] }, 'add.1'],
      [{ add: [a.user.id], remove: ['ghost@example.test'] }, 'remove.0'],
      [{ memberships: { [outsider.user.email]: { role: 'owner' } } }, `memberships.${outsider.user.email}`],
      [{ memberships: { [a.user.id]: { role: 'boss' } } }, 'memberships'],
      [{ add: 'x' }, 'add'],
      [{ add: [a.user.id], extra: true }, 'extra'],
    ] as const) {
      const r = await t.rest('PUT', `${T(tm.id)}/members`, body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error.message).toContain(field);
    }
    expect(await teamMembers(tm.id)).toEqual(before);

    expect((await t.rest('PUT', `${T(tm.id)}/members`, { add: [a.user.id] }, plain.token)).status).toBe(403);
    expect((await t.rest('PUT', `${T(tm.id)}/members`, { add: [a.user.id] }, outsider.token)).status).toBe(404);
    expect((await t.rest('PUT', `${T('team_missing')}/members`, { add: [a.user.id] })).status).toBe(404);
    expect((await t.rest('PUT', `${T(tm.id)}/members`, { add: [a.user.id] }, null)).status).toBe(401);
    expect(await teamMembers(tm.id)).toEqual(before);
    expect((await t.rest('PUT', `${T(tm.id)}/members`, { add: [a.user.id] }, owner.token)).status).toBe(204);
    expect((await teamMembers(tm.id))[a.user.id]).toBe('member');
  });

  it('adds or updates one member (204); role omitted keeps the role; 400; 403; 404', async () => {
    const [a, plain] = [await t.createUser('read'), await t.createUser('edit')];
    const tm = await team('One', [[plain.user.id, 'member']]);
    const res = await t.client().orgs.addMemberToOrganizationTeamById(org, tm.id, a.user.id, {});
    expect(res.status).toBe(204);
    expectValidResponse('PUT', '/orgs/{organizationId}/teams/{teamId}/members/{userId}', 204, undefined);
    expect((await teamMembers(tm.id))[a.user.id]).toBe('member');
    await t.client().orgs.addMemberToOrganizationTeamById(org, tm.id, a.user.id, { role: TeamMemberRole.Owner });
    expect((await teamMembers(tm.id))[a.user.id]).toBe('owner');
    expect((await t.rest('PUT', `${T(tm.id)}/members/${a.user.id}`)).status).toBe(204); // no body
    expect((await teamMembers(tm.id))[a.user.id]).toBe('owner');

    for (const [body, field] of [[{ role: 'boss' }, 'role'], [{ role: 'owner', x: 1 }, 'x']] as const) {
      const r = await t.rest('PUT', `${T(tm.id)}/members/${a.user.id}`, body);
      expect(r.status).toBe(400);
      expect(r.body.error.message).toContain(field);
    }
    expect((await teamMembers(tm.id))[a.user.id]).toBe('owner');
    const outsider = await t.createUser(undefined);
    expect((await t.rest('PUT', `${T(tm.id)}/members/${outsider.user.id}`, {})).status).toBe(404); // not an org member
    expect((await t.rest('PUT', `${T('team_missing')}/members/${a.user.id}`, {})).status).toBe(404);
    expect((await t.rest('PUT', `${T(tm.id)}/members/${a.user.id}`, { role: 'member' }, plain.token)).status).toBe(403);
    expect((await t.rest('PUT', `${T(tm.id)}/members/${a.user.id}`, { role: 'member' }, outsider.token)).status).toBe(404);
    expect((await t.rest('PUT', `${T(tm.id)}/members/${a.user.id}`, { role: 'member' }, null)).status).toBe(401);
    expect((await teamMembers(tm.id))[a.user.id]).toBe('owner');
  });

  it('removes one member; 204 when removed and when absent; 403; 404', async () => {
    const [a, plain] = [await t.createUser('read'), await t.createUser('edit')];
    const tm = await team('Remove', [[a.user.id, 'member'], [plain.user.id, 'member']]);
    expect((await t.rest('DELETE', `${T(tm.id)}/members/${a.user.id}`, undefined, plain.token)).status).toBe(403);
    const outsider = await t.createUser(undefined);
    expect((await t.rest('DELETE', `${T(tm.id)}/members/${a.user.id}`, undefined, outsider.token)).status).toBe(404);
    expect((await t.rest('DELETE', `${T(tm.id)}/members/${a.user.id}`, undefined, null)).status).toBe(401);
    expect((await t.rest('DELETE', `${T('team_missing')}/members/${a.user.id}`)).status).toBe(404);
    const res = await t.client().orgs.deleteMemberFromOrganizationTeamById(org, tm.id, a.user.id);
    expect(res.status).toBe(204);
    expectValidResponse('DELETE', '/orgs/{organizationId}/teams/{teamId}/members/{userId}', 204, undefined);
    expect(await teamMembers(tm.id)).toEqual({ [plain.user.id]: 'member' });
    expect((await t.rest('DELETE', `${T(tm.id)}/members/${a.user.id}`)).status).toBe(204);
  });
});

describe("a member's teams", () => {
  it('lists {team, member: {role}} with a title filter, and pages', async () => {
    const m = await t.createUser('read');
    const t1 = await team('Docs Crew', [[m.user.id, 'owner']]);
    await new Promise((r) => setTimeout(r, 5));
    const t2 = await team('Ops crew', [[m.user.id, 'member']]);
    await team('Unrelated crew');
    const res = await t.client().orgs.listTeamsForOrganizationMember(org, m.user.id);
    expectValidResponse('GET', '/orgs/{organizationId}/members/{userId}/teams', 200, res.data);
    expect(res.data.count).toBe(2);
    expect(res.data.items.map((i) => [i.team.id, i.member.role])).toEqual([[t1.id, 'owner'], [t2.id, 'member']]);
    expect(res.data.items[0].team).toMatchObject({ object: 'team', title: 'Docs Crew', members: 1 });

    const ops = await t.client().orgs.listTeamsForOrganizationMember(org, m.user.id, { title: 'OPS' });
    expect(ops.data.items.map((i) => i.team.id)).toEqual([t2.id]);

    const p1 = await t.rest('GET', `/v1/orgs/${org}/members/${m.user.id}/teams?limit=1`);
    expectValidResponse('GET', '/orgs/{organizationId}/members/{userId}/teams', 200, p1.body);
    expect(p1.body.items[0].team.id).toBe(t1.id);
    const p2 = await t.rest('GET', `/v1/orgs/${org}/members/${m.user.id}/teams?limit=1&page=${encodeURIComponent(p1.body.next.page)}`);
    expect(p2.body.items[0].team.id).toBe(t2.id);
    expect(p2.body.next).toBeUndefined();
    expect(p2.body.count).toBe(2);
  });

  it('400 naming the parameter, 401, 403 for guests looking at others, 404 for outsiders and missing members', async () => {
    const m = await t.createUser('read');
    const guest = await t.createUser(null);
    const path = `/v1/orgs/${org}/members/${m.user.id}/teams`;
    const bad = await t.rest('GET', `${path}?sort=asc`);
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toContain('sort');
    expect((await t.rest('GET', path, undefined, null)).status).toBe(401);
    expect((await t.rest('GET', path, undefined, guest.token)).status).toBe(403);
    expect((await t.rest('GET', `/v1/orgs/${org}/members/${guest.user.id}/teams`, undefined, guest.token)).status).toBe(200);
    const outsider = await t.createUser(undefined);
    expect((await t.rest('GET', path, undefined, outsider.token)).status).toBe(404);
    expect((await t.rest('GET', `/v1/orgs/${org}/members/user_missing/teams`)).status).toBe(404);
  });
});

describe('teams over GraphQL', () => {
  it('Organization.teams with filters; guests see only their teams; Team node with members', async () => {
    const guest = await t.createUser(null);
    const owner = await t.createUser('edit');
    const mine = await team('Guest Team', [[guest.user.id, 'member'], [owner.user.id, 'owner']]);
    const q = `query($id: ID!, $owner: ID) { organization(id: $id) {
      all: teams(first: 100) { totalCount }
      owned: teams(owner: $owner) { nodes { id title permissions { admin view } members { totalCount nodes { role user { id } member { role } } } } }
      titled: teams(title: "guest team") { nodes { id } }
    } }`;
    const r = await t.gql(q, { id: org, owner: owner.user.id });
    expect(r.errors).toBeUndefined();
    expect(r.data.organization.all.totalCount).toBeGreaterThan(1);
    // Both memberships are written in the same instant: their list order is by id, so compare by role.
    r.data.organization.owned.nodes[0]?.members.nodes.sort((a: { role: string }, b: { role: string }) => a.role.localeCompare(b.role));
    expect(r.data.organization.owned.nodes).toEqual([
      {
        id: mine.id,
        title: 'Guest Team',
        permissions: { admin: true, view: true },
        members: {
          totalCount: 2,
          nodes: [
            { role: 'member', user: { id: guest.user.id }, member: { role: null } },
            { role: 'owner', user: { id: owner.user.id }, member: { role: 'edit' } },
          ],
        },
      },
    ]);
    expect(r.data.organization.titled.nodes).toEqual([{ id: mine.id }]);

    const asGuest = await t.gql(`query($id: ID!) { organization(id: $id) { teams { totalCount nodes { id permissions { admin view } } } } }`, { id: org }, guest.token);
    expect(asGuest.data.organization.teams).toEqual({ totalCount: 1, nodes: [{ id: mine.id, permissions: { admin: false, view: true } }] });
    const top = await t.gql(`query($id: ID!) { teams(organizationId: $id) { totalCount } }`, { id: org }, guest.token);
    expect(top.errors?.[0].extensions?.code).toBe('FORBIDDEN');

    const node = await t.gql(`query($id: ID!) { node(id: $id) { id ... on Team { title spaces } } }`, { id: mine.id });
    expect(node.data.node).toEqual({ id: mine.id, title: 'Guest Team', spaces: 0 });
    // node(id:) finds only teams you may view.
    const other = await team('Not the guest team');
    expect((await t.gql(`query($id: ID!) { node(id: $id) { id } }`, { id: mine.id }, guest.token)).data.node).toEqual({ id: mine.id });
    const hidden = await t.gql(`query($id: ID!) { node(id: $id) { id } }`, { id: other.id }, guest.token);
    expect(hidden.errors?.[0].extensions?.code).toBe('NOT_FOUND');
    const outsider = await t.createUser(undefined);
    expect((await t.gql(`query($id: ID!) { node(id: $id) { id } }`, { id: mine.id }, outsider.token)).errors?.[0].extensions?.code).toBe('NOT_FOUND');
  });

  it('createTeam, updateTeam, updateTeamMembers, setTeamMember, removeTeamMember, deleteTeam', async () => {
    const [a, b] = [await t.createUser('read'), await t.createUser('read')];
    const created = await t.gql(`mutation($o: ID!, $m: [String!]) { createTeam(input: { organizationId: $o, title: "GQL", members: $m }) { team { id title members { totalCount } } } }`, {
      o: org,
      m: [a.user.id],
    });
    const id = created.data.createTeam.team.id;
    expect(created.data.createTeam.team).toMatchObject({ title: 'GQL', members: { totalCount: 1 } });
    const bad = await t.gql(`mutation($o: ID!) { createTeam(input: { organizationId: $o, title: "" }) { team { id } } }`, { o: org });
    expect(bad.errors?.[0].extensions).toMatchObject({ code: 'BAD_REQUEST', field: 'title' });

    const renamed = await t.gql(`mutation($o: ID!, $t: ID!) { updateTeam(input: { organizationId: $o, teamId: $t, title: "Renamed" }) { team { title } } }`, { o: org, t: id });
    expect(renamed.data.updateTeam.team.title).toBe('Renamed');

    const bulk = await t.gql(
      `mutation($input: UpdateTeamMembersInput!) { updateTeamMembers(input: $input) { team { members { nodes { role user { id } } } } } }`,
      { input: { organizationId: org, teamId: id, add: [b.user.email], remove: [a.user.id], memberships: [{ user: b.user.id, role: 'owner' }] } },
    );
    expect(bulk.errors).toBeUndefined();
    expect(bulk.data.updateTeamMembers.team.members.nodes).toEqual([{ role: 'owner', user: { id: b.user.id } }]);

    const set = await t.gql(`mutation($input: SetTeamMemberInput!) { setTeamMember(input: $input) { teamMember { role user { id } team { id } } } }`, {
      input: { organizationId: org, teamId: id, userId: a.user.id, role: 'member' },
    });
    expect(set.data.setTeamMember.teamMember).toEqual({ role: 'member', user: { id: a.user.id }, team: { id } });

    const memberTeams = await t.gql(`query($o: ID!, $u: ID!) { member(organizationId: $o, userId: $u) { teams teamMemberships { totalCount nodes { role team { title } } } } }`, {
      o: org,
      u: a.user.id,
    });
    expect(memberTeams.data.member).toEqual({ teams: 1, teamMemberships: { totalCount: 1, nodes: [{ role: 'member', team: { title: 'Renamed' } }] } });

    const rm = await t.gql(`mutation($input: RemoveTeamMemberInput!) { removeTeamMember(input: $input) { deleted } }`, { input: { organizationId: org, teamId: id, userId: a.user.id } });
    expect(rm.data.removeTeamMember.deleted).toBe(true);
    const del = await t.gql(`mutation($o: ID!, $t: ID!) { deleteTeam(input: { organizationId: $o, teamId: $t }) { deleted } }`, { o: org, t: id });
    expect(del.data.deleteTeam.deleted).toBe(true);
    const again = await t.gql(`mutation($o: ID!, $t: ID!) { deleteTeam(input: { organizationId: $o, teamId: $t }) { deleted } }`, { o: org, t: id });
    expect(again.data.deleteTeam.deleted).toBe(false);
  });
});
