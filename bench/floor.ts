// The floor of scenario 1: the same published structure — site, section groups, sections, site
// spaces, each space's current revision with every page (id, title, slug, path, type, parentId,
// depth, pre-order) — fetched by ONE hand-written SQL statement through `pg`, with the JSON
// built by PostgreSQL (json_agg). It is what any gateway would have to pay at least: one round
// trip, the database's work, and parsing the JSON on the client. The gateway's p50 for scenario
// 1 is reported as a ratio to this one's.
import pg from 'pg';

export const FLOOR_SQL = `
WITH RECURSIVE
ss AS (
  SELECT ss."id", ss."sectionId", ss."path", ss."position", sp."id" AS "spaceId", sp."title" AS "spaceTitle",
         r."id" AS "revisionId", r."treeRoot", CASE WHEN r."treeRoot" IS NULL THEN r."tree" END AS "tree"
  FROM "SiteSpace" ss
  JOIN "Space" sp ON sp."id" = ss."spaceId" AND sp."deletedAt" IS NULL
  JOIN "Revision" r ON r."id" = sp."revisionId"
  WHERE ss."siteId" = $1
),
-- Every node of the \`byId\` trie of each revision's stored tree (src/lib/page-trie.ts): its leaves
-- hold the items [pageId, versionId, parentId, sort key].
walk AS (
  SELECT ss."id" AS ssid, rn."entries"->'r'->>0 AS hash FROM ss JOIN "RevisionTreeNode" rn ON rn."hash" = ss."treeRoot"
  UNION ALL
  SELECT w.ssid, c->>1 FROM walk w JOIN "RevisionTreeNode" n ON n."hash" = w.hash
  CROSS JOIN LATERAL jsonb_array_elements(CASE WHEN n."entries" ? 'c' THEN n."entries"->'c' ELSE '[]'::jsonb END) AS c
),
-- A revision not converted yet (seeded with its JSON tree only): its nested JSON, the index as sort key.
jwalk AS (
  SELECT ss."id" AS ssid, e.node, NULL::text AS parent, lpad(e.ord::text, 10, '0') AS pos
  FROM ss CROSS JOIN LATERAL jsonb_array_elements(coalesce(ss."tree", '[]'::jsonb)) WITH ORDINALITY AS e(node, ord)
  UNION ALL
  SELECT j.ssid, c.node, j.node->>'id', lpad(c.ord::text, 10, '0')
  FROM jwalk j CROSS JOIN LATERAL jsonb_array_elements(j.node->'pages') WITH ORDINALITY AS c(node, ord)
),
items AS (
  SELECT w.ssid, i->>0 AS id, i->>1 AS v, i->>2 AS parent, i->>3 AS pos
  FROM walk w JOIN "RevisionTreeNode" n ON n."hash" = w.hash
  CROSS JOIN LATERAL jsonb_array_elements(CASE WHEN n."entries" ? 'l' THEN n."entries"->'l' ELSE '[]'::jsonb END) AS i
  UNION ALL
  SELECT ssid, node->>'id', node->>'v', parent, pos FROM jwalk
),
-- The page versions of those revisions, fetched once by primary key; joining PageVersion inside
-- the recursion instead makes the planner, which cannot estimate the JSON expansion, hash a
-- sequential scan of the whole table.
pvs AS (
  SELECT pv."id", pv."title", pv."slug", pv."kind"
  FROM "PageVersion" pv
  WHERE pv."id" = ANY (ARRAY(SELECT v FROM items))
),
-- Siblings by (sort key, page id) in byte order, as the application orders them.
nodes AS (
  SELECT it.ssid, it.id, NULL::text AS "parentId", 0 AS depth, ARRAY[convert_to(it.pos || chr(1) || it.id, 'UTF8')] AS sortkey,
         pv."slug"::text AS path, pv."title", pv."slug", pv."kind"
  FROM items it JOIN pvs pv ON pv."id" = it.v
  WHERE it.parent IS NULL
  UNION ALL
  SELECT n.ssid, c.id, n.id, n.depth + 1, n.sortkey || convert_to(c.pos || chr(1) || c.id, 'UTF8'),
         n.path || '/' || pv."slug", pv."title", pv."slug", pv."kind"
  FROM nodes n
  JOIN items c ON c.ssid = n.ssid AND c.parent = n.id
  JOIN pvs pv ON pv."id" = c.v
),
pages AS (
  SELECT ssid, json_agg(json_build_object(
           'id', id, 'title', "title", 'slug', "slug", 'path', path, 'type', "kind",
           'parentId', "parentId", 'depth', depth) ORDER BY sortkey) AS list
  FROM nodes GROUP BY ssid
),
ss_obj AS (
  SELECT ss."id", ss."sectionId", ss."position", json_build_object(
           '__typename', 'SiteSpace', 'id', ss."id", 'path', ss."path",
           'space', json_build_object('id', ss."spaceId", 'title', ss."spaceTitle",
             'revision', json_build_object('id', ss."revisionId", 'allPages', coalesce(p.list, '[]'::json)))) AS obj
  FROM ss LEFT JOIN pages p ON p.ssid = ss."id"
),
sections AS (
  SELECT sc."id", sc."groupId", sc."position", json_build_object(
           '__typename', 'SiteSection', 'id', sc."id", 'title', sc."title", 'path', sc."path",
           'siteSpaces', coalesce((SELECT json_agg(o.obj ORDER BY o."position") FROM ss_obj o WHERE o."sectionId" = sc."id"), '[]'::json)) AS obj
  FROM "SiteSection" sc WHERE sc."siteId" = $1
),
top AS (
  SELECT g."position", json_build_object(
           '__typename', 'SiteSectionGroup', 'id', g."id", 'title', g."title",
           'sections', coalesce((SELECT json_agg(s.obj ORDER BY s."position") FROM sections s WHERE s."groupId" = g."id"), '[]'::json)) AS obj
  FROM "SiteSectionGroup" g WHERE g."siteId" = $1
  UNION ALL
  SELECT s."position", s.obj FROM sections s WHERE s."groupId" IS NULL
  UNION ALL
  SELECT o."position", o.obj FROM ss_obj o WHERE o."sectionId" IS NULL
)
SELECT json_build_object(
  'id', site."id", 'title', site."title",
  'structure', json_build_object(
    'type', CASE WHEN EXISTS (SELECT 1 FROM "SiteSection" x WHERE x."siteId" = site."id") THEN 'sections' ELSE 'siteSpaces' END,
    'items', coalesce((SELECT json_agg(t.obj ORDER BY t."position") FROM top t), '[]'::json))) AS site
FROM "Site" site WHERE site."id" = $1`;

