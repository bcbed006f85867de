-- Organization listings of spaces and collections sort by (createdAt, id); found by the
-- benchmark's plan check (docs/performance.md).
CREATE INDEX "Space_organizationId_createdAt_id_idx" ON "Space"("organizationId", "createdAt", "id");
CREATE INDEX "Collection_organizationId_createdAt_id_idx" ON "Collection"("organizationId", "createdAt", "id");
