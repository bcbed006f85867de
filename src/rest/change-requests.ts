// REST routes for change requests, on the GraphQL operations of graphql/change-requests.ts.
// `CR` = /v1/spaces/:spaceId/change-requests/:changeRequestId (id or per-space number).
import { z } from 'zod';
import { type RestRoute, CONNECTION_FIELDS, compact, contentQueryShape, listEnvelope, listQueryShape, pageVariables, q } from './router.ts';
import { USER_FIELDS, toRestUser } from './users.ts';
import {
  FILE_FIELDS,
  LINK_FIELDS,
  LOCATION_CONTEXT_FIELDS,
  PAGE_FIELDS,
  PAGE_FIELDS_WITH_FORMAT,
  IMPORT_WAIT_SECONDS,
  IMPORT_RUN_FIELDS,
  IMPORT_ACCEPTED,
  importStatus,
  ImportContentBody,
  extendRevisionRepresentation,
  locationContext,
  revisionFields,
  toRestContentChange,
  toRestFile,
  toRestImportResult,
  toRestLinkListing,
  toRestPageLocation,
  toRestPageTree,
  toRestPageWithChildren,
  toRestRevision,
} from './content.ts';
import { CHANGE_REQUEST_STATUSES, CreateChangeRequestInput, UpdateChangeRequestInput } from '../domain/change-requests.ts';
import { ContentChangesInput } from '../domain/revisions.ts';
import { fileNotInRevision, pageNotInRevision } from '../domain/content.ts';

const CR = '/v1/spaces/:spaceId/change-requests/:changeRequestId';

const PDF_EXPORT_FIELDS = 'id state error url page only pageCount byteSize revisionId createdAt finishedAt';

/** A PDF export (the POST's answer, an extension): its state and where the PDF is served. */
const PdfExportShape = z.object({
  object: z.literal('pdf-export'),
  id: z.string(),
  state: z.enum(['pending', 'running', 'complete', 'failed']),
  error: z.string().optional().describe('Why a failed export failed'),
  url: z.string().describe('Where the PDF is served: 200 with it when complete, 202 with Retry-After while it renders, 422 when it failed'),
  page: z.string().optional(),
  only: z.boolean(),
  pageCount: z.number().int(),
  size: z.number().int().optional().describe('Bytes of the PDF, when complete'),
  revision: z.string(),
  createdAt: z.string(),
  finishedAt: z.string().optional(),
});

function toRestPdfExport(e: any) {
  return compact({
    object: 'pdf-export',
    id: e.id,
    state: e.state,
    error: e.error,
    url: e.url,
    page: e.page,
    only: e.only,
    pageCount: e.pageCount,
    size: e.byteSize,
    revision: e.revisionId,
    createdAt: e.createdAt,
    finishedAt: e.finishedAt,
  });
}

const pdfQuery = z.strictObject({ only: q.bool(), page: z.string().min(1).max(256).optional() });

export const CHANGE_REQUEST_FIELDS = `
  id number status subject createdBy { ${USER_FIELDS} } createdAt updatedAt mergedAt spaceId
  revisionId revisionInitialId revisionMergedAncestorId revisionMergedId commentCount outdated
  urls { location app }
`;

export function toRestChangeRequest(cr: any) {
  return compact({
    object: 'change-request',
    id: cr.id,
    number: cr.number,
    status: cr.status,
    subject: cr.subject,
    createdBy: cr.createdBy ? toRestUser(cr.createdBy) : undefined,
    createdAt: cr.createdAt,
    updatedAt: cr.updatedAt,
    mergedAt: cr.mergedAt,
    space: cr.spaceId,
    revision: cr.revisionId,
    revisionInitial: cr.revisionInitialId,
    revisionMergedAncestor: cr.revisionMergedAncestorId,
    revisionMerged: cr.revisionMergedId,
    comments: cr.commentCount,
    outdated: cr.outdated,
    urls: cr.urls,
  });
}

const target = (params: Record<string, string>) => ({ spaceId: params.spaceId, changeRequestId: params.changeRequestId });
const crVars = (params: Record<string, string>) => ({ spaceId: params.spaceId, cr: params.changeRequestId });
/** `changeRequest(…) { <inner> }` for the content reads of a change request. */
const onChangeRequest = (vars: string, inner: string) => `query($spaceId: ID!, $cr: String!${vars}) { changeRequest(spaceId: $spaceId, idOrNumber: $cr) { ${inner} } }`;

// The contract's `merge` revisions carry the change request they came from.
extendRevisionRepresentation({
  fields: `mergedFrom { ${CHANGE_REQUEST_FIELDS} }`,
  map: (node, out) => {
    if (node.mergedFrom) out.mergedFrom = toRestChangeRequest(node.mergedFrom);
  },
});

