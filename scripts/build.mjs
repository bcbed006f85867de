// Compile the server and the admin CLI to ES modules run by plain Node (`npm start`, `npm run
// admin`): no tsx loader thread, transform cache or source maps (about 50–70 MB less resident
// memory for the server, see docs/performance.md; the CLI starts in a few hundred ms instead of
// seconds). Dependencies stay external (node_modules); only our code and the generated Prisma
// client are bundled.
//
//   node scripts/build.mjs                    all bundles (src/main.ts → .build/server/main.mjs,
//                                             src/worker.ts → .build/server/worker.mjs,
//                                             src/cli/admin.ts → .build/cli/admin.mjs)
//   node scripts/build.mjs --if-stale         the same, skipped when no file under src/ or
//                                             prisma/ is newer than the bundles (`npm run admin`)
//   node scripts/build.mjs <entry> <outfile>  one bundle (the benchmark's server)
//
// Each output sits two levels below the project root, like src/db/, so paths the code resolves
// from import.meta.url (prisma/migrations) hold in the bundles too. Worker-thread entries
// (WORKERS) are bundled beside every output, where the code looks for them
// (src/lib/worker-thread.ts: `<name>.mjs` beside the bundle; src/lib/markdown-pool.ts starts its
// parser threads from markdown-worker.mjs).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const ifStale = args.includes('--if-stale');
const positional = args.filter((a) => !a.startsWith('--'));

const targets = positional.length
  ? [[positional[0], positional[1] ?? '.build/server/main.mjs']]
  : [
      ['src/main.ts', '.build/server/main.mjs'],
      ['src/worker.ts', '.build/server/worker.mjs'],
      ['src/cli/admin.ts', '.build/cli/admin.mjs'],
    ];

/** Worker-thread entries: source → file name beside each bundle. */
const WORKERS = [
  ['src/lib/import-worker.ts', 'import-worker.mjs'],
  ['src/lib/openapi-worker.ts', 'openapi-worker.mjs'],
  ['src/lib/pdf-worker.ts', 'pdf-worker.mjs'],
  ['src/lib/markdown-worker.ts', 'markdown-worker.mjs'],
];

/** Newest modification time of any file under `dir` (0 when absent). */
function newest(dir) {
  let max = 0;
  let entries;
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return 0;
  }
  for (const e of entries) {
    const p = path.join(dir, e.name);
    max = Math.max(max, e.isDirectory() ? newest(p) : fs.statSync(p).mtimeMs);
  }
  return max;
}

const mtime = (file) => {
  try {
    return fs.statSync(file).mtimeMs;
  } catch {
    return 0;
  }
};

let todo = targets.map(([entry, out]) => [path.resolve(root, entry), path.resolve(root, out)]);
if (ifStale) {
  const sources = Math.max(newest(path.join(root, 'src')), newest(path.join(root, 'prisma')), mtime(fileURLToPath(import.meta.url)));
  todo = todo.filter(([, out]) => mtime(out) < sources);
}

// esbuild is loaded only when there is something to build: the stale check alone stays cheap.
const { build } = todo.length ? await import('esbuild') : { build: undefined };
const withWorkers = todo.flatMap(([entry, outfile]) => [
  [entry, outfile],
  ...WORKERS.map(([w, name]) => [path.resolve(root, w), path.join(path.dirname(outfile), name)]),
]);
await Promise.all(
  withWorkers.map(([entry, outfile]) =>
    build({
      entryPoints: [entry],
      outfile,
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      packages: 'external',
      sourcemap: 'linked',
      logLevel: 'warning',
    }),
  ),
);
