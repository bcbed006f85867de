// The content model: immutable revisions over a shared pool of page versions.
//
// A revision stores its page tree as a small JSON index — [{ id: pageId, v: pageVersionId,
// pages: [...] }] — and every page version is an immutable row. A new revision copies the index
// and writes PageVersion rows only for the pages that changed, so editing one page of a
// 1,000-page space writes one page row (plus the revision row). Merges, reverts and duplicates
// reuse version rows as they are.
//
// `applyChanges` is the content-change batch of the official API (insert_page, update_page,
// delete_page, revert_page, insert_files): up to 50 changes applied atomically as one new
// revision, used for change requests and (extension) for a space's own live content.
import { z } from 'zod';
import YAML from 'yaml';
import type { Tx } from '../db/client.ts';
import type { PageVersion, Revision, RevisionType } from '../generated/prisma/client.ts';
import type { Prisma } from '../generated/prisma/client.ts';
import { newId } from '../lib/ids.ts';
import { AppError, badRequest, notFound, parseInput } from '../lib/errors.ts';
import type { FileStorage } from '../lib/storage.ts';
import { InvalidDocumentError, unparsedMarkdown } from '../lib/markdown.ts';
import { documentToMarkdownInPool, MarkdownRefusedError, ParseCancelled, parseMarkdown, refusalError, type ParsedMarkdown } from '../lib/markdown-pool.ts';
import { positionBetween, revisionTree, storedTreeOf, TreeSession, writeTreeOf, writeWholeTree, type TreeChange, type TreeEntry } from './revision-tree.ts';

export type TreeNode = { id: string; v: string; pages: TreeNode[] };

/** A page version as writes load it: without what its markdown parsed to (large, and only reads need it). */
export type StoredPageVersion = Omit<PageVersion, 'document' | 'links'>;

/** A loaded revision: its tree and the page versions it points at, by version id. */
export type LoadedRevision = { revision: Revision; tree: TreeNode[]; versions: Map<string, StoredPageVersion> };

// ------------------------------------------------------------------ tree helpers

export function* walkTree(tree: TreeNode[], parentId: string | null = null, depth = 0): Generator<{ node: TreeNode; parentId: string | null; depth: number; index: number }> {
  for (let i = 0; i < tree.length; i++) {
    const node = tree[i];
    yield { node, parentId, depth, index: i };
    yield* walkTree(node.pages, node.id, depth + 1);
  }
}

export function versionIdsOf(tree: TreeNode[]): string[] {
  return [...walkTree(tree)].map((e) => e.node.v);
}

/** Page id → version id, for comparing revisions. */
export function pageMap(tree: TreeNode[]): Map<string, string> {
  return new Map([...walkTree(tree)].map((e) => [e.node.id, e.node.v]));
}

/** Paths (slug chains) of every page of a revision, by page id. */
export function pagePaths(loaded: Pick<LoadedRevision, 'tree' | 'versions'>): Map<string, string> {
  const out = new Map<string, string>();
  const visit = (nodes: TreeNode[], prefix: string) => {
    for (const n of nodes) {
      const v = loaded.versions.get(n.v);
      const path = prefix ? `${prefix}/${v?.slug ?? n.id}` : (v?.slug ?? n.id);
      out.set(n.id, path);
      visit(n.pages, path);
    }
  };
  visit(loaded.tree, '');
  return out;
}

// ------------------------------------------------------------------ reading and writing

/**
 * A revision with its page versions. `bodies: false` leaves the markdown out (`''` in its place):
 * for a caller that needs the tree, titles and slugs only (paths, a page's version), so it does
 * not read every body of the revision.
 */
export async function loadRevision(db: Tx, revisionId: string, opts: { bodies?: boolean } = {}): Promise<LoadedRevision> {
  // The legacy JSON copy is read only for a revision without a stored tree (readers use `treeRoot` first).
  const row = await db.revision.findUnique({ where: { id: revisionId }, omit: { tree: true } });
  if (!row) throw notFound('Revision');
  const revision: Revision = { ...row, tree: row.treeRoot ? [] : ((await storedTreeOf(db, revisionId))?.tree as Prisma.JsonValue) ?? [] };
  const tree = await revisionTree(db, revision);
  const versionIds = versionIdsOf(tree);
  const omit = opts.bodies === false ? { document: true, links: true, markdown: true } : { document: true, links: true };
  const rows = versionIds.length ? await db.pageVersion.findMany({ where: { id: { in: versionIds } }, omit }) : [];
  return { revision, tree, versions: new Map(rows.map((r) => [r.id, { ...r, markdown: (r as { markdown?: string }).markdown ?? '' } as StoredPageVersion])) };
}

/** A revision's page tree (the index only: no page row is read). */
export async function loadRevisionTree(db: Tx, revisionId: string): Promise<TreeNode[]> {
  const revision = await storedTreeOf(db, revisionId);
  if (!revision) throw notFound('Revision');
  return revisionTree(db, revision);
}

export type InsertVersionsOptions = {
  /**
   * Version id → the input field its markdown came from (`changes.0.document.markdown`): content
   * a user sent, refused with a 400 naming that field when it does not parse within the budget.
   */
  fields?: Map<string, string>;
  /**
   * What to do with markdown that does not parse within the budget and has no field: refuse it
   * (default: imports, whose pages a user sent too) or store it unparsed (merges and copies of
   * content that was accepted before, lib/markdown.ts `unparsedMarkdown`).
   */
  unparsable?: 'refuse' | 'store';
  /**
   * Version id → its markdown parsed already (`parseMarkdown` of lib/markdown-pool.ts), for a
   * caller that parsed before opening its transaction; those rows are not parsed again.
   */
  parsed?: Map<string, ParsedMarkdown>;
};

/**
 * Write new page versions with what their markdown parses to: the JSON document and the links
 * on the row, the sections (split at headings, with their own search vectors) in PageSection.
 * Every page version is written through here, and this is the only place page markdown is
 * parsed (in the pool's threads, lib/markdown-pool.ts): reads take what is stored. A version
 * whose markdown another version of the same page already has takes that one's results (a
 * rename, a move, a merge that kept the text) without parsing.
 */
