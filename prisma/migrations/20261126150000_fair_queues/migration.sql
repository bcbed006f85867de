-- Fair queues (issue 20, docs/decisions.md "Hostile readers: queues").
--
-- 1. Dead workers found at once: each worker pool holds a session-level advisory lock on a
--    connection of its own for its whole life (src/jobs.ts) and records its key here once it holds
--    it. PostgreSQL releases the lock when the process dies (its connection closes), so a sweep that
--    can take the lock knows the pool is dead, whatever its last heartbeat says.
ALTER TABLE "docgraph_worker"."heartbeats" ADD COLUMN "lock_key" BIGINT;

-- 2. A circuit breaker per webhook endpoint (src/domain/webhooks.ts): failed attempts in a row,
--    and until when deliveries are deferred (not attempted, attempts not spent) after too many.
ALTER TABLE "Webhook" ADD COLUMN "consecutiveFailures" INTEGER NOT NULL DEFAULT 0;
ALTER TABLE "Webhook" ADD COLUMN "circuitOpenUntil" TIMESTAMP(3);

-- 3. Deliveries in one named queue per organization: graphile-worker runs the jobs of a queue one
--    at a time, so an organization whose receiver hangs holds at most one of the webhook pool's
--    workers, and never the import/processing workers (a pool of their own, src/jobs.ts).
CREATE OR REPLACE FUNCTION "docgraph_webhook_fanout"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  hook RECORD;
  delivery_id TEXT;
  queue BOOLEAN;
BEGIN
  FOR hook IN
    SELECT w."id" FROM "Webhook" w
    WHERE w."organizationId" = NEW."organizationId" AND w."active"
      AND (cardinality(w."eventTypes") = 0 OR NEW."type" = ANY (w."eventTypes"))
  LOOP
    IF queue IS NULL THEN
      queue := to_regnamespace('graphile_worker') IS NOT NULL;
    END IF;
    delivery_id := "docgraph_new_id"('whd');
    INSERT INTO "WebhookDelivery" ("id", "webhookId", "eventSeq", "eventId", "eventType", "createdAt", "nextAttemptAt", "lastError")
    VALUES (delivery_id, hook."id", NEW."seq", NEW."id", NEW."type", NEW."occurredAt",
            CASE WHEN queue THEN NEW."occurredAt" END,
            CASE WHEN queue THEN NULL ELSE 'not queued: the job queue (graphile_worker) is not installed; redeliver it' END);
    IF queue THEN
      -- The queue name is webhookQueueName() of src/domain/webhooks.ts.
      PERFORM graphile_worker.add_job('deliverWebhook', json_build_object('deliveryId', delivery_id),
        queue_name => 'webhooks:' || NEW."organizationId", max_attempts => 20);
    END IF;
  END LOOP;
  RETURN NULL;
END;
$$;
