// REST routes for space content, on the GraphQL fields of graphql/content.ts. The selections and
// mappers are exported so change requests serve `CR/content…` from the same representations:
// select `revision { … }` of the change request instead of the space's.
import { z } from 'zod';
import {
  type RestRoute,
  listQueryShape,
  contentQueryShape,
  pageVariables,
  listEnvelope,
  compact,
  restEnum,
  contractEnum,
  q,
  CONNECTION_FIELDS,
  type ConnectionData,
} from './router.ts';
import { SPACE_FIELDS, toRestSpace } from './spaces.ts';
import { ORGANIZATION_FIELDS, toRestOrganization } from './organizations.ts';
import { ContentChangesInput } from '../domain/revisions.ts';
import { IMPORT_SOURCES, ImportContentInput } from '../domain/imports.ts';
import { LINK_STATUSES, fileNotInRevision, pageNotInRevision } from '../domain/content.ts';
import { badRequest, notFound } from '../lib/errors.ts';

// ------------------------------------------------------------------ selections

export const FILE_FIELDS = 'id name contentType downloadURL size dimensions { width height }';

const PAGE_BASE_FIELDS = 'id: pageId parentId title emoji icon type slug path description href target hidden noIndex noRobotsIndex layout createdAt updatedAt urls { app }';
/** A page with its markdown body (no children: use `allPages`/`descendants` and `toRestPageTree`). */
export const PAGE_FIELDS = `${PAGE_BASE_FIELDS} markdown`;
/** Same, with the body chosen by a `$asDocument: Boolean!` variable the document must declare. */
export const PAGE_FIELDS_WITH_FORMAT = `${PAGE_BASE_FIELDS} markdown @skip(if: $asDocument) document @include(if: $asDocument)`;

const REVISION_BASE_FIELDS = `
  id parents type createdAt variables reusableContents urls { app published public }
  allFiles { ${FILE_FIELDS} }
  allPages { ${PAGE_FIELDS} }
`;

type RevisionExtension = { fields: string; map: (node: any, out: Record<string, unknown>) => void };
const revisionExtensions: RevisionExtension[] = [];

/**
 * Let another area add to the Revision representation (e.g. change requests: `mergedFrom { … }`,
 * which the contract requires on `type: merge` revisions). Call at module load: route documents
 * are read when the route table is built.
 */
export function extendRevisionRepresentation(ext: RevisionExtension) {
  revisionExtensions.push(ext);
}

/** The selection for `toRestRevision` (a function: it includes registered extensions). */
export function revisionFields() {
  return `${REVISION_BASE_FIELDS} ${revisionExtensions.map((e) => e.fields).join(' ')}`;
}
/** The base selection, without extensions (prefer `revisionFields()`). */
export const REVISION_FIELDS = REVISION_BASE_FIELDS;

export const LINK_FIELDS = `
  status relation
  target { kind raw url pageId fileId page { ${PAGE_FIELDS} } file { ${FILE_FIELDS} } }
  locations { ${PAGE_FIELDS} }
`;
/** Select this beside a link listing or backlinks: the space and organization of the locations. */
export const LOCATION_CONTEXT_FIELDS = `${SPACE_FIELDS} organization { ${ORGANIZATION_FIELDS} }`;

// ------------------------------------------------------------------ mappers

export function toRestFile(f: any) {
  return compact({ id: f.id, name: f.name, contentType: f.contentType, downloadURL: f.downloadURL, size: f.size, dimensions: f.dimensions ?? undefined });
}

