// Idempotency keys on writes: a REST POST/PATCH/PUT/DELETE or a GraphQL POST sent with an
// `Idempotency-Key` header runs at most once per caller and key; a retry (the answer was lost,
// the connection dropped) gets the first answer again, marked `Idempotent-Replayed: true`.
//
// The claim ("IdempotencyKey", one row per caller and key):
// - before the request runs, one statement claims the key with a lease, or reads the row that
//   holds it (a retry of a finished request gets its answer from that statement; a concurrent
//   retry gets 409 and Retry-After while the first one runs);
// - every transaction of the request marks the row `applied` before it commits
//   (db/transaction.ts `writeClaimScope`), so "the change happened" and the mark are one commit;
// - the answer (status, the headers a client reads, body up to STORED_BODY_MAX) is stored after
//   it was produced; a 5xx or a failure before any change releases the key for a fresh attempt.
// A process that dies mid-request leaves a running claim: once its lease ran out, a retry takes
// it over when nothing was applied, and gets a 409 saying the write was applied when something was
// (its answer is lost with the process: the client reads the resource to see the outcome).
// The same key with another request (method, path or body) is a 422. Keys live 24 hours
// (`purgeIdempotencyKeys`, hourly).
import crypto from 'node:crypto';
import type http from 'node:http';
import type { Db, Tx } from '../db/client.ts';
import { writeClaimScope, type WriteClaim } from '../db/transaction.ts';
import { errorBody } from '../lib/errors.ts';
import type { RequestRecord } from '../graphql/context.ts';
import type { Edge } from './edge.ts';
import { sendJson } from './compression.ts';

export const IDEMPOTENCY_HEADER = 'idempotency-key';
export const REPLAYED_HEADER = 'Idempotent-Replayed';
/** How long a running claim holds its key before a retry may look at it again. */
export const CLAIM_LEASE_MS = 60_000;
/** How long a key and its answer are kept. */
export const KEY_RETENTION_HOURS = 24;
/** Answers larger than this are not kept: a retry of such a write gets a 409 saying it was applied. */
export const STORED_BODY_MAX = 1024 * 1024;
/** The answer headers a replay carries again (the rest belong to the connection or the moment; the read-your-writes token stays valid). */
const REPLAYED_HEADERS = ['content-type', 'content-encoding', 'location', 'etag', 'vary', 'x-docgraph-lsn'];

const WRITE_METHODS = new Set(['POST', 'PATCH', 'PUT', 'DELETE']);

/** The key of a write request that carries one (and is a write), else undefined; a malformed key is a 400. */
export function idempotencyKeyOf(req: http.IncomingMessage): string | undefined | { invalid: string } {
  const raw = req.headers[IDEMPOTENCY_HEADER];
  if (raw === undefined || !WRITE_METHODS.has(req.method ?? 'GET')) return undefined;
  if (Array.isArray(raw)) return { invalid: 'must be sent once' };
  if (raw.length < 1 || raw.length > 255 || !/^[\x21-\x7e]+$/.test(raw)) return { invalid: 'must be 1 to 255 visible ASCII characters' };
  return raw;
}

type ClaimRow = { fingerprint: string; state: string; applied: boolean; leaseExpired: boolean; status: number | null; headers: Record<string, string> | null; body: Buffer | null };
/** The claim statement's answer: claimed, or the row that holds the key (all null when this statement cannot see it). */
type ClaimAttempt = { claimed: true } | ({ claimed: false } & (ClaimRow | { [K in keyof ClaimRow]: null }));

/**
 * Run `handle` under the request's idempotency key: at most once per caller and key, with the
 * first answer replayed to retries. Requests without a caller run as they are (they get their 401).
 */
