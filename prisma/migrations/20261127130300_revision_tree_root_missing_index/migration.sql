-- The backfill of revisions' stored trees (src/domain/revision-tree.ts backfillRevisionTreesTask)
-- runs on a schedule; once every revision has its root, a run is one look at this index, which is
-- then empty. (A partial index: not expressible in schema.prisma.)
CREATE INDEX "Revision_treeRoot_missing_idx" ON "Revision"("id") WHERE "treeRoot" IS NULL;
