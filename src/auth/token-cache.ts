// A per-process cache of bearer token → viewer, so an authenticated request does not read the
// token row every time. Safe across processes: a trigger on ApiToken and User
// (migration 20261124020000_auth_notify) notifies `docgraph_auth` when such a row changes, and
// every process listening clears its cache on that notice. PostgreSQL delivers it at commit, so a
// revoked token stops working everywhere within the notice's delivery time (milliseconds).
//
// Fail-safe rules:
// - while the LISTEN connection is not up (start-up, database outage, reconnecting), the cache
//   is bypassed and cleared: every request reads the token row, as without a cache;
// - a lookup that started before a notice is not stored (a generation counter), so a revocation
//   that commits during a lookup can never be cached over;
// - entries also expire after `ttlMs`, a backstop, not the invalidation mechanism.
import pg from 'pg';
import type { Logger } from 'pino';
import { LRUCache } from 'lru-cache';
import type { Tx } from '../db/client.ts';
import { hashToken, userForToken } from './tokens.ts';
import type { Viewer } from './access.ts';

export const AUTH_CHANNEL = 'docgraph_auth';
const RECONNECT_MS = 1000;

export class TokenCache {
  private readonly cache: LRUCache<string, Viewer>;
  private client?: pg.Client;
  private listening = false;
  private generation = 0;
  private stopped = false;
  private reconnectTimer?: NodeJS.Timeout;

  constructor(
    private readonly databaseUrl: string,
    private readonly log: Logger,
    opts: { max?: number; ttlMs?: number; connectTimeoutMs?: number } = {},
  ) {
    this.cache = new LRUCache({ max: opts.max ?? 10_000, ttl: opts.ttlMs ?? 5 * 60_000 });
    this.connectTimeoutMs = opts.connectTimeoutMs ?? 3000;
  }
  private readonly connectTimeoutMs: number;

  /** Open the LISTEN connection; the cache serves hits only while it is up. */
  async start() {
    this.stopped = false;
    await this.listen().catch((err) => {
      this.log.warn({ err }, 'token cache: cannot listen for invalidations; reading tokens from the database');
      this.scheduleReconnect();
    });
  }

  private async listen() {
    const client = new pg.Client({ connectionString: this.databaseUrl, connectionTimeoutMillis: this.connectTimeoutMs, keepAlive: true });
    const lost = (err?: unknown) => {
      if (this.client !== client) return;
      this.invalidate();
      this.listening = false;
      this.client = undefined;
      client.end().catch(() => {});
      if (!this.stopped) {
        this.log.warn({ err }, 'token cache: invalidation connection lost; reading tokens from the database until it is back');
        this.scheduleReconnect();
      }
    };
    client.on('error', lost);
    client.on('end', () => lost());
    client.on('notification', (msg) => {
      if (msg.channel === AUTH_CHANNEL) this.invalidate();
    });
    this.client = client;
    await client.connect();
    await client.query(`LISTEN ${AUTH_CHANNEL}`);
    // Anything cached before this point may have missed a notice.
    this.invalidate();
    this.listening = true;
  }

  private scheduleReconnect() {
    if (this.stopped || this.reconnectTimer) return;
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      this.listen().catch(() => this.scheduleReconnect());
    }, RECONNECT_MS);
    this.reconnectTimer.unref();
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
    this.stopped = true;
    clearTimeout(this.reconnectTimer);
    this.listening = false;
    this.cache.clear();
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => {});
  }
}
