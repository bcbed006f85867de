// The `permissions` flags never disagree with what the API does: for every resource type that
// carries flags and every kind of caller, a flag that says `true` means the operation it governs
// succeeds, and `false` means that operation is refused (403/404). Data-driven: one table of
// flag → operation per resource; each caller works on a fresh instance, destructive operations
// last. Flags that govern no operation of the API (e.g. `triggerGitSync`, `viewBilling`) are not
// in the tables.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers.ts';
import { newId } from '../src/lib/ids.ts';
import type { Role } from '../src/generated/prisma/enums.ts';

let t: TestApp;

type Caller = { name: string; token: string; userId: string; role?: Role | null; shareKey?: string };
const callers: Caller[] = [];

/** A fresh instance of a resource: the ids its operations need. */
type Instance = Record<string, string>;
type Op = (i: Instance, c: Caller) => Promise<number>;
type ResourceCase = {
  name: string;
  /** Create a fresh instance (as the bootstrap admin); `c` is the caller it is made for. */
  create: (c: Caller) => Promise<Instance>;
  /** The flags as the caller reads them, or null when the caller cannot read the resource at all. */
  flags: (i: Instance, c: Caller) => Promise<Record<string, boolean> | null>;
  /** flag → the operation it governs, in the order they run (destructive ones last). */
  ops: Array<[string, Op]>;
  /** Caller kinds this resource applies to (default: all but the share-key reader). */
  callers?: (c: Caller) => boolean;
};

const status = async (p: Promise<{ status: number }>) => (await p).status;
const rest = (method: string, path: string, body: unknown, c: Caller) => status(t.rest(method, path, body, c.token));
const admin = (method: string, path: string, body?: unknown) => t.rest(method, path, body);

/** The flags of a REST representation; null when the caller may not read it (403/404: no flags to read). */
async function readFlags(path: string, c: Caller) {
  const r = await t.rest('GET', path, undefined, c.token);
  if (r.status === 404 || r.status === 403) return null;
  expect(r.status, `GET ${path} as ${c.name}`).toBe(200);
  return r.body.permissions as Record<string, boolean>;
}

/** The `permissions` of a GraphQL query's `field`; null when the query is refused (NOT_FOUND/FORBIDDEN). */
async function gqlFlags(query: string, variables: Record<string, unknown>, field: string, c: Caller) {
  const r = await t.gql(query, variables, c.token);
  const code = r.errors?.[0].extensions?.code;
  if (code === 'NOT_FOUND' || code === 'FORBIDDEN') return null;
  expect(r.errors, `${field} as ${c.name}`).toBeUndefined();
  return r.data[field].permissions as Record<string, boolean>;
}

/**
 * Several deletes answer 204 whether or not anything was deleted (the contract's idempotent
 * deletes): a 2xx counts as success only when the row is gone; a 2xx that left it in place is
 * reported as such.
 */
const NOTHING_DELETED = 0;
async function deleted(status: Promise<number>, exists: () => Promise<unknown>) {
  const s = await status;
  if (s < 200 || s >= 300) return s;
  return (await exists()) ? NOTHING_DELETED : s;
}

/** A member of the organization with the `read` role, made for one caller. */
async function newMember() {
  const u = await t.createUser('read');
  return u.user.id;
}

let siteId: string;
let shareKey: string;

/** A space at the organization root, shown on the share-link site, with a page. */
async function newSpace(c: Caller) {
  const s = await admin('POST', `/v1/orgs/${t.org.id}/spaces`, { title: 'Flags' });
  expect(s.status).toBe(201);
  const id = s.body.id as string;
  const added = await admin('POST', `/v1/orgs/${t.org.id}/sites/${siteId}/site-spaces`, { spaceId: id });
  expect(added.status).toBe(201);
  // The guest's access is an explicit `comment` grant on each space.
  if (c.role === null) {
    await t.app.prisma.contentGrant.create({ data: { id: newId('ContentGrant'), organizationId: t.org.id, spaceId: id, userId: c.userId, role: 'comment' } });
  }
  return id;
}

async function newChangeRequest(spaceId: string) {
  const r = await admin('POST', `/v1/spaces/${spaceId}/change-requests`, { subject: 'Proposal' });
  expect(r.status).toBe(201);
  return r.body.id as string;
}

