// Property-based fuzzing of both APIs from their own schemas (fast-check, fixed seed, bounded
// runs): REST bodies and query strings derived from each route's zod schemas, GraphQL inputs
// derived from each mutation's input type, each mutated into wrong types, missing and extra
// fields, huge strings and control characters. Whatever arrives, the answer is never a 5xx (no
// INTERNAL_SERVER_ERROR), an error has the contract's shape, and a refused request changes no
// row of any table.
import fc from 'fast-check';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  getNamedType,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  isScalarType,
  type GraphQLInputType,
} from 'graphql';
import { schema } from '../src/graphql/schema.ts';
import { buildRestRouter } from '../src/rest/index.ts';
import type { RestRoute } from '../src/rest/router.ts';
import { startTestApp, type TestApp } from './helpers.ts';
import { buildRouteFixture, type RouteFixture } from './fixtures/route-fixture.ts';

const SEED = 20_240_611;
const REST_RUNS = 12;
const GRAPHQL_RUNS = 8;

let t: TestApp;
let fx: RouteFixture;
let db: pg.Client;
let countSql: string;
/** Real ids, so that generated strings reach past "not found" into the rules behind it. */
let ids: string[] = [];
/** URLs that answer at once (no network): this server, and a closed port. */
let urls: string[] = [];

beforeAll(async () => {
  // No worker: a job finishing during a request would change row counts on its own.
  t = await startTestApp({ worker: false });
  fx = await buildRouteFixture(t, { waitForSpecVersion: false });
  const p = fx.params('/');
  ids = [...new Set([...Object.values(p), ...Object.values(fx.params('/change-requests/')), fx.space2.id, fx.section2.id, fx.second.user.id])];
  urls = [`${t.baseUrl}/healthz`, `${t.baseUrl}/nothing-here.md`, 'http://127.0.0.1:1/closed.md'];
  db = new pg.Client({ connectionString: t.databaseUrl });
  await db.connect();
  const tables = await db.query<{ table_name: string }>(
    `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE' AND table_name <> '_prisma_migrations' ORDER BY 1`,
  );
  countSql = tables.rows.map((r) => `SELECT '${r.table_name}' AS t, count(*)::int AS n FROM public."${r.table_name}"`).join(' UNION ALL ');
}, 60_000);
afterAll(async () => {
  await db?.end();
  await t?.close();
});

/** Row count of every table of the public schema. */
async function rowCounts(): Promise<Record<string, number>> {
  const r = await db.query<{ t: string; n: number }>(countSql);
  return Object.fromEntries(r.rows.map((x) => [x.t, x.n]));
}

// ------------------------------------------------------------------ shared arbitraries

/** C0 controls mixed with ordinary characters (the NUL byte among them). */
const controlString = fc
  .array(fc.constantFrom('\u0000', '\u0001', '\u0008', '\u000b', '\u001b', '\u001f', 'a', ' ', '\t', '\n', 'é', '😀'), { minLength: 1, maxLength: 12 })
  .map((a) => a.join(''))
  .filter((s) => /[\u0000-\u0008\u000b\u000c\u000e-\u001f]/.test(s));
const hugeString = (max: number) => fc.integer({ min: 1000, max }).map((n) => 'ä'.repeat(n));
const anyString = () => fc.oneof({ weight: 3, arbitrary: fc.string({ maxLength: 20 }) }, { weight: 2, arbitrary: fc.constantFrom(...ids) }, { weight: 1, arbitrary: fc.constantFrom('', '../..', '%00', 'null', '-1', '1e309', ...urls) });
const wrongType = () =>
  fc.oneof(
    fc.integer({ min: -(2 ** 40), max: 2 ** 40 }),
    fc.double({ noNaN: true }),
    fc.boolean(),
    fc.constant(null),
    fc.array(fc.string({ maxLength: 5 }), { maxLength: 3 }),
    fc.dictionary(fc.string({ maxLength: 5 }), fc.string({ maxLength: 5 }), { maxKeys: 2 }),
    fc.string({ maxLength: 10 }),
  );
