// The organization audit log on the event log (src/events/log.ts, domain/events.ts): the
// AuditEvent node, Organization.auditEvents and the auditEvent query (organization admins only),
// and the `EventType` enum: the event catalogue (src/events/catalogue.ts) with its descriptions.
import { builder } from './builder.ts';
import { dropUndefined } from './common.ts';
import { keysetConnection } from './cursors.ts';
import { AUDIT_EVENT_ORDER, AUDIT_SOURCE, auditEventWhere, canReadAuditEvent, getAuditEvent, requireAuditRead } from '../domain/events.ts';
import { eventActor } from '../events/log.ts';
import { EVENTS, type EventType } from '../events/catalogue.ts';
import { notFound } from '../lib/errors.ts';

/** The event catalogue as a GraphQL enum: the values are the catalogue's names, unchanged on the wire. */
export const EventTypeEnum = builder.enumType('EventType', {
  description: 'What happened: a type of the event catalogue (the audit log’s `action`, a live event’s `type`, what a webhook subscribes to).',
  values: Object.fromEntries(
    Object.entries(EVENTS).map(([name, e]) => [name, { value: name, description: `${e.description} (Object: \`${e.object}\`.)`, ...('deprecated' in e ? { deprecationReason: e.deprecated as string } : {}) }]),
  ) as Record<EventType, { value: EventType; description: string }>,
});

const EntryPointEnum = builder.enumType('AuditEventEntryPoint', {
  description: 'The API or process a change came through.',
  values: {
    rest: { description: 'The REST API (/v1).' },
    graphql: { description: 'The GraphQL API.' },
    job: { description: 'A background job (imports, OpenAPI processing).' },
    cli: { description: 'The admin command line.' },
  } as const,
});

const AuditEventActor = builder.simpleObject('AuditEventActor', {
  description: 'Who made a change.',
  fields: (t) => ({
    type: t.string({ description: '`user`, or `system` for background jobs and the admin command line.' }),
    id: t.string({ description: 'The user id, or `system`.', deprecationReason: 'Not this object\'s own id (client caches key objects by `id`): use `actorId`.' }),
    label: t.string({ nullable: true, description: 'The user’s display name when the event was recorded; null for the system.' }),
  }),
});

const AuditEventTarget = builder.simpleObject('AuditEventTarget', {
  description: 'The object a change affected.',
  fields: (t) => ({
    type: t.string({ description: 'Kind of object: `space`, `site`, `change_request`, `member`, …' }),
    id: t.string({ description: 'Its id (for a member, the user id).', deprecationReason: 'Not this object\'s own id (client caches key objects by `id`): use `objectId`.' }),
    label: t.string({ nullable: true, description: 'Its title when the event was recorded, when it has one.' }),
  }),
});

// The ids of the actor and the target, named for what they are: a wrapper's own `id` would reuse
// the user's, space's, site's… id (docs/decisions.md, "One object, one id").
builder.objectField(AuditEventActor, 'actorId', (t) => t.string({ description: 'The user id (`user_…`), or `system`.', resolve: (a) => a.id }));
builder.objectField(AuditEventTarget, 'objectId', (t) => t.string({ description: 'The affected object\'s id (for a member, the user id).', resolve: (a) => a.id }));

const AuditEventUrls = builder.simpleObject('AuditEventUrls', {
  description: 'Addresses of an audit event.',
  fields: (t) => ({ location: t.string({ description: 'The event in the REST API.' }) }),
});

