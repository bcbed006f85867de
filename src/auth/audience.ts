// Who reads a published site, and what each reader sees (DESIGN.md "Audiences of published
// content"). The fourth table of the house beside the organization actions (access.ts): one row
// per reader kind. `decideReader` applies it to the facts of one request on one site; everything
// that answers published content (GraphQL published reads, node(id:), page reads, search, the URL
// lookup, REST, the published cache) asks it, so no two paths can disagree.
//
//   kind        who                                          opens (published sites)                claims
//   member      token of an active member with a role         every site, published or not           none (editor view: everything) or a preview's
//   anonymous   no token                                      public, unlisted                       unsigned (caller's)
//   outsider    token, not a member (or a `published` token)  public, unlisted                       unsigned (caller's)
//   shareLink   an active share key of that site              public, unlisted, share-link           unsigned (caller's)
//   visitor     a valid visitor token (JWT) for that site     public, unlisted, visitor-auth         signed (token) + unsigned (caller's)
//
// A non-member reader never sees conditions or counters of what it cannot open; a missing claim is
// false, so conditioned content is hidden from a reader without claims.
import type { Site } from '../generated/prisma/client.ts';
import { badRequest } from '../lib/errors.ts';

export type ReaderKind = 'member' | 'anonymous' | 'outsider' | 'shareLink' | 'visitor';
type SiteVisibility = Site['visibility'];

/** The table: which published visibilities each kind opens, and where its signed claims come from. */
export const READER_KINDS = {
  member: { opens: ['public', 'unlisted', 'share_link', 'visitor_auth'], unpublished: true, signedClaims: 'preview' },
  anonymous: { opens: ['public', 'unlisted'], unpublished: false, signedClaims: 'none' },
  outsider: { opens: ['public', 'unlisted'], unpublished: false, signedClaims: 'none' },
  shareLink: { opens: ['public', 'unlisted', 'share_link'], unpublished: false, signedClaims: 'none' },
  visitor: { opens: ['public', 'unlisted', 'visitor_auth'], unpublished: false, signedClaims: 'token' },
} as const satisfies Record<ReaderKind, { opens: readonly SiteVisibility[]; unpublished: boolean; signedClaims: 'preview' | 'none' | 'token' }>;

export type VisitorClaims = Record<string, unknown>;

/** What one request may read of one site. */
export type SiteReader = {
  kind: ReaderKind;
  siteId: string;
  /** The validated share key (share-link readers, or anyone who gave a valid one). */
  shareKey: string | null;
  /**
   * The claims every condition is evaluated against. Null only for a member without a preview
   * (the editor's view: everything, conditions shown). `{}` for a reader without claims: every
   * conditioned item is hidden.
   */
  claims: VisitorClaims | null;
  /** Organization member: sees conditions and counters. */
  member: boolean;
};

/** The facts `decideReader` needs, gathered by Access in one or two statements. */
export type ReaderFacts = {
  site: Pick<Site, 'id' | 'published' | 'visibility'>;
  /** An active organization member allowed `site:read` (false for `published`-scoped tokens). */
  member: boolean;
  /** There is a caller token (outsider) or not (anonymous). */
  authenticated: boolean;
  /** The share key given, and whether it is an active key of this site (null: none given). */
  shareKey: string | null;
  keyValid: boolean | null;
  /** Signed claims of a visitor token verified for this site (null: no valid token). */
  tokenClaims: VisitorClaims | null;
  /** The caller's `visitor: { claims }` argument (validated shape), if any. */
  requested: { claims?: VisitorClaims } | undefined;
};

/** The reader of one site, or null when it may not read the site (NOT_FOUND). */
export function decideReader(f: ReaderFacts): SiteReader | null {
  if (f.keyValid === false) return null; // a given key must be valid, whoever asks
  const shareKey = f.keyValid ? f.shareKey : null;
  const requested = f.requested?.claims;
  if (f.member) {
    // A member sees everything, unless previewing: as the visitor token's reader, or as the claims given.
    const claims = f.tokenClaims ? withUnsigned(f.tokenClaims, requested) : requested ? { ...requested } : null;
    return { kind: 'member', siteId: f.site.id, shareKey, claims, member: true };
  }
  const kind: ReaderKind = f.tokenClaims ? 'visitor' : shareKey ? 'shareLink' : f.authenticated ? 'outsider' : 'anonymous';
  if (!f.site.published) return null;
  const opens = READER_KINDS[kind].opens as readonly SiteVisibility[];
  // A visitor with a share key of a share-link site reads it by the key, keeping its signed claims.
  const open = opens.includes(f.site.visibility) || (shareKey !== null && f.site.visibility === 'share_link');
  if (!open) return null;
  return { kind, siteId: f.site.id, shareKey, claims: withUnsigned(f.tokenClaims ?? {}, requested), member: false };
}

/**
 * A non-member's claims: the signed ones (from a verified token) and the caller's `unsigned`
 * object. Anything else the caller asserts is refused with a 400 naming it (`requireUnsignedOnly`).
 */
function withUnsigned(signed: VisitorClaims, requested: VisitorClaims | undefined): VisitorClaims {
  const { unsigned: _ignored, ...rest } = signed;
  const unsigned = requested?.unsigned;
  return unsigned && typeof unsigned === 'object' && !Array.isArray(unsigned) ? { ...rest, unsigned } : rest;
}

/** Whether the caller's `visitor: { claims }` asserts anything beyond `unsigned` (signed claims). */
export function assertsSignedClaims(requested: { claims?: VisitorClaims } | undefined): boolean {
  return Object.keys(requested?.claims ?? {}).some((key) => key !== 'unsigned');
}

/**
 * Refuse signed claims asserted by a caller who is not a member: they come only from a visitor
 * token. A 400 naming the first such claim (`visitor.claims.isEnterprise`).
 */
export function requireUnsignedOnly(requested: { claims?: VisitorClaims } | undefined): void {
  for (const key of Object.keys(requested?.claims ?? {})) {
    if (key !== 'unsigned') {
      throw badRequest(`visitor.claims.${key}`, 'signed claims come only from a visitor token (X-Visitor-Token or `visitorToken`); put claims the caller may assert under `unsigned`');
    }
  }
  const unsigned = requested?.claims?.unsigned;
  if (unsigned !== undefined && (unsigned === null || typeof unsigned !== 'object' || Array.isArray(unsigned))) {
    throw badRequest('visitor.claims.unsigned', 'must be an object');
  }
}

/**
 * What distinguishes one reader's answer from another's, for caches: two requests with the same
 * key may share a stored answer. Member or not, the validated share key, and the claims.
 */
export function audienceKey(reader: SiteReader): unknown[] {
  return [reader.member ? 'm' : 'r', reader.shareKey ?? '', reader.claims];
}

/**
 * Only readers without a token, visitor token or claims may get answers a shared cache keeps:
 * anonymous readers of a public (or unlisted) site, and share-link readers (the key is in the
 * URL, so it is in the shared cache's key; deactivating it bumps the site's version: a purge).
 */
export function sharedCacheable(reader: SiteReader): boolean {
  return (reader.kind === 'anonymous' || reader.kind === 'shareLink') && reader.claims !== null && Object.keys(reader.claims).length === 0;
}

/**
 * The root fields of published reads: what runs without a token (anonymous) and with a
 * `published`-scoped token. Every other root field needs a full token.
 */
export const PUBLISHED_READ_ROOT_FIELDS: ReadonlySet<string> = new Set(['publishedSite', 'publishedContentByUrl', 'searchSite', '__typename']);
