// Merging change requests: the revision-level three-way merge (pure planner, then end to end),
// conflicts that change nothing, update from main, and races between merges and batches.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers.ts';
import { expectValidResponse } from './openapi.ts';
import { loadRevision, pagePaths, type LoadedRevision, type TreeNode } from '../src/domain/revisions.ts';
import { planThreeWayMergeOfTrees } from '../src/domain/three-way.ts';
import type { PageVersion, Revision } from '../src/generated/prisma/client.ts';

// ------------------------------------------------------------------ the planner, in memory

type P = { id: string; title?: string; slug?: string; markdown?: string; pages?: P[]; v?: string };
let vseq = 0;
function rev(id: string, pages: P[], extra: Partial<Revision> = {}): LoadedRevision {
  const versions = new Map<string, PageVersion>();
  const toTree = (ps: P[]): TreeNode[] =>
    ps.map((p) => {
      const v = p.v ?? `pv_${id}_${p.id}_${vseq++}`;
      versions.set(v, {
        id: v,
        pageId: p.id,
        spaceId: 'space_x',
        kind: 'document',
        title: p.title ?? p.id,
        slug: p.slug ?? p.id,
        emoji: null,
        icon: null,
        description: null,
        markdown: p.markdown ?? '',
        href: null,
        hidden: false,
        layout: null,
        createdAt: new Date(0),
        pageCreatedAt: new Date(0),
      } as PageVersion);
      return { id: p.id, v, pages: toTree(p.pages ?? []) };
    });
  const tree = toTree(pages);
  const revision = { id, spaceId: 'space_x', parents: [], type: 'edits', tree, pageVersionIds: [], fileIds: [], variables: {}, reusableContents: [], changeRequestId: null, createdById: null, createdAt: new Date(0), ...extra } as unknown as Revision;
  return { revision, tree, versions };
}

const shape = (nodes: TreeNode[]): unknown[] => nodes.map((n) => (n.pages.length ? { [n.id]: shape(n.pages) } : n.id));
const plan = (base: LoadedRevision, target: LoadedRevision, source: LoadedRevision) => planThreeWayMergeOfTrees(base, target, source, { spaceId: 'space_x' });

