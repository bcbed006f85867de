// API tokens: a long random secret shown once; only its SHA-256 hash is stored. A fast hash is
// right here because the secret has 256 bits of entropy (nothing to brute-force).
import crypto from 'node:crypto';
import type { Tx } from '../db/client.ts';
import type { User } from '../generated/prisma/client.ts';
import { newId, newSecret } from '../lib/ids.ts';

/**
 * The caller of a request, as its token resolves. `scope` is set for a `published`-scoped token (a
 * front-end renderer's): it reads published content as an outsider (never as a member), of
 * `siteIds` only when not empty.
 */
export type Viewer = { user: User; tokenId: string; scope?: { published: true; siteIds: string[] } };

export const hashToken = (token: string) => crypto.createHash('sha256').update(token).digest('hex');

/** What a token may do: everything its user may (default), or published reads only (a front end's token), optionally of some sites. */
export type TokenScopeInput = { scope?: 'full' | 'published'; siteIds?: string[] };

export async function issueToken(db: Tx, userId: string, label: string, plain = newSecret('dg'), createdAt?: Date, scope: TokenScopeInput = {}) {
  const record = await db.apiToken.create({
    data: {
      id: newId('ApiToken'), userId, label, tokenHash: hashToken(plain), ...(createdAt ? { createdAt } : {}),
      ...(scope.scope ? { scope: scope.scope } : {}), ...(scope.siteIds?.length ? { siteIds: scope.siteIds } : {}),
    },
  });
  return { token: plain, record };
}

/** The user a bearer token belongs to, or null when missing, unknown or revoked. */
export async function userForToken(db: Tx, token: string) {
  const record = await db.apiToken.findUnique({ where: { tokenHash: hashToken(token) }, include: { user: true } });
  if (!record || record.revokedAt) return null;
  return record.scope === 'published'
    ? { user: record.user, tokenId: record.id, scope: { published: true as const, siteIds: record.siteIds } }
    : { user: record.user, tokenId: record.id };
}

export function bearerToken(header: string | null | undefined): string | undefined {
  if (!header) return undefined;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return m?.[1];
}