/** Something that should be refused or ignored wherever it lands. */
const badValue = (maxHuge: number) => fc.oneof(wrongType(), controlString, hugeString(maxHuge));

// ------------------------------------------------------------------ REST: from JSON schema

type Json = { [k: string]: any };

/** A value shaped by a JSON schema (zod 4's `toJSONSchema`), each part possibly mutated. */
function fromJsonSchema(s: Json | undefined, depth = 0, mutate = 0.2): fc.Arbitrary<unknown> {
  const good = validFromJsonSchema(s, depth, mutate);
  return fc.oneof({ weight: Math.round((1 - mutate) * 10), arbitrary: good }, { weight: Math.round(mutate * 10), arbitrary: badValue(200_000) });
}

function validFromJsonSchema(s: Json | undefined, depth: number, mutate: number): fc.Arbitrary<unknown> {
  if (!s || depth > 5) return fc.jsonValue({ maxDepth: 2 });
  if ('const' in s) return fc.constant(s.const);
  if (Array.isArray(s.enum)) return fc.constantFrom(...s.enum);
  const alternatives = s.anyOf ?? s.oneOf;
  if (Array.isArray(alternatives) && alternatives.length) return fc.oneof(...alternatives.map((a: Json) => validFromJsonSchema(a, depth + 1, mutate)));
  if (Array.isArray(s.allOf) && s.allOf.length) return validFromJsonSchema(s.allOf[0], depth + 1, mutate);
  const type = Array.isArray(s.type) ? s.type : s.type ? [s.type] : [];
  if (type.length > 1) return fc.oneof(...type.map((ty: string) => validFromJsonSchema({ ...s, type: ty }, depth, mutate)));
  switch (type[0]) {
    case 'string':
      if (s.format === 'uri' || /url/i.test(s.description ?? '')) return fc.constantFrom(...urls);
      return fc.oneof(anyString(), fc.string({ minLength: s.minLength ?? 0, maxLength: Math.min(s.maxLength ?? 30, 30) }));
    case 'integer':
      return fc.integer({ min: Math.max(s.minimum ?? -5, -1e6), max: Math.min(s.maximum ?? 1000, 1e6) });
    case 'number':
      return fc.double({ min: s.minimum ?? -1e6, max: s.maximum ?? 1e6, noNaN: true });
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array':
      return fc.array(fromJsonSchema(s.items, depth + 1, mutate), { maxLength: 3 });
    case 'object': {
      const props: Record<string, Json> = s.properties ?? {};
      const required: string[] = s.required ?? [];
      const keys = Object.keys(props);
      if (!keys.length) return fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 2 });
      const record = fc.record(Object.fromEntries(keys.map((k) => [k, fromJsonSchema(props[k], depth + 1, mutate)])), {
        // Required fields are usually there; sometimes missing.
        requiredKeys: [],
      });
      return fc
        .tuple(record, fc.subarray(required), fc.option(fc.constantFrom('extraFieldXyz', '__proto__', 'constructor'), { freq: 4 }), badValue(1000))
        .map(([obj, forced, extra, extraValue]) => {
          const out: Record<string, unknown> = { ...obj };
          for (const k of forced) if (!(k in out)) out[k] = null; // present but null: another wrong type
          if (extra) out[extra] = extraValue;
          return out;
        });
    }
  }
  return fc.jsonValue({ maxDepth: 2 });
}

function jsonSchemaOf(zodSchema: unknown): Json | undefined {
  if (!zodSchema) return undefined;
  return z.toJSONSchema(zodSchema as z.ZodType, { io: 'input', unrepresentable: 'any' }) as Json;
}

