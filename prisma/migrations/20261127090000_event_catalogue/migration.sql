-- The event wing (src/events/): the log's unused column goes, and webhook deliveries get one
-- creator.
--
-- 1. "Event"."txid" was written on every event and read by nothing: the live feed (src/events/
--    feed.ts) closes its gaps with the snapshot's running transactions (pg_snapshot_xip), not with
--    the writer's transaction id.
ALTER TABLE "Event" DROP COLUMN "txid";

-- 2. One creator of webhook deliveries. `docgraph_webhook_delivery` writes one delivery of an
--    event to a webhook and queues its job; the fan-out trigger calls it for every matching
--    webhook (in the event's transaction: a delivery exists exactly when its change committed,
--    whoever inserts the event, SQL by hand included), and a redelivery calls it too
--    (src/domain/webhooks.ts redeliverWebhookDelivery). `docgraph_webhook_enqueue` is the one
--    place of the job's name (`deliverWebhook`, src/tasks.ts), its queue (one per organization,
--    `webhooks:<organizationId>`) and its attempt ceiling (20, the largest WEBHOOK_MAX_ATTEMPTS:
--    the handler counts attempts on the delivery and stops at the configured number); a deferred
--    delivery (an open circuit) is queued again through it.
CREATE FUNCTION "docgraph_webhook_enqueue"(delivery_id TEXT, organization_id TEXT, delay_ms DOUBLE PRECISION DEFAULT 0)
RETURNS VOID LANGUAGE plpgsql AS $$
BEGIN
  PERFORM graphile_worker.add_job('deliverWebhook', json_build_object('deliveryId', delivery_id),
    queue_name => 'webhooks:' || organization_id,
    run_at => now() + make_interval(secs => greatest(delay_ms, 0) / 1000),
    max_attempts => 20);
END;
$$;

-- Returns the new delivery's id. Without the job queue's schema (a restored database the
-- application has not started on yet) the delivery stays pending, says why, and can be redelivered.
CREATE FUNCTION "docgraph_webhook_delivery"(webhook_id TEXT, event_seq BIGINT, created_at TIMESTAMP(3))
RETURNS TEXT LANGUAGE plpgsql AS $$
DECLARE
  delivery_id TEXT := "docgraph_new_id"('whd');
  queue BOOLEAN := to_regnamespace('graphile_worker') IS NOT NULL;
  org TEXT;
BEGIN
  INSERT INTO "WebhookDelivery" ("id", "webhookId", "eventSeq", "eventId", "eventType", "createdAt", "nextAttemptAt", "lastError")
  SELECT delivery_id, webhook_id, e."seq", e."id", e."type", created_at,
         CASE WHEN queue THEN created_at END,
         CASE WHEN queue THEN NULL ELSE 'not queued: the job queue (graphile_worker) is not installed; redeliver it' END
  FROM "Event" e WHERE e."seq" = event_seq
  RETURNING (SELECT w."organizationId" FROM "Webhook" w WHERE w."id" = webhook_id) INTO org;
  IF org IS NULL THEN
    RAISE EXCEPTION 'docgraph_webhook_delivery: no event % or webhook %', event_seq, webhook_id;
  END IF;
  IF queue THEN
    PERFORM "docgraph_webhook_enqueue"(delivery_id, org);
  END IF;
  RETURN delivery_id;
END;
$$;

-- The fan-out: one delivery per active webhook of the event's organization that subscribes to its
-- type (empty `eventTypes`: every type).
CREATE OR REPLACE FUNCTION "docgraph_webhook_fanout"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  hook RECORD;
BEGIN
  FOR hook IN
    SELECT w."id" FROM "Webhook" w
    WHERE w."organizationId" = NEW."organizationId" AND w."active"
      AND (cardinality(w."eventTypes") = 0 OR NEW."type" = ANY (w."eventTypes"))
  LOOP
    PERFORM "docgraph_webhook_delivery"(hook."id", NEW."seq", NEW."occurredAt");
  END LOOP;
  RETURN NULL;
END;
$$;
