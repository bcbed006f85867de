// One object, one id (docs/decisions.md, "One object, one id"): normalized
// client caches (Relay, Apollo, urql) key objects by `id`, so an object read through a filtered
// view (a visitor preview, a published reader) answers an id of its own, and a page of a revision
// a revision-scoped id. The stable ids stay available as `siteId`, `pageId`.
import { createHash } from 'node:crypto';
import { stringify as canonicalJson } from 'safe-stable-stringify';

/** Separates an object's own id from its view's key: never in our ids (base62 after `prefix_`). */
export const VIEW_SEPARATOR = '~';

/**
 * A short digest of what a view filters by (canonical JSON: key order does not count). Hex, so a
 * view-scoped id has no `_` after its prefix and `node(id:)` still dispatches on the prefix.
 */
export function viewKey(parts: unknown): string {
  return createHash('sha256').update(canonicalJson(parts) ?? '').digest('hex').slice(0, 16);
}

/** `id` for the unfiltered view (key undefined), else `id~key`. */
export const viewScopedId = (id: string, key: string | undefined) => (key ? `${id}${VIEW_SEPARATOR}${key}` : id);

/** The object's own id inside a view-scoped id. */
export const baseIdOf = (id: string) => {
  const i = id.indexOf(VIEW_SEPARATOR);
  return i < 0 ? id : id.slice(0, i);
};

/** A page of a revision: `rpg_<revisionId>_<pageId>`, plus the reader's view key when its pages are filtered. */
export function revisionPageId(revisionId: string, pageId: string, readerClaims?: Record<string, unknown>): string {
  return viewScopedId(`rpg_${revisionId}_${pageId}`, readerClaims ? viewKey({ claims: readerClaims }) : undefined);
}