/** A query string: the route's keys with good or bad values, sometimes an unknown key. */
function queryArb(route: RestRoute): fc.Arbitrary<Record<string, string>> {
  const props = (jsonSchemaOf(route.query)?.properties ?? {}) as Record<string, Json>;
  const value = (s: Json) =>
    fc.oneof(
      { weight: 3, arbitrary: validFromJsonSchema(s, 0, 0).map((v) => (typeof v === 'string' ? v : JSON.stringify(v) ?? '')) },
      { weight: 1, arbitrary: controlString },
      { weight: 1, arbitrary: hugeString(3000) },
      { weight: 1, arbitrary: fc.constantFrom('', '-1', '1001', 'abc', 'true', '[]', '1e3', 'garbage') },
    );
  const known = fc.record(Object.fromEntries(Object.entries(props).map(([k, s]) => [k, value(s)])), { requiredKeys: [] });
  return fc.tuple(known, fc.option(fc.constantFrom('unknownKeyXyz', 'foo', '__proto__'), { freq: 3 })).map(([q, extra]) => {
    const out: Record<string, string> = { ...(q as Record<string, string>) };
    if (extra) out[extra] = '1';
    return out;
  });
}

/** The raw body text: JSON from the schema, or sometimes not an object, or not JSON at all. */
function bodyArb(route: RestRoute): fc.Arbitrary<string> {
  const shaped = fromJsonSchema(jsonSchemaOf(route.body), 0, 0.25).map((v) => JSON.stringify(v) ?? 'null');
  return fc.oneof(
    { weight: 8, arbitrary: shaped },
    { weight: 1, arbitrary: wrongType().map((v) => JSON.stringify(v)) },
    { weight: 1, arbitrary: fc.constantFrom('{', '{"a":1,}', '\u0000', '[]', '"x"', '{"title":"\\u0000"}', '{"__proto__":{"admin":true}}') },
  );
}

/**
 * Routes fuzzed over REST: every route with a body or query schema except deletions and
 * transfers, which would remove the fixture the other routes need (their refusals are covered by
 * the route-table suite), and imports (below).
 */
const SKIP = (r: RestRoute) =>
  r.method === 'DELETE' ||
  /\/transfer$/.test(r.path) ||
  // REST imports wait up to 20 s for their job, and this suite runs no worker (a job would change
  // row counts between requests); the GraphQL fuzz covers the same inputs with a short wait.
  /\/content\/import$/.test(r.path);
const REST_ROUTES = buildRestRouter(schema).routes.filter((r) => (r.body || r.query) && !SKIP(r));

function expectContractError(status: number, text: string) {
  const body = JSON.parse(text);
  expect(body, text).toEqual({ error: { code: status, message: expect.any(String) } });
}

