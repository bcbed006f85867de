-- Search without walking revisions at read time (docs/performance.md, search).
--
-- "CurrentPage": the pages of every space's current revision, with their path and the version's
-- search vector, kept by a trigger on "Space"."revisionId" so every code path that moves a space
-- (edits, merges, duplicates, restores, imports, bulk loads) keeps it exact in the same
-- transaction. Search ranks these rows through one GIN index instead of joining
-- Space → Revision → PageVersion = ANY("pageVersionIds") for the whole organization.
--
-- "PageSection": a page version's sections (split at headings by the application when the
-- version is written; versions are immutable, so the rows never change), each with its own
-- search vector, so search tells which sections match without any to_tsvector at read time.

CREATE TABLE "CurrentPage" (
    "spaceId" TEXT NOT NULL,
    "pageId" TEXT NOT NULL,
    "versionId" TEXT NOT NULL,
    "path" TEXT NOT NULL,
    "searchVector" tsvector,
    CONSTRAINT "CurrentPage_pkey" PRIMARY KEY ("spaceId", "pageId")
);
ALTER TABLE "CurrentPage" ADD CONSTRAINT "CurrentPage_spaceId_fkey" FOREIGN KEY ("spaceId") REFERENCES "Space"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "CurrentPage" ADD CONSTRAINT "CurrentPage_versionId_fkey" FOREIGN KEY ("versionId") REFERENCES "PageVersion"("id") ON DELETE CASCADE ON UPDATE CASCADE;
CREATE INDEX "CurrentPage_versionId_idx" ON "CurrentPage"("versionId");
-- Keep whole rows in the heap, none of it in TOAST. A search for a common word tests and ranks
-- half the table: fetching each vector from TOAST cost 4x the ranking itself (MAIN keeps the
-- vector in the row), and with wide rows Postgres would move the short text columns out of
-- line instead (PLAIN forbids it), which made every join and GROUP BY on "spaceId" a TOAST
-- lookup. Measured at medium scale: 9,805 matching pages ranked and grouped by space in 25 ms,
-- against 100-300 ms either way round. The true heap size also makes the planner take the GIN
-- index for a rare word.
ALTER TABLE "CurrentPage" ALTER COLUMN "searchVector" SET STORAGE MAIN;
ALTER TABLE "CurrentPage" ALTER COLUMN "spaceId" SET STORAGE PLAIN;
ALTER TABLE "CurrentPage" ALTER COLUMN "pageId" SET STORAGE PLAIN;
ALTER TABLE "CurrentPage" ALTER COLUMN "versionId" SET STORAGE PLAIN;
ALTER TABLE "CurrentPage" ALTER COLUMN "path" SET STORAGE PLAIN;
CREATE INDEX "CurrentPage_searchVector_idx" ON "CurrentPage" USING GIN ("searchVector");

CREATE TABLE "PageSection" (
    "versionId" TEXT NOT NULL,
    "position" INTEGER NOT NULL,
    "anchor" TEXT NOT NULL,
    "title" TEXT NOT NULL,
    "depth" INTEGER NOT NULL,
    "body" TEXT NOT NULL,
    CONSTRAINT "PageSection_pkey" PRIMARY KEY ("versionId", "position")
);
ALTER TABLE "PageSection" ADD CONSTRAINT "PageSection_versionId_fkey" FOREIGN KEY ("versionId") REFERENCES "PageVersion"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "PageSection" ADD COLUMN "searchVector" tsvector GENERATED ALWAYS AS (
    to_tsvector('english', "title" || E'\n' || "body")
) STORED;

-- Bring "CurrentPage" in line with a space's current revision: pages whose version or path
-- changed are rewritten, others are left alone (their search vectors are not copied again).
-- Pages marked noIndex are listed without a search vector, so search never finds them.
CREATE FUNCTION "docgraph_sync_current_pages_of"(space_id TEXT, revision_id TEXT) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    page_ids TEXT[];
    version_ids TEXT[];
    paths TEXT[];
BEGIN
    WITH RECURSIVE walk(node, path) AS (
        SELECT n.node, coalesce(pv."slug", n.node->>'id')
        FROM "Revision" r
        CROSS JOIN LATERAL jsonb_array_elements(r."tree") AS n(node)
        LEFT JOIN "PageVersion" pv ON pv."id" = n.node->>'v'
        WHERE r."id" = revision_id
        UNION ALL
        SELECT c.node, w.path || '/' || coalesce(pv."slug", c.node->>'id')
        FROM walk w
        CROSS JOIN LATERAL jsonb_array_elements(w.node->'pages') AS c(node)
        LEFT JOIN "PageVersion" pv ON pv."id" = c.node->>'v'
    )
    SELECT coalesce(array_agg(node->>'id'), '{}'), coalesce(array_agg(node->>'v'), '{}'), coalesce(array_agg(path), '{}')
    INTO page_ids, version_ids, paths
    FROM walk;

    DELETE FROM "CurrentPage" cp
    WHERE cp."spaceId" = space_id
      AND NOT EXISTS (
        SELECT 1 FROM unnest(page_ids, version_ids, paths) AS cur(pid, vid, path)
        WHERE cur.pid = cp."pageId" AND cur.vid = cp."versionId" AND cur.path = cp."path"
      );

    INSERT INTO "CurrentPage" ("spaceId", "pageId", "versionId", "path", "searchVector")
    SELECT space_id, cur.pid, cur.vid, cur.path, CASE WHEN pv."noIndex" THEN NULL ELSE pv."searchVector" END
    FROM unnest(page_ids, version_ids, paths) AS cur(pid, vid, path)
    JOIN "PageVersion" pv ON pv."id" = cur.vid
    ON CONFLICT ("spaceId", "pageId") DO NOTHING;
END
$$;

CREATE FUNCTION "docgraph_sync_current_pages"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' OR NEW."revisionId" IS DISTINCT FROM OLD."revisionId" THEN
        PERFORM "docgraph_sync_current_pages_of"(NEW."id", NEW."revisionId");
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER "Space_sync_current_pages"
    AFTER INSERT OR UPDATE OF "revisionId" ON "Space"
    FOR EACH ROW EXECUTE FUNCTION "docgraph_sync_current_pages"();

-- Spaces that exist already.
SELECT "docgraph_sync_current_pages_of"("id", "revisionId") FROM "Space";
