import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectAccess, startTestApp, type TestApp } from './helpers.ts';
import { expectValidResponse } from './openapi.ts';
import { applyChanges, loadRevision, pagePaths } from '../src/domain/revisions.ts';
import { requireEditable } from '../src/domain/spaces.ts';
import { purgeDeletedSpaces } from '../src/domain/cleanup.ts';
import { DAY_MS } from '../src/lib/clock.ts';
import { newId } from '../src/lib/ids.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.close();
});

async function createSpace(body: Record<string, unknown> = {}, orgId = t.org.id) {
  const r = await t.rest('POST', `/v1/orgs/${orgId}/spaces`, { title: 'Space', ...body });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body as { id: string; title: string; revision: string };
}

async function createCollection(body: Record<string, unknown> = {}, orgId = t.org.id) {
  const r = await t.rest('POST', `/v1/orgs/${orgId}/collections`, { title: 'Collection', ...body });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body as { id: string };
}

/** Apply a change batch to a space's live content and make it current. */
async function edit(spaceId: string, changes: unknown[]) {
  const space = await t.app.prisma.space.findUniqueOrThrow({ where: { id: spaceId } });
  return t.app.prisma.$transaction(async (tx) => {
    const r = await applyChanges(tx, { spaceId, baseRevisionId: space.revisionId!, changes, createdById: t.adminUser.id, storage: t.app.services.storage });
    await tx.space.update({ where: { id: spaceId }, data: { revisionId: r.revision.id } });
    return r;
  });
}

const row = (id: string) => t.app.prisma.space.findUnique({ where: { id } });

/** Root-level order of an organization as `kind:id` strings, with their positions. */
async function rootOrder(orgId = t.org.id, parentId: string | null = null) {
  const [cols, spaces] = await Promise.all([
    t.app.prisma.collection.findMany({ where: { organizationId: orgId, parentId } }),
    t.app.prisma.space.findMany({ where: { organizationId: orgId, parentId, deletedAt: null } }),
  ]);
  const items = [...cols.map((c) => ({ id: c.id, position: c.position })), ...spaces.map((s) => ({ id: s.id, position: s.position }))];
  items.sort((a, b) => a.position - b.position);
  return items;
}

