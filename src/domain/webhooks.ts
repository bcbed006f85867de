// Signed webhooks: an organization admin registers a URL, and every event of the organization's
// event log (src/events/log.ts) it subscribes to (`eventTypes`: names of the event catalogue,
// src/events/catalogue.ts; none: every event) is POSTed there, signed with the webhook's secret.
//
// Fan-out: the AFTER INSERT trigger on "Event" writes one WebhookDelivery per active matching
// webhook, in the event's own transaction, so a delivery exists exactly when its change committed,
// with no code per mutation, whoever inserts the event. One SQL function creates a delivery and
// queues its job, for the trigger and for a redelivery alike: `docgraph_webhook_delivery`
// (prisma/migrations/20261127090000_event_catalogue), which holds the job's name, its queue
// (`webhooks:<organizationId>`) and its attempt ceiling in one place.
//
// Delivery (`deliverWebhook`, src/tasks.ts): POST of the JSON body (`webhookBody`) with
// `X-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">` (Stripe's scheme: a
// receiver recomputes it and refuses timestamps older than 5 minutes, so a captured request
// cannot be replayed later). The URL passes the SSRF guard at registration and again at every
// attempt (DNS resolved again, inside the connection too); redirects are not followed; 2 s to
// connect, 5 s for the response to start (WEBHOOK_CONNECT_TIMEOUT_MS, WEBHOOK_RESPONSE_TIMEOUT_MS),
// 10 s for the whole exchange. A 2xx answer: succeeded. Anything else: the status or error is recorded and
// the handler throws, so graphile-worker retries it after exp(min(attempt, 10)) seconds (2.7 s,
// 7.4 s, 20 s, 55 s, 2.5 min, 6.7 min, 18 min, 50 min, 2.2 h, then every 6.1 h). The handler
// counts the attempts on the delivery and marks it failed after WEBHOOK_MAX_ATTEMPTS (the job's
// ceiling is 20 attempts, WEBHOOK_MAX_ATTEMPTS's largest value, since SQL cannot read the
// configuration); `onGiveUp` marks it failed when the queue gives up first (a worker
// that died during its last attempt). Idempotent: a delivery that succeeded or failed is never
// sent again by its job.
//
// Fairness: deliveries run on a worker pool of their own (src/tasks.ts, src/jobs.ts),
// each organization's in one named queue (`webhooks:<organizationId>`, given by SQL
// `docgraph_webhook_enqueue`: one delivery of an organization at a time), so a receiver that hangs holds one webhook worker and never another organization's jobs
// or any import. A circuit breaker per webhook: after WEBHOOK_CIRCUIT_FAILURES failed attempts in
// a row, its deliveries are deferred for WEBHOOK_CIRCUIT_COOLDOWN_SECONDS (not attempted, no
// attempt spent: the job is queued again for when the circuit closes); the first attempt after
// the cool-down is the probe: a success closes the circuit, a failure opens it again.
//
// Rotation (`rotateWebhookSecret`, Stripe's way): a new secret, answered once; the one it
// replaces keeps signing, as a second `v1=` of the same header, until `previousSecretExpiresAt`
// (0–168 hours, default 24), so a receiver can switch secrets without refusing a delivery. One
// previous secret at most: rotating again during an overlap drops the older one.
//
// Access: organization admins only (`webhook:manage` in src/auth/access.ts).
import crypto from 'node:crypto';
import { z } from 'zod';
import type { DomainContext, TaskDeps } from './context.ts';
import type { Webhook, WebhookDelivery } from '../generated/prisma/client.ts';
import type { Tx } from '../db/client.ts';
import type { GiveUpReason } from '../jobs.ts';
import { badRequest, conflict, notFound, parseInput } from '../lib/errors.ts';
import { newId, newSecret } from '../lib/ids.ts';
import { requireFetchableUrl, FetchGuardError, FetchTimeoutError, guardedPost } from '../lib/url-guard.ts';
import { transaction } from '../db/transaction.ts';
import { eventActor, readEvent, recordEvent, type EventRow } from '../events/log.ts';
import { EventTypeList } from '../events/catalogue.ts';
/** The request of one attempt. Mutable so tests can shorten the timeout. */
export const webhookRequestLimits = { timeoutMs: 10_000 };
/** How old a signature's timestamp may be when a receiver checks it (`verifyWebhookSignature`). */
export const SIGNATURE_TOLERANCE_SECONDS = 5 * 60;
export const SIGNATURE_HEADER = 'X-Signature';
export const WEBHOOK_USER_AGENT = 'docgraph-webhooks';
const SECRET_PREFIX = 'whsec';
/** How long the secret a rotation replaces keeps signing, in hours: the default, the most. */
export const ROTATION_OVERLAP_HOURS = { default: 24, max: 168 };
const HOUR_MS = 60 * 60 * 1000;

