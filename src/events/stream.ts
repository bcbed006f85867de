// Event streams: what a live subscription runs (src/graphql/subscriptions.ts declares five of them
// as specs: which organization, which rows, what one event delivers). A stream joins the feed
// (feed.ts) at once, so nothing committed after it opens is missed; a reconnect (`Last-Event-ID:
// <seq>`, or the `after` argument) first replays the log after that seq (log.ts `readEvents`, the
// feed's own reader and mapper) up to where the feed took over, then goes live: no event lost,
// none twice.
//
// Before every delivery the caller is renewed from scratch (the token checked again: a revoked one
// ends the stream) and the spec loads the object by the query's rules (a removed member, a deleted
// object: the stream ends, with nothing sent about the event). Quiet streams are checked too: every
// keep-alive interval each stream checks its token and the subscribe-time access again
// (`check`), so a revoked token or a removed member ends the stream within one interval even when
// nothing happens. A resume point beyond the log's end (a seq this server never sent) is a
// BAD_REQUEST naming `after` or `Last-Event-ID`: such a stream would otherwise wait, silently, for
// the log to catch up with it.
//
// The event stream's `id:` line (src/http/live-sse.ts) is the seq of the event a stream yielded
// last: the stream records it (`markSent`) as it yields, the transport takes it (`takeSentSeq`)
// as it writes that result. One request carries one subscription, so one seq at a time.
import type { Logger } from 'pino';
import type { Db } from '../db/client.ts';
import type { Viewer } from '../auth/access.ts';
import { AppError, badRequest, isDatabaseUnavailable } from '../lib/errors.ts';
import type { EventFeed, LiveSubscription, SubscriptionOwner } from './feed.ts';
import { readEvents, type EventRow } from './log.ts';

/** Rows per page of a replay. */
const REPLAY_PAGE = 200;

/** What a subscription request carries from its transport (SSE: src/http/live-sse.ts; WebSocket: src/http/live-ws.ts). */
export type LiveRequest = {
  /** The `Last-Event-ID` header of a reconnecting event stream: replay the log after this seq. */
  lastEventId?: number;
  /** The caller's token checked again (revoked → null): before every delivered event. */
  revalidate(): Promise<Viewer | null>;
  /** The caller's token id and client IP: the feed's caps per token and per address. */
  owner: SubscriptionOwner;
};

/** The seq of the event each request's stream yielded last, until its transport takes it. */
const sent = new WeakMap<LiveRequest, number>();

function markSent(live: LiveRequest | undefined, row: EventRow) {
  if (live) sent.set(live, row.seq);
}

/** The log position of the result being sent (its `id:`), once; undefined for a result not from the log. */
export function takeSentSeq(live: LiveRequest | undefined): number | undefined {
  if (!live) return undefined;
  const seq = sent.get(live);
  sent.delete(live);
  return seq;
}

/** One subscription: which rows it wants and what each delivers. `C` is the caller's context. */
export type StreamSpec<C, T> = {
  organizationId: string;
  /** Which rows of the organization's log this subscription wants. */
  match: (row: EventRow) => boolean;
  /**
   * What one event delivers, loaded with the caller's access checked again (the context is
   * renewed). An AppError (NOT_FOUND, FORBIDDEN…) ends the stream quietly.
   */
  load: (caller: C, row: EventRow) => Promise<T>;
  /** The subscribe-time access check, run again on the keep-alive timer: throws when access is gone. */
  check: (caller: C) => Promise<unknown>;
  /** True after the last event worth waiting for (a finished import): the stream completes. */
  last?: (payload: T) => boolean;
};

export type Delivery<T> = T & { event: EventRow };

/** Where a stream runs: the process's feed and database, and its caller. */
export type StreamHost<C> = {
  feed: EventFeed | undefined;
  db: Db;
  log: Logger;
  keepAliveMs: number;
  live?: LiveRequest;
  /**
   * The caller again, from scratch, or null when its token no longer works: for `deliver`, the
   * context the delivered value is resolved with (renewed in place); for `check`, one of its own
   * (a delivery may be using the other).
   */
  renew(purpose: 'deliver' | 'check'): Promise<C | null>;
};

/**
 * `after` argument or `Last-Event-ID` header: the later of the two. Either beyond the log's end
 * (the event sequence's last value: every seq ever sent is at most that, whatever retention has
 * deleted since) is refused naming it.
 */
