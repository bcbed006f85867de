// Every explicit lock a transaction takes, in one place, and the one order they are taken in
// (docs/decisions.md "Transactions, lock order and retries"). A transaction may skip levels, but never takes
// a lock of an earlier level after one of a later level:
//
//   0. first-run bootstrap advisory lock, alone in its transaction               lockBootstrap
//   1. organization tree   advisory lock per organization, several in id order   lockTree
//   2. organization row    FOR UPDATE                                            lockOrganization
//   3. site row            FOR UPDATE                                            lockSite
//   4. space row           FOR UPDATE ('update') or FOR KEY SHARE ('share')      lockSpace / lockSpaceAndChangeRequest
//   5. change request row  FOR NO KEY UPDATE                                     lockSpaceAndChangeRequest
//   6. the rest            import job, OpenAPI specification                      lockImportJob, lockOpenApiSpec
//
// Implicit locks count too: inserting a row takes FOR KEY SHARE on every row its foreign keys
// point at, and an UPDATE of a column with a unique index (Space.revisionId) takes FOR UPDATE on
// the row. That is why a writer of a change request's content (it inserts revisions pointing at
// the space) takes the space lock first in 'share' mode — otherwise it would hold the change
// request and then wait for the space behind a merge that holds the space and waits for the
// change request (a 40P01 deadlock). And why a writer of main takes FOR UPDATE up
// front instead of upgrading a weaker lock when it moves Space.revisionId.
//
// Transactions that still fail with a deadlock or serialization failure are re-run by
// `transaction()` (db/transaction.ts).
import type { Tx } from './client.ts';
import type { ChangeRequest, Space } from '../generated/prisma/client.ts';

// ------------------------------------------------------------------ 0: the first run

/**
 * Serialize the first-run bootstrap: gateways started together on an empty database would each
 * count no user and create an admin (the second fails on the token's unique hash and stops).
 */
export async function lockBootstrap(tx: Tx) {
  await tx.$queryRaw`SELECT 1 AS ok FROM pg_advisory_xact_lock(hashtextextended('docgraph:bootstrap', 0))`;
}

// ------------------------------------------------------------------ 1–3: organization, site

/** The advisory-lock key of an organization's content tree (`hashtextextended(key, 0)`). */
export const treeLockKey = (organizationId: string) => `docgraph:tree:${organizationId}`;

/** Serialize structural changes of organizations' content trees (transaction-scoped advisory locks, in id order). */
export async function lockTree(tx: Tx, ...organizationIds: string[]) {
  for (const id of [...new Set(organizationIds)].sort()) {
    await tx.$queryRaw`SELECT 1 AS ok FROM pg_advisory_xact_lock(hashtextextended(${treeLockKey(id)}, 0))`;
  }
}

/** Serializes role changes and removals within an organization (the last-admin rule). */
export async function lockOrganization(tx: Tx, organizationId: string) {
  await tx.$queryRaw`SELECT 1 FROM "Organization" WHERE id = ${organizationId} FOR UPDATE`;
}

/**
 * Serialize structural writes on one site: every transaction that changes positions takes this
 * row lock first, so two concurrent moves cannot both compute positions from the same snapshot.
 * False when the site does not exist.
 */
export async function lockSite(tx: Tx, siteId: string): Promise<boolean> {
  const rows = await tx.$queryRaw<Array<{ id: string }>>`SELECT "id" FROM "Site" WHERE "id" = ${siteId} FOR UPDATE`;
  return rows.length > 0;
}

// ------------------------------------------------------------------ 4–5: space, change request

export type LockedSpace = { revisionId: string | null; editMode: Space['editMode']; deletedAt: Date | null };

/**
 * - `update`: FOR UPDATE. The caller moves the space's current revision (merge, a batch or import
 *   straight into main): excludes every other writer of main and every `share` holder.
 * - `share`: FOR KEY SHARE. The caller writes rows of the space without moving main (a change
 *   request's revisions): main cannot move while it is held (moving it needs FOR UPDATE), other
 *   `share` holders and plain space updates (title, change request numbers) are not blocked.
 */
export type SpaceLockMode = 'update' | 'share';

/** Lock a space row (level 4); undefined when the space does not exist. */
export async function lockSpace(tx: Tx, spaceId: string, mode: SpaceLockMode = 'update'): Promise<LockedSpace | undefined> {
  const rows =
    mode === 'update'
      ? await tx.$queryRaw<LockedSpace[]>`
          SELECT "revisionId", "editMode"::text AS "editMode", "deletedAt" FROM "Space" WHERE id = ${spaceId} FOR UPDATE`
      : await tx.$queryRaw<LockedSpace[]>`
          SELECT "revisionId", "editMode"::text AS "editMode", "deletedAt" FROM "Space" WHERE id = ${spaceId} FOR KEY SHARE`;
  return rows[0];
}

/**
 * The space row (in `mode`), then the change request row (FOR NO KEY UPDATE: serializes writers
 * of the change request without blocking inserts that merely reference it, such as comments).
 * Every transaction that locks a change request goes through here. `changeRequest` is null when
 * it does not exist, `space` undefined when the space does not.
 */
export async function lockSpaceAndChangeRequest(
  tx: Tx,
  spaceId: string,
  changeRequestId: string,
  mode: SpaceLockMode,
): Promise<{ space: LockedSpace | undefined; changeRequest: ChangeRequest | null }> {
  const space = await lockSpace(tx, spaceId, mode);
  await tx.$queryRaw`SELECT 1 AS locked FROM "ChangeRequest" WHERE id = ${changeRequestId} FOR NO KEY UPDATE`;
  const changeRequest = await tx.changeRequest.findUnique({ where: { id: changeRequestId } });
  return { space, changeRequest };
}

// ------------------------------------------------------------------ 6: the rest

/** An import job's row (after its space and change request); its state, or undefined when gone. */
export async function lockImportJob(tx: Tx, jobId: string): Promise<string | undefined> {
  const rows = await tx.$queryRaw<Array<{ state: string }>>`SELECT state::text AS state FROM "ImportJob" WHERE id = ${jobId} FOR UPDATE`;
  return rows[0]?.state;
}

export type LockedOpenApiSpec = { sourceURL: string | null; sourceText: string | null; lastVersionId: string | null; processingState: string };

/** An OpenAPI specification's row; undefined when it was deleted. */
export async function lockOpenApiSpec(tx: Tx, specId: string): Promise<LockedOpenApiSpec | undefined> {
  const rows = await tx.$queryRaw<LockedOpenApiSpec[]>`
    SELECT "sourceURL", "sourceText", "lastVersionId", "processingState"::text AS "processingState" FROM "OpenApiSpec" WHERE id = ${specId} FOR UPDATE`;
  return rows[0];
}

/**
 * Serializes a user's token creations (the per-hour limit counts then inserts): the user's row FOR
 * NO KEY UPDATE, which rows pointing at the user (their FOR KEY SHARE) do not wait for.
 */
export async function lockUserTokens(tx: Tx, userId: string) {
  await tx.$queryRaw`SELECT 1 FROM "User" WHERE id = ${userId} FOR NO KEY UPDATE`;
}
