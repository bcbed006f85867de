// Benchmark data generator: a realistic documentation organization, written with bulk SQL
// (multi-row INSERTs through `pg`, one transaction), never one request per row.
//
// Shape per scale (see SCALES): one organization with members, teams, nested collections,
// spaces whose current Revision points at their pages (tree JSON + flat pageVersionIds +
// immutable PageVersion rows with realistic markdown: headings, lists, code, links between
// pages as `/pages/<id>`, images as `/files/<id>` and external URLs), change requests with their
// own head revisions, comments with replies and reactions, and published sites with section
// groups, sections and site spaces. Ids come from the project's `newId()`.
//
// The random choices are seeded (mulberry32), so two runs at one scale have the same shape and
// the same text; only the ids differ.
//
// Standalone: `DATABASE_URL=… tsx bench/seed.ts --scale small` (the database must be migrated
// and empty).
import pg from 'pg';
import { newId } from '../src/lib/ids.ts';
import { hashToken } from '../src/auth/tokens.ts';
import { splitSections } from '../src/lib/markdown.ts';
import { createPrisma } from '../src/db/client.ts';
import { backfillRevisionTrees } from '../src/domain/revision-tree.ts';

export type Scale = 'small' | 'medium' | 'large';

export type ScaleSpec = {
  members: number;
  teams: number;
  collections: number;
  spaces: number;
  pages: number;
  changeRequests: number;
  comments: number;
  sites: number;
  groupsPerSite: number;
  sectionsPerSite: number;
  siteSpacesPerSite: number;
};

// medium is the issue's minimum; small is about a tenth of it (sites shrink too, so statement
// counts per request can be compared between scales); large is five times medium with sites
// twice as big.
export const SCALES: Record<Scale, ScaleSpec> = {
  small: { members: 30, teams: 3, collections: 12, spaces: 100, pages: 2_000, changeRequests: 200, comments: 2_000, sites: 5, groupsPerSite: 2, sectionsPerSite: 5, siteSpacesPerSite: 20 },
  medium: { members: 300, teams: 30, collections: 120, spaces: 1_000, pages: 20_000, changeRequests: 2_000, comments: 20_000, sites: 50, groupsPerSite: 3, sectionsPerSite: 10, siteSpacesPerSite: 100 },
  large: { members: 1_500, teams: 150, collections: 600, spaces: 5_000, pages: 100_000, changeRequests: 10_000, comments: 100_000, sites: 100, groupsPerSite: 5, sectionsPerSite: 20, siteSpacesPerSite: 200 },
};

/** Words the search scenario looks for: one in ~40% of pages, one in a handful. */
export const COMMON_WORD = 'configuration';
export const RARE_WORD = 'zanzibar';

/** What the scenarios need to know about the seeded data. */
export type Fixture = {
  scale: Scale;
  spec: ScaleSpec;
  /** Organization admin's token (most scenarios). */
  adminToken: string;
  /** A member with role `edit`, in two teams (permissions computed from grants). */
  memberToken: string;
  organizationId: string;
  adminUserId: string;
  /** The site of scenario 1 and `GET SITE/published`. */
  siteId: string;
  siteSpaceCount: number;
  /** A collection holding about 12% of the spaces. */
  bigCollectionId: string;
  bigCollectionSpaces: number;
  /** A typical space (GET /v1/spaces/{id}). */
  spaceId: string;
  /** A space with 150+ open comments on the space itself. */
  commentSpaceId: string;
  /** Spaces the write path edits, each with 5 document pages to update. */
  writeSpaces: Array<{ spaceId: string; pageIds: string[] }>;
  commonWord: string;
  rareWord: string;
  rarePages: number;
  counts: Record<string, number>;
  seconds: number;
};

// ------------------------------------------------------------------ randomness and text

function mulberry32(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const rand = mulberry32(20261122);
const int = (min: number, max: number) => min + Math.floor(rand() * (max - min + 1));
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)];
const chance = (p: number) => rand() < p;

function sample<T>(xs: readonly T[], n: number): T[] {
  const copy = xs.slice();
  const out: T[] = [];
  for (let i = 0; i < n && copy.length; i++) out.push(copy.splice(Math.floor(rand() * copy.length), 1)[0]);
  return out;
}

