// Prints the GraphQL SDL from the code into schema.graphql (committed). `--check` exits non-zero
// when the committed file is stale (used by .ci/run; test/schema.test.ts checks the same).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { printSchema, lexicographicSortSchema } from 'graphql';
import { schema } from '../src/graphql/schema.ts';

export const SCHEMA_FILE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../schema.graphql');
export const printedSchema = () => printSchema(lexicographicSortSchema(schema)) + '\n';

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const sdl = printedSchema();
  if (process.argv.includes('--check')) {
    const current = fs.existsSync(SCHEMA_FILE) ? fs.readFileSync(SCHEMA_FILE, 'utf8') : '';
    if (current !== sdl) {
      console.error('schema.graphql is stale: run `npm run print-schema` and commit it.');
      process.exit(1);
    }
    console.log('schema.graphql is current');
  } else {
    fs.writeFileSync(SCHEMA_FILE, sdl);
    console.log(`wrote ${SCHEMA_FILE}`);
  }
}
