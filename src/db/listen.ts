// A dedicated PostgreSQL connection that LISTENs on one channel and comes back by itself: the
// token cache (src/auth/token-cache.ts) and the live feed (src/events/feed.ts) both learn of
// committed changes this way. A notice is delivered at commit, and only if the change commits.
//
// While the connection is down nothing is heard, so each user says what that means for it
// (`onDown`: the token cache stops serving hits) and what to do once it is back (`onUp`: clear
// the cache, or catch up from the event log) — notices sent meanwhile are lost for good.
//
// A connection can also be up and deaf: a NAT that dropped its mapping, a failover that left the
// socket open, a peer that stopped reading. TCP tells nothing for minutes (keep-alive probes
// after `TCP_KEEPALIVE_MS` idle, then the OS's probe interval and count). So, with `health`, the
// connection sends itself a notice every `intervalMs` on a channel of its own
// (`pg_notify` on the same connection, so the round trip crosses the same socket and the same
// notification queue as every other notice). One not back within `intervalMs` is a stall:
// `onStall` (the token cache goes straight to the database); the next one that comes back is
// `onFlowing` (PostgreSQL delivers notices in commit order, so every notice committed before it
// has been heard). A stall that lasts `reconnectAfterMs` drops the connection and reconnects.
//
// At every (re)connection, before `onUp`, the connection also checks itself once: a self-notice
// that must come back within the connect timeout, or the connection counts as failed (users keep
// reading the database, and it is retried). This catches a LISTEN that hears nothing, e.g. through
// a transaction-mode pooler that gave the notice's transaction another server connection. It
// cannot prove a session (an idle pooler may hand the same server connection back), so LISTEN is
// always given DATABASE_DIRECT_URL (src/config.ts); the periodic self-notices catch the rest.
import crypto from 'node:crypto';
import pg from 'pg';
import type { Logger } from 'pino';

/** Wait between reconnection attempts. */
export const RECONNECT_MS = 1000;
/** Idle time before the OS sends TCP keep-alive probes on a LISTEN connection (its default is 2 hours). */
export const TCP_KEEPALIVE_MS = 10_000;

export type ListenHealth = {
  /** A self-notice every this many ms; one not back by the next is a stall. */
  intervalMs: number;
  /** A stall this long drops the connection and reconnects. */
  reconnectAfterMs: number;
};

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
  /** Self-notices with a deadline (see the top of this file); off when absent. */
  health?: ListenHealth;
  /** A self-notice missed its deadline: notices may not be arriving. */
  onStall?: () => void;
  /** A self-notice arrived after a stall: notices flow again. */
  onFlowing?: () => void;
};

export class ListenConnection {
  private client?: pg.Client;
  private stopped = false;
  private reconnectTimer?: NodeJS.Timeout;
  /** This connection's own channel for its self-notices. */
  private readonly healthChannel: string;
  private healthTimer?: NodeJS.Timeout;
  private deadlineTimer?: NodeJS.Timeout;
  private pending?: { nonce: string; sentAt: number };
  private pings = 0;
  private stalledNow = false;
  /** The start-up self-notice being waited for. */
  private startCheck?: { nonce: string; heard: () => void };

  constructor(private readonly opts: ListenOptions) {
    this.healthChannel = `${opts.channel}_health_${crypto.randomBytes(6).toString('hex')}`;
  }

  /** The connection, while it is up (its owner may also run its own reads on it). */
  get current(): pg.Client | undefined {
    return this.client;
  }

  /** True from a missed self-notice until the next one arrives (or the connection is replaced). */
  get stalled(): boolean {
    return this.stalledNow;
  }

