// Every element of the public schema says what it is in GraphiQL: each type, field, argument,
// input field and enum value has a non-empty description. Introspection types
// (`__*`) are the GraphQL spec's own and are skipped.
import { describe, expect, it } from 'vitest';
import { buildSchema, isEnumType, isInputObjectType, isInterfaceType, isObjectType, type GraphQLSchema } from 'graphql';
import { schema } from '../src/graphql/schema.ts';

const described = (d: string | null | undefined) => typeof d === 'string' && d.trim() !== '';

/** `Type`, `Type.field`, `Type.field(arg)`, `Input.field`, `Enum.VALUE` for every element without a description. */
function undescribed(s: GraphQLSchema): string[] {
  const missing: string[] = [];
  for (const [name, type] of Object.entries(s.getTypeMap())) {
    if (name.startsWith('__')) continue;
    if (!described(type.description)) missing.push(name);
    if (isObjectType(type) || isInterfaceType(type)) {
      for (const field of Object.values(type.getFields())) {
        if (!described(field.description)) missing.push(`${name}.${field.name}`);
        for (const arg of field.args) if (!described(arg.description)) missing.push(`${name}.${field.name}(${arg.name})`);
      }
    } else if (isInputObjectType(type)) {
      for (const field of Object.values(type.getFields())) if (!described(field.description)) missing.push(`${name}.${field.name}`);
    } else if (isEnumType(type)) {
      for (const value of type.getValues()) if (!described(value.description)) missing.push(`${name}.${value.name}`);
    }
  }
  return missing.sort();
}

describe('schema descriptions', () => {
  it('describe every type, field, argument, input field and enum value', () => {
    const missing = undescribed(schema);
    expect(missing, `${missing.length} schema elements without a description:\n${missing.join('\n')}`).toEqual([]);
  });

  it('are looked for in fields, arguments, input fields and enum values (the check itself)', () => {
    // A field, an argument, an input field and an enum value without descriptions are each named.
    const probe = buildSchema(`
      "q" type Query { "f" a(x: Int): E, b(y: I): Int }
      "e" enum E { "v" ONE TWO }
      "i" input I { z: Int }
    `);
    expect(undescribed(probe)).toEqual(['I.z', 'Query.a(x)', 'Query.b', 'Query.b(y)', 'E.TWO'].sort());
  });
});

