// The token cache (src/auth/token-cache.ts): a repeated request skips the token read, and a
// revocation committed through any process — or plain SQL — stops the token on every process at
// once (two gateways on one database, as in production behind a load balancer).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTwoGateways, type TestApp } from './helpers.ts';

let t: TestApp;
let bUrl: string; // a second gateway process on the same database
let closeGateways: (() => Promise<void>) | undefined;

beforeAll(async () => {
  ({ t, bUrl, close: closeGateways } = await startTwoGateways());
});
afterAll(() => closeGateways?.());

const me = (base: string, token: string) => fetch(`${base}/v1/user`, { headers: { authorization: `Bearer ${token}` } });

/** Poll until `fn` answers `status` (a notice takes milliseconds; the bound only catches a hang). */
async function eventually(fn: () => Promise<Response>, status: number) {
  const deadline = Date.now() + 5000;
  let last = 0;
  while (Date.now() < deadline) {
    last = (await fn()).status;
    if (last === status) return last;
    await new Promise((r) => setTimeout(r, 25));
  }
  return last;
}

describe('token cache', () => {
  it('a repeated request does not read the token again', async () => {
    const u = await t.createUser('read');
    await me(t.baseUrl, u.token);
    const first = await t.countQueries(() => me(t.baseUrl, u.token));
    const tokenReads = first.statements.filter((s) => /"ApiToken"/.test(s));
    expect(tokenReads).toEqual([]);
    expect((await me(t.baseUrl, u.token)).status).toBe(200);
  });

  it('a token revoked on one process is refused on the other at once', async () => {
    const u = await t.createUser('read');
    const second = await t.gql<{ createApiToken: { token: string; apiToken: { id: string } } }>(
      `mutation { createApiToken(input: { label: "second" }) { token apiToken { id } } }`, {}, u.token);
    const other = second.data.createApiToken;
    // Both processes have the token cached.
    expect((await me(bUrl, other.token)).status).toBe(200);
    expect((await me(t.baseUrl, other.token)).status).toBe(200);
    const revoked = await t.gql(`mutation($id: ID!) { revokeApiToken(input: { id: $id }) { deleted } }`, { id: other.apiToken.id }, u.token);
    expect(revoked.errors).toBeUndefined();
    expect(await eventually(() => me(bUrl, other.token), 401)).toBe(401);
    expect((await me(t.baseUrl, other.token)).status).toBe(401);
    // The user's other token is unaffected.
    expect((await me(bUrl, u.token)).status).toBe(200);
  });

  it('a revocation in plain SQL reaches every cache too', async () => {
    const u = await t.createUser('read');
    expect((await me(bUrl, u.token)).status).toBe(200);
    await t.app.prisma.$executeRaw`UPDATE "ApiToken" SET "revokedAt" = now() WHERE "userId" = ${u.user.id}`;
    expect(await eventually(() => me(bUrl, u.token), 401)).toBe(401);
  });

  it('a rolled-back revocation changes nothing', async () => {
    const u = await t.createUser('read');
    expect((await me(bUrl, u.token)).status).toBe(200);
    await t.app.prisma
      .$transaction(async (tx) => {
        await tx.$executeRaw`UPDATE "ApiToken" SET "revokedAt" = now() WHERE "userId" = ${u.user.id}`;
        throw new Error('roll back');
      })
      .catch(() => {});
    expect((await me(bUrl, u.token)).status).toBe(200);
  });
});
