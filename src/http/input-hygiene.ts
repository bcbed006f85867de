// Characters no input string may carry, checked once at the edge for both APIs (REST query
// strings and JSON bodies, GraphQL variables and string literals) before any resolver runs.
//
// - NUL (U+0000): PostgreSQL can store it neither in `text` nor in `jsonb`; letting it through
//   fails the statement (a 500) after part of the work may have run.
// - The other C0 controls except TAB, LF and CR (U+0001–U+0008, U+000B, U+000C, U+000E–U+001F):
//   PostgreSQL would store them, but no title, slug, markdown or URL needs them, they are
//   invisible, and they are not legal XML 1.0 (exports, SAML metadata). Refusing them at the edge
//   is clearer than storing bytes that break a later consumer. TAB/LF/CR are legitimate
//   (markdown, code blocks) and accepted; DEL and C1 controls are accepted (valid XML, storable).
import { Kind, type ASTVisitor, type ValidationContext, GraphQLError } from 'graphql';
import { badRequest } from '../lib/errors.ts';

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

/**
 * GraphQL validation rule: a string literal in the document (an argument, an input object field,
 * a default value) may not contain a forbidden character either. `\u0000` escapes are legal
 * GraphQL, so the parser lets them through.
 */
export function CleanStringLiteralsRule(context: ValidationContext): ASTVisitor {
  return {
    [Kind.STRING](node, _key, parent, _path, ancestors) {
      if (!FORBIDDEN_CHAR.test(node.value)) return;
      // Name the argument or input field the literal belongs to, outermost first.
      const names: string[] = [];
      for (const a of [...ancestors, parent]) {
        if (!a) continue;
        if (Array.isArray(a)) continue;
        const n = a as { kind?: string; name?: { value: string } };
        if ((n.kind === Kind.ARGUMENT || n.kind === Kind.OBJECT_FIELD) && n.name) names.push(n.name.value);
      }
      const field = names.join('.') || 'query';
      context.reportError(
        new GraphQLError(`${field}: ${FORBIDDEN_CHAR_MESSAGE}`, { nodes: [node], extensions: { code: 'BAD_REQUEST', field } }),
      );
    },
  };
}
