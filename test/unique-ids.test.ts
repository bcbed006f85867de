// One object, one id (docs/decisions.md, Identifiers, "One object, one id").
// Relay, Apollo and urql normalize their caches by `id` (Relay by `id` alone, Apollo and urql by
// `__typename:id`): two objects answering one id show each other's data, silently. This file
// (a) walks the schema: every object type with an `id` field is a Node, or a wrapper whose `id` is
// deprecated for a `…Id` field, or one of a few types whose `id` is their own (allowlisted below);
// (b) runs realistic screens against a live app and fails when an id is answered by two types, or
// twice by one type with two different values of one field (what a cache would merge).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getNamedType, isObjectType, type GraphQLObjectType } from 'graphql';
import { startTestApp, type TestApp } from './helpers.ts';
import { schema } from '../src/graphql/schema.ts';
import { applyChanges } from '../src/domain/revisions.ts';
import { newId } from '../src/lib/ids.ts';

// Types whose `id` is their own, though they do not implement Node (node(id:) cannot fetch them).
const OWN_ID_TYPES: Record<string, string> = {
  // `tok_…`: the token's own id (the secret is never an id); listed on the viewer only.
  ApiToken: 'own tok_ id',
  // `svk_…`: the visitor key's own id; listed under its site only.
  SiteVisitorKey: 'own svk_ id',
  // `rpg_<revisionId>_<pageId>[~<view>]`: a page as read in one revision (and view); the stable
  // page id is `pageId`.
  RevisionPage: 'revision-scoped id',
};

describe('the schema: every id is its object’s own', () => {
  it('every object type with an `id` implements Node, is allowlisted, or deprecates `id` for a …Id field', () => {
    const offenders: string[] = [];
    for (const type of Object.values(schema.getTypeMap())) {
      if (!isObjectType(type) || type.name.startsWith('__')) continue;
      const id = type.getFields().id;
      if (!id) continue;
      if (type.getInterfaces().some((i) => i.name === 'Node')) continue;
      if (OWN_ID_TYPES[type.name]) continue;
      // A wrapper keeps its old `id` (deprecated) for existing documents, beside the id it carries named `…Id`.
      const named = Object.keys(type.getFields()).filter((f) => f !== 'id' && /Id$/.test(f) && getNamedType(type.getFields()[f].type).name === 'String');
      if (id.deprecationReason && named.length > 0) continue;
      offenders.push(type.name);
    }
    expect(offenders).toEqual([]);
  });

  it('the allowlist names only types that exist, have an `id` and are not Nodes', () => {
    for (const name of Object.keys(OWN_ID_TYPES)) {
      const type = schema.getType(name) as GraphQLObjectType | undefined;
      expect(type && isObjectType(type), name).toBe(true);
      expect(type!.getFields().id, name).toBeDefined();
      expect(type!.getInterfaces().map((i) => i.name)).not.toContain('Node');
    }
  });
});

// ------------------------------------------------------------------ the response checker

type Record_ = { typename: string; fields: Map<string, string>; where: string };

/** What a normalized cache stores for a value: a reference for an object with an id, else the value. */
function normalize(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(normalize);
  if (v && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    if (typeof o.__typename === 'string' && typeof o.id === 'string') return { ref: `${o.__typename}:${o.id}` };
    return Object.fromEntries(Object.entries(o).map(([k, x]) => [k, normalize(x)]));
  }
  return v;
}

/** Every `{__typename, id}` object in `data`, merged as a cache would; conflicts land in `problems`. */
class IdLedger {
  readonly records = new Map<string, Record_>();
  readonly problems: string[] = [];

  add(data: unknown, where: string) {
    const visit = (v: unknown, path: string) => {
      if (Array.isArray(v)) return v.forEach((x, i) => visit(x, `${path}[${i}]`));
      if (!v || typeof v !== 'object') return;
      const o = v as Record<string, unknown>;
      if (typeof o.__typename === 'string' && typeof o.id === 'string') this.record(o.__typename, o.id, o, `${where}: ${path}`);
      for (const [k, x] of Object.entries(o)) visit(x, `${path}.${k}`);
    };
    visit(data, '');
  }