// ------------------------------------------------------------------ inputs

const WebhookUrl = z
  .string()
  .max(2048)
  .url()
  .refine((u) => /^https?:\/\//i.test(u), 'must be an http(s) URL');

export const CreateWebhookInput = z.strictObject({
  /** The http(s) URL events are POSTed to. */
  url: WebhookUrl,
  /** Event types to deliver (`space_created`, …); omitted or empty: every event. */
  eventTypes: EventTypeList.optional(),
  /** False: registered but nothing is delivered. Default true. */
  active: z.boolean().optional(),
});
export const UpdateWebhookInput = z.strictObject({
  url: WebhookUrl.optional(),
  eventTypes: EventTypeList.optional(),
  active: z.boolean().optional(),
});

export const RotateWebhookSecretInput = z.strictObject({
  /** Hours the replaced secret keeps signing (0–168, default 24); 0: it stops at once. */
  expiresInHours: z
    .number()
    .int()
    .min(0)
    .max(ROTATION_OVERLAP_HOURS.max)
    .optional()
    .describe('Hours the replaced secret keeps signing deliveries alongside the new one (0–168, default 24); 0: it stops at once.'),
});

// ------------------------------------------------------------------ access and reads

export async function requireWebhookAdmin(ctx: DomainContext, organizationId: string) {
  await ctx.access.requireOrg(organizationId, 'webhook:manage');
}

/** The refusal of a URL the guard does not allow, as a 400 naming `url`. */
async function checkUrl(ctx: Pick<DomainContext, 'config'>, url: string) {
  try {
    await requireFetchableUrl(url, { allowPrivate: ctx.config.webhooks.allowPrivate });
  } catch (err) {
    if (err instanceof FetchGuardError) throw badRequest('url', err.message);
    throw err;
  }
}

/**
 * The webhook `id` of organization `organizationId` (its own when omitted), for an admin of it.
 * NOT_FOUND when it does not exist or belongs to another organization.
 */
export async function getWebhook(ctx: DomainContext, organizationId: string | null | undefined, id: string): Promise<Webhook> {
  ctx.access.requireViewer();
  if (organizationId != null) await requireWebhookAdmin(ctx, organizationId);
  const hook = await ctx.prisma.webhook.findUnique({ where: { id } });
  if (!hook || (organizationId != null && hook.organizationId !== organizationId)) throw notFound('Webhook');
  if (organizationId == null) await requireWebhookAdmin(ctx, hook.organizationId);
  return hook;
}

/** node(id:): an admin of the webhook's organization. */
export async function canManageWebhook(ctx: DomainContext, id: string): Promise<boolean> {
  const hook = await ctx.prisma.webhook.findUnique({ where: { id }, select: { organizationId: true } });
  return !!hook && (await ctx.access.canOrg(hook.organizationId, 'webhook:manage'));
}

/** node(id:) of a delivery: an admin of its webhook's organization. */
export async function canReadWebhookDelivery(ctx: DomainContext, id: string): Promise<boolean> {
  const d = await ctx.prisma.webhookDelivery.findUnique({ where: { id }, select: { webhook: { select: { organizationId: true } } } });
  return !!d && (await ctx.access.canOrg(d.webhook.organizationId, 'webhook:manage'));
}

/** Oldest first. */
export const WEBHOOK_ORDER = [{ createdAt: 'asc' as const }, { id: 'asc' as const }];
/** Newest first. */
export const DELIVERY_ORDER = [{ createdAt: 'desc' as const }, { id: 'desc' as const }];

// ------------------------------------------------------------------ writes

/** Register a webhook; answers it with its secret, which is never shown again. */
export async function createWebhook(ctx: DomainContext, organizationId: string, raw: unknown): Promise<{ webhook: Webhook; secret: string }> {
  await requireWebhookAdmin(ctx, organizationId);
  const input = parseInput(CreateWebhookInput, raw);
  await checkUrl(ctx, input.url);
  const secret = newSecret(SECRET_PREFIX);
  const webhook = await transaction(ctx.prisma, async (tx) => {
    const now = ctx.clock.now();
    const hook = await tx.webhook.create({
      data: {
        id: newId('Webhook'),
        organizationId,
        url: input.url,
        secret,
        eventTypes: input.eventTypes ?? [],
        active: input.active ?? true,
        createdAt: now,
        updatedAt: now,
        createdById: ctx.viewer?.user.id ?? null,
      },
    });
    // Recorded after the row exists: a webhook that subscribes to it receives its own
    // `webhook_created` first (a ping).
    await recordEvent(tx, ctx, { type: 'webhook_created', organizationId, objectId: hook.id, payload: { eventTypes: hook.eventTypes, active: hook.active } });
    return hook;
  });
  return { webhook, secret };
}

export async function updateWebhook(ctx: DomainContext, organizationId: string | null | undefined, id: string, raw: unknown): Promise<Webhook> {
  const hook = await getWebhook(ctx, organizationId, id);
  const input = parseInput(UpdateWebhookInput, raw);
  if (input.url !== undefined) await checkUrl(ctx, input.url);
  return transaction(ctx.prisma, async (tx) => {
    const updated = await tx.webhook.update({
      where: { id: hook.id },
      data: {
        ...(input.url !== undefined ? { url: input.url } : {}),
        ...(input.eventTypes !== undefined ? { eventTypes: input.eventTypes } : {}),
        ...(input.active !== undefined ? { active: input.active } : {}),
        // A new URL is a new endpoint: its circuit starts closed.
        ...(input.url !== undefined && input.url !== hook.url ? { consecutiveFailures: 0, circuitOpenUntil: null } : {}),
        updatedAt: ctx.clock.now(),
      },
    });
    await recordEvent(tx, ctx, {
      type: 'webhook_updated',
      organizationId: hook.organizationId,
      objectId: hook.id,
      payload: { eventTypes: updated.eventTypes, active: updated.active, urlChanged: input.url !== undefined && input.url !== hook.url },
    });
    return updated;
  });
}

/**
 * Replace a webhook's secret; answers the new one, which is never shown again. The replaced secret
 * keeps signing (a second `v1=`) for `expiresInHours` (default 24; 0: not at all), replacing any
 * older previous secret. CONFLICT when another rotation changed the secret meanwhile.
 */
export async function rotateWebhookSecret(ctx: DomainContext, organizationId: string | null | undefined, id: string, raw: unknown): Promise<{ webhook: Webhook; secret: string }> {
  const hook = await getWebhook(ctx, organizationId, id);
  const input = parseInput(RotateWebhookSecretInput, raw);
  const hours = input.expiresInHours ?? ROTATION_OVERLAP_HOURS.default;
  const secret = newSecret(SECRET_PREFIX);
  const webhook = await transaction(ctx.prisma, async (tx) => {
    const current = await tx.webhook.findUnique({ where: { id: hook.id }, select: { secret: true } });
    if (!current) throw notFound('Webhook');
    const now = ctx.clock.now();
    const expiresAt = hours > 0 ? new Date(now.getTime() + hours * HOUR_MS) : null;
    // Compare-and-set on the secret read: two rotations at once cannot both retire the same one
    // (the loser's secret would be dropped without its caller knowing).
    const { count } = await tx.webhook.updateMany({
      where: { id: hook.id, secret: current.secret },
      data: { secret, previousSecret: expiresAt ? current.secret : null, previousSecretExpiresAt: expiresAt, updatedAt: now },
    });
    if (count === 0) throw conflict('The webhook’s secret was rotated meanwhile: try again');
    await recordEvent(tx, ctx, {
      type: 'webhook_secret_rotated',
      organizationId: hook.organizationId,
      objectId: hook.id,
      payload: { expiresInHours: hours, previousSecretExpiresAt: expiresAt?.toISOString() ?? null },
    });
    return tx.webhook.findUniqueOrThrow({ where: { id: hook.id } });
  });
  return { webhook, secret };
}

/** When the previous secret stops signing, if it still signs at `now`; else null. */
export function previousSecretExpiry(w: Pick<Webhook, 'previousSecret' | 'previousSecretExpiresAt'>, now: Date): Date | null {
  return w.previousSecret && w.previousSecretExpiresAt && w.previousSecretExpiresAt > now ? w.previousSecretExpiresAt : null;
}

/** The secrets a delivery at `now` is signed with: the current one, then the previous one during its overlap. */
export function signingSecrets(w: Pick<Webhook, 'secret' | 'previousSecret' | 'previousSecretExpiresAt'>, now: Date): string[] {
  return previousSecretExpiry(w, now) ? [w.secret, w.previousSecret!] : [w.secret];
}

/** Idempotent: false when there was no such webhook (its deliveries go with it). */
export async function deleteWebhook(ctx: DomainContext, organizationId: string | null | undefined, id: string): Promise<boolean> {
  ctx.access.requireViewer();
  let org = organizationId ?? null;
  if (org == null) {
    org = (await ctx.prisma.webhook.findUnique({ where: { id }, select: { organizationId: true } }))?.organizationId ?? null;
    if (org == null) return false;
  }
  await requireWebhookAdmin(ctx, org);
  const organization = org;
  return transaction(ctx.prisma, async (tx) => {
    const { count } = await tx.webhook.deleteMany({ where: { id, organizationId: organization } });
    if (count) await recordEvent(tx, ctx, { type: 'webhook_deleted', organizationId: organization, objectId: id });
    return count > 0;
  });
}

/**
 * Send a delivery's event again: a new delivery (its own attempts) of the same event to the same
 * webhook, queued at once. CONFLICT when the webhook is inactive.
 */
export async function redeliverWebhookDelivery(ctx: DomainContext, organizationId: string | null | undefined, webhookId: string | null | undefined, deliveryId: string): Promise<WebhookDelivery> {
  ctx.access.requireViewer();
  const found = await ctx.prisma.webhookDelivery.findUnique({ where: { id: deliveryId }, include: { webhook: true } });
  const org = organizationId ?? found?.webhook.organizationId;
  if (org == null) throw notFound('Webhook delivery');
  await requireWebhookAdmin(ctx, org);
  if (webhookId != null && organizationId != null) await getWebhook(ctx, organizationId, webhookId);
  if (!found || found.webhook.organizationId !== org || (webhookId != null && found.webhookId !== webhookId)) throw notFound('Webhook delivery');
  if (!found.webhook.active) throw conflict('The webhook is inactive: activate it to redeliver');
  return transaction(ctx.prisma, async (tx) => {
    const id = await createDelivery(tx, found.webhookId, found.eventSeq, ctx.clock.now());
    return tx.webhookDelivery.findUniqueOrThrow({ where: { id } });
  });
}

/**
 * A new delivery of event `eventSeq` to a webhook, with its job: the SQL function the fan-out
 * trigger calls too (the one creator of deliveries). Returns its id.
 */
async function createDelivery(tx: Tx, webhookId: string, eventSeq: bigint, now: Date): Promise<string> {
  const [{ id }] = await tx.$queryRaw<Array<{ id: string }>>`
    SELECT "docgraph_webhook_delivery"(${webhookId}, ${eventSeq}::bigint, to_timestamp(${now.getTime()}::float8 / 1000) AT TIME ZONE 'UTC') AS id`;
  return id;
}

// ------------------------------------------------------------------ the request

/** The JSON body of a delivery: the event as the audit log knows it. */
export function webhookBody(e: EventRow) {
  return {
    id: e.id,
    type: e.type,
    occurredAt: e.occurredAt.toISOString(),
    organizationId: e.organizationId,
    /** Position in the event log (increasing): lets a receiver order what it got. */
    position: String(e.seq),
    object: { type: e.objectType, id: e.objectId },
    actor: eventActor(e),
    source: e.source,
    payload: e.payload ?? {},
  };
}

/**
 * `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`, one `v1=` per secret (during a
 * rotation's overlap: the new secret's, then the previous one's), all over the same `t` and body.
 */
export function signWebhook(secrets: string | readonly string[], timestamp: number, body: string): string {
  const list = typeof secrets === 'string' ? [secrets] : secrets;
  return [`t=${timestamp}`, ...list.map((secret) => `v1=${hmacHex(secret, timestamp, body)}`)].join(',');
}

const hmacHex = (secret: string, timestamp: number, body: string) => crypto.createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex');

/**
 * What a receiver does (README, "Webhooks"): true when any `v1=` of `header` (two during a
 * rotation's overlap) is a signature of `body` by `secret`, and its timestamp is at most
 * `toleranceSeconds` away from `nowSeconds`.
 */
export function verifyWebhookSignature(secret: string, header: string, body: string, opts: { nowSeconds?: number; toleranceSeconds?: number } = {}): boolean {
  const parts = new Map<string, string[]>();
  for (const item of header.split(',')) {
    const i = item.indexOf('=');
    if (i > 0) parts.set(item.slice(0, i).trim(), [...(parts.get(item.slice(0, i).trim()) ?? []), item.slice(i + 1).trim()]);
  }
  const t = Number(parts.get('t')?.[0]);
  if (!Number.isInteger(t)) return false;
  const now = opts.nowSeconds ?? Math.floor(Date.now() / 1000);
  if (Math.abs(now - t) > (opts.toleranceSeconds ?? SIGNATURE_TOLERANCE_SECONDS)) return false;
  const expected = Buffer.from(hmacHex(secret, t, body), 'hex');
  return (parts.get('v1') ?? []).some((v) => {
    const given = Buffer.from(v, 'hex');
    return given.length === expected.length && crypto.timingSafeEqual(given, expected);
  });
}

/** graphile-worker's delay before retrying a job that failed `attempts` times, in ms. */
export const retryDelayMs = (attempts: number) => Math.round(Math.exp(Math.min(attempts, 10)) * 1000);

/** Why an attempt failed, in a line. */
function describeFailure(err: unknown): string {
  if (err instanceof FetchGuardError || err instanceof FetchTimeoutError) return err.message;
  const cause = (err as { cause?: unknown })?.cause;
  if (cause instanceof FetchGuardError) return cause.message;
  const code = (cause as { code?: string } | undefined)?.code;
  const message = cause instanceof Error ? cause.message : err instanceof Error ? err.message : String(err);
  return (code && !message.includes(code) ? `${code}: ${message}` : message).slice(0, 500);
}

export class WebhookDeliveryFailed extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WebhookDeliveryFailed';
  }
}

