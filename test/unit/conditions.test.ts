import jsep from 'jsep';
import { describe, expect, it } from 'vitest';
import { CONDITION_CACHE_BYTES, conditionCacheBytes, conditionCacheSize, evaluateCondition, parseCondition, type ConditionAst } from '../../src/lib/conditions.ts';

const claims = {
  isBetaUser: true,
  isAdmin: false,
  region: 'eu',
  age: 42,
  name: 'Ann',
  zero: 0,
  nothing: null,
  roles: ['editor', 'viewer'],
  unsigned: { plan: 'pro', seats: 5, nested: { deep: 'yes' } },
  'dashed-key': 'ok',
};

const rejectMessage = (expr: string) => {
  const r = parseCondition(expr);
  if (r.ok) throw new Error(`expected ${expr} to be rejected`);
  return r.message;
};

describe('parseCondition', () => {
  it('accepts the supported language', () => {
    for (const expr of [
      'visitor.claims.isBetaUser',
      'visitor.claims.unsigned.plan == "pro" && !visitor.claims.isAdmin',
      'visitor.claims.region in ["eu","us"]',
      'visitor.claims["dashed-key"] === \'ok\'',
      'visitor.claims.roles[0] != null',
      '(visitor.claims.age >= 18 || visitor.claims.isAdmin) && visitor.claims.age < -1 == false',
      'visitor.claims?.unsigned?.plan',
      'true',
    ]) {
      expect(parseCondition(expr), expr).toMatchObject({ ok: true });
    }
  });

  it('rejects empty and overlong conditions', () => {
    expect(rejectMessage('')).toMatch(/empty/);
    expect(rejectMessage('   ')).toMatch(/empty/);
    const long = `visitor.claims.a == "${'x'.repeat(1024)}"`;
    expect(rejectMessage(long)).toMatch(/1024/);
  });

  it('rejects syntax errors', () => {
    expect(rejectMessage('visitor.claims.a ==')).toBeTruthy();
    expect(rejectMessage('visitor.claims.a = 1')).toBeTruthy(); // assignment
    expect(rejectMessage('`template`')).toBeTruthy();
  });

  it('rejects unknown identifiers and anything but visitor.claims', () => {
    expect(rejectMessage('process.exit')).toMatch(/Unknown identifier "process"/);
    expect(rejectMessage('globalThis')).toMatch(/Unknown identifier/);
    expect(rejectMessage('visitor')).toMatch(/visitor\.claims/);
    expect(rejectMessage('visitor.cookies.x')).toMatch(/visitor\.claims/);
    expect(rejectMessage('this.visitor')).toMatch(/this/);
    expect(rejectMessage('this')).toMatch(/this/);
    expect(rejectMessage('"abc".length')).toMatch(/only allowed on "visitor"/);
    expect(rejectMessage('["a"][0]')).toMatch(/only allowed on "visitor"/);
  });

  it('rejects calls, compound expressions and unsupported operators', () => {
    expect(rejectMessage('visitor.claims.name.toUpperCase()')).toMatch(/calls/);
    expect(rejectMessage('alert(1)')).toMatch(/calls/);
    expect(rejectMessage('visitor.claims.a, visitor.claims.b')).toMatch(/single expression/);
    expect(rejectMessage('visitor.claims.a ? 1 : 2')).toMatch(/conditional/);
    expect(rejectMessage('visitor.claims.age + 1 > 2')).toMatch(/operator "\+"/);
    expect(rejectMessage('visitor.claims.a | 1')).toMatch(/operator "\|"/);
    expect(rejectMessage('visitor.claims.a ?? 1')).toMatch(/operator "\?\?"/);
    expect(rejectMessage('~visitor.claims.a')).toMatch(/operator "~"/);
    expect(rejectMessage('-visitor.claims.age < 0')).toMatch(/operator "-"/);
    expect(rejectMessage('visitor.claims.a in [1,,2]')).toMatch(/holes/);
  });

  it('rejects computed access with non-literal keys', () => {
    expect(rejectMessage('visitor.claims[visitor.claims.key]')).toMatch(/literal/);
    expect(rejectMessage('visitor.claims["a" == "a"]')).toMatch(/literal/);
    expect(rejectMessage('visitor.claims[-1]')).toMatch(/literal/);
    expect(rejectMessage('visitor.claims[1.5]')).toMatch(/literal/);
  });

  it('rejects prototype access', () => {
    expect(rejectMessage('visitor.constructor')).toBeTruthy();
    expect(rejectMessage('visitor.claims.__proto__')).toMatch(/__proto__/);
    expect(rejectMessage('visitor.claims["__proto__"].polluted')).toMatch(/__proto__/);
    expect(rejectMessage('visitor.claims.constructor')).toMatch(/constructor/);
    expect(rejectMessage('visitor.claims.a.constructor.prototype')).toMatch(/constructor|prototype/);
    expect(rejectMessage('visitor["constructor"]')).toBeTruthy();
  });

  it('caches parse results in a bounded LRU', () => {
    const first = parseCondition('visitor.claims.cached == 1');
    expect(parseCondition('visitor.claims.cached == 1')).toBe(first);
    for (let i = 0; i < 1200; i++) parseCondition(`visitor.claims.n == ${i}`);
    expect(conditionCacheSize()).toBeLessThanOrEqual(1000);
    // Evicted, so parsed again into a new object.
    expect(parseCondition('visitor.claims.cached == 1')).not.toBe(first);

    // A hit moves the entry to the most recent end.
    const kept = parseCondition('visitor.claims.kept');
    for (let i = 0; i < 999; i++) {
      if (i % 100 === 0) parseCondition('visitor.claims.kept');
      parseCondition(`visitor.claims.m == ${i}`);
    }
    expect(parseCondition('visitor.claims.kept')).toBe(kept);
  });

  it('bounds the cache by bytes: long conditions fill it no further, over-long ones are never kept', () => {
    // 1,000 distinct conditions of the longest allowed length (1,024 characters each).
    for (let i = 0; i < 1000; i++) parseCondition(`visitor.claims.x${i} == "${'y'.repeat(1024 - 22 - String(i).length)}"`);
    expect(conditionCacheBytes()).toBeLessThanOrEqual(CONDITION_CACHE_BYTES);
    expect(conditionCacheBytes()).toBeGreaterThan(CONDITION_CACHE_BYTES / 2);
    // A 10 MB text is refused and not stored (its key alone would weigh 20 MB).
    const before = conditionCacheBytes();
    for (let i = 0; i < 20; i++) expect(parseCondition(`visitor.claims.a == "${String(i).repeat(5_000_000)}"`).ok).toBe(false);
    expect(conditionCacheBytes()).toBeLessThanOrEqual(before);
  });

  it('returns frozen ASTs so cached results cannot be tampered with', () => {
    const r = parseCondition('visitor.claims.isAdmin');
    if (!r.ok) throw new Error('unexpected');
    expect(Object.isFrozen(r.ast)).toBe(true);
    expect(() => {
      (r.ast as { type: string }).type = 'Literal';
    }).toThrow();
  });
});