describe('update a space', () => {
  it('updates title, emoji, editMode and defaultLevel through the official client', async () => {
    const s = await createSpace({ title: 'Before' });
    const res = await t.client().spaces.updateSpaceById(s.id, { title: 'After', emoji: '🎉', editMode: 'locked' as never, defaultLevel: 'read' as never });
    expectValidResponse('PATCH', '/spaces/{spaceId}', 200, res.data);
    expect(res.data).toMatchObject({ title: 'After', emoji: '🎉', editMode: 'locked', defaultLevel: 'read' });

    const icon = await t.client().spaces.updateSpaceById(s.id, { icon: 'https://example.com/icon.png' });
    expectValidResponse('PATCH', '/spaces/{spaceId}', 200, icon.data);
    expect(icon.data.urls.icon).toBe('https://example.com/icon.png');
    expect(icon.data.emoji).toBe(''); // setting an icon clears the emoji

    const cleared = await t.rest('PATCH', `/v1/spaces/${s.id}`, { emoji: null, icon: null, defaultLevel: 'inherit', editMode: 'live' });
    expect(cleared.status).toBe(200);
    expectValidResponse('PATCH', '/spaces/{spaceId}', 200, cleared.body);
    expect(cleared.body.urls.icon).toBeUndefined();
    expect(cleared.body).toMatchObject({ emoji: '', defaultLevel: null, editMode: 'live' });
    expect(await row(s.id)).toMatchObject({ emoji: null, icon: null, defaultLevel: null });

    const gql = await t.gql(`mutation($id: ID!) { updateSpace(input: { id: $id, title: "Via GraphQL", defaultLevel: null }) { space { id title defaultLevel } } }`, { id: s.id });
    expect(gql.errors).toBeUndefined();
    expect(gql.data.updateSpace.space).toEqual({ id: s.id, title: 'Via GraphQL', defaultLevel: null });
  });

  it('400 naming the field and nothing changed', async () => {
    const s = await createSpace({ title: 'Stable', emoji: '📘' });
    for (const [body, field] of [
      [{ title: 'x'.repeat(51) }, 'title'],
      [{ editMode: 'frozen' }, 'editMode'],
      [{ emoji: 'not an emoji' }, 'emoji'],
      [{ icon: 'not a url' }, 'icon'],
      [{ icon: 'javascript:alert(1)' }, 'icon'],
      [{ emoji: '🎉', icon: 'https://example.com/i.png' }, 'icon'],
      [{ defaultLevel: 'boss' }, 'defaultLevel'],
      [{ visibility: 'public' }, 'visibility'],
    ] as const) {
      const r = await t.rest('PATCH', `/v1/spaces/${s.id}`, body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error.message).toContain(field);
    }
    const gql = await t.gql(`mutation($id: ID!) { updateSpace(input: { id: $id, title: "${'y'.repeat(51)}" }) { space { id } } }`, { id: s.id });
    expect(gql.errors?.[0].extensions).toMatchObject({ code: 'BAD_REQUEST', field: 'title' });
    expect(await row(s.id)).toMatchObject({ title: 'Stable', emoji: '📘', editMode: 'live' });
  });

  it('401 without a token, 403 below admin, 404 for outsiders, missing and deleted spaces', async () => {
    const s = await createSpace({ title: 'Guarded' });
    await expectAccess(t, { method: 'PATCH', path: `/v1/spaces/${s.id}`, body: { title: 'x' } }, { anonymous: 401, editor: 403, outsider: 404 });
    expect((await t.rest('PATCH', `/v1/spaces/space_missing`, { title: 'x' })).status).toBe(404);
    await t.rest('DELETE', `/v1/spaces/${s.id}`);
    expect((await t.rest('PATCH', `/v1/spaces/${s.id}`, { title: 'x' })).status).toBe(404);
    expect((await row(s.id))!.title).toBe('Guarded');
  });
});

describe('locked spaces', () => {
  it('refuse content edits with 409 while settings stay editable', async () => {
    const s = await createSpace({ title: 'Lockable' });
    const locked = await t.rest('PATCH', `/v1/spaces/${s.id}`, { editMode: 'locked' });
    expect(locked.body.editMode).toBe('locked');
    // Settings are not content: still allowed.
    expect((await t.rest('PATCH', `/v1/spaces/${s.id}`, { title: 'Still lockable' })).status).toBe(200);

    const space = (await row(s.id))!;
    expect(() => requireEditable(space)).toThrow(expect.objectContaining({ code: 'CONFLICT', message: expect.stringContaining('locked') }));
    // A live content edit goes through requireEditable first; nothing is written.
    const before = await t.app.prisma.revision.count({ where: { spaceId: s.id } });
    await expect(
      t.app.prisma.$transaction(async (tx) => {
        const current = await tx.space.findUniqueOrThrow({ where: { id: s.id } });
        requireEditable(current);
        await applyChanges(tx, { spaceId: s.id, baseRevisionId: current.revisionId!, changes: [{ operation: 'insert_page', title: 'Nope', document: { markdown: 'x' } }], createdById: t.adminUser.id, storage: t.app.services.storage });
      }),
    ).rejects.toMatchObject({ code: 'CONFLICT' });
    expect(await t.app.prisma.revision.count({ where: { spaceId: s.id } })).toBe(before);

    await t.rest('PATCH', `/v1/spaces/${s.id}`, { editMode: 'live' });
    expect(() => requireEditable({ id: s.id, editMode: 'live' })).not.toThrow();
  });

  it('refuses change request content on a locked space (integration with the change-request area)', async () => {
    const s = await createSpace({ title: 'Locked CR' });
    const cr = await t.rest('POST', `/v1/spaces/${s.id}/change-requests`, { subject: 'Edit' });
    expect(cr.status).toBe(201);
    await t.rest('PATCH', `/v1/spaces/${s.id}`, { editMode: 'locked' });
    const r = await t.rest('POST', `/v1/spaces/${s.id}/change-requests/${cr.body.id}/content`, {
      changes: [{ operation: 'insert_page', title: 'Nope', document: { markdown: 'x' } }],
    });
    expect(r.status).toBe(409);
    expect(r.body.error.message).toContain('locked');
  });
});

