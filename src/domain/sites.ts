// Published sites: the site itself, publishing and adaptive content (visitor schema and template
// conditions). Sections, section groups, site spaces, moves and reading order live in
// `site-structure.ts` (on the ordering model of `site-order.ts`); share links in `share-links.ts`.
//
// Access (docs/decisions.md "Sites and audiences"; the rules are rows and methods of src/auth/):
//   - reading a site's settings and structure: any organization member with a role (`read` and
//     up; guests get 403, outsiders 404);
//   - every write (create, update, delete, publish, structure, adaptive schema, share links):
//     the organization's `admin` role;
//   - the published view and the reads that take `shareKey` (`Access.siteReader`): organization
//     members always (a preview, even unpublished); anyone else only when the site is published
//     and public/unlisted, or share-link with an active key of this site. A given key must be an
//     active key of the site, whoever asks; otherwise 404.
import { z } from 'zod';
import { Ajv, type ErrorObject } from 'ajv';
import type { DomainContext } from './context.ts';
import type { SiteAction } from '../auth/access.ts';
import type { Prisma, Site, Space } from '../generated/prisma/client.ts';
import { newId } from '../lib/ids.ts';
import { badRequest, notFound, parseInput } from '../lib/errors.ts';
import { applyChanges, slugify } from './revisions.ts';
import { createSpaceInTransaction } from './spaces.ts';
import { transaction } from '../db/transaction.ts';
import { recordEvent } from '../events/log.ts';
import { hasSections, structural } from './site-order.ts';

// ------------------------------------------------------------------ values and inputs

// The model's values (GraphQL and Prisma); REST's `share-link` spelling is translated in rest/.
export const SITE_TYPES = ['basic', 'premium', 'ultimate', 'sponsored', 'legacy_basic', 'legacy_premium'] as const satisfies readonly Site['type'][];
export const SITE_VISIBILITIES = ['public', 'unlisted', 'share_link', 'visitor_auth'] as const satisfies readonly Site['visibility'][];
export const AGENTS_CONTEXTS = ['excluded', 'included'] as const;
export const NEW_SITE_CONTENT = ['sample', 'empty'] as const;

export const SiteTitle = z.string().min(2).max(128);
export const SiteBasename = z
  .string()
  .min(1)
  .max(100)
  .regex(/^[A-Za-z0-9._~-]+(\/[A-Za-z0-9._~-]+)*$/, 'URL path segments: letters, digits, ".", "_", "~", "-", separated by "/"');
/** Host plus path, e.g. `example.com/docs` (the contract's SiteProxyOrigin pattern). */
export const SiteProxyOrigin = z
  .string()
  .max(512)
  .regex(/^([\w-]+\.)*[\w-]+\.[a-zA-Z]{2,}(\/[\w-]+)+$/, 'a host and a path, such as example.com/docs');
/** An object id in an input. */
export const Id = z.string().min(1).max(200);

const readOnly = (message: string) =>
  z
    .unknown()
    .refine((v) => v === undefined, message)
    .optional();

export const CreateSiteInput = z.strictObject({
  type: z.enum(SITE_TYPES).optional(),
  title: SiteTitle.optional(),
  visibility: z.enum(SITE_VISIBILITIES).optional(),
  /** Spaces to show at the root level, in order. */
  spaceIds: z.array(Id).max(100).optional(),
  /** Or a new space for the site: `sample` (a few sample pages) or `empty`. */
  newSpace: z.enum(NEW_SITE_CONTENT).optional(),
});

export const UpdateSiteInput = z.strictObject({
  title: SiteTitle.optional(),
  visibility: z.enum(SITE_VISIBILITIES).optional(),
  basename: SiteBasename.optional(),
  adaptiveContent: z.strictObject({ enabled: z.boolean() }).optional(),
  agentsContext: z.enum(AGENTS_CONTEXTS).optional(),
  defaultSiteSpace: Id.optional(),
  defaultSiteSection: Id.optional(),
  proxy: SiteProxyOrigin.nullable().optional(),
  published: readOnly('is read-only: publish or unpublish with POST …/sites/{siteId}/publish or …/unpublish'),
});

// ------------------------------------------------------------------ access

/**
 * Load a site the caller may reach with `action` (src/auth/access.ts: 404 for outsiders and for a
 * site of another organization than the path's; 403 below the action's role).
 */