export async function runIdempotent(edge: Edge, req: http.IncomingMessage, res: http.ServerResponse, record: RequestRecord, key: string, handle: () => Promise<unknown>): Promise<unknown> {
  const viewer = await edge.viewerFor(req, record);
  if (!viewer) return handle();
  const prisma = edge.deps.prisma;
  const userId = viewer.user.id;
  const target = `${req.method} ${req.url}`;

  // One statement claims the key or, when it is taken, reads the row as it was (with its answer).
  const [row] = await prisma.$queryRaw<ClaimAttempt[]>`
    WITH claim AS (
      INSERT INTO "IdempotencyKey" ("userId", "key", "fingerprint", "leaseUntil")
      VALUES (${userId}, ${key}, '', now() + ${CLAIM_LEASE_MS} * interval '1 millisecond')
      ON CONFLICT ("userId", "key") DO NOTHING
      RETURNING 1
    )
    SELECT EXISTS (SELECT 1 FROM claim) AS "claimed", k."fingerprint", k."state", k."applied", k."leaseUntil" < now() AS "leaseExpired", k."status", k."headers", k."body"
    FROM (VALUES (1)) AS one
    LEFT JOIN "IdempotencyKey" k ON k."userId" = ${userId} AND k."key" = ${key} AND NOT EXISTS (SELECT 1 FROM claim)`;
  if (!row.claimed) {
    // Taken by a request that began after this statement's snapshot: it runs (or has just ended).
    if (row.state === null) return conflict(res, 'A request with this Idempotency-Key is still running; retry it later', 1);
    if (row.state === 'done') {
      const { body, release } = await edge.read(req);
      release();
      if (row.fingerprint !== fingerprintOf(target, bodyHash(body))) return mismatch(res);
      return replay(res, row);
    }
    if (!row.leaseExpired) return conflict(res, 'A request with this Idempotency-Key is still running; retry it later', 1);
    if (row.applied) return conflict(res, 'A request with this Idempotency-Key was applied, but its answer was lost: read the resource to see the outcome');
    // The first attempt died before changing anything: this one takes its place.
    const taken = await prisma.$executeRaw`
      UPDATE "IdempotencyKey" SET "leaseUntil" = now() + ${CLAIM_LEASE_MS} * interval '1 millisecond'
      WHERE "userId" = ${userId} AND "key" = ${key} AND "state" = 'running' AND NOT "applied" AND "leaseUntil" < now()`;
    if (taken === 0) return conflict(res, 'A request with this Idempotency-Key is still running; retry it later', 1);
  }

  let settled: Promise<void> | undefined;
  const settleOnce = (answer: Answer, failed: boolean) =>
    (settled ??= settle(prisma, userId, key, fingerprintOf(target, record.bodySha256 ?? bodyHash(Buffer.alloc(0))), answer, failed || answer.status >= 500).catch((err) =>
      edge.deps.log.warn({ err, key }, 'idempotency key not settled'),
    ));
  // The answer is stored before its last bytes leave: a client that has the answer and sends the
  // key again finds it stored, never "still running".
  const captured = captureAnswer(res, (answer) => settleOnce(answer, false));
  const claim: WriteClaim = {
    mark: async (client: Tx = prisma) => void (await client.$executeRaw`UPDATE "IdempotencyKey" SET "applied" = true WHERE "userId" = ${userId} AND "key" = ${key}`),
  };
  try {
    return await writeClaimScope.run(claim, handle);
  } finally {
    // A handler that threw, or never ended its answer: what was applied stays claimed.
    await settleOnce(captured(), !captured().complete);
  }
}

/**
 * Store the answer of a request that changed something (a retry replays it). One that changed
 * nothing releases its key: running it again is safe, and gives the answer of that moment.
 */
async function settle(prisma: Db, userId: string, key: string, fingerprint: string, answer: Answer, failed: boolean) {
  const keep = !failed && answer.complete && answer.body.length <= STORED_BODY_MAX && !/^(text\/event-stream|multipart\/)/.test(answer.headers['content-type'] ?? '');
  if (keep) {
    const stored = await prisma.$executeRaw`
      UPDATE "IdempotencyKey" SET "state" = 'done', "fingerprint" = ${fingerprint}, "status" = ${answer.status},
        "headers" = ${JSON.stringify(answer.headers)}::jsonb, "body" = ${answer.body}
      WHERE "userId" = ${userId} AND "key" = ${key} AND "applied"`;
    if (stored) return;
  }
  const released = await prisma.$executeRaw`DELETE FROM "IdempotencyKey" WHERE "userId" = ${userId} AND "key" = ${key} AND NOT "applied"`;
  // Applied without an answer to keep: the claim stays until it expires, and a retry is told the write was applied.
  if (!released) await prisma.$executeRaw`UPDATE "IdempotencyKey" SET "fingerprint" = ${fingerprint}, "leaseUntil" = now() WHERE "userId" = ${userId} AND "key" = ${key} AND "state" = 'running'`;
}

