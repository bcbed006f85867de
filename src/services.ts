// Long-lived collaborators handed to every request: file storage, background jobs, fetch policy.
// Area modules reach them through `ctx.services` so tests can swap them.
import { LocalDiskStorage, PostgresFileStorage, type FileStorage } from './lib/storage.ts';
import { S3FileStorage } from './lib/storage-s3.ts';
import type { Config } from './config.ts';
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

/** A blob write or read may take longer than an API statement (a PDF of tens of MB), never unbounded. */
const BLOB_STATEMENT_TIMEOUT_MS = 60_000;

/**
 * The file storage FILE_STORAGE names: the database at `databaseUrl` (`pooled`: a
 * transaction-mode pooler, src/db/client.ts), the local directory FILES_DIR, or an S3 bucket.
 */
export function createFileStorage(config: Config, databaseUrl: string, opts: { pooled?: boolean } = {}): FileStorage {
  if (config.fileStorage === 'disk') return new LocalDiskStorage(config.filesDir);
  if (config.fileStorage === 's3') return new S3FileStorage(config.s3!);
  return new PostgresFileStorage(databaseUrl, {
    pooled: opts.pooled,
    statementTimeoutMs: config.dbStatementTimeoutMs === 0 ? 0 : Math.max(config.dbStatementTimeoutMs, BLOB_STATEMENT_TIMEOUT_MS),
    connectTimeoutMs: config.dbConnectTimeoutMs,
  });
}
