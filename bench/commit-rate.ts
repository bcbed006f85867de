// Commits/s of event-writing transactions, 8 clients, with and without a NOTIFY per event (the
// trigger migration 20261127110000_event_notify_off dropped). PostgreSQL serializes the commits of
// notifying transactions on one lock; this shows what that cost. Its own embedded PostgreSQL.
//   npx tsx bench/commit-rate.ts [seconds per round, default 5]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { startEmbeddedPostgres, ensureDatabase } from '../src/db/embedded.ts';
import { migrate } from '../src/db/migrate.ts';
import { freePort } from '../test/global-setup.ts';

const SECONDS = Number(process.argv[2] ?? 5);
const CLIENTS = 8;

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'docgraph-commit-rate-'));
fs.chmodSync(dir, 0o777);
const db = await startEmbeddedPostgres({ dataDir: path.join(dir, 'data'), port: await freePort() });
try {
  await ensureDatabase(db.url('postgres'), 'bench');
  const url = db.url('bench');
  await migrate(url);
  const admin = new pg.Client({ connectionString: url });
  admin.on('error', () => {});
  await admin.connect();
  await admin.query(`INSERT INTO "Organization" (id, title) VALUES ('org_bench', 'Bench') ON CONFLICT DO NOTHING`);
  const NOTIFY_FN = `CREATE OR REPLACE FUNCTION "docgraph_event_notify"() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN PERFORM pg_notify('docgraph_events', NEW."organizationId" || ':' || NEW."seq"); RETURN NULL; END $$`;
  // Someone listening, as every gateway did.
  const listener = new pg.Client({ connectionString: url });
  listener.on('error', () => {});
  await listener.connect();
  await listener.query('LISTEN docgraph_events');

  async function round(label: string) {
    const clients = await Promise.all(Array.from({ length: CLIENTS }, async () => {
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      return c;
    }));
    let commits = 0;
    const until = Date.now() + SECONDS * 1000;
    await Promise.all(clients.map(async (c) => {
      while (Date.now() < until) {
        await c.query('BEGIN');
        await c.query(`INSERT INTO "Event" (id, type, "organizationId", source, "objectType", "objectId") VALUES (gen_random_uuid()::text, 'space_updated', 'org_bench', 'graphql', 'space', 'space_bench')`);
        await c.query('COMMIT');
        commits++;
      }
    }));
    await Promise.all(clients.map((c) => c.end()));
    const rate = Math.round(commits / SECONDS);
    console.log(`${label}: ${rate} commits/s (${CLIENTS} clients, ${SECONDS} s)`);
    return rate;
  }

  for (let i = 0; i < 2; i++) {
    await admin.query(NOTIFY_FN);
    await admin.query(`CREATE TRIGGER "Event_notify" AFTER INSERT ON "Event" FOR EACH ROW EXECUTE FUNCTION "docgraph_event_notify"()`);
    await round('before (NOTIFY per event)');
    await admin.query(`DROP TRIGGER "Event_notify" ON "Event"`);
    await round('after (no NOTIFY)');
  }
  await listener.end();
  await admin.end();
} catch (err) {
  console.error(err);
  process.exitCode = 1;
} finally {
  await db.stop();
}