export async function insertPageVersions(tx: Tx, rows: Prisma.PageVersionCreateManyInput[], opts: InsertVersionsOptions = {}) {
  if (rows.length === 0) return;
  const todo = rows.filter((r) => !opts.parsed?.has(r.id!));
  const reused = todo.length ? await reusableVersions(tx, todo) : new Map<string, { id: string; document: unknown; links: unknown }>();
  const parsed = await parseVersions(
    todo.filter((r) => !reused.has(r.id!)),
    opts,
  );
  for (const [id, p] of opts.parsed ?? []) parsed.set(id, p);
  const data = rows.map((r): Prisma.PageVersionCreateManyInput => {
    const same = reused.get(r.id!);
    if (same) return { ...r, document: same.document as Prisma.InputJsonValue, links: same.links as Prisma.InputJsonValue };
    const p = parsed.get(r.id!);
    return p ? { ...r, document: p.document as unknown as Prisma.InputJsonValue, links: p.links as unknown as Prisma.InputJsonValue } : r;
  });
  await tx.pageVersion.createMany({ data });
  const sections = rows.flatMap((v) =>
    (parsed.get(v.id!)?.sections ?? []).map((s, position) => ({ versionId: v.id!, position, anchor: s.id, title: s.title, depth: s.depth, body: s.body })),
  );
  if (sections.length) await tx.pageSection.createMany({ data: sections });
  if (reused.size) {
    const pairs = [...reused].map(([id, from]) => [id, from.id]);
    await tx.$executeRaw`
      INSERT INTO "PageSection" ("versionId", "position", "anchor", "title", "depth", "body")
      SELECT x.id, s."position", s."anchor", s."title", s."depth", s."body"
      FROM unnest(${pairs.map((p) => p[0])}::text[], ${pairs.map((p) => p[1])}::text[]) AS x(id, source)
      JOIN "PageSection" s ON s."versionId" = x.source`;
  }
}

/** New version id → an existing, parsed version of the same page with the same markdown. */
async function reusableVersions(tx: Tx, rows: Prisma.PageVersionCreateManyInput[]) {
  const found = await tx.$queryRaw<Array<{ i: number; id: string; document: unknown; links: unknown }>>`
    SELECT DISTINCT ON (x.i) x.i::int AS i, pv."id", pv."document", pv."links"
    FROM unnest(${rows.map((r) => r.pageId)}::text[], ${rows.map((r) => r.markdown ?? '')}::text[]) WITH ORDINALITY AS x(page, markdown, i)
    JOIN "PageVersion" pv ON pv."pageId" = x.page AND pv."markdown" = x.markdown AND pv."document" IS NOT NULL
    ORDER BY x.i`;
  return new Map(found.map((f) => [rows[f.i - 1].id!, f]));
}

/** Parse the rows' markdown in the pool, all at once; the first refusal of content with a field ends the others. */
async function parseVersions(rows: Prisma.PageVersionCreateManyInput[], opts: InsertVersionsOptions): Promise<Map<string, ParsedMarkdown>> {
  const out = new Map<string, ParsedMarkdown>();
  const stop = new AbortController();
  const results = await Promise.allSettled(
    rows.map(async (r) => {
      const markdown = r.markdown ?? '';
      try {
        out.set(r.id!, await parseMarkdown(markdown, stop.signal));
      } catch (e) {
        const field = opts.fields?.get(r.id!);
        if (e instanceof MarkdownRefusedError && !field && opts.unparsable === 'store') {
          out.set(r.id!, unparsedMarkdown(markdown));
          return;
        }
        stop.abort();
        throw e instanceof MarkdownRefusedError ? refusalError(new MarkdownRefusedError(e.reason, field ? e.message : `page "${r.title}": ${e.message}`), field ?? 'markdown') : e;
      }
    }),
  );
  // The first failure that is not another task's cancellation.
  const failed = results.find((x): x is PromiseRejectedResult => x.status === 'rejected' && !(x.reason instanceof ParseCancelled));
  if (failed) throw failed.reason;
  return out;
}

/**
 * Write a revision row for a tree whose page versions already exist. The page tree is given
 * either as a nested `tree` (diffed against the first parent's tree) or as a `treeRoot`
 * already stored with writeTree (what the callers that know their changes do). The row keeps
 * only the root: the page list lives in the shared tree store ("RevisionTreeNode"); the legacy
 * JSON `tree` column is left empty (it is read only for revisions written before trees were stored).
 */
export async function writeRevision(
  tx: Tx,
  data: {
    spaceId: string;
    parents: string[];
    type: RevisionType;
    fileIds: string[];
    changeRequestId?: string | null;
    createdById?: string | null;
    variables?: Prisma.InputJsonValue;
    reusableContents?: Prisma.InputJsonValue;
  } & ({ tree: TreeNode[]; treeRoot?: undefined } | { treeRoot: string; tree?: undefined }),
): Promise<Revision> {
  let treeRoot = data.treeRoot;
  if (treeRoot === undefined) {
    // The shared page tree, written from the first parent's (a merge's target) when it has one.
    const base = data.parents[0] ? await tx.revision.findUnique({ where: { id: data.parents[0] }, select: { treeRoot: true } }) : null;
    treeRoot = await writeTreeOf(tx, base?.treeRoot ?? null, data.tree!);
  }
  const row = await tx.revision.create({
    data: {
      id: newId('Revision'),
      treeRoot,
      spaceId: data.spaceId,
      parents: data.parents,
      type: data.type,
      fileIds: data.fileIds,
      variables: data.variables ?? {},
      reusableContents: data.reusableContents ?? [],
      changeRequestId: data.changeRequestId ?? null,
      createdById: data.createdById ?? null,
    },
    omit: { tree: true },
  });
  return { ...row, tree: [] };
}

/** The empty first revision of a new space. */
export function createInitialRevision(tx: Tx, spaceId: string, createdById: string | null) {
  return writeRevision(tx, { spaceId, parents: [], type: 'edits', tree: [], fileIds: [], createdById });
}

