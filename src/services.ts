// Long-lived collaborators handed to every request: file storage, background jobs, fetch policy.
// Area modules reach them through `ctx.services` so tests can swap them.
import type { FileStorage } from './lib/storage.ts';
import type { Jobs } from './jobs.ts';

export type Services = {
  storage: FileStorage;
  jobs: Jobs;
};