describe('three-way planner', async () => {
  const doc = 'one\ntwo\nthree\nfour\nfive\nsix';

  it('takes pages inserted, deleted and edited on one side, and keeps the other side', async () => {
    const base = rev('base', [{ id: 'a', markdown: doc }, { id: 'b' }, { id: 'c' }]);
    const main = rev('main', [{ id: 'a', markdown: doc.replace('one', 'ONE') }, { id: 'b' }, { id: 'c' }, { id: 'm' }]);
    const branch = rev('branch', [{ id: 'a', markdown: doc }, { id: 'n' }, { id: 'c', markdown: 'edited' }]);
    const r = await plan(base, main, branch);
    if (!r.clean) throw new Error(JSON.stringify(r.conflicts));
    expect(shape(r.tree)).toEqual(['a', 'n', 'c', 'm']);
    expect(r.newVersions).toEqual([]);
    const v = (id: string) => r.tree.find((n) => n.id === id)!.v;
    expect(v('a')).toBe(main.tree[0].v);
    expect(v('c')).toBe(branch.tree[2].v);
  });

  it('merges edits of different lines of one page into a new version with the other metadata', async () => {
    const base = rev('base', [{ id: 'a', title: 'A', markdown: doc }]);
    const main = rev('main', [{ id: 'a', title: 'A renamed', markdown: doc.replace('one', 'ONE') }]);
    const branch = rev('branch', [{ id: 'a', title: 'A', markdown: doc.replace('six', 'SIX') }]);
    const r = await plan(base, main, branch);
    if (!r.clean) throw new Error(JSON.stringify(r.conflicts));
    expect(r.newVersions).toHaveLength(1);
    expect(r.newVersions[0]).toMatchObject({ pageId: 'a', title: 'A renamed', markdown: 'ONE\ntwo\nthree\nfour\nfive\nSIX' });
    expect(r.tree[0].v).toBe(r.newVersions[0].id);
  });

  it('reports overlapping edits, delete vs edit and different titles as conflicts', async () => {
    const base = rev('base', [{ id: 'a', markdown: doc }, { id: 'b', markdown: 'b' }, { id: 'c', title: 'C' }]);
    const main = rev('main', [{ id: 'a', markdown: doc.replace('two', 'TWO') }, { id: 'b', markdown: 'b!' }, { id: 'c', title: 'C1' }]);
    const branch = rev('branch', [{ id: 'a', markdown: doc.replace('two', 'deux') }, { id: 'c', title: 'C2' }]);
    const r = await plan(base, main, branch);
    expect(r.clean).toBe(false);
    if (r.clean) return;
    expect(r.conflicts.map((c) => c.pageId).sort()).toEqual(['a', 'b', 'c']);
    expect(r.conflicts.find((c) => c.pageId === 'b')!.reason).toContain('deleted');
  });

  it('applies moves and reorders of the source onto the target order', async () => {
    const base = rev('base', [{ id: 'a', pages: [{ id: 'a1' }, { id: 'a2' }] }, { id: 'b' }, { id: 'c' }, { id: 'd' }]);
    // Main adds e at the end and a3 under a.
    const main = rev('main', [{ id: 'a', pages: [{ id: 'a1' }, { id: 'a2' }, { id: 'a3' }] }, { id: 'b' }, { id: 'c' }, { id: 'd' }, { id: 'e' }]);
    // The branch moves d to the front, moves b under a (first), inserts n after c.
    const branch = rev('branch', [{ id: 'd' }, { id: 'a', pages: [{ id: 'b' }, { id: 'a1' }, { id: 'a2' }] }, { id: 'c' }, { id: 'n' }]);
    const r = await plan(base, main, branch);
    if (!r.clean) throw new Error(JSON.stringify(r.conflicts));
    expect(shape(r.tree)).toEqual(['d', { a: ['b', 'a1', 'a2', 'a3'] }, 'c', 'n', 'e']);
  });

  it('keeps a move from one side and an edit from the other; the same edit on both sides is not a conflict', async () => {
    const base = rev('base', [{ id: 'a' }, { id: 'b', markdown: 'old' }, { id: 'c', markdown: 'x' }]);
    const main = rev('main', [{ id: 'a' }, { id: 'b', markdown: 'new' }, { id: 'c', markdown: 'same' }]);
    const branch = rev('branch', [{ id: 'a', pages: [{ id: 'b', markdown: 'old' }] }, { id: 'c', markdown: 'same' }]);
    const r = await plan(base, main, branch);
    if (!r.clean) throw new Error(JSON.stringify(r.conflicts));
    expect(shape(r.tree)).toEqual([{ a: ['b'] }, 'c']);
    expect(r.tree[0].pages[0].v).toBe(main.tree[1].v);
    expect(r.newVersions).toEqual([]);
  });

  it('conflicts when a page lands under a page deleted on the other side, or moves cross', async () => {
    const base = rev('base', [{ id: 'a' }, { id: 'b' }]);
    const orphan = await plan(base, rev('main', [{ id: 'a', pages: [{ id: 'child' }] }, { id: 'b' }]), rev('branch', [{ id: 'b' }]));
    expect(orphan.clean).toBe(false);
    if (!orphan.clean) expect(orphan.conflicts[0]).toMatchObject({ pageId: 'child', reason: expect.stringContaining('parent') });

    const crossed = await plan(base, rev('main', [{ id: 'a', pages: [{ id: 'b' }] }]), rev('branch', [{ id: 'b', pages: [{ id: 'a' }] }]));
    expect(crossed.clean).toBe(false);
  });

  it('renames a page from the source whose slug collides with a sibling from the target', async () => {
    const base = rev('base', []);
    const main = rev('main', [{ id: 'm', slug: 'guide' }]);
    const branch = rev('branch', [{ id: 'n', slug: 'guide' }]);
    const r = await plan(base, main, branch);
    if (!r.clean) throw new Error(JSON.stringify(r.conflicts));
    expect(r.newVersions).toHaveLength(1);
    expect(r.newVersions[0]).toMatchObject({ pageId: 'n', slug: 'guide-2' });
  });

  it('merges files and variables three-way', async () => {
    const base = rev('base', [], { fileIds: ['f1', 'f2'], variables: { a: '1', b: '1' } as any });
    const main = rev('main', [{ id: 'x' }], { fileIds: ['f1', 'f2', 'f3'], variables: { a: '2', b: '1' } as any });
    const branch = rev('branch', [{ id: 'y' }], { fileIds: ['f1', 'f4'], variables: { a: '1', b: '1', c: '3' } as any });
    const r = await plan(base, main, branch);
    if (!r.clean) throw new Error(JSON.stringify(r.conflicts));
    expect(r.fileIds).toEqual(['f1', 'f3', 'f4']);
    expect(r.variables).toEqual({ a: '2', b: '1', c: '3' });
    const clash = await plan(base, main, rev('branch2', [], { variables: { a: '3', b: '1' } as any }));
    expect(clash.clean).toBe(false);
  });
});

