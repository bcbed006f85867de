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
import type { Tx, Db } from '../db/client.ts';
import type { Prisma, EventSource } from '../generated/prisma/client.ts';
import type { Viewer } from '../auth/access.ts';
import type { Clock } from '../lib/clock.ts';
import type { TaskDeps } from './context.ts';

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
  | 'import';

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