const VOCAB = (
  'the a to of and in for is with on that this you your can by from as be are it or an when each ' +
  'api request response token endpoint server client user team member space page site section collection ' +
  'content revision change merge review comment publish draft version release deploy build test install ' +
  'setup guide reference tutorial example option parameter field value default setting environment variable ' +
  'database query index cache schema migration backup restore import export file image link header footer ' +
  'navigation search result filter sort order limit cursor list create update delete read write access role ' +
  'permission admin editor viewer owner invite organization account profile password secret key webhook event ' +
  'integration plugin extension theme layout template markdown block code snippet table column row cell ' +
  'error warning message status retry timeout rate quota usage billing plan upgrade feature flag rollout ' +
  'service worker queue job task schedule trigger pipeline workflow branch commit repository sync git ' +
  'performance latency throughput memory storage network region domain certificate proxy redirect path url ' +
  'customize brand color font icon logo language locale translation audience visitor claim condition'
).split(' ');

const TITLES = [
  'Getting started', 'Quickstart', 'Installation', 'Authentication', 'Configuration', 'Deployment', 'Troubleshooting',
  'API reference', 'Webhooks', 'Rate limits', 'Pagination', 'Errors', 'Changelog', 'Migration guide', 'Security',
  'Permissions', 'Teams and roles', 'Billing', 'Integrations', 'Search', 'Publishing', 'Custom domains', 'Branding',
  'Localization', 'Analytics', 'Import content', 'Export content', 'Git sync', 'Change requests', 'Comments',
  'Variables', 'Reusable content', 'Templates', 'Best practices', 'FAQ', 'Glossary', 'Architecture', 'Data model',
  'Performance tuning', 'Caching', 'Monitoring', 'Backups', 'Release notes', 'Roadmap', 'Contributing', 'Style guide',
];
const SPACE_TOPICS = ['Developer Guide', 'API Docs', 'Product Manual', 'Help Center', 'Handbook', 'Runbook', 'SDK', 'Platform', 'Design System', 'Onboarding'];

function sentence(min = 8, max = 18): string {
  const n = int(min, max);
  const words: string[] = [];
  for (let i = 0; i < n; i++) words.push(pick(VOCAB));
  const s = words.join(' ');
  return s[0].toUpperCase() + s.slice(1) + '.';
}

const paragraph = (extra: string[] = []) => {
  const parts = Array.from({ length: int(2, 5) }, () => sentence());
  for (const e of extra) parts.splice(int(0, parts.length), 0, e);
  return parts.join(' ');
};

function slugify(title: string): string {
  return (
    title
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 100) || 'untitled'
  );
}

type PageRef = { pageId: string; title: string };

/** A page body: sections with headings, paragraphs with links to sibling pages, lists, code, images. */
function markdownFor(opts: { links: PageRef[]; fileIds: string[]; common: boolean; rare: boolean }): string {
  const out: string[] = [];
  const linkText = (p: PageRef) => `see [${p.title}](/pages/${p.pageId})`;
  const links = opts.links.slice();
  out.push(paragraph(opts.common ? [`The ${COMMON_WORD} of this page applies to every space.`] : []));
  const sections = int(2, 5);
  for (let s = 0; s < sections; s++) {
    out.push(`## ${pick(TITLES)}`);
    const extra: string[] = [];
    if (links.length && chance(0.7)) extra.push(linkText(links.pop()!) + '.');
    if (opts.rare && s === 0) extra.push(`The ${RARE_WORD} mode is only used by a few teams.`);
    out.push(paragraph(extra));
    const r = rand();
    if (r < 0.3) {
      out.push(Array.from({ length: int(3, 6) }, () => `- ${sentence(4, 9)}`).join('\n'));
    } else if (r < 0.5) {
      out.push('```bash\n' + `curl -H "Authorization: Bearer $TOKEN" https://api.example.com/v1/${pick(VOCAB)}/${pick(VOCAB)}\n` + '```');
    } else if (r < 0.65) {
      const file = opts.fileIds.length && chance(0.6) ? `/files/${pick(opts.fileIds)}` : `https://images.example.com/${pick(VOCAB)}-${int(1, 999)}.png`;
      out.push(`![${sentence(2, 4).slice(0, -1)}](${file})`);
    } else if (r < 0.75) {
      out.push('| Option | Default | Meaning |\n| --- | --- | --- |\n' + Array.from({ length: int(2, 4) }, () => `| \`${pick(VOCAB)}\` | ${int(0, 100)} | ${sentence(4, 8)} |`).join('\n'));
    }
    if (chance(0.4)) {
      out.push(`### ${pick(TITLES)}`);
      out.push(paragraph(links.length && chance(0.5) ? [linkText(links.pop()!) + '.'] : []));
    }
  }
  if (chance(0.2)) out.push(`External reference: [the platform docs](https://docs.example.com/${pick(VOCAB)}).`);
  return out.join('\n\n') + '\n';
}

