// The shared-cache purge feed: a task of the job worker (src/tasks.ts `purgeSharedCache`), never
// the request path. It follows the site structure version ("SiteStructureVersion", bumped by
// triggers in the transaction of every write a reader of the site could see: GraphQL, REST, jobs,
// plain SQL) and tells the configured purger (PURGE_URL, PURGE_STYLE) which surrogate keys to drop.
//
// - What it has purged is in the database ("SharedCachePurge": per site, the version purged and
//   the version up to which older versions' keys were purged again). A pass compares that with
//   the versions and purges the difference, so a purger that was down, a lost connection or a
//   restarted worker are caught up by the next pass; a pass whose purge fails records nothing.
//   A deleted site (its version row cascades away) is purged from its remaining "SharedCachePurge" row.
// - The purge race (an answer built from data read before the write's commit, stored by the cache
//   after the purge) is closed with versioned keys: every shared answer carries `<site>@v<N>`, N the
//   version its gate read before any content (so the answer is never older than N). The site key
//   is purged at once; once nothing changed for PURGE_REPEAT_SECONDS (longer than any request:
//   statement timeout + send), the keys of every version between the last repeat and the purged
//   one are purged again. Only late answers of old versions go; the fresh answers cached meanwhile
//   stay (a second purge of the whole site would empty the cache twice per change).
//   Not revalidation by ETag: it bounds staleness by s-maxage, it does not remove a stale entry.
// - One pass costs one statement over the version table (a scan: sites × a few bytes), the purge
//   requests (keys batched) and one statement writing what was purged.
// - The chain: each run enqueues the next one PURGE_INTERVAL_MS later under one job key (one
//   pending run, whatever the number of workers); the task's cron row restarts the chain within a
//   minute if a run was lost. Several runs at once only purge twice: harmless.
import type { TaskDeps } from '../domain/context.ts';
import type { Config } from '../config.ts';
import { versionKey } from './conditional.ts';

export const PURGE_TASK = 'purgeSharedCache';

/** Above this many versions to purge again for one site, its whole key is purged instead. */
const MAX_VERSION_KEYS = 64;

export type Purger = (keys: string[]) => Promise<void>;

/** A purge request to `PURGE_URL` in the configured style; throws on a failure or a non-2xx answer. */
export function purgerFor(settings: Config['purge']): Purger | undefined {
  const { url, style, token, timeoutMs } = settings;
  if (!url) return undefined;
  // Cloudflare takes 30 tags per call, Fastly 256 keys; a Varnish header line stays short too.
  const batch = style === 'http' ? 30 : 100;
  return async (keys) => {
    for (let i = 0; i < keys.length; i += batch) {
      const chunk = keys.slice(i, i + batch);
      const auth: Record<string, string> = token ? { authorization: `Bearer ${token}`, 'fastly-key': token } : {};
      const init: RequestInit =
        style === 'http'
          ? { method: 'POST', headers: { 'content-type': 'application/json', ...auth }, body: JSON.stringify({ surrogate_keys: chunk, tags: chunk }) }
          : style === 'xkey'
            ? { method: 'PURGE', headers: { 'xkey-purge': chunk.join(' '), ...auth } }
            : { method: 'BAN', headers: { 'x-purge-keys': chunk.join(' '), 'x-purge-regex': banRegex(chunk), ...auth } };
      const res = await fetch(url, { ...init, signal: AbortSignal.timeout(timeoutMs) });
      await res.arrayBuffer().catch(() => undefined);
      if (res.status < 200 || res.status > 299) throw new Error(`purge at ${url} answered ${res.status}`);
    }
  };
}

/** For a Varnish ban on `obj.http.xkey` (or Surrogate-Key): any of the keys as a whole word. */
export function banRegex(keys: string[]): string {
  return `(^|\\s)(${keys.map((k) => k.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|')})(\\s|$)`;
}

type Row = { siteId: string; version: string | null; purgedVersion: string | null; repeatedVersion: string | null; purgedAtMs: number | null };
type Next = { siteId: string; purgedVersion: string; repeatedVersion: string; purgedAtMs: number };

/**
 * One pass: purge what changed since the last purge (and the repeats that are due), then record
 * it. Returns the keys purged (none: nothing to do, or no purger). A failed purge throws and
 * records nothing: the next pass purges it again.
 */
