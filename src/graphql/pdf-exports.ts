// PDF exports of change requests (domain/pdf-exports.ts): the PdfExport node, `pdfExport(id:)`,
// the contract's GET as `exportChangeRequestPdf` (returns the export of the head; starts one only
// for an editor) and the POST as `startChangeRequestPdfExport` (needs `edit`).
import { builder } from './builder.ts';
import { dropUndefined } from './common.ts';
import { ChangeRequestRef } from './change-requests.ts';
import { getChangeRequestPdf, getPdfExport, pdfExportUrl, startPdfExport } from '../domain/pdf-exports.ts';
import type { PdfExport } from '../generated/prisma/client.ts';

export const PdfExportStateEnum = builder.enumType('PdfExportState', {
  description: 'Progress of a PDF export.',
  values: {
    pending: { description: 'Queued, not started.' },
    running: { description: 'Being rendered.' },
    complete: { description: 'Done: the PDF is served at `url`.' },
    failed: { description: 'Gave up (see error; a budget ran out, or the worker was lost); nothing was stored.' },
  } as const,
});

export const PdfExportRef = builder.prismaNode('PdfExport', {
  id: { field: 'id' },
  description: 'A PDF export of a change request, rendered by a background job.',
  findUnique: async (id, ctx) => {
    try {
      await getPdfExport(ctx, id);
      return { id };
    } catch {
      return { id: '' };
    }
  },
  fields: (t) => ({
    state: t.expose('state', { type: PdfExportStateEnum }),
    error: t.exposeString('error', { nullable: true, description: 'Why a failed export failed.' }),
    url: t.string({
      description: 'Where the PDF is served (needs a token that may read the space): 200 with the PDF when complete, 202 with Retry-After while it renders, 422 when it failed.',
      select: { id: true },
      resolve: (e, _a, ctx) => pdfExportUrl(ctx, e.id),
    }),
    spaceId: t.exposeString('spaceId', { description: 'The space of the change request (`space_…`).' }),
    changeRequestId: t.exposeString('changeRequestId', { description: 'The change request exported (`cr_…`).' }),
    revisionId: t.exposeString('revisionId', { description: 'The head revision of the change request that is exported.' }),
    page: t.string({ nullable: true, description: 'The page exported (with its descendants unless `only`); null for all pages.', select: { scope: true }, resolve: (e) => scopeParts(e).page }),
    only: t.boolean({ description: 'Only `page`, without its descendants.', select: { scope: true }, resolve: (e) => scopeParts(e).only }),
    pageCount: t.exposeInt('pageCount'),
    byteSize: t.exposeInt('byteSize', { nullable: true }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    finishedAt: t.expose('finishedAt', { type: 'DateTime', nullable: true }),
  }),
});

function scopeParts(e: Pick<PdfExport, 'scope'>) {
  const only = e.scope.endsWith('/only');
  return { page: e.scope ? (only ? e.scope.slice(0, -5) : e.scope) : null, only };
}

builder.queryField('pdfExport', (t) =>
  t.prismaField({
    type: 'PdfExport',
    nullable: true,
    description: 'A PDF export of a change request in a space you may read; poll it until `complete` or `failed`.',
    args: { id: t.arg.id({ required: true, description: 'Export id (`pdf_…`).' }) },
    resolve: async (query, _r, { id }, ctx) => {
      await getPdfExport(ctx, String(id));
      return ctx.prisma.pdfExport.findUniqueOrThrow({ ...query, where: { id: String(id) } });
    },
  }),
);

const pdfInputFields = (t: PothosSchemaTypes.InputFieldBuilder<any, 'InputObject'>) => ({
  spaceId: t.id({ required: true, description: 'Space (`space_…`).' }),
  changeRequestId: t.string({ required: true, description: 'Change request id or number.' }),
  only: t.boolean({ description: 'Only `page`, without its descendants.' }),
  page: t.string({ description: 'Page id: that page and its descendants (or only it).' }),
});

const ExportChangeRequestPdfInput = builder.inputType('ExportChangeRequestPdfInput', {
  description: 'The change request and which pages to render (default: all).',
  fields: pdfInputFields,
});
const StartChangeRequestPdfExportInput = builder.inputType('StartChangeRequestPdfExportInput', {
  description: 'The change request and which pages to render (default: all).',
  fields: pdfInputFields,
});

const ExportChangeRequestPdfPayload = builder.simpleObject('ExportChangeRequestPdfPayload', {
  description: 'Result of exportChangeRequestPdf.',
  fields: (t) => ({
    url: t.string({ description: 'Where the PDF is served (needs a token that may read the space): 200 with the PDF when ready, 202 with Retry-After while it renders.' }),
    pdfExport: t.field({ type: PdfExportRef, description: 'The export, with its state.' }),
    changeRequest: t.field({ type: ChangeRequestRef, description: 'The change request exported.' }),
  }),
});
const StartChangeRequestPdfExportPayload = builder.simpleObject('StartChangeRequestPdfExportPayload', {
  description: 'Result of startChangeRequestPdfExport.',
  fields: (t) => ({ pdfExport: t.field({ type: PdfExportRef, description: 'The export, with its state; poll `pdfExport(id:)`.' }) }),
});

const pdfInput = (input: { only?: boolean | null; page?: string | null }) => dropUndefined({ only: input.only ?? undefined, page: input.page ?? undefined });

builder.mutationFields((t) => ({
  exportChangeRequestPdf: t.field({
    type: ExportChangeRequestPdfPayload,
    description:
      'The PDF export of the change request’s head (read role): an existing one in any state; when there is none, an editor’s call starts one (a job), a reader’s is refused (FORBIDDEN) and writes nothing. Never renders during the request. REST: GET /v1/spaces/{spaceId}/change-requests/{changeRequestId}/pdf.',
    args: { input: t.arg({ type: ExportChangeRequestPdfInput, required: true, description: 'The change request and the pages to render.' }) },
    resolve: async (_r, { input }, ctx) => {
      const exp = await getChangeRequestPdf(ctx, String(input.spaceId), input.changeRequestId, pdfInput(input));
      const changeRequest = await ctx.prisma.changeRequest.findUniqueOrThrow({ where: { id: exp.changeRequestId } });
      return { url: pdfExportUrl(ctx, exp.id), pdfExport: exp, changeRequest };
    },
  }),
  startChangeRequestPdfExport: t.field({
    type: StartChangeRequestPdfExportPayload,
    description:
      'Start the PDF export of the change request’s head as a job (needs `edit`), or return the one already pending, running or complete for that head and pages; a failed one is started again. REST: POST /v1/spaces/{spaceId}/change-requests/{changeRequestId}/pdf.',
    args: { input: t.arg({ type: StartChangeRequestPdfExportInput, required: true, description: 'The change request and the pages to render.' }) },
    resolve: async (_r, { input }, ctx) => ({ pdfExport: await startPdfExport(ctx, String(input.spaceId), input.changeRequestId, pdfInput(input)) }),
  }),
}));