describe('delete, restore and purge', () => {
  it('soft-deletes (205, then 204), hides the space, and restores it within 7 days', async () => {
    const s = await createSpace({ title: 'Doomed' });
    const del = await t.rest('DELETE', `/v1/spaces/${s.id}`);
    expect(del.status).toBe(205);
    expect(del.text).toBe('');
    expectValidResponse('DELETE', '/spaces/{spaceId}', 205, undefined);
    expect((await t.rest('DELETE', `/v1/spaces/${s.id}`)).status).toBe(204);
    expect((await t.rest('DELETE', `/v1/spaces/space_neverexisted`)).status).toBe(204);
    expect((await row(s.id))!.deletedById).toBe(t.adminUser.id);
    expect((await t.rest('GET', `/v1/spaces/${s.id}`)).status).toBe(404);
    const list = await t.rest('GET', `/v1/orgs/${t.org.id}/spaces?limit=1000`);
    expect(list.body.items.map((i: any) => i.id)).not.toContain(s.id);
    const node = await t.gql(`query($id: ID!) { node(id: $id) { id } }`, { id: s.id });
    expect(node.errors?.[0].extensions?.code).toBe('NOT_FOUND');

    t.clock.advance(6 * DAY_MS);
    const res = await t.client().spaces.restoreSpace(s.id);
    expectValidResponse('POST', '/spaces/{spaceId}/restore', 200, res.data);
    expect(res.data.id).toBe(s.id);
    expect(res.data.deletedAt).toBeUndefined();
    expect((await t.rest('GET', `/v1/spaces/${s.id}`)).status).toBe(200);
    // Restoring an active space changes nothing.
    expect((await t.rest('POST', `/v1/spaces/${s.id}/restore`)).status).toBe(409);
  });

  it('refuses to restore after 7 days', async () => {
    const s = await createSpace({ title: 'Too late' });
    expect((await t.rest('DELETE', `/v1/spaces/${s.id}`)).status).toBe(205);
    t.clock.advance(8 * DAY_MS);
    const r = await t.rest('POST', `/v1/spaces/${s.id}/restore`);
    expect(r.status).toBe(400);
    expect(r.body.error.message).toContain('more than 7 days ago');
    expect((await row(s.id))!.deletedAt).not.toBeNull();
  });

  it('401, 403 below admin, 404 for outsiders on delete and restore', async () => {
    const s = await createSpace({ title: 'Protected' });
    await expectAccess(t, { method: 'DELETE', path: `/v1/spaces/${s.id}` }, { anonymous: 401, editor: 403, outsider: 404 });
    expect((await row(s.id))!.deletedAt).toBeNull();
    await t.rest('DELETE', `/v1/spaces/${s.id}`);
    await expectAccess(t, { method: 'POST', path: `/v1/spaces/${s.id}/restore` }, { anonymous: 401, editor: 403, outsider: 404 });
    expect((await t.rest('POST', `/v1/spaces/space_missing/restore`)).status).toBe(404);
  });

  it('the purge job removes only spaces deleted more than 7 days ago, with their content and files', async () => {
    const expired = await createSpace({ title: 'Expired' });
    const recent = await createSpace({ title: 'Recent' });
    const alive = await createSpace({ title: 'Alive' });
    const { insertedFiles } = await edit(expired.id, [
      { operation: 'insert_page', title: 'Page', document: { markdown: 'Hello' } },
      { operation: 'insert_files', files: [{ name: 'a.txt', contentType: 'text/plain', base64: Buffer.from('bytes').toString('base64') }] },
    ]);
    const file = await t.app.prisma.file.findUniqueOrThrow({ where: { id: insertedFiles[0].id } });
    expect(await t.app.services.storage.get(file.storageKey)).not.toBeNull();

    await t.rest('DELETE', `/v1/spaces/${expired.id}`);
    t.clock.advance(3 * DAY_MS);
    await t.rest('DELETE', `/v1/spaces/${recent.id}`);
    t.clock.advance(5 * DAY_MS); // expired: 8 days, recent: 5 days

    const deps = { prisma: t.app.prisma, clock: t.clock, services: t.app.services, log: t.app.log };
    expect(await purgeDeletedSpaces(deps)).toBeGreaterThanOrEqual(1);
    expect(await row(expired.id)).toBeNull();
    expect(await t.app.prisma.revision.count({ where: { spaceId: expired.id } })).toBe(0);
    expect(await t.app.prisma.pageVersion.count({ where: { spaceId: expired.id } })).toBe(0);
    expect(await t.app.prisma.file.count({ where: { spaceId: expired.id } })).toBe(0);
    expect(await t.app.services.storage.get(file.storageKey)).toBeNull();
    expect((await row(recent.id))!.deletedAt).not.toBeNull();
    expect((await row(alive.id))!.deletedAt).toBeNull();
    // Idempotent: a second run finds nothing more to do.
    expect(await purgeDeletedSpaces(deps)).toBe(0);
    expect((await t.rest('POST', `/v1/spaces/${recent.id}/restore`)).status).toBe(200);
    // A purged space is gone: deleting it again answers 204, reading it 404.
    expect((await t.rest('DELETE', `/v1/spaces/${expired.id}`)).status).toBe(204);
    expect((await t.rest('GET', `/v1/spaces/${expired.id}`)).status).toBe(404);
  });

  it('registers the purge as an hourly job that runs through the queue', async () => {
    const w = await startTestApp({ worker: true });
    try {
      const r = await w.rest('POST', `/v1/orgs/${w.org.id}/spaces`, { title: 'Old' });
      await w.rest('DELETE', `/v1/spaces/${r.body.id}`);
      w.clock.advance(8 * DAY_MS);
      // The worker registered the hourly schedule …
      const crontabs = () => w.app.prisma.$queryRaw<Array<{ identifier: string }>>`SELECT identifier FROM graphile_worker._private_known_crontabs`;
      await expect.poll(async () => (await crontabs()).map((c) => c.identifier), { timeout: 15_000 }).toContain('purgeDeletedSpaces');
      // … and a queued purge job is picked up and run by it.
      await w.app.prisma.$transaction((tx) => w.app.jobs.enqueue(tx, 'purgeDeletedSpaces', {}));
      await expect.poll(() => w.app.prisma.space.findUnique({ where: { id: r.body.id } }), { timeout: 15_000, interval: 100 }).toBeNull();
    } finally {
      await w.close();
    }
  });
});

