// Characters no input string may carry, checked once at the edge for both APIs (REST query
// strings and JSON bodies, GraphQL variables and string literals) before any resolver runs. The
// GraphQL side (variables, literals) is http/graphql.ts's `useCleanStrings`.
//
// - NUL (U+0000): PostgreSQL can store it neither in `text` nor in `jsonb`; letting it through
//   fails the statement (a 500) after part of the work may have run.
// - The other C0 controls except TAB, LF and CR (U+0001–U+0008, U+000B, U+000C, U+000E–U+001F):
//   PostgreSQL would store them, but no title, slug, markdown or URL needs them, they are
//   invisible, and they are not legal XML 1.0 (exports, SAML metadata). Refusing them at the edge
//   is clearer than storing bytes that break a later consumer. TAB/LF/CR are legitimate
//   (markdown, code blocks) and accepted; DEL and C1 controls are accepted (valid XML, storable).
import { badRequest } from './errors.ts';

// eslint-disable-next-line no-control-regex
export const FORBIDDEN_CHAR = /[\u0000-\u0008\u000b\u000c\u000e-\u001f]/;

export const FORBIDDEN_CHAR_MESSAGE = 'contains a NUL byte or a control character (only tab, line feed and carriage return are allowed)';

/** Dotted path of an object key or array index (`input.pages.0.title`). */
const join = (base: string, key: string | number) => (base ? `${base}.${key}` : String(key));

/**
 * The path of the first string (value or object key) in a parsed JSON value that contains a
 * forbidden character, or `undefined` when there is none. Iterative: the value may be as deep as
 * the JSON depth limit allows.
 */
export function findForbiddenString(value: unknown, base = ''): string | undefined {
  const stack: Array<[unknown, string]> = [[value, base]];
  while (stack.length) {
    const [v, path] = stack.pop()!;
    if (typeof v === 'string') {
      if (FORBIDDEN_CHAR.test(v)) return path;
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push([v[i], join(path, i)]);
    } else if (v !== null && typeof v === 'object') {
      const entries = Object.entries(v as Record<string, unknown>);
      for (let i = entries.length - 1; i >= 0; i--) {
        const [k, child] = entries[i];
        if (FORBIDDEN_CHAR.test(k)) return join(path, k.replace(FORBIDDEN_CHAR, '?'));
        stack.push([child, join(path, k)]);
      }
    }
  }
  return undefined;
}

/** Throw a 400 `AppError` naming the first offending string of `value` (see above). */
export function requireCleanStrings(value: unknown, base = '') {
  const path = findForbiddenString(value, base);
  if (path !== undefined) throw badRequest(path || base || 'body', FORBIDDEN_CHAR_MESSAGE);
}
