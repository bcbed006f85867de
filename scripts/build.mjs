// Compile the server to one ES module for `npm start`: plain Node runs it without tsx's loader
// thread, transform cache and source maps (about 50–70 MB less resident memory; see
// docs/performance.md). Dependencies stay external (node_modules); only our code and the
// generated Prisma client are bundled.
//
//   node scripts/build.mjs [entry] [outfile]   (default: src/main.ts → .build/server/main.mjs)
//
// The output sits two levels below the project root, like src/db/, so paths the code resolves
// from import.meta.url (prisma/migrations) hold in the bundle too.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const entry = path.resolve(root, process.argv[2] ?? 'src/main.ts');
const outfile = path.resolve(root, process.argv[3] ?? '.build/server/main.mjs');

await build({
  entryPoints: [entry],
  outfile,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  packages: 'external',
  sourcemap: 'linked',
  logLevel: 'warning',
});