describe('duplicate', () => {
  it('copies the current content into a new space next to the original; later edits stay apart', async () => {
    const col = await createCollection({ title: 'Dup home' });
    const s = await createSpace({ title: 'Original', emoji: '📘', parent: col.id, visibility: 'in-collection' });
    const after = await createSpace({ title: 'After original', parent: col.id });
    const r1 = await edit(s.id, [
      { operation: 'insert_page', ref: 'guide', title: 'Guide', document: { markdown: 'See [setup](./setup.md).' } },
      { operation: 'insert_page', ref: 'setup', title: 'Setup', document: { markdown: 'Install it.' } },
      { operation: 'insert_files', files: [{ ref: 'logo', name: 'logo.png', contentType: 'image/png', base64: Buffer.from('png').toString('base64') }] },
    ]);
    const [guideId, setupId] = r1.outcomes.map((o) => o.pageId);
    const fileId = r1.insertedFiles[0].id;
    await edit(s.id, [
      { operation: 'update_page', page: setupId, into: guideId, document: { markdown: `Install it. ![logo](/files/${fileId})` } },
    ]);
    await t.app.prisma.contentGrant.create({ data: { id: newId('ContentGrant'), organizationId: t.org.id, spaceId: s.id, userId: t.adminUser.id, role: 'edit' } });

    const res = await t.client().spaces.duplicateSpace(s.id);
    expect(res.status).toBe(201);
    expectValidResponse('POST', '/spaces/{spaceId}/duplicate', 201, res.data);
    const copy = res.data;
    expect(copy).toMatchObject({ title: 'Original (copy)', emoji: '📘', parent: col.id, visibility: 'in-collection', editMode: 'live' });
    expect(copy.id).not.toBe(s.id);
    expect(copy.revision).not.toBe(s.revision);

    // Order: original, copy, the space that followed.
    expect((await rootOrder(t.org.id, col.id)).map((i) => i.id)).toEqual([s.id, copy.id, after.id]);
    expect((await rootOrder(t.org.id, col.id)).map((i) => i.position)).toEqual([0, 1, 2]);

    const original = await loadRevision(t.app.prisma, (await row(s.id))!.revisionId!);
    const dup = await loadRevision(t.app.prisma, copy.revision);
    expect(pagePaths(dup)).toEqual(pagePaths(original)); // same page ids and paths
    expect(pagePaths(dup).get(setupId)).toBe('guide/setup');
    for (const v of dup.versions.values()) expect(v.spaceId).toBe(copy.id);
    expect([...dup.versions.keys()].some((k) => original.versions.has(k))).toBe(false);
    const dupFiles = await t.app.prisma.file.findMany({ where: { spaceId: copy.id } });
    expect(dupFiles).toHaveLength(1);
    expect(dupFiles[0].id).not.toBe(fileId);
    expect(await t.app.services.storage.get(dupFiles[0].storageKey)).toEqual(Buffer.from('png'));
    const dupSetup = [...dup.versions.values()].find((v) => v.pageId === setupId)!;
    expect(dupSetup.markdown).toContain(`/files/${dupFiles[0].id}`);
    expect(await t.app.prisma.contentGrant.count({ where: { spaceId: copy.id } })).toBe(1);

    // Editing the copy leaves the original alone; purging the original leaves the copy whole.
    await edit(copy.id, [{ operation: 'update_page', page: guideId, document: { markdown: 'Changed in the copy' } }]);
    const originalAgain = await loadRevision(t.app.prisma, (await row(s.id))!.revisionId!);
    expect([...originalAgain.versions.values()].find((v) => v.pageId === guideId)!.markdown).toBe(`See [setup](/pages/${setupId}).`);
    await t.rest('DELETE', `/v1/spaces/${s.id}`);
    t.clock.advance(8 * DAY_MS);
    await purgeDeletedSpaces({ prisma: t.app.prisma, clock: t.clock, services: t.app.services, log: t.app.log });
    const survived = await loadRevision(t.app.prisma, (await row(copy.id))!.revisionId!);
    expect(survived.versions.size).toBe(2);
    expect(await t.app.services.storage.get(dupFiles[0].storageKey)).toEqual(Buffer.from('png'));
  });

  it('401, 403 without create, 404 for outsiders and missing spaces', async () => {
    const s = await createSpace({ title: 'Source' });
    await expectAccess(t, { method: 'POST', path: `/v1/spaces/${s.id}/duplicate` }, { anonymous: 401, reader: 403, outsider: 404 });
    expect((await t.rest('POST', `/v1/spaces/space_missing/duplicate`)).status).toBe(404);
    expect(await t.app.prisma.space.count({ where: { title: 'Source (copy)' } })).toBe(0);
  });
});

