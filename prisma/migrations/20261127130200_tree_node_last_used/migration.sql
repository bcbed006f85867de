-- Garbage collection of tree nodes no revision reaches any more (src/domain/revision-tree.ts
-- collectTreeGarbage). Nodes are shared by hash: a writer that builds a node equal to an existing
-- one does not insert it, it sets "lastUsed" (ON CONFLICT DO UPDATE), which locks the row against a
-- concurrent delete, and the collector deletes only nodes whose "lastUsed" is older than its grace
-- period. A constant default: existing rows get it without a table rewrite.
ALTER TABLE "RevisionTreeNode" ADD COLUMN "lastUsed" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP;
