// requireJsonDepth (src/http/limits.ts) refuses a request body nested deeper than the limit before
// JSON.parse sees it, on the raw bytes or on a string. It skips string contents with indexOf; the
// property: it refuses exactly the bodies whose structural nesting (brackets outside strings,
// escapes honoured) passes the limit, for arbitrary JSON values and arbitrary text, and a long
// string value costs no more than its length.
import fc from 'fast-check';
import { expect, it } from 'vitest';
import { requireJsonDepth } from '../../src/http/limits.ts';

/** The reference: one character at a time. */
function depthOf(text: string): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '{' || c === '[') max = Math.max(max, ++depth);
    else if (c === '}' || c === ']') depth--;
  }
  return max;
}

const refuses = (text: string | Uint8Array, max: number) => {
  try {
    requireJsonDepth(text, max);
    return false;
  } catch {
    return true;
  }
};

it('refuses exactly what nests deeper than the limit, on strings and on UTF-8 bytes', () => {
  const texts = fc.oneof(
    fc.jsonValue({ maxDepth: 8 }).map((v) => JSON.stringify(v)),
    fc.string({ unit: fc.constantFrom('{', '}', '[', ']', '"', '\\', 'a', 'é', ' ') , maxLength: 60 }),
  );
  fc.assert(
    fc.property(texts, fc.integer({ min: 0, max: 8 }), (text, max) => {
      const expected = depthOf(text) > max;
      expect(refuses(text, max)).toBe(expected);
      expect(refuses(new TextEncoder().encode(text), max)).toBe(expected);
    }),
    { numRuns: 2000 },
  );
});

it('reads past a 3 MiB string value, escapes included, and still sees the nesting after it', () => {
  const pad = 'x'.repeat(3 * 1024 * 1024);
  const body = `{"variables":{"claims":{"pad":"${pad}\\"[[[[","deep":[[[[[[1]]]]]]}}}`;
  // Three objects and six arrays, the brackets inside the string not counted.
  expect(depthOf(body)).toBe(9);
  expect(refuses(body, 9)).toBe(false);
  expect(refuses(body, 8)).toBe(true);
  expect(refuses(Buffer.from(body), 8)).toBe(true);
});
