// REST routes for this area (not yet built).
import type { RestRoute } from './router.ts';

export const routes: RestRoute[] = [];