  /** Connect, LISTEN and run `onUp`. Rejects when any of it fails (see `scheduleReconnect`). */
  async connect(): Promise<void> {
    this.stopped = false;
    const { opts } = this;
    const client = new pg.Client({
      connectionString: opts.databaseUrl,
      connectionTimeoutMillis: opts.connectTimeoutMs ?? 3000,
      keepAlive: true,
      keepAliveInitialDelayMillis: TCP_KEEPALIVE_MS,
    });
    const lost = (err?: unknown) => {
      if (this.client !== client) return;
      this.client = undefined;
      this.stopHealth();
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
      else if (msg.channel === this.healthChannel && this.client === client) {
        if (this.startCheck && msg.payload === this.startCheck.nonce) this.startCheck.heard();
        else this.heard(msg.payload);
      }
    });
    this.client = client;
    try {
      await client.connect();
      await client.query(`LISTEN ${opts.channel}`);
      await client.query(`LISTEN ${this.healthChannel}`);
      await this.checkRoundTrip(client, opts.connectTimeoutMs ?? 3000);
      await opts.onUp?.(client);
    } catch (err) {
      if (this.client === client) this.client = undefined;
      client.end().catch(() => {});
      throw err;
    }
    this.startHealth(client);
  }

  /** One self-notice sent and heard back on `client`, or a rejection after `timeoutMs`. */
  private async checkRoundTrip(client: pg.Client, timeoutMs: number) {
    const nonce = `start:${crypto.randomBytes(6).toString('hex')}`;
    let timer: NodeJS.Timeout | undefined;
    const heard = new Promise<void>((resolve, reject) => {
      this.startCheck = { nonce, heard: resolve };
      timer = setTimeout(
        () => reject(new Error(`LISTEN connection on ${this.opts.channel}: its own notice did not come back within ${timeoutMs} ms (a transaction-mode pooler? LISTEN needs a session: DATABASE_DIRECT_URL)`)),
        timeoutMs,
      );
    });
    heard.catch(() => {}); // awaited below; a rejection while the query runs is not unhandled
    try {
      await client.query('SELECT pg_notify($1, $2)', [this.healthChannel, nonce]);
      await heard;
    } finally {
      clearTimeout(timer);
      this.startCheck = undefined;
    }
  }

  private startHealth(client: pg.Client) {
    const health = this.opts.health;
    if (!health || this.client !== client) return;
    this.stopHealth();
    this.healthTimer = setInterval(() => this.ping(client, health), health.intervalMs);
    this.healthTimer.unref();
  }

  private stopHealth() {
    clearInterval(this.healthTimer);
    clearTimeout(this.deadlineTimer);
    this.healthTimer = this.deadlineTimer = this.pending = undefined;
    this.stalledNow = false;
  }

  /** Send a self-notice, unless one is still out: then, past `reconnectAfterMs`, drop the connection. */
  private ping(client: pg.Client, health: ListenHealth) {
    if (this.client !== client) return;
    if (this.pending) {
      if (Date.now() - this.pending.sentAt >= health.reconnectAfterMs) {
        this.opts.log.warn({ channel: this.opts.channel, waitedMs: Date.now() - this.pending.sentAt }, 'LISTEN connection stalled; reconnecting');
        // `end()` would wait for the dead peer; destroying the socket ends the client at once ('end' → lost).
        (client as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy();
      }
      return;
    }
    const nonce = String(++this.pings);
    this.pending = { nonce, sentAt: Date.now() };
    this.deadlineTimer = setTimeout(() => {
      if (this.client !== client || this.pending?.nonce !== nonce || this.stalledNow) return;
      this.stalledNow = true;
      this.opts.log.warn({ channel: this.opts.channel, deadlineMs: health.intervalMs }, 'LISTEN connection: no self-notice within its deadline; notices may be lost');
      this.opts.onStall?.();
    }, health.intervalMs);
    this.deadlineTimer.unref();
    client.query('SELECT pg_notify($1, $2)', [this.healthChannel, nonce]).catch(() => {});
  }

  private heard(nonce: string | undefined) {
    if (!this.pending || nonce !== this.pending.nonce) return;
    this.pending = undefined;
    clearTimeout(this.deadlineTimer);
    if (this.stalledNow) {
      this.stalledNow = false;
      this.opts.log.info({ channel: this.opts.channel }, 'LISTEN connection: notices flow again');
      this.opts.onFlowing?.();
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
    this.stopHealth();
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => {});
  }
}