// ------------------------------------------------------------------ bulk insert

const ts = (d: Date) => d.toISOString().replace('Z', '');
const NOW = Date.now();
const past = (maxDays: number) => ts(new Date(NOW - Math.floor(rand() * maxDays * 86_400_000)));

/** Multi-row INSERT in chunks that stay under Postgres's 65,535 parameters per statement. */
async function insert(client: pg.ClientBase, table: string, columns: string[], rows: unknown[][], maxParams = 30_000) {
  const per = Math.max(1, Math.floor(maxParams / columns.length));
  const cols = columns.map((c) => `"${c}"`).join(', ');
  for (let i = 0; i < rows.length; i += per) {
    const chunk = rows.slice(i, i + per);
    const params: unknown[] = [];
    const values: string[] = [];
    for (const row of chunk) {
      const ph: string[] = [];
      for (const v of row) {
        params.push(v);
        ph.push(`$${params.length}`);
      }
      values.push(`(${ph.join(', ')})`);
    }
    await client.query(`INSERT INTO "${table}" (${cols}) VALUES ${values.join(', ')}`, params);
  }
  return rows.length;
}

// ------------------------------------------------------------------ the generator

type TreeNode = { id: string; v: string; pages: TreeNode[] };
type SeedPage = { pageId: string; versionId: string; title: string; kind: 'document' | 'group'; parent: SeedPage | null; children: SeedPage[] };
type SeedSpace = {
  id: string;
  title: string;
  parentId: string | null;
  revisionId: string;
  pages: SeedPage[];
  tree: TreeNode[];
  versionIds: string[];
  fileIds: string[];
  crSeq: number;
};

function buildTree(pages: SeedPage[]): TreeNode[] {
  const node = (p: SeedPage): TreeNode => ({ id: p.pageId, v: p.versionId, pages: p.children.map(node) });
  return pages.filter((p) => !p.parent).map(node);
}

function preorder(tree: TreeNode[], out: string[] = []): string[] {
  for (const n of tree) {
    out.push(n.v);
    preorder(n.pages, out);
  }
  return out;
}

/** Split `total` into `n` positive parts around the mean (min..max of the mean ± 75%). */
function spread(total: number, n: number): number[] {
  const mean = total / n;
  const parts = Array.from({ length: n }, () => Math.max(1, Math.round(mean * (0.25 + rand() * 1.5))));
  let diff = total - parts.reduce((a, b) => a + b, 0);
  let i = 0;
  while (diff !== 0) {
    const k = i++ % n;
    if (diff > 0) {
      parts[k]++;
      diff--;
    } else if (parts[k] > 1) {
      parts[k]--;
      diff++;
    }
  }
  return parts;
}

