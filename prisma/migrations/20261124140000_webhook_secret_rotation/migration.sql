-- Webhook secret rotation (src/domain/webhooks.ts rotateWebhookSecret): the secret a rotation
-- replaced keeps signing deliveries, as a second `v1=` of `X-Signature`, until
-- "previousSecretExpiresAt", so receivers can switch without dropping deliveries. One previous
-- secret at most: rotating again replaces it. Both null when there is none (or the rotation
-- asked for no overlap).
ALTER TABLE "Webhook" ADD COLUMN "previousSecret" TEXT;
ALTER TABLE "Webhook" ADD COLUMN "previousSecretExpiresAt" TIMESTAMP(3);
