// Imports of external content into a space or a change request (domain/imports.ts): the ImportJob
// node, `importJob(id:)` and `importSpaceContent`.
import { builder } from './builder.ts';
import { badRequest } from '../lib/errors.ts';
import { getImportJob, startImport, waitForImportJob } from '../domain/imports.ts';
import { RevisionRef } from './content.ts';
import { loadRevisionById } from './content-loading.ts';

export const ImportJobStateEnum = builder.enumType('ImportJobState', {
  description: 'Progress of an import job.',
  values: {
    pending: { description: 'Queued, not started.' },
    running: { description: 'Fetching and converting the content.' },
    complete: { description: 'Done: the pages were written (see revision).' },
    failed: { description: 'Gave up (see error); nothing was written.' },
  } as const,
});
export const ImportContentSourceEnum = builder.enumType('ImportContentSource', {
  description: 'What kind of content an import URL serves. REST writes `github_wiki` as `github-wiki`, and so on.',
  values: {
    website: { description: 'A website, crawled from the URL.' },
    docx: { description: 'A Word document.' },
    markdown: { description: 'A markdown file.' },
    html: { description: 'An HTML page.' },
    zip: { description: 'A zip archive of markdown or HTML files.' },
    confluence: { description: 'A Confluence export.' },
    github_wiki: { description: 'A GitHub wiki.' },
    notion: { description: 'A Notion export.' },
    google_docs: { description: 'A Google Docs document.' },
  } as const satisfies Record<string, { description: string }>,
});

const ImportJobUrls = builder.simpleObject('ImportJobUrls', {
  description: 'Addresses of an import job.',
  fields: (t) => ({ location: t.string({ description: 'The job in the REST API (GET /v1/org/{organizationId}/imports/{importRunId}, an import run).' }) }),
});

/** The REST address of an import job: the import run of the newer contract. */
export const importRunLocation = (publicUrl: string, organizationId: string, jobId: string) => `${publicUrl}/v1/org/${organizationId}/imports/${jobId}`;

export const ImportJobRef = builder.prismaNode('ImportJob', {
  id: { field: 'id' },
  description: 'A background import of external content into a space (or a change request).',
  findUnique: async (id, ctx) => {
    try {
      await getImportJob(ctx, id);
      return { id };
    } catch {
      return { id: '' };
    }
  },
  fields: (t) => ({
    state: t.expose('state', { type: ImportJobStateEnum }),
    url: t.exposeString('url'),
    source: t.string({ description: 'Kind of content imported, as REST writes it (`github-wiki`, `markdown`…).', resolve: (j) => j.source }),
    spaceId: t.exposeString('spaceId'),
    organizationId: t.string({ description: 'The organization of the space.', select: { space: { select: { organizationId: true } } }, resolve: (j) => j.space.organizationId }),
    changeRequestId: t.exposeString('changeRequestId', { nullable: true }),
    urls: t.field({
      type: ImportJobUrls,
      description: 'Addresses of the job: poll `location` (REST) or `importJob(id:)` while it is pending or running.',
      select: { space: { select: { organizationId: true } } },
      resolve: (j, _a, ctx) => ({ location: importRunLocation(ctx.config.publicUrl, j.space.organizationId, j.id) }),
    }),
    error: t.exposeString('error', { nullable: true, description: 'Why a failed import failed.' }),
    revisionId: t.exposeString('revisionId', { nullable: true, description: 'The revision the import wrote (when complete).' }),
    revision: t.field({ type: RevisionRef, nullable: true, description: 'The revision the import wrote; null until complete.', resolve: (j, _a, ctx) => (j.revisionId ? loadRevisionById(ctx, j.revisionId) : null) }),
    importedResources: t.exposeInt('importedResources'),
    totalResources: t.exposeInt('totalResources'),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    finishedAt: t.expose('finishedAt', { type: 'DateTime', nullable: true }),
  }),
});

builder.queryField('importJob', (t) =>
  t.prismaField({
    type: 'ImportJob',
    nullable: true,
    description: 'An import job of a space you may edit; poll it until `complete` or `failed`. REST: GET /v1/org/{organizationId}/imports/{importRunId}.',
    args: { id: t.arg.id({ required: true, description: 'Import job id (`imp_…`).' }) },
    resolve: async (query, _r, { id }, ctx) => {
      await getImportJob(ctx, String(id));
      return ctx.prisma.importJob.findUniqueOrThrow({ ...query, where: { id: String(id) } });
    },
  }),
);

const ImportSpaceContentPayload = builder.simpleObject('ImportSpaceContentPayload', {
  description: 'Result of importSpaceContent.',
  fields: (t) => ({
    importJob: t.field({ type: ImportJobRef, description: 'The import job; poll `importJob(id:)` while it is pending or running.' }),
    revision: t.field({ type: RevisionRef, description: 'The revision the import wrote when it finished in time, else the current one.' }),
  }),
});

builder.mutationField('importSpaceContent', (t) =>
  t.field({
    type: ImportSpaceContentPayload,
    description:
      'Import a URL (markdown, zip, html, website, docx…) into a space as new pages, in a background job. With `waitSeconds` (max 20, and at most the server setting IMPORT_WAIT_SECONDS) the call waits for the job; REST waits IMPORT_WAIT_SECONDS (20 s), then answers 202 with the job to poll. Needs the edit role. REST: POST /v1/spaces/{spaceId}/content/import.',
    args: {
      input: t.arg({
        description: 'The space and what to import.',
        type: builder.inputType('ImportSpaceContentInput', {
          description: 'The space and what to import.',
          fields: (f) => ({
            spaceId: f.id({ required: true, description: 'Space (`space_…`).' }),
            changeRequestId: f.id({ description: 'Import into this change request instead of the space content.' }),
            url: f.string({ required: true, description: 'Public http(s) URL of the content to import.' }),
            source: f.field({ type: ImportContentSourceEnum, required: true, description: 'What kind of content the URL serves.' }),
            waitSeconds: f.int({ description: 'Wait up to this many seconds (0–20) for the job to finish.' }),
          }),
        }),
        required: true,
      }),
    },
    resolve: async (_r, { input }, ctx) => {
      const asked = input.waitSeconds ?? 0;
      if (asked < 0 || asked > 20) throw badRequest('waitSeconds', 'must be between 0 and 20');
      const wait = Math.min(asked, ctx.config.imports.waitSeconds);
      const job = await startImport(ctx, { spaceId: String(input.spaceId), changeRequestId: input.changeRequestId ? String(input.changeRequestId) : undefined }, {
        url: input.url,
        source: input.source,
      });
      const done = wait > 0 ? await waitForImportJob(ctx, job.id, wait * 1000) : job;
      const revisionId = done.revisionId ?? job.baseRevisionId;
      const revision = await loadRevisionById(ctx, revisionId);
      return { importJob: done, revision: revision! };
    },
  }),
);
