// REST routes for a site's structure: sections, section groups, site spaces, the structure and its
// sort, on the GraphQL operations of graphql/site-structure.ts. The representations of the
// structure items (`*_FIELDS` with their `toRest*`) live here; rest/sites.ts uses them for the
// published view.
import { z } from 'zod';
import { type RestRoute, listQueryShape, pageVariables, listEnvelope, compact, contractEnum, q, CONNECTION_FIELDS } from './router.ts';
import { PUBLISHED_SPACE_FIELDS, SPACE_FIELDS, toRestSpace } from './spaces.ts';
import {
  AddGroupInput,
  AddSectionInput,
  AddSectionToGroupInput,
  AddSiteSpaceInput,
  ItemPointer,
  UpdateGroupInput,
  UpdateSectionInput,
  UpdateSiteSpaceInput,
} from '../domain/site-structure.ts';
import { STRUCTURE_ITEM_TYPES, type ItemRef } from '../domain/site-order.ts';
import { notFound } from '../lib/errors.ts';

const SITE = '/v1/orgs/:organizationId/sites/:siteId';
const keys = (params: Record<string, string>) => ({ organizationId: params.organizationId, siteId: params.siteId });
const shareKeyQuery = { shareKey: z.string().max(512).optional() };

// ------------------------------------------------------------------ representations

// The items' own ids (`id: siteSpaceId`…): under a filtered view GraphQL's `id` is view-scoped, REST keeps the contract's ids.
const siteSpaceFields = (space: string) => `
  id: siteSpaceId path sectionId condition title default urls { location published }
  space { ${space} }
`;
export const SITE_SPACE_FIELDS = siteSpaceFields(SPACE_FIELDS);

export function toRestSiteSpace(s: any) {
  return compact({
    object: 'site-space',
    id: s.id,
    path: s.path,
    section: s.sectionId,
    space: toRestSpace(s.space),
    title: s.title,
    default: s.default,
    condition: s.condition,
    urls: compact(s.urls),
  });
}

const sectionFields = (space: string) => `
  id: siteSectionId title description path condition icon groupId default urls { location published }
  siteSpaces { ${siteSpaceFields(space)} }
`;
export const SECTION_FIELDS = sectionFields(SPACE_FIELDS);

export function toRestSection(s: any) {
  return compact({
    object: 'site-section',
    id: s.id,
    title: s.title,
    description: s.description,
    default: s.default,
    path: s.path,
    condition: s.condition,
    sectionGroup: s.groupId,
    icon: s.icon,
    siteSpaces: s.siteSpaces.map(toRestSiteSpace),
    urls: compact(s.urls),
  });
}

const groupFields = (space: string) => `id: siteSectionGroupId title icon sections { ${sectionFields(space)} }`;
export const GROUP_FIELDS = groupFields(SPACE_FIELDS);

export function toRestGroup(g: any) {
  return compact({ object: 'site-section-group', id: g.id, title: g.title, icon: g.icon, sections: g.sections.map(toRestSection) });
}

const itemFields = (space: string) => `
  __typename
  ... on SiteSection { ${sectionFields(space)} }
  ... on SiteSectionGroup { ${groupFields(space)} }
  ... on SiteSpace { ${siteSpaceFields(space)} }
`;
const ITEM_FIELDS = itemFields(SPACE_FIELDS);

export function toRestItem(item: any) {
  if (item.__typename === 'SiteSection') return toRestSection(item);
  if (item.__typename === 'SiteSectionGroup') return toRestGroup(item);
  return toRestSiteSpace(item);
}

/** The structure as published content shows it: spaces as PUBLISHED_SPACE_FIELDS, so the published cache serves it. */
export const PUBLISHED_STRUCTURE_FIELDS = `structure { type items { ${itemFields(PUBLISHED_SPACE_FIELDS)} } }`;

export function toRestStructure(s: any) {
  return { type: s.type, structure: s.items.map(toRestItem) };
}

// ------------------------------------------------------------------ bodies in the contract's words

const Id = z.string().min(1).max(200);

const ContractPointer = ItemPointer.extend({ type: contractEnum(STRUCTURE_ITEM_TYPES) });
const SortBody = z.strictObject({
  item: ContractPointer,
  position: z.strictObject({ before: ContractPointer.optional(), after: ContractPointer.optional() }),
});

