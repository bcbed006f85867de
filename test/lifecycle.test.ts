// `npm start` as a real process (its build step, then its exact command line): embedded PostgreSQL in a fresh data directory,
// migrations, first-run bootstrap with DOCGRAPH_ADMIN_TOKEN, GraphiQL, REST, health probes, and
// a clean stop on SIGTERM: a slow request in flight completes, new connections are refused,
// `/readyz` answers 503 on a connection still open, an idle keep-alive connection does not hold
// the process, and the process and its PostgreSQL are gone within 5 s with exit code 0. Start-up
// failures (busy port, unreachable database) are one line and exit code 1.
import { spawn, execSync, execFileSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import net from 'node:net';
import pg from 'pg';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { TEMPLATE_DB, withDatabase } from './global-setup.ts';

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = net.createServer().listen(0, '127.0.0.1', () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}

const TOKEN = 'dg_lifecycle_token_0123456789';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let startArgs: string[];
beforeAll(() => {
  // npm start = prestart (the build) + `exec node <options> <bundle>` (exec: npm's child is the
  // server itself, so a signal npm forwards reaches it). Run both steps directly, as npm would.
  const pkg = JSON.parse(fs.readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> };
  expect(pkg.scripts.prestart).toContain('build');
  execFileSync(process.execPath, ['scripts/build.mjs'], { stdio: 'pipe' });
  const [exec, node, ...args] = pkg.scripts.start.split(/\s+/);
  expect([exec, node]).toEqual(['exec', 'node']);
  startArgs = args;
}, 60_000);

type Server = { child: ChildProcessWithoutNullStreams; output: () => string; exited: Promise<number | null> };

function startServer(env: Record<string, string | undefined>): Server {
  const full: Record<string, string | undefined> = { ...process.env, LOG_LEVEL: 'warn', ...env };
  for (const [k, v] of Object.entries(full)) if (v === undefined) delete full[k];
  const child = spawn(process.execPath, startArgs, { env: full as NodeJS.ProcessEnv, stdio: ['pipe', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (d) => (output += d));
  child.stderr.on('data', (d) => (output += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, output: () => output, exited };
}

/** PORT=0: the server picks a free port and prints it (no race with other test files). */
async function portOf(server: Server): Promise<number> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const port = /GraphiQL \+ GraphQL\s+http:\/\/localhost:(\d+)\/graphql/.exec(server.output())?.[1];
    if (port) return Number(port);
    await sleep(100);
  }
  throw new Error(`the server did not start:\n${server.output()}`);
}

const listening = (port: number) =>
  new Promise<boolean>((resolve) => {
    const s = net.connect(port, '127.0.0.1', () => (s.destroy(), resolve(true)));
    s.on('error', () => resolve(false));
  });

/** A raw connection: write bytes when we choose, read the whole response at close. */
function rawConnection(port: number) {
  const socket = net.connect(port, '127.0.0.1');
  let data = '';
  socket.on('data', (d) => (data += d));
  const ended = new Promise<string>((resolve) => socket.on('close', () => resolve(data)));
  socket.on('error', () => {});
  return { socket, ended, received: () => data };
}

function embeddedEnv(dataDir: string, pgPort: number) {
  return { DATABASE_URL: undefined, PORT: '0', DATA_DIR: dataDir, EMBEDDED_PG_PORT: String(pgPort), DOCGRAPH_ADMIN_TOKEN: TOKEN };
}

async function expectPostgresGone(pgPort: number, dataDir: string) {
  // The embedded database stopped with the server: nothing listens on its port any more.
  expect(await listening(pgPort)).toBe(false);
  expect(execSync('ps aux').toString()).not.toContain(dataDir);
}

describe('the server process', () => {
  it('starts on an embedded database, serves GraphiQL and REST, and shuts down cleanly', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'docgraph-life-'));
    const pgPort = await freePort();
    const server = startServer(embeddedEnv(dataDir, pgPort));
    try {
      const base = `http://127.0.0.1:${await portOf(server)}`;
      expect((await fetch(`${base}/healthz`)).status).toBe(200);
      expect((await fetch(`${base}/readyz`)).status).toBe(200);
      expect(server.output()).toContain('/graphql');
      expect(server.output()).toContain(TOKEN);
      const graphiql = await fetch(`${base}/graphql`, { headers: { accept: 'text/html' } });
      expect(graphiql.status).toBe(200);
      expect(await graphiql.text()).toContain('YogaGraphiQL');
      const orgs = await fetch(`${base}/v1/orgs`, { headers: { authorization: `Bearer ${TOKEN}` } });
      expect(orgs.status).toBe(200);
      const body = (await orgs.json()) as { items: Array<{ title: string }> };
      expect(body.items.map((o) => o.title)).toEqual(['My Organization']);
      expect((await fetch(`${base}/v1/orgs`)).status).toBe(401);
    } finally {
      server.child.kill('SIGTERM');
    }
    expect(await server.exited, server.output().slice(-3000)).toBe(0);
    await expectPostgresGone(pgPort, dataDir);
    fs.rmSync(dataDir, { recursive: true, force: true });
  }, 90_000);

  it('on SIGTERM: finishes the slow request in flight, refuses new ones, and is gone within 5 s with exit code 0', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'docgraph-drain-'));
    const pgPort = await freePort();
    const server = startServer(embeddedEnv(dataDir, pgPort));
    let keepAlive: http.Agent | undefined;
    try {
      const port = await portOf(server);
      // An idle keep-alive connection (the server's keep-alive timeout is 65 s).
      keepAlive = new http.Agent({ keepAlive: true, maxSockets: 1 });
      const idle = await new Promise<number>((resolve, reject) =>
        http.get({ port, host: '127.0.0.1', path: '/healthz', agent: keepAlive }, (res) => (res.resume(), res.on('end', () => resolve(res.statusCode!)))).on('error', reject),
      );
      expect(idle).toBe(200);

      // A slow request: its body arrives in two parts, around the signal.
      const body = JSON.stringify({ query: '{ viewer { user { email } organizations(first: 5) { nodes { title } } } }' });
      const slow = rawConnection(port);
      slow.socket.write(
        `POST /graphql HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nAuthorization: Bearer ${TOKEN}\r\n` +
          `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: keep-alive\r\n\r\n${body.slice(0, 20)}`,
      );
      // Another open connection whose request is not complete yet (its last header line is missing).
      const probe = rawConnection(port);
      probe.socket.write('GET /readyz HTTP/1.1\r\nHost: localhost\r\n');
      await sleep(500);

      const signalled = Date.now();
      server.child.kill('SIGTERM');
      // New connections are refused: the listener closes at once.
      let refusedAfter = -1;
      while (Date.now() - signalled < 3000) {
        if (!(await listening(port))) {
          refusedAfter = Date.now() - signalled;
          break;
        }
        await sleep(25);
      }
      expect(refusedAfter, server.output()).toBeGreaterThanOrEqual(0);

      // A request arriving on a connection still open while draining: 503, and /readyz says so.
      probe.socket.write('\r\n');
      const probeResponse = await probe.ended;
      expect(probeResponse).toMatch(/^HTTP\/1\.1 503/);
      expect(probeResponse.toLowerCase()).toContain('connection: close');
      expect(probeResponse).toContain('shutting down');

      // The slow request completes.
      slow.socket.write(body.slice(20));
      const slowResponse = await slow.ended;
      expect(slowResponse, server.output()).toMatch(/^HTTP\/1\.1 200/);
      expect(slowResponse).toContain('admin@docgraph.local');
      expect(slowResponse).toContain('My Organization');

      const code = await Promise.race([server.exited, sleep(5000 - (Date.now() - signalled)).then(() => 'still running')]);
      expect(code, server.output().slice(-3000)).toBe(0);
      expect(Date.now() - signalled).toBeLessThan(5000);
      await expectPostgresGone(pgPort, dataDir);
      // A clean stop logs no warning (LOG_LEVEL=warn): no connection error, no cut request.
      expect(server.output()).not.toMatch(/"level":(40|50)/);
    } finally {
      keepAlive?.destroy();
      server.child.kill('SIGKILL');
    }
    fs.rmSync(dataDir, { recursive: true, force: true });
  }, 90_000);
});

