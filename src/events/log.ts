// The event log (outbox): every mutation records what it changed, in its own transaction, with
// `recordEvent(tx, actor, {...})`, so an event exists exactly when its change committed. Its
// readers: the organization audit log (graphql/audit-events.ts through domain/events.ts), the live
// feed and its streams (feed.ts, stream.ts: they resume by `seq`, increasing, and the feed reads
// new events by position on a short interval; writers send no notification) and webhook deliveries (domain/webhooks.ts; the deliveries themselves are written by
// the trigger of migration 20261124130000_webhooks, through `docgraph_webhook_delivery`).
//
// The types are the catalogue's (catalogue.ts); rows are read with one column list and one mapper
// (`EVENT_COLUMNS`, `toEventRow`), whoever reads them.
import crypto from 'node:crypto';
import type { Tx, Db } from '../db/client.ts';
import { Prisma, type EventSource } from '../generated/prisma/client.ts';
import type { Viewer } from '../auth/access.ts';
import type { Clock } from '../lib/clock.ts';
import { EVENTS, type EventObjectType, type EventPayload, type EventType } from './catalogue.ts';

export type { EventSource, EventObjectType, EventType };

/** Who made a change and through which entry point: a DomainContext is one. */
export type EventActor = { viewer: Viewer | null; source: EventSource; clock: Clock };

/** One event to record: a catalogue type, and that type's payload (the object type is the catalogue's). */
export type EventInput<K extends EventType = EventType> = {
  [T in K]: {
    type: T;
    organizationId: string;
    objectId: string;
  } & ({} extends EventPayload<T>
    ? { /** Ids, titles, revision ids; never bodies. Undefined keys are dropped. */ payload?: EventPayload<T> }
    : { payload: EventPayload<T> });
}[K];

/** The actor of background jobs: the system, source `job`. */
export const jobActor = (deps: { clock: Clock }): EventActor => ({ viewer: null, source: 'job', clock: deps.clock });

/** Drop undefined values so the JSON payload stays small and stable. */
function cleanPayload(payload: Record<string, unknown> | undefined): Prisma.InputJsonObject {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(payload ?? {})) if (v !== undefined) out[k] = v;
  return out as Prisma.InputJsonObject;
}

/** Record events of a change inside the change's transaction. */
export async function recordEvent(tx: Tx, actor: EventActor, ...events: EventInput[]): Promise<void> {
  if (events.length === 0) return;
  const occurredAt = actor.clock.now();
  await tx.event.createMany({
    data: events.map((e) => ({
      id: crypto.randomUUID(),
      type: e.type,
      occurredAt,
      organizationId: e.organizationId,
      userId: actor.viewer?.user.id ?? null,
      tokenId: actor.viewer?.tokenId ?? null,
      actorLabel: actor.viewer?.user.displayName ?? null,
      source: actor.source,
      objectType: EVENTS[e.type].object,
      objectId: e.objectId,
      payload: cleanPayload(e.payload as Record<string, unknown>),
    })),
  });
}

/**
 * `recordEvent`'s row for a write that is one statement (a data-modifying WITH, see
 * domain/spaces.ts updateSpace): an INSERT … SELECT over the statement's CTE `from`, with the same
 * columns and actor as `recordEvent`. The type is a catalogue name; the payload is SQL over the CTE,
 * so test/events.test.ts (which parses every recorded payload with its row's schema) checks it.
 */
export function eventInsertSql(actor: EventActor, e: { type: EventType; from: string; organizationId: Prisma.Sql; objectId: Prisma.Sql; payload: Prisma.Sql }): Prisma.Sql {
  return Prisma.sql`INSERT INTO "Event" ("id", "type", "occurredAt", "organizationId", "userId", "tokenId", "actorLabel", "source", "objectType", "objectId", "payload")
    SELECT ${crypto.randomUUID()}, ${e.type}, ${actor.clock.now()}, ${e.organizationId}, ${actor.viewer?.user.id ?? null}, ${actor.viewer?.tokenId ?? null},
           ${actor.viewer?.user.displayName ?? null}, ${actor.source}::"EventSource", ${EVENTS[e.type].object}, ${e.objectId}, ${e.payload}
    FROM ${Prisma.raw(`"${e.from}"`)}`;
}

