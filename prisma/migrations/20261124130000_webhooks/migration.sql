-- Signed webhooks (src/domain/webhooks.ts). An organization admin registers a URL; every event of
-- the organization's event log ("Event", written in each change's own transaction) that the
-- webhook subscribes to becomes one "WebhookDelivery" and one `deliverWebhook` job, both written
-- by the AFTER INSERT trigger below, in the same transaction as the event: a delivery exists
-- exactly when its change committed, and no mutation needs code of its own for it.
CREATE TYPE "WebhookDeliveryStatus" AS ENUM ('pending', 'succeeded', 'failed');

CREATE TABLE "Webhook" (
  "id" TEXT NOT NULL,
  "organizationId" TEXT NOT NULL,
  "url" TEXT NOT NULL,
  -- The signing secret (HMAC-SHA256 key), stored as is: the server needs it to sign. Shown once.
  "secret" TEXT NOT NULL,
  -- Event types delivered (`space_created`, …); empty = every event of the organization.
  "eventTypes" TEXT[] NOT NULL DEFAULT ARRAY[]::TEXT[],
  "active" BOOLEAN NOT NULL DEFAULT true,
  "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
  "updatedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
  "createdById" TEXT,
  CONSTRAINT "Webhook_pkey" PRIMARY KEY ("id")
);

CREATE INDEX "Webhook_organizationId_createdAt_idx" ON "Webhook"("organizationId", "createdAt");

ALTER TABLE "Webhook" ADD CONSTRAINT "Webhook_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;

CREATE TABLE "WebhookDelivery" (
  "id" TEXT NOT NULL,
  "webhookId" TEXT NOT NULL,
  "eventSeq" BIGINT NOT NULL,
  "eventId" TEXT NOT NULL,
  "eventType" TEXT NOT NULL,
  "status" "WebhookDeliveryStatus" NOT NULL DEFAULT 'pending',
  "attempts" INTEGER NOT NULL DEFAULT 0,
  "lastStatusCode" INTEGER,
  "lastError" TEXT,
  "lastAttemptAt" TIMESTAMP(3),
  "nextAttemptAt" TIMESTAMP(3),
  "deliveredAt" TIMESTAMP(3),
  "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
  CONSTRAINT "WebhookDelivery_pkey" PRIMARY KEY ("id")
);

CREATE INDEX "WebhookDelivery_webhookId_createdAt_idx" ON "WebhookDelivery"("webhookId", "createdAt");
CREATE INDEX "WebhookDelivery_eventSeq_idx" ON "WebhookDelivery"("eventSeq");

ALTER TABLE "WebhookDelivery" ADD CONSTRAINT "WebhookDelivery_webhookId_fkey" FOREIGN KEY ("webhookId") REFERENCES "Webhook"("id") ON DELETE CASCADE ON UPDATE CASCADE;
-- A delivery lives as long as its event: the event log's retention purge removes both.
ALTER TABLE "WebhookDelivery" ADD CONSTRAINT "WebhookDelivery_eventSeq_fkey" FOREIGN KEY ("eventSeq") REFERENCES "Event"("seq") ON DELETE CASCADE ON UPDATE CASCADE;

-- An id like src/lib/ids.ts newId(): `<prefix>_` and 22 base62 digits of a random UUID.
CREATE FUNCTION "docgraph_new_id"(prefix TEXT) RETURNS TEXT LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  hex TEXT := replace(gen_random_uuid()::text, '-', '');
  n NUMERIC := 0;
  digits TEXT := '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
  out TEXT := '';
  i INT;
BEGIN
  FOR i IN 1..32 LOOP
    n := n * 16 + strpos('0123456789abcdef', substr(hex, i, 1)) - 1;
  END LOOP;
  WHILE n > 0 LOOP
    out := substr(digits, (n % 62)::int + 1, 1) || out;
    n := div(n, 62);
  END LOOP;
  RETURN prefix || '_' || lpad(out, 22, '0');
END;
$$;

-- The fan-out: one delivery per active webhook of the event's organization that subscribes to
-- its type, each with its job. graphile-worker's schema is installed by the application at
-- start-up (src/jobs.ts migrate(), after these migrations): a webhook can only exist once the
-- application has run, so the queue is there; should it be missing (a restored database without
-- the graphile_worker schema), the delivery stays pending, says why, and can be redelivered.
-- max_attempts is a ceiling: the handler counts attempts on the delivery and gives up after
-- WEBHOOK_MAX_ATTEMPTS (at most 20), see src/domain/webhooks.ts.
CREATE FUNCTION "docgraph_webhook_fanout"() RETURNS trigger LANGUAGE plpgsql AS $$
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
      PERFORM graphile_worker.add_job('deliverWebhook', json_build_object('deliveryId', delivery_id), max_attempts => 20);
    END IF;
  END LOOP;
  RETURN NULL;
END;
$$;

CREATE TRIGGER "Event_webhooks" AFTER INSERT ON "Event"
  FOR EACH ROW EXECUTE FUNCTION "docgraph_webhook_fanout"();
