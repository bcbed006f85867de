// The live event feed: one per process. It follows the event log ("Event", log.ts) and hands each
// new row, in `seq` order, to the subscriptions of this process that want it (the streams of
// stream.ts, which GraphQL subscriptions open: src/graphql/subscriptions.ts).
//
// How it learns of new rows: it reads the log by position, every `pollMs` (LIVE_POLL_MS, 100 ms
// by default) while this process has subscriptions, on a dedicated session connection
// (DATABASE_DIRECT_URL), plus at once after a reconnect: one read per interval per process, never
// one per subscriber, and nothing at all on a process without subscriptions. Writers send no
// notification: a NOTIFY per event made PostgreSQL serialize every event-writing commit on its
// notify lock (migration 20261127110200_event_notify_off). Delivery latency is thus at most one
// interval plus one read (about 50 ms on average at the default). Reads go by position, so a lost
// connection loses nothing: the next read catches up. (The connection still LISTENs on
// `docgraph_events`: a notice there, from older writers or by hand, starts a read at once.)
//
// Why not simply `seq > last`: `seq` is drawn at insert, rows become visible at commit, and two
// transactions can commit in the other order. When a read sees seq 11 but not 10, 10 is a *gap*:
// either its transaction is still running (it will commit or roll back) or it rolled back. Rows
// above the lowest open gap are held back, so delivery stays in `seq` order and a client's
// `Last-Event-ID` is an exact resume point. A gap closes when its row shows up, or when every
// transaction that was in flight when the gap was first seen (`pg_snapshot_xip` of that read's
// snapshot) has ended: the gap's owner was one of them (it drew its seq before a row that was
// already committed), so once they are all gone its row is either visible to the next read or
// never will be. A gap still open after GAP_GIVE_UP_MS (a transaction holding its event for that
// long) is given up with a warning, so one stuck transaction cannot stall every stream.
//
// Memory: at most `maxSubscriptions` subscriptions per process, of which at most `maxPerToken`
// for one API token and `maxPerIp` for one client address (so one caller cannot take every slot);
// each buffers at most `queueLength` undelivered rows and fails (the client reconnects and resumes
// from the log) rather than buffering forever behind a slow reader.
import type pg from 'pg';
import { ListenConnection, type ListenHealth } from '../db/listen.ts';
import type { Logger } from 'pino';
import { AppError, RETRY_AFTER_SECONDS, rateLimited, serviceUnavailable } from '../lib/errors.ts';
import { eventRowsSql, toEventRow, type EventRow, type RawEventRow } from './log.ts';

export const EVENTS_CHANNEL = 'docgraph_events';
/** Rows per read; a full page reads again at once. */
const READ_LIMIT = 500;
/** While gaps are open, re-read this often (a rollback sends no notice). */
const GAP_RETRY_MS = 50;
/** A gap open this long is given up (its rows, if they ever commit, are still in the log). */
const GAP_GIVE_UP_MS = 15_000;
/** Gaps tracked at most (a jump of more than this in `seq` is taken as settled). */
const MAX_GAPS = 10_000;
/** At start-up, seqs this far back are checked for gaps (transactions in flight at start). */
const START_WINDOW = 1000;


export type FeedOptions = {
  maxSubscriptions: number;
  /** Subscriptions of one API token, and of one client IP, at most. */
  maxPerToken: number;
  maxPerIp: number;
  queueLength: number;
  /** Self-notices on the LISTEN connection (src/db/listen.ts). */
  health?: ListenHealth;
  connectTimeoutMs?: number;
  /** Read interval while subscriptions exist, ms (the delivery latency; default 100). */
  pollMs?: number;
};


/** Who holds a subscription, for the caps per token and per client IP. */
export type SubscriptionOwner = { tokenId: string; ip: string };

/** A subscriber's view of the feed: rows in order, `null` when the feed ended it (shutdown). */
export class LiveSubscription {
  private queue: EventRow[] = [];
  private waiter?: { resolve: (row: EventRow | null) => void; reject: (err: unknown) => void };
  private ended = false;
  private error?: AppError;

  constructor(
    /** Every row with seq ≤ horizon was settled when this subscription started: live rows are above it. */
    readonly horizon: number,
    readonly organizationId: string,
    readonly match: (row: EventRow) => boolean,
    private readonly queueLength: number,
    private readonly onClose: (s: LiveSubscription) => void,
    readonly owner?: SubscriptionOwner,
  ) {}

