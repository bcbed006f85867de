// REST routes for sites: the site, publishing, the published view and adaptive content, on the
// GraphQL operations of graphql/sites.ts. Sections, section groups, site spaces and the structure
// are in rest/site-structure.ts.
import { z } from 'zod';
import { type RestRoute, listQueryShape, pageVariables, listEnvelope, compact, restEnum, contractEnum, q, CONNECTION_FIELDS } from './router.ts';
import { PUBLISHED_STRUCTURE_FIELDS, toRestStructure } from './site-structure.ts';
import { CreateSiteInput, NEW_SITE_CONTENT, PutAdaptiveSchemaInput, SITE_TYPES, SITE_VISIBILITIES, UpdateSiteInput } from '../domain/sites.ts';

const ORG = '/v1/orgs/:organizationId';
const SITE = `${ORG}/sites/:siteId`;

// ------------------------------------------------------------------ representations

export const SITE_FIELDS = `
  id: siteId organizationId type title visibility published basename hostname proxy { origin target }
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
    published: true,
    query: z.strictObject(shareKeyQuery),
    document: `query($id: ID!, $org: ID!, $shareKey: String) {
      publishedSite(siteId: $id, organizationId: $org, shareKey: $shareKey) { ${SITE_FIELDS} ${PUBLISHED_STRUCTURE_FIELDS} } }`,
    variables: ({ params, query }) => ({ id: params.siteId, org: params.organizationId, shareKey: query.shareKey ?? null }),
    result: (d) => ({
      object: 'published-content-site',
      site: toRestSite(d.publishedSite),
      structure: toRestStructure(d.publishedSite.structure),
      customizations: { site: DEFAULT_CUSTOMIZATION, siteSpaces: {} },
      scripts: [],
    }),
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
];
