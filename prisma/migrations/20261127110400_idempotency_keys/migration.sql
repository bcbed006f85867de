-- Idempotency keys (src/http/idempotency.ts): a write sent with an `Idempotency-Key` header is
-- claimed here before it runs ("running", with a lease), marked `applied` inside the transaction
-- that makes its change (so the mark and the change commit together or not at all), and keeps
-- its answer ("done") for 24 hours, so a retry after a lost answer gets the first outcome.
CREATE TABLE "IdempotencyKey" (
    "userId" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "fingerprint" TEXT NOT NULL,
    "state" TEXT NOT NULL DEFAULT 'running',
    "applied" BOOLEAN NOT NULL DEFAULT false,
    "leaseUntil" TIMESTAMP(3) NOT NULL,
    "status" INTEGER,
    "headers" JSONB,
    "body" BYTEA,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "IdempotencyKey_pkey" PRIMARY KEY ("userId", "key")
);
CREATE INDEX "IdempotencyKey_createdAt_idx" ON "IdempotencyKey"("createdAt");