const DeliveryPayload = z.object({ deliveryId: z.string() });

/** The `deliverWebhook` task: one attempt of one delivery. */
export async function deliverWebhook(payload: unknown, deps: TaskDeps): Promise<void> {
  const { deliveryId } = DeliveryPayload.parse(payload);
  const delivery = await deps.prisma.webhookDelivery.findUnique({ where: { id: deliveryId }, include: { webhook: true } });
  // Gone with its webhook or its event (retention), or already done: nothing to send.
  if (!delivery || delivery.status !== 'pending') return;
  const event = await readEvent(deps.prisma, delivery.eventSeq);
  if (!event) return;
  const max = deps.config.webhooks.maxAttempts;
  const fail = (lastError: string | null) =>
    deps.prisma.webhookDelivery.updateMany({
      where: { id: deliveryId, status: 'pending' },
      data: { status: 'failed', nextAttemptAt: null, ...(lastError ? { lastError } : {}) },
    });
  if (!delivery.webhook.active) return void (await fail('the webhook is inactive'));
  if (delivery.attempts >= max) return void (await fail(null));

  const now = deps.clock.now();
  const hook = delivery.webhook;
  if (hook.circuitOpenUntil && hook.circuitOpenUntil > now) return deferDelivery(deps, delivery, hook.circuitOpenUntil, hook.consecutiveFailures, now);

  // Claim the attempt (counted even if this process dies while sending). While it runs, the
  // delivery shows no result and no next attempt.
  const claimed = await deps.prisma.webhookDelivery.updateMany({
    where: { id: deliveryId, status: 'pending', attempts: delivery.attempts },
    data: { attempts: { increment: 1 }, lastAttemptAt: now, lastStatusCode: null, lastError: null, nextAttemptAt: null },
  });
  if (claimed.count === 0) return;
  const attempt = delivery.attempts + 1;

  const body = JSON.stringify(webhookBody(event));
  const timestamp = Math.floor(now.getTime() / 1000);
  let status: number | null = null;
  let error: string | null = null;
  try {
    const res = await guardedPost(delivery.webhook.url, {
      allowPrivate: deps.config.webhooks.allowPrivate,
      timeoutMs: webhookRequestLimits.timeoutMs,
      connectTimeoutMs: deps.config.webhookDelivery.connectTimeoutMs,
      responseTimeoutMs: deps.config.webhookDelivery.responseTimeoutMs,
      body,
      headers: {
        'Content-Type': 'application/json',
        'User-Agent': WEBHOOK_USER_AGENT,
        'X-Webhook-Id': delivery.webhookId,
        'X-Delivery-Id': delivery.id,
        'X-Event-Id': delivery.eventId,
        'X-Event-Type': delivery.eventType,
        [SIGNATURE_HEADER]: signWebhook(signingSecrets(delivery.webhook, now), timestamp, body),
      },
    });
    status = res.status;
    if (status < 200 || status > 299) error = `the receiver answered HTTP ${status}${res.snippet ? `: ${res.snippet.replace(/\s+/g, ' ').slice(0, 200)}` : ''}`;
  } catch (err) {
    error = describeFailure(err);
  }
  const done = deps.clock.now();
  if (error === null) {
    await transaction(deps.prisma, async (tx) => {
      await tx.webhookDelivery.update({
        where: { id: deliveryId },
        data: { status: 'succeeded', lastStatusCode: status, lastError: null, deliveredAt: done, nextAttemptAt: null },
      });
      // The endpoint answers: its circuit closes.
      await tx.$executeRaw`UPDATE "Webhook" SET "consecutiveFailures" = 0, "circuitOpenUntil" = NULL
        WHERE id = ${delivery.webhookId} AND ("consecutiveFailures" <> 0 OR "circuitOpenUntil" IS NOT NULL)`;
    });
    return;
  }
  const last = attempt >= max;
  const { circuitFailures, circuitCooldownSeconds } = deps.config.webhookDelivery;
  // As a UTC timestamp in SQL (the column has no zone), from epoch milliseconds.
  const opensUntilMs = done.getTime() + circuitCooldownSeconds * 1000;
  await transaction(deps.prisma, async (tx) => {
    await tx.webhookDelivery.update({
      where: { id: deliveryId },
      data: {
        status: last ? 'failed' : 'pending',
        lastStatusCode: status,
        lastError: error,
        nextAttemptAt: last ? null : new Date(done.getTime() + retryDelayMs(attempt)),
      },
    });
    // One more failure in a row; at the threshold (and at every failed probe after it) the
    // circuit opens for the cool-down.
    await tx.$executeRaw`UPDATE "Webhook" SET "consecutiveFailures" = "consecutiveFailures" + 1,
        "circuitOpenUntil" = CASE WHEN "consecutiveFailures" + 1 >= ${circuitFailures} THEN to_timestamp(${opensUntilMs}::float8 / 1000) AT TIME ZONE 'UTC' ELSE "circuitOpenUntil" END
      WHERE id = ${delivery.webhookId}`;
  });
  if (last) {
    deps.log.warn({ deliveryId, webhookId: delivery.webhookId, attempts: attempt, error }, 'webhook delivery failed for good');
    return;
  }
  // graphile-worker retries with its exponential backoff.
  throw new WebhookDeliveryFailed(`webhook delivery ${deliveryId}, attempt ${attempt}: ${error}`);
}