// The deprecated moves name their anchors `{type, siteSection}` / `{type, siteSpace}`; they become
// the model's `{type, id}` here.
const moveBody = <P extends z.ZodType<ItemRef>>(pointer: P) =>
  z.strictObject({ position: z.strictObject({ before: pointer.optional(), after: pointer.optional() }).optional() });
const MoveSectionBody = moveBody(
  z.strictObject({ type: z.literal('site-section'), siteSection: Id }).transform((p): ItemRef => ({ type: 'site_section', id: p.siteSection })),
);
const MoveSiteSpaceBody = moveBody(
  z.strictObject({ type: z.literal('site-space'), siteSpace: Id }).transform((p): ItemRef => ({ type: 'site_space', id: p.siteSpace })),
);
const MoveGroupBody = moveBody(z.strictObject({ type: contractEnum(['site_section', 'site_section_group']), id: Id }));

// ------------------------------------------------------------------ one item's rows

/** A kind of structure item: where it is, its names in GraphQL and its representation. */
type ItemKind = {
  /** The item's path, e.g. `${SITE}/sections/:siteSectionId`, and the name of its parameter. */
  path: string;
  param: string;
  /** The GraphQL input field naming the item (`sectionId`), and the payload field returning it (`section`). */
  key: string;
  payload: string;
  fields: string;
  toRest: (item: any) => unknown;
  update: { mutation: string; input: string; body: z.ZodType };
  remove: { mutation: string; input: string };
  move: { mutation: string; body: z.ZodType<{ position?: unknown }> };
};

/** PATCH, DELETE (205 deleted / 204 already gone) and the deprecated move of one item: the same rows for each kind, but for the names. */
function itemRows(k: ItemKind): RestRoute[] {
  return [
    {
      method: 'PATCH',
      path: k.path,
      body: k.update.body,
      document: `mutation($input: ${k.update.input}!) { ${k.update.mutation}(input: $input) { ${k.payload} { ${k.fields} } } }`,
      variables: ({ params, body }) => ({ input: { ...keys(params), [k.key]: params[k.param], ...body } }),
      result: (d) => k.toRest(d[k.update.mutation][k.payload]),
    },
    {
      method: 'DELETE',
      path: k.path,
      document: `mutation($input: ${k.remove.input}!) { ${k.remove.mutation}(input: $input) { deleted } }`,
      variables: ({ params }) => ({ input: { ...keys(params), [k.key]: params[k.param] } }),
      status: (d) => (d[k.remove.mutation].deleted ? 205 : 204),
    },
    {
      method: 'POST',
      path: `${k.path}/move`,
      body: k.move.body,
      document: `mutation($input: MoveSiteStructureItemInput!) { ${k.move.mutation}(input: $input) { ${k.payload} { ${k.fields} } } }`,
      variables: ({ params, body }) => ({ input: { ...keys(params), id: params[k.param], position: body.position } }),
      result: (d) => k.toRest(d[k.move.mutation][k.payload]),
    },
  ];
}

// ------------------------------------------------------------------ routes