describe('npm start itself', () => {
  it('forwards SIGTERM to the server (no shell in between): server and PostgreSQL gone, npm exits 0', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'docgraph-npm-'));
    const pgPort = await freePort();
    const env: Record<string, string | undefined> = { ...process.env, LOG_LEVEL: 'warn', ...embeddedEnv(dataDir, pgPort) };
    for (const [k, v] of Object.entries(env)) if (v === undefined) delete env[k];
    const npm = spawn('npm', ['start', '--silent'], { env: env as NodeJS.ProcessEnv, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    npm.stdout.on('data', (d) => (output += d));
    npm.stderr.on('data', (d) => (output += d));
    const exited = new Promise<number | null>((resolve) => npm.on('exit', (code) => resolve(code)));
    let serverPid = 0;
    try {
      await portOf({ child: npm as unknown as ChildProcessWithoutNullStreams, output: () => output, exited });
      serverPid = Number(/docgraph is running \(pid (\d+)/.exec(output)?.[1]);
      expect(serverPid).toBeGreaterThan(0);
      const alive = (pid: number) => {
        try {
          process.kill(pid, 0);
          return true;
        } catch {
          return false;
        }
      };
      expect(alive(serverPid)).toBe(true);
      const signalled = Date.now();
      npm.kill('SIGTERM');
      expect(await exited, output.slice(-3000)).toBe(0);
      while (alive(serverPid) && Date.now() - signalled < 5000) await sleep(50);
      expect(alive(serverPid)).toBe(false);
      expect(Date.now() - signalled).toBeLessThan(5000);
      await expectPostgresGone(pgPort, dataDir);
    } finally {
      npm.kill('SIGKILL');
      // A failing run must not leave the server (and its PostgreSQL) behind.
      if (serverPid) {
        try {
          process.kill(serverPid, 'SIGKILL');
        } catch {
          /* already gone */
        }
      }
    }
    fs.rmSync(dataDir, { recursive: true, force: true });
  }, 90_000);
});