const DEFERRED = 'deferred, not attempted';
const LAST_ATTEMPT = '; last attempt: ';

/**
 * The endpoint's circuit is open: no request, no attempt spent. The delivery says until when and
 * why, and its job is queued again (same organization queue) for when the circuit closes; this
 * job ends. Both in one transaction, so the delivery is never left without a job.
 */
async function deferDelivery(
  deps: TaskDeps,
  delivery: WebhookDelivery & { webhook: Webhook },
  until: Date,
  failures: number,
  now: Date,
): Promise<void> {
  // Keep the last attempt's own error visible after the deferral's reason.
  const prior = delivery.lastError?.startsWith(DEFERRED) ? delivery.lastError.split(LAST_ATTEMPT)[1] : delivery.lastError;
  const reason = `${DEFERRED}: the endpoint failed ${failures} times in a row; deliveries resume at ${until.toISOString()}`;
  await transaction(deps.prisma, async (tx) => {
    const { count } = await tx.webhookDelivery.updateMany({
      where: { id: delivery.id, status: 'pending', attempts: delivery.attempts },
      data: { nextAttemptAt: until, lastError: prior ? `${reason}${LAST_ATTEMPT}${prior}`.slice(0, 1000) : reason },
    });
    if (count === 0) return;
    await tx.$executeRaw`SELECT "docgraph_webhook_enqueue"(${delivery.id}, ${delivery.webhook.organizationId}, ${until.getTime() - now.getTime()}::float8)`;
  });
}

/** The queue gave the job up (a worker died during its last attempt): the delivery failed. */
export async function giveUpWebhookDelivery(payload: unknown, deps: TaskDeps, reason: GiveUpReason): Promise<void> {
  const parsed = DeliveryPayload.safeParse(payload);
  if (!parsed.success) return;
  const lastError = reason.cause === 'worker-lost' ? `the worker stopped during the last attempt (${reason.attempts} attempts)` : undefined;
  await deps.prisma.webhookDelivery.updateMany({
    where: { id: parsed.data.deliveryId, status: 'pending' },
    data: { status: 'failed', nextAttemptAt: null, ...(lastError ? { lastError } : {}) },
  });
}
