// A real Varnish (Debian's `varnish` package: `apt-get install -y varnish`) in front of the
// gateway, with the VCL of docs/deployment.md (BAN on obj.http.xkey): a second anonymous read is a
// hit, a member's read never is, and after a change (through the API, or plain SQL) plus the purge
// feed's pass the next read is fresh. Fails, never skips, when varnishd is missing.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net, { type AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Config } from '../src/config.ts';
import { purgePass } from '../src/http/purge.ts';
import { startTestApp, type TestApp } from './helpers.ts';

const VARNISHD = process.env.VARNISHD ?? '/usr/sbin/varnishd';

/** The VCL the deployment notes give, with the backend filled in. */
const vcl = (backendPort: number) => `vcl 4.1;
backend default { .host = "127.0.0.1"; .port = "${backendPort}"; }
acl purgers { "127.0.0.1"; }
sub vcl_recv {
  if (req.method == "BAN") {
    if (!client.ip ~ purgers) { return (synth(405, "Not allowed")); }
    if (!req.http.X-Purge-Regex) { return (synth(400, "X-Purge-Regex required")); }
    ban("obj.http.xkey ~ " + req.http.X-Purge-Regex);
    return (synth(200, "Banned"));
  }
}
sub vcl_deliver {
  if (obj.hits > 0) { set resp.http.X-Cache = "HIT"; } else { set resp.http.X-Cache = "MISS"; }
}
`;

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

let t: TestApp;
let varnish: ChildProcess | undefined;
let varnishUrl: string;
let workDir: string;
let stderr = '';

beforeAll(async () => {
  expect(fs.existsSync(VARNISHD), `${VARNISHD} is missing: apt-get install -y varnish`).toBe(true);
  t = await startTestApp();
  workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'docgraph-varnish-'));
  const vclFile = path.join(workDir, 'default.vcl');
  fs.writeFileSync(vclFile, vcl(Number(new URL(t.baseUrl).port)));
  const port = await freePort();
  varnishUrl = `http://127.0.0.1:${port}`;
  // -F: foreground (a child of the test); -j none: no privilege separation (runs as the test's user).
  varnish = spawn(VARNISHD, ['-F', '-j', 'none', '-n', path.join(workDir, 'n'), '-a', `127.0.0.1:${port}`, '-f', vclFile, '-s', 'malloc,32m', '-T', 'none'], { stdio: ['ignore', 'ignore', 'pipe'] });
  varnish.stderr!.on('data', (c) => (stderr += c));
  let up = false;
  for (let i = 0; i < 100 && !up && varnish.exitCode === null; i++) {
    up = await fetch(`${varnishUrl}/healthz`).then((r) => r.ok, () => false);
    if (!up) await new Promise((r) => setTimeout(r, 100));
  }
  expect(up, `varnishd did not start: ${stderr}`).toBe(true);
}, 120_000);
afterAll(async () => {
  if (varnish && varnish.exitCode === null) {
    const exited = new Promise((r) => varnish!.once('exit', r));
    varnish.kill('SIGTERM');
    await exited;
  }
  await t?.close();
  if (workDir) fs.rmSync(workDir, { recursive: true, force: true });
});

async function mutate(document: string, input: Record<string, unknown>) {
  const r = await t.gql(document, { input });
  expect(r.errors).toBeUndefined();
  return r.data;
}

const pass = () => purgePass({ prisma: t.app.prisma, clock: t.clock, config: { ...t.app.config, purge: { ...t.app.config.purge, url: `${varnishUrl}/`, style: 'varnish-ban' } as Config['purge'] } });

async function read(p: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${varnishUrl}${p}`, { headers });
  return { status: res.status, cache: res.headers.get('x-cache'), age: Number(res.headers.get('age') ?? 0), body: (await res.json()) as any };
}

describe('Varnish in front', () => {
  it('serves the second anonymous read from its cache, never a member\'s, and a fresh answer after a change and its purge', async () => {
    const space = (await mutate(`mutation($input: CreateSpaceInput!) { createSpace(input: $input) { space { id } } }`, { organizationId: t.org.id, title: 'Cached space' })).createSpace.space.id;
    const site = (await mutate(`mutation($input: CreateSiteInput!) { createSite(input: $input) { site { id } } }`, { organizationId: t.org.id, title: 'Cached site', visibility: 'public' })).createSite.site.id;
    await mutate(`mutation($input: AddSectionToSiteInput!) { addSectionToSite(input: $input) { section { id } } }`, { siteId: site, spaceId: space, title: 'Docs' });
    await mutate(`mutation($input: SiteKeyInput!) { publishSite(input: $input) { site { id } } }`, { siteId: site });
    // Whatever the feed owes from the set-up is settled first.
    await pass();
    const p = `/v1/orgs/${t.org.id}/sites/${site}/published`;

    const first = await read(p);
    expect(first.status).toBe(200);
    expect(first.cache).toBe('MISS');
    const second = await read(p);
    expect(second.cache).toBe('HIT');
    expect(second.body).toEqual(first.body);
    // A member's read goes to the gateway every time (Authorization: Varnish's builtin passes it).
    for (let i = 0; i < 2; i++) expect((await read(p, { authorization: `Bearer ${t.token}` })).cache).toBe('MISS');

    // A change through the API: the cache still holds the old answer until the feed purges.
    expect((await t.rest('PATCH', `/v1/orgs/${t.org.id}/sites/${site}`, { title: 'Renamed site' })).status).toBe(200);
    const stale = await read(p);
    expect(stale.cache).toBe('HIT');
    expect(stale.body.site.title).toBe('Cached site');
    expect(await pass()).toContain(site);
    const fresh = await read(p);
    expect(fresh.cache).toBe('MISS');
    expect(fresh.body.site.title).toBe('Renamed site');
    expect((await read(p)).cache).toBe('HIT');

    // A plain-SQL change to the space the site shows: the same.
    await t.app.prisma.$executeRawUnsafe(`UPDATE "Space" SET "title" = 'Renamed by SQL' WHERE "id" = $1`, space);
    expect((await read(p)).cache).toBe('HIT');
    expect(await pass()).toContain(site);
    const afterSql = await read(p);
    expect(afterSql.cache).toBe('MISS');
    expect(JSON.stringify(afterSql.body)).toContain('Renamed by SQL');
  }, 60_000);
});