describe('start-up failures', () => {
  it('a busy port is one line on stderr and exit code 1, leaving nothing running', async () => {
    // A database of its own (the shared test server), so no embedded PostgreSQL is needed.
    const adminUrl = inject('pgAdminUrl');
    const dbName = `t_${crypto.randomBytes(6).toString('hex')}`;
    const admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${dbName} TEMPLATE ${TEMPLATE_DB}`);
    const busy = net.createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    const port = (busy.address() as net.AddressInfo).port;
    try {
      const server = startServer({ DATABASE_URL: withDatabase(adminUrl, dbName), PORT: String(port), HOST: '127.0.0.1', DOCGRAPH_ADMIN_TOKEN: TOKEN });
      expect(await server.exited).toBe(1);
      const lines = server.output().trim().split('\n');
      expect(lines, server.output()).toEqual([`docgraph: cannot listen on 127.0.0.1:${port}: the port is already in use (stop the other server or set PORT)`]);
    } finally {
      busy.close();
      await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`).catch(() => {});
      await admin.end();
    }
  }, 60_000);

  it('an unreachable database is one line naming it (without its password) and exit code 1', async () => {
    const closed = await freePort();
    const server = startServer({ DATABASE_URL: `postgresql://app:s3cret@127.0.0.1:${closed}/docs`, PORT: '0' });
    expect(await server.exited).toBe(1);
    const out = server.output().trim();
    expect(out.split('\n'), out).toHaveLength(1);
    expect(out).toContain(`docgraph: cannot reach the database at postgresql://app:***@127.0.0.1:${closed}/docs`);
    expect(out).toContain('ECONNREFUSED');
    expect(out).not.toContain('s3cret');
  }, 60_000);
});
