// schema.graphql is printed from the code and committed; this fails when it is stale.
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { printedSchema, SCHEMA_FILE } from '../scripts/print-schema.ts';

describe('schema.graphql', () => {
  it('matches the schema built from the code (run `npm run print-schema`)', () => {
    expect(fs.readFileSync(SCHEMA_FILE, 'utf8')).toBe(printedSchema());
  });
});