  private record(typename: string, id: string, o: Record<string, unknown>, where: string) {
    const known = this.records.get(id);
    if (!known) {
      this.records.set(id, { typename, fields: new Map(Object.entries(o).map(([k, x]) => [k, JSON.stringify(normalize(x))])), where });
      return;
    }
    if (known.typename !== typename) {
      this.problems.push(`${id} is a ${known.typename} (${known.where}) and a ${typename} (${where})`);
      return;
    }
    for (const [k, x] of Object.entries(o)) {
      const value = JSON.stringify(normalize(x));
      const before = known.fields.get(k);
      if (before === undefined) known.fields.set(k, value);
      else if (before !== value) this.problems.push(`${typename}:${id}.${k} is ${before} (${known.where}) and ${value} (${where})`);
    }
  }
}

// ------------------------------------------------------------------ a live app and its screens

let t: TestApp;
let spaceId: string;
let faqId: string;
let crNumber: number;
let siteId: string;
const GUIDES = newId('SiteSection');
const ENTERPRISE = newId('SiteSection');
// A second site for the objects below a view: a group of two sections, one of them conditioned,
// and a section with two site spaces, one of them conditioned (so lists differ by view).
let portalId: string;
let extrasId: string;
const PRODUCTS = newId('SiteSectionGroup');
const PLATFORM = newId('SiteSection');
const PARTNERS = newId('SiteSection');
const HANDBOOK_SS = newId('SiteSpace');
const EXTRAS_SS = newId('SiteSpace');

async function edit(changes: unknown[]) {
  const s = await t.app.prisma.space.findUniqueOrThrow({ where: { id: spaceId } });
  return t.app.prisma.$transaction(async (tx) => {
    const r = await applyChanges(tx, { spaceId, baseRevisionId: s.revisionId!, changes: changes as never, createdById: t.adminUser.id, storage: t.app.services.storage });
    await tx.space.update({ where: { id: spaceId }, data: { revisionId: r.revision.id } });
    return r;
  });
}

async function gql(query: string, variables: Record<string, unknown>, token?: string | null) {
  const r = await t.gql(query, variables, token as string);
  expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
  return r.data;
}