// ------------------------------------------------------------------ end to end

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.close();
});

const CR = (spaceId: string, cr: string | number) => `/v1/spaces/${spaceId}/change-requests/${cr}`;

async function newSpace(title = 'Merge space') {
  const r = await t.rest('POST', `/v1/orgs/${t.org.id}/spaces`, { title });
  expect(r.status).toBe(201);
  return r.body.id as string;
}
async function newCr(spaceId: string, subject = 'Change') {
  const r = await t.rest('POST', `/v1/spaces/${spaceId}/change-requests`, { subject });
  expect(r.status).toBe(201);
  return r.body as { id: string; number: number; revision: string };
}
async function author(spaceId: string, cr: string, changes: unknown[]) {
  const r = await t.rest('POST', `${CR(spaceId, cr)}/content?compat=false`, { changes });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body as { changeRequest: any; changes: Array<{ object: string; page: any; ref?: string }> };
}
async function merge(spaceId: string, cr: string) {
  const r = await t.rest('POST', `${CR(spaceId, cr)}/merge`);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  expectValidResponse('POST', '/spaces/{spaceId}/change-requests/{changeRequestId}/merge', 200, r.body);
  return r.body as { result: string; revision: string };
}
async function spaceContent(spaceId: string) {
  const space = await t.app.prisma.space.findUniqueOrThrow({ where: { id: spaceId } });
  const loaded = await loadRevision(t.app.prisma, space.revisionId!);
  const pages = new Map<string, Omit<PageVersion, 'document' | 'links'>>();
  for (const v of loaded.versions.values()) pages.set(v.pageId, v);
  return { space, loaded, pages, byTitle: (title: string) => [...pages.values()].find((p) => p.title === title) };
}
/** A space with pages A, B (merged through a first change request). */
async function seededSpace(markdown = 'line 1\nline 2\nline 3\nline 4\nline 5') {
  const spaceId = await newSpace();
  const cr = await newCr(spaceId, 'Seed');
  const r = await author(spaceId, cr.id, [
    { operation: 'insert_page', ref: 'a', title: 'A', document: { markdown } },
    { operation: 'insert_page', ref: 'b', title: 'B', document: { markdown } },
  ]);
  expect((await merge(spaceId, cr.id)).result).toBe('merge');
  const [a, b] = r.changes.map((c) => c.page.id as string);
  return { spaceId, a, b };
}

