import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemberRole } from '@gitbook/api';
import { startTestApp, type TestApp } from './helpers.ts';
import { expectValidResponse } from './openapi.ts';
import { newId } from '../src/lib/ids.ts';
import { verifyVisitorClaims } from '../src/domain/members.ts';
import type { Role } from '../src/generated/prisma/enums.ts';

let t: TestApp;
let org: string;
const M = (userId: string) => `/v1/orgs/${org}/members/${userId}`;

beforeAll(async () => {
  t = await startTestApp();
  org = t.org.id;
});
afterAll(async () => {
  await t?.close();
});

/** A member with a known name, e-mail, join time and last-seen time. */
async function member(role: Role | null, opts: { name: string; email: string; joinedAt: string; lastSeenAt?: string; organizationId?: string }) {
  const u = await t.createUser(role, { email: opts.email, organizationId: opts.organizationId });
  await t.app.prisma.user.update({ where: { id: u.user.id }, data: { displayName: opts.name } });
  await t.app.prisma.member.update({
    where: { organizationId_userId: { organizationId: opts.organizationId ?? org, userId: u.user.id } },
    data: { joinedAt: new Date(opts.joinedAt), lastSeenAt: opts.lastSeenAt ? new Date(opts.lastSeenAt) : null },
  });
  return u;
}

async function newSpace(organizationId = org, title = 'Space') {
  return t.app.prisma.space.create({ data: { id: newId('Space'), organizationId, title } });
}

const roleOf = async (userId: string, organizationId = org) =>
  (await t.app.prisma.member.findUnique({ where: { organizationId_userId: { organizationId, userId } } }))?.role;