/** One page; `children` are already-mapped REST pages (omit for a location reference). */
export function toRestPage(p: any, children: unknown[] = []) {
  const base = {
    object: 'revision-page',
    id: p.id,
    title: p.title,
    emoji: p.emoji,
    icon: p.icon,
    createdAt: p.createdAt,
    updatedAt: p.updatedAt,
  };
  if (p.type === 'group') {
    return compact({ ...base, kind: 'group', type: 'group', slug: p.slug, path: p.path, hidden: p.hidden, noIndex: p.noIndex, noRobotsIndex: p.noRobotsIndex, pages: children });
  }
  if (p.type === 'link') {
    return compact({ ...base, kind: 'link', type: 'link', target: p.target ?? { kind: 'url', url: p.href ?? '' }, href: p.href, hidden: p.hidden });
  }
  return compact({
    ...base,
    kind: 'sheet',
    type: 'document',
    urls: compact(p.urls ?? {}),
    slug: p.slug,
    path: p.path,
    description: p.description,
    pages: children,
    layout: p.layout,
    hidden: p.hidden,
    noIndex: p.noIndex,
    noRobotsIndex: p.noRobotsIndex,
    // The contract's Document: exactly one of markdown or document.
    ...(p.document !== undefined && p.document !== null ? { document: p.document } : { markdown: p.markdown ?? '' }),
  });
}

/** Nest a pre-order flat list (each page with `parentId`) under `rootParentId`. */
export function toRestPageTree(flat: any[], rootParentId: string | null = null): unknown[] {
  const byParent = new Map<string | null, any[]>();
  for (const p of flat) {
    const list = byParent.get(p.parentId ?? null) ?? [];
    list.push(p);
    byParent.set(p.parentId ?? null, list);
  }
  const build = (parentId: string | null): unknown[] => (byParent.get(parentId) ?? []).map((p) => toRestPage(p, build(p.id)));
  return build(rootParentId);
}

/** A page with its whole subtree, from `page { …fields descendants { …fields } }`. */
export function toRestPageWithChildren(page: any) {
  return toRestPage(page, toRestPageTree(page.descendants ?? [], page.id));
}

export function toRestRevision(r: any) {
  const out: Record<string, unknown> = compact({
    object: 'revision',
    id: r.id,
    parents: r.parents,
    type: r.type,
    createdAt: r.createdAt,
    pages: toRestPageTree(r.allPages ?? []),
    files: (r.allFiles ?? []).map(toRestFile),
    reusableContents: r.reusableContents ?? [],
    variables: r.variables ?? {},
    urls: compact(r.urls ?? {}),
  });
  for (const ext of revisionExtensions) ext.map(r, out);
  return out;
}

type LocationContext = { organization: unknown; space: unknown };

/** `{organization, space}` of content locations, from a node selected with LOCATION_CONTEXT_FIELDS. */
export function locationContext(space: any): LocationContext {
  return { organization: toRestOrganization(space.organization), space: toRestSpace(space) };
}

export function toRestPageLocation(page: any, where: LocationContext) {
  return { kind: 'page', ...where, page: toRestPage(page) };
}

export function toRestLink(l: any, where: LocationContext) {
  let targetReference: unknown;
  if (l.target.page) targetReference = toRestPageLocation(l.target.page, where);
  else if (l.target.file) targetReference = { kind: 'file', ...where, file: toRestFile(l.target.file) };
  // URLs, and broken page/file references (their target does not exist): the link as written.
  else targetReference = { kind: 'url', url: l.target.url ?? l.target.raw };
  return {
    status: restEnum(l.status),
    relation: l.relation,
    targetReference,
    locationReferences: (l.locations ?? []).map((p: any) => toRestPageLocation(p, where)),
  };
}

/** The link-listing envelope: list + `stats {total, broken: {total}}`. */
export function toRestLinkListing(connection: ConnectionData<any> & { stats: { total: number; broken: number } }, where: LocationContext) {
  return listEnvelope(connection, (l) => toRestLink(l, where), { stats: { total: connection.stats.total, broken: { total: connection.stats.broken } } });
}

/** `{object, page: {object, id, urls.location}}` outcome of a content-change batch (0.202 shape). */
export function toRestContentChange(c: any) {
  if (c.object === 'deleted_page') return { object: 'deleted_page', page: c.pageId };
  return compact({ object: c.object, ref: c.ref, page: { object: 'page', id: c.pageId, urls: { location: c.location } } });
}