describe('move', () => {
  it('reorders siblings densely, moves into collections, and 409 when nothing changes', async () => {
    const org = await t.gql(`mutation { createOrganization(input: { title: "Move org" }) { id } }`);
    const orgId = org.data.createOrganization.id;
    const a = await createSpace({ title: 'A' }, orgId);
    const b = await createSpace({ title: 'B' }, orgId);
    const k = await createCollection({ title: 'K' }, orgId);
    const c = await createSpace({ title: 'C' }, orgId);
    expect((await rootOrder(orgId)).map((i) => i.id)).toEqual([a.id, b.id, k.id, c.id]);

    const res = await t.client().spaces.moveSpace(c.id, { position: { before: { type: 'space', space: a.id } } } as never);
    expectValidResponse('POST', '/spaces/{spaceId}/move', 200, res.data);
    expect((await rootOrder(orgId)).map((i) => [i.id, i.position])).toEqual([[c.id, 0], [a.id, 1], [b.id, 2], [k.id, 3]]);

    const again = await t.rest('POST', `/v1/spaces/${c.id}/move`, { position: { before: { type: 'space', space: a.id } } });
    expect(again.status).toBe(409);
    expect(again.body).toEqual({ error: { code: 409, message: expect.any(String) } });

    // After a collection anchor.
    const r2 = await t.rest('POST', `/v1/spaces/${c.id}/move`, { position: { after: { type: 'collection', collection: k.id } } });
    expect(r2.status).toBe(200);
    expect((await rootOrder(orgId)).map((i) => i.id)).toEqual([a.id, b.id, k.id, c.id]);

    // Into the collection (at the end), then back to the root.
    const into = await t.rest('POST', `/v1/spaces/${a.id}/move`, { parent: k.id });
    expect(into.body.parent).toBe(k.id);
    expect((await row(a.id))!.ancestorIds).toEqual([k.id]);
    expect((await rootOrder(orgId)).map((i) => [i.id, i.position])).toEqual([[b.id, 0], [k.id, 1], [c.id, 2]]);
    const back = await t.rest('POST', `/v1/spaces/${a.id}/move`, { parent: null, position: { before: { type: 'space', space: b.id } } });
    expect(back.status).toBe(200);
    expect(back.body.parent).toBeUndefined();
    expect((await row(a.id))!.ancestorIds).toEqual([]);
    expect((await rootOrder(orgId)).map((i) => [i.id, i.position])).toEqual([[a.id, 0], [b.id, 1], [k.id, 2], [c.id, 3]]);

    const gql = await t.gql(`mutation($id: ID!, $b: ID!) { moveSpace(input: { id: $id, position: { after: { type: space, space: $b } } }) { space { id position } } }`, { id: a.id, b: b.id });
    expect(gql.errors).toBeUndefined();
    expect(gql.data.moveSpace.space.position).toBe(1);
  });

  it('an in-collection space moved to the root becomes private', async () => {
    const k = await createCollection({ title: 'Home' });
    const s = await createSpace({ title: 'Inside', parent: k.id, visibility: 'in-collection' });
    const r = await t.rest('POST', `/v1/spaces/${s.id}/move`, { parent: null });
    expect(r.body.visibility).toBe('private');
  });

  it('400 for a bad anchor, target or empty body, nothing changed; 401/403/404', async () => {
    const k = await createCollection({ title: 'Elsewhere' });
    const inK = await createSpace({ title: 'In K', parent: k.id });
    const s = await createSpace({ title: 'Mover' });
    const before = await row(s.id);
    for (const [body, field] of [
      [{}, 'parent'],
      [{ position: { before: { type: 'space', space: inK.id } } }, 'position.before'],
      [{ position: { after: { type: 'space', space: s.id } } }, 'position.after'],
      [{ position: { before: { type: 'page', page: 'x' } } }, 'position.before'],
      [{ parent: 'col_missing' }, 'parent'],
      [{ parent: 42 }, 'parent'],
      [{ parent: null, extra: 1 }, 'extra'],
    ] as const) {
      const r = await t.rest('POST', `/v1/spaces/${s.id}/move`, body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error.message).toContain(field);
    }
    expect(await row(s.id)).toEqual(before);
    await expectAccess(t, { method: 'POST', path: `/v1/spaces/${s.id}/move`, body: { parent: k.id } }, { anonymous: 401, editor: 403, outsider: 404 });
    expect((await t.rest('POST', `/v1/spaces/space_missing/move`, { parent: k.id })).status).toBe(404);
  });
});

