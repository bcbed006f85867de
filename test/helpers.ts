// Start the gateway on a fresh database for one test file, and talk to it through GraphQL, raw
// REST and the official client.
import { spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import pino from 'pino';
import { expect, inject } from 'vitest';
import { GitBookAPI, GitBookAPIError } from '@gitbook/api';
import { loadConfig, type Config } from '../src/config.ts';
import { createApp, type App } from '../src/app.ts';
import { ShiftedClock } from '../src/lib/clock.ts';
import { onSecondConnectionInTransaction } from '../src/db/client.ts';
import { issueToken } from '../src/auth/tokens.ts';
import { newId } from '../src/lib/ids.ts';
import type { Role } from '../src/generated/prisma/enums.ts';
import type { User } from '../src/generated/prisma/client.ts';
import { withDatabase, TEMPLATE_DB } from './global-setup.ts';

export const ADMIN_TOKEN = 'dg_test_admin_token_0123456789abcdef';

export type TestApp = Awaited<ReturnType<typeof startTestApp>>;

export async function startTestApp(opts: { worker?: boolean; config?: Partial<Config>; /** Default: silent. */ log?: pino.Logger } = {}) {
  const adminUrl = inject('pgAdminUrl');
  const dbName = `t_${crypto.randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${dbName} TEMPLATE ${TEMPLATE_DB}`);
  await admin.end();
  const databaseUrl = withDatabase(adminUrl, dbName);

  const filesDir = fs.mkdtempSync(path.join(os.tmpdir(), 'docgraph-files-'));
  const config: Config = {
    ...loadConfig({
      DOCGRAPH_ADMIN_TOKEN: ADMIN_TOKEN,
      // Test files run two at a time on two cores, next to a job worker and PostgreSQL: a burst of
      // concurrent transactions may wait for one of the 5 pooled connections longer than the 3 s
      // production default, and that wait is the machine's, not the code's (db-faults sets its own).
      DB_CONNECT_TIMEOUT_MS: '10000',
      // Likewise a write queued behind several others on a lock (the concurrency tests) may wait
      // longer than the 3 s production statement timeout on a busy machine.
      DB_STATEMENT_TIMEOUT_MS: '10000',
      LOG_LEVEL: 'silent',
      ALLOW_PRIVATE_FETCH: 'true',
      WEBHOOK_ALLOW_PRIVATE: 'true',
    }),
    filesDir,
    ...opts.config,
  };
  const clock = new ShiftedClock();
  const app: App = await createApp({ config, databaseUrl, clock, log: opts.log ?? pino({ level: 'silent' }), worker: opts.worker ?? false, poolSize: 5 });
  const port = await app.listen(0, '127.0.0.1');
  const baseUrl = `http://127.0.0.1:${port}`;
  const org = app.bootstrap!.org;
  const adminUser = app.bootstrap!.user;

  async function gql<T = any>(query: string, variables: Record<string, unknown> = {}, token: string | null = ADMIN_TOKEN) {
    const res = await fetch(`${baseUrl}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify({ query, variables }),
    });
    const json = (await res.json()) as { data?: T; errors?: Array<{ message: string; extensions?: { code?: string; field?: string } }> };
    return { status: res.status, data: json.data as T, errors: json.errors };
  }

  async function rest(method: string, p: string, body?: unknown, token: string | null = ADMIN_TOKEN) {
    const res = await fetch(`${baseUrl}${p}`, {
      method,
      headers: {
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...(token ? { authorization: `Bearer ${token}` } : {}),
      },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await res.text();
    let json: any = undefined;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = text;
    }
    return { status: res.status, body: json, text, headers: res.headers };
  }

  /** A new user with a token, member of the bootstrap org with `role` (undefined = not a member, null = guest). */
  async function createUser(role?: Role | null, opts: { organizationId?: string; email?: string } = {}) {
    const id = newId('User');
    const user = await app.prisma.user.create({
      data: { id, email: opts.email ?? `${id.toLowerCase()}@example.com`, displayName: `User ${id.slice(-6)}` },
    });
    if (role !== undefined) {
      await app.prisma.member.create({ data: { id: newId('Member'), organizationId: opts.organizationId ?? org.id, userId: id, role } });
    }
    const { token } = await issueToken(app.prisma, id, 'test');
    return { user, token, client: client(token) };
  }

  /**
   * The cast of callers the access tables test with, each created on first use and then kept for
   * the file: `anonymous` (no token), `outsider` (not a member), `guest` (member without a role),
   * one member per organization role (`reader` … `creator`), and `admin` (the bootstrap admin).
   */
  const cast = new Map<string, Promise<Caller>>();
  /** `organizationId`: the cast of another organization the bootstrap admin created (default: the bootstrap one). */
  function as(name: CallerName, organizationId: string = org.id): Promise<Caller> {
    const key = `${organizationId}:${name}`;
    let c = cast.get(key);
    if (!c) {
      c =
        name === 'anonymous'
          ? Promise.resolve({ user: null, token: null, client: new GitBookAPI({ endpoint: baseUrl }) })
          : name === 'admin'
            ? Promise.resolve({ user: adminUser, token: ADMIN_TOKEN, client: client() })
            : createUser(CALLER_ROLES[name], { organizationId });
      cast.set(key, c);
    }
    return c;
  }

  function client(token = ADMIN_TOKEN) {
    return new GitBookAPI({ endpoint: baseUrl, authToken: token });
  }

  /** Count SQL statements issued while `fn` runs. */
  const secondConnections: string[] = [];
  const stopWatchingConnections = onSecondConnectionInTransaction(({ stack }) => secondConnections.push(stack));

  async function countQueries<T>(fn: () => Promise<T>): Promise<{ result: T; count: number; statements: string[] }> {
    const statements: string[] = [];
    const off = app.onQuery((sql) => statements.push(sql));
    try {
      const result = await fn();
      return { result, count: statements.length, statements };
    } finally {
      off();
    }
  }

  async function close() {
    await app.close();
    stopWatchingConnections();
    // A transaction that asks the pool for another connection deadlocks it under load
    // (src/db/client.ts): any test that made one fails its file here.
    if (secondConnections.length) throw new Error(`a transaction asked the pool for a second connection:\n${secondConnections.join('\n\n')}`);
    const a = new pg.Client({ connectionString: adminUrl });
    await a.connect();
    await a.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`).catch(() => {});
    await a.end();
    fs.rmSync(filesDir, { recursive: true, force: true });
  }

  return {
    app, baseUrl, databaseUrl, org, adminUser, clock, gql, rest, client, createUser, as, countQueries, close, token: ADMIN_TOKEN,
    /** Stacks of second connections asked for inside a transaction; a test that makes one on purpose empties it. */
    secondConnections,
  };
}