// ------------------------------------------------------------------ the change batch

const Slug = z.string().min(1).max(100).regex(/^[a-z0-9][a-z0-9-_]*$/i, 'letters, digits, - and _');

/** The page limit: characters of markdown in one page (imports obey it too, src/domain/imports.ts). */
export const PAGE_MARKDOWN_MAX = 256 * 1024;

const DocumentInput = z.union([
  // 256 KB a page: parsing markdown costs ~5 ms per KB of CPU (remark), so this bounds one page to about a second.
  z.strictObject({ markdown: z.string().max(PAGE_MARKDOWN_MAX) }),
  z.strictObject({ document: z.record(z.string(), z.unknown()) }),
  z.strictObject({}),
]);

const PageMeta = {
  title: z.string().min(1).max(256).optional(),
  slug: Slug.optional(),
  emoji: z.string().max(50).optional(),
  icon: z.string().max(256).optional(),
  description: z.string().max(1000).optional(),
  hidden: z.boolean().optional(),
  noIndex: z.boolean().optional(),
  noRobotsIndex: z.boolean().optional(),
  condition: z.string().max(1024).optional(),
};

export const ContentChange = z.discriminatedUnion('operation', [
  z.strictObject({
    operation: z.literal('insert_page'),
    ...PageMeta,
    into: z.string().optional(),
    at: z.number().int().min(0).optional(),
    ref: z.string().min(1).max(100).optional(),
    document: DocumentInput,
    /** Extension: group and link pages (the official batch only inserts documents). */
    type: z.enum(['document', 'group', 'link']).optional(),
    href: z.string().max(2048).optional(),
  }),
  z.strictObject({
    operation: z.literal('update_page'),
    ...PageMeta,
    page: z.string().min(1),
    document: DocumentInput.optional(),
    into: z.string().nullable().optional(),
    at: z.number().int().min(0).optional(),
  }),
  z.strictObject({ operation: z.literal('delete_page'), page: z.string().min(1) }),
  z.strictObject({
    operation: z.literal('revert_page'),
    page: z.string().min(1),
    revision: z.string().optional(),
    block: z.array(z.string()).optional(),
  }),
  z.strictObject({
    operation: z.literal('insert_files'),
    files: z
      .array(
        z.strictObject({
          ref: z.string().min(1).max(100).optional(),
          name: z.string().min(1).max(256),
          contentType: z.string().max(255).optional(),
          url: z.string().url().max(2048).optional(),
          base64: z.string().max(1_400_000).optional(),
        }),
      )
      .min(1)
      .max(20),
  }),
]);
export type ContentChange = z.infer<typeof ContentChange>;

export const ContentChangesInput = z.strictObject({ changes: z.array(ContentChange).min(1).max(50) });

export type ChangeOutcome =
  | { object: 'created_page'; pageId: string; ref?: string }
  | { object: 'updated_page'; pageId: string }
  | { object: 'deleted_page'; pageId: string };

export type ApplyChangesOptions = {
  spaceId: string;
  /** The revision the batch applies to; the new revision's parent. */
  baseRevisionId: string;
  /** Where `revert_page` without `revision` goes back to (a change request's base). */
  revertTargetRevisionId?: string;
  changes: unknown;
  createdById: string;
  changeRequestId?: string | null;
  storage: FileStorage;
  /** Fetches `insert_files` URLs (SSRF-guarded by the caller). */
  fetchFile?: (url: string) => Promise<{ body: Buffer; contentType: string }>;
};

type PageDraft = Omit<Prisma.PageVersionCreateManyInput, 'id' | 'spaceId'> & { pageId: string };

/** Pull a title from markdown front matter or a leading `# heading` (removed from the body). */
export function readMarkdownDocument(markdown: string): { markdown: string; meta: Record<string, unknown>; heading?: string } {
  let body = markdown;
  let meta: Record<string, unknown> = {};
  const fm = /^---\r?\n([\s\S]*?)\r?\n---\r?\n?/.exec(body);
  if (fm) {
    try {
      const parsed = YAML.parse(fm[1]);
      if (parsed && typeof parsed === 'object') meta = parsed as Record<string, unknown>;
    } catch {
      throw badRequest('document.markdown', 'invalid front matter');
    }
    body = body.slice(fm[0].length);
  }
  const h = /^\s*#\s+(.+?)\s*#*\s*(\r?\n|$)/.exec(body);
  let heading: string | undefined;
  if (h) {
    heading = h[1].trim();
    body = body.slice(h[0].length).replace(/^\s*\n/, '');
  }
  return { markdown: body, meta, heading };
}

export function slugify(title: string): string {
  const s = title
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 100);
  return s || 'untitled';
}

type ChangeOf<Op extends ContentChange['operation']> = Extract<ContentChange, { operation: Op }>;

type InsertedFile = { id: string; name: string; contentType: string; size: number; width: number | null; height: number | null };

/**
 * The base revision's page tree as a batch sees it: the base's trie (read only where a change
 * looks) under the batch's changes (page id → its new entry, null: removed). Nothing is cloned:
 * a one-page edit reads that page's path and, for a slug check or a move, its siblings.
 */
class DraftTree {
  /** Page id → its entry after the batch's changes so far (null: removed). */
  readonly changes = new Map<string, TreeEntry | null>();
  private readonly base = new Map<string, TreeEntry | null>();
  private readonly baseChildren = new Map<string | null, Array<{ pageId: string; pos: string }>>();

  constructor(
    readonly session: TreeSession,
    readonly root: string | null,
  ) {}

  /** Reads the base entries of `pageIds` not known yet (one statement for all). */
  async load(pageIds: string[]) {
    const want = [...new Set(pageIds)].filter((id) => !this.changes.has(id) && !this.base.has(id));
    if (want.length === 0) return;
    const found = await this.session.lookup(this.root, want);
    for (const id of want) this.base.set(id, found.get(id) ?? null);
  }