describe('merging change requests', () => {
  it('create → author 3 pages → merge → the space has them', async () => {
    const spaceId = await newSpace();
    const before = await t.app.prisma.space.findUniqueOrThrow({ where: { id: spaceId } });
    const cr = await newCr(spaceId, 'Three pages');
    const authored = await author(spaceId, cr.id, [
      { operation: 'insert_page', ref: 'intro', title: 'Introduction', document: { markdown: 'Welcome.' } },
      { operation: 'insert_page', title: 'Install', into: undefined, document: { markdown: 'npm i' } },
      { operation: 'insert_page', title: 'Configure', document: { markdown: 'Set it up.' } },
    ]);
    expect(authored.changes.map((c) => c.object)).toEqual(['created_page', 'created_page', 'created_page']);
    // Main did not move: nothing is outdated and the space is untouched until the merge.
    expect((await t.rest('GET', CR(spaceId, cr.id))).body.outdated).toBe(false);
    expect((await t.app.prisma.space.findUniqueOrThrow({ where: { id: spaceId } })).revisionId).toBe(before.revisionId);

    const head = (await t.rest('GET', CR(spaceId, cr.id))).body.revision;
    const res = await t.client().spaces.mergeChangeRequest(spaceId, cr.id);
    expect(res.data.result).toBe('merge');
    const content = await spaceContent(spaceId);
    expect(content.space.revisionId).toBe(res.data.revision);
    expect([...pagePaths(content.loaded).values()]).toEqual(['introduction', 'install', 'configure']);
    expect(content.byTitle('Install')!.markdown).toBe('npm i');
    expect(content.loaded.revision).toMatchObject({ type: 'merge', parents: [before.revisionId, head] });

    const after = await t.rest('GET', CR(spaceId, cr.id));
    expectValidResponse('GET', '/spaces/{spaceId}/change-requests/{changeRequestId}', 200, after.body);
    expect(after.body).toMatchObject({ status: 'merged', revisionMerged: res.data.revision, outdated: false });
    expect((await t.rest('GET', `/v1/spaces/${spaceId}/change-requests?status=merged`)).body.items.map((i: any) => i.id)).toEqual([cr.id]);
  });

  it('two change requests editing different pages both merge; the second was outdated', async () => {
    const { spaceId, a, b } = await seededSpace();
    const one = await newCr(spaceId, 'Edit A');
    const two = await newCr(spaceId, 'Edit B');
    await author(spaceId, one.id, [{ operation: 'update_page', page: a, document: { markdown: 'A changed' } }]);
    await author(spaceId, two.id, [{ operation: 'update_page', page: b, title: 'B renamed', document: { markdown: 'B changed' } }]);
    expect((await merge(spaceId, one.id)).result).toBe('merge');
    expect((await t.rest('GET', CR(spaceId, two.id))).body.outdated).toBe(true);
    expect((await merge(spaceId, two.id)).result).toBe('merge');
    const content = await spaceContent(spaceId);
    expect(content.pages.get(a)!.markdown).toBe('A changed');
    expect(content.pages.get(b)).toMatchObject({ title: 'B renamed', markdown: 'B changed' });
  });

  it('merges edits of different lines of the same page line by line', async () => {
    const { spaceId, a } = await seededSpace();
    const one = await newCr(spaceId);
    const two = await newCr(spaceId);
    await author(spaceId, one.id, [{ operation: 'update_page', page: a, document: { markdown: 'LINE 1\nline 2\nline 3\nline 4\nline 5' } }]);
    await author(spaceId, two.id, [{ operation: 'update_page', page: a, document: { markdown: 'line 1\nline 2\nline 3\nline 4\nLINE 5' } }]);
    await merge(spaceId, one.id);
    const pvBefore = await t.app.prisma.pageVersion.count({ where: { pageId: a } });
    expect((await merge(spaceId, two.id)).result).toBe('merge');
    const content = await spaceContent(spaceId);
    expect(content.pages.get(a)!.markdown).toBe('LINE 1\nline 2\nline 3\nline 4\nLINE 5');
    expect(await t.app.prisma.pageVersion.count({ where: { pageId: a } })).toBe(pvBefore + 1);
  });

  it('editing the same line on both sides conflicts and changes nothing', async () => {
    const { spaceId, a } = await seededSpace();
    const one = await newCr(spaceId);
    const two = await newCr(spaceId);
    await author(spaceId, one.id, [{ operation: 'update_page', page: a, document: { markdown: 'line 1\nmain says 2\nline 3\nline 4\nline 5' } }]);
    await author(spaceId, two.id, [{ operation: 'update_page', page: a, document: { markdown: 'line 1\nbranch says 2\nline 3\nline 4\nline 5' } }]);
    await merge(spaceId, one.id);
    const before = await spaceContent(spaceId);
    const crBefore = await t.app.prisma.changeRequest.findUniqueOrThrow({ where: { id: two.id } });
    const counts = async () => ({ revisions: await t.app.prisma.revision.count({ where: { spaceId } }), versions: await t.app.prisma.pageVersion.count({ where: { spaceId } }) });
    const countsBefore = await counts();

    const res = await merge(spaceId, two.id);
    expect(res).toEqual({ result: 'conflicts', revision: before.space.revisionId });
    const gql = await t.gql(`mutation($input: MergeChangeRequestInput!) { mergeChangeRequest(input: $input) { result revision conflicts { pageId reason } changeRequest { status outdated } } }`, {
      input: { spaceId, changeRequestId: String(two.number) },
    });
    expect(gql.data.mergeChangeRequest).toMatchObject({ result: 'conflicts', conflicts: [{ pageId: a, reason: expect.stringContaining('overlapping') }], changeRequest: { status: 'open', outdated: true } });

    const after = await spaceContent(spaceId);
    expect(after.space.revisionId).toBe(before.space.revisionId);
    expect(after.pages.get(a)!.markdown).toContain('main says 2');
    expect(await t.app.prisma.changeRequest.findUniqueOrThrow({ where: { id: two.id } })).toEqual(crBefore);
    expect(await counts()).toEqual(countsBefore);
    // Update conflicts the same way and changes nothing either.
    const upd = await t.rest('POST', `${CR(spaceId, two.id)}/update`);
    expect(upd.body).toEqual({ result: 'conflicts', revision: crBefore.revisionId });
    expect(await t.app.prisma.changeRequest.findUniqueOrThrow({ where: { id: two.id } })).toEqual(crBefore);
    expect(await counts()).toEqual(countsBefore);
  });

  it('delete on one side and edit on the other conflicts', async () => {
    const { spaceId, a } = await seededSpace();
    const one = await newCr(spaceId);
    const two = await newCr(spaceId);
    await author(spaceId, one.id, [{ operation: 'delete_page', page: a }]);
    await author(spaceId, two.id, [{ operation: 'update_page', page: a, document: { markdown: 'still here' } }]);
    await merge(spaceId, one.id);
    expect((await merge(spaceId, two.id)).result).toBe('conflicts');
  });

  it('update brings main’s new page into an outdated change request and clears outdated', async () => {
    const { spaceId, a } = await seededSpace();
    const branch = await newCr(spaceId, 'Long-running');
    await author(spaceId, branch.id, [{ operation: 'update_page', page: a, document: { markdown: 'branch edit' } }]);
    const other = await newCr(spaceId, 'Quick fix');
    const added = await author(spaceId, other.id, [{ operation: 'insert_page', title: 'From main', document: { markdown: 'fresh' } }]);
    const newPage = added.changes[0].page.id;
    await merge(spaceId, other.id);
    const main = (await t.app.prisma.space.findUniqueOrThrow({ where: { id: spaceId } })).revisionId!;
    const before = (await t.rest('GET', CR(spaceId, branch.id))).body;
    expect(before.outdated).toBe(true);

    const res = await t.client().spaces.updateChangeRequest(spaceId, branch.id);
    expectValidResponse('POST', '/spaces/{spaceId}/change-requests/{changeRequestId}/update', 200, res.data);
    expect(res.data.result).toBe('update');
    const after = (await t.rest('GET', CR(spaceId, branch.id))).body;
    expect(after).toMatchObject({ outdated: false, revision: res.data.revision, revisionMergedAncestor: main, revisionInitial: before.revisionInitial });
    const head = await loadRevision(t.app.prisma, res.data.revision);
    expect(head.revision).toMatchObject({ type: 'update', parents: [before.revision, main], changeRequestId: branch.id });
    const pages = new Map([...head.versions.values()].map((v) => [v.pageId, v]));
    expect(pages.get(newPage)!.title).toBe('From main');
    expect(pages.get(a)!.markdown).toBe('branch edit');
    // The space is untouched by an update; merging now is a plain merge.
    expect((await t.app.prisma.space.findUniqueOrThrow({ where: { id: spaceId } })).revisionId).toBe(main);
    expect((await merge(spaceId, branch.id)).result).toBe('merge');
    const content = await spaceContent(spaceId);
    expect(content.pages.get(a)!.markdown).toBe('branch edit');
    expect(content.pages.get(newPage)!.title).toBe('From main');
  });

  it('revert_page goes back to the change request’s base', async () => {
    const { spaceId, a } = await seededSpace('original');
    const cr = await newCr(spaceId);
    await author(spaceId, cr.id, [{ operation: 'update_page', page: a, document: { markdown: 'changed' } }]);
    await author(spaceId, cr.id, [{ operation: 'revert_page', page: a }]);
    const head = await loadRevision(t.app.prisma, (await t.rest('GET', CR(spaceId, cr.id))).body.revision);
    const v = [...head.versions.values()].find((p) => p.pageId === a)!;
    expect(v.markdown).toBe('original');
  });
});