// ------------------------------------------------------------------ reading

/** One row of the event log, as every reader sees it. */
export type EventRow = {
  /** Position in the log (increasing with every committed event). */
  seq: number;
  id: string;
  /** A catalogue type (catalogue.ts); rows written by hand may hold another name. */
  type: string;
  occurredAt: Date;
  organizationId: string;
  userId: string | null;
  tokenId: string | null;
  /** The user's display name when the event was recorded. */
  actorLabel: string | null;
  source: EventSource;
  objectType: EventObjectType | string;
  objectId: string;
  payload: Record<string, unknown>;
};

/** A row as `EVENT_COLUMNS` selects it inside `json_agg` (seq as a JSON number, occurredAt in epoch ms). */
export type RawEventRow = Omit<EventRow, 'occurredAt' | 'seq'> & { seq: number | string; occurredAt: number };

/** The columns every reader selects (occurredAt in epoch ms: TIMESTAMP(3) is UTC). */
export const EVENT_COLUMNS = `"seq", "id", "type", floor(extract(epoch FROM "occurredAt") * 1000) AS "occurredAt", "organizationId", "userId", "tokenId", "actorLabel", "source", "objectType", "objectId", "payload"`;

/** The one mapper of the log's rows. */
export const toEventRow = (r: RawEventRow): EventRow => ({ ...r, seq: Number(r.seq), occurredAt: new Date(Number(r.occurredAt)), payload: r.payload ?? {} });

/**
 * The statement reading rows `WHERE <where>` in `seq` order, at most `limit`, as one JSON array
 * (`rows`): the feed's read (feed.ts, beside its snapshot) and `readEvents` share it.
 */
export const eventRowsSql = (where: string, limit: number) =>
  `SELECT coalesce(json_agg(e ORDER BY e."seq"), '[]'::json) AS rows FROM (SELECT ${EVENT_COLUMNS} FROM "Event" WHERE ${where} ORDER BY "seq" LIMIT ${Number(limit)}) e`;

/** An organization's rows with `after < seq ≤ upTo`, in order, at most `limit` (a stream's replay). */
export async function readEvents(db: Db, q: { organizationId: string; after: number; upTo: number; limit: number }): Promise<EventRow[]> {
  const [{ rows }] = await db.$queryRawUnsafe<Array<{ rows: RawEventRow[] }>>(
    eventRowsSql(`"organizationId" = $1 AND "seq" > $2::bigint AND "seq" <= $3::bigint`, q.limit),
    q.organizationId,
    q.after,
    q.upTo,
  );
  return rows.map(toEventRow);
}

/** One row by its seq (a webhook delivery's event), or null once retention removed it. */
export async function readEvent(db: Db, seq: bigint | number): Promise<EventRow | null> {
  const [{ rows }] = await db.$queryRawUnsafe<Array<{ rows: RawEventRow[] }>>(eventRowsSql(`"seq" = $1::bigint`, 1), Number(seq));
  return rows.length ? toEventRow(rows[0]) : null;
}

/** The actor id of events the system made (jobs, the CLI). */
export const SYSTEM_ACTOR = 'system';

/** Who made an event, as the audit log and webhook bodies say it: a user, or the system. */
export function eventActor(e: { userId: string | null; actorLabel: string | null }): { type: 'user' | typeof SYSTEM_ACTOR; id: string; label: string | null } {
  return e.userId ? { type: 'user', id: e.userId, label: e.actorLabel } : { type: SYSTEM_ACTOR, id: SYSTEM_ACTOR, label: null };
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
