// The admin CLI, run from its bundle (what `npm run admin` runs) as a child process on the test
// database; its token works against the app; failures are one line.
import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const BUNDLE = '.build/cli/admin.mjs';
let t: TestApp;

beforeAll(async () => {
  // `npm run admin` = preadmin (the build, when a source changed) + `node .build/cli/admin.mjs`.
  const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  expect(pkg.scripts.admin).toBe(`node ${BUNDLE}`);
  expect(pkg.scripts.preadmin).toContain('scripts/build.mjs');
  execFileSync(process.execPath, ['scripts/build.mjs'], { cwd: ROOT, stdio: 'pipe' });
  t = await startTestApp();
});
afterAll(async () => {
  await t?.close();
});

function admin(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return adminWith({ DATABASE_URL: t.databaseUrl }, ...args);
}

function adminWith(env: Record<string, string>, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BUNDLE, ...args],
      { cwd: ROOT, env: { ...process.env, ...env }, timeout: 60_000 },
      (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout: stdout.trim(), stderr }),
    );
  });
}

describe('admin CLI', () => {
  it('creates a user, an organization, members and a token that works against the API', { timeout: 90_000 }, async () => {
    const user = await admin('create-user', '--email', 'Writer@Example.test', '--name', 'Wendy Writer');
    expect(user.code, user.stderr).toBe(0);
    const [userId, email, name] = user.stdout.split('\t');
    expect(userId).toMatch(/^user_/);
    expect([email, name]).toEqual(['writer@example.test', 'Wendy Writer']);
    const again = await admin('create-user', '--email', 'writer@example.test', '--name', 'Other');
    expect(again.stdout.split('\t')[0]).toBe(userId);

    const org = await admin('create-org', '--title', 'CLI Org', '--admin-email', 'writer@example.test');
    expect(org.code, org.stderr).toBe(0);
    const orgId = org.stdout.split('\t')[0];
    expect(orgId).toMatch(/^org_/);

    const member = await admin('add-member', '--org', orgId, '--email', 'reviewer@example.test', '--role', 'review');
    expect(member.code, member.stderr).toBe(0);
    const guest = await admin('add-member', '--org', orgId, '--email', 'guest@example.test', '--role', 'guest');
    expect(guest.stdout).toMatch(/\tguest$/);
    const dup = await admin('add-member', '--org', orgId, '--email', 'guest@example.test', '--role', 'admin');
    expect(dup.code).toBe(0);
    expect(dup.stderr).toContain('already a member');

    const token = await admin('create-token', '--email', 'writer@example.test', '--label', 'laptop');
    expect(token.code, token.stderr).toBe(0);
    expect(token.stdout).toMatch(/^dg_\S+$/);
    const orgs = await t.rest('GET', '/v1/orgs', undefined, token.stdout);
    expect(orgs.status).toBe(200);
    expect(orgs.body.items.map((o: any) => o.id)).toEqual([orgId]);
    const members = await t.rest('GET', `/v1/orgs/${orgId}/members?order=asc`, undefined, token.stdout);
    expect(members.body.items.map((m: any) => [m.user.email, m.role])).toEqual([
      ['writer@example.test', 'admin'],
      ['reviewer@example.test', 'review'],
      ['guest@example.test', null],
    ]);

    const list = await admin('list-orgs');
    expect(list.code).toBe(0);
    expect(list.stdout).toContain(`${orgId}\tCLI Org\t3 members`);
    expect(list.stdout).toContain(t.org.id);
  });

  it('fails with a message and a non-zero exit code on bad input, changing nothing', { timeout: 90_000 }, async () => {
    const users = await t.app.prisma.user.count();
    const missing = await admin('create-user', '--email', 'x@example.test');
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('--name');
    const badEmail = await admin('create-user', '--email', 'not-an-email', '--name', 'X');
    expect(badEmail.code).toBe(1);
    expect(badEmail.stderr).toContain('email');
    const badRole = await admin('add-member', '--org', t.org.id, '--email', 'y@example.test', '--role', 'boss');
    expect(badRole.code).toBe(2);
    expect(badRole.stderr).toContain('--role');
    const noOrg = await admin('add-member', '--org', 'org_missing', '--email', 'y@example.test', '--role', 'read');
    expect(noOrg.code).toBe(1);
    expect(noOrg.stderr).toContain('org_missing');
    const noUser = await admin('create-token', '--email', 'nobody@example.test');
    expect(noUser.code).toBe(1);
    expect(noUser.stderr).toContain('nobody@example.test');
    expect(await t.app.prisma.user.count()).toBe(users);

    const unknown = await admin('drop-everything');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('Unknown command');
    const unknownOption = await admin('list-orgs', '--force');
    expect(unknownOption.code).toBe(2);
    const help = await admin('--help');
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('create-token');
  });

  it('an unreachable database is one line naming it without its password, exit code 1', { timeout: 30_000 }, async () => {
    const r = await adminWith({ DATABASE_URL: 'postgresql://ops:hunter22@127.0.0.1:1/docgraph' }, 'list-orgs');
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    const lines = r.stderr.trim().split('\n');
    expect(lines).toEqual(['admin: cannot reach the database at postgresql://ops:***@127.0.0.1:1/docgraph: connect ECONNREFUSED 127.0.0.1:1']);
  });
});
