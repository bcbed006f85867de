// OpenAPI specifications of an organization and their versions.
//
// A spec has a slug (unique in the organization) and a source: a URL the server fetches, or a
// text given in the request. Creating or updating a spec enqueues `processOpenApiSpec` in the
// same transaction; the job moves `processingState` pending → progress → complete, fetches the
// source (guarded against private addresses, time- and size-limited), parses it (external
// `$ref`s fetched the same way) and records a new version only when the content hash differs
// from the last version's. A failure sets `lastProcessErrorCode` (FETCH_TIMEOUT, FETCH_ERROR or
// PARSE_ERROR), completes, and keeps the previous version. A job whose worker process died is
// retried (src/jobs.ts); after its last attempt the spec completes with FETCH_ERROR.
//
// Access: reads for members with a role (not guests); writes need `create` in the organization.
// Both are rows of the access table (`openApiSpec:read`, `openApiSpec:write` in src/auth/access.ts);
// the organization's `permissions.createOpenAPISpec` flag reads the same row.
import { z } from 'zod';
import type { DomainContext } from './context.ts';
import { parseInput, notFound, conflict, badRequest, fromDatabaseError } from '../lib/errors.ts';
import { newId } from '../lib/ids.ts';
import { organizationQueue, type GiveUpReason } from '../jobs.ts';
import type { TaskDeps } from './context.ts';
import type { OpenApiSpec } from '../generated/prisma/client.ts';
import { safeFetch, FetchTimeoutError } from '../lib/url-guard.ts';
import { parseOpenApiInWorker } from '../lib/openapi-thread.ts';
import type { Tx } from '../db/client.ts';
import { transaction } from '../db/transaction.ts';
import { jobActor, recordEvent } from '../events/log.ts';
import { lockOpenApiSpec } from '../db/locks.ts';

/** Fetch limits of the processing job. Mutable so tests can shorten the timeout. */
export const openApiFetchLimits = {
  timeoutMs: 10_000,
  maxBytes: 10 * 1024 * 1024,
};

export const OpenApiSpecSlug = z
  .string()
  .min(1)
  .max(100)
  .regex(/^[a-z0-9]+(?:-[a-z0-9]+)*$/, 'lower-case letters and digits, in words separated by single hyphens');

const MAX_TEXT_BYTES = 10 * 1024 * 1024;