beforeAll(async () => {
  t = await startTestApp();
  const s = await t.rest('POST', `/v1/orgs/${t.org.id}/spaces`, { title: 'Handbook' });
  expect(s.status).toBe(201);
  spaceId = s.body.id;
  const r = await edit([
    { operation: 'insert_page', title: 'FAQ', document: { markdown: 'Questions about the okapi.' } },
    { operation: 'insert_page', title: 'Setup', document: { markdown: 'Install the okapi tools.' } },
    { operation: 'insert_page', title: 'Beta', condition: 'visitor.claims.unsigned.beta', document: { markdown: 'The beta okapi.' } },
  ]);
  faqId = r.outcomes[0].pageId!;
  // A change request renaming the FAQ: the review screen shows "FAQ" beside "FAQ (draft)".
  const cr = await t.rest('POST', `/v1/spaces/${spaceId}/change-requests`, { subject: 'Rename the FAQ' });
  expect(cr.status).toBe(201);
  crNumber = cr.body.number;
  const changed = await t.rest('POST', `/v1/spaces/${spaceId}/change-requests/${cr.body.id}/content`, { changes: [{ operation: 'update_page', page: faqId, title: 'FAQ (draft)' }] });
  expect(changed.status, JSON.stringify(changed.body)).toBe(200);
  // A published public site: Guides for everyone, Enterprise for visitors with the claim.
  siteId = newId('Site');
  await t.app.prisma.$transaction(async (tx) => {
    await tx.site.create({ data: { id: siteId, organizationId: t.org.id, title: 'Docs', published: true, visibility: 'public', defaultSiteSectionId: GUIDES } });
    await tx.siteSection.createMany({
      data: [
        { id: GUIDES, siteId, title: 'Guides', path: 'guides', position: 0 },
        { id: ENTERPRISE, siteId, title: 'Enterprise', path: 'enterprise', position: 1, condition: 'visitor.claims.unsigned.enterprise' },
      ],
    });
    await tx.siteSpace.create({ data: { id: newId('SiteSpace'), siteId, sectionId: GUIDES, spaceId, path: 'handbook', position: 0 } });
  });
  const extras = await t.rest('POST', `/v1/orgs/${t.org.id}/spaces`, { title: 'Extras' });
  expect(extras.status).toBe(201);
  extrasId = extras.body.id;
  portalId = newId('Site');
  await t.app.prisma.$transaction(async (tx) => {
    await tx.site.create({ data: { id: portalId, organizationId: t.org.id, title: 'Portal', published: true, visibility: 'public', defaultSiteSectionId: PLATFORM } });
    await tx.siteSectionGroup.create({ data: { id: PRODUCTS, siteId: portalId, title: 'Products', position: 0 } });
    await tx.siteSection.createMany({
      data: [
        { id: PLATFORM, siteId: portalId, groupId: PRODUCTS, title: 'Platform', path: 'platform', position: 0, defaultSiteSpaceId: HANDBOOK_SS },
        { id: PARTNERS, siteId: portalId, groupId: PRODUCTS, title: 'Partners', path: 'partners', position: 1, condition: 'visitor.claims.unsigned.enterprise' },
      ],
    });
    await tx.siteSpace.createMany({
      data: [
        { id: HANDBOOK_SS, siteId: portalId, sectionId: PLATFORM, spaceId, path: 'handbook', position: 0 },
        { id: EXTRAS_SS, siteId: portalId, sectionId: PLATFORM, spaceId: extrasId, path: 'extras', position: 1, condition: 'visitor.claims.unsigned.enterprise' },
      ],
    });
  });
});
afterAll(async () => {
  await t?.close();
});

const PAGE = '__typename id pageId title parentId';

const REVIEW = `query Review($space: ID!, $cr: String!) {
  space(id: $space) { __typename id title revision { __typename id allPages { ${PAGE} } } }
  changeRequest(spaceId: $space, idOrNumber: $cr) { __typename id subject revision { __typename id allPages { ${PAGE} } } }
}`;

const SITE_PANES = `query SitePanes($site: ID!) {
  editor: site(id: $site) { __typename id siteId title siteSpaceCount sections { __typename id title } }
  preview: site(id: $site, visitor: { claims: {} }) { __typename id siteId title siteSpaceCount sections { __typename id title } }
}`;

const SEARCHES = `query Searches($org: ID!, $space: ID!, $site: ID!) {
  organization(id: $org) { __typename id title search(query: "okapi", first: 20) { nodes { __typename spaceId title pages { __typename pageId title sections { __typename sectionId title } } } } }
  space(id: $space) { __typename id title search(query: "okapi", first: 20) { nodes { __typename pageId title sections { __typename sectionId title } } } }
  searchSite(siteId: $site, query: "okapi", first: 20) { nodes { __typename section { __typename siteSectionId title } siteSpace { __typename siteSpaceId title } spaceId pageId title sections { __typename sectionId title } } }
}`;

const AUDIT_LOG = `query AuditLog($org: ID!) {
  organization(id: $org) { __typename id title auditEvents(first: 100) { nodes { __typename id action actor { __typename actorId type label } target { __typename objectId type label } } } }
}`;

const PUBLISHED = `query Published($site: ID!) {
  publishedSite(siteId: $site) { __typename id siteId title sections { __typename id title siteSpaces { __typename id title space { __typename id title revision { __typename id allPages { ${PAGE} } } } } } }
}`;

