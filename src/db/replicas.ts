// Streaming replicas for reads (DATABASE_REPLICA_URLS). The edge (src/http/edge.ts) runs a
// GraphQL query or a REST GET read on a replica's Prisma client when one is fit; everything else
// (mutations, subscriptions, jobs, the token lookup, the rate limiter) stays on the primary.
//
// Fit: up (its last check answered), in recovery (a promoted or misconfigured "replica" is a
// fork: never read from it), lagging at most `maxLagMs`, and — when the request carries a
// read-your-writes token (`X-Docgraph-Lsn`, the primary's WAL position after the client's last
// write) — having replayed at least that position. Each replica is checked by one statement per
// `checkMs` interval, shared by every request (never one per request); a request uses the last
// answer while the next one is under way, unless it is older than `STALE_STATUS_MS`. A replay
// position only grows, so an old answer is never too optimistic about a token. A connection
// failure on a replica's pool marks it down at once.
import type { Logger } from 'pino';
import { createPrisma, type Db, type DbTimeouts, type QueryListener } from './client.ts';

/** The read-your-writes header: sent on a write's answer, echoed by the client on later requests. */
export const LSN_HEADER = 'X-Docgraph-Lsn';

/** How often each replica's replay position and lag are read, ms. */
export const REPLICA_CHECK_MS = 50;
/** A check older than this is awaited, not used, ms. */
const STALE_STATUS_MS = 1000;
/** A check that has not answered within this counts as a failure, ms. */
const CHECK_TIMEOUT_MS = 1000;

/** `0/16B3748` (PostgreSQL's pg_lsn text) as a number; undefined when it is not one. */
export function parseLsn(text: string): bigint | undefined {
  const m = /^([0-9A-Fa-f]{1,8})\/([0-9A-Fa-f]{1,8})$/.exec(text.trim());
  return m ? (BigInt(`0x${m[1]}`) << 32n) | BigInt(`0x${m[2]}`) : undefined;
}

/** A position as PostgreSQL writes it (`0/16B3748`). */
export function formatLsn(lsn: bigint): string {
  return `${(lsn >> 32n).toString(16).toUpperCase()}/${(lsn & 0xffffffffn).toString(16).toUpperCase()}`;
}

/** `backlogBytes`: WAL received but not replayed yet (what replay still has to do). */
export type ReplicaStatus = { ok: boolean; replayLsn: bigint; lagMs: number; backlogBytes: number; at: number };

const DOWN = (at: number): ReplicaStatus => ({ ok: false, replayLsn: 0n, lagMs: Infinity, backlogBytes: 0, at });

// Lag: 0 when everything received is replayed (an idle primary leaves the replay timestamp old),
// else the age of the last replayed transaction (unknown: too far behind).
const CHECK_SQL = `SELECT pg_is_in_recovery() AS standby, pg_last_wal_replay_lsn()::text AS replay,
  CASE WHEN pg_last_wal_receive_lsn() IS NOT DISTINCT FROM pg_last_wal_replay_lsn() THEN 0
       ELSE floor(extract(epoch FROM clock_timestamp() - pg_last_xact_replay_timestamp()) * 1000) END AS lag_ms,
  coalesce(greatest(pg_wal_lsn_diff(pg_last_wal_receive_lsn(), pg_last_wal_replay_lsn()), 0), 0)::float8 AS backlog`;

/** A replica as /metrics reports it: `fit` serves reads, `lagging` and `down` are skipped. */
export type ReplicaState = 'fit' | 'lagging' | 'down';

/**
 * Why a read went where it went (`docgraph_db_reads_total`): `replica` (a fit replica served it);
 * on the primary: `read_your_writes` (a replica within the lag bound had not replayed the
 * client's token yet), `lag` (replicas up but too far behind), `down` (no replica answering),
 * `bad_token` (a token that does not parse: the primary, to be safe).
 */
export type ReadRoute = 'replica' | 'read_your_writes' | 'lag' | 'down' | 'bad_token';
export const READ_ROUTES: readonly ReadRoute[] = ['replica', 'read_your_writes', 'lag', 'down', 'bad_token'];

export class Replica {
  readonly db: ReturnType<typeof createPrisma>;
  status: ReplicaStatus = DOWN(0);
  private checking?: Promise<ReplicaStatus>;
  /** Requests this replica was chosen for. */
  served = 0;

  constructor(
    readonly index: number,
    url: string,
    opts: { poolSize?: number; timeouts: DbTimeouts; log: Logger; forward: Set<QueryListener> },
  ) {
    const forward = opts.forward;
    // Its statements count for the request (observability) like the primary's, and can be watched alone (`onQuery`).
    const listeners = new Set<QueryListener>([(sql) => { for (const l of forward) l(sql); }]);
    this.db = createPrisma(url, { poolSize: opts.poolSize, timeouts: opts.timeouts, log: opts.log, listeners });
    this.db.pool.on('error', () => (this.status = DOWN(Date.now())));
  }