/** A comment's flags: the REST representation's, plus `resolve`, which only GraphQL carries (the contract has none). */
async function commentFlags(i: Instance, c: Caller) {
  const flags = await readFlags(`/v1/spaces/${i.space}/comments/${i.comment}`, c);
  if (!flags) return null;
  const r = await t.gql(`query($s: ID!, $id: ID!) { comment(spaceId: $s, id: $id) { permissions { resolve } } }`, { s: i.space, id: i.comment }, c.token);
  expect(r.errors, `comment.permissions.resolve as ${c.name}`).toBeUndefined();
  return { ...flags, resolve: r.data.comment.permissions.resolve as boolean };
}

const resolveOp: Op = (i, c) => rest('PUT', `/v1/spaces/${i.space}/comments/${i.comment}`, { resolved: true }, c);

const insertPage = { changes: [{ operation: 'insert_page', title: 'New page', document: { markdown: 'text' } }] };

const RESOURCES: ResourceCase[] = [
  {
    name: 'space',
    callers: () => true,
    create: async (c) => ({ space: await newSpace(c) }),
    flags: (i, c) => readFlags(`/v1/spaces/${i.space}${c.shareKey ? `?shareKey=${encodeURIComponent(c.shareKey)}` : ''}`, c),
    ops: [
      ['view', (i, c) => rest('GET', `/v1/spaces/${i.space}${c.shareKey ? `?shareKey=${encodeURIComponent(c.shareKey)}` : ''}`, undefined, c)],
      ['comment', (i, c) => rest('POST', `/v1/spaces/${i.space}/comments`, { body: { markdown: 'A remark' } }, c)],
      ['edit', (i, c) => rest('POST', `/v1/spaces/${i.space}/change-requests`, { subject: 'Mine' }, c)],
      ['merge', async (i, c) => rest('POST', `/v1/spaces/${i.space}/change-requests/${await newChangeRequest(i.space)}/merge`, {}, c)],
      ['admin', (i, c) => rest('PATCH', `/v1/spaces/${i.space}`, { title: 'Renamed' }, c)],
    ],
  },
  {
    name: 'change request',
    create: async (c) => {
      const space = await newSpace(c);
      return { space, cr: await newChangeRequest(space) };
    },
    // The REST change request carries no flags (the contract has none): GraphQL's.
    flags: async (i, c) => {
      const r = await t.gql(
        `query($s: ID!, $cr: String!) { changeRequest(spaceId: $s, idOrNumber: $cr) { permissions { view comment edit editContent review merge } } }`,
        { s: i.space, cr: i.cr },
        c.token,
      );
      if (r.errors?.[0].extensions?.code === 'NOT_FOUND') return null;
      expect(r.errors).toBeUndefined();
      return r.data.changeRequest.permissions;
    },
    ops: [
      ['view', (i, c) => rest('GET', `/v1/spaces/${i.space}/change-requests/${i.cr}`, undefined, c)],
      ['comment', (i, c) => rest('POST', `/v1/spaces/${i.space}/change-requests/${i.cr}/comments`, { body: { markdown: 'A remark' } }, c)],
      ['edit', (i, c) => rest('PATCH', `/v1/spaces/${i.space}/change-requests/${i.cr}`, { subject: 'Renamed' }, c)],
      ['editContent', (i, c) => rest('POST', `/v1/spaces/${i.space}/change-requests/${i.cr}/content`, insertPage, c)],
      ['merge', (i, c) => rest('POST', `/v1/spaces/${i.space}/change-requests/${i.cr}/merge`, {}, c)],
    ],
  },
  {
    name: 'comment',
    create: async (c) => {
      const space = await newSpace(c);
      const posted = await admin('POST', `/v1/spaces/${space}/comments`, { body: { markdown: 'By the admin' } });
      expect(posted.status).toBe(200);
      return { space, comment: posted.body.id };
    },
    flags: commentFlags,
    ops: [
      ['view', (i, c) => rest('GET', `/v1/spaces/${i.space}/comments/${i.comment}`, undefined, c)],
      ['resolve', resolveOp],
      ['reply', (i, c) => rest('POST', `/v1/spaces/${i.space}/comments/${i.comment}/replies`, { body: { markdown: 'Agreed' } }, c)],
      ['react', (i, c) => rest('PUT', `/v1/spaces/${i.space}/comments/${i.comment}`, { addedReactions: ['👍'] }, c)],
      ['edit', (i, c) => rest('PUT', `/v1/spaces/${i.space}/comments/${i.comment}`, { body: { markdown: 'Edited' } }, c)],
      ['delete', async (i, c) => {
        const s = await rest('DELETE', `/v1/spaces/${i.space}/comments/${i.comment}`, undefined, c);
        // An idempotent delete answers 204 when nothing was there: only 205 proves it deleted.
        return s === 204 ? 404 : s;
      }],
    ],
  },
  {
    name: "comment by the caller (when they may post; else the admin's)",
    create: async (c) => {
      const space = await newSpace(c);
      let posted = await t.rest('POST', `/v1/spaces/${space}/comments`, { body: { markdown: 'Mine' } }, c.token);
      if (posted.status !== 200) posted = await admin('POST', `/v1/spaces/${space}/comments`, { body: { markdown: 'By the admin' } });
      return { space, comment: posted.body.id };
    },
    flags: commentFlags,
    ops: [
      ['resolve', resolveOp],
      ['edit', (i, c) => rest('PUT', `/v1/spaces/${i.space}/comments/${i.comment}`, { body: { markdown: 'Edited' } }, c)],
      ['delete', async (i, c) => {
        const s = await rest('DELETE', `/v1/spaces/${i.space}/comments/${i.comment}`, undefined, c);
        return s === 204 ? 404 : s;
      }],
    ],
  },
  {
    name: 'comment reply',
    create: async (c) => {
      const space = await newSpace(c);
      const posted = await admin('POST', `/v1/spaces/${space}/comments`, { body: { markdown: 'Thread' } });
      const reply = await admin('POST', `/v1/spaces/${space}/comments/${posted.body.id}/replies`, { body: { markdown: 'Reply' } });
      expect(reply.status).toBe(200);
      return { space, comment: posted.body.id, reply: reply.body.id };
    },
    flags: (i, c) => readFlags(`/v1/spaces/${i.space}/comments/${i.comment}/replies/${i.reply}`, c),
    ops: [
      ['view', (i, c) => rest('GET', `/v1/spaces/${i.space}/comments/${i.comment}/replies/${i.reply}`, undefined, c)],
      ['react', (i, c) => rest('PUT', `/v1/spaces/${i.space}/comments/${i.comment}/replies/${i.reply}`, { addedReactions: ['🎉'] }, c)],
      ['edit', (i, c) => rest('PUT', `/v1/spaces/${i.space}/comments/${i.comment}/replies/${i.reply}`, { body: { markdown: 'Edited' } }, c)],
      ['delete', async (i, c) => {
        const s = await rest('DELETE', `/v1/spaces/${i.space}/comments/${i.comment}/replies/${i.reply}`, undefined, c);
        return s === 204 ? 404 : s;
      }],
    ],
  },
  {
    name: 'collection',
    create: async (c) => {
      const r = await admin('POST', `/v1/orgs/${t.org.id}/collections`, { title: 'Folder' });
      expect(r.status).toBe(201);
      if (c.role === null) {
        await t.app.prisma.contentGrant.create({ data: { id: newId('ContentGrant'), organizationId: t.org.id, collectionId: r.body.id, userId: c.userId, role: 'create' } });
      }
      return { collection: r.body.id };
    },
    flags: (i, c) => readFlags(`/v1/collections/${i.collection}`, c),
    ops: [
      ['view', (i, c) => rest('GET', `/v1/collections/${i.collection}`, undefined, c)],
      ['create', (i, c) => rest('POST', `/v1/orgs/${t.org.id}/collections`, { title: 'Inside', parent: i.collection }, c)],
      ['admin', async (i, c) => {
        const s = await rest('DELETE', `/v1/collections/${i.collection}`, undefined, c);
        return s === 204 ? 404 : s;
      }],
    ],
  },
  {
    name: 'organization',
    create: async () => ({ org: t.org.id }),
    flags: (i, c) => readFlags(`/v1/orgs/${i.org}`, c),
    ops: [
      ['view', (i, c) => rest('GET', `/v1/orgs/${i.org}`, undefined, c)],
      ['listMembers', (i, c) => rest('GET', `/v1/orgs/${i.org}/members`, undefined, c)],
      ['listTeams', (i, c) => rest('GET', `/v1/orgs/${i.org}/teams`, undefined, c)],
      ['ownTeam', (i, c) => rest('PUT', `/v1/orgs/${i.org}/teams`, { title: `Team of ${c.name}` }, c)],
      ['createContent', (i, c) => rest('POST', `/v1/orgs/${i.org}/collections`, { title: 'Mine' }, c)],
      ['admin', (i, c) => rest('PATCH', `/v1/orgs/${i.org}`, { title: 'My Organization' }, c)],
    ],
  },
  {
    // The REST provider carries no flags (the contract has none): GraphQL's.
    name: 'SAML provider',
    create: async () => {
      const r = await admin('POST', `/v1/orgs/${t.org.id}/saml`, { label: 'Okta' });
      expect(r.status).toBe(201);
      return { saml: r.body.id };
    },
    flags: (i, c) =>
      gqlFlags(`query($o: ID!, $id: ID!) { samlProvider(organizationId: $o, id: $id) { permissions { view edit } } }`, { o: t.org.id, id: i.saml }, 'samlProvider', c),
    ops: [
      ['view', (i, c) => rest('GET', `/v1/orgs/${t.org.id}/saml/${i.saml}`, undefined, c)],
      ['edit', (i, c) => rest('PATCH', `/v1/orgs/${t.org.id}/saml/${i.saml}`, { label: 'Renamed' }, c)],
      ['edit', (i, c) => deleted(rest('DELETE', `/v1/orgs/${t.org.id}/saml/${i.saml}`, undefined, c), () => t.app.prisma.samlProvider.findUnique({ where: { id: i.saml } }))],
    ],
  },
  {
    name: 'OpenAPI specification',
    create: async () => {
      const slug = `spec-${newId('Team').slice(-8).toLowerCase()}`;
      const r = await admin('POST', `/v1/orgs/${t.org.id}/openapi`, { slug, source: { text: 'openapi: 3.0.0' } });
      expect(r.status).toBe(201);
      return { slug };
    },
    flags: (i, c) => readFlags(`/v1/orgs/${t.org.id}/openapi/${i.slug}`, c),
    ops: [
      ['view', (i, c) => rest('GET', `/v1/orgs/${t.org.id}/openapi/${i.slug}`, undefined, c)],
      ['edit', (i, c) => rest('PUT', `/v1/orgs/${t.org.id}/openapi/${i.slug}`, { source: { text: 'openapi: 3.1.0' } }, c)],
      ['delete', (i, c) => deleted(rest('DELETE', `/v1/orgs/${t.org.id}/openapi/${i.slug}`, undefined, c), () => t.app.prisma.openApiSpec.findFirst({ where: { organizationId: t.org.id, slug: i.slug } }))],
    ],
  },
  {
    name: 'translation settings',
    create: async () => {
      const r = await admin('POST', `/v1/orgs/${t.org.id}/translations`, { title: 'Docs in French' });
      expect(r.status).toBe(201);
      return { settings: r.body.id };
    },
    flags: (i, c) => readFlags(`/v1/orgs/${t.org.id}/translations/${i.settings}`, c),
    ops: [
      ['view', (i, c) => rest('GET', `/v1/orgs/${t.org.id}/translations/${i.settings}`, undefined, c)],
      ['edit', (i, c) => rest('PUT', `/v1/orgs/${t.org.id}/translations/${i.settings}`, { title: 'Docs in German' }, c)],
      ['edit', (i, c) => deleted(rest('DELETE', `/v1/orgs/${t.org.id}/translations/${i.settings}`, undefined, c), () => t.app.prisma.translationSettings.findUnique({ where: { id: i.settings } }))],
    ],
  },
  ...[true, false].map(
    (withGuest): ResourceCase => ({
      name: withGuest ? 'team made by the admin, with the guest in it' : 'team made by the caller (when they may; else by the admin, without them)',
      create: async (c) => {
        if (!withGuest) {
          const mine = await t.rest('PUT', `/v1/orgs/${t.org.id}/teams`, { title: `Team of ${c.name}` }, c.token);
          if (mine.status === 201) return { team: mine.body.id };
        }
        const r = await admin('PUT', `/v1/orgs/${t.org.id}/teams`, { title: 'Writers', ...(withGuest && c.role === null ? { members: [c.userId] } : {}) });
        expect(r.status).toBe(201);
        return { team: r.body.id };
      },
      flags: (i, c) => readFlags(`/v1/orgs/${t.org.id}/teams/${i.team}`, c),
      ops: [
        ['view', (i, c) => rest('GET', `/v1/orgs/${t.org.id}/teams/${i.team}`, undefined, c)],
        ['view', (i, c) => rest('GET', `/v1/orgs/${t.org.id}/teams/${i.team}/members`, undefined, c)],
        ['admin', (i, c) => rest('PATCH', `/v1/orgs/${t.org.id}/teams/${i.team}`, { title: 'Renamed' }, c)],
        ['admin', (i, c) => rest('PUT', `/v1/orgs/${t.org.id}/teams/${i.team}/members`, { add: [t.adminUser.id] }, c)],
        ['admin', (i, c) => deleted(rest('DELETE', `/v1/orgs/${t.org.id}/teams/${i.team}`, undefined, c), () => t.app.prisma.team.findUnique({ where: { id: i.team } }))],
      ],
    }),
  ),
  ...[true, false].map(
    (teammate): ResourceCase => ({
      // The REST member carries no flags (the contract has none): GraphQL's.
      name: teammate ? 'another member, in a team with the caller' : 'another member, in no team with the caller',
      create: async (c) => {
        const user = await newMember();
        if (teammate && c.role !== undefined) {
          expect((await admin('PUT', `/v1/orgs/${t.org.id}/teams`, { title: 'Pair', members: [user, c.userId] })).status).toBe(201);
        }
        return { user };
      },
      flags: (i, c) =>
        gqlFlags(`query($o: ID!, $u: ID!) { member(organizationId: $o, userId: $u) { permissions { view admin } } }`, { o: t.org.id, u: i.user }, 'member', c),
      ops: [
        ['view', (i, c) => rest('GET', `/v1/orgs/${t.org.id}/members/${i.user}`, undefined, c)],
        ['view', (i, c) => rest('GET', `/v1/orgs/${t.org.id}/members/${i.user}/teams`, undefined, c)],
        ['admin', (i, c) => rest('PATCH', `/v1/orgs/${t.org.id}/members/${i.user}`, { role: 'comment' }, c)],
        ['admin', (i, c) => rest('POST', `/v1/orgs/${t.org.id}/members/${i.user}/sso`, undefined, c)],
        ['admin', (i, c) =>
          deleted(rest('DELETE', `/v1/orgs/${t.org.id}/members/${i.user}`, undefined, c), () =>
            t.app.prisma.member.findUnique({ where: { organizationId_userId: { organizationId: t.org.id, userId: i.user } } }),
          )],
      ],
    }),
  ),
  {
    name: "the caller's own membership",
    create: async (c) => ({ user: c.userId }),
    flags: (i, c) =>
      gqlFlags(`query($o: ID!, $u: ID!) { member(organizationId: $o, userId: $u) { permissions { view admin } } }`, { o: t.org.id, u: i.user }, 'member', c),
    ops: [
      ['view', (i, c) => rest('GET', `/v1/orgs/${t.org.id}/members/${i.user}`, undefined, c)],
      // Setting one's own role to what it is: allowed to those who may change roles, and harmless.
      ['admin', (i, c) => rest('PATCH', `/v1/orgs/${t.org.id}/members/${i.user}`, { role: c.role ?? null }, c)],
    ],
  },
];