  /** A page's entry now (null: not in the tree); `load` it first. */
  get(pageId: string): TreeEntry | null {
    if (this.changes.has(pageId)) return this.changes.get(pageId)!;
    const e = this.base.get(pageId);
    if (e === undefined) throw new Error(`page ${pageId} was not loaded`);
    return e;
  }

  async entry(pageId: string): Promise<TreeEntry | null> {
    await this.load([pageId]);
    return this.get(pageId);
  }

  set(pageId: string, entry: TreeEntry | null) {
    this.changes.set(pageId, entry);
  }

  /** The children of `parent` (null: the top level) now, in order. */
  async children(parent: string | null): Promise<Array<{ pageId: string; pos: string }>> {
    await this.loadChildren([parent]);
    return this.childrenNow(parent);
  }

  private async loadChildren(parents: Array<string | null>) {
    const want = [...new Set(parents)].filter((p) => !this.baseChildren.has(p));
    if (want.length === 0) return;
    await this.session.preload(this.root, [], want);
    for (const p of want) this.baseChildren.set(p, await this.session.children(this.root, p));
  }

  private childrenNow(parent: string | null) {
    const out: Array<{ pageId: string; pos: string }> = [];
    for (const k of this.baseChildren.get(parent)!) if (!this.changes.has(k.pageId)) out.push(k);
    for (const [pageId, e] of this.changes) if (e && e.parent === parent) out.push({ pageId, pos: e.pos });
    return out.sort((a, b) => (a.pos < b.pos ? -1 : a.pos > b.pos ? 1 : a.pageId < b.pageId ? -1 : a.pageId > b.pageId ? 1 : 0));
  }

  /** `pageId`'s descendants now, one statement per level of the page tree. */
  async descendants(pageId: string): Promise<string[]> {
    const out: string[] = [];
    const seen = new Set([pageId]);
    let level = [pageId];
    while (level.length) {
      await this.loadChildren(level);
      const next: string[] = [];
      for (const p of level) for (const c of this.childrenNow(p)) if (!seen.has(c.pageId)) seen.add(c.pageId), next.push(c.pageId);
      out.push(...next);
      level = next;
    }
    return out;
  }

  /** Whether `pageId` is `ancestor` or sits under it (one lookup per level walked up). */
  async isWithin(pageId: string, ancestor: string): Promise<boolean> {
    const seen = new Set<string>();
    for (let x: string | null = pageId; x !== null && !seen.has(x); x = (await this.entry(x))?.parent ?? null) {
      if (x === ancestor) return true;
      seen.add(x);
    }
    return false;
  }

  /** The batch's changes, for writeTree. */
  treeChanges(): TreeChange[] {
    return [...this.changes].map(([pageId, entry]) => ({ pageId, entry }));
  }

  /** The `byParent` places the write rewrites (old and new parents of the changed pages). */
  placesTouched(): Array<{ pageId: string; parent: string | null }> {
    const out: Array<{ pageId: string; parent: string | null }> = [];
    for (const [pageId, e] of this.changes) {
      const b = this.base.get(pageId);
      if (b && e && b.parent === e.parent && b.pos === e.pos) continue; // a new version only: `byParent` is not rewritten
      if (b) out.push({ pageId, parent: b.parent });
      if (e && (!b || b.parent !== e.parent)) out.push({ pageId, parent: e.parent });
    }
    return out;
  }
}

/** A sort key between two neighbours' keys (null: an end); keys out of order fall back to after `before`. */
function keyBetween(before: string | null, after: string | null): string {
  if (before !== null && after !== null && before >= after) return positionBetween(before, null);
  return positionBetween(before, after);
}

/**
 * The revision a batch is building. Each operation edits it in place; `applyChanges` writes it
 * once, after the last change, so an invalid change leaves nothing written.
 */
type RevisionDraft = {
  tx: Tx;
  spaceId: string;
  /** The new revision's page tree: the base's under the batch's changes. */
  tree: DraftTree;
  /** Page versions the batch read whole (the pages it edits or reverts) and the new ones. */
  versions: Map<string, StoredPageVersion>;
  /** Slug and kind of versions the batch looked at (siblings, parents), by version id. */
  meta: Map<string, { slug: string; kind: string }>;
  /** The PageVersion rows to write. */
  newVersions: Prisma.PageVersionCreateManyInput[];
  /** New version id → the input field its content came from (named when it does not parse). */
  fields: Map<string, string>;
  /** `changes.<i>.document` → the markdown of that change's JSON document, converted up front. */
  converted: Map<string, string>;
  /** Batch-local ref → /pages/<id> or /files/<id>. */
  refs: Map<string, string>;
  /** The new revision's files: the base's, then the inserted ones. */
  fileIds: string[];
  insertedFiles: InsertedFile[];
  /** By page id; a later change of the same page replaces the outcome (an update keeps it). */
  outcomes: Map<string, ChangeOutcome>;
  now: Date;
};

/** The columns of a base revision a batch reads (not its page list). */
const BASE_OMIT = { tree: true } as const;

/**
 * A revision's tree root; a revision written before trees were stored gets it now (from its JSON
 * tree, as the backfill would), so the batch can read it by path.
 */
async function treeRootOf(tx: Tx, revision: { id: string; treeRoot: string | null }): Promise<string> {
  if (revision.treeRoot) return revision.treeRoot;
  const row = await tx.revision.findUnique({ where: { id: revision.id }, select: { tree: true } });
  const root = (await writeWholeTree(tx, Array.isArray(row?.tree) ? (row.tree as unknown as TreeNode[]) : [])).root;
  await tx.$executeRaw`UPDATE "Revision" SET "treeRoot" = ${root} WHERE "id" = ${revision.id} AND "treeRoot" IS NULL`;
  return root;
}

/** The whole rows (markdown, not what it parsed to) of the versions `ids` not read yet. */
async function loadVersions(draft: RevisionDraft, ids: string[]) {
  const want = [...new Set(ids)].filter((id) => !draft.versions.has(id));
  if (want.length === 0) return;
  const rows = await draft.tx.pageVersion.findMany({ where: { id: { in: want } }, omit: { document: true, links: true } });
  for (const r of rows) {
    draft.versions.set(r.id, r);
    draft.meta.set(r.id, { slug: r.slug, kind: r.kind });
  }
}

