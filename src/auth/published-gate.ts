// Who reads a site's published view, as Access applies it: share keys, the published-scoped
// token's sites, the reader of one request on one site (`siteReader`) and the published-structure
// cache's gate, which decides the same thing from one statement. The rule itself is audience.ts's
// `decideReader`.
import { enumFromRow, type Tx } from '../db/client.ts';
import type { Site } from '../generated/prisma/client.ts';
import { notFound } from '../lib/errors.ts';
import { siteSpaceVisibleTo } from '../lib/conditions.ts';
import { assertsSignedClaims, decideReader, requireUnsignedOnly, type SiteReader, type VisitorClaims } from './audience.ts';
import { loadGateRow } from './access-sql.ts';
import { orgAllows } from './org-actions.ts';
import type { Viewer } from './tokens.ts';
import { verifyVisitorToken } from './visitor-tokens.ts';

/** How a published read names its reader: the REST path's organization, a share key, a visitor token, a preview. */
export type ReaderOptions = {
  organizationId?: string;
  shareKey?: string | null;
  /** A visitor token (argument or `X-Visitor-Token`). */
  visitorToken?: string | null;
  /** The `visitor: { claims }` argument, validated (VisitorInput). */
  visitor?: { claims?: VisitorClaims };
  /** Now, for the visitor token's `exp`/`nbf`. */
  now: Date;
};

export type SiteReaderRow = Pick<Site, 'id' | 'organizationId' | 'published' | 'visibility'>;

/** Share keys are `newSecret(SHARE_KEY_PREFIX)`: 256 random bits, never derived from anything guessable. */
export const SHARE_KEY_PREFIX = 'shk';

/** The shape check `resolveShareKey` applies before any lookup. */
const plausibleShareKey = (key: string) => typeof key === 'string' && key.startsWith(`${SHARE_KEY_PREFIX}_`) && key.length <= 200;

/** A visitor token's refusal as the caller may read it: expired, not yet valid, or invalid. */
const publicReason = (reason: string) => (reason === 'expired' ? 'expired' : reason.startsWith('claim nbf') ? 'not yet valid' : 'invalid');

export type ResolvedShareKey = {
  shareLinkId: string;
  siteId: string;
  organizationId: string;
  /** The site's state, so a caller can apply the published-site rules without another read. */
  site: SiteReaderRow;
};

/**
 * Resolve a share key: the active share link with this key, of site `siteId` when given (of any
 * site when null, for `GET /v1/spaces/{spaceId}?shareKey`). Null for an unknown, inactive or
 * other-site key. Never cached: a deactivated key fails on the next request.
 */
export async function resolveShareKey(prisma: Tx, siteId: string | null, key: string): Promise<ResolvedShareKey | null> {
  if (!plausibleShareKey(key)) return null;
  const link = await prisma.shareLink.findUnique({
    where: { key },
    select: { id: true, active: true, siteId: true, site: { select: { id: true, organizationId: true, published: true, visibility: true } } },
  });
  if (!link || !link.active || (siteId !== null && link.siteId !== siteId)) return null;
  return { shareLinkId: link.id, siteId: link.siteId, organizationId: link.site.organizationId, site: link.site };
}

/** A `published`-scoped token limited to some sites opens only those; any other caller, every site. */
export function scopeOpens(viewer: Viewer | null, siteId: string): boolean {
  const sites = viewer?.scope?.siteIds;
  return !sites || sites.length === 0 || sites.includes(siteId);
}

/**
 * The reader of `site`'s published view (src/auth/audience.ts decides): a member (a preview,
 * published or not), or a reader the site's visibility opens to, with the claims its conditions
 * are evaluated against. NOT_FOUND otherwise (a missing site, another organization's, an invalid
 * share key, a visitor-auth site without a valid visitor token). A caller who is not a member
 * and asserts signed claims gets a 400 naming the claim.
 */