  /** @internal the feed's delivery. */
  push(row: EventRow) {
    if (this.ended) return;
    if (this.waiter) {
      const w = this.waiter;
      this.waiter = undefined;
      return w.resolve(row);
    }
    if (this.queue.length >= this.queueLength) {
      this.fail(serviceUnavailable(`This subscription fell more than ${this.queueLength} events behind and was ended; reconnect with Last-Event-ID to resume from the log`));
      return;
    }
    this.queue.push(row);
  }

  /** @internal end with an error (the next `next()` rejects). */
  fail(error: AppError) {
    if (this.ended) return;
    this.error = error;
    this.finish();
  }

  /** @internal end quietly (shutdown): `next()` answers null once the queue is drained. */
  end() {
    if (this.ended) return;
    this.finish();
  }

  private finish() {
    this.ended = true;
    this.onClose(this);
    if (this.error) this.queue = [];
    const w = this.waiter;
    this.waiter = undefined;
    if (w) this.error ? w.reject(this.error) : w.resolve(null);
  }

  /** The next row (waits), or null when ended. Rejects when the subscription failed. */
  next(): Promise<EventRow | null> {
    const row = this.queue.shift();
    if (row) return Promise.resolve(row);
    if (this.error) return Promise.reject(this.error);
    if (this.ended) return Promise.resolve(null);
    return new Promise((resolve, reject) => (this.waiter = { resolve, reject }));
  }

  /** The subscriber is done (client gone, access lost): leave the feed. */
  close() {
    this.ended = true;
    this.queue = [];
    this.onClose(this);
    const w = this.waiter;
    this.waiter = undefined;
    w?.resolve(null);
  }
}

type Gap = { xip: Set<string>; since: number };

/** Add `by` to a count, deleting it at zero (the maps hold only live owners). */
function bump(counts: Map<string, number>, key: string, by: number) {
  const n = (counts.get(key) ?? 0) + by;
  if (n > 0) counts.set(key, n);
  else counts.delete(key);
}

export class EventFeed {
  private readonly listener: ListenConnection;
  private starting?: Promise<void>;
  private initialized = false;
  private stopped = false;
  /** Shutting down: no new subscriptions. */
  private closing = false;
  private retryTimer?: NodeJS.Timeout;
  private pollTimer?: NodeJS.Timeout;
  private reading = false;
  private again = false;
  /** Waiting for a read that starts after they asked (`catchUp`). */
  private nextWaiters: Array<() => void> = [];

  /** Highest seq read. */
  private high = 0;
  /** Every seq ≤ horizon is settled: delivered, or never committed. */
  private horizon = 0;
  private readonly gaps = new Map<number, Gap>();
  /** Rows read but above the lowest open gap, in seq order. */
  private held: EventRow[] = [];
  private readonly byOrg = new Map<string, Set<LiveSubscription>>();
  private count = 0;
  private readonly perToken = new Map<string, number>();
  private readonly perIp = new Map<string, number>();
  /** Reads done (tests and metrics). */
  reads = 0;

  constructor(
    databaseUrl: string,
    private readonly log: Logger,
    private readonly opts: FeedOptions,
  ) {
    this.listener = new ListenConnection({
      databaseUrl,
      channel: EVENTS_CHANNEL,
      connectTimeoutMs: opts.connectTimeoutMs,
      log,
      lostMessage: 'live feed: event connection lost; catching up from the log when it is back',
      onNotification: () => this.pump(),
      // A stalled connection reads nothing either; once notices flow again, catch up.
      health: opts.health,
      onFlowing: () => this.pump(),
      onUp: async (client) => {
        if (!this.initialized) await this.initialize(client);
        this.initialized = true;
        this.pollTimer ??= setInterval(() => this.count > 0 && this.pump(), this.opts.pollMs ?? 100).unref();
        // Anything committed while the connection was down.
        this.pump();
      },
    });
  }

  /** Live subscriptions on this process. */
  get size() {
    return this.count;
  }