describe('listing members', () => {
  let otherOrg: string;
  let ann: Awaited<ReturnType<typeof member>>;
  let bob: Awaited<ReturnType<typeof member>>;
  let cat: Awaited<ReturnType<typeof member>>;
  let dan: Awaited<ReturnType<typeof member>>;

  beforeAll(async () => {
    // A separate organization so the bootstrap admin and other tests do not get in the way.
    const o = await t.app.prisma.organization.create({ data: { id: newId('Organization'), title: 'Listing Org' } });
    otherOrg = o.id;
    await t.app.prisma.member.create({
      data: { id: newId('Member'), organizationId: otherOrg, userId: t.adminUser.id, role: 'admin', joinedAt: new Date('2020-01-01T00:00:00Z') },
    });
    ann = await member('edit', { name: 'Ann Archer', email: 'ann@alpha.test', joinedAt: '2021-01-01T00:00:00Z', lastSeenAt: '2024-03-01T00:00:00Z', organizationId: otherOrg });
    bob = await member('read', { name: 'Bob Baker', email: 'bob@beta.test', joinedAt: '2022-01-01T00:00:00Z', organizationId: otherOrg });
    cat = await member(null, { name: 'Cat Cooper', email: 'cat@alpha.test', joinedAt: '2023-01-01T00:00:00Z', lastSeenAt: '2024-01-01T00:00:00Z', organizationId: otherOrg });
    dan = await member('edit', { name: 'Dan Dane', email: 'dan@delta.test', joinedAt: '2024-01-01T00:00:00Z', organizationId: otherOrg });
  });

  const ids = (body: any) => body.items.map((m: any) => m.id);

  it('lists through the official client, newest first by default, valid against the OpenAPI document', async () => {
    const res = await t.client().orgs.listMembersInOrganizationById(otherOrg);
    expectValidResponse('GET', '/orgs/{organizationId}/members', 200, res.data);
    expect(ids(res.data)).toEqual([dan.user.id, cat.user.id, bob.user.id, ann.user.id, t.adminUser.id]);
    expect(res.data.count).toBe(5);
    expect(res.data.next).toBeUndefined();
    const first = res.data.items[0];
    expect(first).toMatchObject({ object: 'member', id: dan.user.id, role: 'edit', disabled: false, sso: false, spaces: 0, teams: 0 });
    expect(first.user).toMatchObject({ object: 'user', id: dan.user.id, displayName: 'Dan Dane', email: 'dan@delta.test' });
    expect(res.data.items.find((m) => m.id === cat.user.id)!.role).toBeNull();
  });

  it('orders, filters by role and guest, searches name and e-mail, sorts by last seen', async () => {
    const asc = await t.client().orgs.listMembersInOrganizationById(otherOrg, { order: 'asc' });
    expect(ids(asc.data)).toEqual([t.adminUser.id, ann.user.id, bob.user.id, cat.user.id, dan.user.id]);

    const editors = await t.client().orgs.listMembersInOrganizationById(otherOrg, { role: MemberRole.Edit });
    expect(ids(editors.data)).toEqual([dan.user.id, ann.user.id]);
    expect(editors.data.count).toBe(2);
    const guests = await t.client().orgs.listMembersInOrganizationById(otherOrg, { role: 'guest' });
    expect(ids(guests.data)).toEqual([cat.user.id]);

    const alpha = await t.client().orgs.listMembersInOrganizationById(otherOrg, { search: 'ALPHA.test' });
    expect(ids(alpha.data)).toEqual([cat.user.id, ann.user.id]);
    const byName = await t.client().orgs.listMembersInOrganizationById(otherOrg, { search: 'baker' });
    expect(ids(byName.data)).toEqual([bob.user.id]);

    const seen = await t.client().orgs.listMembersInOrganizationById(otherOrg, { sort: 'lastSeenAt' });
    expectValidResponse('GET', '/orgs/{organizationId}/members', 200, seen.data);
    expect(ids(seen.data)).toEqual([ann.user.id, cat.user.id]);
    const seenAsc = await t.client().orgs.listMembersInOrganizationById(otherOrg, { sort: 'lastSeenAt', order: 'asc' });
    expect(ids(seenAsc.data)).toEqual([cat.user.id, ann.user.id]);
  });

  it('pages with an opaque cursor; next is absent on the last page', async () => {
    const p1 = await t.rest('GET', `/v1/orgs/${otherOrg}/members?limit=2`);
    expectValidResponse('GET', '/orgs/{organizationId}/members', 200, p1.body);
    expect(ids(p1.body)).toEqual([dan.user.id, cat.user.id]);
    expect(p1.body.count).toBe(5);
    const p2 = await t.rest('GET', `/v1/orgs/${otherOrg}/members?limit=2&page=${encodeURIComponent(p1.body.next.page)}`);
    expect(ids(p2.body)).toEqual([bob.user.id, ann.user.id]);
    const p3 = await t.rest('GET', `/v1/orgs/${otherOrg}/members?limit=2&page=${encodeURIComponent(p2.body.next.page)}`);
    expect(ids(p3.body)).toEqual([t.adminUser.id]);
    expect(p3.body.next).toBeUndefined();
  });

  it('400 naming the query parameter', async () => {
    for (const [qs, field] of [
      ['role=boss', 'role'],
      ['sort=title', 'sort'],
      ['order=up', 'order'],
      ['limit=5000', 'limit'],
      ['colour=red', 'colour'],
    ]) {
      const r = await t.rest('GET', `/v1/orgs/${otherOrg}/members?${qs}`);
      expect(r.status, qs).toBe(400);
      expect(r.body.error.message).toContain(field);
    }
  });

  it('401 without a token, 403 for guests, 404 for outsiders and missing organizations', async () => {
    expect((await t.rest('GET', `/v1/orgs/${otherOrg}/members`, undefined, null)).status).toBe(401);
    expect((await t.rest('GET', `/v1/orgs/${otherOrg}/members`, undefined, cat.token)).status).toBe(403);
    expect((await t.rest('GET', `/v1/orgs/${otherOrg}/members`, undefined, bob.token)).status).toBe(200);
    const outsider = await t.createUser(undefined);
    expect((await t.rest('GET', `/v1/orgs/${otherOrg}/members`, undefined, outsider.token)).status).toBe(404);
    expect((await t.rest('GET', `/v1/orgs/org_missing/members`)).status).toBe(404);
  });

  it('GraphQL: Organization.members with the same filters; empty for guests', async () => {
    const q = `query($id: ID!) { organization(id: $id) {
      members(first: 10, role: edit, order: asc) { totalCount nodes { id role user { id } permissions { view admin } } }
      seen: members(sort: lastSeenAt, search: "ALPHA") { totalCount nodes { user { displayName } } }
      guests: members(role: guest) { nodes { user { id } } }
    } }`;
    const r = await t.gql(q, { id: otherOrg });
    expect(r.errors).toBeUndefined();
    expect(r.data.organization.members.totalCount).toBe(2);
    expect(r.data.organization.members.nodes.map((n: any) => n.user.id)).toEqual([ann.user.id, dan.user.id]);
    expect(r.data.organization.members.nodes[0].id).toMatch(/^mem_/);
    expect(r.data.organization.members.nodes[0].permissions).toEqual({ view: true, admin: true });
    expect(r.data.organization.seen.nodes.map((n: any) => n.user.displayName)).toEqual(['Ann Archer', 'Cat Cooper']);
    expect(r.data.organization.guests.nodes.map((n: any) => n.user.id)).toEqual([cat.user.id]);

    const asGuest = await t.gql(`query($id: ID!) { organization(id: $id) { members { totalCount nodes { id } } } }`, { id: otherOrg }, cat.token);
    expect(asGuest.data.organization.members).toEqual({ totalCount: 0, nodes: [] });
    const top = await t.gql(`query($id: ID!) { members(organizationId: $id) { totalCount } }`, { id: otherOrg }, cat.token);
    expect(top.errors?.[0].extensions?.code).toBe('FORBIDDEN');
  });
});

