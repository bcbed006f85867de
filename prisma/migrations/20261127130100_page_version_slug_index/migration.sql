-- A content batch checks that a new slug is unique among a page's siblings by looking up the
-- pages of the space that have that slug, instead of reading the parent's whole sibling list.
CREATE INDEX "PageVersion_spaceId_slug_idx" ON "PageVersion"("spaceId", "slug");
