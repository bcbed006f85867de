// Merges cost what changed, not the space: a merge compares only the pages changed on either side
// (diffs of the stored trees), so it runs the same statements in a space of 10 pages and of 5,000;
// and the planner, which reads only those pages, agrees with a whole-tree merge on random edits.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { generateKeyBetween } from 'fractional-indexing';
import { startTestApp, type TestApp } from './helpers.ts';
import { newId } from '../src/lib/ids.ts';
import { transaction } from '../src/db/transaction.ts';
import { writeWholeTree } from '../src/domain/revision-tree.ts';
import { planThreeWayMerge, type MergeReader, type MergeRevision } from '../src/domain/three-way.ts';
import type { StoredPageVersion } from '../src/domain/revisions.ts';
import { mergeText } from '../src/lib/merge.ts';
import { buildTree, diffEntries, lookupEntries, MemoryNodes, nodesFromEntries, readChildren, readEntries, updateTree, type TreeEntry } from '../src/lib/page-trie.ts';

// ------------------------------------------------------------------ through the API, at two sizes

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.close();
});

const LINES = 'line 1\nline 2\nline 3\nline 4\nline 5';

/** A space of `n` pages in two levels (~√n sections of ~√n pages), seeded in bulk; returns its leaf page ids. */
async function seededSpace(n: number) {
  const created = await t.rest('POST', `/v1/orgs/${t.org.id}/spaces`, { title: `Scale ${n}` });
  expect(created.status).toBe(201);
  const spaceId = created.body.id as string;
  const prisma = t.app.prisma;
  const parent = (await prisma.space.findUniqueOrThrow({ where: { id: spaceId } })).revisionId!;
  const width = Math.max(1, Math.round(Math.sqrt(n)));
  type Node = { id: string; v: string; pages: Node[] };
  const tree: Node[] = [];
  const rows: Array<{ v: string; p: string; i: number }> = [];
  for (let i = 0; i < n; i++) {
    const node: Node = { id: newId('Page'), v: newId('PageVersion'), pages: [] };
    rows.push({ v: node.v, p: node.id, i });
    if (i % width === 0) tree.push(node);
    else tree[tree.length - 1].pages.push(node);
  }
  for (let i = 0; i < rows.length; i += 2000) {
    const chunk = rows.slice(i, i + 2000);
    await prisma.$executeRaw`
      INSERT INTO "PageVersion" (id, "pageId", "spaceId", kind, title, slug, markdown, links, "createdAt", "pageCreatedAt")
      SELECT x.v, x.p, ${spaceId}, 'document', 'Page ' || x.i, 'page-' || x.i, ${LINES}, '[]'::json, now(), now()
      FROM unnest(${chunk.map((r) => r.v)}::text[], ${chunk.map((r) => r.p)}::text[], ${chunk.map((r) => r.i)}::int[]) AS x(v, p, i)`;
  }
  const { root } = await transaction(prisma, (tx) => writeWholeTree(tx, tree), { timeout: 60_000 });
  const revisionId = newId('Revision');
  await prisma.$executeRaw`
    INSERT INTO "Revision" (id, "spaceId", parents, type, "fileIds", "createdById", "createdAt", "treeRoot")
    VALUES (${revisionId}, ${spaceId}, ${[parent]}::text[], 'edits', '{}', ${t.adminUser.id}, now(), ${root})`;
  await prisma.space.update({ where: { id: spaceId }, data: { revisionId } });
  const leaves = tree.flatMap((s) => (s.pages.length ? s.pages : [s])).map((p) => p.id);
  return { spaceId, leaves, sections: tree.map((s) => s.id) };
}

const CR = (spaceId: string, cr: string) => `/v1/spaces/${spaceId}/change-requests/${cr}`;

async function newCr(spaceId: string) {
  const r = await t.rest('POST', `/v1/spaces/${spaceId}/change-requests`, { subject: 'Scale' });
  expect(r.status).toBe(201);
  return r.body.id as string;
}
async function editCr(spaceId: string, cr: string, changes: unknown[]) {
  const r = await t.rest('POST', `${CR(spaceId, cr)}/content?compat=false`, { changes });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
}
async function editMain(spaceId: string, changes: unknown[]) {
  const r = await t.rest('POST', `/v1/spaces/${spaceId}/content`, { changes });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
}
async function pageOf(spaceId: string, pageId: string) {
  const r = await t.rest('GET', `/v1/spaces/${spaceId}/content/page/${pageId}?format=markdown`);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body as { id: string; title: string; markdown: string; pages: Array<{ id: string }> };
}

