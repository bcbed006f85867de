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