describe('one member', () => {
  it('gets a member by user id; the REST id is the user id', async () => {
    const m = await t.createUser('comment');
    const res = await t.client().orgs.getMemberInOrganizationById(org, m.user.id);
    expectValidResponse('GET', '/orgs/{organizationId}/members/{userId}', 200, res.data);
    expect(res.data).toMatchObject({ object: 'member', id: m.user.id, role: 'comment', user: { id: m.user.id } });
    expect((await t.rest('GET', M('user_missing'))).status).toBe(404);
    expect((await t.rest('GET', M(m.user.id), undefined, null)).status).toBe(401);
  });

  it('guests see themselves but not others (403); outsiders get 404', async () => {
    const guest = await t.createUser(null);
    const other = await t.createUser('read');
    const self = await t.rest('GET', M(guest.user.id), undefined, guest.token);
    expect(self.status).toBe(200);
    expectValidResponse('GET', '/orgs/{organizationId}/members/{userId}', 200, self.body);
    expect(self.body.role).toBeNull();
    expect((await t.rest('GET', M(other.user.id), undefined, guest.token)).status).toBe(403);
    const outsider = await t.createUser(undefined);
    expect((await t.rest('GET', M(other.user.id), undefined, outsider.token)).status).toBe(404);
  });

  it('counts spaces granted to the user directly and teams of this organization', async () => {
    const m = await t.createUser('read');
    const [s1, s2, deleted] = [await newSpace(), await newSpace(), await newSpace()];
    await t.app.prisma.space.update({ where: { id: deleted.id }, data: { deletedAt: new Date() } });
    const team = await t.app.prisma.team.create({ data: { id: newId('Team'), organizationId: org, title: 'Counted' } });
    await t.app.prisma.teamMember.create({ data: { teamId: team.id, userId: m.user.id } });
    const grant = (data: object) => t.app.prisma.contentGrant.create({ data: { id: newId('ContentGrant'), organizationId: org, role: 'edit', ...data } as never });
    await grant({ spaceId: s1.id, userId: m.user.id });
    await grant({ spaceId: s1.id, userId: m.user.id, role: 'read' }); // same space twice: counted once
    await grant({ spaceId: s2.id, teamId: team.id }); // through a team: not counted
    await grant({ spaceId: deleted.id, userId: m.user.id }); // deleted: not counted
    const res = await t.client().orgs.getMemberInOrganizationById(org, m.user.id);
    expect(res.data).toMatchObject({ spaces: 1, teams: 1 });
  });
});