/** Slug and kind of the versions `ids` not known yet (one statement, no bodies). */
async function loadMeta(draft: RevisionDraft, ids: string[]) {
  const want = [...new Set(ids)].filter((id) => !draft.meta.has(id));
  if (want.length === 0) return;
  const rows = await draft.tx.pageVersion.findMany({ where: { id: { in: want } }, select: { id: true, slug: true, kind: true } });
  for (const r of rows) draft.meta.set(r.id, { slug: r.slug, kind: r.kind });
}

/**
 * Apply a batch to `baseRevisionId` and write the resulting revision. Runs inside the caller's
 * transaction; any invalid change throws a 400 naming `changes.<i>.<field>` and nothing is
 * written. Reads only the pages the batch names (their paths in the base's tree, their version
 * rows) and, for inserts, moves and slug checks, the siblings concerned; writes only the tree
 * nodes on the changed pages' paths.
 */
export async function applyChanges(tx: Tx, opts: ApplyChangesOptions) {
  const { changes } = parseInput(ContentChangesInput, { changes: opts.changes });
  const baseRevision = await tx.revision.findUnique({ where: { id: opts.baseRevisionId }, omit: BASE_OMIT });
  if (!baseRevision || baseRevision.spaceId !== opts.spaceId) throw notFound('Revision');
  const baseRoot = await treeRootOf(tx, baseRevision);
  const ids = assignBatchIds(changes);
  const session = new TreeSession(tx);
  const draft: RevisionDraft = {
    tx,
    spaceId: opts.spaceId,
    tree: new DraftTree(session, baseRoot),
    versions: new Map(),
    meta: new Map(),
    newVersions: [],
    fields: new Map(),
    converted: await convertDocuments(changes),
    refs: ids.refs,
    fileIds: [...baseRevision.fileIds],
    insertedFiles: [],
    outcomes: new Map(),
    now: new Date(),
  };
  const revertTo = opts.revertTargetRevisionId ?? baseRevision.parents[0];

  // Every page the batch names, read in one statement (their paths in the base's tree).
  const named = changes.flatMap((c) => ('page' in c ? [c.page] : []).concat('into' in c && c.into ? [c.into] : []));
  await draft.tree.load(named);
  await loadVersions(
    draft,
    changes.flatMap((c) => (c.operation === 'update_page' ? [draft.tree.get(c.page)?.v ?? ''] : [])).filter(Boolean),
  );

  for (let i = 0; i < changes.length; i++) {
    const c = changes[i];
    const at = `changes.${i}`;
    switch (c.operation) {
      case 'insert_page':
        await insertPage(draft, c, at, ids.pageIds.get(i)!);
        break;
      case 'update_page':
        await updatePage(draft, c, at);
        break;
      case 'delete_page':
        await deletePage(draft, c, at);
        break;
      case 'revert_page':
        await revertPage(tx, draft, c, at, revertTo);
        break;
      case 'insert_files':
        await insertFiles(tx, draft, c, at, ids.fileIds.get(i)!, opts);
        break;
    }
  }

  // The nodes the write rewrites, read in one statement, then only the new nodes written.
  const treeChanges = draft.tree.treeChanges();
  await session.preload(
    baseRoot,
    treeChanges.map((c) => c.pageId),
    [],
    draft.tree.placesTouched(),
  );
  const { root } = await session.write(baseRoot, treeChanges);
  // A batch that changes nothing (no new version, file or place) writes nothing: the base is the answer.
  if (root === baseRoot && !draft.newVersions.length && !draft.insertedFiles.length) {
    return { revision: baseRevision as Revision, changed: false, outcomes: [...draft.outcomes.values()], insertedFiles: draft.insertedFiles };
  }
  // Content the batch sends is refused when it does not parse in time; a version whose text the
  // batch did not touch (a rename of a page written before parsing at write time) is stored unparsed.
  await insertPageVersions(tx, draft.newVersions, { fields: draft.fields, unparsable: 'store' });
  const revision = await writeRevision(tx, {
    spaceId: opts.spaceId,
    parents: [opts.baseRevisionId],
    type: 'edits',
    treeRoot: root,
    fileIds: draft.fileIds,
    changeRequestId: opts.changeRequestId,
    createdById: opts.createdById,
    variables: baseRevision.variables as Prisma.InputJsonValue,
    reusableContents: baseRevision.reusableContents as Prisma.InputJsonValue,
  });
  return { revision, changed: true, outcomes: [...draft.outcomes.values()], insertedFiles: draft.insertedFiles };
}

/**
 * Refs may be used by any change of the batch, whatever the order: the ids of inserted pages
 * (by change index) and files (by change index, one per file) are assigned before any change
 * is applied.
 */
function assignBatchIds(changes: ContentChange[]) {
  const refs = new Map<string, string>();
  const pageIds = new Map<number, string>();
  changes.forEach((c, i) => {
    if (c.operation === 'insert_page') {
      const id = newId('Page');
      pageIds.set(i, id);
      if (c.ref) {
        if (refs.has(c.ref)) throw badRequest(`changes.${i}.ref`, 'must be unique in the batch');
        refs.set(c.ref, `/pages/${id}`);
      }
    }
  });
  const fileIds = new Map<number, string[]>();
  changes.forEach((c, i) => {
    if (c.operation === 'insert_files') {
      fileIds.set(
        i,
        c.files.map((f, j) => {
          const id = newId('File');
          if (f.ref) {
            if (refs.has(f.ref)) throw badRequest(`changes.${i}.files.${j}.ref`, 'must be unique in the batch');
            refs.set(f.ref, `/files/${id}`);
          }
          return id;
        }),
      );
    }
  });
  return { refs, pageIds, fileIds };
}

