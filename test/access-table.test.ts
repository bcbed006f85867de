// Access is decided in src/auth/ only, by its tables (ORG_ACTIONS, SPACE_ACTIONS): no other file
// compares roles, and the access rooms stay small enough to read. Static checks of the source.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { SPACE_ACTIONS, spaceAllows, spaceRoleAllows } from '../src/auth/space-actions.ts';
import { ROLES, atLeast } from '../src/auth/roles.ts';

const SRC = path.resolve(import.meta.dirname, '../src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) return name === 'generated' ? [] : sourceFiles(full);
    return full.endsWith('.ts') ? [full] : [];
  });
}

const ROLE = `'(?:${ROLES.join('|')})'`;
/** What a role comparison looks like in the source. */
const COMPARISONS: Array<[string, RegExp]> = [
  ['atLeast / highestRole', /\b(?:atLeast|highestRole)\s*\(/],
  ['a role compared to a role name', new RegExp(`\\brole\\s*[!=]==?\\s*${ROLE}|${ROLE}\\s*[!=]==?\\s*[\\w.?]*\\brole\\b`, 'i')],
  ['a role name as an access threshold', new RegExp(`\\brequire(?:Space|Collection|SpaceById|ChangeRequest)\\w*\\([^)]*${ROLE}|\\bresolveChangeRequest\\([^)]*${ROLE}|getCollection\\([^)]*${ROLE}`)],
];

describe('access lives in src/auth/', () => {
  it('no file outside src/auth/ compares roles', () => {
    const found: string[] = [];
    for (const file of sourceFiles(SRC).filter((f) => !f.startsWith(path.join(SRC, 'auth') + path.sep))) {
      readFileSync(file, 'utf8')
        .split('\n')
        .forEach((line, i) => {
          for (const [what, re] of COMPARISONS) if (re.test(line)) found.push(`${path.relative(SRC, file)}:${i + 1} ${what}: ${line.trim()}`);
        });
    }
    expect(found).toEqual([]);
  });

  it('the checks above catch what they are for', () => {
    const caught = (line: string) => COMPARISONS.some(([, re]) => re.test(line));
    expect(caught(`if (!atLeast(scope.role, 'comment')) throw forbidden('x');`)).toBe(true);
    expect(caught(`if (me.role !== 'admin') roles.set(me.userId, 'owner');`)).toBe(true);
    expect(caught(`await ctx.access.requireSpace(space, 'edit');`)).toBe(true);
    expect(caught(`await resolveChangeRequest(ctx, spaceId, idOrNumber, 'review');`)).toBe(true);
    expect(caught(`await ctx.access.requireSpace(space, 'changeRequest:merge');`)).toBe(false);
  });

  it('every room of src/auth/ stays at most 300 lines', () => {
    const sizes = sourceFiles(path.join(SRC, 'auth')).map((f) => [path.relative(SRC, f), readFileSync(f, 'utf8').split('\n').length - 1] as const);
    expect(sizes.filter(([, n]) => n > 300)).toEqual([]);
  });
});

describe('SPACE_ACTIONS', () => {
  const me = 'usr_me';
  it('an author alternative is never stricter than the row, and nothing is allowed without a role', () => {
    for (const [action, rule] of Object.entries(SPACE_ACTIONS) as Array<[keyof typeof SPACE_ACTIONS, (typeof SPACE_ACTIONS)[keyof typeof SPACE_ACTIONS]]>) {
      if ('author' in rule) expect(atLeast(rule.role, rule.author), action).toBe(true);
      expect(spaceRoleAllows(null, action, { authorId: me }, me), action).toBe(false);
      expect(spaceRoleAllows('admin', action, {}, me), action).toBe(true);
    }
  });

  it('the author facts open the own-object rows, and only to the author', () => {
    expect(spaceRoleAllows('read', 'comment:edit', { authorId: me }, me)).toBe(true);
    expect(spaceRoleAllows('read', 'comment:edit', { authorId: 'usr_other' }, me)).toBe(false);
    expect(spaceRoleAllows('comment', 'comment:resolve', { authorId: me }, me)).toBe(true);
    expect(spaceRoleAllows('comment', 'comment:resolve', { authorId: 'usr_other' }, me)).toBe(false);
    expect(spaceRoleAllows('edit', 'comment:resolve', { authorId: 'usr_other' }, me)).toBe(true);
    expect(spaceRoleAllows('read', 'changeRequest:edit', { authorId: me }, me)).toBe(true);
    // The author alternative does not reach actions without one.
    expect(spaceRoleAllows('read', 'changeRequest:merge', { authorId: me }, me)).toBe(false);
  });

  it('object states close the flag whatever the role', () => {
    expect(spaceAllows('admin', 'changeRequest:merge', { changeRequestStatus: 'open', editMode: 'live' }, me)).toBe(true);
    expect(spaceAllows('admin', 'changeRequest:merge', { changeRequestStatus: 'archived', editMode: 'live' }, me)).toBe(false);
    expect(spaceAllows('admin', 'changeRequest:merge', { changeRequestStatus: 'open', editMode: 'locked' }, me)).toBe(false);
    expect(spaceAllows('admin', 'changeRequest:edit', { changeRequestStatus: 'merged' }, me)).toBe(false);
    expect(spaceAllows('admin', 'changeRequest:edit', { changeRequestStatus: 'archived' }, me)).toBe(true);
    expect(spaceAllows('admin', 'comment:resolve', { reply: true }, me)).toBe(false);
  });
});
