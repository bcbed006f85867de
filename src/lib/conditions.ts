// Adaptive content conditions: small JavaScript-like expressions over the visitor's claims, e.g.
//   visitor.claims.isBetaUser
//   visitor.claims.unsigned.plan == "pro" && !visitor.claims.isAdmin
//   visitor.claims.region in ["eu", "us"]
// Parsed with jsep into an AST that is checked against an allowlist and interpreted here: nothing
// is ever evaluated as JavaScript, and claims are read through own properties only.
import jsep from 'jsep';
import { LRUCache } from 'lru-cache';

// `x in [..]` is membership in an array (not JavaScript's property test). Same precedence as `<`.
// jsep's configuration is global; adding an operator does not change how other expressions parse.
jsep.addBinaryOp('in', 7);

export type ConditionAst = jsep.Expression;
export type ParseResult = { ok: true; ast: ConditionAst } | { ok: false; message: string };

export const MAX_CONDITION_LENGTH = 1024;
/** The parse cache's bound in estimated bytes (key text and AST). */
export const CONDITION_CACHE_BYTES = 4 * 1024 * 1024;

const COMPARISONS = new Set(['==', '!=', '===', '!==', '<', '<=', '>', '>=', 'in']);
const LOGICAL = new Set(['&&', '||']);
// Property names that reach into prototypes; never valid claim names.
const FORBIDDEN_KEYS = new Set(['__proto__', 'prototype', 'constructor']);

class ConditionError extends Error {}

type Literal = string | number | boolean | null;

/** `visitor.claims.a["b"][0]` → ['a', 'b', 0]; throws for anything else. */
function claimPath(node: ConditionAst): Array<string | number> {
  const path: Array<string | number> = [];
  let current = node;
  while (current.type === 'MemberExpression') {
    const member = current as jsep.MemberExpression;
    const property = member.property;
    let key: string | number;
    if (!member.computed && property.type === 'Identifier') key = (property as jsep.Identifier).name;
    else if (member.computed && property.type === 'Literal' && isKey((property as jsep.Literal).value)) key = (property as jsep.Literal).value as string | number;
    else throw new ConditionError('Computed property access must use a string or number literal');
    if (typeof key === 'string' && FORBIDDEN_KEYS.has(key)) throw new ConditionError(`Property "${key}" is not allowed`);
    path.unshift(key);
    current = member.object;
  }
  if (current.type === 'ThisExpression') throw new ConditionError('"this" is not allowed');
  if (current.type !== 'Identifier') throw new ConditionError('Property access is only allowed on "visitor"');
  const name = (current as jsep.Identifier).name;
  if (name !== 'visitor') throw new ConditionError(`Unknown identifier "${name}" (only "visitor" is available)`);
  if (path[0] !== 'claims') throw new ConditionError('Only "visitor.claims" can be read');
  return path.slice(1);
}

function isKey(value: unknown): value is string | number {
  return typeof value === 'string' || (typeof value === 'number' && Number.isInteger(value) && value >= 0);
}

function isLiteralValue(value: unknown): value is Literal {
  return value === null || typeof value === 'string' || typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value));
}

/** Throws a ConditionError naming the first construct that is not allowed. */
function validate(node: ConditionAst): void {
  switch (node.type) {
    case 'Literal':
      if (!isLiteralValue((node as jsep.Literal).value)) throw new ConditionError('Unsupported literal');
      return;
    case 'ArrayExpression':
      for (const element of (node as jsep.ArrayExpression).elements) {
        if (!element) throw new ConditionError('Array literals cannot have holes');
        validate(element);
      }
      return;
    case 'Identifier':
    case 'MemberExpression':
    case 'ThisExpression':
      claimPath(node);
      return;
    case 'UnaryExpression': {
      const { operator, argument } = node as jsep.UnaryExpression;
      if (operator === '!') return validate(argument);
      // Negative numbers only.
      if (operator === '-' && argument.type === 'Literal' && typeof (argument as jsep.Literal).value === 'number') return;
      throw new ConditionError(`Unsupported operator "${operator}"`);
    }
    case 'BinaryExpression':
    case 'LogicalExpression': {
      const { operator, left, right } = node as jsep.BinaryExpression;
      if (!COMPARISONS.has(operator) && !LOGICAL.has(operator)) throw new ConditionError(`Unsupported operator "${operator}"`);
      validate(left);
      validate(right);
      return;
    }
    case 'CallExpression':
      throw new ConditionError('Function calls are not allowed');
    case 'Compound':
    case 'SequenceExpression':
      throw new ConditionError('Only a single expression is allowed');
    case 'ConditionalExpression':
      throw new ConditionError('The conditional operator "?:" is not supported');
    default:
      throw new ConditionError(`Unsupported expression (${node.type})`);
  }
}

// Bounded by count and by bytes: the key is the text (2 bytes a character) and an AST costs at
// most about one node of ~80 bytes per two characters; an over-long text is never stored.
const cache = new LRUCache<string, ParseResult>({
  max: 1000,
  maxSize: CONDITION_CACHE_BYTES,
  sizeCalculation: (_result, expr) => 128 + expr.length * 42,
});

/** Parse and check a condition (results cached). */
export function parseCondition(expr: string): ParseResult {
  const cached = cache.get(expr);
  if (cached) return cached;
  const result = parseUncached(expr);
  if (typeof expr === 'string' && expr.length <= MAX_CONDITION_LENGTH) cache.set(expr, result);
  return result;
}

/** The parse cache's counted bytes (tests, metrics). */
export function conditionCacheBytes(): number {
  return cache.calculatedSize;
}