async function insertPage(draft: RevisionDraft, c: ChangeOf<'insert_page'>, at: string, pageId: string) {
  const parent = await parentFor(draft, c.into, `${at}.into`);
  const siblings = await draft.tree.children(parent);
  const doc = documentMarkdown(draft, c.document, `${at}.document`);
  const title = String(doc.meta.title ?? doc.heading ?? c.title ?? 'Untitled').slice(0, 256);
  const slug = await uniqueSlug(draft, parent, c.slug ?? slugify(title), c.slug !== undefined, `${at}.slug`);
  const kind = c.type ?? 'document';
  if (kind === 'link' && !c.href) throw badRequest(`${at}.href`, 'required for link pages');
  if (kind === 'group' && c.into != null) throw badRequest(`${at}.into`, 'group pages live at the root of the page tree');
  const v = addVersion(draft, {
    pageId,
    kind,
    title,
    slug,
    emoji: c.emoji || null,
    icon: c.icon || null,
    description: (doc.meta.description as string | undefined) ?? c.description ?? null,
    markdown: kind === 'document' ? (doc.markdown ?? '') : '',
    href: kind === 'link' ? c.href : null,
    hidden: c.hidden ?? false,
    noIndex: c.noIndex ?? false,
    noRobotsIndex: c.noRobotsIndex ?? false,
    condition: c.condition || null,
    pageCreatedAt: draft.now,
  });
  draft.fields.set(v, contentField(c.document, at));
  const index = c.at !== undefined && c.at < siblings.length ? c.at : siblings.length;
  draft.tree.set(pageId, { v, parent, pos: keyBetween(siblings[index - 1]?.pos ?? null, siblings[index]?.pos ?? null) });
  draft.outcomes.set(pageId, { object: 'created_page', pageId, ...(c.ref ? { ref: c.ref } : {}) });
}

/** Moves and edits a page; a new version is written only when a field of the page changes. */
async function updatePage(draft: RevisionDraft, c: ChangeOf<'update_page'>, at: string) {
  const found = await draft.tree.entry(c.page);
  if (!found) throw badRequest(`${at}.page`, `no page ${c.page} in this revision`);
  await loadVersions(draft, [found.v]);
  const current = draft.versions.get(found.v)!;
  const doc = c.document ? documentMarkdown(draft, c.document, `${at}.document`) : { meta: {} as Record<string, unknown> };
  const title = String(doc.meta.title ?? ('heading' in doc ? doc.heading : undefined) ?? c.title ?? current.title).slice(0, 256);
  // Move first, so the slug check sees the new siblings.
  let parent = found.parent;
  let pos = found.pos;
  const moving = c.into !== undefined || c.at !== undefined;
  if (moving) {
    if (c.into != null && (await draft.tree.isWithin(c.into, c.page))) throw badRequest(`${at}.into`, 'cannot move a page into itself or its descendants');
    if (c.into != null && current.kind === 'group') throw badRequest(`${at}.into`, 'group pages live at the root of the page tree');
    const from = await draft.tree.children(found.parent);
    const oldIndex = from.findIndex((s) => s.pageId === c.page);
    const targetParent = c.into === undefined ? found.parent : await parentFor(draft, c.into, `${at}.into`);
    const target = (await draft.tree.children(targetParent)).filter((s) => s.pageId !== c.page);
    const same = targetParent === found.parent;
    const index = c.at !== undefined ? Math.min(c.at, target.length) : same ? oldIndex : target.length;
    if (!same || index !== oldIndex) pos = keyBetween(target[index - 1]?.pos ?? null, target[index]?.pos ?? null);
    parent = targetParent;
  }
  const slugChanged = c.slug !== undefined || (c.title !== undefined && c.title !== current.title);
  // An unmoved page keeping its slug needs no check of its siblings.
  let slug = current.slug;
  if (slugChanged || moving) {
    slug = slugChanged
      ? await uniqueSlug(draft, parent, c.slug ?? slugify(title), c.slug !== undefined, `${at}.slug`, c.page)
      : await uniqueSlug(draft, parent, current.slug, false, `${at}.slug`, c.page);
  }
  const next = {
    title,
    slug,
    emoji: c.emoji !== undefined ? c.emoji || null : current.emoji,
    icon: c.icon !== undefined ? c.icon || null : current.icon,
    description: (doc.meta.description as string | undefined) ?? (c.description !== undefined ? c.description : current.description),
    markdown: 'markdown' in doc && doc.markdown !== undefined ? doc.markdown : current.markdown,
    hidden: c.hidden ?? current.hidden,
    noIndex: c.noIndex ?? current.noIndex,
    noRobotsIndex: c.noRobotsIndex ?? current.noRobotsIndex,
    condition: c.condition !== undefined ? c.condition || null : current.condition,
  };
  const changed = (Object.keys(next) as Array<keyof typeof next>).some((k) => next[k] !== current[k]);
  let v = found.v;
  if (changed) {
    v = addVersion(draft, {
      pageId: current.pageId,
      kind: current.kind,
      href: current.href,
      layout: (current.layout ?? undefined) as Prisma.InputJsonValue | undefined,
      pageCreatedAt: current.pageCreatedAt,
      ...next,
    });
    if (c.document) draft.fields.set(v, contentField(c.document, at));
  }
  if (v !== found.v || parent !== found.parent || pos !== found.pos) draft.tree.set(c.page, { v, parent, pos });
  if (!draft.outcomes.has(c.page)) draft.outcomes.set(c.page, { object: 'updated_page', pageId: c.page });
}

/** Removes the page and its descendants from the tree. */
async function removeWithDescendants(draft: RevisionDraft, pageId: string) {
  for (const id of await draft.tree.descendants(pageId)) draft.tree.set(id, null);
  draft.tree.set(pageId, null);
}

/** Removes the page and, with it, its descendants from the tree. */
async function deletePage(draft: RevisionDraft, c: ChangeOf<'delete_page'>, at: string) {
  const found = await draft.tree.entry(c.page);
  if (!found) throw badRequest(`${at}.page`, `no page ${c.page} in this revision`);
  await removeWithDescendants(draft, c.page);
  draft.outcomes.set(c.page, { object: 'deleted_page', pageId: c.page });
}

/**
 * Puts back the page's version from `c.revision`, else from `defaultTarget` (a change request's
 * base, or the base revision's parent): reuses that version row, deletes the page if the target
 * has none, restores it if the draft has none.
 */
