// REST routes of signed webhooks (a docgraph extension, described in /v1/openapi.json), on the
// GraphQL operations of graphql/webhooks.ts. Organization admins only.
import { z } from 'zod';
import { type RestRoute, listQuery, pageVariables, listEnvelope, compact, CONNECTION_FIELDS } from './router.ts';
import { CreateWebhookInput, RotateWebhookSecretInput, UpdateWebhookInput } from '../domain/webhooks.ts';

const ORG = '/v1/orgs/:organizationId';
const HOOK = `${ORG}/webhooks/:webhookId`;

export const WEBHOOK_FIELDS = 'id organizationId url eventTypes active createdAt updatedAt createdById previousSecretExpiresAt urls { location }';
export const WEBHOOK_DELIVERY_FIELDS = 'id webhookId eventId eventType eventPosition status attempts lastStatusCode lastError lastAttemptAt nextAttemptAt deliveredAt createdAt';

export function toRestWebhook(w: any) {
  return compact(
    {
      object: 'webhook',
      id: w.id,
      organizationId: w.organizationId,
      url: w.url,
      eventTypes: w.eventTypes,
      active: w.active,
      createdAt: w.createdAt,
      updatedAt: w.updatedAt,
      createdBy: w.createdById,
      previousSecretExpiresAt: w.previousSecretExpiresAt,
      urls: w.urls,
    },
    ['previousSecretExpiresAt'],
  );
}

export function toRestWebhookDelivery(d: any) {
  return compact(
    {
      object: 'webhook-delivery',
      id: d.id,
      webhookId: d.webhookId,
      event: { id: d.eventId, type: d.eventType, position: d.eventPosition },
      status: d.status,
      attempts: d.attempts,
      lastStatusCode: d.lastStatusCode,
      lastError: d.lastError,
      lastAttemptAt: d.lastAttemptAt,
      nextAttemptAt: d.nextAttemptAt,
      deliveredAt: d.deliveredAt,
      createdAt: d.createdAt,
    },
    ['lastStatusCode', 'lastError', 'nextAttemptAt', 'deliveredAt'],
  );
}

// ------------------------------------------------------------------ response shapes (/v1/openapi.json)

const WebhookShape = z.object({
  object: z.literal('webhook'),
  id: z.string(),
  organizationId: z.string(),
  url: z.string().describe('The http(s) URL events are POSTed to.'),
  eventTypes: z.array(z.string()).describe('Event types delivered; empty: every event.'),
  active: z.boolean(),
  createdAt: z.string(),
  updatedAt: z.string(),
  createdBy: z.string().optional().describe('Id of the user who registered it.'),
  previousSecretExpiresAt: z
    .string()
    .nullable()
    .describe('While the secret replaced by the last rotation still signs deliveries (a second `v1=`): when it stops. Null when there is none.'),
  urls: z.object({ location: z.string() }),
});
const WebhookWithSecret = WebhookShape.extend({
  secret: z.string().describe('The signing secret (`whsec_…`), the HMAC-SHA256 key of `X-Signature`. Shown only in this answer.'),
});
const DeliveryShape = z.object({
  object: z.literal('webhook-delivery'),
  id: z.string(),
  webhookId: z.string(),
  event: z.object({ id: z.string(), type: z.string(), position: z.string() }),
  status: z.enum(['pending', 'succeeded', 'failed']),
  attempts: z.number().int(),
  lastStatusCode: z.number().int().nullable(),
  lastError: z.string().nullable(),
  lastAttemptAt: z.string().optional(),
  nextAttemptAt: z.string().nullable(),
  deliveredAt: z.string().nullable(),
  createdAt: z.string(),
});
const listOf = (item: z.ZodType) => z.object({ items: z.array(item), count: z.number().int(), next: z.object({ page: z.string() }).optional() });