beforeAll(async () => {
  t = await startTestApp();
  const first = await admin('POST', `/v1/orgs/${t.org.id}/spaces`, { title: 'Home' });
  const site = await admin('POST', `/v1/orgs/${t.org.id}/sites`, { title: 'Shared', visibility: 'share-link', spaces: [first.body.id] });
  expect(site.status).toBe(201);
  siteId = site.body.id;
  expect((await admin('POST', `/v1/orgs/${t.org.id}/sites/${siteId}/publish`)).status).toBe(200);
  const link = await admin('POST', `/v1/orgs/${t.org.id}/sites/${siteId}/share-links`, { name: 'partners' });
  shareKey = link.body.key ?? (await t.app.prisma.shareLink.findUniqueOrThrow({ where: { id: link.body.id } })).key;

  for (const role of ['read', 'comment', 'edit', 'review', 'create', 'admin'] as const) {
    const u = await t.createUser(role);
    callers.push({ name: role, token: u.token, userId: u.user.id, role });
  }
  const guest = await t.createUser(null);
  callers.push({ name: 'guest (grants: comment on spaces, create on collections)', token: guest.token, userId: guest.user.id, role: null });
  const outsider = await t.createUser(undefined);
  callers.push({ name: 'outsider', token: outsider.token, userId: outsider.user.id });
  const keyed = await t.createUser(undefined);
  callers.push({ name: 'share-key reader', token: keyed.token, userId: keyed.user.id, shareKey });
});
afterAll(async () => {
  await t?.close();
});

