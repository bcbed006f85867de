-- Single-use tickets for a browser's EventSource (createSubscriptionTicket): each stands for its
-- API token on one GET /graphql event stream, for 60 seconds. Only the secret's SHA-256 is kept;
-- redeeming deletes the row (DELETE … RETURNING), so a ticket works once across every process.
CREATE TABLE "SubscriptionTicket" (
    "ticketHash" TEXT NOT NULL,
    "userId" TEXT NOT NULL,
    "tokenId" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expiresAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "SubscriptionTicket_pkey" PRIMARY KEY ("ticketHash")
);

CREATE INDEX "SubscriptionTicket_tokenId_idx" ON "SubscriptionTicket"("tokenId");
CREATE INDEX "SubscriptionTicket_expiresAt_idx" ON "SubscriptionTicket"("expiresAt");