function parseUncached(expr: string): ParseResult {
  if (typeof expr !== 'string' || expr.trim() === '') return { ok: false, message: 'The condition is empty' };
  if (expr.length > MAX_CONDITION_LENGTH) return { ok: false, message: `The condition is longer than ${MAX_CONDITION_LENGTH} characters` };
  let ast: ConditionAst;
  try {
    ast = jsep(expr);
  } catch (error) {
    return { ok: false, message: error instanceof Error ? error.message : 'Invalid expression' };
  }
  try {
    validate(ast);
  } catch (error) {
    if (error instanceof ConditionError) return { ok: false, message: error.message };
    throw error;
  }
  // Cached ASTs are shared between callers: freeze them so nobody can alter another's condition.
  return { ok: true, ast: deepFreeze(ast) };
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}

/** Number of cached parse results (for tests and metrics). */
export function conditionCacheSize(): number {
  return cache.size;
}

// ---- evaluation

function readClaim(claims: unknown, path: Array<string | number>): unknown {
  let value: unknown = claims;
  for (const key of path) {
    if (value === null || typeof value !== 'object') return undefined;
    // Own properties only: inherited members (toString, constructor…) read as missing.
    if (!Object.prototype.hasOwnProperty.call(value, key)) return undefined;
    value = (value as Record<string | number, unknown>)[key];
  }
  return value;
}

type Primitive = string | number | boolean | null | undefined;
const isPrimitive = (v: unknown): v is Primitive =>
  v === null || v === undefined || typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';

function looseEquals(a: unknown, b: unknown): boolean {
  // JavaScript `==` on primitives; objects only equal themselves, so no user toString/valueOf runs.
  if (isPrimitive(a) && isPrimitive(b)) return a == b;
  return a === b;
}

function compare(operator: string, a: unknown, b: unknown): boolean {
  // Ordering only between two numbers or two strings; anything else is false.
  if (!((typeof a === 'number' && typeof b === 'number') || (typeof a === 'string' && typeof b === 'string'))) return false;
  switch (operator) {
    case '<':
      return a < b;
    case '<=':
      return a <= b;
    case '>':
      return a > b;
    default:
      return a >= b;
  }
}

function evaluate(node: ConditionAst, claims: Record<string, unknown>): unknown {
  switch (node.type) {
    case 'Literal': {
      const value = (node as jsep.Literal).value;
      if (!isLiteralValue(value)) throw new ConditionError('Unsupported literal');
      return value;
    }
    case 'ArrayExpression':
      return (node as jsep.ArrayExpression).elements.map((e) => {
        if (!e) throw new ConditionError('Array literals cannot have holes');
        return evaluate(e, claims);
      });
    case 'Identifier':
    case 'MemberExpression':
    case 'ThisExpression':
      return readClaim(claims, claimPath(node));
    case 'UnaryExpression': {
      const { operator, argument } = node as jsep.UnaryExpression;
      if (operator === '!') return !evaluate(argument, claims);
      if (operator === '-' && argument.type === 'Literal' && typeof (argument as jsep.Literal).value === 'number') {
        return -((argument as jsep.Literal).value as number);
      }
      throw new ConditionError(`Unsupported operator "${operator}"`);
    }
    case 'BinaryExpression':
    case 'LogicalExpression': {
      const { operator, left, right } = node as jsep.BinaryExpression;
      if (operator === '&&') return evaluate(left, claims) && evaluate(right, claims);
      if (operator === '||') return evaluate(left, claims) || evaluate(right, claims);
      const a = evaluate(left, claims);
      const b = evaluate(right, claims);
      switch (operator) {
        case '===':
          return a === b;
        case '!==':
          return a !== b;
        case '==':
          return looseEquals(a, b);
        case '!=':
          return !looseEquals(a, b);
        case 'in':
          return Array.isArray(b) && b.some((item) => item === a);
        case '<':
        case '<=':
        case '>':
        case '>=':
          return compare(operator, a, b);
      }
      throw new ConditionError(`Unsupported operator "${operator}"`);
    }
    default:
      throw new ConditionError(`Unsupported expression (${node.type})`);
  }
}

/**
 * Evaluate a condition against the visitor's claims (`visitor.claims.x` reads `claims.x`).
 * An invalid condition is false: the content it guards stays hidden. ASTs passed in directly are
 * interpreted with the same allowlist, so a stored, unchecked AST cannot do more than a parsed one.
 */
export function evaluateCondition(condition: string | ConditionAst, claims: Record<string, unknown>): boolean {
  let ast: ConditionAst;
  if (typeof condition === 'string') {
    const parsed = parseCondition(condition);
    if (!parsed.ok) return false;
    ast = parsed.ast;
  } else {
    ast = condition;
  }
  try {
    return Boolean(evaluate(ast, claims ?? {}));
  } catch (error) {
    if (error instanceof ConditionError) return false;
    throw error;
  }
}

/**
 * Whether an item with `condition` shows to a reader with `claims`. Null/undefined claims: the
 * editor's view (a member without a preview), everything shows. `{}`: a reader without claims, for
 * whom a missing claim is false, so conditioned content is hidden (src/auth/audience.ts). An
 * unparseable stored condition hides the item.
 */
export function isVisibleTo(condition: string | null | undefined, claims: Record<string, unknown> | null | undefined): boolean {
  if (!claims || !condition) return true;
  return evaluateCondition(condition, claims);
}

/** Whether a site space shows to a reader: its own condition and its section's (none at the root level) both pass. */
export function siteSpaceVisibleTo(
  siteSpace: { condition: string | null },
  section: { condition: string | null } | null | undefined,
  claims: Record<string, unknown> | null | undefined,
): boolean {
  return isVisibleTo(siteSpace.condition, claims) && isVisibleTo(section?.condition, claims);
}