export async function requireSite(ctx: DomainContext, organizationId: string | undefined, siteId: string, action: SiteAction = 'site:read'): Promise<Site> {
  ctx.access.requireViewer();
  if (organizationId) await ctx.access.requireOrg(organizationId, 'organization:view');
  const site = await ctx.prisma.site.findUnique({ where: { id: siteId } });
  await ctx.access.requireSite(site, action, organizationId);
  return site!;
}

/** A space a site may show: of the site's organization, not deleted, and readable by the caller. */
export async function requireSiteContent(ctx: DomainContext, organizationId: string, spaceId: string, field: string): Promise<Space> {
  const space = await ctx.prisma.space.findUnique({ where: { id: spaceId } });
  if (!space || space.organizationId !== organizationId || space.deletedAt) throw badRequest(field, 'no such space in this organization');
  if (!(await ctx.access.spaceRole(space))) throw badRequest(field, 'no such space in this organization');
  return space;
}

/** `wanted`, or `wanted-2`, `wanted-3`… — the first not in `taken` (at most 100 characters). */
export function uniquePath(taken: Set<string>, wanted: string): string {
  const base = wanted.slice(0, 100) || 'untitled';
  if (!taken.has(base)) return base;
  for (let n = 2; ; n++) {
    const suffix = `-${n}`;
    const candidate = `${base.slice(0, 100 - suffix.length)}${suffix}`;
    if (!taken.has(candidate)) return candidate;
  }
}

// ------------------------------------------------------------------ sites

export type SiteListFilter = { space?: string; title?: string; published?: boolean; type?: Array<(typeof SITE_TYPES)[number]> };

export function siteListWhere(organizationId: string, filter: SiteListFilter): Prisma.SiteWhereInput {
  return {
    organizationId,
    ...(filter.space ? { siteSpaces: { some: { spaceId: filter.space } } } : {}),
    ...(filter.title ? { title: { contains: filter.title, mode: 'insensitive' as const } } : {}),
    ...(filter.published !== undefined ? { published: filter.published } : {}),
    ...(filter.type?.length ? { type: { in: filter.type } } : {}),
  };
}

export const SiteListFilterInput = z.strictObject({
  space: Id.optional(),
  title: z.string().max(128).optional(),
  published: z.boolean().optional(),
  type: z.array(z.enum(SITE_TYPES)).max(6).optional(),
});

/** Check the caller may list the organization's sites; returns the validated filter. */
export async function requireSiteList(ctx: DomainContext, organizationId: string, raw: unknown) {
  await ctx.access.requireOrg(organizationId, 'site:read');
  return parseInput(SiteListFilterInput, raw);
}

/** The content of a `sample` space: two pages, the second with a child page. */
const SAMPLE_PAGES = [
  { operation: 'insert_page', document: { markdown: '# Welcome\n\nThis is the first page of your new site. Edit it, or add pages beside it.' } },
  { operation: 'insert_page', document: { markdown: '# Getting started\n\nA site shows one or more spaces; each space is a tree of pages.' } },
];
const SAMPLE_CHILD = { operation: 'insert_page', document: { markdown: '# Quickstart\n\n1. Write a page.\n2. Publish the site.\n3. Share the link.' } };