describe('REST fuzz', () => {
  it.each(REST_ROUTES.map((r) => [`${r.method} ${r.path}`, r] as const))('%s: no 5xx, refusals change nothing', async (_name, route) => {
    await fc.assert(
      fc.asyncProperty(queryArb(route), route.body ? bodyArb(route) : fc.constant(undefined), async (query, body) => {
        const qs = new URLSearchParams(query).toString();
        const before = await rowCounts();
        const res = await fetch(`${t.baseUrl}${fx.fill(route.path)}${qs ? `?${qs}` : ''}`, {
          method: route.method,
          headers: { authorization: `Bearer ${t.token}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
          body,
        });
        const text = await res.text();
        expect(res.status, `${route.method} ${qs} ${body?.slice(0, 300)} → ${text.slice(0, 300)}`).toBeLessThan(500);
        if (res.status >= 400) {
          expectContractError(res.status, text);
          expect(await rowCounts(), `refused (${res.status}) but changed rows: ${qs} ${body?.slice(0, 300)}`).toEqual(before);
        }
      }),
      { numRuns: REST_RUNS, seed: SEED, endOnFailure: true, includeErrorInReport: true },
    );
  }, 30_000);
});

// ------------------------------------------------------------------ GraphQL: from input types

function fromInputType(type: GraphQLInputType, depth = 0): fc.Arbitrary<unknown> {
  const good = validFromInputType(type, depth);
  return fc.oneof({ weight: 4, arbitrary: good }, { weight: 1, arbitrary: badValue(100_000) });
}

function validFromInputType(type: GraphQLInputType, depth: number): fc.Arbitrary<unknown> {
  if (isNonNullType(type)) return validFromInputType(type.ofType, depth);
  if (isListType(type)) return fc.array(fromInputType(type.ofType, depth + 1), { maxLength: 3 });
  if (depth > 5) return fc.constant(null);
  if (isEnumType(type)) return fc.constantFrom(...type.getValues().map((v) => v.name));
  if (isInputObjectType(type)) {
    const fields = Object.values(type.getFields());
    return fc
      .tuple(
        fc.record(Object.fromEntries(fields.map((f) => [f.name, fromInputType(f.type, depth + 1)])), {
          // Required fields are there most of the time.
          requiredKeys: [],
        }),
        fc.option(fc.constantFrom('extraFieldXyz', '__proto__'), { freq: 5 }),
      )
      .map(([obj, extra]) => (extra ? { ...obj, [extra]: 'x' } : obj));
  }
  if (isScalarType(type)) {
    switch (type.name) {
      case 'Int':
        // Small (an import's `waitSeconds` waits that long: no worker runs here), edges, overflow.
        return fc.oneof(fc.integer({ min: 0, max: 2 }), fc.constantFrom(-1, 1001, 2 ** 31 - 1, -(2 ** 31)));
      case 'Float':
        return fc.double({ noNaN: true, min: -1e6, max: 1e6 });
      case 'Boolean':
        return fc.boolean();
      case 'DateTime':
        return fc.constantFrom('2024-01-01T00:00:00Z', 'yesterday', '');
      case 'JSON':
      case 'JSONObject':
        return fc.jsonValue({ maxDepth: 3 });
      default:
        return anyString();
    }
  }
  return fc.constant(null);
}

/** Mutations fuzzed: all that take `input`, except the ones that would end the session or fixture. */
const MUTATIONS = Object.values(schema.getMutationType()!.getFields()).filter(
  (f) => f.args.some((a) => a.name === 'input') && !/^(delete|remove|revoke|transfer)/.test(f.name),
);

describe('GraphQL fuzz', () => {
  it('has mutations to fuzz', () => expect(MUTATIONS.length).toBeGreaterThan(40));

  it.each(MUTATIONS.map((m) => [m.name, m] as const))('%s: no INTERNAL_SERVER_ERROR, errors change nothing', async (name, field) => {
    const arg = field.args.find((a) => a.name === 'input')!;
    const payload = getNamedType(field.type);
    const selection = isScalarType(payload) || isEnumType(payload) ? '' : '{ __typename }';
    const document = `mutation($input: ${String(arg.type)}) { ${name}(input: $input) ${selection} }`;
    await fc.assert(
      fc.asyncProperty(fromInputType(arg.type), async (input) => {
        const before = await rowCounts();
        const r = await t.gql(document, { input });
        const codes = (r.errors ?? []).map((e) => e.extensions?.code);
        const shown = `${JSON.stringify(input)?.slice(0, 300)} → ${r.status} ${JSON.stringify(r.errors)?.slice(0, 300)}`;
        expect(r.status, shown).toBeLessThan(500);
        expect(codes, shown).not.toContain('INTERNAL_SERVER_ERROR');
        for (const c of codes) expect(c, shown).toBeTruthy();
        if (r.errors?.length) expect(await rowCounts(), `failed but changed rows: ${shown}`).toEqual(before);
      }),
      { numRuns: GRAPHQL_RUNS, seed: SEED, endOnFailure: true, includeErrorInReport: true },
    );
  }, 30_000);
});