export const routes: RestRoute[] = [
  // ---- the structure
  {
    method: 'GET',
    path: `${SITE}/structure`,
    published: true,
    query: z.strictObject(shareKeyQuery),
    document: `query($id: ID!, $org: ID!, $shareKey: String) { publishedSite(siteId: $id, organizationId: $org, shareKey: $shareKey) { id ${PUBLISHED_STRUCTURE_FIELDS} } }`,
    variables: ({ params, query }) => ({ id: params.siteId, org: params.organizationId, shareKey: query.shareKey ?? null }),
    result: (d) => toRestStructure(d.publishedSite.structure),
  },
  {
    method: 'PATCH',
    path: `${SITE}/structure/sort`,
    body: SortBody,
    document: `mutation($input: SortSiteStructureInput!) { sortSiteStructure(input: $input) { item { ${ITEM_FIELDS} } } }`,
    variables: ({ params, body }) => ({ input: { ...keys(params), item: body.item, position: body.position } }),
    result: (d) => toRestItem(d.sortSiteStructure.item),
  },

  // ---- sections
  {
    method: 'GET',
    path: `${SITE}/sections`,
    published: true,
    query: z.strictObject({ ...listQueryShape, ...shareKeyQuery }),
    document: `query($id: ID!, $org: ID!, $shareKey: String, $first: Int, $after: String) {
      publishedSite(siteId: $id, organizationId: $org, shareKey: $shareKey) {
        sectionsConnection(first: $first, after: $after) { ${CONNECTION_FIELDS} nodes { ${SECTION_FIELDS} } } } }`,
    variables: ({ params, query }) => ({ id: params.siteId, org: params.organizationId, shareKey: query.shareKey ?? null, ...pageVariables(query) }),
    result: (d) => listEnvelope(d.publishedSite.sectionsConnection, toRestSection),
  },
  {
    method: 'POST',
    path: `${SITE}/sections`,
    body: AddSectionInput,
    document: `mutation($input: AddSectionToSiteInput!) { addSectionToSite(input: $input) { section { ${SECTION_FIELDS} } } }`,
    variables: ({ params, body }) => ({ input: { ...keys(params), ...body } }),
    result: (d) => toRestSection(d.addSectionToSite.section),
    status: 201,
  },
  {
    // Not in the official document (it defines PATCH and DELETE here): the section's
    // `urls.location`, so that the URL every section carries answers. Members of the
    // organization, as for `GET ${SITE}`.
    method: 'GET',
    path: `${SITE}/sections/:siteSectionId`,
    query: z.strictObject({}),
    openapi: { operationId: 'getSiteSectionById', summary: 'Get a site section', response: 'SiteSection' },
    document: `query($site: ID!, $org: ID!, $id: ID!) {
      site(id: $site, organizationId: $org) { id }
      node(id: $id) { ... on SiteSection { site { id: siteId } ${SECTION_FIELDS} } } }`,
    variables: ({ params }) => ({ site: params.siteId, org: params.organizationId, id: params.siteSectionId }),
    result: (d, { params }) => {
      if (!d.node || d.node.site?.id !== params.siteId) throw notFound('Site section');
      return toRestSection(d.node);
    },
  },
  ...itemRows({
    path: `${SITE}/sections/:siteSectionId`,
    param: 'siteSectionId',
    key: 'sectionId',
    payload: 'section',
    fields: SECTION_FIELDS,
    toRest: toRestSection,
    update: { mutation: 'updateSiteSection', input: 'UpdateSiteSectionInput', body: UpdateSectionInput },
    remove: { mutation: 'deleteSiteSection', input: 'SiteSectionKeyInput' },
    move: { mutation: 'moveSiteSection', body: MoveSectionBody },
  }),

  // ---- section groups
  {
    method: 'GET',
    path: `${SITE}/section-groups`,
    query: z.strictObject(listQueryShape),
    document: `query($id: ID!, $org: ID!, $first: Int, $after: String) {
      site(id: $id, organizationId: $org) { sectionGroupsConnection(first: $first, after: $after) { ${CONNECTION_FIELDS} nodes { ${GROUP_FIELDS} } } } }`,
    variables: ({ params, query }) => ({ id: params.siteId, org: params.organizationId, ...pageVariables(query) }),
    result: (d) => listEnvelope(d.site.sectionGroupsConnection, toRestGroup),
  },
  {
    method: 'POST',
    path: `${SITE}/section-groups`,
    body: AddGroupInput,
    document: `mutation($input: AddSectionGroupToSiteInput!) { addSectionGroupToSite(input: $input) { group { ${GROUP_FIELDS} } } }`,
    variables: ({ params, body }) => ({ input: { ...keys(params), ...body } }),
    result: (d) => toRestGroup(d.addSectionGroupToSite.group),
    status: 201,
  },
  ...itemRows({
    path: `${SITE}/section-groups/:siteSectionGroupId`,
    param: 'siteSectionGroupId',
    key: 'groupId',
    payload: 'group',
    fields: GROUP_FIELDS,
    toRest: toRestGroup,
    update: { mutation: 'updateSiteSectionGroup', input: 'UpdateSiteSectionGroupInput', body: UpdateGroupInput },
    remove: { mutation: 'deleteSiteSectionGroup', input: 'SiteSectionGroupKeyInput' },
    move: { mutation: 'moveSiteSectionGroup', body: MoveGroupBody },
  }),
  {
    method: 'POST',
    path: `${SITE}/section-groups/:siteSectionGroupId/sections`,
    body: AddSectionToGroupInput,
    document: `mutation($input: SiteSectionInGroupInput!) { addSectionToGroup(input: $input) { group { ${GROUP_FIELDS} } } }`,
    variables: ({ params, body }) => ({ input: { ...keys(params), groupId: params.siteSectionGroupId, sectionId: body.sectionId } }),
    result: (d) => toRestGroup(d.addSectionToGroup.group),
    status: 201,
  },
  {
    method: 'DELETE',
    path: `${SITE}/section-groups/:siteSectionGroupId/sections/:siteSectionId`,
    document: `mutation($input: SiteSectionInGroupInput!) { removeSectionFromGroup(input: $input) { deleted } }`,
    variables: ({ params }) => ({ input: { ...keys(params), groupId: params.siteSectionGroupId, sectionId: params.siteSectionId } }),
    status: (d) => (d.removeSectionFromGroup.deleted ? 205 : 204),
  },

  // ---- site spaces
  {
    method: 'GET',
    path: `${SITE}/site-spaces`,
    published: true,
    query: z.strictObject({ ...listQueryShape, ...shareKeyQuery, default: q.bool() }),
    document: `query($id: ID!, $org: ID!, $shareKey: String, $first: Int, $after: String, $default: Boolean) {
      publishedSite(siteId: $id, organizationId: $org, shareKey: $shareKey) {
        siteSpacesConnection(first: $first, after: $after, default: $default) { ${CONNECTION_FIELDS} nodes { ${SITE_SPACE_FIELDS} } } } }`,
    variables: ({ params, query }) => ({ id: params.siteId, org: params.organizationId, shareKey: query.shareKey ?? null, default: query.default ?? null, ...pageVariables(query) }),
    result: (d) => listEnvelope(d.publishedSite.siteSpacesConnection, toRestSiteSpace),
  },
  {
    method: 'POST',
    path: `${SITE}/site-spaces`,
    body: AddSiteSpaceInput,
    document: `mutation($input: AddSpaceToSiteInput!) { addSpaceToSite(input: $input) { siteSpace { ${SITE_SPACE_FIELDS} } } }`,
    variables: ({ params, body }) => ({ input: { ...keys(params), ...body } }),
    result: (d) => toRestSiteSpace(d.addSpaceToSite.siteSpace),
    status: 201,
  },
  {
    // Not in the official document (it defines PATCH and DELETE here): the site space's
    // `urls.location`, so that the URL every site space carries answers. Members of the
    // organization, as for `GET ${SITE}`.
    method: 'GET',
    path: `${SITE}/site-spaces/:siteSpaceId`,
    query: z.strictObject({}),
    openapi: { operationId: 'getSiteSpaceById', summary: 'Get a site space', response: 'SiteSpace' },
    document: `query($site: ID!, $org: ID!, $id: ID!) {
      site(id: $site, organizationId: $org) { id }
      node(id: $id) { ... on SiteSpace { site { id: siteId } ${SITE_SPACE_FIELDS} } } }`,
    variables: ({ params }) => ({ site: params.siteId, org: params.organizationId, id: params.siteSpaceId }),
    result: (d, { params }) => {
      if (!d.node || d.node.site?.id !== params.siteId) throw notFound('Site space');
      return toRestSiteSpace(d.node);
    },
  },
  ...itemRows({
    path: `${SITE}/site-spaces/:siteSpaceId`,
    param: 'siteSpaceId',
    key: 'siteSpaceId',
    payload: 'siteSpace',
    fields: SITE_SPACE_FIELDS,
    toRest: toRestSiteSpace,
    update: { mutation: 'updateSiteSpace', input: 'UpdateSiteSpaceInput', body: UpdateSiteSpaceInput },
    remove: { mutation: 'deleteSiteSpace', input: 'SiteSpaceKeyInput' },
    move: { mutation: 'moveSiteSpace', body: MoveSiteSpaceBody },
  }),
];
