// `npm start` as a real process (its build step, then its exact command line): embedded PostgreSQL in a fresh data directory,
// migrations, first-run bootstrap with DOCGRAPH_ADMIN_TOKEN, GraphiQL, REST, health probes, and
// a clean shutdown on SIGTERM that leaves no PostgreSQL running.
import { spawn, execSync, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import net from 'node:net';
import { describe, expect, it } from 'vitest';

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = net.createServer().listen(0, '127.0.0.1', () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}

const TOKEN = 'dg_lifecycle_token_0123456789';

describe('the server process', () => {
  it('starts on an embedded database, serves GraphiQL and REST, and shuts down cleanly', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'docgraph-life-'));
    const pgPort = await freePort();
    const env = { ...process.env, DATABASE_URL: '', PORT: '0', DATA_DIR: dataDir, EMBEDDED_PG_PORT: String(pgPort), DOCGRAPH_ADMIN_TOKEN: TOKEN, LOG_LEVEL: 'warn' };
    delete (env as Record<string, string | undefined>).DATABASE_URL;
    // npm start = prestart (the build) + `node <options> <bundle>`. Run both steps directly (not
    // through npm) so the signal reaches the server process itself.
    const pkg = JSON.parse(fs.readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> };
    expect(pkg.scripts.prestart).toContain('build');
    execFileSync(process.execPath, ['scripts/build.mjs'], { stdio: 'pipe' });
    const [node, ...args] = pkg.scripts.start.split(/\s+/);
    expect(node).toBe('node');
    const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      // PORT=0: the server picks a free port and prints it (no race with other test files).
      const deadline = Date.now() + 60_000;
      let port: string | undefined;
      while (Date.now() < deadline && !port) {
        port = /GraphiQL \+ GraphQL\s+http:\/\/localhost:(\d+)\/graphql/.exec(output)?.[1];
        if (!port) await new Promise((r) => setTimeout(r, 100));
      }
      expect(port, output).toBeDefined();
      const base = `http://127.0.0.1:${port}`;
      expect((await fetch(`${base}/healthz`)).status).toBe(200);
      expect((await fetch(`${base}/readyz`)).status).toBe(200);
      expect(output).toContain('/graphql');
      expect(output).toContain(TOKEN);
      const graphiql = await fetch(`${base}/graphql`, { headers: { accept: 'text/html' } });
      expect(graphiql.status).toBe(200);
      expect(await graphiql.text()).toContain('GraphiQL');
      const orgs = await fetch(`${base}/v1/orgs`, { headers: { authorization: `Bearer ${TOKEN}` } });
      expect(orgs.status).toBe(200);
      const body = (await orgs.json()) as { items: Array<{ title: string }> };
      expect(body.items.map((o) => o.title)).toEqual(['My Organization']);
      expect((await fetch(`${base}/v1/orgs`)).status).toBe(401);
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited, output.slice(-3000)).toBe(0);
    // The embedded database stopped with the server: nothing listens on its port any more.
    const pgStillUp = await new Promise<boolean>((resolve) => {
      const s = net.connect(pgPort, '127.0.0.1', () => (s.destroy(), resolve(true)));
      s.on('error', () => resolve(false));
    });
    expect(pgStillUp).toBe(false);
    const procs = execSync(`ps aux`).toString();
    expect(procs).not.toContain(dataDir);
    fs.rmSync(dataDir, { recursive: true, force: true });
  }, 90_000);
});