async function revertPage(tx: Tx, draft: RevisionDraft, c: ChangeOf<'revert_page'>, at: string, defaultTarget: string | undefined) {
  if (c.block) throw new AppError('BAD_REQUEST', `${at}.block: reverting individual blocks is not supported; revert the whole page`, `${at}.block`);
  const targetId = c.revision ?? defaultTarget;
  if (!targetId) throw badRequest(`${at}.revision`, 'nothing to revert to');
  const target = await tx.revision.findUnique({ where: { id: targetId }, select: { id: true, spaceId: true, treeRoot: true } });
  if (!target) throw notFound('Revision');
  if (target.spaceId !== draft.spaceId) throw badRequest(`${at}.revision`, 'not a revision of this space');
  const targetRoot = await treeRootOf(tx, target);
  const before = (await draft.tree.session.lookup(targetRoot, [c.page])).get(c.page);
  const current = await draft.tree.entry(c.page);
  if (!before && !current) throw badRequest(`${at}.page`, `no page ${c.page} here or in the target revision`);
  if (!before) {
    await removeWithDescendants(draft, c.page);
    draft.outcomes.set(c.page, { object: 'deleted_page', pageId: c.page });
    return;
  }
  await loadVersions(draft, [before.v]);
  if (current) {
    draft.tree.set(c.page, { ...current, v: before.v });
    draft.outcomes.set(c.page, { object: 'updated_page', pageId: c.page });
  } else {
    // Restore under its old parent when that parent still exists, else at the root, at its old index.
    const targetSiblings = await draft.tree.session.children(targetRoot, before.parent);
    const index0 = targetSiblings.findIndex((s) => s.pageId === c.page);
    const parent = before.parent !== null && (await draft.tree.entry(before.parent)) ? before.parent : null;
    const siblings = await draft.tree.children(parent);
    const index = Math.min(index0 >= 0 ? index0 : siblings.length, siblings.length);
    draft.tree.set(c.page, { v: before.v, parent, pos: keyBetween(siblings[index - 1]?.pos ?? null, siblings[index]?.pos ?? null) });
    draft.outcomes.set(c.page, { object: 'created_page', pageId: c.page });
  }
}

/** Stores each file (base64 or fetched from its URL) and writes its File row, one by one. */
async function insertFiles(
  tx: Tx,
  draft: RevisionDraft,
  c: ChangeOf<'insert_files'>,
  at: string,
  fileIds: string[],
  io: Pick<ApplyChangesOptions, 'storage' | 'fetchFile'>,
) {
  for (let j = 0; j < c.files.length; j++) {
    const f = c.files[j];
    const field = `${at}.files.${j}`;
    if ((f.url ? 1 : 0) + (f.base64 ? 1 : 0) !== 1) throw badRequest(field, 'set exactly one of url or base64');
    let data: Buffer;
    let contentType = f.contentType;
    if (f.base64 !== undefined) {
      if (!contentType) throw badRequest(`${field}.contentType`, 'required with base64');
      data = Buffer.from(f.base64, 'base64');
      if (data.length > 1024 * 1024) throw badRequest(`${field}.base64`, 'at most 1 MB');
    } else {
      if (!io.fetchFile) throw badRequest(`${field}.url`, 'fetching files is not available here');
      try {
        const fetched = await io.fetchFile(f.url!);
        data = fetched.body;
        contentType ??= fetched.contentType;
      } catch (e) {
        throw badRequest(`${field}.url`, (e as Error).message);
      }
    }
    const id = fileIds[j];
    const storageKey = `files/${draft.spaceId}/${id}`;
    await io.storage.put(storageKey, data, contentType ?? 'application/octet-stream');
    const dims = imageDimensions(data);
    await tx.file.create({
      data: { id, spaceId: draft.spaceId, name: f.name, contentType: contentType ?? 'application/octet-stream', size: data.length, storageKey, width: dims?.width ?? null, height: dims?.height ?? null },
    });
    draft.fileIds.push(id);
    draft.insertedFiles.push({ id, name: f.name, contentType: contentType ?? 'application/octet-stream', size: data.length, width: dims?.width ?? null, height: dims?.height ?? null });
  }
}

// ------------------------------------------------------------------ helpers of the operations

/** Points `](./ref)` and `](./ref.md)` links at the pages and files the batch inserts. */
function resolveRefs(draft: RevisionDraft, markdown: string) {
  return draft.refs.size === 0
    ? markdown
    : markdown.replace(/\]\(\.\/([^)\s]+?)(\.md)?\)/g, (whole, ref: string) => {
        const target = draft.refs.get(ref);
        return target ? `](${target})` : whole;
      });
}

/** Slugs asked about by the first statement (`wanted`, `wanted-2` … `wanted-16`); each next one asks twice as many. */
const SLUG_PROBE = 16;

/**
 * `wanted`, or (unless the caller chose it) `wanted-2`, `wanted-3`… when a sibling (a page under
 * `parent` in the draft, other than `selfId`) has it. The sibling list is not read: the pages
 * that ever had one of the probed slugs in this space (an index on "PageVersion" (spaceId, slug))
 * and the pages the batch placed under `parent` are the only candidates, and each is looked up
 * in the draft's tree (its parent, and its version's slug now). So a check costs what the slug
 * matches, not the number of siblings (a flat space's top level of 50,000 pages).
 */
async function uniqueSlug(draft: RevisionDraft, parent: string | null, wanted: string, explicit: boolean, field: string, selfId?: string) {
  // Doubling: `page` among siblings `page-2` … `page-3000` takes 8 rounds, not 188.
  for (let n = 1, size = SLUG_PROBE; ; n += size, size *= 2) {
    const probe = Array.from({ length: size }, (_, k) => n + k).map((k) => (k === 1 ? wanted : `${wanted}-${k}`));
    const taken = await slugsTaken(draft, parent, probe, selfId);
    if (n === 1) {
      if (!taken.has(wanted)) return wanted;
      if (explicit) throw badRequest(field, `slug "${wanted}" is already used by a sibling page`);
    }
    for (const s of probe) if (s !== wanted && !taken.has(s)) return s;
  }
}

