// Schema evolution (issue 22): schema.baseline.graphql is the API as clients last saw it announced;
// test/schema-evolution.test.ts diffs it against the schema built from the code with
// @graphql-inspector/core and fails on a BREAKING change the baseline did not announce with
// `@deprecated` (removing a field, argument, input field or enum value deprecated in the baseline
// is the announced kind; so is removing a type every reference to which was deprecated).
//
// `npm run schema:baseline` rewrites the baseline from the code (after a breaking change that is
// meant: note it in CHANGELOG.md). `--check` exits non-zero on an unannounced breaking change.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  buildSchema,
  getNamedType,
  isEnumType,
  isInputObjectType,
  isInterfaceType,
  isObjectType,
  isUnionType,
  type GraphQLSchema,
} from 'graphql';
import { CriticalityLevel, diff, type Change } from '@graphql-inspector/core';

export const BASELINE_FILE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../schema.baseline.graphql');

export const ADVICE = 'deprecate first, or refresh the baseline with `npm run schema:baseline` and note it in CHANGELOG.md';

export type Verdict = { change: Change; announced: boolean };

/** Every breaking change from `baseline` to `current`, each marked announced (deprecated in the baseline) or not. */
export async function breakingChanges(baseline: GraphQLSchema | string, current: GraphQLSchema | string): Promise<Verdict[]> {
  const before = typeof baseline === 'string' ? buildSchema(baseline) : baseline;
  const after = typeof current === 'string' ? buildSchema(current) : current;
  const changes = await diff(before, after);
  return changes.filter((c) => c.criticality.level === CriticalityLevel.Breaking).map((change) => ({ change, announced: deprecatedIn(before, change.path) }));
}

/** The unannounced ones, one line each with the advice: empty when the change set is acceptable. */
export async function unannouncedBreakingChanges(baseline: GraphQLSchema | string, current: GraphQLSchema | string): Promise<string[]> {
  return (await breakingChanges(baseline, current)).filter((v) => !v.announced).map((v) => `BREAKING ${v.change.type} at ${v.change.path ?? '(schema)'}: ${v.change.message} — ${ADVICE}`);
}

/**
 * Whether the baseline marks what `path` names as deprecated: `Type.field`, `Type.field.arg`,
 * `Input.field`, `Enum.VALUE` (or a field whose argument it is); a bare `Type` when every field,
 * argument and input field of the baseline that uses the type is deprecated.
 */
export function deprecatedIn(schema: GraphQLSchema, changePath: string | undefined): boolean {
  if (!changePath) return false;
  const [typeName, member, argName] = changePath.split('.');
  const type = schema.getType(typeName);
  if (!type) return false;
  if (member === undefined) return everyReferenceDeprecated(schema, typeName);
  if (isEnumType(type)) return Boolean(type.getValue(member)?.deprecationReason);
  if (isInputObjectType(type)) return Boolean(type.getFields()[member]?.deprecationReason);
  if (isObjectType(type) || isInterfaceType(type)) {
    const field = type.getFields()[member];
    if (!field) return false;
    if (field.deprecationReason) return true;
    if (argName !== undefined) return Boolean(field.args.find((a) => a.name === argName)?.deprecationReason);
  }
  return false;
}

function everyReferenceDeprecated(schema: GraphQLSchema, typeName: string): boolean {
  for (const t of Object.values(schema.getTypeMap())) {
    if (t.name.startsWith('__')) continue;
    if (isUnionType(t) && t.getTypes().some((m) => m.name === typeName)) return false;
    if ((isObjectType(t) || isInterfaceType(t)) && t.getInterfaces().some((i) => i.name === typeName)) return false;
    if (isObjectType(t) || isInterfaceType(t)) {
      for (const f of Object.values(t.getFields())) {
        if (getNamedType(f.type).name === typeName && !f.deprecationReason) return false;
        if (!f.deprecationReason && f.args.some((a) => getNamedType(a.type).name === typeName && !a.deprecationReason)) return false;
      }
    }
    if (isInputObjectType(t)) for (const f of Object.values(t.getFields())) if (getNamedType(f.type).name === typeName && !f.deprecationReason) return false;
  }
  return true;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const { printedSchema } = await import('./print-schema.ts');
  const sdl = printedSchema();
  if (process.argv.includes('--check')) {
    const problems = await unannouncedBreakingChanges(fs.readFileSync(BASELINE_FILE, 'utf8'), sdl);
    for (const p of problems) console.error(p);
    process.exit(problems.length ? 1 : 0);
  }
  fs.writeFileSync(BASELINE_FILE, sdl);
  console.log(`wrote ${BASELINE_FILE}`);
}
