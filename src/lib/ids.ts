// One id per object, the same in REST and GraphQL: a type prefix and 128 random bits,
// base62-encoded so it is URL-safe and easy to double-click.
import crypto from 'node:crypto';

export const ID_PREFIXES = {
  User: 'user',
  ApiToken: 'tok',
  Organization: 'org',
  Member: 'mem',
  LinkInvite: 'inv',
  Team: 'team',
  Collection: 'col',
  Space: 'space',
  ContentGrant: 'grant',
  Revision: 'rev',
  Page: 'page',
  PageVersion: 'pv',
  File: 'file',
  ImportJob: 'imp',
  ChangeRequest: 'cr',
  Comment: 'cmt',
  CommentReply: 'rpl',
  Site: 'site',
  SiteSectionGroup: 'sitesg',
  SiteSection: 'sitesc',
  SiteSpace: 'sitesp',
  ShareLink: 'shl',
  SamlProvider: 'saml',
  OpenApiSpec: 'oas',
  OpenApiSpecVersion: 'oasv',
  TranslationSettings: 'trs',
  Webhook: 'wh',
  WebhookDelivery: 'whd',
  PdfExport: 'pdf',
  SiteVisitorKey: 'svk',
  SiteRedirect: 'sitered',
} as const;

export type IdType = keyof typeof ID_PREFIXES;

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

function randomBase62(bytes = 16): string {
  let n = BigInt('0x' + crypto.randomBytes(bytes).toString('hex'));
  let out = '';
  while (n > 0n) {
    out = ALPHABET[Number(n % 62n)] + out;
    n /= 62n;
  }
  return out.padStart(22, '0');
}

export function newId(type: IdType): string {
  return `${ID_PREFIXES[type]}_${randomBase62()}`;
}

const TYPE_BY_PREFIX = new Map<string, IdType>(Object.entries(ID_PREFIXES).map(([t, p]) => [p, t as IdType]));

/** Audit events carry UUIDs, as the contract documents them (the only ids without a prefix). */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (id: string) => UUID.test(id);

/** The type an id belongs to, from its prefix (a UUID: an audit event); undefined for anything that is not one of ours. */
export function typeOfId(id: string): IdType | 'AuditEvent' | undefined {
  if (UUID.test(id)) return 'AuditEvent';
  const i = id.lastIndexOf('_');
  if (i <= 0) return undefined;
  return TYPE_BY_PREFIX.get(id.slice(0, i));
}

/** A long secret (share-link keys, API tokens): 256 random bits. */
export function newSecret(prefix: string): string {
  return `${prefix}_${crypto.randomBytes(32).toString('base64url')}`;
}
