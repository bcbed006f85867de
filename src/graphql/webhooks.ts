// Signed webhooks (domain/webhooks.ts): the Webhook and WebhookDelivery nodes,
// Organization.webhooks, Webhook.deliveries, the webhook query and one mutation per operation.
// Organization admins only.
import { builder } from './builder.ts';
import { DeletePayload, dropUndefined, OWN_ORGANIZATION_ID } from './common.ts';
import { keysetConnection } from './cursors.ts';
import {
  DELIVERY_ORDER,
  WEBHOOK_ORDER,
  canManageWebhook,
  canReadWebhookDelivery,
  createWebhook,
  deleteWebhook,
  getWebhook,
  previousSecretExpiry,
  redeliverWebhookDelivery,
  requireWebhookAdmin,
  rotateWebhookSecret,
  updateWebhook,
} from '../domain/webhooks.ts';

const WebhookDeliveryStatusEnum = builder.enumType('WebhookDeliveryStatus', {
  description: 'Where a webhook delivery stands.',
  values: {
    pending: { description: 'Not delivered yet: waiting for its first or next attempt.' },
    succeeded: { description: 'The receiver answered 2xx.' },
    failed: { description: 'Every attempt failed (or the webhook was deactivated); it will not be sent again unless redelivered.' },
  } as const,
});

const WebhookUrls = builder.simpleObject('WebhookUrls', {
  description: 'Addresses of a webhook.',
  fields: (t) => ({ location: t.string({ description: 'Its REST address (GET /v1/orgs/{organizationId}/webhooks/{webhookId}).' }) }),
});

export const WebhookRef = builder.prismaNode('Webhook', {
  id: { field: 'id' },
  nullable: true,
  description: 'A URL the organization’s events are POSTed to, signed with the webhook’s secret (organization admins only).',
  findUnique: async (id, ctx) => ({ id: (await canManageWebhook(ctx, id)) ? id : '' }),
  fields: (t) => ({
    organizationId: t.exposeString('organizationId', { description: 'The organization whose events it receives.' }),
    url: t.exposeString('url'),
    eventTypes: t.exposeStringList('eventTypes', { description: 'Event types it receives (names of `EventType`); empty: every event.' }),
    active: t.exposeBoolean('active'),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
    createdById: t.exposeString('createdById', { nullable: true }),
    previousSecretExpiresAt: t.field({
      type: 'DateTime',
      nullable: true,
      description:
        'While the secret replaced by the last rotation still signs deliveries (a second `v1=` of `X-Signature`): when it stops. Null when there is none. The secret itself is never shown.',
      select: { previousSecret: true, previousSecretExpiresAt: true },
      resolve: (w, _a, ctx) => previousSecretExpiry(w, ctx.clock.now()),
    }),
    urls: t.field({
      type: WebhookUrls,
      description: 'Its REST address.',
      select: { id: true, organizationId: true },
      resolve: (w, _a, ctx) => ({ location: `${ctx.config.publicUrl}/v1/orgs/${w.organizationId}/webhooks/${w.id}` }),
    }),
    deliveries: keysetConnection(t, {
      type: 'WebhookDelivery',
      list: 'Webhook.deliveries',
      description: 'Its deliveries, newest first. REST: GET /v1/orgs/{organizationId}/webhooks/{webhookId}/deliveries.',
      resolve: async (page: any, w: { id: string; organizationId: string }, _a: unknown, ctx: any) => {
        await requireWebhookAdmin(ctx, w.organizationId);
        return ctx.prisma.webhookDelivery.findMany(page.prisma({ where: { webhookId: w.id }, orderBy: DELIVERY_ORDER }) as never);
      },
      totalCount: async (w: { id: string; organizationId: string }, _a: unknown, ctx: any) => {
        await requireWebhookAdmin(ctx, w.organizationId);
        return ctx.prisma.webhookDelivery.count({ where: { webhookId: w.id } });
      },
    }),
  }),
});

