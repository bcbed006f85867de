// Long-lived collaborators handed to every request: file storage, background jobs, fetch policy.
// Area modules reach them through `ctx.services` so tests can swap them.
import type { FileStorage } from './lib/storage.ts';
import type { Jobs } from './jobs.ts';
import type { TokenCache } from './auth/token-cache.ts';
import type { EventFeed } from './events/feed.ts';

export type Services = {
  storage: FileStorage;
  jobs: Jobs;
  /** The token cache, when enabled: call `invalidate()` after committing a token or user change. */
  tokens?: Pick<TokenCache, 'invalidate'>;
  /** The live event feed (GraphQL subscriptions); absent in jobs and the CLI. */
  live?: EventFeed;
};
