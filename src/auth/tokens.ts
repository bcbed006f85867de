// API tokens: a long random secret shown once; only its SHA-256 hash is stored. A fast hash is
// right here because the secret has 256 bits of entropy (nothing to brute-force).
import crypto from 'node:crypto';
import type { Tx } from '../db/client.ts';
import { newId, newSecret } from '../lib/ids.ts';

export const hashToken = (token: string) => crypto.createHash('sha256').update(token).digest('hex');

export async function issueToken(db: Tx, userId: string, label: string, plain = newSecret('dg'), createdAt?: Date) {
  const record = await db.apiToken.create({
    data: { id: newId('ApiToken'), userId, label, tokenHash: hashToken(plain), ...(createdAt ? { createdAt } : {}) },
  });
  return { token: plain, record };
}

/** The user a bearer token belongs to, or null when missing, unknown or revoked. */
export async function userForToken(db: Tx, token: string) {
  const record = await db.apiToken.findUnique({ where: { tokenHash: hashToken(token) }, include: { user: true } });
  if (!record || record.revokedAt) return null;
  return { user: record.user, tokenId: record.id };
}

export function bearerToken(header: string | null | undefined): string | undefined {
  if (!header) return undefined;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return m?.[1];
}