  /**
   * Start following the log (once, lazily: a process nobody subscribes to holds no extra
   * connection). Rejects with SERVICE_UNAVAILABLE when the database cannot be reached.
   */
  private ensureStarted(): Promise<void> {
    if (this.stopped) return Promise.reject(serviceUnavailable('The server is shutting down'));
    if (this.initialized) return Promise.resolve();
    this.starting ??= this.listener.connect().catch((err) => {
      this.starting = undefined;
      this.log.warn({ err }, 'live feed: cannot listen for events');
      throw serviceUnavailable('Live updates are unavailable right now (the database cannot be reached); retry in a few seconds');
    });
    return this.starting;
  }

  /** Start at the end of the log; recent seqs not visible yet are gaps (in-flight transactions). */
  private async initialize(client: pg.Client) {
    const { rows } = await client.query<{ xip: string[]; seqs: string[] }>(
      `SELECT (SELECT coalesce(array_agg(x::text), '{}') FROM pg_snapshot_xip(pg_current_snapshot()) AS x) AS xip,
              (SELECT coalesce(array_agg(s."seq"::text ORDER BY s."seq"), '{}') FROM (SELECT "seq" FROM "Event" ORDER BY "seq" DESC LIMIT ${START_WINDOW}) s) AS seqs`,
    );
    const seqs = rows[0].seqs.map(Number);
    const xip = new Set(rows[0].xip);
    this.high = seqs.length ? seqs[seqs.length - 1] : 0;
    const present = new Set(seqs);
    const now = Date.now();
    for (let s = seqs.length ? seqs[0] : this.high + 1; s < this.high; s++) if (!present.has(s)) this.gaps.set(s, { xip, since: now });
    this.settle(xip, now);
  }

  /** Read new rows now (coalesced: one read at a time, one more if asked meanwhile). */
  private pump() {
    if (!this.initialized || this.stopped) return;
    if (this.reading) {
      this.again = true;
      return;
    }
    const client = this.listener.current;
    if (!client) return this.releaseWaiters(this.nextWaiters.splice(0));
    this.reading = true;
    this.again = false;
    const waiters = this.nextWaiters.splice(0);
    this.read(client)
      .then((full) => {
        if (full) this.again = true;
      })
      .catch((err) => this.log.warn({ err }, 'live feed: reading the event log failed'))
      .finally(() => {
        this.reading = false;
        this.releaseWaiters(waiters);
        if (this.again) this.pump();
        else if (this.gaps.size && !this.retryTimer && !this.stopped) {
          this.retryTimer = setTimeout(() => {
            this.retryTimer = undefined;
            this.pump();
          }, GAP_RETRY_MS);
          this.retryTimer.unref();
        }
      });
  }

  private releaseWaiters(waiters: Array<() => void>) {
    for (const w of waiters) w();
  }

  /** Resolves after a read that started after this call (or at once when none can run). */
  private catchUp(): Promise<void> {
    if (!this.initialized || this.stopped) return Promise.resolve();
    return new Promise((resolve) => {
      this.nextWaiters.push(resolve);
      this.pump();
    });
  }

  /** One read: new rows and open gaps' rows, with the snapshot's running transactions. True when the page was full. */
  private async read(client: pg.Client): Promise<boolean> {
    const gaps = [...this.gaps.keys()];
    this.reads++;
    const { rows } = await client.query<{ xip: string[]; rows: RawEventRow[] }>(
      `SELECT (SELECT coalesce(array_agg(x::text), '{}') FROM pg_snapshot_xip(pg_current_snapshot()) AS x) AS xip,
              (${eventRowsSql(`"seq" > $1 OR "seq" = ANY($2::bigint[])`, READ_LIMIT)}) AS rows`,
      [this.high, gaps],
    );
    const xip = new Set(rows[0].xip);
    const now = Date.now();
    const found = rows[0].rows.map(toEventRow);
    for (const row of found) {
      if (this.gaps.delete(row.seq)) {
        this.hold(row);
        continue;
      }
      if (row.seq <= this.high) continue;
      if (row.seq - this.high - 1 > MAX_GAPS - this.gaps.size) {
        this.log.warn({ from: this.high, to: row.seq }, 'live feed: too many unseen seqs at once; taking them as settled');
      } else {
        for (let s = this.high + 1; s < row.seq; s++) this.gaps.set(s, { xip, since: now });
      }
      this.high = row.seq;
      this.held.push(row);
    }
    this.settle(xip, now);
    return found.length === READ_LIMIT;
  }