/**
 * A second gateway process on `t`'s database, with `t`'s configuration: what another instance
 * behind the same load balancer sees (token cache invalidation, shared rate-limit counters, the
 * published-structure version, live events). `config` overrides some of it.
 */
export async function startSecondApp(t: TestApp, config: Partial<Config> = {}) {
  const app = await createApp({ config: { ...t.app.config, ...config }, databaseUrl: t.databaseUrl, log: pino({ level: 'silent' }), worker: false, poolSize: 3 });
  const baseUrl = `http://127.0.0.1:${await app.listen(0, '127.0.0.1')}`;
  return { app, baseUrl, close: () => app.close() };
}

/** A gateway for one test file and a second process on its database (`bUrl`); `close` stops both. */
export async function startTwoGateways() {
  const t = await startTestApp();
  const b = await startSecondApp(t).catch(async (err) => {
    await t.close();
    throw err;
  });
  return {
    t,
    bUrl: b.baseUrl,
    async close() {
      await b.close();
      await t.close();
    },
  };
}

// ------------------------------------------------------------------ access tables

/** The role in the test organization of each caller of the cast (undefined: not a member; null: guest). */
const CALLER_ROLES = {
  outsider: undefined,
  guest: null,
  reader: 'read',
  commenter: 'comment',
  editor: 'edit',
  reviewer: 'review',
  creator: 'create',
} as const satisfies Record<string, Role | null | undefined>;
export type CallerName = 'anonymous' | keyof typeof CALLER_ROLES | 'admin';
export type Caller = { user: User | null; token: string | null; client: GitBookAPI };

