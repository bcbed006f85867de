// A per-process cache of bearer token → viewer, so an authenticated request does not read the
// token row every time. Safe across processes: a trigger on ApiToken and User
// (migration 20261124020000_auth_notify) notifies `docgraph_auth` when such a row changes, and
// every process listening clears its cache on that notice. PostgreSQL delivers it at commit, so a
// revoked token stops working everywhere within the notice's delivery time (milliseconds).
//
// The LISTEN connection needs a session: it is opened on DATABASE_DIRECT_URL, never through a
// transaction-mode pooler (src/db/listen.ts checks a notice round trip at every connection).
// Revocations are rare writes, so this NOTIFY is not on a hot commit path (unlike one per event).
//
// Fail-safe rules:
// - while the LISTEN connection is not up (start-up, database outage, reconnecting), the cache
//   is bypassed and cleared: every request reads the token row, as without a cache;
// - likewise while it is up but deaf: a self-notice that misses its deadline (src/db/listen.ts,
//   `LISTEN_HEALTH_MS`) turns the cache off until the next one arrives, so a stalled connection
//   (a NAT, a failover) cannot keep a revoked token working here for the TTL;
// - a lookup that started before a notice is not stored (a generation counter), so a revocation
//   that commits during a lookup can never be cached over;
// - entries also expire after `ttlMs`, a backstop, not the invalidation mechanism.
import type { Logger } from 'pino';
import { LRUCache } from 'lru-cache';
import type { Tx } from '../db/client.ts';
import { hashToken, userForToken } from './tokens.ts';
import { ListenConnection, type ListenHealth } from '../db/listen.ts';
import type { Viewer } from './access.ts';

export const AUTH_CHANNEL = 'docgraph_auth';

export class TokenCache {
  private readonly cache: LRUCache<string, Viewer>;
  /** The LISTEN connection (tests stall its socket). */
  readonly listener: ListenConnection;
  private listening = false;
  private generation = 0;

  constructor(
    databaseUrl: string,
    private readonly log: Logger,
    opts: { max?: number; ttlMs?: number; connectTimeoutMs?: number; health?: ListenHealth } = {},
  ) {
    this.cache = new LRUCache({ max: opts.max ?? 10_000, ttl: opts.ttlMs ?? 5 * 60_000 });
    this.listener = new ListenConnection({
      databaseUrl,
      channel: AUTH_CHANNEL,
      connectTimeoutMs: opts.connectTimeoutMs,
      log,
      lostMessage: 'token cache: invalidation connection lost; reading tokens from the database until it is back',
      onNotification: () => this.invalidate(),
      onUp: () => {
        // Anything cached before this point may have missed a notice.
        this.invalidate();
        this.listening = true;
      },
      onDown: () => {
        this.invalidate();
        this.listening = false;
      },
      health: opts.health,
      onStall: () => {
        this.log.warn('token cache: invalidation notices stalled; reading tokens from the database until they flow again');
        this.invalidate();
        this.listening = false;
      },
      onFlowing: () => {
        // Every notice committed before the self-notice has been heard by now.
        this.invalidate();
        this.listening = true;
      },
    });
  }

  /** Whether hits are served now (false: every lookup reads the database). */
  get serving(): boolean {
    return this.listening;
  }

  /** Open the LISTEN connection; the cache serves hits only while it is up. */
  async start() {
    await this.listener.connect().catch((err) => {
      this.log.warn({ err }, 'token cache: cannot listen for invalidations; reading tokens from the database');
      this.listener.scheduleReconnect();
    });
  }

  /**
   * Drop every entry. The trigger's notice does this on every process; the process that made the
   * change also calls it right after its commit, so its own next request cannot beat the notice.
   */
  invalidate() {
    this.generation++;
    this.cache.clear();
  }

  /** The viewer a bearer token belongs to, or null (missing, unknown or revoked). */
  async viewerFor(db: Tx, token: string): Promise<Viewer | null> {
    const key = hashToken(token);
    if (this.listening) {
      const hit = this.cache.get(key);
      if (hit) return hit;
    }
    const generation = this.generation;
    const viewer = await userForToken(db, token);
    if (viewer && this.listening && generation === this.generation) this.cache.set(key, viewer);
    return viewer;
  }

  async stop() {
    this.listening = false;
    this.cache.clear();
    await this.listener.stop();
  }
}
