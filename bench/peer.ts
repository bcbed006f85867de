// The peer of scenario 1 (issue 14): PostGraphile v5 serving the flagship site's structure from a
// normalized schema `peer` in the bench database. This file builds and fills that schema, holds
// the peer's GraphQL document, and counts what a peer response carries; bench/peer-server.ts is
// the PostGraphile process.
//
// The rows are copied from the SQL floor's answer for the flagship site (bench/floor.ts), which
// the bench already checks against the gateway's: same site, groups, sections, site spaces,
// spaces and every page of each space's current revision (id, title, slug, path, type, parent,
// depth, pre-order position), same text. Only the shape of the storage differs: one row per page
// instead of a revision's JSON tree and immutable page versions.
import pg from 'pg';
import { FLOOR_SQL } from './floor.ts';

export const PEER_SCHEMA = 'peer';

const DDL = `
DROP SCHEMA IF EXISTS peer CASCADE;
CREATE SCHEMA peer;
CREATE TABLE peer.site (
  id text PRIMARY KEY,
  title text NOT NULL
);
CREATE TABLE peer.section_group (
  id text PRIMARY KEY,
  site_id text NOT NULL REFERENCES peer.site (id),
  title text NOT NULL,
  position int NOT NULL
);
CREATE INDEX ON peer.section_group (site_id, position);
CREATE TABLE peer.section (
  id text PRIMARY KEY,
  site_id text NOT NULL REFERENCES peer.site (id),
  group_id text REFERENCES peer.section_group (id),
  title text NOT NULL,
  path text NOT NULL,
  position int NOT NULL
);
CREATE INDEX ON peer.section (site_id, position);
CREATE INDEX ON peer.section (group_id, position);
CREATE TABLE peer.space (
  id text PRIMARY KEY,
  title text NOT NULL,
  revision_id text NOT NULL
);
CREATE TABLE peer.site_space (
  id text PRIMARY KEY,
  site_id text NOT NULL REFERENCES peer.site (id),
  section_id text REFERENCES peer.section (id),
  space_id text NOT NULL REFERENCES peer.space (id),
  path text NOT NULL,
  position int NOT NULL
);
CREATE INDEX ON peer.site_space (site_id, position);
CREATE INDEX ON peer.site_space (section_id, position);
CREATE INDEX ON peer.site_space (space_id);
CREATE TABLE peer.page (
  id text PRIMARY KEY,
  space_id text NOT NULL REFERENCES peer.space (id),
  parent_id text REFERENCES peer.page (id),
  title text NOT NULL,
  slug text NOT NULL,
  path text NOT NULL,
  type text NOT NULL,
  depth int NOT NULL,
  position int NOT NULL
);
CREATE INDEX ON peer.page (space_id, position);
CREATE INDEX ON peer.page (parent_id);
`;

/**
 * The peer's document: the same fields as scenario 1's SITE_TREE_QUERY (site, groups, sections,
 * site spaces, space, its revision id, every page with id, title, slug, path, type, parentId,
 * depth), in PostGraphile's default (amber) naming: connections ordered by the indexed position;
 * amber names a table's own key `rowId` (`id` is the global Node ID), aliased back to `id`.
 * The seeded sites have groups at the root only; a site with top-level sections or site spaces
 * would need two more connections here (the count check below would notice).
 */
export const PEER_QUERY = `
query PeerSiteTree($id: String!) {
  siteByRowId(rowId: $id) {
    id: rowId title
    sectionGroupsBySiteId(orderBy: POSITION_ASC) {
      nodes {
        id: rowId title
        sectionsByGroupId(orderBy: POSITION_ASC) {
          nodes {
            id: rowId title path
            siteSpacesBySectionId(orderBy: POSITION_ASC) {
              nodes {
                id: rowId path
                spaceBySpaceId {
                  id: rowId title revisionId
                  pagesBySpaceId(orderBy: POSITION_ASC) {
                    nodes { id: rowId title slug path type parentId depth }
                  }
                }
              }
            }
          }
        }
      }
    }
  }
}`;

/** "N site spaces, M pages" of a peer response's data, in the words describeSiteTree uses. */
export function describePeerTree(site: any): string {
  let siteSpaces = 0;
  let pages = 0;
  for (const g of site?.sectionGroupsBySiteId?.nodes ?? [])
    for (const s of g.sectionsByGroupId.nodes)
      for (const ss of s.siteSpacesBySectionId.nodes) {
        siteSpaces++;
        pages += ss.spaceBySpaceId?.pagesBySpaceId?.nodes?.length ?? 0;
      }
  return `${siteSpaces} site spaces, ${pages} pages`;
}

/**
 * (Re)create schema `peer` and fill it with the flagship site as the floor statement returns it.
 * Returns the counts written.
 */
