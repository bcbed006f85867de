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
