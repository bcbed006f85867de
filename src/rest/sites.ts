// REST routes for sites, sections, section groups, site spaces, the published view and the
// structure sort, on the GraphQL operations of graphql/sites.ts.
import { z } from 'zod';
import { type RestRoute, listQueryShape, pageVariables, listEnvelope, compact, restEnum, contractEnum, q, CONNECTION_FIELDS } from './router.ts';
import { SPACE_FIELDS, toRestSpace } from './spaces.ts';
import { CreateSiteInput, NEW_SITE_CONTENT, PutAdaptiveSchemaInput, SITE_TYPES, SITE_VISIBILITIES, UpdateSiteInput } from '../domain/sites.ts';
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

const ORG = '/v1/orgs/:organizationId';
const SITE = `${ORG}/sites/:siteId`;

// ------------------------------------------------------------------ representations

export const SITE_FIELDS = `
  id organizationId type title visibility published basename hostname proxy { origin target }
  adaptiveContent { enabled } agentsContext createdAt siteSpaceCount defaultSpaceId
  urls { location app published }
`;

export function toRestSite(s: any) {
  return compact(
    {
      object: 'site',
      id: s.id,
      type: restEnum(s.type),
      title: s.title,
      hostname: s.hostname,
      basename: s.basename,
      proxy: s.proxy ?? undefined,
      visibility: restEnum(s.visibility),
      published: s.published,
      siteSpaces: s.siteSpaceCount,
      createdAt: s.createdAt,
      adaptiveContent: s.adaptiveContent,
      agentsContext: s.agentsContext,
      features: [],
      urls: compact(s.urls),
      // Required by the OpenAPI document without being declared (contract notes): the space of
      // the default site space.
      defaultSpace: s.defaultSpaceId,
    },
    ['defaultSpace'],
  );
}

export const SITE_SPACE_FIELDS = `
  id path sectionId condition title default urls { location published }
  space { ${SPACE_FIELDS} }
`;

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

export const SECTION_FIELDS = `
  id title description path condition icon groupId default urls { location published }
  siteSpaces { ${SITE_SPACE_FIELDS} }
`;

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

export const GROUP_FIELDS = `id title icon sections { ${SECTION_FIELDS} }`;

export function toRestGroup(g: any) {
  return compact({ object: 'site-section-group', id: g.id, title: g.title, icon: g.icon, sections: g.sections.map(toRestSection) });
}

const ITEM_FIELDS = `
  __typename
  ... on SiteSection { ${SECTION_FIELDS} }
  ... on SiteSectionGroup { ${GROUP_FIELDS} }
  ... on SiteSpace { ${SITE_SPACE_FIELDS} }
`;

export function toRestItem(item: any) {
  if (item.__typename === 'SiteSection') return toRestSection(item);
  if (item.__typename === 'SiteSectionGroup') return toRestGroup(item);
  return toRestSiteSpace(item);
}

export const STRUCTURE_FIELDS = `structure { type items { ${ITEM_FIELDS} } }`;

export function toRestStructure(s: any) {
  return { type: s.type, structure: s.items.map(toRestItem) };
}

/**
 * The published view's customizations: the defaults of a site nobody customized (site
 * customization is not part of this gateway). Shaped to the contract's SiteCustomizationSettings.
 */
export const DEFAULT_CUSTOMIZATION = {
  styling: {
    theme: 'clean',
    primaryColor: { light: '#346DDB', dark: '#346DDB' },
    infoColor: { light: '#787878', dark: '#787878' },
    successColor: { light: '#00C950', dark: '#00C950' },
    warningColor: { light: '#FE9A00', dark: '#FE9A00' },
    dangerColor: { light: '#FB2C36', dark: '#FB2C36' },
    corners: 'rounded',
    depth: 'subtle',
    links: 'default',
    font: 'Inter',
    monospaceFont: 'IBMPlexMono',
    background: 'plain',
    icons: 'regular',
    sidebar: { background: 'default', list: 'default' },
    search: 'prominent',
  },
  internationalization: { locale: 'en' },
  favicon: {},
  header: { preset: 'default', links: [] },
  footer: { groups: [] },
  themes: { default: 'light', toggeable: true },
  pdf: { enabled: true },
  feedback: { enabled: false },
  ai: { mode: 'search' },
  advancedCustomization: { enabled: false },
  trademark: { enabled: true },
  externalLinks: { target: 'self' },
  pagination: { enabled: true },
  pageActions: { externalAI: true, markdown: true },
  git: { showEditLink: false },
  privacyPolicy: {},
  socialPreview: {},
  insights: { trackingCookie: true },
} as const;

