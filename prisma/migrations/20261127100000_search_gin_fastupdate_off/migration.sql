-- Full-text search indexes write their entries at once instead of through a pending list: with
-- fastupdate on, inserts pile up in the pending list and a query or a flush pays for the whole
-- list at once (a WAL spike of tens of MB, and a search that scans the list unindexed).
-- Writes cost a little more each; reads and WAL stay even (docs/performance.md, "Search is bounded").
ALTER INDEX "CurrentPage_searchVector_idx" SET (fastupdate = off);
ALTER INDEX IF EXISTS "PageVersion_searchVector_idx" SET (fastupdate = off);
-- Flush what is pending now, so the first searches after the migration do not pay for it.
SELECT gin_clean_pending_list('"CurrentPage_searchVector_idx"'::regclass);
SELECT gin_clean_pending_list('"PageVersion_searchVector_idx"'::regclass) WHERE to_regclass('"PageVersion_searchVector_idx"') IS NOT NULL;
