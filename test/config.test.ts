// Configuration (src/config.ts): settings read from the environment, validated at start-up.
import { describe, expect, it } from 'vitest';
import { loadConfig, treeCacheBytes } from '../src/config.ts';

const MIB = 1024 * 1024;

describe('TREE_CACHE_MB', () => {
  it('sizes the revision-tree node cache: 64 MiB unless set', () => {
    expect(treeCacheBytes({})).toBe(64 * MIB);
    expect(treeCacheBytes({ TREE_CACHE_MB: '8' })).toBe(8 * MIB);
    expect(treeCacheBytes({ TREE_CACHE_MB: '1.5' })).toBe(1.5 * MIB);
  });

  it('must be a number from 1 to 4096: anything else fails start-up naming it', () => {
    for (const bad of ['0', '-1', '4097', 'lots']) {
      expect(() => treeCacheBytes({ TREE_CACHE_MB: bad }), bad).toThrow(/Invalid configuration: TREE_CACHE_MB/);
      expect(() => loadConfig({ TREE_CACHE_MB: bad }), bad).toThrow(/Invalid configuration: TREE_CACHE_MB/);
    }
  });
});
