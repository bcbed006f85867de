-- NOTIFY off the hot commit path: PostgreSQL serializes the commits of every transaction that
-- sent a notification (one global lock, held while the notices are queued), so a NOTIFY per event
-- capped writing transactions at a fraction of their rate. The live feed (src/events/feed.ts)
-- now follows the event log by position on a short interval instead of being told of each row.
DROP TRIGGER IF EXISTS "Event_notify" ON "Event";
DROP FUNCTION IF EXISTS "docgraph_event_notify"();
