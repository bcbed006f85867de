// The house's import rules (.dependency-cruiser.cjs): no import circles, GraphQL never imports the
// REST shim, access and lib/ stand below the domain, the domain knows no API layer. Violations
// still waiting for their move are listed below; the list may only shrink: a listed
// violation that no longer occurs fails the test too, so it is removed when its move lands.
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '..');

/** `rule: from → to` of violations not yet moved away. */
const PENDING: string[] = [
];

type Violation = { rule: { name: string }; from: string; to: string };

describe('architecture', () => {
  it('imports follow the house rules', () => {
    const out = execFileSync(path.join(ROOT, 'node_modules/.bin/depcruise'), ['src', '--config', '.dependency-cruiser.cjs', '--output-type', 'json'], {
      cwd: ROOT,
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    });
    const violations = (JSON.parse(out).summary.violations as Violation[]).map((v) => `${v.rule.name}: ${v.from} → ${v.to}`);
    const unexpected = violations.filter((v) => !PENDING.includes(v));
    expect(unexpected, 'new violations of the import rules').toEqual([]);
    const resolved = PENDING.filter((p) => !violations.includes(p));
    expect(resolved, 'violations that no longer occur: remove them from PENDING').toEqual([]);
  }, 60_000);
});
