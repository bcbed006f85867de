-- The published structure's version per site (issue 14): the published-structure cache
-- (src/http/published-cache.ts) keys a stored response by it, so a stored response is served
-- only while nothing a reader of the site sees has changed. Triggers rather than application
-- code bump it, in the transaction of the write, whatever path writes (GraphQL, REST, jobs, CLI,
-- plain SQL): the site's own row, its section groups, sections, site spaces and share links,
-- and any change to a space one of its site spaces shows (title, icon, visibility, the current
-- revision — revisions and page versions are immutable, so the revision id stands for the
-- pages). The version lives in PostgreSQL, so every gateway process on the database agrees.
--
-- Locks: a bump holds the version row until commit. Sites are locked in id order, so two
-- writers bumping the same sites cannot deadlock on them.
CREATE TABLE "SiteStructureVersion" (
  "siteId" TEXT NOT NULL PRIMARY KEY REFERENCES "Site"("id") ON DELETE CASCADE ON UPDATE CASCADE,
  "version" BIGINT NOT NULL DEFAULT 1
);
INSERT INTO "SiteStructureVersion" ("siteId") SELECT "id" FROM "Site";

CREATE FUNCTION "docgraph_bump_sites"(site_ids TEXT[]) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  PERFORM 1 FROM "SiteStructureVersion" WHERE "siteId" = ANY(site_ids) ORDER BY "siteId" FOR NO KEY UPDATE;
  UPDATE "SiteStructureVersion" SET "version" = "version" + 1 WHERE "siteId" = ANY(site_ids);
END;
$$;

CREATE FUNCTION "docgraph_site_version_row"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO "SiteStructureVersion" ("siteId") VALUES (NEW."id") ON CONFLICT DO NOTHING;
  ELSE
    PERFORM "docgraph_bump_sites"(ARRAY[NEW."id"]);
  END IF;
  RETURN NULL;
END;
$$;
CREATE TRIGGER "Site_structure_version" AFTER INSERT OR UPDATE ON "Site"
  FOR EACH ROW EXECUTE FUNCTION "docgraph_site_version_row"();

-- Section groups, sections, site spaces, share links: the row's site (both sites if it moved).
CREATE FUNCTION "docgraph_site_child_changed"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    PERFORM "docgraph_bump_sites"(ARRAY[NEW."siteId"]);
  ELSIF TG_OP = 'DELETE' THEN
    PERFORM "docgraph_bump_sites"(ARRAY[OLD."siteId"]);
  ELSE
    PERFORM "docgraph_bump_sites"(ARRAY[OLD."siteId", NEW."siteId"]);
  END IF;
  RETURN NULL;
END;
$$;
CREATE TRIGGER "SiteSectionGroup_structure_version" AFTER INSERT OR UPDATE OR DELETE ON "SiteSectionGroup"
  FOR EACH ROW EXECUTE FUNCTION "docgraph_site_child_changed"();
CREATE TRIGGER "SiteSection_structure_version" AFTER INSERT OR UPDATE OR DELETE ON "SiteSection"
  FOR EACH ROW EXECUTE FUNCTION "docgraph_site_child_changed"();
CREATE TRIGGER "SiteSpace_structure_version" AFTER INSERT OR UPDATE OR DELETE ON "SiteSpace"
  FOR EACH ROW EXECUTE FUNCTION "docgraph_site_child_changed"();
CREATE TRIGGER "ShareLink_structure_version" AFTER INSERT OR UPDATE OR DELETE ON "ShareLink"
  FOR EACH ROW EXECUTE FUNCTION "docgraph_site_child_changed"();

-- A space shown by site spaces: every site showing it. Opening a change request (only
-- "changeRequestSeq" moves) changes nothing a reader sees and bumps nothing.
CREATE FUNCTION "docgraph_space_changed"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM "docgraph_bump_sites"(ARRAY(SELECT DISTINCT "siteId" FROM "SiteSpace" WHERE "spaceId" = NEW."id"));
  RETURN NULL;
END;
$$;
CREATE TRIGGER "Space_structure_version" AFTER UPDATE ON "Space"
  FOR EACH ROW
  WHEN ((OLD."title", OLD."emoji", OLD."icon", OLD."visibility", OLD."editMode", OLD."defaultLevel", OLD."revisionId", OLD."deletedAt", OLD."organizationId", OLD."parentId", OLD."position", OLD."updatedAt")
        IS DISTINCT FROM
        (NEW."title", NEW."emoji", NEW."icon", NEW."visibility", NEW."editMode", NEW."defaultLevel", NEW."revisionId", NEW."deletedAt", NEW."organizationId", NEW."parentId", NEW."position", NEW."updatedAt"))
  EXECUTE FUNCTION "docgraph_space_changed"();