export async function seed(databaseUrl: string, scale: Scale, log: (m: string) => void = () => {}): Promise<Fixture> {
  const spec = SCALES[scale];
  const started = Date.now();
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const counts: Record<string, number> = {};
  const pvColumns = ['id', 'pageId', 'spaceId', 'kind', 'title', 'slug', 'markdown', 'description', 'createdAt', 'pageCreatedAt'];
  const add = async (table: string, columns: string[], rows: unknown[][]) => {
    counts[table] = (counts[table] ?? 0) + (await insert(client, table, columns, rows));
  };
  /** Page versions with their sections, as src/domain/revisions.ts insertPageVersions writes them. */
  const addPageVersions = async (rows: unknown[][]) => {
    await add('PageVersion', pvColumns, rows);
    const markdownAt = pvColumns.indexOf('markdown');
    const sections = rows.flatMap((r) =>
      splitSections(r[markdownAt] as string).map((sec, position) => [r[0], position, sec.id, sec.title, sec.depth, sec.body]),
    );
    await add('PageSection', ['versionId', 'position', 'anchor', 'title', 'depth', 'body'], sections);
  };

  try {
    const existing = await client.query('SELECT count(*)::int AS n FROM "User"');
    if (existing.rows[0].n > 0) throw new Error('seed: the database is not empty');
    await client.query('BEGIN');
    await client.query('SET LOCAL synchronous_commit = off');

    // ---------------------------------------------------------------- identity
    const orgId = newId('Organization');
    await add('Organization', ['id', 'title', 'createdAt', 'plan'], [[orgId, 'Bench Corp', past(400), 'business_2024']]);

    const adminToken = `dg_bench_admin_${newId('ApiToken').slice(4)}`;
    const memberToken = `dg_bench_member_${newId('ApiToken').slice(4)}`;
    const users: Array<{ id: string; role: string | null }> = [];
    const userRows: unknown[][] = [];
    const memberRows: unknown[][] = [];
    for (let i = 0; i < spec.members; i++) {
      const id = newId('User');
      // First user: the admin the benchmark acts as; second: the `edit` member of scenario 2b.
      const role = i === 0 ? 'admin' : i === 1 ? 'edit' : i < 4 ? 'admin' : pick(['read', 'read', 'comment', 'edit', 'edit', 'edit', 'review', 'create', null]);
      users.push({ id, role });
      userRows.push([id, i === 0 ? 'Bench Admin' : `Member ${i}`, i === 0 ? 'admin@bench.local' : `member${i}@bench.local`, past(400)]);
      memberRows.push([newId('Member'), orgId, id, role, past(365), chance(0.7) ? past(30) : null]);
    }
    await add('User', ['id', 'displayName', 'email', 'createdAt'], userRows);
    await add('Member', ['id', 'organizationId', 'userId', 'role', 'joinedAt', 'lastSeenAt'], memberRows);
    await add(
      'ApiToken',
      ['id', 'userId', 'label', 'tokenHash'],
      [
        [newId('ApiToken'), users[0].id, 'bench', hashToken(adminToken)],
        [newId('ApiToken'), users[1].id, 'bench', hashToken(memberToken)],
      ],
    );
    const adminUserId = users[0].id;
    const nonGuests = users.filter((u) => u.role !== null);

    const teams = Array.from({ length: spec.teams }, (_, i) => ({ id: newId('Team'), title: `${pick(SPACE_TOPICS)} team ${i + 1}` }));
    await add('Team', ['id', 'organizationId', 'title', 'createdAt'], teams.map((t) => [t.id, orgId, t.title, past(300)]));
    const teamMemberRows: unknown[][] = [];
    for (const [ti, t] of teams.entries()) {
      const members = new Set(sample(nonGuests, int(5, 15)).map((u) => u.id));
      if (ti < 2) members.add(users[1].id); // the member of scenario 2b is in two teams
      let first = true;
      for (const userId of members) {
        teamMemberRows.push([t.id, userId, first ? 'owner' : 'member', past(200)]);
        first = false;
      }
    }
    await add('TeamMember', ['teamId', 'userId', 'role', 'createdAt'], teamMemberRows);

    // ---------------------------------------------------------------- collections (3 levels)
    type SeedCollection = { id: string; parentId: string | null; ancestorIds: string[]; title: string; nextPosition: number };
    const collections: SeedCollection[] = [];
    const nTop = Math.max(1, Math.round(spec.collections / 4));
    const nSecond = Math.max(1, Math.round(spec.collections / 2));
    for (let i = 0; i < spec.collections; i++) {
      const parent = i < nTop ? null : i < nTop + nSecond ? collections[int(0, nTop - 1)] : collections[int(nTop, nTop + nSecond - 1)];
      collections.push({
        id: newId('Collection'),
        parentId: parent?.id ?? null,
        ancestorIds: parent ? [...parent.ancestorIds, parent.id] : [],
        title: `${pick(SPACE_TOPICS)} ${i + 1}`,
        nextPosition: 0,
      });
    }
    const byId = new Map(collections.map((c) => [c.id, c]));
    let rootPosition = 0;
    const collectionRows = collections.map((c) => {
      const position = c.parentId ? byId.get(c.parentId)!.nextPosition++ : rootPosition++;
      const created = past(365);
      return [c.id, orgId, c.parentId, c.ancestorIds, c.title, chance(0.3) ? sentence(6, 12) : null, chance(0.2) ? 'read' : null, position, created, created];
    });
    await add('Collection', ['id', 'organizationId', 'parentId', 'ancestorIds', 'title', 'description', 'defaultLevel', 'position', 'createdAt', 'updatedAt'], collectionRows);
    // The collection of scenario 3 holds ~12% of the spaces: pick a second-level one.
    const bigCollection = collections[Math.min(collections.length - 1, nTop)];

    // ---------------------------------------------------------------- spaces, pages, revisions
    const pagesPerSpace = spread(spec.pages, spec.spaces);
    const bigShare = Math.max(1, Math.round(spec.spaces * 0.12));
    const rarePages = Math.max(3, Math.round(spec.pages / 2000));
    const rareEvery = Math.floor(spec.pages / rarePages);
    let pageCounter = 0;
    const spaces: SeedSpace[] = [];
    const spaceRows: unknown[][] = [];
    const fileRows: unknown[][] = [];
    let pvRows: unknown[][] = [];
    const flushPages = async (force = false) => {
      if (pvRows.length >= 4000 || (force && pvRows.length)) {
        await addPageVersions(pvRows);
        pvRows = [];
      }
    };

    for (let s = 0; s < spec.spaces; s++) {
      const collection = s < bigShare ? bigCollection : chance(0.85) ? pick(collections) : null;
      const id = newId('Space');
      const title = `${pick(SPACE_TOPICS)} ${s + 1}`;
      const position = collection ? byId.get(collection.id)!.nextPosition++ : rootPosition++;
      const created = past(365);
      const visibility = collection ? pick(['in-collection', 'in-collection', 'in-collection', 'private', 'public']) : pick(['private', 'private', 'public', 'unlisted']);
      spaceRows.push([id, orgId, collection?.id ?? null, collection ? [...collection.ancestorIds, collection.id] : [], title, chance(0.3) ? pick(['📘', '🚀', '🛠️', '📦']) : null, visibility, position, created, created]);

      const fileIds = Array.from({ length: 2 }, () => newId('File'));
      for (const [i, fid] of fileIds.entries()) fileRows.push([fid, id, `diagram-${i + 1}.png`, 'image/png', int(20_000, 400_000), 1200, 800, `bench/${fid}`, created]);

      // The page tree: about a third at the root, the rest under earlier pages, depth <= 3.
      const n = pagesPerSpace[s];
      const pages: SeedPage[] = [];
      const usedSlugs = new Map<SeedPage | null, Set<string>>();
      for (let i = 0; i < n; i++) {
        const candidates = pages.filter((p) => depthOf(p) < 3);
        const parent = i === 0 || chance(0.33) || !candidates.length ? null : pick(candidates);
        const isGroup = !parent && i > 0 && chance(0.08);
        let title = `${pick(TITLES)}${chance(0.5) ? ` ${int(2, 99)}` : ''}`;
        const siblings = usedSlugs.get(parent) ?? new Set<string>();
        usedSlugs.set(parent, siblings);
        let slug = slugify(title);
        for (let k = 2; siblings.has(slug); k++) slug = `${slugify(title)}-${k}`;
        if (slug !== slugify(title)) title = `${title} (${slug.split('-').pop()})`;
        siblings.add(slug);
        const page: SeedPage = { pageId: newId('Page'), versionId: newId('PageVersion'), title, kind: isGroup ? 'group' : 'document', parent, children: [] };
        (page as SeedPage & { slug: string }).slug = slug;
        parent?.children.push(page);
        pages.push(page);
      }
      const refs = pages.map((p) => ({ pageId: p.pageId, title: p.title }));
      for (const p of pages) {
        pageCounter++;
        const markdown =
          p.kind === 'group'
            ? ''
            : markdownFor({
                links: sample(refs.filter((r) => r.pageId !== p.pageId), int(1, 4)),
                fileIds,
                common: chance(0.4),
                rare: pageCounter % rareEvery === 0,
              });
        const pageCreated = past(300);
        pvRows.push([p.versionId, p.pageId, id, p.kind, p.title, (p as SeedPage & { slug: string }).slug, markdown, chance(0.3) ? sentence(6, 14) : null, pageCreated, pageCreated]);
      }
      const tree = buildTree(pages);
      spaces.push({ id, title, parentId: collection?.id ?? null, revisionId: newId('Revision'), pages, tree, versionIds: preorder(tree), fileIds, crSeq: 0 });
      if (spaceRows.length >= 500) {
        await add('Space', ['id', 'organizationId', 'parentId', 'ancestorIds', 'title', 'emoji', 'visibility', 'position', 'createdAt', 'updatedAt'], spaceRows.splice(0));
      }
      // Spaces before their pages (foreign key), so flush pages only after the space rows.
      if (pvRows.length >= 4000) {
        if (spaceRows.length) await add('Space', ['id', 'organizationId', 'parentId', 'ancestorIds', 'title', 'emoji', 'visibility', 'position', 'createdAt', 'updatedAt'], spaceRows.splice(0));
        await flushPages();
      }
    }
    if (spaceRows.length) await add('Space', ['id', 'organizationId', 'parentId', 'ancestorIds', 'title', 'emoji', 'visibility', 'position', 'createdAt', 'updatedAt'], spaceRows.splice(0));
    await flushPages(true);
    await add('File', ['id', 'spaceId', 'name', 'contentType', 'size', 'width', 'height', 'storageKey', 'createdAt'], fileRows);

    const revisionColumns = ['id', 'spaceId', 'parents', 'type', 'tree', 'fileIds', 'changeRequestId', 'createdById', 'createdAt'];
    await add(
      'Revision',
      revisionColumns,
      spaces.map((s) => [s.revisionId, s.id, [], 'edits', JSON.stringify(s.tree), s.fileIds, null, adminUserId, past(60)]),
    );
    await client.query(
      `UPDATE "Space" s SET "revisionId" = v.rid FROM unnest($1::text[], $2::text[]) AS v(sid, rid) WHERE s."id" = v.sid`,
      [spaces.map((s) => s.id), spaces.map((s) => s.revisionId)],
    );

    // ---------------------------------------------------------------- grants
    const grantRows: unknown[][] = [];
    const grantRoles = ['read', 'comment', 'edit', 'review', 'create'];
    for (const c of collections) {
      if (!c.parentId || chance(0.3)) grantRows.push([newId('ContentGrant'), orgId, null, c.id, null, pick(teams).id, pick(grantRoles)]);
    }
    grantRows.push([newId('ContentGrant'), orgId, null, bigCollection.id, null, teams[0].id, 'edit']);
    for (const s of spaces) {
      if (chance(0.2)) grantRows.push([newId('ContentGrant'), orgId, s.id, null, pick(nonGuests).id, null, pick(grantRoles)]);
      if (chance(0.1)) grantRows.push([newId('ContentGrant'), orgId, s.id, null, null, pick(teams).id, pick(grantRoles)]);
    }
    await add('ContentGrant', ['id', 'organizationId', 'spaceId', 'collectionId', 'userId', 'teamId', 'role'], grantRows);

    // ---------------------------------------------------------------- change requests
    // Each change request's head revision is its base with one page rewritten: one new
    // PageVersion and a copied tree index, as the content model writes them.
    const writeSpaces = spaces.filter((s, i) => i >= bigShare && s.pages.filter((p) => p.kind === 'document').length >= 5).slice(0, 8);
    const writeSet = new Set(writeSpaces.map((s) => s.id));
    const commentSpace = spaces.find((s, i) => i >= bigShare && !writeSet.has(s.id) && s.pages.length >= 10) ?? spaces[0];
    const typicalSpace = spaces.find((s) => s !== commentSpace && !writeSet.has(s.id) && s.pages.length >= 15 && s.pages.length <= 30) ?? spaces[0];
    const crSpaces = spaces.filter((s) => !writeSet.has(s.id));
    type SeedCR = { id: string; space: SeedSpace; headRevisionId: string; number: number };
    const crs: SeedCR[] = [];
    const crRows: unknown[][] = [];
    const crRevisionRows: unknown[][] = [];
    let crPvRows: unknown[][] = [];
    for (let i = 0; i < spec.changeRequests; i++) {
      const space = i < 20 ? commentSpace : pick(crSpaces);
      const number = ++space.crSeq;
      const id = newId('ChangeRequest');
      const headRevisionId = newId('Revision');
      const status = pick(['open', 'open', 'open', 'open', 'open', 'open', 'draft', 'draft', 'archived', 'merged']);
      const created = past(120);
      crRows.push([id, space.id, number, status, `${pick(['Update', 'Fix', 'Rewrite', 'Add', 'Document'])} ${pick(TITLES).toLowerCase()}`, pick(nonGuests).id, created, created, space.revisionId, headRevisionId, status === 'merged' ? created : null]);
      const docs = space.pages.filter((p) => p.kind === 'document');
      const changed = pick(docs.length ? docs : space.pages);
      const newVersionId = newId('PageVersion');
      const remap = (nodes: TreeNode[]): TreeNode[] => nodes.map((n) => ({ id: n.id, v: n.id === changed.pageId ? newVersionId : n.v, pages: remap(n.pages) }));
      const tree = remap(space.tree);
      crPvRows.push([newVersionId, changed.pageId, space.id, changed.kind, changed.title, (changed as SeedPage & { slug: string }).slug, markdownFor({ links: [], fileIds: space.fileIds, common: chance(0.4), rare: false }), null, created, created]);
      crRevisionRows.push([headRevisionId, space.id, [space.revisionId], 'edits', JSON.stringify(tree), space.fileIds, id, adminUserId, created]);
      crs.push({ id, space, headRevisionId, number });
    }
    await add('ChangeRequest', ['id', 'spaceId', 'number', 'status', 'subject', 'createdById', 'createdAt', 'updatedAt', 'revisionInitialId', 'revisionId', 'mergedAt'], crRows);
    for (let i = 0; i < crPvRows.length; i += 4000) await addPageVersions(crPvRows.slice(i, i + 4000));
    crPvRows = [];
    await add('Revision', revisionColumns, crRevisionRows);
    await client.query(
      `UPDATE "Space" s SET "changeRequestSeq" = v.seq FROM unnest($1::text[], $2::int[]) AS v(sid, seq) WHERE s."id" = v.sid`,
      [spaces.map((s) => s.id), spaces.map((s) => s.crSeq)],
    );

    // ---------------------------------------------------------------- comments, replies, reactions
    // 150 top-level comments on one space (the REST list scenario), the rest spread over spaces
    // and change requests; about 30% of all entries are replies.
    const commentRows: unknown[][] = [];
    const reactionRows: unknown[][] = [];
    const topLevel: Array<{ id: string; spaceId: string; crId: string | null; revisionId: string }> = [];
    const nTop2 = Math.round(spec.comments * 0.7);
    const body = () => (chance(0.3) ? `${sentence(5, 12)} @${pick(VOCAB)}` : paragraph());
    for (let i = 0; i < nTop2; i++) {
      const onCr = i >= 150 && chance(0.35);
      const cr = onCr ? pick(crs) : null;
      const space = cr ? cr.space : i < 150 ? commentSpace : pick(crSpaces);
      const docs = space.pages.filter((p) => p.kind === 'document');
      const page = docs.length && chance(0.8) ? pick(docs) : null;
      const revisionId = cr ? cr.headRevisionId : space.revisionId;
      const id = newId('Comment');
      const resolved = chance(0.15);
      const posted = past(90);
      commentRows.push([id, space.id, cr?.id ?? null, null, pick(nonGuests).id, body(), page?.pageId ?? null, page?.versionId ?? null, revisionId, resolved ? 'resolved' : 'open', resolved ? posted : null, resolved ? adminUserId : null, posted]);
      topLevel.push({ id, spaceId: space.id, crId: cr?.id ?? null, revisionId });
      if (chance(0.2)) {
        for (const u of sample(nonGuests, int(1, 3))) reactionRows.push([id, u.id, pick(['👍', '🎉', '❤️', '👀']), posted]);
      }
    }
    await add('Comment', ['id', 'spaceId', 'changeRequestId', 'parentId', 'authorId', 'markdown', 'pageId', 'pageVersionId', 'revisionId', 'status', 'resolvedAt', 'resolvedById', 'postedAt'], commentRows);
    const replyRows: unknown[][] = [];
    for (let i = nTop2; i < spec.comments; i++) {
      const parent = i - nTop2 < 150 ? topLevel[(i - nTop2) % 150] : pick(topLevel);
      replyRows.push([newId('CommentReply'), parent.spaceId, parent.crId, parent.id, pick(nonGuests).id, sentence(5, 20), parent.revisionId, past(60)]);
    }
    await add('Comment', ['id', 'spaceId', 'changeRequestId', 'parentId', 'authorId', 'markdown', 'revisionId', 'postedAt'], replyRows);
    await add('Reaction', ['commentId', 'userId', 'emoji', 'createdAt'], reactionRows);

    // ---------------------------------------------------------------- sites
    // Each site: groups at the root, sections spread over the groups, site spaces spread over
    // the sections; published and public.
    const siteRows: unknown[][] = [];
    const groupRows: unknown[][] = [];
    const sectionRows: unknown[][] = [];
    const siteSpaceRows: unknown[][] = [];
    const siteIds: string[] = [];
    for (let si = 0; si < spec.sites; si++) {
      const siteId = newId('Site');
      siteIds.push(siteId);
      const created = past(200);
      const groups = Array.from({ length: spec.groupsPerSite }, (_, g) => ({ id: newId('SiteSectionGroup'), position: g }));
      for (const g of groups) groupRows.push([g.id, siteId, `${pick(['Guides', 'Reference', 'Resources', 'Platform', 'Tools'])} ${g.position + 1}`, g.position, created]);
      const perGroup = spread(spec.sectionsPerSite, groups.length);
      const perSection = spread(spec.siteSpacesPerSite, spec.sectionsPerSite);
      const chosen = sample(spaces, Math.min(spaces.length, spec.siteSpacesPerSite));
      let sectionIndex = 0;
      let spaceIndex = 0;
      let defaultSectionId: string | null = null;
      for (const [gi, g] of groups.entries()) {
        for (let p = 0; p < perGroup[gi]; p++) {
          const sectionId = newId('SiteSection');
          defaultSectionId ??= sectionId;
          const paths = new Set<string>();
          let defaultSiteSpaceId: string | null = null;
          for (let k = 0; k < perSection[sectionIndex]; k++) {
            const space = chosen[spaceIndex++ % chosen.length];
            let path = slugify(space.title);
            for (let n = 2; paths.has(path); n++) path = `${slugify(space.title)}-${n}`;
            paths.add(path);
            const ssId = newId('SiteSpace');
            defaultSiteSpaceId ??= ssId;
            siteSpaceRows.push([ssId, siteId, sectionId, space.id, path, k, created]);
          }
          sectionRows.push([sectionId, siteId, g.id, `${pick(TITLES)} ${sectionIndex + 1}`, chance(0.5) ? sentence(5, 10) : null, `section-${sectionIndex + 1}`, p, defaultSiteSpaceId, created]);
          sectionIndex++;
        }
      }
      siteRows.push([siteId, orgId, 'premium', `${pick(SPACE_TOPICS)} site ${si + 1}`, 'public', `docs-${si + 1}`, true, defaultSectionId, created, created]);
    }
    await add('Site', ['id', 'organizationId', 'type', 'title', 'visibility', 'basename', 'published', 'defaultSiteSectionId', 'createdAt', 'updatedAt'], siteRows);
    await add('SiteSectionGroup', ['id', 'siteId', 'title', 'position', 'createdAt'], groupRows);
    await add('SiteSection', ['id', 'siteId', 'groupId', 'title', 'description', 'path', 'position', 'defaultSiteSpaceId', 'createdAt'], sectionRows);
    await add('SiteSpace', ['id', 'siteId', 'sectionId', 'spaceId', 'path', 'position', 'createdAt'], siteSpaceRows);

    await client.query('COMMIT');
    // Revisions are seeded with their JSON tree; give them the shared tree store every revision
    // written by the server has, so the scenarios measure the store, not the legacy fallback.
    const db = createPrisma(databaseUrl, { poolSize: 2 });
    try {
      await backfillRevisionTrees(db.prisma, { batchSize: 200 });
    } finally {
      await db.disconnect();
    }
    await client.query('ANALYZE');

    const seconds = (Date.now() - started) / 1000;
    log(`seeded ${scale} in ${seconds.toFixed(1)} s: ${Object.entries(counts).map(([k, v]) => `${k} ${v}`).join(', ')}`);
    return {
      scale,
      spec,
      adminToken,
      memberToken,
      organizationId: orgId,
      adminUserId,
      siteId: siteIds[0],
      siteSpaceCount: spec.siteSpacesPerSite,
      bigCollectionId: bigCollection.id,
      bigCollectionSpaces: spaceRowsCount(spaces, bigCollection.id),
      spaceId: typicalSpace.id,
      commentSpaceId: commentSpace.id,
      writeSpaces: writeSpaces.map((s) => ({ spaceId: s.id, pageIds: s.pages.filter((p) => p.kind === 'document').slice(0, 5).map((p) => p.pageId) })),
      commonWord: COMMON_WORD,
      rareWord: RARE_WORD,
      rarePages,
      counts,
      seconds,
    };
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {});
    throw err;
  } finally {
    await client.end();
  }
}

function depthOf(p: SeedPage): number {
  let d = 0;
  for (let q = p.parent; q; q = q.parent) d++;
  return d;
}

function spaceRowsCount(spaces: SeedSpace[], collectionId: string) {
  return spaces.filter((s) => s.parentId === collectionId).length;
}

// Standalone use: DATABASE_URL=… tsx bench/seed.ts --scale small
if (import.meta.url === `file://${process.argv[1]}`) {
  const i = process.argv.indexOf('--scale');
  const scale = (i > 0 ? process.argv[i + 1] : 'small') as Scale;
  if (!process.env.DATABASE_URL) throw new Error('DATABASE_URL is required');
  seed(process.env.DATABASE_URL, scale, console.log)
    .then((f) => console.log(JSON.stringify({ ...f, adminToken: '…', memberToken: '…' }, null, 2)))
    .catch((err) => {
      console.error(err);
      process.exit(1);
    });
}