/** The answer of `POST …/content` on a space, for /v1/openapi.json. */
const SpaceContentUpdate = z.object({
  object: z.literal('space-content-update'),
  revision: z.string().describe('The id of the revision the batch created'),
  changes: z.array(z.looseObject({ object: z.string() })),
  insertedFiles: z.array(z.looseObject({ id: z.string(), name: z.string() })),
});

// ------------------------------------------------------------------ query shapes

const formatShape = {
  format: z.enum(['markdown', 'document']).optional(),
  evaluated: q.bool(),
};
const linkStatus = contractEnum(LINK_STATUSES).optional();
/** `POST …/content/import`, with the contract's `github-wiki` spelling of sources. */
export const ImportContentBody = ImportContentInput.extend({ source: contractEnum(IMPORT_SOURCES) });

const SPACE = '/v1/spaces/:spaceId';

// ------------------------------------------------------------------ import runs

/** The import job as REST shows it: an import run. */
export const IMPORT_RUN_FIELDS = 'id state error url source spaceId changeRequestId organizationId createdAt finishedAt importedResources totalResources revisionId urls { location }';

const RUN_STATUS = { pending: 'pending', running: 'in-progress', complete: 'completed', failed: 'failed' } as const;

/** The 0.202 `ContentImportRun`, plus the fields of the 0.130 import result once complete (`revision`, counts). */
export const ImportRunShape = z.object({
  object: z.literal('import-run'),
  id: z.string(),
  status: z.enum(['pending', 'in-progress', 'completed', 'failed']),
  reason: z.string().optional(),
  source: z.object({ type: z.literal('website'), url: z.string() }).optional(),
  target: z.object({ space: z.string(), changeRequest: z.string().optional() }),
  createdAt: z.string(),
  completedAt: z.string().optional(),
  urls: z.object({ location: z.string() }),
  revision: z.string().optional().describe('Extension: the revision the import wrote, once completed'),
  importedResources: z.number().int(),
  totalResources: z.number().int(),
});

/** The 202 of the import routes, for /v1/openapi.json. */
export const IMPORT_ACCEPTED = {
  202: {
    description: 'The import is still running after the wait (IMPORT_WAIT_SECONDS): the import run; poll its `urls.location` until `completed` (then `revision`) or `failed` (then `reason`)',
    response: ImportRunShape,
    headers: { Location: { description: 'API URL of the import run to poll', schema: { type: 'string' } } },
  },
};

