-- SAML responses already accepted (by SHA-256 of the posted response), so a captured response
-- cannot be replayed within its validity window. Rows are kept past expiry only until cleaned.
CREATE TABLE "SamlResponseUse" (
    "digest" TEXT NOT NULL,
    "providerId" TEXT NOT NULL,
    "expiresAt" TIMESTAMP(3) NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "SamlResponseUse_pkey" PRIMARY KEY ("digest")
);
CREATE INDEX "SamlResponseUse_expiresAt_idx" ON "SamlResponseUse"("expiresAt");