describe('transfer', () => {
  it('moves a space to another organization where the caller is admin', async () => {
    const other = (await t.gql(`mutation { createOrganization(input: { title: "Target org" }) { id } }`)).data.createOrganization.id;
    const k = await createCollection({ title: 'Source home' });
    const s = await createSpace({ title: 'Travelling', parent: k.id, visibility: 'in-collection' });
    const both = await t.createUser('read');
    await t.app.prisma.member.create({ data: { id: newId('Member'), organizationId: other, userId: both.user.id, role: 'read' } });
    const onlyHere = await t.createUser('read');
    const team = await t.app.prisma.team.create({ data: { id: newId('Team'), organizationId: t.org.id, title: 'Team' } });
    await t.app.prisma.contentGrant.createMany({
      data: [
        { id: newId('ContentGrant'), organizationId: t.org.id, spaceId: s.id, userId: both.user.id, role: 'edit' },
        { id: newId('ContentGrant'), organizationId: t.org.id, spaceId: s.id, userId: onlyHere.user.id, role: 'edit' },
        { id: newId('ContentGrant'), organizationId: t.org.id, spaceId: s.id, teamId: team.id, role: 'edit' },
      ],
    });

    const res = await t.client().spaces.transferSpace(s.id, { organization: other });
    expectValidResponse('POST', '/spaces/{spaceId}/transfer', 200, res.data);
    expect(res.data).toMatchObject({ organization: other, visibility: 'private' });
    expect(res.data.parent).toBeUndefined();
    expect(await row(s.id)).toMatchObject({ organizationId: other, parentId: null, ancestorIds: [] });
    const grants = await t.app.prisma.contentGrant.findMany({ where: { spaceId: s.id } });
    expect(grants.map((g) => [g.userId, g.organizationId])).toEqual([[both.user.id, other]]);

    const again = await t.rest('POST', `/v1/spaces/${s.id}/transfer`, { organization: other });
    expect(again.status).toBe(409);
    expect(again.body).toEqual({ error: { code: 409, message: expect.any(String) } });
  });

  it('412 while the space is published in a site of its organization', async () => {
    const other = (await t.gql(`mutation { createOrganization(input: { title: "Target 2" }) { id } }`)).data.createOrganization.id;
    const s = await createSpace({ title: 'Published' });
    const site = await t.app.prisma.site.create({ data: { id: newId('Site'), organizationId: t.org.id, title: 'Docs' } });
    await t.app.prisma.siteSpace.create({ data: { id: newId('SiteSpace'), siteId: site.id, spaceId: s.id, path: 'docs' } });
    const r = await t.rest('POST', `/v1/spaces/${s.id}/transfer`, { organization: other });
    expect(r.status).toBe(412);
    expect(r.body).toEqual({ error: { code: 412, message: expect.stringContaining('published in a site') } });
    expect((await row(s.id))!.organizationId).toBe(t.org.id);
  });

  it('400 naming the field, 401, 403 without admin in either organization, 404 for outsiders', async () => {
    const s = await createSpace({ title: 'Stay' });
    expect((await t.rest('POST', `/v1/spaces/${s.id}/transfer`, {})).body.error.message).toContain('organization');
    expect((await t.rest('POST', `/v1/spaces/${s.id}/transfer`, { organization: 1 })).status).toBe(400);
    const otherByAdmin = (await t.gql(`mutation { createOrganization(input: { title: "Admin's other" }) { id } }`)).data.createOrganization.id;
    // An admin here who is only a reader there: 403; not a member there: 404.
    const admin = await t.createUser('admin');
    expect((await t.rest('POST', `/v1/spaces/${s.id}/transfer`, { organization: otherByAdmin }, admin.token)).status).toBe(404);
    await t.app.prisma.member.create({ data: { id: newId('Member'), organizationId: otherByAdmin, userId: admin.user.id, role: 'read' } });
    expect((await t.rest('POST', `/v1/spaces/${s.id}/transfer`, { organization: otherByAdmin }, admin.token)).status).toBe(403);
    const editor = await t.createUser('edit');
    expect((await t.rest('POST', `/v1/spaces/${s.id}/transfer`, { organization: otherByAdmin }, editor.token)).status).toBe(403);
    const outsider = await t.createUser(undefined);
    expect((await t.rest('POST', `/v1/spaces/${s.id}/transfer`, { organization: otherByAdmin }, outsider.token)).status).toBe(404);
    expect((await t.rest('POST', `/v1/spaces/${s.id}/transfer`, { organization: otherByAdmin }, null)).status).toBe(401);
    expect((await t.rest('POST', `/v1/spaces/${s.id}/transfer`, { organization: 'org_missing' })).status).toBe(404);
    expect((await row(s.id))!.organizationId).toBe(t.org.id);
  });
});

