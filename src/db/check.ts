// A database that cannot be reached is one clear line for the process entries (server, admin
// CLI): connect once with a timeout, and name the database without its password.
import pg from 'pg';

/** Connect and run `SELECT 1`, giving up after `timeoutMs` (an unroutable host would hang for minutes). */
export async function checkDatabase(url: string, timeoutMs: number): Promise<void> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: timeoutMs });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.query('SELECT 1');
  } finally {
    await client.end().catch(() => {});
  }
}

/** The connection string without its password, for messages. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '(an unparsable connection string)';
  }
}

/** The first line of an error's message, with its code (ECONNREFUSED, 28P01…) when the message lacks it. */
export function errorLine(err: unknown): string {
  const e = err as { code?: unknown; message?: unknown } | null;
  const message = typeof e?.message === 'string' && e.message ? e.message : String(err);
  const first = message.split('\n').find((l) => l.trim()) ?? message;
  return typeof e?.code === 'string' && !first.includes(e.code) ? `${first} (${e.code})` : first;
}

/**
 * `/readyz`'s probe: one connection of its own (never the request pool, so an exhausted pool
 * neither hides a healthy database nor holds the probe up), `SELECT 1` on it, raced against a
 * deadline. One probe at a time: calls that arrive while one is out share its answer. A probe
 * that fails or misses its deadline drops the connection; the next call opens a new one.
 */
export class ReadyProbe {
  private client?: pg.Client;
  private inFlight?: Promise<boolean>;
  private closed = false;

  constructor(
    private readonly url: string,
    private readonly deadlineMs = 800,
  ) {}

  /** True when the database answered within the deadline. */
  ready(): Promise<boolean> {
    if (this.closed) return Promise.resolve(false);
    this.inFlight ??= this.probe().finally(() => (this.inFlight = undefined));
    return this.inFlight;
  }

  private async probe(): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), this.deadlineMs)));
    const attempt = (async () => {
      if (!this.client) {
        const client = new pg.Client({ connectionString: this.url, connectionTimeoutMillis: this.deadlineMs, keepAlive: true, application_name: 'docgraph-readyz' });
        client.on('error', () => this.drop(client));
        client.on('end', () => this.drop(client));
        this.client = client;
        await client.connect();
      }
      await this.client.query('SELECT 1');
      return true as const;
    })().catch(() => false as const);
    try {
      const ok = await Promise.race([attempt, deadline]);
      if (!ok && this.client) this.drop(this.client);
      return ok;
    } finally {
      clearTimeout(timer);
    }
  }

  private drop(client: pg.Client) {
    if (this.client === client) this.client = undefined;
    // `end()` would wait for a frozen peer; destroy the socket.
    (client as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy();
    client.end().catch(() => {});
  }

  async close() {
    this.closed = true;
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => {});
  }
}