// ------------------------------------------------------------------ query strings

const shareKeyQuery = { shareKey: z.string().max(512).optional() };
const siteTypeList = z
  .union([contractEnum(SITE_TYPES), z.array(contractEnum(SITE_TYPES))])
  .transform((v) => (Array.isArray(v) ? v : [v]))
  .optional();
const SiteListQuery = z.strictObject({ ...listQueryShape, space: q.string(200), title: q.string(128), published: q.bool(), type: siteTypeList });

const keys = (params: Record<string, string>) => ({ organizationId: params.organizationId, siteId: params.siteId });

// ------------------------------------------------------------------ bodies in the contract's words

const Id = z.string().min(1).max(200);

/** `spaces`: space ids, or `sample` / `empty` for a new space (the domain's `spaceIds` / `newSpace`). */
const CreateSiteBody = CreateSiteInput.omit({ spaceIds: true, newSpace: true }).extend({
  type: contractEnum(SITE_TYPES).optional(),
  visibility: contractEnum(SITE_VISIBILITIES).optional(),
  spaces: z.union([z.array(Id).max(100), z.enum(NEW_SITE_CONTENT)]).optional(),
});
const UpdateSiteBody = UpdateSiteInput.extend({ visibility: contractEnum(SITE_VISIBILITIES).optional() });

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

// ------------------------------------------------------------------ routes