describe('updating a member role', () => {
  it('changes the role (and to guest with null) through the official client', async () => {
    const m = await t.createUser('read');
    const res = await t.client().orgs.updateMemberInOrganizationById(org, m.user.id, { role: MemberRole.Review });
    expectValidResponse('PATCH', '/orgs/{organizationId}/members/{userId}', 200, res.data);
    expect(res.data).toMatchObject({ id: m.user.id, role: 'review' });
    const guest = await t.client().orgs.updateMemberInOrganizationById(org, m.user.id, { role: null });
    expectValidResponse('PATCH', '/orgs/{organizationId}/members/{userId}', 200, guest.data);
    expect(guest.data.role).toBeNull();
    expect(await roleOf(m.user.id)).toBeNull();
  });

  it('400 naming the field, and nothing changes', async () => {
    const m = await t.createUser('read');
    for (const [body, field] of [
      [{ role: 'boss' }, 'role'],
      [{ role: 3 }, 'role'],
      [{ role: 'edit', nickname: 'x' }, 'nickname'],
    ] as const) {
      const r = await t.rest('PATCH', M(m.user.id), body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error.message).toContain(field);
    }
    expect(await roleOf(m.user.id)).toBe('read');
  });

  it('404 for a missing member, 401 without token, 403 for non-admins, 404 for outsiders', async () => {
    const m = await t.createUser('read');
    expect((await t.rest('PATCH', M('user_missing'), { role: 'edit' })).status).toBe(404);
    expect((await t.rest('PATCH', M(m.user.id), { role: 'edit' }, null)).status).toBe(401);
    const creator = await t.createUser('create');
    expect((await t.rest('PATCH', M(m.user.id), { role: 'admin' }, creator.token)).status).toBe(403);
    const outsider = await t.createUser(undefined);
    expect((await t.rest('PATCH', M(m.user.id), { role: 'admin' }, outsider.token)).status).toBe(404);
    expect(await roleOf(m.user.id)).toBe('read');
  });

  it('refuses to demote the last admin with 409; works once there is another admin', async () => {
    const o = await t.gql(`mutation { createOrganization(input: { title: "Solo" }) { id } }`);
    const solo = o.data.createOrganization.id;
    const r = await t.rest('PATCH', `/v1/orgs/${solo}/members/${t.adminUser.id}`, { role: 'edit' });
    expect(r.status).toBe(409);
    expect(r.body.error.code).toBe(409);
    expect(await roleOf(t.adminUser.id, solo)).toBe('admin');
    // Demoting an admin to admin changes nothing and is fine.
    expect((await t.rest('PATCH', `/v1/orgs/${solo}/members/${t.adminUser.id}`, { role: 'admin' })).status).toBe(200);

    const other = await t.createUser('admin', { organizationId: solo });
    const ok = await t.rest('PATCH', `/v1/orgs/${solo}/members/${t.adminUser.id}`, { role: 'edit' }, other.token);
    expect(ok.status).toBe(200);
    expect(ok.body.role).toBe('edit');
  });
});

describe('removing a member', () => {
  it('removes with team memberships and grants; 204 when removed and when absent', async () => {
    const m = await t.createUser('edit');
    const space = await newSpace();
    const team = await t.app.prisma.team.create({ data: { id: newId('Team'), organizationId: org, title: 'Leavers' } });
    await t.app.prisma.teamMember.create({ data: { teamId: team.id, userId: m.user.id } });
    await t.app.prisma.contentGrant.create({ data: { id: newId('ContentGrant'), organizationId: org, spaceId: space.id, userId: m.user.id, role: 'admin' } });

    const res = await t.client().orgs.removeMemberFromOrganizationById(org, m.user.id);
    expect(res.status).toBe(204);
    expectValidResponse('DELETE', '/orgs/{organizationId}/members/{userId}', 204, undefined);
    expect(await roleOf(m.user.id)).toBeUndefined();
    expect(await t.app.prisma.teamMember.count({ where: { userId: m.user.id } })).toBe(0);
    expect(await t.app.prisma.contentGrant.count({ where: { userId: m.user.id } })).toBe(0);
    expect((await t.rest('GET', `/v1/orgs/${org}`, undefined, m.token)).status).toBe(404);

    const again = await t.rest('DELETE', M(m.user.id));
    expect(again.status).toBe(204);
    expect(again.text).toBe('');
  });

  it('403 for non-admins, 404 for outsiders and missing organizations, 401 without token, 409 for the last admin', async () => {
    const m = await t.createUser('read');
    const creator = await t.createUser('create');
    expect((await t.rest('DELETE', M(m.user.id), undefined, creator.token)).status).toBe(403);
    const outsider = await t.createUser(undefined);
    expect((await t.rest('DELETE', M(m.user.id), undefined, outsider.token)).status).toBe(404);
    expect((await t.rest('DELETE', `/v1/orgs/org_missing/members/${m.user.id}`)).status).toBe(404);
    expect((await t.rest('DELETE', M(m.user.id), undefined, null)).status).toBe(401);
    expect(await roleOf(m.user.id)).toBe('read');

    const o = await t.gql(`mutation { createOrganization(input: { title: "Alone" }) { id } }`);
    const r = await t.rest('DELETE', `/v1/orgs/${o.data.createOrganization.id}/members/${t.adminUser.id}`);
    expect(r.status).toBe(409);
    expect(await roleOf(t.adminUser.id, o.data.createOrganization.id)).toBe('admin');
  });
});