/**
 * A request to try as each caller: a REST call (`{ method, path, body? }`), or a function of the
 * caller that answers a status (a number, a `{ status }`, or an official-client call, whose
 * GitBookAPIError is read for its status).
 */
export type AccessRequest = { method: string; path: string; body?: unknown } | ((caller: Caller) => Promise<number | { status: number }>);

/** The official client's error status, or the response status. */
export async function statusOf(p: Promise<number | { status: number }>): Promise<number> {
  try {
    const r = await p;
    return typeof r === 'number' ? r : r.status;
  } catch (e) {
    if (e instanceof GitBookAPIError) return e.code;
    throw e;
  }
}

/**
 * Try `request` as each caller of `expected`, in the order given (list a caller that succeeds in
 * changing something last), and compare the statuses as one table, so a failure shows the whole
 * row: `expectAccess(t, { method: 'GET', path }, { anonymous: 401, outsider: 404, guest: 403, reader: 200 })`.
 * REST error statuses must come with the contract's error body.
 */
export async function expectAccess(
  t: TestApp,
  request: AccessRequest,
  expected: Partial<Record<CallerName, number>>,
  labelOrOptions?: string | { label?: string; organizationId?: string },
) {
  const { label, organizationId } = typeof labelOrOptions === 'string' ? { label: labelOrOptions, organizationId: undefined } : (labelOrOptions ?? {});
  const actual: Partial<Record<CallerName, number>> = {};
  for (const name of Object.keys(expected) as CallerName[]) {
    const caller = await t.as(name, organizationId);
    if (typeof request === 'function') {
      actual[name] = await statusOf(request(caller));
    } else {
      const r = await t.rest(request.method, request.path, request.body, caller.token);
      if (r.status >= 400) expect(r.body?.error?.code, `${name}: ${request.method} ${request.path} error body`).toBe(r.status);
      actual[name] = r.status;
    }
  }
  expect(actual, label ?? (typeof request === 'function' ? 'access' : `${request.method} ${request.path}`)).toEqual(expected);
}

/**
 * A worker-only process (test/fixtures/job-worker.ts) on the test's database, as a separate
 * deployment's worker would be; resolves once its queue runs. `track` holds it while it lives, so
 * the file's afterAll can kill what a failed test left running.
 */
export async function spawnJobWorker(t: TestApp, opts: { lockTimeoutSeconds: number; track: Set<ChildProcess> }) {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(import.meta.dirname, 'fixtures', 'job-worker.ts')], {
    env: {
      ...process.env,
      DATABASE_URL: t.databaseUrl,
      FILES_DIR: t.app.config.filesDir,
      ALLOW_PRIVATE_FETCH: 'true',
      LOG_LEVEL: 'warn',
      JOB_LOCK_TIMEOUT_SECONDS: String(opts.lockTimeoutSeconds),
      JOB_HEARTBEAT_SECONDS: '1',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  opts.track.add(child);
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  const exited = new Promise<void>((resolve) => child.on('exit', () => (opts.track.delete(child), resolve())));
  const deadline = Date.now() + 60_000;
  while (!output.includes('worker ready')) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`worker did not start:\n${output}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    readyAt: Date.now(),
    async kill() {
      child.kill('SIGKILL');
      await exited;
    },
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
    signal(sig: NodeJS.Signals) {
      child.kill(sig);
    },
    output: () => output,
  };
}