/** `{url}` or `{text}`: exactly one. */
export const OpenApiSpecSource = z
  .strictObject({
    url: z
      .string()
      .max(2048)
      .url()
      .refine((u) => /^https?:\/\//i.test(u), 'must be an http(s) URL')
      .optional(),
    text: z
      .string()
      .min(1)
      .refine((s) => Buffer.byteLength(s) <= MAX_TEXT_BYTES, 'must be at most 10 MB')
      .optional(),
  })
  .superRefine((s, zctx) => {
    if ((s.url === undefined) === (s.text === undefined)) {
      zctx.addIssue({ code: 'custom', message: 'give exactly one of `url` or `text`' });
    }
  });
export type OpenApiSpecSource = z.infer<typeof OpenApiSpecSource>;

export const CreateOpenApiSpecInput = z.strictObject({ slug: OpenApiSpecSlug, source: OpenApiSpecSource });
export const UpsertOpenApiSpecInput = z.strictObject({ source: OpenApiSpecSource });

// ------------------------------------------------------------------ access

export async function openApiSpecPermissions(ctx: DomainContext, organizationId: string) {
  const [view, edit] = await Promise.all([ctx.access.canOrg(organizationId, 'openApiSpec:read'), ctx.access.canOrg(organizationId, 'openApiSpec:write')]);
  return { view, edit, delete: edit };
}

export async function requireOpenApiRead(ctx: DomainContext, organizationId: string) {
  await ctx.access.requireOrg(organizationId, 'openApiSpec:read');
}

// ------------------------------------------------------------------ reads

export async function getOpenApiSpec(ctx: DomainContext, organizationId: string, slug: string) {
  await requireOpenApiRead(ctx, organizationId);
  const spec = await ctx.prisma.openApiSpec.findUnique({ where: { organizationId_slug: { organizationId, slug } } });
  if (!spec) throw notFound('OpenAPI specification');
  return spec;
}

/** A version of a spec: `latest`, or a version id that belongs to that spec. */
export async function getOpenApiSpecVersion(ctx: DomainContext, organizationId: string, slug: string, versionId: string) {
  const spec = await getOpenApiSpec(ctx, organizationId, slug);
  if (versionId === 'latest') {
    if (!spec.lastVersionId) throw notFound('OpenAPI specification version');
    versionId = spec.lastVersionId;
  }
  const version = await ctx.prisma.openApiSpecVersion.findFirst({ where: { id: versionId, specId: spec.id } });
  if (!version) throw notFound('OpenAPI specification version');
  return { spec, version };
}

/** Where a version's content can be fetched (the content endpoint of the REST API). */
export function openApiVersionContentUrl(publicUrl: string, organizationId: string, slug: string, versionId: string) {
  return `${publicUrl}/v1/orgs/${organizationId}/openapi/${slug}/versions/${versionId}/content`;
}

// ------------------------------------------------------------------ writes

function sourceColumns(source: OpenApiSpecSource) {
  return source.url !== undefined ? { sourceURL: source.url, sourceText: null } : { sourceURL: null, sourceText: source.text! };
}

export async function createOpenApiSpec(ctx: DomainContext, organizationId: string, rawInput: unknown) {
  await ctx.access.requireOrg(organizationId, 'openApiSpec:write');
  const input = parseInput(CreateOpenApiSpecInput, rawInput);
  try {
    return await transaction(ctx.prisma, async (tx) => {
      const taken = await tx.openApiSpec.findUnique({ where: { organizationId_slug: { organizationId, slug: input.slug } }, select: { id: true } });
      if (taken) throw conflict(`An OpenAPI specification with the slug "${input.slug}" already exists`);
      const now = ctx.clock.now();
      const spec = await tx.openApiSpec.create({
        data: { id: newId('OpenApiSpec'), organizationId, slug: input.slug, ...sourceColumns(input.source), processingState: 'pending', createdAt: now, updatedAt: now },
      });
      await ctx.services.jobs.enqueue(tx, 'processOpenApiSpec', { specId: spec.id }, { jobKey: spec.id, queueName: organizationQueue(organizationId) });
      await recordEvent(tx, ctx, { type: 'openapi_spec_created', organizationId, objectId: spec.id, payload: { slug: spec.slug } });
      return spec;
    });
  } catch (err) {
    throw fromDatabaseError(err) ?? err;
  }
}

/** PUT by slug: create (created = true) or replace the source and reprocess. */
export async function upsertOpenApiSpec(ctx: DomainContext, organizationId: string, slug: string, rawInput: unknown) {
  await ctx.access.requireOrg(organizationId, 'openApiSpec:write');
  const input = parseInput(UpsertOpenApiSpecInput, rawInput);
  const parsedSlug = OpenApiSpecSlug.safeParse(slug);
  if (!parsedSlug.success) throw badRequest('specSlug', parsedSlug.error.issues[0].message);
  try {
    return await transaction(ctx.prisma, async (tx) => {
      const now = ctx.clock.now();
      const existing = await tx.openApiSpec.findUnique({ where: { organizationId_slug: { organizationId, slug } } });
      let spec: OpenApiSpec;
      if (existing) {
        spec = await tx.openApiSpec.update({
          where: { id: existing.id },
          data: { ...sourceColumns(input.source), processingState: 'pending', updatedAt: now },
        });
      } else {
        spec = await tx.openApiSpec.create({
          data: { id: newId('OpenApiSpec'), organizationId, slug, ...sourceColumns(input.source), processingState: 'pending', createdAt: now, updatedAt: now },
        });
      }
      await ctx.services.jobs.enqueue(tx, 'processOpenApiSpec', { specId: spec.id }, { jobKey: spec.id, queueName: organizationQueue(organizationId) });
      await recordEvent(tx, ctx, { type: existing ? 'openapi_spec_updated' : 'openapi_spec_created', organizationId, objectId: spec.id, payload: { slug } });
      return { spec, created: !existing };
    });
  } catch (err) {
    throw fromDatabaseError(err) ?? err;
  }
}

/** Idempotent: true when deleted (with its versions), false when no spec had that slug. */
export async function deleteOpenApiSpec(ctx: DomainContext, organizationId: string, slug: string) {
  await ctx.access.requireOrg(organizationId, 'openApiSpec:write');
  return transaction(ctx.prisma, async (tx) => {
    const gone = await tx.openApiSpec.findMany({ where: { organizationId, slug }, select: { id: true } });
    const r = await tx.openApiSpec.deleteMany({ where: { organizationId, slug } });
    for (const spec of gone) await recordEvent(tx, ctx, { type: 'openapi_spec_deleted', organizationId, objectId: spec.id, payload: { slug } });
    return r.count > 0;
  });
}

// ------------------------------------------------------------------ processing job

export type OpenApiProcessErrorCode = 'FETCH_TIMEOUT' | 'FETCH_ERROR' | 'PARSE_ERROR';

class ProcessFailure extends Error {
  constructor(
    readonly code: OpenApiProcessErrorCode,
    message: string,
  ) {
    super(message);
  }
}

/** Fetch a URL on a user's behalf: private addresses refused unless configured, time and size bounded. */
async function fetchSourceText(url: string, deps: TaskDeps): Promise<{ text: string; finalUrl: string }> {
  try {
    const res = await safeFetch(url, {
      allowPrivate: deps.config.allowPrivateFetch,
      timeoutMs: openApiFetchLimits.timeoutMs,
      maxBytes: openApiFetchLimits.maxBytes,
    });
    if (res.status < 200 || res.status >= 300) throw new ProcessFailure('FETCH_ERROR', `${url} answered HTTP ${res.status}`);
    return { text: res.body.toString('utf8'), finalUrl: res.finalUrl };
  } catch (err) {
    if (err instanceof ProcessFailure) throw err;
    if (err instanceof FetchTimeoutError) throw new ProcessFailure('FETCH_TIMEOUT', `${url} did not answer in time`);
    throw new ProcessFailure('FETCH_ERROR', `${url}: ${(err as Error).message}`);
  }
}

const TaskPayload = z.object({ specId: z.string().min(1) });

/**
 * Process one spec. Idempotent: a rerun fetches again and adds a version only when the content
 * differs from the last one; a spec deleted meanwhile is skipped; when the spec was updated while
 * this run fetched, the result is dropped (the update enqueued a newer run).
 */
export async function processOpenApiSpec(payload: unknown, deps: TaskDeps) {
  const { specId } = TaskPayload.parse(payload);
  const { prisma, clock, log } = deps;
  const spec = await prisma.openApiSpec.findUnique({ where: { id: specId } });
  if (!spec) return;
  await transaction(prisma, async (tx) => {
    const r = await tx.openApiSpec.updateMany({ where: { id: specId }, data: { processingState: 'progress', updatedAt: spec.updatedAt } });
    if (r.count) await recordEvent(tx, jobActor(deps), { type: 'openapi_spec_processing_started', organizationId: spec.organizationId, objectId: specId, payload: { slug: spec.slug } });
  });
  const processed = (tx: Tx, extra: Record<string, unknown>) =>
    recordEvent(tx, jobActor(deps), { type: 'openapi_spec_processed', organizationId: spec.organizationId, objectId: specId, payload: { slug: spec.slug, ...extra } });

  let outcome: { ok: true; filesystem: unknown; hash: string } | { ok: false; code: OpenApiProcessErrorCode; message: string };
  try {
    const source = spec.sourceURL ? await fetchSourceText(spec.sourceURL, deps) : { text: spec.sourceText ?? '', finalUrl: undefined };
    const parsed = await parseOpenApiInWorker(source.text, source.finalUrl, async (url: string) => (await fetchSourceText(url, deps)).text);
    outcome = parsed.ok ? { ok: true, filesystem: parsed.filesystem, hash: parsed.hash } : { ok: false, code: 'PARSE_ERROR', message: parsed.message };
  } catch (err) {
    if (!(err instanceof ProcessFailure)) throw err; // unexpected: let the queue retry
    outcome = { ok: false, code: err.code, message: err.message };
  }

  await transaction(prisma, async (tx) => {
    const current = await lockOpenApiSpec(tx, specId);
    if (!current) return; // deleted meanwhile
    // Superseded: an update changed the source, or asked for a new fetch (state back to pending),
    // while this run worked; the job it enqueued will record the outcome.
    if (current.sourceURL !== spec.sourceURL || current.sourceText !== spec.sourceText || current.processingState === 'pending') return;
    const now = clock.now();
    if (!outcome.ok) {
      log.info({ specId, code: outcome.code, message: outcome.message }, 'OpenAPI specification processing failed');
      await tx.openApiSpec.update({
        where: { id: specId },
        data: { processingState: 'complete', lastProcessErrorCode: outcome.code, lastProcessedAt: now, updatedAt: now },
      });
      await processed(tx, { errorCode: outcome.code });
      return;
    }
    const last = current.lastVersionId
      ? await tx.openApiSpecVersion.findUnique({ where: { id: current.lastVersionId }, select: { contentHash: true } })
      : null;
    let lastVersionId = current.lastVersionId;
    if (last?.contentHash !== outcome.hash) {
      const versionId = newId('OpenApiSpecVersion');
      await tx.openApiSpecVersion.create({
        data: {
          id: versionId,
          specId,
          url: openApiVersionContentUrl(deps.config.publicUrl, spec.organizationId, spec.slug, versionId),
          contentHash: outcome.hash,
          filesystem: outcome.filesystem as object,
          createdAt: now,
        },
      });
      lastVersionId = versionId;
    }
    await tx.openApiSpec.update({
      where: { id: specId },
      data: { processingState: 'complete', lastProcessErrorCode: null, lastProcessedAt: now, lastVersionId, updatedAt: now },
    });
    await processed(tx, { versionId: lastVersionId, newVersion: lastVersionId !== current.lastVersionId });
  });
}

/**
 * The queue gave the job up after its last attempt (its worker died each time, or it threw; see
 * src/jobs.ts): a spec still in `progress` completes with FETCH_ERROR (the contract's codes have
 * none closer) and keeps its previous version. A spec back to `pending` was updated meanwhile and
 * left to the job that update enqueued.
 */
export async function giveUpOpenApiSpec(payload: unknown, deps: TaskDeps, reason: GiveUpReason) {
  const parsed = TaskPayload.safeParse(payload);
  if (!parsed.success) return;
  const { specId } = parsed.data;
  const now = deps.clock.now();
  const r = await transaction(deps.prisma, async (tx) => {
    const updated = await tx.openApiSpec.updateMany({
      where: { id: specId, processingState: 'progress' },
      data: { processingState: 'complete', lastProcessErrorCode: 'FETCH_ERROR', lastProcessedAt: now, updatedAt: now },
    });
    const spec = updated.count ? await tx.openApiSpec.findUnique({ where: { id: specId }, select: { organizationId: true, slug: true } }) : null;
    if (spec) {
      await recordEvent(tx, jobActor(deps), { type: 'openapi_spec_processed', organizationId: spec.organizationId, objectId: specId, payload: { slug: spec.slug, errorCode: 'FETCH_ERROR', givenUp: true } });
    }
    return updated;
  });
  if (r.count) deps.log.warn({ specId, cause: reason.cause, attempts: reason.attempts }, 'OpenAPI specification processing given up');
}

