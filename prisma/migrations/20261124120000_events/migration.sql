-- The event log (outbox): one row per committed change, written in the change's own transaction
-- (src/domain/events.ts recordEvent). `seq` is the resume position of live feeds; `txid` lets a
-- reader stop below the oldest running transaction so a late commit with a smaller seq is never
-- skipped. Each insert notifies channel `docgraph_events` with `<organizationId>:<seq>`;
-- PostgreSQL delivers it at commit, and only if the change commits.
CREATE TYPE "EventSource" AS ENUM ('rest', 'graphql', 'job', 'cli');

CREATE TABLE "Event" (
  "seq" BIGSERIAL NOT NULL,
  "id" TEXT NOT NULL,
  "type" TEXT NOT NULL,
  "occurredAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
  "organizationId" TEXT NOT NULL,
  "userId" TEXT,
  "tokenId" TEXT,
  "actorLabel" TEXT,
  "source" "EventSource" NOT NULL,
  "objectType" TEXT NOT NULL,
  "objectId" TEXT NOT NULL,
  "payload" JSONB NOT NULL DEFAULT '{}',
  "txid" BIGINT NOT NULL DEFAULT (pg_current_xact_id())::text::bigint,
  CONSTRAINT "Event_pkey" PRIMARY KEY ("seq")
);

CREATE UNIQUE INDEX "Event_id_key" ON "Event"("id");
CREATE INDEX "Event_organizationId_seq_idx" ON "Event"("organizationId", "seq");
CREATE INDEX "Event_objectId_seq_idx" ON "Event"("objectId", "seq");
CREATE INDEX "Event_occurredAt_idx" ON "Event"("occurredAt");

ALTER TABLE "Event" ADD CONSTRAINT "Event_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;

CREATE FUNCTION "docgraph_event_notify"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('docgraph_events', NEW."organizationId" || ':' || NEW."seq");
  RETURN NULL;
END;
$$;

CREATE TRIGGER "Event_notify" AFTER INSERT ON "Event"
  FOR EACH ROW EXECUTE FUNCTION "docgraph_event_notify"();