  get prisma(): Db {
    return this.db.prisma;
  }

  /** The last check, refreshed when older than `checkMs` (one check in flight at a time). */
  async current(checkMs: number): Promise<ReplicaStatus> {
    const now = Date.now();
    if (now - this.status.at < checkMs) return this.status;
    this.checking ??= this.check().finally(() => (this.checking = undefined));
    return now - this.status.at < STALE_STATUS_MS ? this.status : this.checking;
  }

  private async check(): Promise<ReplicaStatus> {
    let timer: NodeJS.Timeout | undefined;
    try {
      const answer = this.db.pool.query(CHECK_SQL);
      answer.catch(() => {});
      const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error('replica check timed out')), CHECK_TIMEOUT_MS)));
      const { rows } = await Promise.race([answer, timeout]);
      const row = rows[0] as { standby: boolean; replay: string | null; lag_ms: string | number | null; backlog: number | null };
      const replayLsn = row.replay ? parseLsn(row.replay) : undefined;
      this.status =
        row.standby && replayLsn !== undefined
          ? { ok: true, replayLsn, lagMs: row.lag_ms == null ? Infinity : Number(row.lag_ms), backlogBytes: Number(row.backlog ?? 0), at: Date.now() }
          : DOWN(Date.now());
    } catch {
      this.status = DOWN(Date.now());
    } finally {
      clearTimeout(timer);
    }
    return this.status;
  }
}

export class Replicas {
  readonly list: Replica[];
  private next = 0;
  /** Reads routed, by route (`replica`, or why the primary served it): /metrics. */
  readonly routed: Record<ReadRoute, number> = { replica: 0, read_your_writes: 0, lag: 0, down: 0, bad_token: 0 };

  constructor(
    urls: string[],
    private readonly opts: { maxLagMs: number; checkMs?: number; poolSize?: number; timeouts: DbTimeouts; log: Logger; listeners: Set<QueryListener> },
  ) {
    this.list = urls.map((url, i) => new Replica(i, url, { poolSize: opts.poolSize, timeouts: opts.timeouts, log: opts.log, forward: opts.listeners }));
  }

  /**
   * A replica fit to serve a read that must see `minLsn` (a read-your-writes token; undefined:
   * none), round-robin among the fit ones; undefined: run it on the primary.
   */
  async pick(minLsn: bigint | undefined): Promise<Replica | undefined> {
    const checkMs = this.opts.checkMs ?? REPLICA_CHECK_MS;
    const statuses = await Promise.all(this.list.map((r) => r.current(checkMs)));
    const fit = this.list.filter((_, i) => {
      const s = statuses[i];
      return s.ok && s.lagMs <= this.opts.maxLagMs && (minLsn === undefined || s.replayLsn >= minLsn);
    });
    if (!fit.length) {
      // The most hopeful reason: a replica that would do but for the token, else one only lagging.
      const up = statuses.filter((s) => s.ok);
      this.routed[up.some((s) => s.lagMs <= this.opts.maxLagMs) ? 'read_your_writes' : up.length ? 'lag' : 'down']++;
      return undefined;
    }
    const chosen = fit[this.next++ % fit.length];
    chosen.served++;
    this.routed.replica++;
    return chosen;
  }

  /**
   * The replica for a read carrying `token` (the `X-Docgraph-Lsn` header's value, or a WebSocket
   * operation's; undefined: none), or undefined for the primary. A token that does not parse
   * sends the read to the primary: when in doubt, the primary is always correct.
   */
  async route(token: unknown): Promise<Replica | undefined> {
    let minLsn: bigint | undefined;
    if (token !== undefined && token !== null) {
      minLsn = typeof token === 'string' ? parseLsn(token) : undefined;
      if (minLsn === undefined) {
        this.routed.bad_token++;
        return undefined;
      }
    }
    return this.pick(minLsn);
  }

  /** Each replica's last check, refreshed if older than the check interval (for /metrics). */
  async states(): Promise<Array<{ index: number; state: ReplicaState; status: ReplicaStatus }>> {
    const checkMs = this.opts.checkMs ?? REPLICA_CHECK_MS;
    const statuses = await Promise.all(this.list.map((r) => r.current(checkMs)));
    return this.list.map((r, i) => {
      const status = statuses[i];
      return { index: r.index, status, state: !status.ok ? 'down' : status.lagMs > this.opts.maxLagMs ? 'lagging' : 'fit' };
    });
  }

  /** The primary's WAL position now, as a read-your-writes token (after a write has committed). */
  static async currentLsn(primary: Db): Promise<string> {
    const rows = await primary.$queryRawUnsafe<Array<{ lsn: string }>>('SELECT pg_current_wal_lsn()::text AS lsn');
    return rows[0].lsn;
  }

  async close() {
    await Promise.all(this.list.map((r) => r.db.disconnect()));
  }
}