export const routes: RestRoute[] = [
  {
    method: 'GET',
    path: `${ORG}/webhooks`,
    query: listQuery,
    document: `query($org: ID!, $first: Int, $after: String) { organization(id: $org) { webhooks(first: $first, after: $after) { ${CONNECTION_FIELDS} nodes { ${WEBHOOK_FIELDS} } } } }`,
    variables: ({ params, query }) => ({ org: params.organizationId, ...pageVariables(query) }),
    result: (d) => listEnvelope(d.organization.webhooks, toRestWebhook),
    openapi: { operationId: 'listWebhooksInOrganization', summary: 'List the webhooks of an organization', response: listOf(WebhookShape) },
  },
  {
    method: 'POST',
    path: `${ORG}/webhooks`,
    body: CreateWebhookInput,
    document: `mutation($input: CreateWebhookInput!) { createWebhook(input: $input) { secret webhook { ${WEBHOOK_FIELDS} } } }`,
    variables: ({ params, body }) => ({ input: { organizationId: params.organizationId, ...body } }),
    result: (d) => ({ ...toRestWebhook(d.createWebhook.webhook), secret: d.createWebhook.secret }),
    status: 201,
    openapi: { operationId: 'createWebhook', summary: 'Register a webhook (its signing secret is in this answer only)', response: WebhookWithSecret },
  },
  {
    method: 'GET',
    path: HOOK,
    document: `query($org: ID!, $id: ID!) { webhook(organizationId: $org, id: $id) { ${WEBHOOK_FIELDS} } }`,
    variables: ({ params }) => ({ org: params.organizationId, id: params.webhookId }),
    result: (d) => toRestWebhook(d.webhook),
    openapi: { operationId: 'getWebhookById', summary: 'Get a webhook', response: WebhookShape },
  },
  {
    method: 'PATCH',
    path: HOOK,
    body: UpdateWebhookInput,
    document: `mutation($input: UpdateWebhookInput!) { updateWebhook(input: $input) { webhook { ${WEBHOOK_FIELDS} } } }`,
    variables: ({ params, body }) => ({ input: { organizationId: params.organizationId, id: params.webhookId, ...body } }),
    result: (d) => toRestWebhook(d.updateWebhook.webhook),
    openapi: { operationId: 'updateWebhookById', summary: 'Change a webhook’s URL, event types or state', response: WebhookShape },
  },
  {
    method: 'DELETE',
    path: HOOK,
    document: `mutation($input: DeleteWebhookInput!) { deleteWebhook(input: $input) { deleted } }`,
    variables: ({ params }) => ({ input: { organizationId: params.organizationId, id: params.webhookId } }),
    status: (d) => (d.deleteWebhook.deleted ? 205 : 204),
    openapi: { operationId: 'deleteWebhookById', summary: 'Delete a webhook and its deliveries (205; 204 when already gone)', status: 205 },
  },
  {
    method: 'POST',
    path: `${HOOK}/rotate-secret`,
    body: RotateWebhookSecretInput,
    document: `mutation($input: RotateWebhookSecretInput!) { rotateWebhookSecret(input: $input) { secret webhook { ${WEBHOOK_FIELDS} } } }`,
    variables: ({ params, body }) => ({ input: { organizationId: params.organizationId, webhookId: params.webhookId, ...body } }),
    result: (d) => ({ ...toRestWebhook(d.rotateWebhookSecret.webhook), secret: d.rotateWebhookSecret.secret }),
    openapi: {
      operationId: 'rotateWebhookSecret',
      summary: 'Replace a webhook’s signing secret (the new one is in this answer only; the old one keeps signing for expiresInHours, default 24)',
      response: WebhookWithSecret,
    },
  },
  {
    method: 'GET',
    path: `${HOOK}/deliveries`,
    query: listQuery,
    document: `query($org: ID!, $id: ID!, $first: Int, $after: String) { webhook(organizationId: $org, id: $id) { deliveries(first: $first, after: $after) { ${CONNECTION_FIELDS} nodes { ${WEBHOOK_DELIVERY_FIELDS} } } } }`,
    variables: ({ params, query }) => ({ org: params.organizationId, id: params.webhookId, ...pageVariables(query) }),
    result: (d) => listEnvelope(d.webhook.deliveries, toRestWebhookDelivery),
    openapi: { operationId: 'listWebhookDeliveries', summary: 'List a webhook’s deliveries, newest first', response: listOf(DeliveryShape) },
  },
  {
    method: 'POST',
    path: `${HOOK}/deliveries/:deliveryId/redeliver`,
    document: `mutation($input: RedeliverWebhookDeliveryInput!) { redeliverWebhookDelivery(input: $input) { delivery { ${WEBHOOK_DELIVERY_FIELDS} } } }`,
    variables: ({ params }) => ({ input: { organizationId: params.organizationId, webhookId: params.webhookId, id: params.deliveryId } }),
    result: (d) => toRestWebhookDelivery(d.redeliverWebhookDelivery.delivery),
    status: 201,
    openapi: { operationId: 'redeliverWebhookDelivery', summary: 'Send a delivery’s event again (a new delivery, queued at once)', response: DeliveryShape },
  },
];