export type FloorResult = {
  requests: number;
  seconds: number;
  rps: number;
  latency: { p50: number; p95: number; p99: number; mean: number; max: number };
  bytes: number;
  site: unknown;
};

/** One connection that runs the floor statement (a named, i.e. prepared, statement). */
export async function openFloor(databaseUrl: string, siteId: string) {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const query = { name: 'bench_floor_site', text: FLOOR_SQL, values: [siteId] };
  return {
    run: async (): Promise<unknown> => (await client.query(query)).rows[0]?.site,
    close: () => client.end(),
  };
}

/** Run the floor statement back to back on one connection for `seconds` (after a warm-up). */
export async function runFloor(databaseUrl: string, siteId: string, seconds: number, warmupSeconds = 1): Promise<FloorResult> {
  const floor = await openFloor(databaseUrl, siteId);
  try {
    let site: unknown = null;
    const warmEnd = performance.now() + warmupSeconds * 1000;
    while (performance.now() < warmEnd) site = await floor.run();
    const samples: number[] = [];
    const start = performance.now();
    const end = start + seconds * 1000;
    while (performance.now() < end) {
      const t = performance.now();
      site = await floor.run();
      samples.push(performance.now() - t);
    }
    const elapsed = (performance.now() - start) / 1000;
    return { requests: samples.length, seconds: elapsed, rps: samples.length / elapsed, latency: summarize(samples), bytes: JSON.stringify(site).length, site };
  } finally {
    await floor.close();
  }
}

/**
 * Time two operations alternately (A B B A …) on one client for `seconds`, so both see the same
 * machine: on a shared 2-core box, two runs a minute apart can differ by 2× while a paired ratio
 * stays put.
 */
export async function paired(a: () => Promise<unknown>, b: () => Promise<unknown>, seconds: number) {
  const as: number[] = [];
  const bs: number[] = [];
  const time = async (fn: () => Promise<unknown>, into: number[]) => {
    const t = performance.now();
    await fn();
    into.push(performance.now() - t);
  };
  const end = performance.now() + seconds * 1000;
  for (let i = 0; performance.now() < end || as.length < 5; i++) {
    if (i % 2 === 0) {
      await time(a, as);
      await time(b, bs);
    } else {
      await time(b, bs);
      await time(a, as);
    }
  }
  const la = summarize(as);
  const lb = summarize(bs);
  return { a: la, b: lb, pairs: as.length, ratioP50: la.p50 / lb.p50 };
}

export function summarize(samples: number[]) {
  if (!samples.length) return { p50: NaN, p95: NaN, p99: NaN, mean: NaN, max: NaN };
  const s = samples.slice().sort((a, b) => a - b);
  const at = (p: number) => s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))];
  return { p50: at(50), p95: at(95), p99: at(99), mean: s.reduce((a, b) => a + b, 0) / s.length, max: s[s.length - 1] };
}