describe('races', () => {
  it('two concurrent merges of different change requests keep every edit', async () => {
    for (let round = 0; round < 3; round++) {
      const { spaceId, a, b } = await seededSpace();
      const one = await newCr(spaceId);
      const two = await newCr(spaceId);
      await author(spaceId, one.id, [
        { operation: 'update_page', page: a, document: { markdown: `A by one ${round}` } },
        { operation: 'insert_page', title: 'One', document: { markdown: '1' } },
      ]);
      await author(spaceId, two.id, [
        { operation: 'update_page', page: b, document: { markdown: `B by two ${round}` } },
        { operation: 'insert_page', title: 'Two', document: { markdown: '2' } },
      ]);
      const results = await Promise.all([merge(spaceId, one.id), merge(spaceId, two.id)]);
      expect(results.map((r) => r.result)).toEqual(['merge', 'merge']);
      const content = await spaceContent(spaceId);
      expect(content.pages.get(a)!.markdown).toBe(`A by one ${round}`);
      expect(content.pages.get(b)!.markdown).toBe(`B by two ${round}`);
      expect(content.byTitle('One')).toBeDefined();
      expect(content.byTitle('Two')).toBeDefined();
      // One merge is built on the other's result.
      const last = content.loaded.revision;
      expect(results.map((r) => r.revision)).toContain(last.id);
      expect(results.map((r) => r.revision)).toContain(last.parents[0]);
    }
  });

  it('two concurrent merges editing the same line: one merges, the other reports conflicts', async () => {
    const { spaceId, a } = await seededSpace();
    const one = await newCr(spaceId);
    const two = await newCr(spaceId);
    await author(spaceId, one.id, [{ operation: 'update_page', page: a, document: { markdown: 'ONE\nline 2\nline 3\nline 4\nline 5' } }]);
    await author(spaceId, two.id, [{ operation: 'update_page', page: a, document: { markdown: 'TWO\nline 2\nline 3\nline 4\nline 5' } }]);
    const results = await Promise.all([merge(spaceId, one.id), merge(spaceId, two.id)]);
    expect(results.map((r) => r.result).sort()).toEqual(['conflicts', 'merge']);
    const winner = results[0].result === 'merge' ? 'ONE' : 'TWO';
    expect((await spaceContent(spaceId)).pages.get(a)!.markdown.startsWith(winner)).toBe(true);
  });

  it('concurrent content batches on one change request never lose an edit', async () => {
    const spaceId = await newSpace();
    const cr = await newCr(spaceId);
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) => t.rest('POST', `${CR(spaceId, cr.id)}/content`, { changes: [{ operation: 'insert_page', title: `Page ${i}`, document: { markdown: `${i}` } }] })),
    );
    expect(results.map((r) => r.status)).toEqual(Array(6).fill(200));
    const head = await loadRevision(t.app.prisma, (await t.rest('GET', CR(spaceId, cr.id))).body.revision);
    expect([...head.versions.values()].map((v) => v.title).sort()).toEqual(Array.from({ length: 6 }, (_, i) => `Page ${i}`));
    // Every batch built on the previous one: a chain of 6 revisions of the change request.
    expect(await t.app.prisma.revision.count({ where: { changeRequestId: cr.id } })).toBe(6);
  });
});
