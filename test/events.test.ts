// The event log (outbox): every mutation writes its events in its own transaction, with the actor,
// the token, the entry point (rest / graphql / job / cli), the organization and the object; a
// mutation that fails writes nothing; committing an event sends no notification (the live feed reads the log).
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { startTestApp, type TestApp } from './helpers.ts';
import { recordEvent } from '../src/events/log.ts';
import { eventDefinition } from '../src/events/catalogue.ts';
import { transaction } from '../src/db/transaction.ts';

let t: TestApp;
let org: string;
let server: http.Server;
let base: string;

beforeAll(async () => {
  t = await startTestApp({ worker: true });
  org = t.org.id;
  server = http.createServer((req, res) => {
    if (req.url === '/notes.md') {
      res.setHeader('content-type', 'text/markdown');
      return res.end('# Imported notes\n\nHello.');
    }
    res.statusCode = 404;
    res.end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(async () => {
  await new Promise((r) => server?.close(r));
  await t?.close();
});

/** The newest seq now: events after it are the ones a step wrote. */
async function mark(): Promise<bigint> {
  const last = await t.app.prisma.event.findFirst({ orderBy: { seq: 'desc' }, select: { seq: true } });
  return last?.seq ?? 0n;
}
async function eventsAfter(seq: bigint) {
  return t.app.prisma.event.findMany({ where: { seq: { gt: seq } }, orderBy: { seq: 'asc' } });
}
/** Run `fn` and answer the events it wrote (type, object and source, in order). */
async function written(fn: () => Promise<unknown>) {
  const before = await mark();
  await fn();
  return eventsAfter(before);
}
const brief = (events: Array<{ type: string; objectType: string; objectId: string }>) => events.map((e) => [e.type, e.objectType, e.objectId]);

async function newSpace(title = 'Events') {
  const r = await t.rest('POST', `/v1/orgs/${org}/spaces`, { title });
  expect(r.status).toBe(201);
  return r.body.id as string;
}

describe('what a mutation records', () => {
  it('space created through REST: actor, token, source rest, organization, object and a small payload', async () => {
    let id = '';
    const events = await written(async () => (id = await newSpace('Handbook')));
    expect(brief(events)).toEqual([['space_created', 'space', id]]);
    const [e] = events;
    const token = await t.app.prisma.apiToken.findFirstOrThrow({ where: { userId: t.adminUser.id } });
    expect(e).toMatchObject({ organizationId: org, userId: t.adminUser.id, tokenId: token.id, actorLabel: t.adminUser.displayName, source: 'rest' });
    expect(e.payload).toMatchObject({ title: 'Handbook', parentId: null });
    expect(typeof (e.payload as any).revisionId).toBe('string');
    expect(e.id).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('the same change through GraphQL records source graphql', async () => {
    const events = await written(async () => {
      const r = await t.gql(`mutation($input: CreateSpaceInput!) { createSpace(input: $input) { space { id } } }`, { input: { organizationId: org, title: 'From GraphQL' } });
      expect(r.errors).toBeUndefined();
    });
    expect(events.map((e) => [e.type, e.source])).toEqual([['space_created', 'graphql']]);
  });

  it('space updated, deleted, restored, moved', async () => {
    const id = await newSpace();
    expect(brief(await written(() => t.rest('PATCH', `/v1/spaces/${id}`, { title: 'Renamed' })))).toEqual([['space_updated', 'space', id]]);
    expect(brief(await written(() => t.rest('DELETE', `/v1/spaces/${id}`)))).toEqual([['space_deleted', 'space', id]]);
    // Deleting again changes nothing and records nothing.
    expect(await written(() => t.rest('DELETE', `/v1/spaces/${id}`))).toEqual([]);
    expect(brief(await written(() => t.rest('POST', `/v1/spaces/${id}/restore`)))).toEqual([['space_restored', 'space', id]]);
    const col = await t.rest('POST', `/v1/orgs/${org}/collections`, { title: 'Shelf' });
    expect(col.status).toBe(201);
    const moved = await written(() => t.rest('POST', `/v1/spaces/${id}/move`, { parent: col.body.id }));
    expect(brief(moved)).toEqual([['space_moved', 'space', id]]);
    expect(moved[0].payload).toMatchObject({ fromParentId: null, parentId: col.body.id });
  });

  it('content updated with the revision ids, never the page bodies', async () => {
    const id = await newSpace();
    const before = (await t.app.prisma.space.findUniqueOrThrow({ where: { id } })).revisionId;
    const events = await written(async () => {
      const r = await t.rest('POST', `/v1/spaces/${id}/content`, { changes: [{ operation: 'insert_page', title: 'Secret page', document: { markdown: 'TOP SECRET BODY' } }] });
      expect(r.status).toBe(200);
    });
    expect(brief(events)).toEqual([['space_content_updated', 'space', id]]);
    const after = (await t.app.prisma.space.findUniqueOrThrow({ where: { id } })).revisionId;
    expect(events[0].payload).toEqual({ revisionId: after, previousRevisionId: before, changes: 1 });
    expect(JSON.stringify(events[0].payload)).not.toContain('TOP SECRET');
  });

  it('change request opened, updated, merged (with the merge revision and the space content event)', async () => {
    const id = await newSpace();
    let cr = '';
    const opened = await written(async () => {
      const r = await t.rest('POST', `/v1/spaces/${id}/change-requests`, { subject: 'Draft' });
      expect(r.status).toBe(201);
      cr = r.body.id;
    });
    expect(brief(opened)).toEqual([['change_request_opened', 'change_request', cr]]);
    expect(brief(await written(() => t.rest('PATCH', `/v1/spaces/${id}/change-requests/${cr}`, { subject: 'Better' })))).toEqual([['change_request_updated', 'change_request', cr]]);
    await t.rest('POST', `/v1/spaces/${id}/change-requests/${cr}/content`, { changes: [{ operation: 'insert_page', title: 'New', document: { markdown: 'x' } }] });
    const merged = await written(async () => expect((await t.rest('POST', `/v1/spaces/${id}/change-requests/${cr}/merge`)).status).toBe(200));
    expect(brief(merged)).toEqual([
      ['change_request_merged', 'change_request', cr],
      ['space_content_updated', 'space', id],
    ]);
    const revision = (await t.app.prisma.space.findUniqueOrThrow({ where: { id } })).revisionId;
    expect(merged[0].payload).toMatchObject({ spaceId: id, revisionId: revision });
  });

  it('comment posted, resolved, deleted; reply posted', async () => {
    const id = await newSpace();
    let c = '';
    const posted = await written(async () => {
      const r = await t.rest('POST', `/v1/spaces/${id}/comments`, { body: { markdown: 'private remark' } });
      expect(r.status).toBeLessThan(300);
      c = r.body.id;
    });
    expect(brief(posted)).toEqual([['comment_posted', 'comment', c]]);
    expect(JSON.stringify(posted[0].payload)).not.toContain('private remark');
    const replied = await written(async () => expect((await t.rest('POST', `/v1/spaces/${id}/comments/${c}/replies`, { body: { markdown: 'ok' } })).status).toBeLessThan(300));
    expect(replied.map((e) => e.type)).toEqual(['comment_reply_posted']);
    expect(replied[0].payload).toMatchObject({ commentId: c, spaceId: id });
    expect(brief(await written(() => t.rest('PUT', `/v1/spaces/${id}/comments/${c}`, { resolved: true })))).toEqual([['comment_resolved', 'comment', c]]);
    expect(brief(await written(() => t.rest('DELETE', `/v1/spaces/${id}/comments/${c}`)))).toEqual([['comment_deleted', 'comment', c]]);
  });

  it('site created, published, unpublished, deleted; structure and share links', async () => {
    const space = await newSpace();
    let site = '';
    const created = await written(async () => {
      const r = await t.rest('POST', `/v1/orgs/${org}/sites`, { title: 'Docs', spaces: [space] });
      expect(r.status).toBe(201);
      site = r.body.id;
    });
    expect(brief(created)).toEqual([['site_created', 'site', site]]);
    const SITE = `/v1/orgs/${org}/sites/${site}`;
    expect(brief(await written(() => t.rest('POST', `${SITE}/publish`)))).toEqual([['site_published', 'site', site]]);
    const second = await newSpace('Second');
    let section = '';
    const added = await written(async () => {
      const r = await t.rest('POST', `${SITE}/sections`, { spaceId: second });
      expect(r.status).toBe(201);
      section = r.body.id;
    });
    expect(added.map((e) => e.type)).toEqual(['site_section_created']);
    expect(added[0]).toMatchObject({ objectId: section, payload: expect.objectContaining({ siteId: site, spaceId: second }) });
    let link = '';
    const shared = await written(async () => {
      const r = await t.rest('POST', `${SITE}/share-links`, { name: 'Partners' });
      expect(r.status).toBe(201);
      link = r.body.id;
    });
    expect(brief(shared)).toEqual([['share_link_created', 'share_link', link]]);
    // The key is a credential: never in an event.
    const key = (await t.app.prisma.shareLink.findUniqueOrThrow({ where: { id: link } })).key;
    expect(JSON.stringify(shared[0].payload)).not.toContain(key);
    expect(brief(await written(() => t.rest('POST', `${SITE}/unpublish`)))).toEqual([['site_unpublished', 'site', site]]);
    expect(brief(await written(() => t.rest('DELETE', SITE)))).toEqual([['site_deleted', 'site', site]]);
  });

  it('members and teams', async () => {
    // addMember has no REST twin: through GraphQL.
    const added = await written(async () => {
      const r = await t.gql(`mutation($input: AddMemberInput!) { addMember(input: $input) { member { role } } }`, { input: { organizationId: org, email: 'newcomer@example.com', role: 'read' } });
      expect(r.errors).toBeUndefined();
    });
    expect(added.map((e) => [e.type, e.objectType, e.source])).toEqual([['member_added', 'member', 'graphql']]);
    const userId = added[0].objectId;
    const role = await written(() => t.rest('PATCH', `/v1/orgs/${org}/members/${userId}`, { role: 'edit' }));
    expect(role.map((e) => [e.type, e.objectId])).toEqual([['member_role_updated', userId]]);
    expect(role[0].payload).toEqual({ role: 'edit', previousRole: 'read' });
    let team = '';
    const teamCreated = await written(async () => {
      const r = await t.rest('PUT', `/v1/orgs/${org}/teams`, { title: 'Writers' });
      expect(r.status).toBe(201);
      team = r.body.id;
    });
    expect(brief(teamCreated)).toEqual([['team_created', 'team', team]]);
    expect(brief(await written(() => t.rest('PUT', `/v1/orgs/${org}/teams/${team}/members/${userId}`, {})))).toEqual([['team_members_updated', 'team', team]]);
    expect(brief(await written(() => t.rest('DELETE', `/v1/orgs/${org}/teams/${team}`)))).toEqual([['team_deleted', 'team', team]]);
    expect(brief(await written(() => t.rest('DELETE', `/v1/orgs/${org}/members/${userId}`)))).toEqual([['member_removed', 'member', userId]]);
  });

  it('collections and translations', async () => {
    let col = '';
    const created = await written(async () => {
      const r = await t.rest('POST', `/v1/orgs/${org}/collections`, { title: 'Box' });
      col = r.body.id;
    });
    expect(brief(created)).toEqual([['collection_created', 'collection', col]]);
    expect(brief(await written(() => t.rest('DELETE', `/v1/collections/${col}`)))).toEqual([['collection_deleted', 'collection', col]]);
    let tr = '';
    const translation = await written(async () => {
      const r = await t.rest('POST', `/v1/orgs/${org}/translations`, { title: 'French', languages: ['fr'] });
      expect(r.status).toBe(201);
      tr = r.body.id;
    });
    expect(brief(translation)).toEqual([['translation_created', 'translation', tr]]);
    expect(brief(await written(() => t.rest('DELETE', `/v1/orgs/${org}/translations/${tr}`)))).toEqual([['translation_deleted', 'translation', tr]]);
  });
});

describe('a mutation that fails writes nothing', () => {
  it('bad input (400), a member without the role (403), a missing object (404)', async () => {
    const id = await newSpace();
    const reader = await t.as('reader');
    const none = await written(async () => {
      expect((await t.rest('PATCH', `/v1/spaces/${id}`, { title: 'x'.repeat(500) })).status).toBe(400);
      expect((await t.rest('PATCH', `/v1/spaces/${id}`, { title: 'Nope' }, reader.token)).status).toBe(403);
      expect((await t.rest('POST', `/v1/orgs/${org}/sites/site_0000000000000000000000/publish`)).status).toBe(404);
      // A site without content cannot be published: the check fails inside the transaction.
      const empty = await t.rest('POST', `/v1/orgs/${org}/sites`, { title: 'Empty' });
      const before = await mark();
      expect((await t.rest('POST', `/v1/orgs/${org}/sites/${empty.body.id}/publish`)).status).toBe(400);
      expect(await eventsAfter(before)).toEqual([]);
      await t.rest('DELETE', `/v1/orgs/${org}/sites/${empty.body.id}`);
    });
    expect(none.map((e) => e.type)).toEqual(['site_created', 'site_deleted']);
  });

  it('an event recorded in a transaction that rolls back is gone with it', async () => {
    const before = await mark();
    const actor = { viewer: null, source: 'rest' as const, clock: t.clock };
    await expect(
      transaction(t.app.prisma, async (tx) => {
        await recordEvent(tx, actor, { type: 'space_updated', organizationId: org, objectId: 'space_x', payload: { title: 'x', fields: [] } });
        throw new Error('forced rollback');
      }),
    ).rejects.toThrow('forced rollback');
    expect(await eventsAfter(before)).toEqual([]);
  });
});

describe('jobs', () => {
  it('an import records its start (source rest) and its progress and completion (source job, no user)', async () => {
    const id = await newSpace();
    const before = await mark();
    const r = await t.rest('POST', `/v1/spaces/${id}/content/import`, { url: `${base}/notes.md`, source: 'markdown' });
    expect(r.status).toBe(201);
    let events = await eventsAfter(before);
    for (let i = 0; i < 100 && !events.some((e) => e.type === 'import_completed'); i++) {
      await new Promise((res) => setTimeout(res, 100));
      events = await eventsAfter(before);
    }
    const job = events[0].objectId;
    expect(events.map((e) => [e.type, e.source, e.userId])).toEqual([
      ['import_started', 'rest', t.adminUser.id],
      ['import_running', 'job', null],
      ['import_completed', 'job', null],
      ['space_content_updated', 'job', null],
    ]);
    expect(events.every((e) => e.organizationId === org)).toBe(true);
    const revision = (await t.app.prisma.space.findUniqueOrThrow({ where: { id } })).revisionId;
    expect(events[2]).toMatchObject({ objectType: 'import', objectId: job, payload: expect.objectContaining({ spaceId: id, revisionId: revision }) });
    expect(events[3]).toMatchObject({ objectId: id, payload: expect.objectContaining({ revisionId: revision, importId: job }) });
  });
});

describe('ordering and notification', () => {
  it('seq increases, and committing an event sends no notification (NOTIFY stays off the commit path)', async () => {
    const listener = new pg.Client({ connectionString: t.databaseUrl });
    await listener.connect();
    const heard: string[] = [];
    listener.on('notification', (n) => {
      if (n.channel === 'docgraph_events') heard.push(n.payload ?? '');
    });
    await listener.query('LISTEN docgraph_events');
    try {
      const events = await written(async () => {
        await newSpace('One');
        await newSpace('Two');
      });
      expect(events.map((e) => e.type)).toEqual(['space_created', 'space_created']);
      expect(events[1].seq > events[0].seq).toBe(true);
      // A round trip of our own on the same connection: every notice committed before it is in.
      await listener.query(`NOTIFY docgraph_events, 'probe'`);
      for (let i = 0; i < 50 && !heard.includes('probe'); i++) await new Promise((r) => setTimeout(r, 20));
      expect(heard).toEqual(['probe']);
    } finally {
      await listener.end();
    }
  });
});

describe('the catalogue', () => {
  // Runs last: every event the tests above recorded (spaces, collections, sites, structure,
  // change requests, comments, members, teams, imports…) walks the catalogue.
  it('every recorded event is a catalogue type, with its object type and a payload its schema accepts', async () => {
    const rows = await t.app.prisma.event.findMany({ orderBy: { seq: 'asc' } });
    expect(rows.length).toBeGreaterThan(20);
    const types = new Set<string>();
    for (const e of rows) {
      const def = eventDefinition(e.type);
      expect(def, e.type).toBeDefined();
      expect(e.objectType, e.type).toBe(def!.object);
      const parsed = def!.payload.strict().safeParse(e.payload);
      expect(parsed.error?.issues ?? [], `${e.type} ${JSON.stringify(e.payload)}`).toEqual([]);
      types.add(e.type);
    }
    expect(types.size).toBeGreaterThan(10);
  });
});
