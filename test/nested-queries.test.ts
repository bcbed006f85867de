// Nested member and team queries cost the same number of SQL statements whatever the number of
// members and teams (no N+1), and answer the right data.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers.ts';
import { newId } from '../src/lib/ids.ts';

let t: TestApp;
let orgs: string[];

beforeAll(async () => {
  t = await startTestApp();
  const second = await t.gql(`mutation { createOrganization(input: { title: "Second" }) { id } }`);
  orgs = [t.org.id, second.data.createOrganization.id];
});
afterAll(async () => {
  await t?.close();
});

/** Grow each organization to `n` members and `n` teams of up to three members, with a few grants. */
async function grow(n: number) {
  for (const organizationId of orgs) {
    const members = await t.app.prisma.member.count({ where: { organizationId } });
    for (let i = members; i < n; i++) await t.createUser(i % 3 === 0 ? null : 'read', { organizationId });
    const users = await t.app.prisma.member.findMany({ where: { organizationId }, select: { userId: true } });
    const teams = await t.app.prisma.team.count({ where: { organizationId } });
    for (let i = teams; i < n; i++) {
      const team = await t.app.prisma.team.create({ data: { id: newId('Team'), organizationId, title: `Team ${i}` } });
      const picked = users.slice(i % users.length, (i % users.length) + 3);
      await t.app.prisma.teamMember.createMany({ data: picked.map((u, j) => ({ teamId: team.id, userId: u.userId, role: j === 0 ? 'owner' : 'member' })) });
      const space = await t.app.prisma.space.create({ data: { id: newId('Space'), organizationId, title: `Space ${i}` } });
      await t.app.prisma.contentGrant.createMany({
        data: [
          { id: newId('ContentGrant'), organizationId, spaceId: space.id, teamId: team.id, role: 'edit' },
          { id: newId('ContentGrant'), organizationId, spaceId: space.id, userId: picked[0].userId, role: 'read' },
        ],
      });
    }
  }
}

const MEMBERS = `{ viewer { organizations { nodes { id members(first: 50) { nodes { user { id displayName } } } } } } }`;
const TEAMS = `query($id: ID!) { organization(id: $id) { teams { nodes { id members { nodes { user { id } } } } } } }`;
const RICH = `query($id: ID!) { organization(id: $id) {
  members(first: 50) { totalCount nodes { role spaces teams permissions { view admin } user { id } teamMemberships { totalCount nodes { role team { id } } } } }
  teams(first: 50) { totalCount nodes { title spaces permissions { admin view } members { totalCount nodes { role permissions { view } member { role } user { id } } } } }
} }`;

async function run(query: string, variables: Record<string, unknown> = {}) {
  const { result, count } = await t.countQueries(() => t.gql(query, variables));
  expect(result.errors).toBeUndefined();
  return { data: result.data, count };
}

async function expected(organizationId: string) {
  const members = await t.app.prisma.member.findMany({ where: { organizationId }, include: { user: true } });
  const teams = await t.app.prisma.team.findMany({ where: { organizationId }, include: { members: true } });
  return { members, teams };
}

describe('nested member and team queries', () => {
  it('cost the same number of statements with 3 and with 30 members and teams, with the right data', async () => {
    await grow(3);
    const small = { members: await run(MEMBERS), teams: await run(TEAMS, { id: orgs[1] }), rich: await run(RICH, { id: orgs[1] }) };
    await grow(30);
    const large = { members: await run(MEMBERS), teams: await run(TEAMS, { id: orgs[1] }), rich: await run(RICH, { id: orgs[1] }) };

    expect(large.members.count).toBe(small.members.count);
    expect(large.teams.count).toBe(small.teams.count);
    expect(large.rich.count).toBe(small.rich.count);

    // Members of each organization, with their users.
    const nodes = large.members.data.viewer.organizations.nodes;
    expect(nodes.map((o: any) => o.id).sort()).toEqual([...orgs].sort());
    for (const o of nodes) {
      const { members } = await expected(o.id);
      expect(o.members.nodes).toHaveLength(30);
      expect(o.members.nodes.map((m: any) => m.user.id).sort()).toEqual(members.map((m) => m.userId).sort());
      const names = new Map(members.map((m) => [m.userId, m.user.displayName]));
      for (const m of o.members.nodes) expect(m.user.displayName).toBe(names.get(m.user.id));
    }

    // Teams with their members.
    const { teams, members } = await expected(orgs[1]);
    const got = large.teams.data.organization.teams.nodes;
    expect(got).toHaveLength(20); // the default page size
    for (const team of got) {
      const want = teams.find((x) => x.id === team.id)!;
      expect(team.members.nodes.map((m: any) => m.user.id).sort()).toEqual(want.members.map((m) => m.userId).sort());
    }

    // Counters and computed fields agree with the database.
    const rich = large.rich.data.organization;
    expect(rich.members.totalCount).toBe(30);
    expect(rich.teams.totalCount).toBe(30);
    const grants = await t.app.prisma.contentGrant.findMany({ where: { organizationId: orgs[1] } });
    for (const m of rich.members.nodes) {
      const memberships = teams.filter((x) => x.members.some((tm) => tm.userId === m.user.id));
      expect(m.teams).toBe(memberships.length);
      expect(m.teamMemberships.totalCount).toBe(memberships.length);
      expect(m.spaces).toBe(new Set(grants.filter((g) => g.userId === m.user.id).map((g) => g.spaceId)).size);
      expect(m.role).toBe(members.find((x) => x.userId === m.user.id)!.role);
    }
    for (const team of rich.teams.nodes) {
      expect(team.spaces).toBe(1);
      expect(team.permissions).toEqual({ admin: true, view: true });
      expect(team.members.totalCount).toBe(team.members.nodes.length);
      for (const tm of team.members.nodes) expect(tm.member.role).toBe(members.find((x) => x.userId === tm.user.id)!.role);
    }
  });
});