/** A change request editing one page, main editing another, merged: the statements of the merge, and what the pages read back. */
async function oneEditEachSide(n: number) {
  const { spaceId, leaves } = await seededSpace(n);
  const [x, y] = [leaves[Math.floor(leaves.length / 3)], leaves[Math.floor((2 * leaves.length) / 3)]];
  const cr = await newCr(spaceId);
  await editCr(spaceId, cr, [{ operation: 'update_page', page: x, document: { markdown: LINES.replace('line 2', 'line 2 (from the change request)') } }]);
  await editMain(spaceId, [{ operation: 'update_page', page: y, document: { markdown: LINES.replace('line 4', 'line 4 (on main)') } }]);
  const { result, count, statements } = await t.countQueries(() => t.rest('POST', `${CR(spaceId, cr)}/merge`));
  expect(result.status, JSON.stringify(result.body)).toBe(200);
  expect(result.body.result).toBe('merge');
  return { spaceId, x, y, count, statements };
}

describe('a merge costs what changed', () => {
  it('runs the same statements at 10 and 5,000 pages, and both edits land', async () => {
    const small = await oneEditEachSide(10);
    const large = await oneEditEachSide(5_000);
    expect(large.count, `10 pages:\n${small.statements.join('\n')}\n\n5,000 pages:\n${large.statements.join('\n')}`).toBe(small.count);
    for (const s of [small, large]) {
      expect((await pageOf(s.spaceId, s.x)).markdown).toContain('line 2 (from the change request)');
      expect((await pageOf(s.spaceId, s.y)).markdown).toContain('line 4 (on main)');
      // The other pages are untouched.
      expect((await pageOf(s.spaceId, s.x)).markdown).not.toContain('on main');
    }
  }, 240_000);

  it('still reports overlapping edits of one page as a conflict, and changes nothing', async () => {
    const { spaceId, leaves } = await seededSpace(200);
    const x = leaves[17];
    const cr = await newCr(spaceId);
    await editCr(spaceId, cr, [{ operation: 'update_page', page: x, document: { markdown: LINES.replace('line 3', 'line 3 by the change request') } }]);
    await editMain(spaceId, [{ operation: 'update_page', page: x, document: { markdown: LINES.replace('line 3', 'line 3 on main') } }]);
    const before = await t.app.prisma.space.findUniqueOrThrow({ where: { id: spaceId } });
    const r = await t.gql(`mutation($input: MergeChangeRequestInput!) { mergeChangeRequest(input: $input) { result conflicts { pageId reason } } }`, { input: { spaceId, changeRequestId: cr } });
    expect(r.errors).toBeUndefined();
    expect(r.data.mergeChangeRequest).toEqual({ result: 'conflicts', conflicts: [{ pageId: x, reason: 'overlapping edits of the page content (1 conflicting region)' }] });
    expect((await t.app.prisma.space.findUniqueOrThrow({ where: { id: spaceId } })).revisionId).toBe(before.revisionId);
    expect((await pageOf(spaceId, x)).markdown).toContain('line 3 on main');
    expect((await t.rest('GET', CR(spaceId, cr))).body.status).toBe('open');
  }, 120_000);

  it('takes a move from one side and an edit of the same page from the other', async () => {
    const { spaceId, leaves, sections } = await seededSpace(400);
    const x = leaves[5];
    const into = sections[sections.length - 1];
    const cr = await newCr(spaceId);
    // The change request moves x to the front of the last section; main edits x's body.
    await editCr(spaceId, cr, [{ operation: 'update_page', page: x, into, at: 0 }]);
    await editMain(spaceId, [{ operation: 'update_page', page: x, document: { markdown: `${LINES}\nline 6 on main` } }]);
    const r = await t.rest('POST', `${CR(spaceId, cr)}/merge`);
    expect(r.body.result, JSON.stringify(r.body)).toBe('merge');
    expect((await pageOf(spaceId, x)).markdown).toContain('line 6 on main');
    expect((await pageOf(spaceId, into)).pages[0].id).toBe(x);
    // Update from main the other way round: main moves a page, the change request edits it.
    const y = leaves[50];
    const cr2 = await newCr(spaceId);
    await editCr(spaceId, cr2, [{ operation: 'update_page', page: y, title: 'Edited in the change request' }]);
    await editMain(spaceId, [{ operation: 'update_page', page: y, into, at: 0 }]);
    const u = await t.rest('POST', `${CR(spaceId, cr2)}/update`);
    expect(u.status, JSON.stringify(u.body)).toBe(200);
    expect(u.body.result).toBe('update');
    const page = await t.rest('GET', `${CR(spaceId, cr2)}/content/page/${y}`);
    expect(page.body.title).toBe('Edited in the change request');
    const parent = await t.rest('GET', `${CR(spaceId, cr2)}/content/page/${into}`);
    expect(parent.body.pages.map((p: { id: string }) => p.id).slice(0, 2)).toEqual([y, x]);
  }, 120_000);
});