describe('live screens: no id answers two objects', () => {
  it('a change-request review: the space’s pages beside the change request’s pages', async () => {
    const ledger = new IdLedger();
    const data = await gql(REVIEW, { space: spaceId, cr: String(crNumber) });
    ledger.add(data, 'review');
    expect(ledger.problems).toEqual([]);
    const main = data.space.revision.allPages.find((p: any) => p.pageId === faqId);
    const draft = data.changeRequest.revision.allPages.find((p: any) => p.pageId === faqId);
    expect([main.title, draft.title]).toEqual(['FAQ', 'FAQ (draft)']);
    expect(main.id).not.toBe(draft.id);
    expect(main.id).toBe(`rpg_${data.space.revision.id}_${faqId}`);
    // Revision.page(id:) takes the stable page id.
    const one = await gql(`query($s: ID!, $p: String!) { space(id: $s) { revision { page(id: $p) { id pageId title } } } }`, { s: spaceId, p: faqId });
    expect(one.space.revision.page).toEqual({ id: main.id, pageId: faqId, title: 'FAQ' });
  });

  it('the checker fails on the old shape (the page id as every revision’s page id)', async () => {
    const ledger = new IdLedger();
    ledger.add(await gql(REVIEW.replaceAll(PAGE, '__typename id: pageId title'), { space: spaceId, cr: String(crNumber) }), 'old shape');
    expect(ledger.problems.some((p) => p.includes(`RevisionPage:${faqId}.title is "FAQ"`) && p.includes('"FAQ (draft)"'))).toBe(true);
    const twoTypes = new IdLedger();
    twoTypes.add({ a: { __typename: 'Space', id: spaceId }, b: { __typename: 'SearchSpaceResult', id: spaceId } }, 'wrappers');
    expect(twoTypes.problems).toHaveLength(1);
  });

  it('an editor’s site structure and a visitor preview of the same site, in one request', async () => {
    const ledger = new IdLedger();
    const data = await gql(SITE_PANES, { site: siteId });
    ledger.add(data, 'site panes');
    expect(ledger.problems).toEqual([]);
    expect(data.editor.sections.map((s: any) => s.title)).toEqual(['Guides', 'Enterprise']);
    expect(data.preview.sections.map((s: any) => s.title)).toEqual(['Guides']);
    expect(data.editor.id).toBe(siteId);
    expect(data.preview.id).not.toBe(siteId);
    expect(data.preview.id.startsWith(`${siteId}~`)).toBe(true);
    expect([data.editor.siteId, data.preview.siteId]).toEqual([siteId, siteId]);
    // The same view answers the same id (a cache refetching it finds its record again).
    expect((await gql(SITE_PANES, { site: siteId })).preview.id).toBe(data.preview.id);
    // node(id:) takes a view-scoped id: it names the site (read in this request's view).
    const node = await gql(`query($id: ID!) { node(id: $id) { __typename ... on Site { siteId } } }`, { id: data.preview.id });
    expect(node.node).toEqual({ __typename: 'Site', siteId });
  });

  it('organization, space and site search results, and the audit log, beside the objects they name', async () => {
    const ledger = new IdLedger();
    ledger.add(await gql(REVIEW, { space: spaceId, cr: String(crNumber) }), 'review');
    ledger.add(await gql(SITE_PANES, { site: siteId }), 'site panes');
    const searches = await gql(SEARCHES, { org: t.org.id, space: spaceId, site: siteId });
    ledger.add(searches, 'searches');
    const audit = await gql(AUDIT_LOG, { org: t.org.id });
    ledger.add(audit, 'audit log');
    expect(ledger.problems).toEqual([]);
    // The screens found something to compare: results name the space and page by …Id.
    expect(searches.organization.search.nodes.map((n: any) => n.spaceId)).toEqual([spaceId]);
    expect(searches.space.search.nodes.map((n: any) => n.pageId)).toContain(faqId);
    expect(searches.searchSite.nodes.map((n: any) => n.pageId)).toContain(faqId);
    expect(audit.organization.auditEvents.nodes.some((e: any) => e.target.objectId === spaceId && e.actor.actorId === t.adminUser.id)).toBe(true);
  });

  it('a published site read without a token: its own ids, none shared with the editor’s', async () => {
    const anonymous = new IdLedger();
    const data = await gql(PUBLISHED, { site: siteId }, null);
    anonymous.add(data, 'published');
    expect(anonymous.problems).toEqual([]);
    const site = data.publishedSite;
    expect(site.siteId).toBe(siteId);
    expect(site.sections.map((s: any) => s.title)).toEqual(['Guides']);
    const pages = site.sections[0].siteSpaces[0].space.revision.allPages;
    expect(pages.map((p: any) => p.title)).toEqual(['FAQ', 'Setup']);
    // The editor's tree has the Beta page too: the reader's pages and site answer ids of their own.
    const editor = await gql(REVIEW, { space: spaceId, cr: String(crNumber) });
    const editorIds = new Set<string>(editor.space.revision.allPages.map((p: any) => p.id));
    expect(editor.space.revision.allPages.map((p: any) => p.title)).toEqual(['FAQ', 'Setup', 'Beta']);
    expect(pages.filter((p: any) => editorIds.has(p.id))).toEqual([]);
    expect(site.id).not.toBe(siteId);
  });
});

