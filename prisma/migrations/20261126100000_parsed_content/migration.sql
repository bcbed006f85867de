-- Markdown is parsed once, when content is written, in a worker thread with a deadline
-- (src/lib/markdown-pool.ts): the JSON document and the links of a page version, and the JSON
-- document of a comment, are stored beside the markdown so that no read parses. Rows written
-- before this migration have NULL here; the backfillParsedContent job converts them (src/tasks.ts),
-- finding them through the partial indexes below, which empty as it goes.
ALTER TABLE "PageVersion" ADD COLUMN "document" JSONB;
ALTER TABLE "PageVersion" ADD COLUMN "links" JSONB;
ALTER TABLE "Comment" ADD COLUMN "document" JSONB;

CREATE INDEX "PageVersion_unparsed_idx" ON "PageVersion"("id") WHERE "document" IS NULL;
CREATE INDEX "Comment_unparsed_idx" ON "Comment"("id") WHERE "document" IS NULL;
