// The markdown pool's worker when the server runs from its TypeScript sources (tsx, vitest): a
// worker thread starts without the parent's loader, so register tsx here, then load the worker.
// The bundle `npm start` runs uses the compiled .build/server/markdown-worker.mjs instead.
import { register } from 'tsx/esm/api';

register();
const worker = await import('./markdown-worker.ts');
export default worker.default;