export async function createSite(ctx: DomainContext, organizationId: string, raw: unknown): Promise<Site> {
  const viewer = ctx.access.requireViewer();
  await ctx.access.requireOrg(organizationId, 'site:write');
  const input = parseInput(CreateSiteInput, raw);
  if (input.spaceIds && input.newSpace) throw badRequest('newSpace', 'give either spaceIds or newSpace, not both');
  let spaces: Space[] = [];
  if (input.spaceIds) {
    const seen = new Set<string>();
    for (const [i, id] of input.spaceIds.entries()) {
      if (seen.has(id)) throw badRequest(`spaceIds.${i}`, 'listed twice');
      seen.add(id);
      spaces.push(await requireSiteContent(ctx, organizationId, id, `spaceIds.${i}`));
    }
  }
  const title = input.title ?? 'Untitled site';
  return transaction(ctx.prisma, async (tx) => {
    const id = newId('Site');
    const now = ctx.clock.now();
    await tx.site.create({
      data: {
        id,
        organizationId,
        type: input.type ?? 'basic',
        title,
        visibility: input.visibility ?? 'public',
        createdAt: now,
      },
    });
    if (input.newSpace) {
      // The same rules as POST ORG/spaces, inside this transaction.
      let space = await createSpaceInTransaction(ctx, tx, organizationId, { title: title.slice(0, 50) });
      if (input.newSpace === 'sample') {
        const base = { spaceId: space.id, createdById: viewer.user.id, storage: ctx.services.storage };
        const first = await applyChanges(tx, { ...base, baseRevisionId: space.revisionId!, changes: SAMPLE_PAGES });
        const parent = first.outcomes[1].pageId;
        const second = await applyChanges(tx, { ...base, baseRevisionId: first.revision.id, changes: [{ ...SAMPLE_CHILD, into: parent }] });
        space = await tx.space.update({ where: { id: space.id }, data: { revisionId: second.revision.id } });
      }
      spaces = [space];
    }
    if (spaces.length) {
      const taken = new Set<string>();
      const rows = spaces.map((s, position) => {
        const path = uniquePath(taken, slugify(s.title));
        taken.add(path);
        return { id: newId('SiteSpace'), siteId: id, sectionId: null, spaceId: s.id, path, position, createdAt: now };
      });
      await tx.siteSpace.createMany({ data: rows });
      await tx.site.update({ where: { id }, data: { defaultSiteSpaceId: rows[0].id } });
    }
    await recordEvent(tx, ctx, { type: 'site_created', organizationId, objectId: id, payload: { title, spaceIds: spaces.map((s) => s.id) } });
    return tx.site.findUniqueOrThrow({ where: { id } });
  });
}

export async function updateSite(ctx: DomainContext, organizationId: string | undefined, siteId: string, raw: unknown): Promise<Site> {
  const site = await requireSite(ctx, organizationId, siteId, 'site:write');
  const input = parseInput(UpdateSiteInput, raw);
  return structural(ctx, siteId, async (tx, snap) => {
    const data: Prisma.SiteUpdateInput = {};
    if (input.title !== undefined) data.title = input.title;
    if (input.visibility !== undefined) data.visibility = input.visibility;
    if (input.basename !== undefined) data.basename = input.basename;
    if (input.adaptiveContent !== undefined) data.adaptiveContentEnabled = input.adaptiveContent.enabled;
    if (input.agentsContext !== undefined) data.agentsContext = input.agentsContext;
    if (input.proxy !== undefined) data.proxy = input.proxy;
    let defaultSectionId = snap.defaultSiteSectionId;
    if (input.defaultSiteSection !== undefined) {
      if (!snap.sections.has(input.defaultSiteSection)) throw badRequest('defaultSiteSection', 'no such section in this site');
      data.defaultSiteSectionId = defaultSectionId = input.defaultSiteSection;
    }
    if (input.defaultSiteSpace !== undefined) {
      const ss = snap.siteSpaces.get(input.defaultSiteSpace);
      if (!ss) throw badRequest('defaultSiteSpace', 'no such site space in this site');
      if (hasSections(snap)) {
        // The contract: with sections, this marks the default site space of the default section.
        if (!defaultSectionId || ss.sectionId !== defaultSectionId) throw badRequest('defaultSiteSpace', 'not a site space of the default section');
        await tx.siteSection.update({ where: { id: defaultSectionId }, data: { defaultSiteSpaceId: ss.id } });
      } else {
        data.defaultSiteSpaceId = ss.id;
      }
    }
    const updated = await tx.site.update({ where: { id: siteId }, data: { ...data, updatedAt: ctx.clock.now() } });
    await recordEvent(tx, ctx, { type: 'site_updated', organizationId: site.organizationId, objectId: siteId, payload: { title: updated.title, fields: Object.keys(input) } });
    return updated;
  });
}

/** Idempotent: true when the site was deleted, false when it did not exist. */
export async function deleteSite(ctx: DomainContext, organizationId: string, siteId: string): Promise<boolean> {
  await ctx.access.requireOrg(organizationId, 'site:write');
  return transaction(ctx.prisma, async (tx) => {
    const r = await tx.site.deleteMany({ where: { id: siteId, organizationId } });
    if (r.count === 0) return false;
    await recordEvent(tx, ctx, { type: 'site_deleted', organizationId, objectId: siteId });
    // The organization's default content must not point at a deleted site.
    const org = await tx.organization.findUnique({ where: { id: organizationId }, select: { defaultContent: true } });
    const dc = org?.defaultContent as { site?: string } | null;
    if (dc?.site === siteId) await tx.organization.update({ where: { id: organizationId }, data: { defaultContent: null as never } });
    return true;
  });
}

