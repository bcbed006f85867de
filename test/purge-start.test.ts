// The purge feed's chain starts with the job worker, not at the cron's next minute: a change made
// right after a worker starts reaches the purger within seconds.
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.ts';
import { startTestApp, type TestApp } from './helpers.ts';

let t: TestApp;
let purger: net.Server;
const bans: string[] = [];

beforeAll(async () => {
  // Raw TCP: node's HTTP parser refuses the BAN method.
  purger = net.createServer((socket) => {
    let head = '';
    socket.on('data', (d) => {
      head += d;
      if (!head.includes('\r\n\r\n')) return;
      bans.push(head.split('\r\n\r\n')[0]);
      head = '';
      socket.write('HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n');
    });
    socket.on('error', () => {});
  });
  await new Promise<void>((r) => purger.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(purger.address() as { port: number }).port}/`;
  t = await startTestApp({ worker: true, config: { purge: { ...loadConfig({}).purge, url, intervalMs: 200 } } });
}, 60_000);

afterAll(async () => {
  await t?.close();
  await new Promise((r) => purger.close(r));
});

describe('the purge chain', () => {
  it('is running as soon as the worker is, and purges a change within seconds', async () => {
    const chain = await t.app.prisma.$queryRaw<Array<{ n: number }>>`SELECT count(*)::int AS n FROM graphile_worker.jobs WHERE task_identifier = 'purgeSharedCache'`;
    expect(chain[0].n).toBe(1);
    const site = await t.gql(`mutation($input: CreateSiteInput!) { createSite(input: $input) { site { id } } }`, { input: { organizationId: t.org.id, title: 'Purged at once', visibility: 'public' } });
    expect(site.errors).toBeUndefined();
    const id = site.data.createSite.site.id as string;
    const until = Date.now() + 5000;
    while (!bans.some((b) => b.includes(id)) && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
    expect(bans.find((b) => b.includes(id)) ?? JSON.stringify(bans)).toMatch(/^BAN /);
  });
});