export const WebhookDeliveryRef = builder.prismaNode('WebhookDelivery', {
  id: { field: 'id' },
  nullable: true,
  description: 'One event sent (or to send) to one webhook, with its attempts.',
  findUnique: async (id, ctx) => ({ id: (await canReadWebhookDelivery(ctx, id)) ? id : '' }),
  fields: (t) => ({
    webhookId: t.exposeString('webhookId', { description: 'The webhook it is sent to.' }),
    eventId: t.exposeString('eventId'),
    eventType: t.exposeString('eventType'),
    eventPosition: t.string({
      description: 'The event’s position in the event log (the body’s `position`).',
      select: { eventSeq: true },
      resolve: (d) => d.eventSeq.toString(),
    }),
    status: t.expose('status', { type: WebhookDeliveryStatusEnum, description: 'Where the delivery stands.' }),
    attempts: t.exposeInt('attempts'),
    lastStatusCode: t.exposeInt('lastStatusCode', { nullable: true }),
    lastError: t.exposeString('lastError', { nullable: true }),
    lastAttemptAt: t.expose('lastAttemptAt', { type: 'DateTime', nullable: true }),
    nextAttemptAt: t.expose('nextAttemptAt', { type: 'DateTime', nullable: true }),
    deliveredAt: t.expose('deliveredAt', { type: 'DateTime', nullable: true }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
  }),
});

builder.prismaObjectField('Organization', 'webhooks', (t) =>
  keysetConnection(t, {
    type: WebhookRef,
    list: 'Organization.webhooks',
    description: 'Webhooks, oldest first (organization admins only; FORBIDDEN for other members). REST: GET /v1/orgs/{organizationId}/webhooks.',
    resolve: async (page, org, _a, ctx) => {
      await requireWebhookAdmin(ctx, org.id);
      return ctx.prisma.webhook.findMany(page.prisma({ where: { organizationId: org.id }, orderBy: WEBHOOK_ORDER }) as never);
    },
    totalCount: async (org, _a, ctx) => {
      await requireWebhookAdmin(ctx, org.id);
      return ctx.prisma.webhook.count({ where: { organizationId: org.id } });
    },
  }),
);

builder.queryField('webhook', (t) =>
  t.prismaField({
    type: WebhookRef,
    nullable: true,
    description: 'A webhook of an organization (organization admins). REST: GET /v1/orgs/{organizationId}/webhooks/{webhookId}.',
    args: {
      organizationId: t.arg.id({ description: OWN_ORGANIZATION_ID }),
      id: t.arg.id({ required: true, description: 'Webhook id (`wh_…`).' }),
    },
    resolve: async (query, _r, args, ctx) => {
      const hook = await getWebhook(ctx, args.organizationId == null ? null : String(args.organizationId), String(args.id));
      return ctx.prisma.webhook.findUniqueOrThrow({ ...query, where: { id: hook.id } });
    },
  }),
);

const CreateWebhookPayload = builder.simpleObject('CreateWebhookPayload', {
  description: 'The registered webhook and its signing secret, shown this once.',
  fields: (t) => ({
    webhook: t.field({ type: WebhookRef, description: 'The webhook.' }),
    secret: t.string({ description: 'The signing secret (`whsec_…`): the HMAC-SHA256 key of `X-Signature`. Not shown again.' }),
  }),
});

const RotateWebhookSecretPayload = builder.simpleObject('RotateWebhookSecretPayload', {
  description: 'The webhook and its new signing secret, shown this once.',
  fields: (t) => ({
    webhook: t.field({ type: WebhookRef, description: 'The webhook; `previousSecretExpiresAt` says until when the replaced secret still signs.' }),
    secret: t.string({ description: 'The new signing secret (`whsec_…`). Not shown again.' }),
  }),
});

const WebhookPayload = builder.simpleObject('WebhookPayload', {
  description: 'Result of a webhook mutation.',
  fields: (t) => ({ webhook: t.field({ type: WebhookRef, description: 'The webhook after the change.' }) }),
});

const WebhookDeliveryPayload = builder.simpleObject('WebhookDeliveryPayload', {
  description: 'Result of a redelivery.',
  fields: (t) => ({ delivery: t.field({ type: WebhookDeliveryRef, description: 'The new delivery, queued.' }) }),
});

const CreateWebhookInput = builder.inputType('CreateWebhookInput', {
  description: 'The webhook to register.',
  fields: (t) => ({
    organizationId: t.id({ required: true, description: 'Organization (`org_…`).' }),
    url: t.string({ required: true, description: 'The http(s) URL events are POSTed to (max 2048); private and loopback addresses are refused unless WEBHOOK_ALLOW_PRIVATE.' }),
    eventTypes: t.stringList({ description: 'Event types to deliver: names of `EventType` (`space_created`, …; at most 100; an unknown name is a BAD_REQUEST naming `eventTypes.<index>`); omitted or empty: every event.' }),
    active: t.boolean({ description: 'False: registered, but nothing is delivered. Default true.' }),
  }),
});

const UpdateWebhookInput = builder.inputType('UpdateWebhookInput', {
  description: 'Omitted fields are kept.',
  fields: (t) => ({
    organizationId: t.id({ description: OWN_ORGANIZATION_ID }),
    id: t.id({ required: true, description: 'Webhook to change (`wh_…`).' }),
    url: t.string({ description: 'The http(s) URL events are POSTed to.' }),
    eventTypes: t.stringList({ description: 'Event types to deliver: names of `EventType` (an unknown name is a BAD_REQUEST naming `eventTypes.<index>`); empty: every event.' }),
    active: t.boolean({ description: 'False: nothing is delivered, and pending deliveries fail.' }),
  }),
});

const DeleteWebhookInput = builder.inputType('DeleteWebhookInput', {
  description: 'The webhook to delete (with its deliveries).',
  fields: (t) => ({
    organizationId: t.id({ description: OWN_ORGANIZATION_ID }),
    id: t.id({ required: true, description: 'Webhook id (`wh_…`).' }),
  }),
});

const RotateWebhookSecretInput = builder.inputType('RotateWebhookSecretInput', {
  description: 'The webhook whose secret to replace, and how long the replaced one keeps signing.',
  fields: (t) => ({
    organizationId: t.id({ description: OWN_ORGANIZATION_ID }),
    webhookId: t.id({ required: true, description: 'Webhook id (`wh_…`).' }),
    expiresInHours: t.int({
      description: 'Hours the replaced secret keeps signing deliveries alongside the new one (0–168, default 24); 0: it stops at once. Replaces any older previous secret.',
    }),
  }),
});

const RedeliverWebhookDeliveryInput = builder.inputType('RedeliverWebhookDeliveryInput', {
  description: 'The delivery whose event to send again.',
  fields: (t) => ({
    organizationId: t.id({ description: OWN_ORGANIZATION_ID }),
    webhookId: t.id({ description: 'Optional: the delivery’s webhook (`wh_…`); when given, the delivery must belong to it, else NOT_FOUND.' }),
    id: t.id({ required: true, description: 'Delivery id (`whd_…`).' }),
  }),
});

const orgArg = (v: string | number | null | undefined) => (v == null ? null : String(v));

builder.mutationFields((t) => ({
  createWebhook: t.field({
    type: CreateWebhookPayload,
    description: 'Register a webhook (organization admins); answers its secret once. REST: POST /v1/orgs/{organizationId}/webhooks (201).',
    args: { input: t.arg({ type: CreateWebhookInput, required: true, description: 'The webhook to register.' }) },
    resolve: async (_r, { input }, ctx) => {
      const { organizationId, ...fields } = input;
      return createWebhook(ctx, String(organizationId), dropUndefined(fields));
    },
  }),
  updateWebhook: t.field({
    type: WebhookPayload,
    description: 'Change a webhook’s URL, event types or state (organization admins). REST: PATCH /v1/orgs/{organizationId}/webhooks/{webhookId}.',
    args: { input: t.arg({ type: UpdateWebhookInput, required: true, description: 'The webhook and what to change.' }) },
    resolve: async (_r, { input }, ctx) => {
      const { organizationId, id, ...fields } = input;
      return { webhook: await updateWebhook(ctx, orgArg(organizationId), String(id), dropUndefined(fields)) };
    },
  }),
  deleteWebhook: t.field({
    type: DeletePayload,
    description: 'Delete a webhook and its deliveries (organization admins). Idempotent (deleted: false when already gone). REST: DELETE /v1/orgs/{organizationId}/webhooks/{webhookId} (205, then 204).',
    args: { input: t.arg({ type: DeleteWebhookInput, required: true, description: 'The webhook to delete.' }) },
    resolve: async (_r, { input }, ctx) => ({ deleted: await deleteWebhook(ctx, orgArg(input.organizationId), String(input.id)), deletedId: String(input.id) }),
  }),
  rotateWebhookSecret: t.field({
    type: RotateWebhookSecretPayload,
    description:
      'Replace a webhook’s signing secret (organization admins); answers the new one once. Deliveries carry a signature by each secret until the replaced one expires. REST: POST /v1/orgs/{organizationId}/webhooks/{webhookId}/rotate-secret.',
    args: { input: t.arg({ type: RotateWebhookSecretInput, required: true, description: 'The webhook and the overlap.' }) },
    resolve: async (_r, { input }, ctx) => {
      const { organizationId, webhookId, ...fields } = input;
      return rotateWebhookSecret(ctx, orgArg(organizationId), String(webhookId), dropUndefined(fields));
    },
  }),
  redeliverWebhookDelivery: t.field({
    type: WebhookDeliveryPayload,
    description:
      'Send a delivery’s event again, as a new delivery queued at once (organization admins; CONFLICT when the webhook is inactive). REST: POST /v1/orgs/{organizationId}/webhooks/{webhookId}/deliveries/{deliveryId}/redeliver (201).',
    args: { input: t.arg({ type: RedeliverWebhookDeliveryInput, required: true, description: 'The delivery to send again.' }) },
    resolve: async (_r, { input }, ctx) => ({
      delivery: await redeliverWebhookDelivery(ctx, orgArg(input.organizationId), orgArg(input.webhookId), String(input.id)),
    }),
  }),
}));
