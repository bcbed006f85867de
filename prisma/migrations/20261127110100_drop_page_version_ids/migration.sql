-- Revisions keep their page tree in the tree store ("treeRoot", "RevisionTreeNode"): the flat
-- "pageVersionIds" array repeated every page version of every revision behind a GIN index that
-- no query used (its pending-list flushes cost 20–24 MB of WAL at a time). Readers find a
-- revision's versions through its tree (src/domain/revision-tree.ts `revisionTree`).
DROP INDEX IF EXISTS "Revision_pageVersionIds_idx";
ALTER TABLE "Revision" DROP COLUMN "pageVersionIds";
-- The JSON "tree" stays for revisions the backfill has not given a root yet; new revisions may
-- leave it empty.
ALTER TABLE "Revision" ALTER COLUMN "tree" SET DEFAULT '[]';
