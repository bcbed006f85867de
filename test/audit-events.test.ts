// The organization audit log: GET /v1/orgs/{organizationId}/audit-events and …/{auditEventId}
// (the newer contract's listOrganizationAuditEvents / getOrganizationAuditEvent), its GraphQL
// twin Organization.auditEvents, admin-only access, filters, keyset pages, and retention.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectAccess, startTestApp, type TestApp } from './helpers.ts';
import { expectValidNextResponse } from './openapi.ts';
import { purgeOldEvents } from '../src/events/log.ts';

let t: TestApp;
let org: string;
let spaces: string[] = [];
const DAY = 24 * 60 * 60 * 1000;

beforeAll(async () => {
  t = await startTestApp();
  org = t.org.id;
  for (const title of ['Alpha', 'Beta', 'Gamma', 'Delta', 'Epsilon']) {
    const r = await t.rest('POST', `/v1/orgs/${org}/spaces`, { title });
    spaces.push(r.body.id);
  }
  await t.rest('PATCH', `/v1/spaces/${spaces[0]}`, { title: 'Alpha 2' });
});
afterAll(async () => {
  await t?.close();
});

const LIST = () => `/v1/orgs/${org}/audit-events`;

describe('GET /v1/orgs/{organizationId}/audit-events', () => {
  it('lists the organization’s events newest first, in the newer contract’s shape', async () => {
    const r = await t.rest('GET', LIST());
    expect(r.status).toBe(200);
    expectValidNextResponse('GET', '/orgs/{organizationId}/audit-events', 200, r.body);
    expect(r.body.count).toBe(6);
    expect(r.body.items.map((e: any) => [e.action, e.target.id])).toEqual([
      ['space_updated', spaces[0]],
      ...[...spaces].reverse().map((id) => ['space_created', id]),
    ]);
    const [first] = r.body.items;
    expect(first).toMatchObject({
      object: 'audit-event',
      source: 'api',
      actor: { type: 'user', id: t.adminUser.id, label: t.adminUser.displayName },
      target: { type: 'space', id: spaces[0], label: 'Alpha 2' },
      urls: { location: expect.stringMatching(new RegExp(`/v1/orgs/${org}/audit-events/${first.id}$`)) },
    });
    expect(r.body.next).toBeUndefined();
  });

  it('pages with keyset cursors (limit 1–100, default 20): no duplicates, no gaps, stable under inserts', async () => {
    const all = (await t.rest('GET', LIST())).body.items.map((e: any) => e.id);
    const seen: string[] = [];
    let page: string | undefined;
    let inserted = false;
    do {
      const r = await t.rest('GET', `${LIST()}?limit=2${page ? `&page=${encodeURIComponent(page)}` : ''}`);
      expect(r.status).toBe(200);
      expectValidNextResponse('GET', '/orgs/{organizationId}/audit-events', 200, r.body);
      expect(r.body.items.length).toBeLessThanOrEqual(2);
      seen.push(...r.body.items.map((e: any) => e.id));
      page = r.body.next?.page;
      if (!inserted) {
        // A change between pages lands before the first page, never inside the listing.
        await t.rest('PATCH', `/v1/spaces/${spaces[1]}`, { title: 'Beta 2' });
        inserted = true;
      }
    } while (page);
    expect(seen).toEqual(all);
    expect((await t.rest('GET', `${LIST()}?limit=0`)).status).toBe(400);
    expect((await t.rest('GET', `${LIST()}?limit=101`)).status).toBe(400);
    const bad = await t.rest('GET', `${LIST()}?page=garbage`);
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toMatch(/page/);
  });

  it('filters by action, actor, target and time window', async () => {
    const byAction = await t.rest('GET', `${LIST()}?action=space_updated`);
    expect(byAction.body.items.map((e: any) => e.target.id)).toEqual([spaces[1], spaces[0]]);
    expect(byAction.body.count).toBe(2);
    const byTarget = await t.rest('GET', `${LIST()}?target=${spaces[0]}`);
    expect(byTarget.body.items.map((e: any) => e.action)).toEqual(['space_updated', 'space_created']);
    const reader = await t.as('reader');
    const byActor = await t.rest('GET', `${LIST()}?actor=${reader.user!.id}`);
    expect(byActor.body.items).toEqual([]);
    expect((await t.rest('GET', `${LIST()}?actor=${t.adminUser.id}`)).body.count).toBe(7);
    expect((await t.rest('GET', `${LIST()}?actor=system`)).body.count).toBe(0);

    t.clock.advance(2 * DAY);
    await t.rest('PATCH', `/v1/spaces/${spaces[2]}`, { title: 'Gamma later' });
    const later = new Date(Date.now() + DAY).toISOString();
    const recent = await t.rest('GET', `${LIST()}?from=${encodeURIComponent(later)}`);
    expect(recent.body.items.map((e: any) => [e.action, e.target.id])).toEqual([['space_updated', spaces[2]]]);
    const old = await t.rest('GET', `${LIST()}?to=${encodeURIComponent(later)}`);
    expect(old.body.count).toBe(7);
    const badDate = await t.rest('GET', `${LIST()}?from=yesterday`);
    expect(badDate.status).toBe(400);
    expect(badDate.body.error.message).toMatch(/from/);
    expect((await t.rest('GET', `${LIST()}?unknown=1`)).status).toBe(400);
  });

  it('organization admins only: outsider 404, members below admin 403, no token 401', async () => {
    await expectAccess(t, { method: 'GET', path: LIST() }, { anonymous: 401, outsider: 404, guest: 403, reader: 403, creator: 403, admin: 200 });
    expect((await t.rest('GET', `/v1/orgs/org_0000000000000000000000/audit-events`)).status).toBe(404);
  });

  it('another organization’s events stay there', async () => {
    const other = await t.rest('POST', `/v1/orgs/${org}/spaces`, { title: 'Zeta' });
    expect(other.status).toBe(201);
    const created = await t.app.prisma.organization.create({ data: { id: 'org_00000000000000000other', title: 'Other' } });
    await t.app.prisma.member.create({ data: { id: 'mem_00000000000000000other', organizationId: created.id, userId: t.adminUser.id, role: 'admin' } });
    const r = await t.rest('GET', `/v1/orgs/${created.id}/audit-events`);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ items: [], count: 0 });
  });
});