export const routes: RestRoute[] = [
  // ---- sites
  {
    method: 'GET',
    path: `${ORG}/sites`,
    query: SiteListQuery,
    document: `query($org: ID!, $first: Int, $after: String, $space: String, $title: String, $published: Boolean, $type: [SiteType!]) {
      organization(id: $org) { sites(first: $first, after: $after, space: $space, title: $title, published: $published, type: $type) {
        ${CONNECTION_FIELDS} nodes { ${SITE_FIELDS} } } } }`,
    variables: ({ params, query }) => ({
      org: params.organizationId,
      ...pageVariables(query),
      space: query.space ?? null,
      title: query.title ?? null,
      published: query.published ?? null,
      type: query.type ?? null,
    }),
    result: (d) => listEnvelope(d.organization.sites, toRestSite),
  },
  {
    method: 'POST',
    path: `${ORG}/sites`,
    body: CreateSiteBody,
    fieldNames: { spaceIds: 'spaces', newSpace: 'spaces' },
    document: `mutation($input: CreateSiteInput!) { createSite(input: $input) { site { ${SITE_FIELDS} } } }`,
    variables: ({ params, body }) => ({
      input: {
        organizationId: params.organizationId,
        type: body.type,
        title: body.title,
        visibility: body.visibility,
        spaceIds: Array.isArray(body.spaces) ? body.spaces : undefined,
        newSpace: typeof body.spaces === 'string' ? body.spaces : undefined,
      },
    }),
    result: (d) => toRestSite(d.createSite.site),
    status: 201,
  },
  {
    method: 'GET',
    path: SITE,
    document: `query($id: ID!, $org: ID!) { site(id: $id, organizationId: $org) { ${SITE_FIELDS} } }`,
    variables: ({ params }) => ({ id: params.siteId, org: params.organizationId }),
    result: (d) => toRestSite(d.site),
  },
  {
    method: 'PATCH',
    path: SITE,
    body: UpdateSiteBody,
    document: `mutation($input: UpdateSiteInput!) { updateSite(input: $input) { site { ${SITE_FIELDS} } } }`,
    variables: ({ params, body }) => ({ input: { ...keys(params), ...body } }),
    result: (d) => toRestSite(d.updateSite.site),
  },
  {
    method: 'DELETE',
    path: SITE,
    document: `mutation($input: SiteKeyInput!) { deleteSite(input: $input) { deleted } }`,
    variables: ({ params }) => ({ input: keys(params) }),
    status: (d) => (d.deleteSite.deleted ? 205 : 204),
  },
  {
    method: 'POST',
    path: `${SITE}/publish`,
    document: `mutation($input: SiteKeyInput!) { publishSite(input: $input) { site { ${SITE_FIELDS} } } }`,
    variables: ({ params }) => ({ input: keys(params) }),
    result: (d) => toRestSite(d.publishSite.site),
  },
  {
    method: 'POST',
    path: `${SITE}/unpublish`,
    document: `mutation($input: SiteKeyInput!) { unpublishSite(input: $input) { site { ${SITE_FIELDS} } } }`,
    variables: ({ params }) => ({ input: keys(params) }),
    result: (d) => toRestSite(d.unpublishSite.site),
  },
  {
    method: 'GET',
    path: `${SITE}/published`,
    query: z.strictObject(shareKeyQuery),
    document: `query($id: ID!, $org: ID!, $shareKey: String) {
      publishedSite(siteId: $id, organizationId: $org, shareKey: $shareKey) { ${SITE_FIELDS} ${STRUCTURE_FIELDS} } }`,
    variables: ({ params, query }) => ({ id: params.siteId, org: params.organizationId, shareKey: query.shareKey ?? null }),
    result: (d) => ({
      object: 'published-content-site',
      site: toRestSite(d.publishedSite),
      structure: toRestStructure(d.publishedSite.structure),
      customizations: { site: DEFAULT_CUSTOMIZATION, siteSpaces: {} },
      scripts: [],
    }),
  },
  {
    method: 'GET',
    path: `${SITE}/structure`,
    query: z.strictObject(shareKeyQuery),
    document: `query($id: ID!, $org: ID!, $shareKey: String) { publishedSite(siteId: $id, organizationId: $org, shareKey: $shareKey) { id ${STRUCTURE_FIELDS} } }`,
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

  // ---- adaptive content
  {
    method: 'GET',
    path: `${SITE}/adaptive-schema`,
    document: `query($id: ID!, $org: ID!) { siteAdaptiveSchema(siteId: $id, organizationId: $org) { jsonSchema updatedAt } }`,
    variables: ({ params }) => ({ id: params.siteId, org: params.organizationId }),
    result: (d) => ({ object: 'site-adaptive-schema', ...d.siteAdaptiveSchema }),
  },
  {
    method: 'PUT',
    path: `${SITE}/adaptive-schema`,
    body: PutAdaptiveSchemaInput,
    document: `mutation($input: UpdateSiteAdaptiveSchemaInput!) { updateSiteAdaptiveSchema(input: $input) { adaptiveSchema { jsonSchema updatedAt } } }`,
    variables: ({ params, body }) => ({ input: { ...keys(params), jsonSchema: body.jsonSchema } }),
    result: (d) => ({ object: 'site-adaptive-schema', ...d.updateSiteAdaptiveSchema.adaptiveSchema }),
  },
  {
    method: 'GET',
    path: `${SITE}/adaptive-schema/template-conditions`,
    document: `query($id: ID!, $org: ID!) { site(id: $id, organizationId: $org) { templateConditions { condition description } } }`,
    variables: ({ params }) => ({ id: params.siteId, org: params.organizationId }),
    result: (d) => ({ items: d.site.templateConditions }),
  },

  // ---- sections
  {
    method: 'GET',
    path: `${SITE}/sections`,
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
    document: `query($site: ID!, $org: ID!, $id: ID!) {
      site(id: $site, organizationId: $org) { id }
      node(id: $id) { ... on SiteSection { site { id } ${SECTION_FIELDS} } } }`,
    variables: ({ params }) => ({ site: params.siteId, org: params.organizationId, id: params.siteSectionId }),
    result: (d, { params }) => {
      if (!d.node || d.node.site?.id !== params.siteId) throw notFound('Site section');
      return toRestSection(d.node);
    },
  },
  {
    method: 'PATCH',
    path: `${SITE}/sections/:siteSectionId`,
    body: UpdateSectionInput,
    document: `mutation($input: UpdateSiteSectionInput!) { updateSiteSection(input: $input) { section { ${SECTION_FIELDS} } } }`,
    variables: ({ params, body }) => ({ input: { ...keys(params), sectionId: params.siteSectionId, ...body } }),
    result: (d) => toRestSection(d.updateSiteSection.section),
  },
  {
    method: 'DELETE',
    path: `${SITE}/sections/:siteSectionId`,
    document: `mutation($input: SiteSectionKeyInput!) { deleteSiteSection(input: $input) { deleted } }`,
    variables: ({ params }) => ({ input: { ...keys(params), sectionId: params.siteSectionId } }),
    status: (d) => (d.deleteSiteSection.deleted ? 205 : 204),
  },
  {
    method: 'POST',
    path: `${SITE}/sections/:siteSectionId/move`,
    body: MoveSectionBody,
    document: `mutation($input: MoveSiteStructureItemInput!) { moveSiteSection(input: $input) { section { ${SECTION_FIELDS} } } }`,
    variables: ({ params, body }) => ({ input: { ...keys(params), id: params.siteSectionId, position: body.position } }),
    result: (d) => toRestSection(d.moveSiteSection.section),
  },

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
  {
    method: 'PATCH',
    path: `${SITE}/section-groups/:siteSectionGroupId`,
    body: UpdateGroupInput,
    document: `mutation($input: UpdateSiteSectionGroupInput!) { updateSiteSectionGroup(input: $input) { group { ${GROUP_FIELDS} } } }`,
    variables: ({ params, body }) => ({ input: { ...keys(params), groupId: params.siteSectionGroupId, ...body } }),
    result: (d) => toRestGroup(d.updateSiteSectionGroup.group),
  },
  {
    method: 'DELETE',
    path: `${SITE}/section-groups/:siteSectionGroupId`,
    document: `mutation($input: SiteSectionGroupKeyInput!) { deleteSiteSectionGroup(input: $input) { deleted } }`,
    variables: ({ params }) => ({ input: { ...keys(params), groupId: params.siteSectionGroupId } }),
    status: (d) => (d.deleteSiteSectionGroup.deleted ? 205 : 204),
  },
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
  {
    method: 'POST',
    path: `${SITE}/section-groups/:siteSectionGroupId/move`,
    body: MoveGroupBody,
    document: `mutation($input: MoveSiteStructureItemInput!) { moveSiteSectionGroup(input: $input) { group { ${GROUP_FIELDS} } } }`,
    variables: ({ params, body }) => ({ input: { ...keys(params), id: params.siteSectionGroupId, position: body.position } }),
    result: (d) => toRestGroup(d.moveSiteSectionGroup.group),
  },

  // ---- site spaces
  {
    method: 'GET',
    path: `${SITE}/site-spaces`,
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
    document: `query($site: ID!, $org: ID!, $id: ID!) {
      site(id: $site, organizationId: $org) { id }
      node(id: $id) { ... on SiteSpace { site { id } ${SITE_SPACE_FIELDS} } } }`,
    variables: ({ params }) => ({ site: params.siteId, org: params.organizationId, id: params.siteSpaceId }),
    result: (d, { params }) => {
      if (!d.node || d.node.site?.id !== params.siteId) throw notFound('Site space');
      return toRestSiteSpace(d.node);
    },
  },
  {
    method: 'PATCH',
    path: `${SITE}/site-spaces/:siteSpaceId`,
    body: UpdateSiteSpaceInput,
    document: `mutation($input: UpdateSiteSpaceInput!) { updateSiteSpace(input: $input) { siteSpace { ${SITE_SPACE_FIELDS} } } }`,
    variables: ({ params, body }) => ({ input: { ...keys(params), siteSpaceId: params.siteSpaceId, ...body } }),
    result: (d) => toRestSiteSpace(d.updateSiteSpace.siteSpace),
  },
  {
    method: 'DELETE',
    path: `${SITE}/site-spaces/:siteSpaceId`,
    document: `mutation($input: SiteSpaceKeyInput!) { deleteSiteSpace(input: $input) { deleted } }`,
    variables: ({ params }) => ({ input: { ...keys(params), siteSpaceId: params.siteSpaceId } }),
    status: (d) => (d.deleteSiteSpace.deleted ? 205 : 204),
  },
  {
    method: 'POST',
    path: `${SITE}/site-spaces/:siteSpaceId/move`,
    body: MoveSiteSpaceBody,
    document: `mutation($input: MoveSiteStructureItemInput!) { moveSiteSpace(input: $input) { siteSpace { ${SITE_SPACE_FIELDS} } } }`,
    variables: ({ params, body }) => ({ input: { ...keys(params), id: params.siteSpaceId, position: body.position } }),
    result: (d) => toRestSiteSpace(d.moveSiteSpace.siteSpace),
  },
];
