// REST routes of the organization audit log (the newer contract's listOrganizationAuditEvents and
// getOrganizationAuditEvent), on the GraphQL fields of graphql/audit-events.ts.
import { z } from 'zod';
import { type RestRoute, q, listEnvelope, compact, CONNECTION_FIELDS } from './router.ts';

const ORG = '/v1/orgs/:organizationId';

/** The contract's page size: 1–100, 20 by default. */
const AUDIT_PAGE_SIZE = 20;

export const AUDIT_EVENT_FIELDS = 'id action occurredAt source actor { type id: actorId label } target { type id: objectId label } urls { location }';

export function toRestAuditEvent(e: any) {
  return {
    object: 'audit-event',
    id: e.id,
    occurredAt: e.occurredAt,
    action: e.action,
    actor: compact(e.actor),
    source: e.source,
    target: compact(e.target),
    urls: e.urls,
  };
}

/** AuditEventDetails: the event with its payload. */
export function toRestAuditEventDetails(e: any) {
  return { ...toRestAuditEvent(e), schemaVersion: 1, payload: e.payload ?? {} };
}

const dateTime = z.iso.datetime({ offset: true, error: 'a date-time (RFC 3339)' }).optional();

const ListQuery = z.strictObject({
  page: z.string().max(512).optional(),
  limit: q.int(1, 100),
  from: dateTime,
  to: dateTime,
  action: q.string(100),
  actor: q.string(100),
  target: q.string(200),
});

export const routes: RestRoute[] = [
  {
    method: 'GET',
    path: `${ORG}/audit-events`,
    query: ListQuery,
    document: `query($org: ID!, $first: Int, $after: String, $action: String, $actor: String, $target: String, $from: DateTime, $to: DateTime) {
      organization(id: $org) { auditEvents(first: $first, after: $after, action: $action, actor: $actor, target: $target, from: $from, to: $to) {
        ${CONNECTION_FIELDS} nodes { ${AUDIT_EVENT_FIELDS} } } } }`,
    variables: ({ params, query }) => ({
      org: params.organizationId,
      first: query.limit ?? AUDIT_PAGE_SIZE,
      after: query.page ?? null,
      action: query.action ?? null,
      actor: query.actor ?? null,
      target: query.target ?? null,
      from: query.from ?? null,
      to: query.to ?? null,
    }),
    result: (d) => listEnvelope(d.organization.auditEvents, toRestAuditEvent),
  },
  {
    method: 'GET',
    path: `${ORG}/audit-events/:auditEventId`,
    document: `query($org: ID!, $id: ID!) { auditEvent(organizationId: $org, id: $id) { ${AUDIT_EVENT_FIELDS} payload } }`,
    variables: ({ params }) => ({ org: params.organizationId, id: params.auditEventId }),
    result: (d) => toRestAuditEventDetails(d.auditEvent),
  },
];