  private hold(row: EventRow) {
    let i = this.held.length;
    while (i > 0 && this.held[i - 1].seq > row.seq) i--;
    this.held.splice(i, 0, row);
  }

  /** Close the gaps whose owners are gone, then deliver every held row below the lowest open gap. */
  private settle(xip: Set<string>, now: number) {
    for (const [seq, gap] of this.gaps) {
      let open = false;
      for (const x of gap.xip) if (xip.has(x)) open = true;
      if (open && now - gap.since > GAP_GIVE_UP_MS) {
        this.log.warn({ seq }, 'live feed: an event seq stayed invisible too long; delivering past it');
        open = false;
      }
      if (!open) this.gaps.delete(seq);
    }
    let lowest = Infinity;
    for (const seq of this.gaps.keys()) if (seq < lowest) lowest = seq;
    while (this.held.length && this.held[0].seq < lowest) this.dispatch(this.held.shift()!);
    this.horizon = lowest === Infinity ? this.high : Math.min(this.high, lowest - 1);
  }

  private dispatch(row: EventRow) {
    const subs = this.byOrg.get(row.organizationId);
    if (!subs) return;
    for (const s of [...subs]) {
      let wanted = false;
      try {
        wanted = s.match(row);
      } catch (err) {
        this.log.error({ err }, 'live feed: a subscription filter failed');
      }
      if (wanted) s.push(row);
    }
  }

  /**
   * A new subscription to an organization's rows that `match`. Its `horizon` is the feed's position
   * now: rows above it arrive through `next()`; rows up to it are in the log (`readEvents`, log.ts).
   */
  async subscribe(organizationId: string, match: (row: EventRow) => boolean, owner?: SubscriptionOwner): Promise<LiveSubscription> {
    this.admit(owner);
    await this.ensureStarted();
    // Nobody tells the feed of new rows (it polls): read now, so the horizon is the log's end as
    // of this call and a stream without a resume point starts exactly after what committed before.
    await this.catchUp();
    // Again after the wait: concurrent subscribes all passed the first check.
    this.admit(owner);
    const sub = new LiveSubscription(this.horizon, organizationId, match, this.opts.queueLength, (s) => this.remove(s), owner);
    let set = this.byOrg.get(organizationId);
    if (!set) this.byOrg.set(organizationId, (set = new Set()));
    set.add(sub);
    this.count++;
    if (owner) {
      bump(this.perToken, owner.tokenId, 1);
      bump(this.perIp, owner.ip, 1);
    }
    return sub;
  }

  /** Throws when a new subscription of `owner` would pass a cap: its token's, its address's (429), the process's (503). */
  private admit(owner: SubscriptionOwner | undefined) {
    if (this.closing) throw serviceUnavailable('The server is shutting down; retry shortly (or on another instance)');
    const { maxPerToken, maxPerIp, maxSubscriptions } = this.opts;
    if (owner && (this.perToken.get(owner.tokenId) ?? 0) >= maxPerToken) {
      throw rateLimited(`Too many open subscriptions for this token: at most ${maxPerToken} on one server; close one first`, RETRY_AFTER_SECONDS);
    }
    if (owner && (this.perIp.get(owner.ip) ?? 0) >= maxPerIp) {
      throw rateLimited(`Too many open subscriptions from this address: at most ${maxPerIp} on one server; close one first`, RETRY_AFTER_SECONDS);
    }
    if (this.count >= maxSubscriptions) {
      throw serviceUnavailable(`This server holds its maximum of ${maxSubscriptions} subscriptions; retry in a few seconds (or on another instance)`);
    }
  }

  private remove(s: LiveSubscription) {
    const set = this.byOrg.get(s.organizationId);
    if (!set?.delete(s)) return;
    this.count--;
    if (!set.size) this.byOrg.delete(s.organizationId);
    if (s.owner) {
      bump(this.perToken, s.owner.tokenId, -1);
      bump(this.perIp, s.owner.ip, -1);
    }
  }

  /** End every subscription (graceful shutdown): each stream completes after what it holds. */
  endAll() {
    this.closing = true;
    for (const set of [...this.byOrg.values()]) for (const s of [...set]) s.end();
  }

  async stop() {
    this.stopped = true;
    this.endAll();
    clearTimeout(this.retryTimer);
    clearInterval(this.pollTimer);
    this.releaseWaiters(this.nextWaiters.splice(0));
    await this.listener.stop();
  }
}