/** Which of `slugs` a page under `parent` in the draft (other than `selfId`) has now. */
async function slugsTaken(draft: RevisionDraft, parent: string | null, slugs: string[], selfId?: string): Promise<Set<string>> {
  const rows = await draft.tx.$queryRaw<Array<{ pageId: string }>>`
    SELECT DISTINCT "pageId" FROM "PageVersion" WHERE "spaceId" = ${draft.spaceId} AND "slug" = ANY(${slugs}::text[])`;
  const candidates = new Set(rows.map((r) => r.pageId));
  // Versions the batch adds are not stored yet: the pages it changed are candidates too.
  for (const [pageId, e] of draft.tree.changes) if (e && e.parent === parent) candidates.add(pageId);
  if (selfId) candidates.delete(selfId);
  await draft.tree.load([...candidates]);
  const versions = [...candidates].map((id) => draft.tree.get(id)).filter((e): e is TreeEntry => !!e && e.parent === parent).map((e) => e.v);
  await loadMeta(draft, versions);
  const wanted = new Set(slugs);
  return new Set(versions.map((v) => draft.meta.get(v)?.slug).filter((s): s is string => s !== undefined && wanted.has(s)));
}

/** Adds a new page version to the draft (written at the end) and returns its id. */
function addVersion(draft: RevisionDraft, page: PageDraft) {
  const id = newId('PageVersion');
  const row: Prisma.PageVersionCreateManyInput = { ...page, id, spaceId: draft.spaceId };
  draft.newVersions.push(row);
  draft.versions.set(id, { ...(row as unknown as StoredPageVersion), createdAt: draft.now, pageCreatedAt: (row.pageCreatedAt as Date) ?? draft.now });
  draft.meta.set(id, { slug: page.slug, kind: page.kind ?? 'document' });
  return id;
}

/** The parent a page goes under: null (the root), or page `into`, which must exist and not be a link. */
async function parentFor(draft: RevisionDraft, into: string | null | undefined, field: string): Promise<string | null> {
  if (into == null) return null;
  const parent = await draft.tree.entry(into);
  if (!parent) throw badRequest(field, `no page ${into} in this revision`);
  await loadMeta(draft, [parent.v]);
  if (draft.meta.get(parent.v)?.kind === 'link') throw badRequest(field, 'a link page cannot have children');
  return into;
}

function documentMarkdown(
  draft: RevisionDraft,
  doc: z.infer<typeof DocumentInput>,
  field: string,
): { markdown?: string; meta: Record<string, unknown>; heading?: string } {
  if ('markdown' in doc) return readMarkdownDocument(resolveRefs(draft, doc.markdown));
  if ('document' in doc) return { markdown: resolveRefs(draft, draft.converted.get(field) ?? ''), meta: {} };
  return { markdown: '', meta: {} };
}

/** The input field a change's content came from: `changes.<i>.document.markdown` (or `.document`). */
function contentField(doc: z.infer<typeof DocumentInput>, at: string) {
  return 'markdown' in doc ? `${at}.document.markdown` : 'document' in doc ? `${at}.document.document` : `${at}.document`;
}

/**
 * JSON documents are converted to markdown, the stored form (see lib/markdown.ts), in the
 * parsing pool and before any change is applied (the conversion recurses over untrusted input).
 */
async function convertDocuments(changes: ContentChange[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  await Promise.all(
    changes.map(async (c, i) => {
      const doc = 'document' in c ? c.document : undefined;
      if (!doc || !('document' in doc)) return;
      const field = `changes.${i}.document.document`;
      try {
        out.set(`changes.${i}.document`, await documentToMarkdownInPool(doc.document));
      } catch (e) {
        if (e instanceof InvalidDocumentError) throw badRequest(field, `invalid document: ${e.message}`);
        throw refusalError(e, field);
      }
    }),
  );
  return out;
}

/** Width and height of a PNG, GIF, JPEG or WebP image from its header; undefined otherwise. */
export function imageDimensions(buf: Buffer): { width: number; height: number } | undefined {
  if (buf.length >= 24 && buf.readUInt32BE(0) === 0x89504e47 && buf.toString('ascii', 12, 16) === 'IHDR') {
    return { width: buf.readUInt32BE(16), height: buf.readUInt32BE(20) };
  }
  if (buf.length >= 10 && buf.toString('ascii', 0, 3) === 'GIF') {
    return { width: buf.readUInt16LE(6), height: buf.readUInt16LE(8) };
  }
  if (buf.length >= 30 && buf.toString('ascii', 0, 4) === 'RIFF' && buf.toString('ascii', 8, 12) === 'WEBP') {
    const chunk = buf.toString('ascii', 12, 16);
    if (chunk === 'VP8X') return { width: 1 + buf.readUIntLE(24, 3), height: 1 + buf.readUIntLE(27, 3) };
    if (chunk === 'VP8 ') return { width: buf.readUInt16LE(26) & 0x3fff, height: buf.readUInt16LE(28) & 0x3fff };
    if (chunk === 'VP8L') {
      const b = buf.readUInt32LE(21);
      return { width: 1 + (b & 0x3fff), height: 1 + ((b >> 14) & 0x3fff) };
    }
    return undefined;
  }
  if (buf.length >= 4 && buf[0] === 0xff && buf[1] === 0xd8) {
    let i = 2;
    while (i + 9 < buf.length) {
      if (buf[i] !== 0xff) return undefined;
      const marker = buf[i + 1];
      if (marker === 0xd8 || (marker >= 0xd0 && marker <= 0xd7) || marker === 0x01) {
        i += 2;
        continue;
      }
      const len = buf.readUInt16BE(i + 2);
      // SOF0–SOF15, except DHT (C4), JPG (C8) and DAC (CC).
      if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
        return { width: buf.readUInt16BE(i + 7), height: buf.readUInt16BE(i + 5) };
      }
      i += 2 + len;
    }
  }
  return undefined;
}
