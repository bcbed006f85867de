// Subscription tickets: how a browser's EventSource, which cannot send an Authorization header,
// opens an event stream (README "Live updates"; docs/decisions.md "Front-end clients: graphql-ws
// and EventSource"). `createSubscriptionTicket` (an authenticated mutation) returns a random secret
// that stands for the caller's API token on ONE `GET /graphql?…&ticket=…` event stream, within
// TICKET_TTL_MS. Stored as a SHA-256 hash in PostgreSQL, so every gateway process honours it;
// redeeming deletes the row (DELETE … RETURNING: one winner across processes), so it works once.
import type { Tx } from '../db/client.ts';
import { newSecret } from '../lib/ids.ts';
import { rateLimited } from '../lib/errors.ts';
import { hashToken } from './tokens.ts';
import type { Viewer } from './access.ts';

/** How long a ticket may wait for its stream. */
export const TICKET_TTL_MS = 60_000;
/** Unexpired, unused tickets one token may hold (RATE_LIMITED beyond): a front end needs one per stream it opens. */
export const MAX_TICKETS_PER_TOKEN = 50;

/** A new ticket for `viewer`'s token (in the caller's transaction); expired tickets are swept on the way. */
export async function issueSubscriptionTicket(tx: Tx, viewer: Viewer, now: Date): Promise<{ ticket: string; expiresAt: Date }> {
  await tx.subscriptionTicket.deleteMany({ where: { expiresAt: { lte: now } } });
  const live = await tx.subscriptionTicket.count({ where: { tokenId: viewer.tokenId } });
  if (live >= MAX_TICKETS_PER_TOKEN) throw rateLimited(`At most ${MAX_TICKETS_PER_TOKEN} unused subscription tickets per token: use them, or wait a minute for them to expire`, TICKET_TTL_MS / 1000);
  const ticket = newSecret('dgst');
  const expiresAt = new Date(now.getTime() + TICKET_TTL_MS);
  await tx.subscriptionTicket.create({ data: { ticketHash: hashToken(ticket), userId: viewer.user.id, tokenId: viewer.tokenId, createdAt: now, expiresAt } });
  return { ticket, expiresAt };
}

/**
 * The viewer a ticket stands for, using it up; null when it is unknown, already used, expired, or
 * its token no longer works (revoked, deleted, or now another user's — never).
 */
export async function redeemSubscriptionTicket(db: Tx, ticket: string, now: Date): Promise<Viewer | null> {
  if (ticket.length > 200) return null;
  const rows = await db.$queryRaw<Array<{ userId: string; tokenId: string; expiresAt: Date }>>`
    DELETE FROM "SubscriptionTicket" WHERE "ticketHash" = ${hashToken(ticket)} RETURNING "userId", "tokenId", "expiresAt"`;
  const row = rows[0];
  if (!row || row.expiresAt.getTime() <= now.getTime()) return null;
  const viewer = await viewerForTokenId(db, row.tokenId);
  return viewer && viewer.user.id === row.userId ? viewer : null;
}

/** The viewer of a token named by its id (a ticket's stream re-checks it this way): null when revoked or gone. */
export async function viewerForTokenId(db: Tx, tokenId: string): Promise<Viewer | null> {
  const record = await db.apiToken.findUnique({ where: { id: tokenId }, include: { user: true } });
  if (!record || record.revokedAt) return null;
  return record.scope === 'published'
    ? { user: record.user, tokenId: record.id, scope: { published: true as const, siteIds: record.siteIds } }
    : { user: record.user, tokenId: record.id };
}
