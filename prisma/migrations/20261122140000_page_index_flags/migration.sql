-- Page flags of the content-change batch (RevisionPageUpdate): search/robots indexing and the
-- adaptive-content condition, stored per page version like the other page properties.
ALTER TABLE "PageVersion" ADD COLUMN "noIndex" BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE "PageVersion" ADD COLUMN "noRobotsIndex" BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE "PageVersion" ADD COLUMN "condition" TEXT;
