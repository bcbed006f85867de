// CPU time of a process and of a PostgreSQL server from /proc (Linux), for "CPU per request":
// unlike latency it hardly depends on how busy the shared machine is.
//
// A process: utime + stime of /proc/<pid>/stat (every thread: JS, GC helpers, libuv pool).
// PostgreSQL: the postmaster's utime + stime + cutime + cstime (its exited children) plus
// utime + stime of every live child (backends, walwriter, checkpointer, autovacuum…). A backend
// that exits between two snapshots moves from "live child" to the postmaster's cutime, so the
// difference stays right. Only that server's processes count, not other PostgreSQL instances on
// the machine.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import pg from 'pg';

let ticksPerSecond = 100;
try {
  ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
} catch {
  // keep 100, Linux's usual USER_HZ
}

/** Fields of /proc/<pid>/stat after the command name: [0] = state (field 3 in proc(5)). */
function statFields(pid: number): string[] | undefined {
  try {
    const text = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return text.slice(text.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}
const field = (f: string[], n: number) => Number(f[n - 3]);

/** CPU milliseconds used so far by one process (all its threads), or undefined if it is gone. */
export function processCpuMs(pid: number): number | undefined {
  const f = statFields(pid);
  if (!f) return undefined;
  return ((field(f, 14) + field(f, 15)) * 1000) / ticksPerSecond;
}

/** CPU milliseconds used so far by a PostgreSQL server: the postmaster, its exited and live children. */
export function postgresCpuMs(postmasterPid: number): number | undefined {
  const main = statFields(postmasterPid);
  if (!main) return undefined;
  let ticks = field(main, 14) + field(main, 15) + field(main, 16) + field(main, 17);
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const f = statFields(Number(entry));
    if (f && field(f, 4) === postmasterPid) ticks += field(f, 14) + field(f, 15);
  }
  return (ticks * 1000) / ticksPerSecond;
}

/**
 * The postmaster's pid for a database URL, when that server runs on this machine (the parent of
 * a backend we connect to); undefined otherwise (another host, or /proc unreadable).
 */
export async function findPostmaster(databaseUrl: string): Promise<number | undefined> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const backend = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0].pid;
    const f = statFields(backend);
    if (!f) return undefined;
    const ppid = field(f, 4);
    const comm = fs.readFileSync(`/proc/${ppid}/comm`, 'utf8').trim();
    return /postgres|postmaster/.test(comm) ? ppid : undefined;
  } catch {
    return undefined;
  } finally {
    await client.end();
  }
}

export type CpuSnapshot = { server?: number; postgres?: number };

export function cpuSnapshot(serverPid: number | undefined, postmasterPid: number | undefined): CpuSnapshot {
  return {
    server: serverPid ? processCpuMs(serverPid) : undefined,
    postgres: postmasterPid ? postgresCpuMs(postmasterPid) : undefined,
  };
}

/** CPU ms per request between two snapshots. */
export function cpuPerRequest(before: CpuSnapshot, after: CpuSnapshot, requests: number) {
  const per = (a?: number, b?: number) => (a === undefined || b === undefined || !requests ? undefined : (b - a) / requests);
  return { serverMs: per(before.server, after.server), postgresMs: per(before.postgres, after.postgres) };
}