describe('ping', () => {
  it("updates the caller's lastSeenAt from the clock and returns signed claims", async () => {
    const m = await t.createUser(null);
    t.clock.advance(3 * 24 * 3600 * 1000);
    const res = await m.client.orgs.updateOrganizationMemberLastSeenAt(org);
    expectValidResponse('POST', '/orgs/{organizationId}/ping', 200, res.data);
    const body = res.data as any;
    expect(body.serviceVisitorClaims).toEqual(expect.any(String));
    expect(body.gitbookVisitorClaims).toBe(body.serviceVisitorClaims);
    const claims = await verifyVisitorClaims({ config: t.app.config, clock: t.clock }, body.serviceVisitorClaims);
    expect(claims).toMatchObject({ sub: m.user.id, org, role: null });
    expect(await verifyVisitorClaims({ config: t.app.config, clock: t.clock }, body.serviceVisitorClaims.slice(0, -2) + 'xx')).toBeNull();

    const row = await t.app.prisma.member.findUnique({ where: { organizationId_userId: { organizationId: org, userId: m.user.id } } });
    expect(Math.abs(row!.lastSeenAt!.getTime() - t.clock.now().getTime())).toBeLessThan(5000);
    expect(row!.lastSeenAt!.getTime() - Date.now()).toBeGreaterThan(2 * 24 * 3600 * 1000);
    t.clock.reset();
  });

  it('401 without token, 404 for outsiders and missing organizations', async () => {
    expect((await t.rest('POST', `/v1/orgs/${org}/ping`, undefined, null)).status).toBe(401);
    const outsider = await t.createUser(undefined);
    expect((await t.rest('POST', `/v1/orgs/${org}/ping`, undefined, outsider.token)).status).toBe(404);
    expect((await t.rest('POST', `/v1/orgs/org_missing/ping`)).status).toBe(404);
  });
});

describe('SSO members', () => {
  it('marks a member as SSO', async () => {
    const m = await t.createUser('read');
    const res = await t.client().orgs.setUserAsSsoMemberForOrganization(org, m.user.id);
    expectValidResponse('POST', '/orgs/{organizationId}/members/{userId}/sso', 200, res.data);
    expect(res.data).toMatchObject({ id: m.user.id, sso: true });
  });

  it('404 for a missing member or outsiders, 403 for non-admins, 401 without token', async () => {
    const m = await t.createUser('read');
    const path = `${M(m.user.id)}/sso`;
    expect((await t.rest('POST', `${M('user_missing')}/sso`)).status).toBe(404);
    const creator = await t.createUser('create');
    expect((await t.rest('POST', path, undefined, creator.token)).status).toBe(403);
    const outsider = await t.createUser(undefined);
    expect((await t.rest('POST', path, undefined, outsider.token)).status).toBe(404);
    expect((await t.rest('POST', path, undefined, null)).status).toBe(401);
    const row = await t.app.prisma.member.findUnique({ where: { organizationId_userId: { organizationId: org, userId: m.user.id } } });
    expect(row!.sso).toBe(false);
  });
});

