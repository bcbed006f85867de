import { createRequire } from 'node:module';
import { defineConfig, type UserWorkspaceConfig } from 'vitest/config';

const require = createRequire(import.meta.url);

// Two projects, one run: `fast` is the inner loop (`npm run test:fast`), `slow` holds the files
// that start processes, kill workers, wait for background jobs, generate hundreds of cases or
// run for more than ~20 s (`npm run test:slow`). `npm test` runs both. A new file is fast unless
// listed here (docs/decisions.md, "Tests").
export const SLOW_FILES = [
  'test/admin-cli.test.ts',
  'test/cluster.test.ts',
  'test/concurrency.test.ts',
  'test/db-faults.test.ts',
  'test/explorer.test.ts',
  'test/fuzz.test.ts',
  'test/hostile-*.test.ts',
  'test/job-recovery.test.ts',
  'test/lifecycle.test.ts',
  'test/openapi-specs.test.ts',
  'test/pooler.test.ts',
  'test/rate-limits-redis.test.ts',

  'test/replicas.test.ts',
  'test/replicas-metrics.test.ts',
  'test/replicas-ws.test.ts',
  'test/route-table.test.ts',
  'test/webhooks.test.ts',
  'test/worker-process.test.ts',
];

// What both projects share. The projects do not extend this file (`extends: true` would give each
// of them the global setup again, i.e. one PostgreSQL per project): the global setup runs once,
// for the root, and its `provide`d URL reaches both projects.
const shared = {
  resolve: {
    // graphql ships CJS (index.js) and ESM (index.mjs); Node loads the CJS one for our
    // dependencies, so make Vite load the same file or `instanceof` checks fail across copies.
    alias: [{ find: /^graphql$/, replacement: require.resolve('graphql') }],
  },
  test: {
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
} satisfies UserWorkspaceConfig;

export default defineConfig({
  resolve: shared.resolve,
  test: {
    globalSetup: ['test/global-setup.ts'],
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    projects: [
      { ...shared, test: { ...shared.test, name: 'fast', include: ['test/**/*.test.ts'], exclude: SLOW_FILES } },
      { ...shared, test: { ...shared.test, name: 'slow', include: SLOW_FILES } },
    ],
  },
});