// ------------------------------------------------------------------ the planner against a whole-tree merge

type Content = { title: string; slug: string; markdown: string };
type Side = { entries: Map<string, TreeEntry>; versions: Map<string, Content & { pageId: string }> };

let vseq = 0;
const version = (side: Side, pageId: string, c: Content) => {
  const id = `pv_${vseq++}`;
  side.versions.set(id, { pageId, ...c });
  return id;
};
const contentOf = (side: Side, pageId: string) => side.versions.get(side.entries.get(pageId)!.v)!;
const childrenIn = (entries: Map<string, TreeEntry>, parent: string | null) =>
  [...entries]
    .filter(([, e]) => e.parent === parent)
    .map(([pageId, e]) => ({ pageId, pos: e.pos }))
    .sort((a, b) => (a.pos < b.pos ? -1 : a.pos > b.pos ? 1 : a.pageId < b.pageId ? -1 : 1));
const slugFree = (side: Side, parent: string | null, slug: string, except?: string) => childrenIn(side.entries, parent).every((c) => c.pageId === except || contentOf(side, c.pageId).slug !== slug);
const keyAt = (entries: Map<string, TreeEntry>, parent: string | null, at: number, except?: string) => {
  const list = childrenIn(entries, parent).filter((c) => c.pageId !== except);
  const i = Math.min(at, list.length);
  return generateKeyBetween(list[i - 1]?.pos ?? null, list[i]?.pos ?? null);
};
const inSubtree = (entries: Map<string, TreeEntry>, root: string, id: string | null): boolean => {
  for (let cur = id; cur !== null; cur = entries.get(cur)?.parent ?? null) if (cur === root) return true;
  return false;
};

type Op =
  | { k: 'edit'; page: number; line: number }
  | { k: 'title'; page: number }
  | { k: 'slug'; page: number; slug: number }
  | { k: 'move'; page: number; parent: number; at: number }
  | { k: 'insert'; id: number; parent: number; at: number; slug: number }
  | { k: 'delete'; page: number };

const SLUGS = ['a', 'b', 'guide'];
const opArb: fc.Arbitrary<Op> = fc.oneof(
  { arbitrary: fc.record({ k: fc.constant('edit' as const), page: fc.nat(9), line: fc.nat(3) }), weight: 3 },
  { arbitrary: fc.record({ k: fc.constant('title' as const), page: fc.nat(9) }), weight: 1 },
  { arbitrary: fc.record({ k: fc.constant('slug' as const), page: fc.nat(9), slug: fc.nat(2) }), weight: 2 },
  { arbitrary: fc.record({ k: fc.constant('move' as const), page: fc.nat(9), parent: fc.integer({ min: -1, max: 9 }), at: fc.nat(4) }), weight: 3 },
  { arbitrary: fc.record({ k: fc.constant('insert' as const), id: fc.nat(2), parent: fc.integer({ min: -1, max: 9 }), at: fc.nat(4), slug: fc.nat(3) }), weight: 3 },
  { arbitrary: fc.record({ k: fc.constant('delete' as const), page: fc.nat(9) }), weight: 1 },
);