describe('member mutations over GraphQL', () => {
  it('addMember creates the user when needed, uses the default role, refuses duplicates', async () => {
    const add = `mutation($input: AddMemberInput!) { addMember(input: $input) { member { id role user { email displayName } } } }`;
    const r = await t.gql(add, { input: { organizationId: org, email: 'New.Person@Example.test', role: 'edit' } });
    expect(r.errors).toBeUndefined();
    expect(r.data.addMember.member).toMatchObject({ role: 'edit', user: { email: 'new.person@example.test', displayName: 'new.person' } });
    const dup = await t.gql(add, { input: { organizationId: org, email: 'new.person@example.test' } });
    expect(dup.errors?.[0].extensions?.code).toBe('CONFLICT');

    const existing = await t.createUser(undefined);
    await t.app.prisma.organization.update({ where: { id: org }, data: { defaultRole: 'comment' } });
    const d = await t.gql(add, { input: { organizationId: org, email: existing.user.email, displayName: 'Ignored' } });
    expect(d.data.addMember.member).toMatchObject({ role: 'comment', user: { email: existing.user.email, displayName: existing.user.displayName } });
    await t.app.prisma.organization.update({ where: { id: org }, data: { defaultRole: null } });
    const guest = await t.gql(add, { input: { organizationId: org, email: 'guest@example.test', role: null } });
    expect(guest.data.addMember.member.role).toBeNull();

    const bad = await t.gql(add, { input: { organizationId: org, email: 'not-an-email' } });
    expect(bad.errors?.[0].extensions).toMatchObject({ code: 'BAD_REQUEST', field: 'email' });
    expect(await t.app.prisma.user.count({ where: { email: 'not-an-email' } })).toBe(0);
    const editor = await t.createUser('edit');
    const denied = await t.gql(add, { input: { organizationId: org, email: 'x@example.test' } }, editor.token);
    expect(denied.errors?.[0].extensions?.code).toBe('FORBIDDEN');
    expect(await t.app.prisma.user.count({ where: { email: 'x@example.test' } })).toBe(0);
  });

  it('updateMember, setMemberSso, pingOrganization and removeMember', async () => {
    const m = await t.createUser('read');
    const input = { organizationId: org, userId: m.user.id };
    const up = await t.gql(`mutation($input: UpdateMemberInput!) { updateMember(input: $input) { member { role } } }`, { input: { ...input, role: 'create' } });
    expect(up.data.updateMember.member.role).toBe('create');
    const sso = await t.gql(`mutation($input: SetMemberSsoInput!) { setMemberSso(input: $input) { member { sso } } }`, { input });
    expect(sso.data.setMemberSso.member.sso).toBe(true);
    const ping = await t.gql(`mutation($o: ID!) { pingOrganization(input: { organizationId: $o }) { serviceVisitorClaims member { lastSeenAt user { id } } } }`, { o: org }, m.token);
    expect(ping.data.pingOrganization.member.user.id).toBe(m.user.id);
    expect(ping.data.pingOrganization.member.lastSeenAt).toEqual(expect.any(String));
    const rm = await t.gql(`mutation($input: RemoveMemberInput!) { removeMember(input: $input) { deleted deletedId } }`, { input });
    expect(rm.data.removeMember).toEqual({ deleted: true, deletedId: m.user.id });
    const again = await t.gql(`mutation($input: RemoveMemberInput!) { removeMember(input: $input) { deleted } }`, { input });
    expect(again.data.removeMember.deleted).toBe(false);
  });

  it('member(organizationId, userId) and the Member node', async () => {
    const m = await t.createUser('edit');
    const r = await t.gql(`query($o: ID!, $u: ID!) { member(organizationId: $o, userId: $u) { id role organization { id } user { id } spaces teams } }`, {
      o: org,
      u: m.user.id,
    });
    expect(r.data.member).toMatchObject({ role: 'edit', organization: { id: org }, user: { id: m.user.id }, spaces: 0, teams: 0 });
    const n = await t.gql(`query($id: ID!) { node(id: $id) { id ... on Member { user { id } } } }`, { id: r.data.member.id });
    expect(n.data.node.user.id).toBe(m.user.id);
  });
});