export async function resumePoint(db: Db, live: LiveRequest | undefined, after: string | null | undefined): Promise<number | undefined> {
  if (after != null && !/^\d{1,18}$/.test(after)) throw badRequest('after', 'must be the seq of an event (digits), as sent in an event stream’s `id:`');
  const given: Array<[string, number]> = [];
  if (after != null) given.push(['after', Number(after)]);
  if (live?.lastEventId !== undefined) given.push(['Last-Event-ID', live.lastEventId]);
  if (!given.length) return undefined;
  const [{ last }] = await db.$queryRaw<Array<{ last: bigint }>>`SELECT coalesce(pg_sequence_last_value(pg_get_serial_sequence('"Event"', 'seq')::regclass), 0) AS last`;
  for (const [field, seq] of given) {
    if (seq > Number(last)) throw badRequest(field, `is beyond the end of the event log (its last seq is ${last}): resume from a seq this server sent, or subscribe without it to start now`);
  }
  return Math.max(...given.map(([, seq]) => seq));
}

/**
 * Join the feed now (so nothing committed after this call is missed) and answer the stream:
 * the log's replay after `after`, then live rows, each checked and loaded by `spec`.
 */
export async function openStream<C, T>(host: StreamHost<C>, spec: StreamSpec<C, T>, after: number | undefined): Promise<AsyncIterableIterator<Delivery<T>>> {
  const feed = host.feed;
  if (!feed) throw new AppError('SERVICE_UNAVAILABLE', 'Live updates are not available on this server');
  const sub: LiveSubscription = await feed.subscribe(spec.organizationId, spec.match, host.live?.owner);
  let last = after ?? sub.horizon;
  /** Set when the keep-alive check found the token or the access gone. */
  let revoked = false;

  /** One delivery, or null when the caller lost access (the stream ends). */
  async function deliver(row: EventRow): Promise<Delivery<T> | null> {
    const caller = await host.renew('deliver');
    if (!caller) return null;
    try {
      return { ...(await spec.load(caller, row)), event: row };
    } catch (err) {
      if (err instanceof AppError && err.code !== 'SERVICE_UNAVAILABLE') return null;
      throw err;
    }
  }

  /**
   * The keep-alive check: the token and the subscribe-time access again, on a context of its own.
   * Gone → the stream ends (`sub.close()` wakes it). A database that cannot answer ends nothing:
   * the next check, or delivery, decides.
   */
  let timer: NodeJS.Timeout | undefined;
  let checksStopped = false;
  const stopChecks = () => {
    checksStopped = true;
    clearTimeout(timer);
  };
  // Each wait is at most one interval, jittered down to 80% of it, so streams opened in a burst
  // (clients reconnecting after a restart) do not all check in the same instant.
  const scheduleCheck = () => {
    if (checksStopped) return;
    timer = setTimeout(check, host.keepAliveMs * (0.8 + 0.2 * Math.random()));
    timer.unref();
  };
  async function check() {
    try {
      const caller = await host.renew('check');
      if (caller) await spec.check(caller);
      else revoked = true;
    } catch (err) {
      if (err instanceof AppError && err.code !== 'SERVICE_UNAVAILABLE') revoked = true;
      else if (isDatabaseUnavailable(err)) host.log.debug({ err }, 'live: a stream’s access re-check could not reach the database; trying again at the next');
      else host.log.error({ err }, 'live: a stream’s access re-check failed');
    }
    if (revoked) return sub.close();
    scheduleCheck();
  }
  scheduleCheck();

  async function* run(): AsyncGenerator<Delivery<T>> {
    try {
      // A reconnect: what the client missed, from the log, up to where the feed took over.
      while (last < sub.horizon) {
        const page = await readEvents(host.db, { organizationId: spec.organizationId, after: last, upTo: sub.horizon, limit: REPLAY_PAGE });
        if (!page.length) break;
        for (const row of page) {
          if (revoked) return;
          last = row.seq;
          if (!spec.match(row)) continue;
          const out = await deliver(row);
          if (!out) return;
          markSent(host.live, row);
          yield out;
          if (spec.last?.(out)) return;
        }
        if (page.length < REPLAY_PAGE) break;
      }
      for (;;) {
        const row = await sub.next();
        if (!row || revoked) return;
        if (row.seq <= last) continue;
        last = row.seq;
        const out = await deliver(row);
        if (!out) return;
        markSent(host.live, row);
        yield out;
        if (spec.last?.(out)) return;
      }
    } finally {
      stopChecks();
      sub.close();
    }
  }

  const it = run();
  // Closing the feed subscription first also wakes a generator waiting for its next row.
  const iterator: AsyncIterableIterator<Delivery<T>> = {
    next: () => it.next(),
    return: (value?: unknown) => (stopChecks(), sub.close(), it.return(value as never)),
    throw: (err?: unknown) => (stopChecks(), sub.close(), it.throw(err)),
    [Symbol.asyncIterator]: () => iterator,
  };
  return iterator;
}
