// The event log (outbox): every mutation records what it changed, in its own transaction, with
// `recordEvent(tx, ctx, {...})`, so an event exists exactly when its change committed. The
// organization audit log (graphql/audit-events.ts, rest/audit-events.ts) reads it, and so will
// live subscriptions and webhooks: they resume by `seq` (increasing) and learn of new events from
// the `docgraph_events` notification (`<organizationId>:<seq>`, sent by a trigger at commit).
//
// Names follow GitBook's event words where they exist (`space_content_updated`,
// `space_visibility_updated`, `page_created`…), the same style otherwise
// (`space_created`, `change_request_merged`, `site_published`). Payloads are small: ids, titles,
// revision ids, never page bodies.
import crypto from 'node:crypto';
import { z } from 'zod';
import type { Tx, Db } from '../db/client.ts';
import type { Prisma, EventSource } from '../generated/prisma/client.ts';
import type { Viewer } from '../auth/access.ts';
import type { Clock } from '../lib/clock.ts';
import type { DomainContext, TaskDeps } from './context.ts';
import { badRequest, notFound, parseInput } from '../lib/errors.ts';
import { isUuid } from '../lib/ids.ts';

export type { EventSource };

/** Who made a change and through which entry point: a DomainContext is one. */
export type EventActor = { viewer: Viewer | null; source: EventSource; clock: Clock };

/** The object types events name. */
export type EventObjectType =
  | 'organization'
  | 'member'
  | 'invite'
  | 'team'
  | 'collection'
  | 'space'
  | 'change_request'
  | 'comment'
  | 'comment_reply'
  | 'site'
  | 'site_section'
  | 'site_section_group'
  | 'site_space'
  | 'share_link'
  | 'saml_provider'
  | 'openapi_spec'
  | 'translation'
  | 'import'
  | 'webhook';

export type EventInput = {
  type: string;
  organizationId: string;
  objectType: EventObjectType;
  objectId: string;
  /** Ids, titles, revision ids; never bodies. */
  payload?: Record<string, unknown>;
};

/** The actor of background jobs: the system, source `job`. */
export const jobActor = (deps: Pick<TaskDeps, 'clock'>): EventActor => ({ viewer: null, source: 'job', clock: deps.clock });

/** Drop undefined values so the JSON payload stays small and stable. */
function cleanPayload(payload: Record<string, unknown> | undefined): Prisma.InputJsonObject {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(payload ?? {})) if (v !== undefined) out[k] = v instanceof Date ? v.toISOString() : v;
  return out as Prisma.InputJsonObject;
}

/** Record events of a change inside the change's transaction. */
export async function recordEvent(tx: Tx, ctx: EventActor, ...events: EventInput[]): Promise<void> {
  if (events.length === 0) return;
  const occurredAt = ctx.clock.now();
  await tx.event.createMany({
    data: events.map((e) => ({
      id: crypto.randomUUID(),
      type: e.type,
      occurredAt,
      organizationId: e.organizationId,
      userId: ctx.viewer?.user.id ?? null,
      tokenId: ctx.viewer?.tokenId ?? null,
      actorLabel: ctx.viewer?.user.displayName ?? null,
      source: ctx.source,
      objectType: e.objectType,
      objectId: e.objectId,
      payload: cleanPayload(e.payload),
    })),
  });
}

// ------------------------------------------------------------------ retention

const DAY_MS = 24 * 60 * 60 * 1000;
const PURGE_BATCH = 5000;

/**
 * Delete events older than `config.auditRetentionDays` (the scheduled task in src/tasks.ts).
 * Idempotent; in batches so a large backlog never holds one long transaction. Returns the count.
 */
export async function purgeOldEvents(deps: { prisma: Db; clock: Clock; config: { auditRetentionDays: number }; log?: { info: (o: object, m: string) => void } }): Promise<number> {
  const cutoff = new Date(deps.clock.now().getTime() - deps.config.auditRetentionDays * DAY_MS);
  let purged = 0;
  for (;;) {
    const n = await deps.prisma.$executeRaw`
      DELETE FROM "Event" WHERE "seq" IN (SELECT "seq" FROM "Event" WHERE "occurredAt" < ${cutoff} ORDER BY "seq" LIMIT ${PURGE_BATCH})`;
    purged += n;
    if (n < PURGE_BATCH) break;
  }
  if (purged) deps.log?.info({ purged }, 'purged events past retention');
  return purged;
}

// ------------------------------------------------------------------ the audit log (reading)

/** The audit log's filters (GET /v1/orgs/{organizationId}/audit-events): exact matches and a time window. */
export const AuditEventFilters = z.strictObject({
  /** Exact action name (`space_created`). */
  action: z.string().max(100).optional(),
  /** Exact actor id: a user id, or `system`. */
  actor: z.string().max(100).optional(),
  /** Exact target id (the changed object's id). */
  target: z.string().max(200).optional(),
  from: z.coerce.date().optional(),
  to: z.coerce.date().optional(),
});
export type AuditEventFilters = z.infer<typeof AuditEventFilters>;

/** The actor id of events the system made (jobs, the CLI). */
export const SYSTEM_ACTOR = 'system';

/** The Prisma `where` of an organization's audit log with these filters. */
export function auditEventWhere(organizationId: string, raw: unknown): Prisma.EventWhereInput {
  const f = parseInput(AuditEventFilters, raw);
  if (f.from && f.to && f.from > f.to) throw badRequest('from', 'must not be after to');
  return {
    organizationId,
    ...(f.action !== undefined ? { type: f.action } : {}),
    ...(f.actor !== undefined ? { userId: f.actor === SYSTEM_ACTOR ? null : f.actor } : {}),
    ...(f.target !== undefined ? { objectId: f.target } : {}),
    ...(f.from || f.to ? { occurredAt: { ...(f.from ? { gte: f.from } : {}), ...(f.to ? { lte: f.to } : {}) } } : {}),
  };
}

/** Newest first; `seq` is unique and increases with every committed event. */
export const AUDIT_EVENT_ORDER = [{ seq: 'desc' as const }];

/** Organization admins only: NOT_FOUND to non-members, FORBIDDEN to members below admin. */
export async function requireAuditRead(ctx: DomainContext, organizationId: string) {
  await ctx.access.requireOrg(organizationId, 'auditEvent:read');
}

/** One event of the organization's audit log (NOT_FOUND when it has no such event). */
export async function getAuditEvent(ctx: DomainContext, organizationId: string, id: string) {
  await requireAuditRead(ctx, organizationId);
  const event = isUuid(id) ? await ctx.prisma.event.findUnique({ where: { id } }) : null;
  if (!event || event.organizationId !== organizationId) throw notFound('Audit event');
  return event;
}

/** Whether the caller may read this event (node(id:)): an admin of its organization. */
export async function canReadAuditEvent(ctx: DomainContext, id: string): Promise<boolean> {
  if (!isUuid(id)) return false;
  const event = await ctx.prisma.event.findUnique({ where: { id }, select: { organizationId: true } });
  return !!event && (await ctx.access.canOrg(event.organizationId, 'auditEvent:read'));
}

/** The contract's `source` (where the change came from) for our entry points. */
export const AUDIT_SOURCE: Record<EventSource, 'api' | 'workflow' | 'script'> = { rest: 'api', graphql: 'api', job: 'workflow', cli: 'script' };
