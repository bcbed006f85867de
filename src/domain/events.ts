// The organization audit log: the event log (src/events/log.ts) read by an organization's
// admins, with its filters (graphql/audit-events.ts, rest/audit-events.ts).
import { z } from 'zod';
import type { Prisma, EventSource } from '../generated/prisma/client.ts';
import type { DomainContext } from './context.ts';
import { badRequest, notFound, parseInput } from '../lib/errors.ts';
import { isUuid } from '../lib/ids.ts';
import { SYSTEM_ACTOR } from '../events/log.ts';

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