// Route documents are getters so that representation extensions registered by other areas at
// module load are included when the route table is built.
export const routes: RestRoute[] = [
  {
    method: 'GET',
    path: `${SPACE}/content`,
    query: z.strictObject(contentQueryShape),
    get document() {
      return `query($id: ID!) { space(id: $id) { revision { ${revisionFields()} } } }`;
    },
    variables: ({ params }) => ({ id: params.spaceId }),
    result: (d) => toRestRevision(d.space.revision),
  },
  {
    method: 'GET',
    path: `${SPACE}/content/pages`,
    query: z.strictObject(contentQueryShape),
    document: `query($id: ID!) { space(id: $id) { revision { allPages { ${PAGE_FIELDS} } } } }`,
    variables: ({ params }) => ({ id: params.spaceId }),
    result: (d) => ({ pages: toRestPageTree(d.space.revision.allPages) }),
  },
  {
    method: 'GET',
    path: `${SPACE}/content/page/:pageId`,
    query: z.strictObject({ ...contentQueryShape, ...formatShape }),
    document: `query($id: ID!, $pageId: String!, $asDocument: Boolean!) {
      space(id: $id) { revision { page(id: $pageId) { ${PAGE_FIELDS_WITH_FORMAT} descendants { ${PAGE_FIELDS_WITH_FORMAT} } } } }
    }`,
    variables: ({ params, query }) => ({ id: params.spaceId, pageId: params.pageId, asDocument: query.format === 'document' }),
    result: (d, { params }) => {
      const page = d.space.revision.page;
      if (!page) throw pageNotInRevision(params.pageId);
      return toRestPageWithChildren(page);
    },
  },
  {
    method: 'GET',
    path: `${SPACE}/content/page/:pageId/links`,
    query: z.strictObject({ ...listQueryShape, status: linkStatus }),
    document: `query($id: ID!, $pageId: String!, $first: Int, $after: String, $status: ContentLinkStatus) {
      space(id: $id) { ${LOCATION_CONTEXT_FIELDS} revision { page(id: $pageId) {
        links(first: $first, after: $after, status: $status) { ${CONNECTION_FIELDS} stats { total broken } nodes { ${LINK_FIELDS} } }
      } } }
    }`,
    variables: ({ params, query }) => ({ id: params.spaceId, pageId: params.pageId, ...pageVariables(query), status: query.status ?? null }),
    result: (d, { params }) => {
      const page = d.space.revision.page;
      if (!page) throw pageNotInRevision(params.pageId);
      return toRestLinkListing(page.links, locationContext(d.space));
    },
  },
  {
    method: 'GET',
    path: `${SPACE}/links`,
    query: z.strictObject({ ...listQueryShape, status: linkStatus }),
    document: `query($id: ID!, $first: Int, $after: String, $status: ContentLinkStatus) {
      space(id: $id) { ${LOCATION_CONTEXT_FIELDS} revision {
        links(first: $first, after: $after, status: $status) { ${CONNECTION_FIELDS} stats { total broken } nodes { ${LINK_FIELDS} } }
      } }
    }`,
    variables: ({ params, query }) => ({ id: params.spaceId, ...pageVariables(query), status: query.status ?? null }),
    result: (d) => toRestLinkListing(d.space.revision.links, locationContext(d.space)),
  },
  {
    method: 'GET',
    path: `${SPACE}/content/files`,
    query: z.strictObject({ ...listQueryShape, ...contentQueryShape }),
    document: `query($id: ID!, $first: Int, $after: String) {
      space(id: $id) { revision { files(first: $first, after: $after) { ${CONNECTION_FIELDS} nodes { ${FILE_FIELDS} } } } }
    }`,
    variables: ({ params, query }) => ({ id: params.spaceId, ...pageVariables(query) }),
    result: (d) => listEnvelope(d.space.revision.files, toRestFile),
  },
  {
    method: 'GET',
    path: `${SPACE}/content/files/:fileId`,
    query: z.strictObject(contentQueryShape),
    document: `query($id: ID!, $fileId: String!) { space(id: $id) { revision { file(id: $fileId) { ${FILE_FIELDS} } } } }`,
    variables: ({ params }) => ({ id: params.spaceId, fileId: params.fileId }),
    result: (d, { params }) => {
      const file = d.space.revision.file;
      if (!file) throw fileNotInRevision(params.fileId);
      return toRestFile(file);
    },
  },
  {
    method: 'GET',
    path: `${SPACE}/content/files/:fileId/backlinks`,
    query: z.strictObject(listQueryShape),
    document: `query($id: ID!, $fileId: String!, $first: Int, $after: String) {
      space(id: $id) { ${LOCATION_CONTEXT_FIELDS} revision {
        fileBacklinks(fileId: $fileId, first: $first, after: $after) { ${CONNECTION_FIELDS} nodes { ${PAGE_FIELDS} } }
      } }
    }`,
    variables: ({ params, query }) => ({ id: params.spaceId, fileId: params.fileId, ...pageVariables(query) }),
    result: (d) => {
      const where = locationContext(d.space);
      return listEnvelope(d.space.revision.fileBacklinks, (p) => toRestPageLocation(p, where));
    },
  },
  {
    // Extension (not in the contract): the content-change batch applied to a live space.
    method: 'POST',
    path: `${SPACE}/content`,
    body: ContentChangesInput,
    openapi: { operationId: 'updateSpaceContent', summary: 'Apply a batch of content changes to a space', response: SpaceContentUpdate },
    document: `mutation($input: ApplySpaceContentChangesInput!) {
      applySpaceContentChanges(input: $input) { revision { id } changes { object pageId ref location } insertedFiles { ${FILE_FIELDS} } }
    }`,
    variables: ({ params, body }) => ({ input: { spaceId: params.spaceId, changes: body.changes } }),
    result: (d) => ({
      object: 'space-content-update',
      revision: d.applySpaceContentChanges.revision.id,
      changes: d.applySpaceContentChanges.changes.map(toRestContentChange),
      insertedFiles: d.applySpaceContentChanges.insertedFiles.map(toRestFile),
    }),
  },
  {
    method: 'POST',
    path: `${SPACE}/content/import`,
    body: ImportContentBody,
    document: `mutation($input: ImportSpaceContentInput!) {
      importSpaceContent(input: $input) { importJob { ${IMPORT_RUN_FIELDS} } revision { id } }
    }`,
    variables: ({ params, body }) => ({ input: { spaceId: params.spaceId, url: body.url, source: body.source, waitSeconds: IMPORT_WAIT_SECONDS } }),
    result: (d) => toRestImportResult(d.importSpaceContent),
    status: (d) => importStatus(d.importSpaceContent),
    moreResponses: IMPORT_ACCEPTED,
  },
  {
    // The newer contract's import run (0.202 `getImportRun`): where a 202 from an import points.
    method: 'GET',
    path: '/v1/org/:organizationId/imports/:importRunId',
    document: `query($id: ID!) { importJob(id: $id) { ${IMPORT_RUN_FIELDS} } }`,
    variables: ({ params }) => ({ id: params.importRunId }),
    result: (d, { params }) => {
      if (d.importJob.organizationId !== params.organizationId) throw notFound('Import run');
      return toRestImportRun(d.importJob);
    },
    openapi: { operationId: 'getImportRun', summary: 'Get an import run: the job of POST …/content/import, to poll after its 202', response: ImportRunShape },
  },
];

