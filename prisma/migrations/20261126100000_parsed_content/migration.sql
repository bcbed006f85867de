-- Markdown is parsed once, when content is written, in a worker thread with a deadline
-- (src/lib/markdown-pool.ts): the JSON document and the links of a page version, and the JSON
-- document of a comment, are stored beside the markdown so that no read parses. Rows written
-- before this migration have NULL here; the backfillParsedContent job converts them (src/tasks.ts),
-- finding them through the partial indexes below, which empty as it goes. `json`, not `jsonb`:
-- nothing queries inside them, and `json` keeps the text as written (keys in the order the API
-- answered with before) without decomposing it on every write.
ALTER TABLE "PageVersion" ADD COLUMN "document" JSON;
ALTER TABLE "PageVersion" ADD COLUMN "links" JSON;
ALTER TABLE "Comment" ADD COLUMN "document" JSON;

CREATE INDEX "PageVersion_unparsed_idx" ON "PageVersion"("id") WHERE "document" IS NULL;
CREATE INDEX "Comment_unparsed_idx" ON "Comment"("id") WHERE "document" IS NULL;