/** Apply random operations as the application would: a side stays valid (no cycles, unique sibling slugs, distinct keys). */
function applyOps(base: Side, ops: Op[], tag: string): Side {
  const side: Side = { entries: new Map([...base.entries].map(([k, e]) => [k, { ...e }])), versions: new Map(base.versions) };
  const pick = (i: number) => [...side.entries.keys()].sort()[i % Math.max(1, side.entries.size)];
  const parentOf = (i: number) => (i < 0 || side.entries.size === 0 ? null : pick(i));
  for (const op of ops) {
    if (op.k === 'insert') {
      const id = `x${op.id}`;
      const parent = parentOf(op.parent);
      const slug = op.slug < SLUGS.length ? SLUGS[op.slug] : id;
      if (side.entries.has(id) || !slugFree(side, parent, slug)) continue;
      side.entries.set(id, { v: version(side, id, { title: `${id} ${tag}`, slug, markdown: 'l0\nl1\nl2\nl3' }), parent, pos: keyAt(side.entries, parent, op.at) });
      continue;
    }
    if (side.entries.size === 0) continue;
    const page = pick(op.page);
    const e = side.entries.get(page)!;
    const c = contentOf(side, page);
    if (op.k === 'edit') {
      const lines = c.markdown.split('\n');
      lines[op.line] = `${lines[op.line]} ${tag}`;
      e.v = version(side, page, { ...c, markdown: lines.join('\n') });
    } else if (op.k === 'title') e.v = version(side, page, { ...c, title: `${c.title} ${tag}` });
    else if (op.k === 'slug') {
      if (slugFree(side, e.parent, SLUGS[op.slug], page)) e.v = version(side, page, { ...c, slug: SLUGS[op.slug] });
    } else if (op.k === 'move') {
      const parent = parentOf(op.parent);
      if ((parent !== null && inSubtree(side.entries, page, parent)) || !slugFree(side, parent, c.slug, page)) continue;
      side.entries.set(page, { v: e.v, parent, pos: keyAt(side.entries, parent, op.at, page) });
    } else if (op.k === 'delete') {
      const gone = [...side.entries.keys()].filter((id) => inSubtree(side.entries, page, id));
      for (const id of gone) side.entries.delete(id);
    }
  }
  return side;
}

function baseOf(parents: number[]): Side {
  const side: Side = { entries: new Map(), versions: new Map() };
  parents.forEach((p, i) => {
    const id = `p${i}`;
    const parent = p < 0 || p >= i ? null : `p${p}`;
    side.entries.set(id, { v: version(side, id, { title: id, slug: id, markdown: 'l0\nl1\nl2\nl3' }), parent, pos: keyAt(side.entries, parent, 99) });
  });
  return side;
}

type Described = { id: string; title: string; slug: string; markdown: string; pages: Described[] };

/**
 * The merge as a whole-tree computation: every page of the three trees compared, the result's
 * order by (key, page id), reachability from the root, slugs renamed over every sibling list.
 */