/**
 * How long `POST …/content/import` asks to wait for its job (GraphQL `waitSeconds`), capped by
 * the server's IMPORT_WAIT_SECONDS; then a 202 with the job to poll.
 */
export const IMPORT_WAIT_SECONDS = 20;

export function toRestImportRun(j: any) {
  return compact({
    object: 'import-run',
    id: j.id,
    status: RUN_STATUS[j.state as keyof typeof RUN_STATUS],
    reason: j.state === 'failed' ? j.error : undefined,
    // The newer contract's sources are a website or uploaded files; other URL imports name none.
    source: j.source === 'website' ? { type: 'website', url: j.url } : undefined,
    target: compact({ space: j.spaceId, changeRequest: j.changeRequestId }),
    createdAt: j.createdAt,
    completedAt: j.state === 'complete' ? j.finishedAt : undefined,
    urls: { location: j.urls.location },
    revision: j.state === 'complete' ? j.revisionId : undefined,
    importedResources: j.importedResources,
    totalResources: j.totalResources,
  });
}

/** 201 when the job finished in time; 202 (Accepted) while it is pending or running. */
export function importStatus(p: { importJob: any }) {
  return p.importJob.state === 'pending' || p.importJob.state === 'running' ? 202 : 201;
}

/**
 * Done: the contract's `{revision, importedResources, totalResources}`; failed: a 400 naming
 * `url`; still running: the import run to poll (`Location` is its `urls.location`).
 */
export function toRestImportResult(p: { importJob: any; revision: { id: string } }) {
  if (p.importJob.state === 'failed') throw badRequest('url', p.importJob.error ?? 'the import failed');
  if (importStatus(p) === 202) return toRestImportRun(p.importJob);
  return { revision: p.revision.id, importedResources: p.importJob.importedResources, totalResources: p.importJob.totalResources };
}