describe('permission flags match what the API does', () => {
  for (const resource of RESOURCES) {
    it(`${resource.name}: for every caller, true flags succeed and false flags are refused`, async () => {
      const applies = resource.callers ?? ((c: Caller) => !c.shareKey);
      const mismatches: string[] = [];
      const seen = new Map<string, Set<boolean>>();
      // One caller at a time: creations take the organization's tree lock.
      for (const c of callers.filter(applies)) {
        {
          const instance = await resource.create(c);
          const flags = await resource.flags(instance, c);
          for (const [flag, op] of resource.ops) {
            const expected = flags ? flags[flag] : false;
            if (flags) expect(typeof expected, `${resource.name}.${flag} is a boolean for ${c.name}`).toBe('boolean');
            const got = await op(instance, c);
            const succeeded = got >= 200 && got < 300;
            if (got === NOTHING_DELETED) mismatches.push(`${c.name}: ${flag}=${expected} but its delete answered 2xx and deleted nothing`);
            else if (!succeeded && ![403, 404].includes(got)) mismatches.push(`${c.name}: ${flag} answered ${got}`);
            else if (succeeded !== expected) mismatches.push(`${c.name}: ${flag}=${expected} but the operation answered ${got}`);
            seen.set(flag, (seen.get(flag) ?? new Set()).add(expected));
          }
        }
      }
      expect(mismatches).toEqual([]);
      // The table is not vacuous: every flag is true for some caller and false for another.
      for (const [flag] of resource.ops) expect([...(seen.get(flag) ?? [])].sort(), `${resource.name}.${flag}`).toEqual([false, true]);
    });
  }

  it('a reply is never resolvable: its resolve flag is false for everyone, and `resolved` on a reply is a 400', async () => {
    const space = await newSpace(callers[0]!);
    const thread = await admin('POST', `/v1/spaces/${space}/comments`, { body: { markdown: 'Thread' } });
    const reply = await admin('POST', `/v1/spaces/${space}/comments/${thread.body.id}/replies`, { body: { markdown: 'Reply' } });
    const r = await t.gql(
      `query($s: ID!, $c: ID!, $id: ID!) { commentReply(spaceId: $s, commentId: $c, id: $id) { permissions { view resolve } } }`,
      { s: space, c: thread.body.id, id: reply.body.id },
    );
    expect(r.errors).toBeUndefined();
    expect(r.data.commentReply.permissions).toEqual({ view: true, resolve: false });
    const put = await admin('PUT', `/v1/spaces/${space}/comments/${thread.body.id}/replies/${reply.body.id}`, { resolved: true });
    expect(put.status).toBe(400);
    expect(JSON.stringify(put.body)).toContain('resolved');
  });

  it('a share-key reader is told exactly what the key allows: view, nothing else', async () => {
    const reader = callers.find((c) => c.shareKey)!;
    const space = await newSpace(reader);
    const r = await t.rest('GET', `/v1/spaces/${space}?shareKey=${encodeURIComponent(shareKey)}`, undefined, reader.token);
    expect(r.status).toBe(200);
    expect(r.body.permissions).toEqual({ view: true, access: false, admin: false, viewInviteLinks: false, edit: false, triggerGitSync: false, comment: false, merge: false, review: false });
    // A member reading with a key gets their own role's flags, not the key's.
    const member = callers.find((c) => c.name === 'edit')!;
    const m = await t.rest('GET', `/v1/spaces/${space}?shareKey=${encodeURIComponent(shareKey)}`, undefined, member.token);
    expect(m.body.permissions).toMatchObject({ view: true, edit: true, admin: false });
  });
});