function oracle(base: Side, target: Side, source: Side): { clean: true; tree: Described[] } | { clean: false; conflicts: string[] } {
  type S = { c: Content; v: string; parent: string | null; pos: string };
  const at = (side: Side, id: string): S | null => {
    const e = side.entries.get(id);
    return e ? { c: side.versions.get(e.v)!, v: e.v, parent: e.parent, pos: e.pos } : null;
  };
  const same = (a: S | null, b: S | null) => (a && b ? a.parent === b.parent && (a.v === b.v || (a.c.title === b.c.title && a.c.slug === b.c.slug && a.c.markdown === b.c.markdown)) : !a && !b);
  const eq3 = <T,>(o: T, m: T, b: T) => (o === b ? { ok: true, v: m } : o === m ? { ok: true, v: b } : m === b ? { ok: true, v: m } : { ok: false, v: m });
  const conflicts: string[] = [];
  const result = new Map<string, { c: Content; fromTarget: boolean; parent: string | null; pos: string }>();
  for (const id of new Set([...base.entries.keys(), ...target.entries.keys(), ...source.entries.keys()])) {
    const [o, m, b] = [at(base, id), at(target, id), at(source, id)];
    let r: S | null;
    if (same(o, b)) r = m;
    else if (same(o, m)) r = b;
    else if (same(m, b)) r = m;
    else if (!o || !m || !b) {
      conflicts.push(`${id}: ${o ? 'deleted on one side and changed on the other' : 'inserted differently on both sides'}`);
      continue;
    } else {
      const parent = eq3(o.parent, m.parent, b.parent);
      if (!parent.ok) {
        conflicts.push(`${id}: moved to different parents on both sides`);
        continue;
      }
      const title = eq3(o.c.title, m.c.title, b.c.title);
      const slug = eq3(o.c.slug, m.c.slug, b.c.slug);
      const text = mergeText(o.c.markdown, m.c.markdown, b.c.markdown);
      if (!title.ok) conflicts.push(`${id}: "title" changed differently on both sides`);
      else if (!slug.ok) conflicts.push(`${id}: "slug" changed differently on both sides`);
      else if (!text.clean) conflicts.push(`${id}: overlapping edits of the page content (${text.conflicts} conflicting region${text.conflicts === 1 ? '' : 's'})`);
      if (!title.ok || !slug.ok || !text.clean) continue;
      const c = { title: title.v, slug: slug.v, markdown: text.text };
      const unchanged = (x: Content) => x.title === c.title && x.slug === c.slug && x.markdown === c.markdown;
      r = { c, v: unchanged(m.c) ? m.v : unchanged(b.c) ? b.v : 'new', parent: parent.v, pos: '' };
    }
    if (!r) continue;
    const parent = r.parent;
    let pos: string;
    if (m && b && m.parent === parent && b.parent === parent) pos = eq3(o && o.parent === parent ? o.pos : undefined, m.pos, b.pos).v as string;
    else if (b && b.parent === parent && !(m && m.parent === parent)) pos = b.pos;
    else pos = (m ?? b)!.pos;
    result.set(id, { c: r.c, fromTarget: !!m && r.v === m.v, parent, pos });
  }
  if (conflicts.length) return { clean: false, conflicts: conflicts.sort() };
  for (const [id, r] of result) if (r.parent !== null && !result.has(r.parent)) conflicts.push(`${id}: its parent page was deleted on the other side`);
  if (conflicts.length) return { clean: false, conflicts: conflicts.sort() };
  const kids = (parent: string | null) =>
    [...result]
      .filter(([, r]) => r.parent === parent)
      .sort(([ia, a], [ib, b]) => (a.pos < b.pos ? -1 : a.pos > b.pos ? 1 : ia < ib ? -1 : 1))
      .map(([id]) => id);
  const reached = new Set<string>();
  const build = (parent: string | null): Described[] => {
    const list = kids(parent);
    const taken = new Set(list.filter((id) => result.get(id)!.fromTarget).map((id) => result.get(id)!.c.slug));
    return list.map((id) => {
      reached.add(id);
      const r = result.get(id)!;
      let slug = r.c.slug;
      if (!r.fromTarget) {
        for (let i = 2; taken.has(slug); i++) slug = `${r.c.slug}-${i}`;
        taken.add(slug);
      }
      return { id, title: r.c.title, slug, markdown: r.c.markdown, pages: build(id) };
    });
  };
  const tree = build(null);
  for (const id of result.keys()) if (!reached.has(id)) conflicts.push(`${id}: moved into each other on both sides`);
  return conflicts.length ? { clean: false, conflicts: conflicts.sort() } : { clean: true, tree };
}

