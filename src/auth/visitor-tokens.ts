// Visitor tokens (the seeds' JWT): signed by the site owner's backend with one of the site's
// visitor keys (SiteVisitorKey: a generated HS256 secret, or the owner's RS256/ES256 public key),
// they carry the visitor's signed claims. Verified with `jose`: the signature with a key of the
// token's own algorithm only (no HS/RS confusion: an RS256 public key is never used as an HMAC
// secret), `alg: none` refused, `exp` required and `nbf` honoured with a small clock skew, the
// audience the site's id, the size bounded. A rotated-out key verifies until its `retiresAt`.
import { decodeProtectedHeader, importSPKI, jwtVerify, errors as joseErrors, type JWTPayload } from 'jose';
import type { Tx } from '../db/client.ts';
import type { VisitorClaims } from './audience.ts';

/** Longest visitor token accepted (bytes of the compact form). */
export const MAX_VISITOR_TOKEN_BYTES = 8 * 1024;
/** Clock skew allowed on `exp` and `nbf`. */
export const VISITOR_TOKEN_CLOCK_SKEW_SECONDS = 30;
export const VISITOR_KEY_ALGORITHMS = ['HS256', 'RS256', 'ES256'] as const;
export type VisitorKeyAlgorithm = (typeof VISITOR_KEY_ALGORITHMS)[number];

/** The registered JWT claims: about the token, not the visitor. */
const REGISTERED = new Set(['iss', 'aud', 'exp', 'nbf', 'iat', 'jti']);

export type VisitorTokenResult = { ok: true; claims: VisitorClaims } | { ok: false; reason: string };

type KeyRow = { id: string; algorithm: string; secret: string | null; publicKey: string | null; retiresAt: Date | null };

/** Keys that verify at `now`: current ones and rotated-out ones still in their overlap. */
export function activeVisitorKeys(db: Tx, siteId: string, now: Date): Promise<KeyRow[]> {
  return db.siteVisitorKey.findMany({
    where: { siteId, OR: [{ retiresAt: null }, { retiresAt: { gt: now } }] },
    select: { id: true, algorithm: true, secret: true, publicKey: true, retiresAt: true },
    orderBy: { createdAt: 'desc' },
  });
}

/** Verify `token` for `siteId` against the keys given (see `verifyVisitorToken`). */
export async function verifyWithKeys(token: string, siteId: string, keys: KeyRow[], now: Date): Promise<VisitorTokenResult> {
  if (typeof token !== 'string' || token.length === 0) return { ok: false, reason: 'empty' };
  if (Buffer.byteLength(token) > MAX_VISITOR_TOKEN_BYTES) return { ok: false, reason: `longer than ${MAX_VISITOR_TOKEN_BYTES} bytes` };
  let alg: string | undefined;
  try {
    alg = decodeProtectedHeader(token).alg;
  } catch {
    return { ok: false, reason: 'malformed' };
  }
  if (!alg || !(VISITOR_KEY_ALGORITHMS as readonly string[]).includes(alg)) return { ok: false, reason: `algorithm ${alg ?? 'missing'} is not accepted` };
  const candidates = keys.filter((k) => k.algorithm === alg);
  if (candidates.length === 0) return { ok: false, reason: keys.length ? `no ${alg} key for this site` : 'the site has no visitor key' };
  let reason = 'signature does not verify';
  for (const key of candidates) {
    try {
      const material = key.algorithm === 'HS256' ? Buffer.from(key.secret ?? '', 'base64url') : await importSPKI(key.publicKey ?? '', key.algorithm);
      if (key.algorithm === 'HS256' && (material as Buffer).length < 32) continue;
      const { payload } = await jwtVerify(token, material, {
        algorithms: [key.algorithm],
        audience: siteId,
        requiredClaims: ['exp'],
        clockTolerance: VISITOR_TOKEN_CLOCK_SKEW_SECONDS,
        currentDate: now,
      });
      return { ok: true, claims: visitorClaimsOf(payload) };
    } catch (err) {
      if (err instanceof joseErrors.JWTExpired) return { ok: false, reason: 'expired' };
      if (err instanceof joseErrors.JWTClaimValidationFailed) return { ok: false, reason: `claim ${err.claim}: ${err.reason}` };
      if (err instanceof joseErrors.JWSSignatureVerificationFailed) continue; // try the next key (rotation overlap)
      reason = err instanceof Error ? err.message : 'invalid';
    }
  }
  return { ok: false, reason };
}

/**
 * Verify a visitor token for a site: its signed claims, or why it was refused. One statement (the
 * site's active keys). Never throws for a bad token.
 */
export async function verifyVisitorToken(db: Tx, siteId: string, token: string, now: Date): Promise<VisitorTokenResult> {
  if (typeof token !== 'string' || token.length === 0 || Buffer.byteLength(token) > MAX_VISITOR_TOKEN_BYTES) return verifyWithKeys(token, siteId, [], now);
  return verifyWithKeys(token, siteId, await activeVisitorKeys(db, siteId, now), now);
}

/** The visitor's claims: the payload without the registered claims (own properties only). */
function visitorClaimsOf(payload: JWTPayload): VisitorClaims {
  const claims: VisitorClaims = {};
  for (const [key, value] of Object.entries(payload)) if (!REGISTERED.has(key) && key !== '__proto__') claims[key] = value;
  return claims;
}
