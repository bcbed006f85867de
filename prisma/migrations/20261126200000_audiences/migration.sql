-- Published sites for their audiences (issue 21): scoped API tokens for front-end renderers,
-- per-site visitor keys (the JWT of `visitor-auth` sites and of signed claims), visitor
-- authentication settings, and site redirects.
CREATE TYPE "TokenScope" AS ENUM ('full', 'published');
ALTER TABLE "ApiToken" ADD COLUMN "scope" "TokenScope" NOT NULL DEFAULT 'full';
ALTER TABLE "ApiToken" ADD COLUMN "siteIds" TEXT[] NOT NULL DEFAULT ARRAY[]::TEXT[];

ALTER TABLE "Site" ADD COLUMN "visitorAuth" JSONB;

CREATE TABLE "SiteVisitorKey" (
    "id" TEXT NOT NULL,
    "siteId" TEXT NOT NULL,
    "algorithm" TEXT NOT NULL,
    "secret" TEXT,
    "publicKey" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "retiresAt" TIMESTAMP(3),
    CONSTRAINT "SiteVisitorKey_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "SiteVisitorKey_siteId_idx" ON "SiteVisitorKey"("siteId");
ALTER TABLE "SiteVisitorKey" ADD CONSTRAINT "SiteVisitorKey_siteId_fkey" FOREIGN KEY ("siteId") REFERENCES "Site"("id") ON DELETE CASCADE ON UPDATE CASCADE;

CREATE TABLE "SiteRedirect" (
    "id" TEXT NOT NULL,
    "siteId" TEXT NOT NULL,
    "source" TEXT NOT NULL,
    "destination" JSONB NOT NULL,
    "automatic" BOOLEAN NOT NULL DEFAULT false,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,
    CONSTRAINT "SiteRedirect_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "SiteRedirect_siteId_source_key" ON "SiteRedirect"("siteId", "source");
ALTER TABLE "SiteRedirect" ADD CONSTRAINT "SiteRedirect_siteId_fkey" FOREIGN KEY ("siteId") REFERENCES "Site"("id") ON DELETE CASCADE ON UPDATE CASCADE;