export const AuditEventRef = builder.prismaNode('Event', {
  name: 'AuditEvent',
  id: { field: 'id' },
  nullable: true,
  description: 'One recorded change in an organization (the audit log). Visible to organization admins only.',
  // node(id:) answers only for admins of the event's organization.
  findUnique: async (id, ctx) => ({ id: (await canReadAuditEvent(ctx, id)) ? id : '' }),
  fields: (t) => ({
    action: t.field({ type: EventTypeEnum, description: 'What happened: `space_created`, `space_content_updated`, `change_request_merged`, `site_published`, … (the event catalogue).', select: { type: true }, resolve: (e) => e.type as EventType }),
    occurredAt: t.expose('occurredAt', { type: 'DateTime', description: 'When the change was made.' }),
    organizationId: t.exposeString('organizationId', { description: 'The organization the change belongs to.' }),
    position: t.string({
      description: 'Position of the event in the event log (increasing with every recorded change): where a live feed resumes.',
      select: { seq: true },
      resolve: (e) => e.seq.toString(),
    }),
    actor: t.field({
      type: AuditEventActor,
      description: 'Who made the change.',
      select: { userId: true, actorLabel: true },
      resolve: (e) => eventActor(e),
    }),
    tokenId: t.exposeString('tokenId', { nullable: true, description: 'The API token the change was made with; null for the system.' }),
    entryPoint: t.field({ type: EntryPointEnum, description: 'The API or process the change came through.', select: { source: true }, resolve: (e) => e.source }),
    source: t.string({
      description: 'The audit log’s `source`: `api` (REST and GraphQL), `workflow` (background jobs) or `script` (the admin command line).',
      select: { source: true },
      resolve: (e) => AUDIT_SOURCE[e.source],
    }),
    target: t.field({
      type: AuditEventTarget,
      description: 'The object the change affected.',
      select: { objectType: true, objectId: true, payload: true },
      resolve: (e) => ({ type: e.objectType, id: e.objectId, label: labelOf(e.payload) }),
    }),
    urls: t.field({
      type: AuditEventUrls,
      description: 'Addresses of the event.',
      select: { id: true, organizationId: true },
      resolve: (e, _a, ctx) => ({ location: `${ctx.config.publicUrl}/v1/orgs/${e.organizationId}/audit-events/${e.id}` }),
    }),
    payload: t.field({
      type: 'JSONObject',
      description: 'Details of the change: ids, titles, revision ids (never page contents).',
      select: { payload: true },
      resolve: (e) => (e.payload ?? {}) as Record<string, unknown>,
    }),
  }),
});

function labelOf(payload: unknown): string | null {
  const title = (payload as { title?: unknown } | null)?.title;
  return typeof title === 'string' && title ? title : null;
}

const auditArgs = (t: any) => ({
  action: t.arg.string({ description: 'Only events with this exact action (`space_created`).' }),
  actor: t.arg.string({ description: 'Only events by this actor: a user id, or `system`.' }),
  target: t.arg.string({ description: 'Only events about this object id.' }),
  from: t.arg({ type: 'DateTime', description: 'Only events that occurred at or after this time.' }),
  to: t.arg({ type: 'DateTime', description: 'Only events that occurred at or before this time.' }),
});

const filtersOf = (args: Record<string, unknown>) =>
  dropUndefined({
    action: args.action ?? undefined,
    actor: args.actor ?? undefined,
    target: args.target ?? undefined,
    from: args.from ?? undefined,
    to: args.to ?? undefined,
  });

builder.prismaObjectField('Organization', 'auditEvents', (t) =>
  keysetConnection(t, {
    type: AuditEventRef,
    list: 'Organization.auditEvents',
    description:
      'The audit log: recorded changes, newest first (organization admins only; FORBIDDEN for other members). REST: GET /v1/orgs/{organizationId}/audit-events.',
    args: auditArgs(t),
    resolve: async (page, org, args, ctx) => {
      await requireAuditRead(ctx, org.id);
      const where = auditEventWhere(org.id, filtersOf(args));
      return ctx.prisma.event.findMany(page.prisma({ where, orderBy: AUDIT_EVENT_ORDER }) as never);
    },
    totalCount: async (org, args, ctx) => {
      await requireAuditRead(ctx, org.id);
      return ctx.prisma.event.count({ where: auditEventWhere(org.id, filtersOf(args)) });
    },
  }),
);

builder.queryFields((t) => ({
  auditEvent: t.prismaField({
    type: AuditEventRef,
    nullable: true,
    description: 'One event of an organization’s audit log (organization admins only). REST: GET /v1/orgs/{organizationId}/audit-events/{auditEventId}.',
    args: {
      organizationId: t.arg.id({ required: true, description: 'Organization (`org_…`).' }),
      id: t.arg.id({ required: true, description: 'The event’s id (a UUID).' }),
    },
    resolve: async (query, _r, args, ctx) => {
      const event = await getAuditEvent(ctx, String(args.organizationId), String(args.id));
      const found = await ctx.prisma.event.findUnique({ ...query, where: { id: event.id } });
      if (!found) throw notFound('Audit event');
      return found;
    },
  }),
}));