describe("a member's spaces", () => {
  let o: string;
  let s: string[];
  let guest: Awaited<ReturnType<TestApp['createUser']>>;
  let editor: Awaited<ReturnType<TestApp['createUser']>>;
  const path = (userId: string, qs = '') => `/v1/orgs/${o}/members/${userId}/spaces${qs}`;
  const list = (body: any) => body.items.map((i: any) => [i.space.id, i.permission]);

  beforeAll(async () => {
    o = (await t.gql(`mutation { createOrganization(input: { title: "Spaces Org" }) { id } }`)).data.createOrganization.id;
    guest = await t.createUser(null, { organizationId: o });
    editor = await t.createUser('edit', { organizationId: o });
    s = [];
    for (const [title, visibility] of [['One', 'private'], ['Two', 'private'], ['Three', 'private'], ['Four', 'public']]) {
      const r = await t.rest('POST', `/v1/orgs/${o}/spaces`, { title, visibility });
      expect(r.status).toBe(201);
      s.push(r.body.id);
      await new Promise((res) => setTimeout(res, 5));
    }
    const team = await t.app.prisma.team.create({ data: { id: newId('Team'), organizationId: o, title: 'Readers' } });
    await t.app.prisma.teamMember.create({ data: { teamId: team.id, userId: guest.user.id } });
    const grant = (data: object) => t.app.prisma.contentGrant.create({ data: { id: newId('ContentGrant'), organizationId: o, ...data } as never });
    await grant({ spaceId: s[1], userId: guest.user.id, role: 'edit' });
    await grant({ spaceId: s[2], teamId: team.id, role: 'comment' });
    await grant({ spaceId: s[0], userId: editor.user.id, role: 'admin' });
  });

  it('lists {permission, space} by the access rules, newest first, through the official client', async () => {
    const res = await t.client().orgs.listSpacesForOrganizationMember(o, guest.user.id);
    expectValidResponse('GET', '/orgs/{organizationId}/members/{userId}/spaces', 200, res.data);
    // Guests: explicit grants (direct and through teams) and public spaces only.
    expect(list(res.data)).toEqual([[s[3], 'read'], [s[2], 'comment'], [s[1], 'edit']]);
    expect(res.data.count).toBe(3);
    expect(res.data.items[0].space).toMatchObject({ object: 'space', title: 'Four' });

    // Other members: their organization role where nothing is set, or a higher grant.
    const ed = await t.client().orgs.listSpacesForOrganizationMember(o, editor.user.id, { order: 'asc' });
    expect(list(ed.data)).toEqual([[s[0], 'admin'], [s[1], 'edit'], [s[2], 'edit'], [s[3], 'edit']]);

    const p1 = await t.rest('GET', path(editor.user.id, '?limit=3'));
    expectValidResponse('GET', '/orgs/{organizationId}/members/{userId}/spaces', 200, p1.body);
    const p2 = await t.rest('GET', path(editor.user.id, `?limit=3&page=${encodeURIComponent(p1.body.next.page)}`));
    expect([...list(p1.body), ...list(p2.body)].map((x) => x[0])).toEqual([s[3], s[2], s[1], s[0]]);
    expect(p2.body.next).toBeUndefined();
    expect(p2.body.count).toBe(4);
  });

  it('members see their own; others need org admin (403); 404 for outsiders and missing members; 400; 401', async () => {
    const self = await t.rest('GET', path(guest.user.id), undefined, guest.token);
    expect(self.status).toBe(200);
    expect(list(self.body)).toHaveLength(3);
    expect((await t.rest('GET', path(guest.user.id), undefined, editor.token)).status).toBe(403);
    const outsider = await t.createUser(undefined);
    expect((await t.rest('GET', path(guest.user.id), undefined, outsider.token)).status).toBe(404);
    expect((await t.rest('GET', path('user_missing'))).status).toBe(404);
    expect((await t.rest('GET', path(guest.user.id), undefined, null)).status).toBe(401);
    const bad = await t.rest('GET', path(guest.user.id, '?order=up'));
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toContain('order');
  });

  it('GraphQL: Member.spacePermissions', async () => {
    const r = await t.gql(
      `query($o: ID!, $u: ID!) { member(organizationId: $o, userId: $u) { spacePermissions(order: asc) { totalCount nodes { permission space { id title } } } } }`,
      { o, u: guest.user.id },
    );
    expect(r.errors).toBeUndefined();
    expect(r.data.member.spacePermissions).toEqual({
      totalCount: 3,
      nodes: [
        { permission: 'edit', space: { id: s[1], title: 'Two' } },
        { permission: 'comment', space: { id: s[2], title: 'Three' } },
        { permission: 'read', space: { id: s[3], title: 'Four' } },
      ],
    });
  });
});

describe('Member and Team nodes', () => {
  it('node(id) finds members only for people of the same organization', async () => {
    const m = await t.createUser('read');
    const r = await t.gql(`query($o: ID!, $u: ID!) { member(organizationId: $o, userId: $u) { id } }`, { o: org, u: m.user.id });
    const id = r.data.member.id;
    const guest = await t.createUser(null);
    expect((await t.gql(`query($id: ID!) { node(id: $id) { id } }`, { id }, guest.token)).data.node.id).toBe(id);
    const outsider = await t.createUser(undefined);
    const hidden = await t.gql(`query($id: ID!) { node(id: $id) { id } }`, { id }, outsider.token);
    expect(hidden.data?.node ?? null).toBeNull();
    expect(hidden.errors?.[0].extensions?.code).toBe('NOT_FOUND');
  });
});
