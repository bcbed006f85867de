// Start the gateway on a fresh database for one test file, and talk to it through GraphQL, raw
// REST and the official client.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import pino from 'pino';
import { inject } from 'vitest';
import { GitBookAPI } from '@gitbook/api';
import { loadConfig, type Config } from '../src/config.ts';
import { createApp, type App } from '../src/app.ts';
import { ShiftedClock } from '../src/lib/clock.ts';
import { issueToken } from '../src/auth/tokens.ts';
import { newId } from '../src/lib/ids.ts';
import type { Role } from '../src/generated/prisma/enums.ts';
import { withDatabase, TEMPLATE_DB } from './global-setup.ts';

export const ADMIN_TOKEN = 'dg_test_admin_token_0123456789abcdef';

export type TestApp = Awaited<ReturnType<typeof startTestApp>>;

export async function startTestApp(opts: { worker?: boolean; config?: Partial<Config> } = {}) {
  const adminUrl = inject('pgAdminUrl');
  const dbName = `t_${crypto.randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${dbName} TEMPLATE ${TEMPLATE_DB}`);
  await admin.end();
  const databaseUrl = withDatabase(adminUrl, dbName);

  const filesDir = fs.mkdtempSync(path.join(os.tmpdir(), 'docgraph-files-'));
  const config: Config = {
    ...loadConfig({ DOCGRAPH_ADMIN_TOKEN: ADMIN_TOKEN, LOG_LEVEL: 'silent', ALLOW_PRIVATE_FETCH: 'true' }),
    filesDir,
    ...opts.config,
  };
  const clock = new ShiftedClock();
  const app: App = await createApp({ config, databaseUrl, clock, log: pino({ level: 'silent' }), worker: opts.worker ?? false, poolSize: 5 });
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

  function client(token = ADMIN_TOKEN) {
    return new GitBookAPI({ endpoint: baseUrl, authToken: token });
  }

  /** Count SQL statements issued while `fn` runs. */
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
    const a = new pg.Client({ connectionString: adminUrl });
    await a.connect();
    await a.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`).catch(() => {});
    await a.end();
    fs.rmSync(filesDir, { recursive: true, force: true });
  }

  return { app, baseUrl, databaseUrl, org, adminUser, clock, gql, rest, client, createUser, countQueries, close, token: ADMIN_TOKEN };
}
