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

async function readFlags(path: string, c: Caller) {
  const r = await t.rest('GET', path, undefined, c.token);
  if (r.status === 404) return null;
  expect(r.status, `GET ${path} as ${c.name}`).toBe(200);
  return r.body.permissions as Record<string, boolean>;
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
    flags: (i, c) => readFlags(`/v1/spaces/${i.space}/comments/${i.comment}`, c),
    ops: [
      ['view', (i, c) => rest('GET', `/v1/spaces/${i.space}/comments/${i.comment}`, undefined, c)],
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
    flags: (i, c) => readFlags(`/v1/spaces/${i.space}/comments/${i.comment}`, c),
    ops: [
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
            if (!succeeded && ![403, 404].includes(got)) mismatches.push(`${c.name}: ${flag} answered ${got}`);
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