/** The planner on the same three trees, stored as tries in memory; the result read back from the written tree. */
async function planner(base: Side, target: Side, source: Side) {
  const mem = new MemoryNodes();
  const roots = [base, target, source].map((s) => mem.add(buildTree(s.entries)));
  const versions = new Map<string, StoredPageVersion>();
  for (const s of [base, target, source])
    for (const [id, c] of s.versions) versions.set(id, { id, pageId: c.pageId, spaceId: 's', kind: 'document', title: c.title, slug: c.slug, markdown: c.markdown, emoji: null, icon: null, description: null, href: null, hidden: false, noIndex: false, noRobotsIndex: false, condition: null, layout: null, createdAt: new Date(0), pageCreatedAt: new Date(0) } as unknown as StoredPageVersion);
  const read = { versions: 0 };
  const reader: MergeReader = {
    diff: (a, b) => diffEntries(mem, a, b),
    lookup: (root, ids) => lookupEntries(mem, root, ids),
    children: (root, parent) => readChildren(mem, root, parent),
    versions: async (ids) => {
      read.versions += ids.length;
      return new Map(ids.map((id) => [id, versions.get(id)!]));
    },
    slugs: async (ids) => new Map(ids.map((id) => [id, versions.get(id)!.slug])),
  };
  const rev = (id: string, treeRoot: string): MergeRevision => ({ id, treeRoot, fileIds: [], variables: {}, reusableContents: [] });
  const plan = await planThreeWayMerge(reader, rev('base', roots[0]), rev('target', roots[1]), rev('source', roots[2]), { spaceId: 's' });
  if (!plan.clean) return { plan: { clean: false as const, conflicts: plan.conflicts.map((c) => `${c.pageId}: ${c.reason}`).sort() }, read };
  for (const row of plan.newVersions) versions.set(row.id!, { ...(row as unknown as StoredPageVersion) });
  const root = mem.add(await updateTree(mem, roots[1], plan.changes));
  const entries = await readEntries(mem, root);
  // Sibling keys stay distinct (a later insert between two siblings needs room).
  const keys = [...entries.values()].map((e) => JSON.stringify([e.parent, e.pos]));
  expect(new Set(keys).size).toBe(keys.length);
  const describe = (nodes: ReturnType<typeof nodesFromEntries>): Described[] =>
    nodes.map((n) => {
      const v = versions.get(n.v)!;
      return { id: n.id, title: v.title, slug: v.slug, markdown: v.markdown, pages: describe(n.pages) };
    });
  return { plan: { clean: true as const, tree: describe(nodesFromEntries(entries)) }, read };
}

describe('the planner reads only what changed', () => {
  it('agrees with a whole-tree merge on random edits of both sides', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.integer({ min: -1, max: 8 }), { minLength: 0, maxLength: 9 }), fc.array(opArb, { maxLength: 5 }), fc.array(opArb, { maxLength: 5 }), async (parents, targetOps, sourceOps) => {
        const base = baseOf(parents);
        const target = applyOps(base, targetOps, 'T');
        const source = applyOps(base, sourceOps, 'S');
        const got = await planner(base, target, source);
        expect(got.plan).toEqual(oracle(base, target, source));
      }),
      {
        numRuns: 30,
        examples: [
          // Both sides add a page with the same slug at the same place: equal keys, a renamed slug.
          [[-1], [{ k: 'insert', id: 0, parent: -1, at: 9, slug: 2 }], [{ k: 'insert', id: 1, parent: -1, at: 9, slug: 2 }]],
          // Crossed moves.
          [[-1, -1], [{ k: 'move', page: 0, parent: 1, at: 0 }], [{ k: 'move', page: 1, parent: 0, at: 0 }]],
          // A move on one side, an edit on the other; reorders on both; edits of different lines.
          [[-1, -1, 0], [{ k: 'edit', page: 1, line: 1 }], [{ k: 'move', page: 1, parent: 0, at: 0 }]],
          [[-1, -1, -1], [{ k: 'move', page: 2, parent: -1, at: 0 }], [{ k: 'move', page: 0, parent: -1, at: 3 }]],
          // The same page reordered differently on both sides: the target's order stands.
          [[-1, -1, -1], [{ k: 'move', page: 0, parent: -1, at: 3 }], [{ k: 'move', page: 0, parent: -1, at: 1 }]],
          [[-1, 0], [{ k: 'edit', page: 0, line: 0 }], [{ k: 'edit', page: 0, line: 3 }, { k: 'title', page: 1 }]],
          // A page added under a page the other side deleted.
          [[-1, 0, 1], [{ k: 'insert', id: 0, parent: 2, at: 0, slug: 3 }], [{ k: 'delete', page: 0 }]],
        ],
      },
    );
  });

  it('loads only the versions of pages changed on either side', async () => {
    const parents = Array.from({ length: 300 }, (_, i) => (i < 20 ? -1 : i % 20));
    const base = baseOf(parents);
    const target = applyOps(base, [{ k: 'edit', page: 3, line: 1 }], 'T');
    const source = applyOps(base, [{ k: 'title', page: 200 }], 'S');
    const got = await planner(base, target, source);
    expect(got.plan.clean).toBe(true);
    // Two pages changed: their base version and each side's new one.
    expect(got.read.versions).toBe(4);
  });
});