type Answer = { status: number; headers: Record<string, string>; body: Buffer; complete: boolean };

/**
 * Copies what the request's handler writes to `res` (status, headers, bytes), to store it; at the
 * handler's `end`, `beforeEnd` runs (the answer is stored) before the last bytes are sent.
 */
function captureAnswer(res: http.ServerResponse, beforeEnd: (answer: Answer) => Promise<void>): () => Answer {
  const chunks: Buffer[] = [];
  let size = 0;
  let ended = false;
  const write = res.write.bind(res) as (...a: any[]) => boolean;
  const end = res.end.bind(res) as (...a: any[]) => http.ServerResponse;
  const keep = (chunk: unknown, encoding?: unknown) => {
    if (chunk === undefined || chunk === null || typeof chunk === 'function') return;
    const buf = Buffer.isBuffer(chunk) ? chunk : chunk instanceof Uint8Array ? Buffer.from(chunk) : Buffer.from(String(chunk), typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8');
    size += buf.length;
    if (size <= STORED_BODY_MAX) chunks.push(buf);
  };
  const answer = (): Answer => {
    const headers: Record<string, string> = {};
    for (const name of REPLAYED_HEADERS) {
      const v = res.getHeader(name);
      if (v !== undefined) headers[name] = Array.isArray(v) ? v.join(', ') : String(v);
    }
    return { status: res.statusCode, headers, body: size <= STORED_BODY_MAX ? Buffer.concat(chunks) : Buffer.alloc(STORED_BODY_MAX + 1), complete: ended };
  };
  res.write = ((chunk: unknown, ...rest: unknown[]) => {
    keep(chunk, rest[0]);
    return write(chunk, ...rest);
  }) as typeof res.write;
  res.end = ((chunk?: unknown, ...rest: unknown[]) => {
    if (ended) return end(chunk, ...rest);
    ended = true;
    keep(chunk, rest[0]);
    void beforeEnd(answer()).finally(() => end(chunk, ...rest));
    return res;
  }) as typeof res.end;
  return answer;
}

function replay(res: http.ServerResponse, row: ClaimRow) {
  for (const [k, v] of Object.entries(row.headers ?? {})) res.setHeader(k, v);
  res.setHeader(REPLAYED_HEADER, 'true');
  res.statusCode = row.status ?? 200;
  res.end(row.body ?? undefined);
}

export const bodyHash = (body: Buffer) => crypto.createHash('sha256').update(body).digest('hex');

/** What makes two requests "the same" for a key: method, path and query, and the body's hash. */
export function fingerprintOf(target: string, bodySha256: string): string {
  return crypto.createHash('sha256').update(`${target}\n${bodySha256}`).digest('hex');
}

function conflict(res: http.ServerResponse, message: string, retryAfter?: number) {
  if (retryAfter) res.setHeader('Retry-After', String(retryAfter));
  return sendJson(res, 409, errorBody(409, message));
}

function mismatch(res: http.ServerResponse) {
  return sendJson(res, 422, errorBody(422, 'This Idempotency-Key was used with another request (method, path or body); use a new key for a new request'));
}

/** Hourly: keys older than KEY_RETENTION_HOURS, at most 10,000 per run (the next run takes the rest). */
export async function purgeIdempotencyKeys(deps: { prisma: Db }): Promise<number> {
  return deps.prisma.$executeRaw`
    DELETE FROM "IdempotencyKey" WHERE ctid = ANY(ARRAY(
      SELECT ctid FROM "IdempotencyKey" WHERE "createdAt" < now() - ${KEY_RETENTION_HOURS} * interval '1 hour' LIMIT 10000))`;
}