/**
 * Publish (the contract's `POST SITE/publish`): the site becomes reachable by its audience. A site
 * without content cannot be published (400). Publishing a published site changes nothing.
 */
export async function publishSite(ctx: DomainContext, organizationId: string | undefined, siteId: string): Promise<Site> {
  const site = await requireSite(ctx, organizationId, siteId, 'site:write');
  return transaction(ctx.prisma, async (tx) => {
    const content = await tx.siteSpace.count({ where: { siteId, space: { deletedAt: null } } });
    if (content === 0) throw badRequest('siteSpaces', 'the site has no content to publish; add a space first');
    const updated = await tx.site.update({ where: { id: siteId }, data: { published: true, updatedAt: ctx.clock.now() } });
    await recordEvent(tx, ctx, { type: 'site_published', organizationId: site.organizationId, objectId: siteId, payload: { title: updated.title } });
    return updated;
  });
}

export async function unpublishSite(ctx: DomainContext, organizationId: string | undefined, siteId: string): Promise<Site> {
  const site = await requireSite(ctx, organizationId, siteId, 'site:write');
  return transaction(ctx.prisma, async (tx) => {
    const updated = await tx.site.update({ where: { id: siteId }, data: { published: false, updatedAt: ctx.clock.now() } });
    await recordEvent(tx, ctx, { type: 'site_unpublished', organizationId: site.organizationId, objectId: siteId, payload: { title: updated.title } });
    return updated;
  });
}

// ------------------------------------------------------------------ adaptive content

const UNSIGNED_DESCRIPTION = 'Unsigned claims of the site visitor.';
/** Claim names usable as `visitor.claims.<name>` (and never a prototype key). */
const CLAIM_NAME = '^(?!(?:__proto__|prototype|constructor)$)[A-Za-z_$][A-Za-z0-9_$]*$';

/**
 * The shape a site's visitor schema must have (the contract's SiteAdaptiveJSONSchema narrowed to
 * the seeds' boolean claims): a draft-07 object schema whose properties are boolean claims with a
 * description, plus an optional `unsigned` object of the same, no additional properties anywhere.
 */
const ADAPTIVE_META_SHAPE = {
  $id: 'docgraph:site-adaptive-schema-shape',
  type: 'object',
  required: ['type', 'properties', 'additionalProperties'],
  additionalProperties: false,
  properties: {
    $schema: { const: 'http://json-schema.org/draft-07/schema#' },
    type: { const: 'object' },
    properties: {
      type: 'object',
      maxProperties: 200,
      propertyNames: { pattern: CLAIM_NAME },
      properties: { unsigned: { $ref: '#/definitions/unsigned' } },
      additionalProperties: { $ref: '#/definitions/booleanClaim' },
    },
    additionalProperties: { const: false },
  },
  definitions: {
    booleanClaim: {
      type: 'object',
      required: ['type', 'description'],
      additionalProperties: false,
      properties: { type: { const: 'boolean' }, description: { type: 'string', minLength: 1, maxLength: 512 } },
    },
    unsigned: {
      type: 'object',
      required: ['type', 'description', 'properties', 'additionalProperties'],
      additionalProperties: false,
      properties: {
        type: { const: 'object' },
        description: { const: UNSIGNED_DESCRIPTION },
        properties: {
          type: 'object',
          maxProperties: 200,
          propertyNames: { pattern: CLAIM_NAME },
          additionalProperties: { $ref: '#/definitions/booleanClaim' },
        },
        additionalProperties: { const: false },
      },
    },
  },
} as const;

const ajv = new Ajv({ allErrors: false, strict: true });
const validateAdaptiveShape = ajv.compile(ADAPTIVE_META_SHAPE);

export type AdaptiveJsonSchema = {
  $schema?: string;
  type: 'object';
  properties: Record<string, { type: 'boolean'; description: string }> & {
    unsigned?: { type: 'object'; description: string; properties: Record<string, { type: 'boolean'; description: string }>; additionalProperties: false };
  };
  additionalProperties: false;
};