describe('GET /v1/orgs/{organizationId}/audit-events/{auditEventId}', () => {
  it('answers one event with its payload (AuditEventDetails)', async () => {
    const [latest] = (await t.rest('GET', `${LIST()}?action=space_created&limit=1`)).body.items;
    const r = await t.rest('GET', `${LIST()}/${latest.id}`);
    expect(r.status).toBe(200);
    expectValidNextResponse('GET', '/orgs/{organizationId}/audit-events/{auditEventId}', 200, r.body);
    expect(r.body).toMatchObject({ ...latest, schemaVersion: 1, payload: { title: 'Zeta' } });
  });

  it('404 for an unknown id, a malformed id, or an event of another organization', async () => {
    const missing = await t.rest('GET', `${LIST()}/00000000-0000-4000-8000-000000000000`);
    expect(missing.status).toBe(404);
    expectValidNextResponse('GET', '/orgs/{organizationId}/audit-events/{auditEventId}', 404, missing.body);
    expect((await t.rest('GET', `${LIST()}/space_${'0'.repeat(22)}`)).status).toBe(404);
    const [one] = (await t.rest('GET', LIST())).body.items;
    expect((await t.rest('GET', `/v1/orgs/org_00000000000000000other/audit-events/${one.id}`)).status).toBe(404);
  });

  it('admins only', async () => {
    const [one] = (await t.rest('GET', LIST())).body.items;
    await expectAccess(t, { method: 'GET', path: `${LIST()}/${one.id}` }, { anonymous: 401, outsider: 404, reader: 403, admin: 200 });
  });
});

describe('GraphQL: Organization.auditEvents and node(id:)', () => {
  it('the same list as a connection, and the event as a node for admins only', async () => {
    const q = `query($org: ID!) { organization(id: $org) { auditEvents(first: 3, action: "space_created") { totalCount nodes { id action entryPoint source position actor { type id } target { type id label } payload } } } }`;
    const r = await t.gql(q, { org });
    expect(r.errors).toBeUndefined();
    const conn = r.data.organization.auditEvents;
    expect(conn.totalCount).toBe(6);
    expect(conn.nodes.map((n: any) => n.action)).toEqual(['space_created', 'space_created', 'space_created']);
    expect(conn.nodes[0]).toMatchObject({ entryPoint: 'rest', source: 'api', actor: { type: 'user', id: t.adminUser.id }, target: { type: 'space', label: 'Zeta' } });
    expect(BigInt(conn.nodes[0].position) > BigInt(conn.nodes[1].position)).toBe(true);

    const id = conn.nodes[0].id;
    const node = await t.gql(`query($id: ID!) { node(id: $id) { ... on AuditEvent { id action } } }`, { id });
    expect(node.data.node).toEqual({ id, action: 'space_created' });
    const reader = await t.as('reader');
    const hidden = await t.gql(`query($id: ID!) { node(id: $id) { id } }`, { id }, reader.token);
    expect(hidden.data?.node ?? null).toBeNull();
    expect(hidden.errors?.[0].extensions?.code).toBe('NOT_FOUND');
    const forbidden = await t.gql(q, { org }, reader.token);
    expect(forbidden.errors?.[0].extensions?.code).toBe('FORBIDDEN');
  });
});

describe('retention', () => {
  it('the purge removes events older than AUDIT_RETENTION_DAYS only, and is idempotent', async () => {
    const total = await t.app.prisma.event.count();
    const deps = { prisma: t.app.prisma, clock: t.clock, config: { auditRetentionDays: 30 } };
    // Everything so far is at most ~2 days old (by the test clock): nothing goes.
    expect(await purgeOldEvents(deps)).toBe(0);
    t.clock.advance(31 * DAY);
    await t.rest('PATCH', `/v1/spaces/${spaces[3]}`, { title: 'Delta fresh' });
    const gone = await purgeOldEvents(deps);
    expect(gone).toBe(total);
    expect(await purgeOldEvents(deps)).toBe(0);
    const left = (await t.rest('GET', LIST())).body.items;
    expect(left.map((e: any) => [e.action, e.target.id])).toEqual([['space_updated', spaces[3]]]);
  });
});
