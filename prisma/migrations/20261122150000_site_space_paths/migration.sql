-- A site space's path and its space are unique within its container (a section, or the site's
-- root level when "sectionId" is NULL). NULLS NOT DISTINCT makes the root level one container;
-- schema.prisma declares the same keys with @@unique (Prisma cannot express NULLS NOT DISTINCT).
CREATE UNIQUE INDEX "SiteSpace_siteId_sectionId_path_key" ON "SiteSpace"("siteId", "sectionId", "path") NULLS NOT DISTINCT;
CREATE UNIQUE INDEX "SiteSpace_siteId_sectionId_spaceId_key" ON "SiteSpace"("siteId", "sectionId", "spaceId") NULLS NOT DISTINCT;
