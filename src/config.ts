// Environment, validated once at start-up.
import crypto from 'node:crypto';
import { z } from 'zod';

const EnvSchema = z.object({
  DATABASE_URL: z.string().url().optional(),
  /** A session connection to the same database (LISTEN, migrations, the job worker); default DATABASE_URL. */
  DATABASE_DIRECT_URL: z.string().url().optional(),
  /** How often the live feed reads the event log while this process has subscriptions, ms. */
  LIVE_POLL_MS: z.coerce.number().int().min(10).max(60_000).default(100),
  PORT: z.coerce.number().int().min(0).max(65535).default(4000),
  HOST: z.string().default('0.0.0.0'),
  /** Public base URL used in `urls` fields and SAML service values. */
  PUBLIC_URL: z.string().url().optional(),
  /** Web app base URL used in `urls.app`. */
  APP_URL: z.string().url().optional(),
  DATA_DIR: z.string().default('./.data'),
  FILES_DIR: z.string().optional(),
  DOCGRAPH_ADMIN_TOKEN: z.string().min(16).optional(),
  DOCGRAPH_ADMIN_EMAIL: z.string().email().default('admin@docgraph.local'),
  /** Signs visitor claims (ping). Set it when running several instances. */
  DOCGRAPH_CLAIMS_SECRET: z.string().min(16).optional(),
  /** Allow server-side fetches (imports, OpenAPI sources) of private/loopback addresses. */
  ALLOW_PRIVATE_FETCH: z.enum(['true', 'false', '1', '0']).default('false').transform((v) => v === 'true' || v === '1'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  EMBEDDED_PG_PORT: z.coerce.number().int().default(5439),
  /** Run background jobs in this process (default true). */
  RUN_WORKER: z.enum(['true', 'false']).default('true').transform((v) => v === 'true'),
  /** Largest request body accepted (413 above it). */
  MAX_BODY_BYTES: z.coerce.number().int().min(1024).default(4 * 1024 * 1024),
  /** Bytes of request bodies held in memory at once, across requests (503 above it). */
  BODY_BUDGET_BYTES: z.coerce.number().int().min(1024).default(8 * 1024 * 1024),
  /** One client's (IP's) share of BODY_BUDGET_BYTES; at least MAX_BODY_BYTES (default: MAX_BODY_BYTES). */
  BODY_CLIENT_BUDGET_BYTES: z.coerce.number().int().min(1024).optional(),
  /** A request body must be received within this many ms (408 and the connection closed beyond). */
  BODY_TIMEOUT_MS: z.coerce.number().int().min(100).default(30_000),
  /** After the first BODY_RATE_WINDOW_MS, each window of that length must bring this many bytes per second (0 = no rate check). */
  BODY_MIN_BYTES_PER_SECOND: z.coerce.number().int().min(0).default(16 * 1024),
  BODY_RATE_WINDOW_MS: z.coerce.number().int().min(100).default(5_000),
  /** API tokens a user may create per hour (createApiToken; RATE_LIMITED beyond). */
  API_TOKENS_PER_HOUR: z.coerce.number().int().min(1).default(20),
  MAX_JSON_DEPTH: z.coerce.number().int().min(8).default(64),
  GRAPHQL_MAX_TOKENS: z.coerce.number().int().min(100).default(10_000),
  GRAPHQL_MAX_ALIASES: z.coerce.number().int().min(1).default(100),
  GRAPHQL_MAX_DIRECTIVES: z.coerce.number().int().min(1).default(50),
  /** Cache token → viewer per process (invalidated across processes through LISTEN/NOTIFY). */
  TOKEN_CACHE: z.enum(['true', 'false']).default('true').transform((v) => v === 'true'),
  /** Memory for stored published-structure responses per process, MiB (0 = no cache). */
  STRUCTURE_CACHE_MB: z.coerce.number().min(0).max(4096).default(64),
  /** Shared caches (CDN) keep an anonymous GET of a public published site this long (`s-maxage`), seconds. */
  PUBLISHED_S_MAXAGE_SECONDS: z.coerce.number().int().min(0).max(86_400).default(60),
  /** … and may serve it stale while they revalidate for this long (`stale-while-revalidate`), seconds. */
  PUBLISHED_STALE_WHILE_REVALIDATE_SECONDS: z.coerce.number().int().min(0).max(7 * 86_400).default(300),
  /** Memory for page trees and revision rows shared across requests per process, MiB (0 = no cache). */
  CONTENT_CACHE_MB: z.coerce.number().min(0).max(4096).default(64),
  /** Memory for revisions' page-tree nodes per process, MiB (read once, when the tree module loads: `treeCacheBytes`). */
  TREE_CACHE_MB: z.coerce.number().min(1).max(4096).default(64),

  /** Memory for ranked search candidates per process, keyed by query and searched revisions, MiB (0 = no cache). */
  SEARCH_CACHE_MB: z.coerce.number().min(0).max(4096).default(32),
  /** Page bodies one answer may carry when it lists a whole revision's pages with their content, MiB. */
  PAGE_LIST_BODIES_MB: z.coerce.number().min(0.001).max(1024).default(32),
  /** Server-side statement timeout for API requests, ms (0 = none); the client waits 1 s more. */
  DB_STATEMENT_TIMEOUT_MS: z.coerce.number().int().min(0).default(3000),
  /** Opening a database connection, and waiting for a free pooled one, ms (0 = no limit). */
  DB_CONNECT_TIMEOUT_MS: z.coerce.number().int().min(0).default(3000),
  /** Statement timeout for background jobs (imports, purge, …), which have their own pool, ms. */
  DB_JOB_STATEMENT_TIMEOUT_MS: z.coerce.number().int().min(0).default(600_000),
  /** A job locked by a worker process not heard from for this long is handed to another worker. */
  JOB_LOCK_TIMEOUT_SECONDS: z.coerce.number().int().min(2).max(4 * 3600).default(60),
  /** How often each worker process records that it is alive (and sweeps for abandoned jobs). */
  JOB_HEARTBEAT_SECONDS: z.coerce.number().int().min(1).max(3600).default(10),
  /** Prometheus metrics at /metrics (README, "Operations"). */
  METRICS: z.enum(['on', 'off']).default('on'),
  /** When set, /metrics requires `Authorization: Bearer <METRICS_TOKEN>`. */
  METRICS_TOKEN: z.string().min(16).optional(),
  /** Cross-origin access (src/http/cors.ts): unset = none, `*` = any origin without credentials, or a comma-separated list of origins. */
  CORS_ORIGINS: z.string().optional(),
  /** Let the listed origins send credentials (cookies, HTTP auth); never with `*`. */
  CORS_CREDENTIALS: z.enum(['true', 'false']).default('false').transform((v) => v === 'true'),
  /** Trusted documents (src/http/trusted-documents.ts): `off`, `allow` (hashes and text), `only` (hashes only). */
  TRUSTED_DOCUMENTS: z.enum(['off', 'allow', 'only']).default('allow'),
  /** A JSON file mapping document id (e.g. its sha256) → GraphQL document text, added to the REST shim's documents. */
  TRUSTED_DOCUMENTS_FILE: z.string().optional(),
  /** Rate limits on /v1 and /graphql (src/http/rate-limit.ts): on or off. */
  RATE_LIMIT: z.enum(['on', 'off', 'true', 'false']).default('on').transform((v) => v === 'on' || v === 'true'),
  /** Points per window for each API token (a REST request costs 1, a GraphQL one by its complexity). */
  RATE_LIMIT_POINTS: z.coerce.number().int().min(1).default(6000),
  RATE_LIMIT_WINDOW_SECONDS: z.coerce.number().int().min(1).max(86_400).default(60),
  /** Points per window for each client IP without a valid token. */
  RATE_LIMIT_ANONYMOUS_POINTS: z.coerce.number().int().min(1).default(600),
  /** Proxies in front of the gateway whose X-Forwarded-For is trusted: off (0), on (1) or a count. */
  TRUST_PROXY: z
    .string()
    .default('off')
    .transform((v) => (v === 'off' || v === 'false' ? 0 : v === 'on' || v === 'true' ? 1 : Number(v)))
    .pipe(z.number().int().min(0).max(16)),
  /** Days the event log (audit log) keeps an event; a daily job deletes older ones. */
  AUDIT_RETENTION_DAYS: z.coerce.number().int().min(1).default(365),
  /** Live updates (GraphQL subscriptions over SSE, src/events/feed.ts): subscriptions per process at most. */
  MAX_SUBSCRIPTIONS: z.coerce.number().int().min(1).default(10_000),
  /** Subscriptions one API token may hold open on a process (429 RATE_LIMITED above). */
  MAX_SUBSCRIPTIONS_PER_TOKEN: z.coerce.number().int().min(1).default(100),
  /** Subscriptions one client IP (TRUST_PROXY decides how it is read) may hold open on a process (429 above). */
  MAX_SUBSCRIPTIONS_PER_IP: z.coerce.number().int().min(1).default(1000),
  /** Events one subscription may have waiting before it is ended as too slow. */
  SUBSCRIPTION_QUEUE_LENGTH: z.coerce.number().int().min(1).default(1000),
  /** Keep-alive comment interval of an event stream, ms; each stream's token and access are re-checked as often. */
  SSE_KEEPALIVE_MS: z.coerce.number().int().min(100).default(15_000),
  /** GraphQL over WebSocket (src/http/live-ws.ts): largest message a client may send, bytes (the socket closes with 1009 above it). */
  WS_MAX_PAYLOAD_BYTES: z.coerce.number().int().min(1024).max(16 * 1024 * 1024).default(1024 * 1024),
  /** … time from the handshake to the client's `connection_init`, ms (4408 beyond). */
  WS_INIT_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(5_000),
  /** … open sockets per client IP on a process (429 to the upgrade beyond). */
  WS_MAX_CONNECTIONS_PER_IP: z.coerce.number().int().min(1).default(100),
  /** LISTEN connections (token cache, live feed) send themselves a notice this often, each due within as long (src/db/listen.ts). */
  LISTEN_HEALTH_MS: z.coerce.number().int().min(50).default(5000),
  /** A LISTEN connection whose self-notice is this late is dropped and reconnected. */
  LISTEN_STALL_RECONNECT_MS: z.coerce.number().int().min(100).default(30_000),
  // --- markdown parsing (src/lib/markdown-pool.ts)
  /** A markdown parse (one page or comment) running longer than this is ended and the content refused, ms. */
  MARKDOWN_PARSE_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(5000),
  /** Worker threads that parse markdown, at most. */
  MARKDOWN_THREADS: z.coerce.number().int().min(1).max(64).default(2),
  /** Block quote and list levels a page or comment may nest. */
  MARKDOWN_MAX_NESTING: z.coerce.number().int().min(4).max(1000).default(100),
  // --- webhooks (src/domain/webhooks.ts)
  /** Let webhooks target loopback, private and link-local addresses (default: refused). */
  WEBHOOK_ALLOW_PRIVATE: z.enum(['true', 'false', '1', '0']).default('false').transform((v) => v === 'true' || v === '1'),
  /** Requests made for one delivery before it is marked failed (1–20). */
  WEBHOOK_MAX_ATTEMPTS: z.coerce.number().int().min(1).max(20).default(8),
  /** Deliveries in flight at once per worker process, on a pool of their own (one per organization at a time). */
  WEBHOOK_CONCURRENCY: z.coerce.number().int().min(1).max(32).default(4),
  /** Opening the connection to a receiver, ms. */
  WEBHOOK_CONNECT_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(2000),
  /** From the request sent to the receiver's first response byte (its status line and headers), ms. */
  WEBHOOK_RESPONSE_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(5000),
  /** Failed attempts in a row after which an endpoint's deliveries are deferred (the circuit opens). */
  WEBHOOK_CIRCUIT_FAILURES: z.coerce.number().int().min(1).max(1000).default(5),
  /** How long an open circuit defers deliveries before one is tried again, seconds. */
  WEBHOOK_CIRCUIT_COOLDOWN_SECONDS: z.coerce.number().int().min(1).max(86_400).default(60),
  // PDF export budgets (src/domain/pdf-exports.ts): wall time of one render in its worker thread,
  // size of the PDF, and the worker's heap.
  PDF_EXPORT_TIMEOUT_SECONDS: z.coerce.number().min(0.1).max(3600).default(60),
  PDF_EXPORT_MAX_MB: z.coerce.number().min(0.01).max(1024).default(50),
  PDF_EXPORT_HEAP_MB: z.coerce.number().int().min(32).max(4096).default(256),
  /** Imported archives (zip, docx): records in the central directory, bytes one entry and all entries may expand to. */
  IMPORT_MAX_ENTRIES: z.coerce.number().int().min(1).default(5000),
  IMPORT_MAX_ENTRY_BYTES: z.coerce.number().int().min(1024).default(20 * 1024 * 1024),
  IMPORT_MAX_TOTAL_BYTES: z.coerce.number().int().min(1024).default(50 * 1024 * 1024),
  /** How long `POST …/content/import` waits for its job before answering 202 with the job to poll. */
  IMPORT_WAIT_SECONDS: z.coerce.number().int().min(0).max(20).default(20),
  /** An import's fetch and conversion run in a worker thread with this deadline and heap. */
  IMPORT_TIMEOUT_SECONDS: z.coerce.number().int().min(1).default(300),
  IMPORT_WORKER_HEAP_MB: z.coerce.number().int().min(32).default(256),
  /** After a site's visitor key is rotated, tokens signed with the previous key keep verifying this long (0–604800 s). */
  VISITOR_KEY_OVERLAP_SECONDS: z.coerce.number().int().min(0).max(604_800).default(3600),
  /** The shared cache's purge endpoint (src/http/purge.ts); unset = no purge feed. */
  PURGE_URL: z.string().url().optional(),
  /** How to purge: `varnish-ban` (BAN with X-Purge-Keys/X-Purge-Regex), `xkey` (PURGE with xkey-purge), `http` (POST of the keys as JSON, Fastly/Cloudflare-shaped). */
  PURGE_STYLE: z.enum(['varnish-ban', 'xkey', 'http']).default('varnish-ban'),
  /** Sent as `Authorization: Bearer …` to the purger (a CDN's API token), if set. */
  PURGE_TOKEN: z.string().min(1).optional(),
  /** How often the purge feed looks for changed sites, ms. */
  PURGE_INTERVAL_MS: z.coerce.number().int().min(100).max(60_000).default(1000),
  /** Purge a changed site's older-version keys once more after this long (the purge race window: longer than any request), s. */
  PURGE_REPEAT_SECONDS: z.coerce.number().int().min(1).max(3600).default(15),
  /** One purge request must answer within this, ms. */
  PURGE_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(5000),
  /** The rate limiter's counters in Redis/Valkey (`redis://` or `rediss://`) instead of PostgreSQL; unset = PostgreSQL. */
  RATE_LIMIT_REDIS_URL: z
    .string()
    .url()
    .refine((v) => /^rediss?:\/\//.test(v), 'must be a redis:// or rediss:// URL')
    .optional(),

  /** Streaming replicas of DATABASE_URL's database, comma-separated: GraphQL queries and REST reads run there (src/db/replicas.ts). */
  DATABASE_REPLICA_URLS: z
    .string()
    .optional()
    .transform((v, ctx) => {
      const urls = (v ?? '').split(',').map((s) => s.trim()).filter(Boolean);
      for (const u of urls) {
        if (!z.string().url().safeParse(u).success) ctx.addIssue({ code: 'custom', message: `not a URL: ${u.replace(/\/\/[^@/]*@/, '//…@')}` });
      }
      return urls;
    }),
  /** A replica whose replay lags more than this is skipped, ms. */
  REPLICA_MAX_LAG_MS: z.coerce.number().int().min(0).max(3_600_000).default(1000),

  /** Where uploaded and generated files are stored: `postgres` (the database, shared by every process) or `disk` (FILES_DIR). */
  FILE_STORAGE: z.enum(['postgres', 'disk', 's3']).default('postgres'),
  /** FILE_STORAGE=s3: the store's base URL (`https://s3.eu-west-1.amazonaws.com`, `http://minio:9000`). */
  S3_ENDPOINT: z.string().url().refine((v) => /^https?:\/\//.test(v), 'must be an http:// or https:// URL').optional(),
  /** FILE_STORAGE=s3: the bucket (created beforehand; the gateway never creates one). */
  S3_BUCKET: z.string().regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, 'must be an S3 bucket name (3-63 lowercase letters, digits, dots, hyphens)').optional(),
  S3_REGION: z.string().regex(/^[a-z0-9-]{1,64}$/, 'must be a region name like us-east-1').default('us-east-1'),
  S3_ACCESS_KEY_ID: z.string().min(1).optional(),
  S3_SECRET_ACCESS_KEY: z.string().min(1).optional(),
  /** `endpoint/bucket/key` URLs (MinIO and most self-hosted stores) instead of `bucket.endpoint/key`. */
  S3_FORCE_PATH_STYLE: z.enum(['true', 'false', '1', '0']).default('false').transform((v) => v === 'true' || v === '1'),
}).superRefine((e, ctx) => {
  if (e.FILE_STORAGE !== 's3') return;
  for (const name of ['S3_ENDPOINT', 'S3_BUCKET', 'S3_ACCESS_KEY_ID', 'S3_SECRET_ACCESS_KEY'] as const) {
    if (!e[name]) ctx.addIssue({ code: 'custom', path: [name], message: 'required when FILE_STORAGE=s3' });
  }
}).refine((e) => e.LISTEN_STALL_RECONNECT_MS >= 2 * e.LISTEN_HEALTH_MS, {
  path: ['LISTEN_STALL_RECONNECT_MS'],
  message: 'must be at least twice LISTEN_HEALTH_MS',
}).refine((e) => e.JOB_HEARTBEAT_SECONDS * 2 <= e.JOB_LOCK_TIMEOUT_SECONDS, {
  path: ['JOB_HEARTBEAT_SECONDS'],
  message: 'must be at most half of JOB_LOCK_TIMEOUT_SECONDS',
}).refine((e) => !(e.CORS_CREDENTIALS && e.CORS_ORIGINS?.trim() === '*'), {
  path: ['CORS_CREDENTIALS'],
  message: 'cannot be true when CORS_ORIGINS is * (list the origins allowed to send credentials)',
});

export type Config = {
  databaseUrl?: string;
  /**
   * Session connections (LISTEN, migrations and their lock, the job worker). Set and different
   * from `databaseUrl` means `databaseUrl` is a transaction-mode pooler (src/db/client.ts).
   */
  databaseDirectUrl?: string;
  port: number;
  host: string;
  publicUrl: string;
  appUrl: string;
  dataDir: string;
  /** Used when `fileStorage` is `disk`. */
  filesDir: string;
  adminToken?: string;
  adminEmail: string;
  claimsSecret: string;
  allowPrivateFetch: boolean;
  logLevel: string;
  embeddedPgPort: number;
  runWorker: boolean;
  tokenCache: boolean;
  /** Bytes of stored published-structure responses per process (src/http/published-cache.ts); 0 = off. */
  structureCacheBytes: number;
  /** `Cache-Control` of anonymous GET reads of public published sites, for shared caches (src/http/conditional.ts). */
  sharedCache: { sMaxAgeSeconds: number; staleWhileRevalidateSeconds: number };
  /** Bytes (estimated) of page trees and revision rows kept across requests (src/graphql/content.ts); 0 = off. */
  contentCacheBytes: number;
  /** Bytes (estimated) of ranked search candidates kept across requests (src/domain/search.ts); 0 = off. */
  searchCacheBytes: number;
  /** Largest total of page bodies (bytes) in one answer listing every page with its content (REST listPages, GraphQL `allPages { markdown }`). */
  pageListBodiesMaxBytes: number;
  /** Bounds on what one request may send (src/http/limits.ts, docs/decisions.md). */
  limits: {
    maxBodyBytes: number;
    bodyBudgetBytes: number;
    maxJsonDepth: number;
    graphqlMaxTokens: number;
    graphqlMaxAliases: number;
    graphqlMaxDirectives: number;
  };
  /** How request bodies are received (src/http/limits.ts readBody, docs/decisions.md "Request limits"). */
  bodies: BodyReadConfig;
  /** API tokens a user may create per rolling hour (src/domain/users.ts). */
  apiTokensPerHour: number;
  /** Database timeouts (docs/decisions.md, "Database faults and timeouts"). */
  dbStatementTimeoutMs: number;
  dbConnectTimeoutMs: number;
  dbJobStatementTimeoutMs: number;
  jobLockTimeoutSeconds: number;
  jobHeartbeatSeconds: number;
  /** Serve /metrics (src/http/observability.ts). */
  metrics: boolean;
  /** Bearer token /metrics requires, when set. */
  metricsToken?: string;
  /** Cross-origin access (src/http/cors.ts): `[]` = none, `'*'` = any origin, else exact origins. */
  cors: { origins: '*' | string[]; credentials: boolean };
  /** Persisted operations (src/http/trusted-documents.ts). */
  trustedDocuments: { mode: 'off' | 'allow' | 'only'; file?: string };
  /** Days events are kept (src/events/log.ts purgeOldEvents). */
  auditRetentionDays: number;
  /** Rate limits (src/http/rate-limit.ts, docs/decisions.md "Rate limits"). */
  rateLimit: RateLimitConfig;
  /** Live updates (README "Live updates"). */
  live: {
    maxSubscriptions: number;
    /** Per API token and per client IP, on one process (src/events/feed.ts). */
    maxPerToken: number;
    maxPerIp: number;
    queueLength: number;
    /** Keep-alive comments, and each stream's token and access re-check (src/graphql/subscriptions.ts). */
    keepAliveMs: number;
    /** The feed's read interval while this process has subscriptions (delivery latency), ms. */
    pollMs: number;
  };
  /** GraphQL over WebSocket (src/http/live-ws.ts); its pings go every `live.keepAliveMs`. */
  liveWs: { maxPayloadBytes: number; initTimeoutMs: number; maxConnectionsPerIp: number; keepAliveMs: number };
  /** Self-notices of the LISTEN connections (src/db/listen.ts). */
  listenHealth: { intervalMs: number; reconnectAfterMs: number };
  /** Webhooks (src/domain/webhooks.ts): private targets allowed, attempts per delivery. */
  webhooks: { allowPrivate: boolean; maxAttempts: number };
  /** How deliveries are sent (src/domain/webhooks.ts, src/jobs.ts): pool size, timeouts, circuit breaker. */
  webhookDelivery: WebhookDeliveryConfig;
  /** Imports (src/domain/imports.ts): archive limits (src/lib/zip-reader.ts) and the REST wait. */
  imports: { maxEntries: number; maxEntryBytes: number; maxTotalBytes: number; waitSeconds: number; timeoutSeconds: number; workerHeapMb: number };
  /** The shared-cache purge feed (src/http/purge.ts); `url` undefined = off. */
  /** Streaming replicas for reads (src/db/replicas.ts); empty = every request on the primary. */
  replicas: { urls: string[]; maxLagMs: number };
  purge: { url?: string; style: 'varnish-ban' | 'xkey' | 'http'; token?: string; intervalMs: number; repeatSeconds: number; timeoutMs: number };
  /** The markdown parsing pool (src/lib/markdown-pool.ts). */
  markdown: { timeoutMs: number; threads: number; maxNesting: number };
  /** PDF export budgets (src/domain/pdf-exports.ts, docs/performance.md "Hostile-input budgets"). */
  pdfExport: { timeoutMs: number; maxBytes: number; maxHeapMb: number };
  /** Seconds a rotated-out visitor key keeps verifying tokens (src/domain/visitor-keys.ts). */
  visitorKeyOverlapSeconds: number;
  /** Where file bytes live (src/services.ts createFileStorage): the database, `filesDir`, or `s3`'s bucket. */
  fileStorage: 'postgres' | 'disk' | 's3';
  /** The bucket, when `fileStorage` is `s3` (src/lib/storage-s3.ts). */
  s3?: { endpoint: string; bucket: string; region: string; accessKeyId: string; secretAccessKey: string; forcePathStyle: boolean };
};

export type WebhookDeliveryConfig = {
  /** Workers of the webhook pool per process. */
  concurrency: number;
  connectTimeoutMs: number;
  /** Until the response's first byte. */
  responseTimeoutMs: number;
  /** Failed attempts in a row that open an endpoint's circuit. */
  circuitFailures: number;
  circuitCooldownSeconds: number;
};

export type BodyReadConfig = {
  /** Bytes of bodies one client (IP, as rate limits see it) may hold at once; clamped to [maxBodyBytes, bodyBudgetBytes]. */
  clientBudgetBytes: number;
  /** The whole body within this many ms. */
  timeoutMs: number;
  /** After the first window, every `rateWindowMs` must bring `minBytesPerSecond × window` bytes; 0 = no rate check. */
  minBytesPerSecond: number;
  rateWindowMs: number;
};

export type RateLimitConfig = {
  enabled: boolean;
  /** Points per window per API token. */
  points: number;
  /** Points per window per client IP, for requests without a valid token. */
  anonymousPoints: number;
  windowSeconds: number;
  /** Trusted proxy hops: 0 reads the socket address, n the n-th X-Forwarded-For entry from the right. */
  trustProxy: number;
  /** Counters in this Redis/Valkey instead of PostgreSQL, when set. */
  redisUrl?: string;
};

/** Parses `env` with `schema`; the first problem as the "Invalid configuration" error start-up reports. */
function parseEnv<T extends z.ZodTypeAny>(schema: T, env: NodeJS.ProcessEnv): z.infer<T> {
  const parsed = schema.safeParse(env);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`Invalid configuration: ${issue.path.join('.')}: ${issue.message}`);
  }
  return parsed.data;
}