// ------------------------------------------------------------------ below a filtered view

const SITE_SPACE = `__typename id siteSpaceId title condition space { __typename id spaceId title revision { __typename id revisionId allPages { ${PAGE} } } }`;
const SECTION = `__typename id siteSectionId title condition siteSpaces { ${SITE_SPACE} }`;
const PORTAL = `__typename id siteId title
  sectionGroups { __typename id siteSectionGroupId title sections { ${SECTION} } }
  sections { ${SECTION} }
  structure { items { __typename id ... on SiteSectionGroup { siteSectionGroupId title } } }
  sectionsConnection(first: 10) { nodes { __typename id siteSectionId title } }
  siteSpacesConnection(first: 10) { nodes { __typename id siteSpaceId title } }`;
const PORTAL_PANES = `query PortalPanes($site: ID!) {
  editor: site(id: $site) { ${PORTAL} }
  preview: site(id: $site, visitor: { claims: {} }) { ${PORTAL} }
}`;

describe('below a filtered view: sections, groups, site spaces, spaces and revisions', () => {
  const keyOf = (id: string) => id.slice(id.indexOf('~') + 1);

  it('an editor pane and a visitor preview pane: every object below the preview answers its view’s id', async () => {
    const ledger = new IdLedger();
    const data = await gql(PORTAL_PANES, { site: portalId });
    ledger.add(data, 'portal panes');
    // The editor's review screen of the same space, in the same cache.
    ledger.add(await gql(REVIEW, { space: spaceId, cr: String(crNumber) }), 'review');
    expect(ledger.problems).toEqual([]);

    const { editor, preview } = data;
    const key = keyOf(preview.id);
    expect(preview.id).toBe(`${portalId}~${key}`);
    // The lists differ by view: the preview has one section and one site space fewer, and no Beta page.
    expect(editor.sectionGroups[0].sections.map((s: any) => s.title)).toEqual(['Platform', 'Partners']);
    expect(preview.sectionGroups[0].sections.map((s: any) => s.title)).toEqual(['Platform']);
    expect(editor.sections[0].siteSpaces.map((s: any) => s.title)).toEqual(['Handbook', 'Extras']);
    expect(preview.sections[0].siteSpaces.map((s: any) => s.title)).toEqual(['Handbook']);
    expect(editor.sections[0].siteSpaces[0].space.revision.allPages.map((p: any) => p.title)).toEqual(['FAQ', 'Setup', 'Beta']);
    expect(preview.sections[0].siteSpaces[0].space.revision.allPages.map((p: any) => p.title)).toEqual(['FAQ', 'Setup']);

    // The editor's view keeps the plain ids; the preview answers `<id>~<its view>`; the …Id fields are the plain ids in both.
    const group = (v: any) => v.sectionGroups[0];
    const section = (v: any) => v.sections[0];
    const siteSpace = (v: any) => v.sections[0].siteSpaces[0];
    const space = (v: any) => siteSpace(v).space;
    const revision = (v: any) => space(v).revision;
    const { revisionId } = await t.app.prisma.space.findUniqueOrThrow({ where: { id: spaceId } });
    for (const [pick, field, plain] of [
      [group, 'siteSectionGroupId', PRODUCTS],
      [section, 'siteSectionId', PLATFORM],
      [siteSpace, 'siteSpaceId', HANDBOOK_SS],
      [space, 'spaceId', spaceId],
      [revision, 'revisionId', revisionId],
    ] as const) {
      expect([pick(editor).id, pick(editor)[field]], field).toEqual([plain, plain]);
      expect([pick(preview).id, pick(preview)[field]], field).toEqual([`${plain}~${key}`, plain]);
    }
    // One view, one key: the structure's items and the paged lists answer the same ids as the nested lists.
    expect(preview.structure.items.map((i: any) => i.id)).toEqual([`${PRODUCTS}~${key}`]);
    expect(preview.sectionsConnection.nodes.map((n: any) => n.id)).toEqual([`${PLATFORM}~${key}`]);
    expect(preview.siteSpacesConnection.nodes.map((n: any) => n.id)).toEqual([`${HANDBOOK_SS}~${key}`]);
    expect(editor.siteSpacesConnection.nodes.map((n: any) => n.id)).toEqual([HANDBOOK_SS, EXTRAS_SS]);
    // The same view answers the same ids on the next read (a cache finds its records again).
    expect((await gql(PORTAL_PANES, { site: portalId })).preview).toEqual(preview);
  });

  it('the checker fails on the old shape (plain ids below the preview)', async () => {
    // The preview pane selecting the stable ids as `id`: what every view answered before.
    const plain = `query($site: ID!) { preview: site(id: $site, visitor: { claims: {} }) { __typename id sections { __typename id: siteSectionId title siteSpaces { __typename id: siteSpaceId title space { __typename id: spaceId revision { __typename id: revisionId allPages { ${PAGE} } } } } } } }`;
    const ledger = new IdLedger();
    ledger.add(await gql(PORTAL_PANES, { site: portalId }), 'panes');
    ledger.add(await gql(plain, { site: portalId }), 'old shape');
    expect(ledger.problems.some((p) => p.startsWith(`SiteSection:${PLATFORM}.siteSpaces`))).toBe(true);
    expect(ledger.problems.some((p) => p.startsWith('Revision:') && p.includes('.allPages'))).toBe(true);
  });

  it('an anonymous published read: its own ids below the site; REST keeps the contract’s ids', async () => {
    const ledger = new IdLedger();
    const published = await gql(
      `query($site: ID!) { publishedSite(siteId: $site) { ${PORTAL} } }`,
      { site: portalId },
      null,
    );
    ledger.add(published, 'anonymous');
    ledger.add(await gql(PORTAL_PANES, { site: portalId }), 'editor panes');
    expect(ledger.problems).toEqual([]);
    const site = published.publishedSite;
    const key = keyOf(site.id);
    expect(site.sections.map((s: any) => [s.id, s.siteSectionId, s.condition])).toEqual([[`${PLATFORM}~${key}`, PLATFORM, null]]);
    expect(site.sections[0].siteSpaces[0].space.id).toBe(`${spaceId}~${key}`);

    // REST bodies of the same reads answer the plain ids.
    const structure = await t.rest('GET', `/v1/orgs/${t.org.id}/sites/${portalId}/published`, undefined, null);
    expect(structure.status, JSON.stringify(structure.body)).toBe(200);
    const group = structure.body.structure.structure[0];
    expect(group.id).toBe(PRODUCTS);
    expect(group.sections.map((s: any) => s.id)).toEqual([PLATFORM]);
    expect(group.sections[0].siteSpaces.map((s: any) => [s.id, s.space.id])).toEqual([[HANDBOOK_SS, spaceId]]);
    const sections = await t.rest('GET', `/v1/orgs/${t.org.id}/sites/${portalId}/sections`, undefined, null);
    expect(sections.status, JSON.stringify(sections.body)).toBe(200);
    expect(sections.body.items.map((s: any) => s.id)).toEqual([PLATFORM]);
    const siteSpaces = await t.rest('GET', `/v1/orgs/${t.org.id}/sites/${portalId}/site-spaces`, undefined, null);
    expect(siteSpaces.status, JSON.stringify(siteSpaces.body)).toBe(200);
    expect(siteSpaces.body.items.map((s: any) => [s.id, s.space.id])).toEqual([[HANDBOOK_SS, spaceId]]);
  });

  it('node(id:) takes a view-scoped id of a section, group, site space, space or revision and answers for this reader', async () => {
    const { preview } = await gql(PORTAL_PANES, { site: portalId });
    const NODE = `query($id: ID!) { node(id: $id) { __typename id
      ... on SiteSection { siteSectionId } ... on SiteSectionGroup { siteSectionGroupId } ... on SiteSpace { siteSpaceId }
      ... on Space { spaceId } ... on Revision { revisionId } } }`;
    const space = preview.sections[0].siteSpaces[0].space;
    // A member's node(id:) reads in the editor's view (a preview is a site argument, not a reader).
    expect((await gql(NODE, { id: preview.sections[0].id })).node).toEqual({ __typename: 'SiteSection', id: PLATFORM, siteSectionId: PLATFORM });
    expect((await gql(NODE, { id: preview.sectionGroups[0].id })).node).toEqual({ __typename: 'SiteSectionGroup', id: PRODUCTS, siteSectionGroupId: PRODUCTS });
    expect((await gql(NODE, { id: preview.sections[0].siteSpaces[0].id })).node).toEqual({ __typename: 'SiteSpace', id: HANDBOOK_SS, siteSpaceId: HANDBOOK_SS });
    expect((await gql(NODE, { id: space.id })).node).toEqual({ __typename: 'Space', id: spaceId, spaceId });
    expect((await gql(NODE, { id: space.revision.id })).node).toEqual({ __typename: 'Revision', id: space.revision.revisionId, revisionId: space.revision.revisionId });

    // A reader who is not a member, refetching what it read, gets the same record back: same id, same view.
    const { token } = await t.as('outsider');
    const read = (await gql(`query($site: ID!) { publishedSite(siteId: $site) { sections { id siteSectionId condition siteSpaces { id } } } }`, { site: portalId }, token)).publishedSite;
    expect(read.sections[0].id).toMatch(new RegExp(`^${PLATFORM}~[0-9a-f]{16}$`));
    const refetch = await gql(`query($id: ID!) { node(id: $id) { __typename id ... on SiteSection { siteSectionId condition siteSpaces { id } } } }`, { id: read.sections[0].id }, token);
    expect(refetch.node).toEqual({ __typename: 'SiteSection', ...read.sections[0] });
    // A conditioned section stays hidden from that reader, view-scoped id or not.
    for (const id of [PARTNERS, `${PARTNERS}~${keyOf(read.sections[0].id)}`]) {
      const hidden = await t.gql(`query($id: ID!) { node(id: $id) { id } }`, { id }, token as string);
      expect(hidden.data?.node ?? null, id).toBeNull();
    }
  });
});
