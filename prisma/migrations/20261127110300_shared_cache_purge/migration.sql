-- What the shared-cache purge feed (src/http/purge.ts) has told the configured purger, per site:
-- the site structure version it last purged, and the version up to which it repeated the purge
-- of older versions' keys (the purge race). Kept in the database so a restarted worker, or a
-- purger that was down, catches up on what it missed. No foreign key: a deleted site's row is
-- how the feed knows it still owes that site a purge.
CREATE TABLE "SharedCachePurge" (
  "siteId" TEXT NOT NULL PRIMARY KEY,
  "purgedVersion" BIGINT NOT NULL,
  "repeatedVersion" BIGINT NOT NULL,
  "purgedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP
);