export const routes: RestRoute[] = [
  {
    method: 'GET',
    path: '/v1/spaces/:spaceId/change-requests',
    query: z.strictObject({
      ...listQueryShape,
      status: z.enum(CHANGE_REQUEST_STATUSES).optional(),
      contributor: z.string().min(1).max(256).optional(),
    }),
    document: `query($id: ID!, $first: Int, $after: String, $status: ChangeRequestStatus, $contributor: String) {
      space(id: $id) { changeRequestList(first: $first, after: $after, status: $status, contributor: $contributor) {
        ${CONNECTION_FIELDS} nodes { ${CHANGE_REQUEST_FIELDS} } } } }`,
    variables: ({ params, query }) => ({ id: params.spaceId, ...pageVariables(query), status: query.status ?? null, contributor: query.contributor ?? null }),
    result: (d) => listEnvelope(d.space.changeRequestList, toRestChangeRequest),
  },
  {
    method: 'POST',
    path: '/v1/spaces/:spaceId/change-requests',
    body: CreateChangeRequestInput,
    document: `mutation($input: CreateChangeRequestInput!) { createChangeRequest(input: $input) { changeRequest { ${CHANGE_REQUEST_FIELDS} } } }`,
    variables: ({ params, body }) => ({ input: { spaceId: params.spaceId, ...body } }),
    result: (d) => toRestChangeRequest(d.createChangeRequest.changeRequest),
    status: 201,
  },
  {
    method: 'GET',
    path: CR,
    document: `query($spaceId: ID!, $cr: String!) { changeRequest(spaceId: $spaceId, idOrNumber: $cr) { ${CHANGE_REQUEST_FIELDS} } }`,
    variables: ({ params }) => ({ spaceId: params.spaceId, cr: params.changeRequestId }),
    result: (d) => toRestChangeRequest(d.changeRequest),
  },
  {
    method: 'PATCH',
    path: CR,
    body: UpdateChangeRequestInput,
    document: `mutation($input: UpdateChangeRequestInput!) { updateChangeRequest(input: $input) { changeRequest { ${CHANGE_REQUEST_FIELDS} } } }`,
    variables: ({ params, body }) => ({ input: { ...target(params), ...body } }),
    result: (d) => toRestChangeRequest(d.updateChangeRequest.changeRequest),
  },
  {
    method: 'POST',
    path: `${CR}/merge`,
    document: `mutation($input: MergeChangeRequestInput!) { mergeChangeRequest(input: $input) { result revision } }`,
    variables: ({ params }) => ({ input: target(params) }),
    result: (d) => ({ revision: d.mergeChangeRequest.revision, result: d.mergeChangeRequest.result }),
  },
  {
    method: 'POST',
    path: `${CR}/update`,
    document: `mutation($input: UpdateChangeRequestFromMainInput!) { updateChangeRequestFromMain(input: $input) { result revision } }`,
    variables: ({ params }) => ({ input: target(params) }),
    result: (d) => ({ revision: d.updateChangeRequestFromMain.revision, result: d.updateChangeRequestFromMain.result }),
  },
  {
    // The contract's GET: never renders; a reader's call writes nothing (graphql/pdf-exports.ts).
    method: 'GET',
    path: `${CR}/pdf`,
    query: pdfQuery,
    document: `mutation($input: ExportChangeRequestPdfInput!) { exportChangeRequestPdf(input: $input) { url } }`,
    variables: ({ params, query }) => ({ input: { ...target(params), only: query.only ?? null, page: query.page ?? null } }),
    result: (d) => ({ url: d.exportChangeRequestPdf.url }),
  },
  {
    method: 'POST',
    path: `${CR}/pdf`,
    query: pdfQuery,
    openapi: { operationId: 'exportChangeRequestPdf', summary: 'Start the PDF export of a change request as a job (edit role), or return the current one', response: PdfExportShape },
    document: `mutation($input: StartChangeRequestPdfExportInput!) { startChangeRequestPdfExport(input: $input) { pdfExport { ${PDF_EXPORT_FIELDS} } } }`,
    variables: ({ params, query }) => ({ input: { ...target(params), only: query.only ?? null, page: query.page ?? null } }),
    result: (d) => toRestPdfExport(d.startChangeRequestPdfExport.pdfExport),
  },
  {
    method: 'POST',
    path: `${CR}/content`,
    query: z.strictObject({ compat: q.bool() }),
    body: ContentChangesInput,
    // 0.202's name; the answer depends on `compat` (the change request, or 0.202's update).
    openapi: { operationId: 'updateChangeRequestContent', summary: 'Apply a batch of content changes to a change request' },
    document: `mutation($input: ApplyChangeRequestContentChangesInput!) { applyChangeRequestContentChanges(input: $input) {
      changeRequest { ${CHANGE_REQUEST_FIELDS} }
      changes { object pageId ref location }
      insertedFiles { ${FILE_FIELDS} } } }`,
    variables: ({ params, body }) => ({ input: { ...target(params), changes: body.changes } }),
    result: (d, { query }) => {
      const r = d.applyChangeRequestContentChanges;
      const changeRequest = toRestChangeRequest(r.changeRequest);
      // compat (default true): the change request, as the endpoint first answered; false: 0.202's update.
      if (query.compat !== false) return changeRequest;
      return { changeRequest, changes: r.changes.map(toRestContentChange), insertedFiles: r.insertedFiles.map(toRestFile) };
    },
  },

  // ---------------------------------------------------------------- content reads (as for spaces)
  {
    method: 'GET',
    path: `${CR}/content`,
    query: z.strictObject(contentQueryShape),
    get document() {
      return onChangeRequest('', `revision { ${revisionFields()} }`);
    },
    variables: ({ params }) => crVars(params),
    result: (d) => toRestRevision(d.changeRequest.revision),
  },
  {
    method: 'GET',
    path: `${CR}/content/pages`,
    query: z.strictObject(contentQueryShape),
    document: onChangeRequest('', `revision { allPages { ${PAGE_FIELDS} } }`),
    variables: ({ params }) => crVars(params),
    result: (d) => ({ pages: toRestPageTree(d.changeRequest.revision.allPages) }),
  },
  {
    method: 'GET',
    path: `${CR}/content/page/:pageId`,
    query: z.strictObject({ ...contentQueryShape, format: z.enum(['markdown', 'document']).optional(), evaluated: q.bool() }),
    document: onChangeRequest(
      ', $pageId: String!, $asDocument: Boolean!',
      `revision { page(id: $pageId) { ${PAGE_FIELDS_WITH_FORMAT} descendants { ${PAGE_FIELDS_WITH_FORMAT} } } }`,
    ),
    variables: ({ params, query }) => ({ ...crVars(params), pageId: params.pageId, asDocument: query.format === 'document' }),
    result: (d, { params }) => {
      const page = d.changeRequest.revision.page;
      if (!page) throw pageNotInRevision(params.pageId);
      return toRestPageWithChildren(page);
    },
  },
  {
    method: 'GET',
    path: `${CR}/content/page/:pageId/links`,
    query: z.strictObject(listQueryShape),
    document: onChangeRequest(
      ', $pageId: String!, $first: Int, $after: String',
      `space { ${LOCATION_CONTEXT_FIELDS} } revision { page(id: $pageId) {
        links(first: $first, after: $after) { ${CONNECTION_FIELDS} stats { total broken } nodes { ${LINK_FIELDS} } } } }`,
    ),
    variables: ({ params, query }) => ({ ...crVars(params), pageId: params.pageId, ...pageVariables(query) }),
    result: (d, { params }) => {
      const page = d.changeRequest.revision.page;
      if (!page) throw pageNotInRevision(params.pageId);
      return toRestLinkListing(page.links, locationContext(d.changeRequest.space));
    },
  },
  {
    method: 'GET',
    path: `${CR}/content/files`,
    query: z.strictObject({ ...listQueryShape, ...contentQueryShape }),
    document: onChangeRequest(', $first: Int, $after: String', `revision { files(first: $first, after: $after) { ${CONNECTION_FIELDS} nodes { ${FILE_FIELDS} } } }`),
    variables: ({ params, query }) => ({ ...crVars(params), ...pageVariables(query) }),
    result: (d) => listEnvelope(d.changeRequest.revision.files, toRestFile),
  },
  {
    method: 'GET',
    path: `${CR}/content/files/:fileId`,
    query: z.strictObject(contentQueryShape),
    document: onChangeRequest(', $fileId: String!', `revision { file(id: $fileId) { ${FILE_FIELDS} } }`),
    variables: ({ params }) => ({ ...crVars(params), fileId: params.fileId }),
    result: (d, { params }) => {
      const file = d.changeRequest.revision.file;
      if (!file) throw fileNotInRevision(params.fileId);
      return toRestFile(file);
    },
  },
  {
    method: 'GET',
    path: `${CR}/content/files/:fileId/backlinks`,
    query: z.strictObject(listQueryShape),
    document: onChangeRequest(
      ', $fileId: String!, $first: Int, $after: String',
      `space { ${LOCATION_CONTEXT_FIELDS} } revision { fileBacklinks(fileId: $fileId, first: $first, after: $after) { ${CONNECTION_FIELDS} nodes { ${PAGE_FIELDS} } } }`,
    ),
    variables: ({ params, query }) => ({ ...crVars(params), fileId: params.fileId, ...pageVariables(query) }),
    result: (d) => {
      const where = locationContext(d.changeRequest.space);
      return listEnvelope(d.changeRequest.revision.fileBacklinks, (p) => toRestPageLocation(p, where));
    },
  },
  {
    method: 'POST',
    path: `${CR}/content/import`,
    body: ImportContentBody,
    document: `mutation($input: ImportChangeRequestContentInput!) {
      importChangeRequestContent(input: $input) { importJob { ${IMPORT_RUN_FIELDS} } revision { id } } }`,
    variables: ({ params, body }) => ({ input: { ...target(params), url: body.url, source: body.source, waitSeconds: IMPORT_WAIT_SECONDS } }),
    result: (d) => toRestImportResult(d.importChangeRequestContent),
    status: (d) => importStatus(d.importChangeRequestContent),
    moreResponses: IMPORT_ACCEPTED,
  },
];
