// The migrations are hand-written SQL (the Prisma migrate engine cannot be downloaded here), so
// this test compares the migrated database with the data model the generated client carries:
// every model is a table, every scalar field a column of the right type and nullability, every
// enum has the same values; and every foreign key is covered by an index.
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { inject } from 'vitest';
import { getDatamodel } from '../src/generated/pothos-prisma-types.ts';
import { withDatabase, TEMPLATE_DB } from './global-setup.ts';

const SQL_TYPE: Record<string, string> = {
  String: 'text',
  Int: 'integer',
  Boolean: 'boolean',
  DateTime: 'timestamp without time zone',
  Json: 'jsonb',
  Float: 'double precision',
  BigInt: 'bigint',
  Bytes: 'bytea',
};

// Json fields declared `@db.Json` are `json` columns (the text kept as written); the data model
// the client carries does not say which, schema.prisma does.
const JSON_TEXT = new Set<string>();
for (const m of fs.readFileSync(new URL('../prisma/schema.prisma', import.meta.url), 'utf8').matchAll(/^model (\w+) \{([\s\S]*?)^\}/gm)) {
  for (const f of m[2].matchAll(/^\s+(\w+)\s+Json\??\s.*@db\.Json\b/gm)) JSON_TEXT.add(`${m[1]}.${f[1]}`);
}

let client: pg.Client;
beforeAll(async () => {
  client = new pg.Client({ connectionString: withDatabase(inject('pgAdminUrl'), TEMPLATE_DB) });
  await client.connect();
});
afterAll(async () => {
  await client?.end();
});

describe('schema.prisma and the migrated database', () => {
  it('agree on tables, columns, types and nullability', async () => {
    const { rows } = await client.query<{ table_name: string; column_name: string; data_type: string; udt_name: string; is_nullable: string }>(
      `SELECT table_name, column_name, data_type, udt_name, is_nullable FROM information_schema.columns WHERE table_schema = 'public' AND table_name <> '_prisma_migrations'`,
    );
    const db = new Map<string, Map<string, (typeof rows)[number]>>();
    for (const r of rows) {
      if (!db.has(r.table_name)) db.set(r.table_name, new Map());
      db.get(r.table_name)!.set(r.column_name, r);
    }
    const models = getDatamodel().datamodel.models as unknown as Record<string, { fields: Array<{ name: string; kind: string; type: string; isRequired: boolean; isList: boolean }> }>;
    const problems: string[] = [];
    for (const [model, { fields }] of Object.entries(models)) {
      const table = db.get(model);
      if (!table) {
        problems.push(`table ${model} is missing`);
        continue;
      }
      const expectedColumns = new Set<string>();
      for (const f of fields) {
        if (f.kind === 'object') continue;
        expectedColumns.add(f.name);
        const col = table.get(f.name);
        if (!col) {
          problems.push(`${model}.${f.name} is missing`);
          continue;
        }
        const actual = col.data_type === 'ARRAY' ? `${col.udt_name.replace(/^_/, '')}[]` : col.data_type === 'USER-DEFINED' ? col.udt_name : col.data_type;
        const base = f.kind === 'enum' ? f.type : JSON_TEXT.has(`${model}.${f.name}`) ? 'json' : SQL_TYPE[f.type];
        const expected = f.isList ? `${base === 'text' ? 'text' : base}[]` : base;
        if (actual !== expected) problems.push(`${model}.${f.name}: type ${actual}, schema says ${expected}`);
        if (!f.isList && (col.is_nullable === 'NO') !== f.isRequired) problems.push(`${model}.${f.name}: nullability differs`);
      }
      for (const name of table.keys()) {
        // Unsupported("tsvector") fields are not in the client's data model.
        if (!expectedColumns.has(name) && name !== 'searchVector') problems.push(`${model}.${name} exists in the database but not in schema.prisma`);
      }
    }
    for (const table of db.keys()) if (!models[table]) problems.push(`table ${table} is not in schema.prisma`);
    expect(problems).toEqual([]);
  });

  it('agree on enum values', async () => {
    const { rows } = await client.query<{ typname: string; labels: string[] }>(
      `SELECT t.typname, array_agg(e.enumlabel::text ORDER BY e.enumsortorder) AS labels FROM pg_type t JOIN pg_enum e ON e.enumtypid = t.oid JOIN pg_namespace n ON n.oid = t.typnamespace WHERE n.nspname = 'public' GROUP BY t.typname`,
    );
    const enums = await import('../src/generated/prisma/enums.ts');
    const problems: string[] = [];
    for (const r of rows) {
      const values = (enums as Record<string, Record<string, string>>)[r.typname];
      if (!values) {
        problems.push(`enum ${r.typname} not in schema.prisma`);
        continue;
      }
      const expected = Object.values(values);
      // @map'ed values (`share-link`) are named with `_` in the client.
      if (JSON.stringify(expected) !== JSON.stringify(r.labels.map((l) => l.replace(/-/g, '_')))) problems.push(`enum ${r.typname}: db ${r.labels.join(',')} vs schema ${expected.join(',')}`);
    }
    expect(problems).toEqual([]);
  });

  it('index every foreign key', async () => {
    const { rows } = await client.query<{ table: string; column: string; indexed: boolean }>(`
      SELECT c.conrelid::regclass::text AS table, a.attname AS column,
             EXISTS (SELECT 1 FROM pg_index i WHERE i.indrelid = c.conrelid AND i.indkey[0] = c.conkey[1]) AS indexed
      FROM pg_constraint c JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1]
      WHERE c.contype = 'f' AND c.connamespace = 'public'::regnamespace`);
    expect(rows.filter((r) => !r.indexed).map((r) => `${r.table}.${r.column}`)).toEqual([]);
  });
});