export async function seedPeer(databaseUrl: string, siteId: string) {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const site = (await client.query(FLOOR_SQL, [siteId])).rows[0]?.site as any;
    if (!site) throw new Error(`peer: site ${siteId} not found`);
    const groups: unknown[][] = [];
    const sections: unknown[][] = [];
    const siteSpaces: unknown[][] = [];
    const spaces = new Map<string, unknown[]>();
    const pages: unknown[][] = [];
    const addSiteSpace = (ss: any, sectionId: string | null, position: number) => {
      siteSpaces.push([ss.id, site.id, sectionId, ss.space.id, ss.path, position]);
      if (spaces.has(ss.space.id)) return;
      spaces.set(ss.space.id, [ss.space.id, ss.space.title, ss.space.revision.id]);
      ss.space.revision.allPages.forEach((p: any, i: number) => pages.push([p.id, ss.space.id, p.parentId, p.title, p.slug, p.path, p.type, p.depth, i]));
    };
    const addSection = (s: any, groupId: string | null, position: number) => {
      sections.push([s.id, site.id, groupId, s.title, s.path, position]);
      s.siteSpaces.forEach((ss: any, i: number) => addSiteSpace(ss, s.id, i));
    };
    site.structure.items.forEach((item: any, i: number) => {
      if (item.__typename === 'SiteSectionGroup') {
        groups.push([item.id, site.id, item.title, i]);
        item.sections.forEach((s: any, k: number) => addSection(s, item.id, k));
      } else if (item.__typename === 'SiteSection') addSection(item, null, i);
      else addSiteSpace(item, null, i);
    });

    await client.query('BEGIN');
    await client.query(DDL);
    const insert = async (table: string, columns: string[], types: string[], rows: unknown[][]) => {
      if (!rows.length) return;
      const arrays = columns.map((_, c) => rows.map((r) => r[c]));
      await client.query(
        `INSERT INTO peer.${table} (${columns.join(', ')}) SELECT * FROM unnest(${types.map((t, i) => `$${i + 1}::${t}[]`).join(', ')})`,
        arrays,
      );
    };
    await insert('site', ['id', 'title'], ['text', 'text'], [[site.id, site.title]]);
    await insert('section_group', ['id', 'site_id', 'title', 'position'], ['text', 'text', 'text', 'int'], groups);
    await insert('section', ['id', 'site_id', 'group_id', 'title', 'path', 'position'], ['text', 'text', 'text', 'text', 'text', 'int'], sections);
    await insert('space', ['id', 'title', 'revision_id'], ['text', 'text', 'text'], [...spaces.values()]);
    await insert('site_space', ['id', 'site_id', 'section_id', 'space_id', 'path', 'position'], ['text', 'text', 'text', 'text', 'text', 'int'], siteSpaces);
    // Parents before children: allPages is in pre-order, so one statement satisfies the
    // self-reference (checked at the end of the statement anyway).
    await insert('page', ['id', 'space_id', 'parent_id', 'title', 'slug', 'path', 'type', 'depth', 'position'], ['text', 'text', 'text', 'text', 'text', 'text', 'text', 'int', 'int'], pages);
    await client.query('COMMIT');
    await client.query('ANALYZE peer.site, peer.section_group, peer.section, peer.space, peer.site_space, peer.page');
    return { groups: groups.length, sections: sections.length, siteSpaces: siteSpaces.length, spaces: spaces.size, pages: pages.length };
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {});
    throw err;
  } finally {
    await client.end();
  }
}

type Flat = { siteSpace: string; path: string; space: string; title: string; revision: string; pages: unknown[] };

/** The site spaces of a gateway response (scenario 1) in order, with their pages, in one flat shape. */
export function flattenGatewayTree(site: any): Flat[] {
  const out: Flat[] = [];
  const visit = (ss: any) =>
    out.push({ siteSpace: ss.id, path: ss.path, space: ss.space.id, title: ss.space.title, revision: ss.space.revision.id, pages: ss.space.revision.allPages });
  for (const item of site.structure.items) {
    if (item.__typename === 'SiteSectionGroup') for (const s of item.sections) s.siteSpaces.forEach(visit);
    else if (item.__typename === 'SiteSection') item.siteSpaces.forEach(visit);
    else visit(item);
  }
  return out;
}

/** The same flat shape from a peer response. */
export function flattenPeerTree(site: any): Flat[] {
  const out: Flat[] = [];
  for (const g of site.sectionGroupsBySiteId.nodes)
    for (const s of g.sectionsByGroupId.nodes)
      for (const ss of s.siteSpacesBySectionId.nodes) {
        const sp = ss.spaceBySpaceId;
        out.push({ siteSpace: ss.id, path: ss.path, space: sp.id, title: sp.title, revision: sp.revisionId, pages: sp.pagesBySpaceId.nodes });
      }
  return out;
}

/** Undefined when both carry the same site spaces, spaces and pages (same text, same order); else the first difference. */
export function compareTrees(gatewaySite: any, peerSite: any): string | undefined {
  const a = flattenGatewayTree(gatewaySite);
  const b = flattenPeerTree(peerSite);
  if (a.length !== b.length) return `${a.length} site spaces against ${b.length}`;
  for (let i = 0; i < a.length; i++) {
    const x = JSON.stringify({ ...a[i], pages: a[i].pages.map((p: any) => [p.id, p.title, p.slug, p.path, p.type, p.parentId, p.depth]) });
    const y = JSON.stringify({ ...b[i], pages: b[i].pages.map((p: any) => [p.id, p.title, p.slug, p.path, p.type, p.parentId, p.depth]) });
    if (x !== y) return `site space ${i} (${a[i].siteSpace}) differs: ${x.slice(0, 200)} … against ${y.slice(0, 200)} …`;
  }
  if (gatewaySite.title !== peerSite.title) return `site title ${gatewaySite.title} against ${peerSite.title}`;
  return undefined;
}
