// Schema evolution: the committed baseline (schema.baseline.graphql) against the schema
// built from the code. A BREAKING change (as @graphql-inspector/core classifies it) fails unless
// the baseline already marked what it touches `@deprecated`; the comparison itself is checked on
// small schemas so this test is known to be able to fail.
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { lexicographicSortSchema, printSchema } from 'graphql';
import { schema } from '../src/graphql/schema.ts';
import { ADVICE, BASELINE_FILE, breakingChanges, unannouncedBreakingChanges } from '../scripts/schema-evolution.ts';

describe('the code against the committed baseline', () => {
  it('has no breaking change the baseline did not announce with @deprecated', async () => {
    const baseline = fs.readFileSync(BASELINE_FILE, 'utf8');
    const problems = await unannouncedBreakingChanges(baseline, printSchema(lexicographicSortSchema(schema)));
    // Each line names the change and says what to do.
    if (problems.length) console.error(problems.join('\n'));
    expect(problems).toEqual([]);
  });
});

describe('the comparison', () => {
  const BASE = `
    type Query { page(id: ID!): Page  pages(first: Int, legacy: Boolean @deprecated(reason: "ignored")): [Page!]! }
    type Page { id: ID!  title: String!  slug: String @deprecated(reason: "use path")  path: String!  kind: Kind  legacy: Legacy @deprecated(reason: "gone") }
    type Legacy { id: ID! }
    enum Kind { DOCUMENT LINK GROUP @deprecated(reason: "use sections") }
    input PageInput { title: String!  slug: String @deprecated(reason: "use path") }
    type Mutation { createPage(input: PageInput!): Page }
  `;
  const edit = (from: string, to: string) => {
    if (!BASE.includes(from)) throw new Error(`no ${from} in the base`);
    return BASE.replace(from, to);
  };

  it('accepts the same schema', async () => {
    expect(await unannouncedBreakingChanges(BASE, BASE)).toEqual([]);
  });

  it('fails when a field is removed, with the advice', async () => {
    const problems = await unannouncedBreakingChanges(BASE, edit('title: String!  slug', 'slug'));
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain('FIELD_REMOVED at Page.title');
    expect(problems[0]).toContain(ADVICE);
  });

  it('passes when the removed field, argument, input field or enum value was deprecated in the baseline', async () => {
    expect(await unannouncedBreakingChanges(BASE, edit('slug: String @deprecated(reason: "use path")  path', 'path'))).toEqual([]);
    expect(await unannouncedBreakingChanges(BASE, edit(', legacy: Boolean @deprecated(reason: "ignored")', ''))).toEqual([]);
    expect(await unannouncedBreakingChanges(BASE, edit('title: String!  slug: String @deprecated(reason: "use path") }', 'title: String! }'))).toEqual([]);
    expect(await unannouncedBreakingChanges(BASE, edit(' GROUP @deprecated(reason: "use sections")', ''))).toEqual([]);
    // The breaking change is still reported, as announced.
    const verdicts = await breakingChanges(BASE, edit(' GROUP @deprecated(reason: "use sections")', ''));
    expect(verdicts.map((v) => [v.change.type, v.change.path, v.announced])).toEqual([['ENUM_VALUE_REMOVED', 'Kind.GROUP', true]]);
  });

  it('passes when a type goes with the deprecated field that was its only use; fails when a used type goes', async () => {
    const withoutLegacy = edit('  legacy: Legacy @deprecated(reason: "gone") }', ' }').replace('type Legacy { id: ID! }', '');
    expect(await unannouncedBreakingChanges(BASE, withoutLegacy)).toEqual([]);
    const problems = await unannouncedBreakingChanges(BASE, edit('enum Kind { DOCUMENT LINK GROUP @deprecated(reason: "use sections") }', '').replace('  kind: Kind', ''));
    expect(problems.map((p) => p.split(':')[0]).sort()).toEqual(['BREAKING FIELD_REMOVED at Page.kind', 'BREAKING TYPE_REMOVED at Kind']);
  });

  it('fails when a required argument or a non-null input field is added, or an enum value removed without notice', async () => {
    expect(await unannouncedBreakingChanges(BASE, edit('page(id: ID!)', 'page(id: ID!, space: ID!)'))).toHaveLength(1);
    expect(await unannouncedBreakingChanges(BASE, edit('input PageInput { title: String!', 'input PageInput { title: String!  spaceId: ID!'))).toHaveLength(1);
    expect(await unannouncedBreakingChanges(BASE, edit('DOCUMENT LINK', 'DOCUMENT'))).toHaveLength(1);
  });

  it('passes when a nullable field or an optional argument is added', async () => {
    expect(await unannouncedBreakingChanges(BASE, edit('path: String!', 'path: String!  emoji: String'))).toEqual([]);
    expect(await unannouncedBreakingChanges(BASE, edit('page(id: ID!)', 'page(id: ID!, revision: ID)'))).toEqual([]);
  });

  it('reports an output field made nullable as the inspector classifies it (breaking: a client relying on non-null breaks)', async () => {
    const verdicts = await breakingChanges(BASE, edit('title: String!  slug', 'title: String  slug'));
    expect(verdicts.map((v) => [v.change.type, v.change.path, v.announced])).toEqual([['FIELD_TYPE_CHANGED', 'Page.title', false]]);
    // Non-null → null on an output field is how the nullable lookups changed Query: such a
    // change needs the baseline refreshed (and a CHANGELOG line), or a deprecation first.
    expect(await unannouncedBreakingChanges(BASE, edit('title: String!  slug', 'title: String  slug'))).toHaveLength(1);
    // The other way (nullable → non-null on an output) is safe for clients.
    expect(await unannouncedBreakingChanges(BASE, edit('page(id: ID!): Page ', 'page(id: ID!): Page! '))).toEqual([]);
  });
});
