-- Revisions' page trees as content-addressed nodes shared between revisions
-- (src/domain/revision-tree.ts, src/lib/page-trie.ts). A node is immutable: its key is the
-- sha256 (base64url) of its canonical JSON, writers insert with ON CONFLICT DO NOTHING, and a
-- revision keeps only the hash of its root in "treeRoot" (null until the backfill converts its
-- JSON "tree").
CREATE TABLE "RevisionTreeNode" (
    "hash" TEXT NOT NULL,
    "entries" JSONB NOT NULL,

    CONSTRAINT "RevisionTreeNode_pkey" PRIMARY KEY ("hash")
);
-- A node is at most about 7 kB (64 entries): keep it in the row, compressed when that helps,
-- rather than in TOAST (a second heap and index to write and read for every node).
ALTER TABLE "RevisionTreeNode" ALTER COLUMN "entries" SET STORAGE MAIN;

ALTER TABLE "Revision" ADD COLUMN "treeRoot" TEXT;
