-- Rate-limit counters (src/http/rate-limit.ts), shared by every gateway process on this database,
-- in the shape rate-limiter-flexible's RateLimiterPostgres expects (it upserts `points` per `key`
-- and keeps `expire`, the window's end in epoch ms). The limiter is built with
-- `tableCreated: true`, so it never runs DDL itself. UNLOGGED: no WAL for a row written on every
-- request; after a crash the table comes back empty, which only restarts the current windows.
-- Kept out of the Prisma schema (and out of `public`), like the worker's heartbeats.
CREATE SCHEMA IF NOT EXISTS "docgraph_ratelimit";

CREATE UNLOGGED TABLE "docgraph_ratelimit"."counters" (
    "key" VARCHAR(255) NOT NULL,
    "points" INTEGER NOT NULL DEFAULT 0,
    "expire" BIGINT,

    CONSTRAINT "counters_pkey" PRIMARY KEY ("key")
);