export async function purgePass(deps: Pick<TaskDeps, 'prisma' | 'config' | 'clock'>, purger: Purger | undefined = purgerFor(deps.config.purge)): Promise<string[]> {
  if (!purger) return [];
  const now = deps.clock.now().getTime();
  const repeatMs = deps.config.purge.repeatSeconds * 1000;
  const rows = await deps.prisma.$queryRaw<Row[]>`
    SELECT COALESCE(v."siteId", p."siteId") AS "siteId", v."version"::text AS "version",
           p."purgedVersion"::text AS "purgedVersion", p."repeatedVersion"::text AS "repeatedVersion",
           (extract(epoch FROM p."purgedAt") * 1000)::float8 AS "purgedAtMs"
    FROM "SiteStructureVersion" v FULL JOIN "SharedCachePurge" p ON p."siteId" = v."siteId"
    WHERE v."siteId" IS NULL OR p."siteId" IS NULL OR v."version" <> p."purgedVersion" OR p."repeatedVersion" < p."purgedVersion"
    ORDER BY 1 LIMIT 2000`;
  const keys: string[] = [];
  const next: Next[] = [];
  const done: string[] = [];
  for (const row of rows) {
    const { siteId } = row;
    const repeatDue = row.purgedAtMs !== null && row.purgedAtMs + repeatMs <= now;
    if (row.version === null) {
      // Deleted: its key now, and once more after the race window (purgedVersion -1 marks the first).
      if (row.purgedVersion !== '-1') {
        keys.push(siteId);
        next.push({ siteId, purgedVersion: '-1', repeatedVersion: row.repeatedVersion ?? '0', purgedAtMs: now });
      } else if (repeatDue) {
        keys.push(siteId);
        done.push(siteId);
      }
    } else if (row.version !== row.purgedVersion) {
      // Changed (or never purged): every answer of the site goes; the repeat waits for quiet.
      keys.push(siteId);
      next.push({ siteId, purgedVersion: row.version, repeatedVersion: row.repeatedVersion ?? '0', purgedAtMs: now });
    } else if (repeatDue) {
      const from = BigInt(row.repeatedVersion ?? '0');
      const to = BigInt(row.purgedVersion!);
      if (to - from > BigInt(MAX_VERSION_KEYS)) keys.push(siteId);
      else for (let v = from; v < to; v++) keys.push(versionKey(siteId, v));
      next.push({ siteId, purgedVersion: row.purgedVersion!, repeatedVersion: row.purgedVersion!, purgedAtMs: row.purgedAtMs! });
    }
  }
  if (keys.length === 0) return [];
  await purger(keys);
  await deps.prisma.$transaction(async (tx) => {
    if (next.length) {
      await tx.$executeRaw`
        INSERT INTO "SharedCachePurge" ("siteId", "purgedVersion", "repeatedVersion", "purgedAt")
        SELECT s, pv::bigint, rv::bigint, to_timestamp(at / 1000.0) AT TIME ZONE 'UTC'
        FROM unnest(${next.map((n) => n.siteId)}::text[], ${next.map((n) => n.purgedVersion)}::text[], ${next.map((n) => n.repeatedVersion)}::text[], ${next.map((n) => n.purgedAtMs)}::float8[]) AS u(s, pv, rv, at)
        ON CONFLICT ("siteId") DO UPDATE SET "purgedVersion" = EXCLUDED."purgedVersion", "repeatedVersion" = EXCLUDED."repeatedVersion", "purgedAt" = EXCLUDED."purgedAt"`;
    }
    if (done.length) await tx.$executeRaw`DELETE FROM "SharedCachePurge" WHERE "siteId" = ANY(${done}::text[]) AND "purgedVersion" = -1`;
  });
  return keys;
}

/**
 * Start the chain at once (a worker starting), rather than at the cron's next minute: what changed
 * while no worker ran is purged now. Replaces a pending run (one job key).
 */
export async function startPurgeChain(deps: Pick<TaskDeps, 'prisma' | 'config' | 'services'>): Promise<void> {
  if (!deps.config.purge.url) return;
  await deps.services.jobs.enqueue(deps.prisma, PURGE_TASK, {}, { jobKey: PURGE_TASK, maxAttempts: 1 });
}

/**
 * The task: one pass, then the next run PURGE_INTERVAL_MS later under one job key. Does nothing
 * without PURGE_URL. A failed pass is logged and retried by the next run (catch-up).
 */
export async function purgeSharedCacheTask(_payload: unknown, deps: TaskDeps): Promise<void> {
  if (!deps.config.purge.url) return;
  try {
    const keys = await purgePass(deps);
    if (keys.length) deps.log.info({ keys: keys.length }, 'shared cache purged');
  } catch (err) {
    deps.log.warn({ err }, 'shared cache purge failed; the next run catches up');
  }
  await deps.services.jobs.enqueue(deps.prisma, PURGE_TASK, {}, { jobKey: PURGE_TASK, delayMs: deps.config.purge.intervalMs, maxAttempts: 1 });
}
