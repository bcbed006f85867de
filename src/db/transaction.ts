// Interactive transactions that retry PostgreSQL's "try again" failures: serialization failures
// (SQLSTATE 40001) and deadlocks (40P01). The whole callback runs again on a fresh transaction,
// a bounded number of times with a small jittered backoff; any other error, and the last
// retryable one, propagates unchanged.
//
// Callbacks must be safe to re-run: everything they wrote to the database was rolled back, so
// they only need to avoid side effects outside it whose repetition matters. Writing new blobs to
// file storage under fresh keys is fine (bytes of an attempt that rolled back are unreferenced and
// the orphan sweep removes them, domain/cleanup.ts); network fetches belong before the transaction.
//
// Prisma 7 on the pg driver adapter reports these errors as PrismaClientKnownRequestError with
// code P2034 (model operations) or P2010 (raw queries), the SQLSTATE in
// `meta.driverAdapterError.cause.originalCode` and `kind: 'TransactionWriteConflict'`
// (docs/decisions.md "Transactions, lock order and retries").
import { AsyncLocalStorage } from 'node:async_hooks';
import { transactionScope, type Db, type Tx } from './client.ts';
import type { Prisma } from '../generated/prisma/client.ts';

/** SQLSTATEs after which re-running the transaction can succeed. */
export const RETRYABLE_SQLSTATES = new Set(['40001', '40P01']);

/** Attempts in all (the first run plus retries). */
export const TRANSACTION_ATTEMPTS = 4;
/** Backoff before retry n (1-based) is uniform in [0, BASE · 2^(n-1)) ms. */
const BACKOFF_BASE_MS = 25;

export type TransactionOptions = {
  maxWait?: number;
  timeout?: number;
  isolationLevel?: Prisma.TransactionIsolationLevel;
  /** Attempts in all; default TRANSACTION_ATTEMPTS. */
  attempts?: number;
  /** Called before each retry (logging, tests). */
  onRetry?: (info: RetryInfo) => void;
};

/**
 * The write claim of the running request (an `Idempotency-Key`, src/http/idempotency.ts): every
 * transaction marks it with its own client before it commits, so the mark and the change commit
 * together or not at all; a one-statement write marks it right after, on the pool (`mark()`, a gap
 * of one round trip).
 */
export type WriteClaim = { mark(client?: Tx): Promise<void> };
export const writeClaimScope = new AsyncLocalStorage<WriteClaim>();

export type RetryInfo = { attempt: number; sqlState: string; error: unknown };
const retryListeners = new Set<(info: RetryInfo) => void>();

/** Subscribe to every retry of every `transaction()` in this process (logging, tests); returns the unsubscribe function. */
export function onTransactionRetry(listener: (info: RetryInfo) => void) {
  retryListeners.add(listener);
  return () => retryListeners.delete(listener);
}

/** The SQLSTATE of a serialization failure or deadlock anywhere in `err`'s chain, else undefined. */
export function retryableSqlState(err: unknown): string | undefined {
  const seen = new Set<unknown>();
  const stack: unknown[] = [err];
  while (stack.length) {
    const e = stack.pop() as Record<string, any> | null | undefined;
    if (!e || typeof e !== 'object' || seen.has(e)) continue;
    seen.add(e);
    for (const code of [e.originalCode, e.code]) {
      if (typeof code === 'string' && RETRYABLE_SQLSTATES.has(code)) return code;
    }
    // Prisma's own code for "write conflict or deadlock, please retry" (SQLSTATE not always kept).
    if (e.code === 'P2034' || e.kind === 'TransactionWriteConflict') {
      const inner = e.meta?.driverAdapterError?.cause?.originalCode ?? e.cause?.originalCode;
      return typeof inner === 'string' ? inner : '40001';
    }
    stack.push(e.cause, e.meta?.driverAdapterError, e.meta?.driverAdapterError?.cause);
  }
  return undefined;
}

/**
 * `prisma.$transaction(fn, options)`, re-run on serialization failures and deadlocks. Use it for
 * every interactive transaction in the domain layer.
 */
export async function transaction<T>(prisma: Pick<Db, '$transaction'>, fn: (tx: Tx) => Promise<T>, options: TransactionOptions = {}): Promise<T> {
  const { attempts = TRANSACTION_ATTEMPTS, onRetry, ...txOptions } = options;
  // The scope closes with the callback: work it started that outlives it is not "inside".
  return retrying(
    () =>
      prisma.$transaction((tx) => {
        const scope = { open: true };
        return transactionScope
          .run(scope, async () => {
            const out = await fn(tx);
            await writeClaimScope.getStore()?.mark(tx);
            return out;
          })
          .finally(() => (scope.open = false));
      }, txOptions),
    attempts,
    onRetry,
  );
}

/**
 * One autocommit statement (a write that is atomic on its own, e.g. a data-modifying `WITH`),
 * re-run on a deadlock or serialization failure like `transaction()` re-runs its callback. No
 * BEGIN/COMMIT round trips and no interactive-transaction bookkeeping in Prisma.
 */
export async function statement<T>(fn: () => Promise<T>, attempts = TRANSACTION_ATTEMPTS): Promise<T> {
  return retrying(async () => {
    const out = await fn();
    await writeClaimScope.getStore()?.mark();
    return out;
  }, attempts);
}

/** Runs `run` again after a retryable failure, at most `attempts` times in all, with the jittered backoff. */
async function retrying<T>(run: () => Promise<T>, attempts: number, onRetry?: (info: RetryInfo) => void): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await run();
    } catch (err) {
      const sqlState = retryableSqlState(err);
      if (!sqlState || attempt >= attempts) throw err;
      const info = { attempt, sqlState, error: err };
      onRetry?.(info);
      for (const l of retryListeners) l(info);
      await new Promise((resolve) => setTimeout(resolve, Math.random() * BACKOFF_BASE_MS * 2 ** (attempt - 1)));
    }
  }
}
