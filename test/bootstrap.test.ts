// The first-run bootstrap (an admin, an organization, DOCGRAPH_ADMIN_TOKEN) on an empty database,
// raced by two processes starting together: exactly one creates it, the other finds it and starts.
import crypto from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createPrisma } from '../src/db/client.ts';
import { bootstrapIfEmpty } from '../src/domain/users.ts';
import { TEMPLATE_DB, withDatabase } from './global-setup.ts';

const adminUrl = inject('pgAdminUrl');
const dbName = `t_boot_${crypto.randomBytes(6).toString('hex')}`;
let db: ReturnType<typeof createPrisma>;

beforeAll(async () => {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${dbName} TEMPLATE ${TEMPLATE_DB}`);
  await admin.end();
  db = createPrisma(withDatabase(adminUrl, dbName), { poolSize: 4 });
});

afterAll(async () => {
  await db?.disconnect();
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`).catch(() => {});
  await admin.end();
});

describe('first-run bootstrap', () => {
  it('two processes bootstrapping an empty database at once: one admin, the other finds it', async () => {
    const opts = { adminEmail: 'admin@docgraph.local', adminToken: 'dg_bootstrap_race_token_0123456789' };
    let firstDone!: () => void;
    const firstBootstrapped = new Promise<void>((r) => (firstDone = r));
    // The first has created everything but not committed yet when the second starts.
    const first = db.prisma.$transaction(async (tx) => {
      const made = await bootstrapIfEmpty(tx, opts);
      firstDone();
      await new Promise((r) => setTimeout(r, 300));
      return made;
    }, { timeout: 10_000 });
    await firstBootstrapped;
    const second = db.prisma.$transaction((tx) => bootstrapIfEmpty(tx, opts), { timeout: 10_000, maxWait: 10_000 });
    const [a, b] = await Promise.all([first, second]);
    expect(a?.token).toBe(opts.adminToken);
    expect(b).toBeNull();
    expect(await db.prisma.user.count()).toBe(1);
    expect(await db.prisma.organization.count()).toBe(1);
  });
});