export const PutAdaptiveSchemaInput = z.strictObject({ jsonSchema: z.record(z.string(), z.unknown()) });

function ajvMessage(error: ErrorObject): { field: string; message: string } {
  const path = error.instancePath
    .split('/')
    .slice(1)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  let message = error.message ?? 'is invalid';
  if (error.keyword === 'additionalProperties') {
    path.push(String((error.params as { additionalProperty: string }).additionalProperty));
    message = 'is not allowed here';
  } else if (error.keyword === 'const') {
    message = `must be ${JSON.stringify((error.params as { allowedValue: unknown }).allowedValue)}`;
  } else if (error.keyword === 'required') {
    path.push(String((error.params as { missingProperty: string }).missingProperty));
    message = 'is required';
  } else if (error.keyword === 'propertyNames') {
    path.push(String((error.params as { propertyName: string }).propertyName));
    message = 'is not a valid claim name (letters, digits, "_" and "$", not starting with a digit)';
  } else if (error.keyword === 'pattern' && error.propertyName) {
    path.push(error.propertyName);
    message = 'is not a valid claim name (letters, digits, "_" and "$", not starting with a digit)';
  }
  return { field: ['jsonSchema', ...path].join('.'), message };
}

/** Validate a visitor schema: a valid draft-07 JSON Schema of the documented shape, else 400 with the reason. */
export function checkAdaptiveSchema(jsonSchema: unknown): AdaptiveJsonSchema {
  if (!validateAdaptiveShape(jsonSchema)) {
    const { field, message } = ajvMessage(validateAdaptiveShape.errors![0]);
    throw badRequest(field, message);
  }
  const draft07 = new Ajv({ strict: false });
  if (!draft07.validateSchema(jsonSchema as object)) {
    throw badRequest('jsonSchema', `not a valid JSON Schema (draft-07): ${draft07.errorsText(draft07.errors)}`);
  }
  return jsonSchema as unknown as AdaptiveJsonSchema;
}

export async function getAdaptiveSchema(ctx: DomainContext, organizationId: string | undefined, siteId: string) {
  const site = await requireSite(ctx, organizationId, siteId, 'site:read');
  if (site.adaptiveSchema == null) throw notFound('Adaptive schema');
  return { jsonSchema: site.adaptiveSchema as AdaptiveJsonSchema, updatedAt: site.adaptiveSchemaUpdatedAt ?? site.updatedAt };
}

export async function putAdaptiveSchema(ctx: DomainContext, organizationId: string | undefined, siteId: string, raw: unknown) {
  const before = await requireSite(ctx, organizationId, siteId, 'site:write');
  const { jsonSchema } = parseInput(PutAdaptiveSchemaInput, raw);
  const schema = checkAdaptiveSchema(jsonSchema);
  const now = ctx.clock.now();
  const site = await transaction(ctx.prisma, async (tx) => {
    const updated = await tx.site.update({
      where: { id: siteId },
      data: { adaptiveSchema: schema as unknown as Prisma.InputJsonValue, adaptiveSchemaUpdatedAt: now },
    });
    await recordEvent(tx, ctx, { type: 'site_adaptive_schema_updated', organizationId: before.organizationId, objectId: siteId });
    return updated;
  });
  return { jsonSchema: site.adaptiveSchema as AdaptiveJsonSchema, updatedAt: now };
}

/**
 * One condition per boolean claim: `visitor.claims.X`, then `visitor.claims.unsigned.Y`, each
 * sorted by name (the stored schema is jsonb, which does not keep the submitted key order).
 */
export function templateConditions(schema: unknown): Array<{ condition: string; description: string }> {
  const s = schema as AdaptiveJsonSchema | null;
  if (!s?.properties) return [];
  const byName = (a: [string, unknown], b: [string, unknown]) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0);
  const out: Array<{ condition: string; description: string }> = [];
  for (const [name, prop] of Object.entries(s.properties).sort(byName)) {
    if (name === 'unsigned') continue;
    if ((prop as { type?: string }).type === 'boolean') out.push({ condition: `visitor.claims.${name}`, description: (prop as { description: string }).description });
  }
  for (const [name, prop] of Object.entries(s.properties.unsigned?.properties ?? {}).sort(byName)) {
    if (prop.type === 'boolean') out.push({ condition: `visitor.claims.unsigned.${name}`, description: prop.description });
  }
  return out;
}
