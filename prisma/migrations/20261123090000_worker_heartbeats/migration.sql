-- Liveness of the processes that run background jobs (src/jobs.ts). Each graphile-worker pool
-- (one per worker process; it is what locks jobs: `locked_by` = the pool id) upserts its row
-- every JOB_HEARTBEAT_SECONDS; a job locked by a pool not seen for JOB_LOCK_TIMEOUT_SECONDS is
-- unlocked and retried. Kept out of the Prisma schema (and out of `public`): it belongs to the
-- queue, like graphile_worker's own tables.
CREATE SCHEMA IF NOT EXISTS "docgraph_worker";

CREATE TABLE "docgraph_worker"."heartbeats" (
    "pool_id" TEXT NOT NULL,
    "started_at" TIMESTAMPTZ NOT NULL DEFAULT now(),
    "last_seen_at" TIMESTAMPTZ NOT NULL DEFAULT now(),

    CONSTRAINT "heartbeats_pkey" PRIMARY KEY ("pool_id")
);
