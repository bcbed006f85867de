// A dedicated PostgreSQL connection that LISTENs on one channel and comes back by itself: the
// token cache (src/auth/token-cache.ts) and the live feed (src/live/feed.ts) both learn of
// committed changes this way. A notice is delivered at commit, and only if the change commits.
//
// While the connection is down nothing is heard, so each user says what that means for it
// (`onDown`: the token cache stops serving hits) and what to do once it is back (`onUp`: clear
// the cache, or catch up from the event log) — notices sent meanwhile are lost for good.
import pg from 'pg';
import type { Logger } from 'pino';

/** Wait between reconnection attempts. */
export const RECONNECT_MS = 1000;

export type ListenOptions = {
  databaseUrl: string;
  channel: string;
  connectTimeoutMs?: number;
  log: Logger;
  /** Logged (warn) when an established connection drops: what the user does meanwhile. */
  lostMessage: string;
  onNotification: () => void;
  /** After LISTEN, on every (re)connection; a failure counts as a failed connection. */
  onUp?: (client: pg.Client) => Promise<void> | void;
  /** When an established connection drops. */
  onDown?: () => void;
};

export class ListenConnection {
  private client?: pg.Client;
  private stopped = false;
  private reconnectTimer?: NodeJS.Timeout;

  constructor(private readonly opts: ListenOptions) {}

  /** The connection, while it is up (its owner may also run its own reads on it). */
  get current(): pg.Client | undefined {
    return this.client;
  }

  /** Connect, LISTEN and run `onUp`. Rejects when any of it fails (see `scheduleReconnect`). */
  async connect(): Promise<void> {
    this.stopped = false;
    const { opts } = this;
    const client = new pg.Client({ connectionString: opts.databaseUrl, connectionTimeoutMillis: opts.connectTimeoutMs ?? 3000, keepAlive: true });
    const lost = (err?: unknown) => {
      if (this.client !== client) return;
      this.client = undefined;
      client.end().catch(() => {});
      opts.onDown?.();
      if (!this.stopped) {
        opts.log.warn({ err }, opts.lostMessage);
        this.scheduleReconnect();
      }
    };
    client.on('error', lost);
    client.on('end', () => lost());
    client.on('notification', (msg) => {
      if (msg.channel === opts.channel) opts.onNotification();
    });
    this.client = client;
    try {
      await client.connect();
      await client.query(`LISTEN ${opts.channel}`);
      await opts.onUp?.(client);
    } catch (err) {
      if (this.client === client) this.client = undefined;
      client.end().catch(() => {});
      throw err;
    }
  }

  /** Try again in RECONNECT_MS, and keep trying until connected or stopped. */
  scheduleReconnect() {
    if (this.stopped || this.reconnectTimer) return;
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      if (!this.stopped) this.connect().catch(() => this.scheduleReconnect());
    }, RECONNECT_MS);
    this.reconnectTimer.unref();
  }

  async stop() {
    this.stopped = true;
    clearTimeout(this.reconnectTimer);
    this.reconnectTimer = undefined;
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => {});
  }
}