export async function decideSiteReader(prisma: Tx, viewer: Viewer | null, site: SiteReaderRow | null | undefined, opts: ReaderOptions, member: (organizationId: string) => Promise<boolean>): Promise<SiteReader> {
  if (!site || (opts.organizationId && site.organizationId !== opts.organizationId)) throw notFound('Site');
  if (!scopeOpens(viewer, site.id)) throw notFound('Site');
  const shareKey = opts.shareKey ?? null;
  const [keyValid, isMember, token] = await Promise.all([
    shareKey === null ? null : resolveShareKey(prisma, site.id, shareKey).then((r) => r !== null),
    member(site.organizationId),
    opts.visitorToken ? verifyVisitorToken(prisma, site.id, opts.visitorToken, opts.now) : null,
  ]);
  if (!isMember) requireUnsignedOnly(opts.visitor);
  const reader = decideReader({
    site,
    member: keyValid === false ? false : isMember,
    authenticated: viewer !== null,
    shareKey,
    keyValid,
    tokenClaims: token?.ok ? token.claims : null,
    requested: opts.visitor,
  });
  if (!reader) {
    // Say why a token failed only in words that reveal nothing of the site's keys.
    if (token && !token.ok && site.visibility === 'visitor_auth') throw notFound('Site', `the visitor token is not valid for it (${publicReason(token.reason)})`);
    throw notFound('Site');
  }
  return reader;
}

/**
 * The published-structure cache's gate (src/http/published-cache.ts): the site's structure
 * version and the caller's reader, by the same rule as `siteReader`, in one statement (two with
 * a visitor token). Null when the answer is "no", a 400, or unknown: then the request runs
 * uncached and `siteReader` gives the error, so a stored answer only reaches a reader the
 * uncached path would serve the same answer.
 */
export async function publishedSiteGate(prisma: Tx, viewer: Viewer | null, siteId: string, opts: ReaderOptions): Promise<{ version: string; reader: SiteReader } | null> {
  const shareKey = opts.shareKey ?? null;
  if (shareKey !== null && !plausibleShareKey(shareKey)) return null;
  if (!scopeOpens(viewer, siteId)) return null;
  const userId = viewer && !viewer.scope ? viewer.user.id : null;
  const row = await loadGateRow(prisma, siteId, userId, shareKey);
  if (!row || (opts.organizationId && row.organizationId !== opts.organizationId)) return null;
  const keyValid = shareKey === null ? null : row.keyValid === true;
  if (keyValid === false) return null;
  const member = row.role !== null && !row.disabled && orgAllows({ role: row.role }, 'site:read');
  if (!member && assertsSignedClaims(opts.visitor)) return null;
  const token = opts.visitorToken ? await verifyVisitorToken(prisma, siteId, opts.visitorToken, opts.now) : null;
  if (token && !token.ok) return null;
  const site = { id: row.id, published: row.published, visibility: enumFromRow<Site['visibility']>(row.visibility) };
  const reader = decideReader({ site, member, authenticated: viewer !== null, shareKey, keyValid, tokenClaims: token?.ok ? token.claims : null, requested: opts.visitor });
  return reader ? { version: row.version, reader } : null;
}

/**
 * For the spaces area (`GET /v1/spaces/{spaceId}?shareKey`): true when `key` is an active link of
 * a published site that shows this space to its share-link readers — a site space of it (not
 * deleted) whose condition, and its section's, pass without claims (a share key carries none).
 */
export async function spaceVisibleWithShareKey(prisma: Tx, spaceId: string, key: string): Promise<boolean> {
  const resolved = await resolveShareKey(prisma, null, key);
  if (!resolved || !resolved.site.published) return false;
  const siteSpaces = await prisma.siteSpace.findMany({
    where: { siteId: resolved.siteId, spaceId, space: { deletedAt: null } },
    select: { condition: true, section: { select: { condition: true } } },
    take: 100,
  });
  // A share key carries no claims: the site space shows when its conditions pass without any.
  return siteSpaces.some((ss) => siteSpaceVisibleTo(ss, ss.section, {}));
}
