-- A reaction belongs to a user as much as to a comment: reactions of a deleted user go with
-- the user (they were left pointing nowhere). The relation also lets a comment listing load the
-- reacting users with the reactions, in one statement.
DELETE FROM "Reaction" r WHERE NOT EXISTS (SELECT 1 FROM "User" u WHERE u."id" = r."userId");
CREATE INDEX "Reaction_userId_idx" ON "Reaction"("userId");
ALTER TABLE "Reaction" ADD CONSTRAINT "Reaction_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;