describe('evaluateCondition', () => {
  const ev = (expr: string, c: Record<string, unknown> = claims) => evaluateCondition(expr, c);

  it('reads claims', () => {
    expect(ev('visitor.claims.isBetaUser')).toBe(true);
    expect(ev('visitor.claims.isAdmin')).toBe(false);
    expect(ev('visitor.claims.name')).toBe(true); // coerced to boolean
    expect(ev('visitor.claims.zero')).toBe(false);
    expect(ev('visitor.claims.unsigned.nested.deep == "yes"')).toBe(true);
    expect(ev('visitor.claims["dashed-key"] == "ok"')).toBe(true);
    expect(ev('visitor.claims.roles[1] == "viewer"')).toBe(true);
    expect(ev('visitor.claims.unsigned["seats"] > 4')).toBe(true);
    expect(ev('visitor.claims.roles.length == 2')).toBe(true); // an array's own length is data
  });

  it('treats missing claims as undefined, at any depth', () => {
    expect(ev('visitor.claims.missing')).toBe(false);
    expect(ev('visitor.claims.missing == undefined')).toBe(false); // `undefined` is not an identifier
    expect(ev('visitor.claims.missing == null')).toBe(true);
    expect(ev('visitor.claims.missing === null')).toBe(false);
    expect(ev('visitor.claims.missing.deeper.still')).toBe(false);
    expect(ev('!visitor.claims.missing.deeper')).toBe(true);
    expect(ev('visitor.claims.name.length')).toBe(false); // no properties of primitives
    expect(ev('visitor.claims.isBetaUser', {})).toBe(false);
  });

  it('supports equality operators', () => {
    expect(ev('visitor.claims.unsigned.plan == "pro" && !visitor.claims.isAdmin')).toBe(true);
    expect(ev('visitor.claims.unsigned.plan == "pro" && !visitor.claims.isAdmin', { ...claims, isAdmin: true })).toBe(false);
    expect(ev('visitor.claims.age == "42"')).toBe(true);
    expect(ev('visitor.claims.age === "42"')).toBe(false);
    expect(ev('visitor.claims.age !== 42')).toBe(false);
    expect(ev('visitor.claims.region != "us"')).toBe(true);
    expect(ev('visitor.claims.nothing === null')).toBe(true);
    expect(ev('visitor.claims.unsigned == "[object Object]"')).toBe(false); // objects never coerce
  });

  it('supports ordering between numbers or between strings only', () => {
    expect(ev('visitor.claims.age > 40 && visitor.claims.age <= 42')).toBe(true);
    expect(ev('visitor.claims.age < 42 || visitor.claims.age >= 43')).toBe(false);
    expect(ev('visitor.claims.name < "B"')).toBe(true);
    expect(ev('visitor.claims.age > -1')).toBe(true);
    expect(ev('visitor.claims.missing < 1')).toBe(false);
    expect(ev('visitor.claims.nothing < 1')).toBe(false);
    expect(ev('visitor.claims.age > "41"')).toBe(false);
  });

  it('supports in with array literals', () => {
    expect(ev('visitor.claims.region in ["eu","us"]')).toBe(true);
    expect(ev('visitor.claims.region in ["us", "apac"]')).toBe(false);
    expect(ev('visitor.claims.age in [41, 42]')).toBe(true);
    expect(ev('visitor.claims.age in ["42"]')).toBe(false); // strict membership
    expect(ev('"editor" in visitor.claims.roles')).toBe(true); // a claim holding an array
    expect(ev('"plan" in visitor.claims.unsigned')).toBe(false); // never JavaScript's property test
    expect(ev('"length" in visitor.claims.name')).toBe(false);
    expect(ev('visitor.claims.missing in [null]')).toBe(false);
    expect(ev('!(visitor.claims.region in ["us"])')).toBe(true);
  });

  it('supports literals and boolean logic', () => {
    expect(ev('true')).toBe(true);
    expect(ev('false || null')).toBe(false);
    expect(ev('"x"')).toBe(true);
    expect(ev('0')).toBe(false);
    expect(ev('[]')).toBe(true);
    expect(ev('!!visitor.claims.isBetaUser')).toBe(true);
    expect(ev('visitor.claims.isAdmin || visitor.claims.region == "eu" && visitor.claims.age > 100')).toBe(false);
  });

  it('is false for invalid conditions', () => {
    expect(ev('')).toBe(false);
    expect(ev('visitor.claims.a ==')).toBe(false);
    expect(ev('!alert(1)')).toBe(false);
    expect(ev('!visitor.claims.__proto__')).toBe(false);
  });

  it('never exposes prototypes or pollutes them', () => {
    const polluted = JSON.parse('{"__proto__": {"isAdmin": true}, "constructor": {"name": "x"}}') as Record<string, unknown>;
    expect(ev('visitor.claims.isAdmin', polluted)).toBe(false);
    expect(ev('visitor.claims.__proto__.isAdmin', polluted)).toBe(false);
    expect(ev('visitor.claims.constructor.name == "x"', polluted)).toBe(false);
    expect(ev('visitor.constructor')).toBe(false);
    expect(ev('visitor.claims.toString')).toBe(false); // inherited members read as missing
    expect(ev('visitor.claims.hasOwnProperty')).toBe(false);
    expect(({} as Record<string, unknown>).isAdmin).toBeUndefined();
  });

  it('interprets ASTs passed directly with the same allowlist', () => {
    const ok = parseCondition('visitor.claims.region in ["eu"]');
    if (!ok.ok) throw new Error('unexpected');
    expect(evaluateCondition(ok.ast, claims)).toBe(true);
    // Unchecked ASTs (e.g. from storage) cannot do more than parsed ones.
    const call = jsep('visitor.claims.name.toString()') as ConditionAst;
    expect(evaluateCondition(call, claims)).toBe(false);
    const proto = jsep('visitor.claims.__proto__') as ConditionAst;
    expect(evaluateCondition(proto, claims)).toBe(false);
    const forged = { type: 'Literal', value: { evil: true }, raw: '' } as unknown as ConditionAst;
    expect(evaluateCondition(forged, claims)).toBe(false);
    const global = { type: 'Identifier', name: 'process' } as unknown as ConditionAst;
    expect(evaluateCondition(global, claims)).toBe(false);
  });
});