describe('listing spaces', () => {
  it('lists the spaces each caller may read, with a true count, matching the access module space by space', async () => {
    const org = (await t.gql(`mutation { createOrganization(input: { title: "Visibility org" }) { id } }`)).data.createOrganization.id;
    const k = await createCollection({ title: 'Granted collection' }, org);
    const inner = await createCollection({ title: 'Inner', parent: k.id }, org);
    const spaces = {
      priv: await createSpace({ title: 'Private' }, org),
      granted: await createSpace({ title: 'Granted' }, org),
      teamGranted: await createSpace({ title: 'Team granted' }, org),
      pub: await createSpace({ title: 'Public', visibility: 'public' }, org),
      inK: await createSpace({ title: 'In K', parent: inner.id }, org),
      deleted: await createSpace({ title: 'Deleted' }, org),
    };
    await t.rest('DELETE', `/v1/spaces/${spaces.deleted.id}`);
    const guest = await t.createUser(null, { organizationId: org });
    const reader = await t.createUser('read', { organizationId: org });
    const team = await t.app.prisma.team.create({ data: { id: newId('Team'), organizationId: org, title: 'T' } });
    await t.app.prisma.teamMember.create({ data: { teamId: team.id, userId: guest.user.id } });
    await t.app.prisma.contentGrant.createMany({
      data: [
        { id: newId('ContentGrant'), organizationId: org, spaceId: spaces.granted.id, userId: guest.user.id, role: 'read' },
        { id: newId('ContentGrant'), organizationId: org, spaceId: spaces.teamGranted.id, teamId: team.id, role: 'comment' },
        { id: newId('ContentGrant'), organizationId: org, collectionId: k.id, userId: guest.user.id, role: 'read' },
      ],
    });
    const all = Object.values(spaces).map((s) => s.id);
    const expected = {
      admin: all.filter((id) => id !== spaces.deleted.id),
      reader: all.filter((id) => id !== spaces.deleted.id),
      guest: [spaces.granted.id, spaces.teamGranted.id, spaces.pub.id, spaces.inK.id],
    };
    for (const [who, token] of [['admin', t.token], ['reader', reader.token], ['guest', guest.token]] as const) {
      const res = await t.client(token).orgs.listSpacesInOrganizationById(org, { limit: 2 });
      expectValidResponse('GET', '/orgs/{organizationId}/spaces', 200, res.data);
      expect(res.data.count, who).toBe(expected[who].length);
      const ids = [...res.data.items.map((i) => i.id)];
      let next = res.data.next?.page;
      while (next) {
        const page = await t.client(token).orgs.listSpacesInOrganizationById(org, { limit: 2, page: next });
        ids.push(...page.data.items.map((i) => i.id));
        next = page.data.next?.page;
      }
      expect(ids.sort(), who).toEqual([...expected[who]].sort());
      // The filter agrees with the access module.
      for (const id of all) {
        const r = await t.rest('GET', `/v1/spaces/${id}`, undefined, token);
        expect(r.status === 200, `${who} ${id}`).toBe(ids.includes(id));
      }
    }
    await expectAccess(t, { method: 'GET', path: `/v1/orgs/${org}/spaces` }, { outsider: 404, anonymous: 401 }, { organizationId: org });
  });

  it('a page of spaces with counters and permissions costs a constant number of statements', async () => {
    const org = (await t.gql(`mutation { createOrganization(input: { title: "Counting org" }) { id } }`)).data.createOrganization.id;
    for (let i = 0; i < 12; i++) await createSpace({ title: `S${i}` }, org);
    const query = `query($id: ID!, $n: Int!) { organization(id: $id) { spaces(first: $n) { totalCount nodes { id title commentCount changeRequests changeRequestsOpen permissions { admin edit } parent { id } } } } }`;
    const small = await t.countQueries(() => t.gql(query, { id: org, n: 3 }));
    const large = await t.countQueries(() => t.gql(query, { id: org, n: 12 }));
    expect(large.result.errors).toBeUndefined();
    expect(large.result.data.organization.spaces.nodes).toHaveLength(12);
    expect(large.count).toBe(small.count);
  });
});