/**
 * Bytes of the revision-tree node cache (src/domain/revision-tree.ts), from TREE_CACHE_MB. The
 * cache is one per process, made when its module loads, so it reads the environment itself;
 * `loadConfig` validates the same setting with the others at start-up.
 */
export function treeCacheBytes(env: NodeJS.ProcessEnv = process.env): number {
  return Math.round(parseEnv(z.object({ TREE_CACHE_MB: EnvSchema.shape.TREE_CACHE_MB }), env).TREE_CACHE_MB * 1024 * 1024);
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const e = parseEnv(EnvSchema, env);
  const publicUrl = (e.PUBLIC_URL ?? `http://localhost:${e.PORT}`).replace(/\/$/, '');
  return {
    databaseUrl: e.DATABASE_URL,
    databaseDirectUrl: e.DATABASE_DIRECT_URL ?? e.DATABASE_URL,
    port: e.PORT,
    host: e.HOST,
    publicUrl,
    appUrl: (e.APP_URL ?? publicUrl).replace(/\/$/, ''),
    dataDir: e.DATA_DIR,
    filesDir: e.FILES_DIR ?? `${e.DATA_DIR}/files`,
    adminToken: e.DOCGRAPH_ADMIN_TOKEN,
    adminEmail: e.DOCGRAPH_ADMIN_EMAIL,
    // Without a configured secret, derive one from the admin token or draw one per process
    // (claims then verify only on this instance).
    claimsSecret: e.DOCGRAPH_CLAIMS_SECRET ?? (e.DOCGRAPH_ADMIN_TOKEN ? `claims:${e.DOCGRAPH_ADMIN_TOKEN}` : crypto.randomBytes(32).toString('hex')),
    allowPrivateFetch: e.ALLOW_PRIVATE_FETCH,
    logLevel: e.LOG_LEVEL,
    embeddedPgPort: e.EMBEDDED_PG_PORT,
    runWorker: e.RUN_WORKER,
    tokenCache: e.TOKEN_CACHE,
    structureCacheBytes: Math.round(e.STRUCTURE_CACHE_MB * 1024 * 1024),
    sharedCache: { sMaxAgeSeconds: e.PUBLISHED_S_MAXAGE_SECONDS, staleWhileRevalidateSeconds: e.PUBLISHED_STALE_WHILE_REVALIDATE_SECONDS },
    contentCacheBytes: Math.round(e.CONTENT_CACHE_MB * 1024 * 1024),
    searchCacheBytes: Math.round(e.SEARCH_CACHE_MB * 1024 * 1024),
    pageListBodiesMaxBytes: Math.round(e.PAGE_LIST_BODIES_MB * 1024 * 1024),
    limits: {
      maxBodyBytes: e.MAX_BODY_BYTES,
      bodyBudgetBytes: Math.max(e.BODY_BUDGET_BYTES, e.MAX_BODY_BYTES),
      maxJsonDepth: e.MAX_JSON_DEPTH,
      graphqlMaxTokens: e.GRAPHQL_MAX_TOKENS,
      graphqlMaxAliases: e.GRAPHQL_MAX_ALIASES,
      graphqlMaxDirectives: e.GRAPHQL_MAX_DIRECTIVES,
    },
    bodies: {
      clientBudgetBytes: e.BODY_CLIENT_BUDGET_BYTES ?? e.MAX_BODY_BYTES,
      timeoutMs: e.BODY_TIMEOUT_MS,
      minBytesPerSecond: e.BODY_MIN_BYTES_PER_SECOND,
      rateWindowMs: e.BODY_RATE_WINDOW_MS,
    },
    apiTokensPerHour: e.API_TOKENS_PER_HOUR,
    dbStatementTimeoutMs: e.DB_STATEMENT_TIMEOUT_MS,
    dbConnectTimeoutMs: e.DB_CONNECT_TIMEOUT_MS,
    dbJobStatementTimeoutMs: e.DB_JOB_STATEMENT_TIMEOUT_MS,
    jobLockTimeoutSeconds: e.JOB_LOCK_TIMEOUT_SECONDS,
    jobHeartbeatSeconds: e.JOB_HEARTBEAT_SECONDS,
    metrics: e.METRICS === 'on',
    metricsToken: e.METRICS_TOKEN,
    cors: { origins: parseCorsOrigins(e.CORS_ORIGINS), credentials: e.CORS_CREDENTIALS },
    trustedDocuments: { mode: e.TRUSTED_DOCUMENTS, file: e.TRUSTED_DOCUMENTS_FILE || undefined },
    rateLimit: {
      enabled: e.RATE_LIMIT,
      points: e.RATE_LIMIT_POINTS,
      anonymousPoints: e.RATE_LIMIT_ANONYMOUS_POINTS,
      windowSeconds: e.RATE_LIMIT_WINDOW_SECONDS,
      trustProxy: e.TRUST_PROXY,
      redisUrl: e.RATE_LIMIT_REDIS_URL || undefined,
    },
    auditRetentionDays: e.AUDIT_RETENTION_DAYS,
    live: {
      maxSubscriptions: e.MAX_SUBSCRIPTIONS,
      maxPerToken: e.MAX_SUBSCRIPTIONS_PER_TOKEN,
      maxPerIp: e.MAX_SUBSCRIPTIONS_PER_IP,
      queueLength: e.SUBSCRIPTION_QUEUE_LENGTH,
      keepAliveMs: e.SSE_KEEPALIVE_MS,
      pollMs: e.LIVE_POLL_MS,
    },
    liveWs: { maxPayloadBytes: e.WS_MAX_PAYLOAD_BYTES, initTimeoutMs: e.WS_INIT_TIMEOUT_MS, maxConnectionsPerIp: e.WS_MAX_CONNECTIONS_PER_IP, keepAliveMs: e.SSE_KEEPALIVE_MS },
    listenHealth: { intervalMs: e.LISTEN_HEALTH_MS, reconnectAfterMs: e.LISTEN_STALL_RECONNECT_MS },
    webhooks: { allowPrivate: e.WEBHOOK_ALLOW_PRIVATE, maxAttempts: e.WEBHOOK_MAX_ATTEMPTS },
    webhookDelivery: {
      concurrency: e.WEBHOOK_CONCURRENCY,
      connectTimeoutMs: e.WEBHOOK_CONNECT_TIMEOUT_MS,
      responseTimeoutMs: e.WEBHOOK_RESPONSE_TIMEOUT_MS,
      circuitFailures: e.WEBHOOK_CIRCUIT_FAILURES,
      circuitCooldownSeconds: e.WEBHOOK_CIRCUIT_COOLDOWN_SECONDS,
    },
    pdfExport: {
      timeoutMs: Math.round(e.PDF_EXPORT_TIMEOUT_SECONDS * 1000),
      maxBytes: Math.round(e.PDF_EXPORT_MAX_MB * 1024 * 1024),
      maxHeapMb: e.PDF_EXPORT_HEAP_MB,
    },
    markdown: { timeoutMs: e.MARKDOWN_PARSE_TIMEOUT_MS, threads: e.MARKDOWN_THREADS, maxNesting: e.MARKDOWN_MAX_NESTING },
    visitorKeyOverlapSeconds: e.VISITOR_KEY_OVERLAP_SECONDS,
    imports: { maxEntries: e.IMPORT_MAX_ENTRIES, maxEntryBytes: e.IMPORT_MAX_ENTRY_BYTES, maxTotalBytes: e.IMPORT_MAX_TOTAL_BYTES, waitSeconds: e.IMPORT_WAIT_SECONDS, timeoutSeconds: e.IMPORT_TIMEOUT_SECONDS, workerHeapMb: e.IMPORT_WORKER_HEAP_MB },
    replicas: { urls: e.DATABASE_REPLICA_URLS, maxLagMs: e.REPLICA_MAX_LAG_MS },
    purge: { url: e.PURGE_URL, style: e.PURGE_STYLE, token: e.PURGE_TOKEN, intervalMs: e.PURGE_INTERVAL_MS, repeatSeconds: e.PURGE_REPEAT_SECONDS, timeoutMs: e.PURGE_TIMEOUT_MS },
    fileStorage: e.FILE_STORAGE,
    s3:
      e.FILE_STORAGE === 's3'
        ? { endpoint: e.S3_ENDPOINT!, bucket: e.S3_BUCKET!, region: e.S3_REGION, accessKeyId: e.S3_ACCESS_KEY_ID!, secretAccessKey: e.S3_SECRET_ACCESS_KEY!, forcePathStyle: e.S3_FORCE_PATH_STYLE }
        : undefined,
  };
}

/** `CORS_ORIGINS`: `*`, or origins (`https://app.example.com`, no path) separated by commas. */
function parseCorsOrigins(value: string | undefined): '*' | string[] {
  const text = value?.trim() ?? '';
  if (text === '*') return '*';
  const origins: string[] = [];
  for (const item of text.split(',').map((s) => s.trim()).filter(Boolean)) {
    let url: URL | undefined;
    try {
      url = new URL(item);
    } catch {
      url = undefined;
    }
    // The origin a browser sends: scheme, host and port only (a default port is dropped).
    const origin = url && /^https?:$/.test(url.protocol) && url.pathname === '/' && !url.search && !url.hash && !url.username ? url.origin : undefined;
    if (!origin) throw new Error(`Invalid configuration: CORS_ORIGINS: ${JSON.stringify(item)} is not an origin (http(s)://host[:port], no path)`);
    origins.push(origin);
  }
  return origins;
}
