// Markdown is parsed off the event loop: a pool of worker threads (piscina) runs the parser, and
// a task that runs past its deadline is ended by terminating its thread. remark is quadratic on
// some inputs (`*a` × 15,000 took 22 s) and recurses per level of nesting (`> ` × 20,000
// overflowed the stack), so no request may run it on the loop, and none may run it without a
// budget. Writes parse once and store the result with the page version or comment; reads take
// what is stored (docs/decisions.md, "Markdown").
//
// The deadline counts from the moment a worker starts the task (it says so on a MessagePort),
// so time spent queued behind other parses is not charged to it. It is wall-clock time of a
// thread that does nothing else: on a machine shared with other load it is a little more than
// the CPU time the parse got.
import os from 'node:os';
import { MessageChannel } from 'node:worker_threads';
import { Piscina } from 'piscina';
import { AppError, badRequest } from './errors.ts';
import { InvalidDocumentError, unparsedMarkdown, type JSONDocument, type Section, type StoredLink } from './markdown.ts';
import type { WorkerResult, WorkerTask } from './markdown-worker.ts';

export type ParsedMarkdown = { document: JSONDocument; links: StoredLink[]; sections: Section[] };

export type MarkdownPoolSettings = {
  /** A task running longer than this is ended and refused, ms. */
  timeoutMs: number;
  /** Worker threads at most. */
  threads: number;
  /** Block quotes and list levels a page may nest. */
  maxNesting: number;
  /**
   * Whose parse this is (the app: the request's user, else `background` for jobs). Threads are
   * shared out between them in turn, so one caller's flood waits behind itself, not others.
   */
  tenantOf: () => string;
};

/** Why content was refused: it overran the deadline, nests too deep, needs too much memory, or the pool's queue is full. */
export type RefusalReason = 'timeout' | 'nesting' | 'memory' | 'busy';

export class MarkdownRefusedError extends Error {
  constructor(
    readonly reason: RefusalReason,
    message: string,
  ) {
    super(message);
    this.name = 'MarkdownRefusedError';
  }
}

/** The caller gave up on the task (its `signal`): another part of the same write was refused. */
export class ParseCancelled extends Error {
  constructor() {
    super('parse cancelled');
    this.name = 'ParseCancelled';
  }
}

/** Tasks waiting for a thread, at most; more are refused at once (503) rather than queued. */
const MAX_QUEUE = 1000;
/** Heap of one worker thread, MiB: a parse that needs more ends its thread, not the process. */
const WORKER_HEAP_MB = 256;

const settings: MarkdownPoolSettings = { timeoutMs: 5000, threads: 2, maxNesting: 100, tenantOf: () => 'any' };
let pool: Piscina | undefined;

/** Apply the configuration (createApp). The thread count takes effect when the pool is next created. */
export function configureMarkdownPool(next: Partial<MarkdownPoolSettings>) {
  Object.assign(settings, next);
}

export function markdownPoolSettings(): Readonly<MarkdownPoolSettings> {
  return { ...settings };
}

/** Tasks handed to the pool since start-up, by kind: tests use it to show that reads parse nothing. */
const calls = { parse: 0, sections: 0, toMarkdown: 0 };
export function markdownPoolCalls(): Readonly<typeof calls> {
  return { ...calls };
}

function workerFile(): string {
  // From the sources (tsx, vitest) this module is a .ts file beside the worker; in a bundle it is
  // the bundle itself (.build/server/main.mjs) and scripts/build.mjs writes the worker beside it.
  return import.meta.url.endsWith('.ts') ? new URL('./markdown-worker-dev.mjs', import.meta.url).href : new URL('./markdown-worker.mjs', import.meta.url).href;
}

function getPool(): Piscina {
  const threads = Math.max(1, settings.threads);
  pool ??= new Piscina({
    filename: workerFile(),
    // Threads stay: writes parse inside their transaction, which must not wait for a thread to
    // start and load remark. One ended for overrunning its deadline is replaced at once.
    minThreads: threads,
    maxThreads: threads,
    idleTimeout: Number.POSITIVE_INFINITY,
    maxQueue: MAX_QUEUE,
    // Below the event loop's priority where the OS allows it: parsing never delays /healthz.
    niceIncrement: os.platform() === 'win32' ? 0 : 5,
    resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB },
  });
  return pool;
}

/**
 * Start the threads and load the parser in each (createApp), so that the first write does not
 * wait for them inside its transaction.
 */
export async function startMarkdownPool() {
  const threads = getPool().options.maxThreads;
  await Promise.all(Array.from({ length: threads }, () => parseMarkdown('# ready')));
}

/** Stop the threads (process shutdown). A later call starts a new pool. */
export async function closeMarkdownPool() {
  const p = pool;
  pool = undefined;
  for (const list of waiting.values()) for (const entry of list) entry.cancel(new Error('the markdown pool was closed'));
  waiting.clear();
  queued = 0;
  await p?.destroy();
}

// ------------------------------------------------------------------ fair turns

// At most `threads` tasks are in piscina at once; the others wait here, per tenant, and a freed
// thread goes to the waiting tenant whose last task started longest ago (one that never started
// first). A caller that sends 50 slow pages at once (or many writes) thus takes turns with
// everyone else: another tenant waits for at most one task per thread (the deadline), not for the
// flood. Piscina's own queue would serve them in arrival order.
const waiting = new Map<string, Array<{ go: () => void; cancel: (e: Error) => void }>>();
const lastStart = new Map<string, number>();
let starts = 0;
let inFlight = 0;
let queued = 0;

function begin(tenant: string) {
  inFlight++;
  lastStart.set(tenant, ++starts);
  if (lastStart.size > 10_000) lastStart.delete(lastStart.keys().next().value!); // forget the oldest
}

/** Wait for a turn of `tenant` (at once when a thread is free and nobody waits). */
function takeTurn(tenant: string, signal?: AbortSignal): Promise<void> {
  if (inFlight < Math.max(1, settings.threads) && queued === 0) {
    begin(tenant);
    return Promise.resolve();
  }
  if (queued >= MAX_QUEUE) return Promise.reject(new MarkdownRefusedError('busy', 'too much content is waiting to be parsed; retry in a few seconds'));
  return new Promise<void>((resolve, reject) => {
    const entry = {
      go: () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      },
      cancel: reject,
    };
    const onAbort = () => {
      const list = waiting.get(tenant);
      const i = list?.indexOf(entry) ?? -1;
      if (i < 0) return;
      list!.splice(i, 1);
      queued--;
      if (!list!.length) waiting.delete(tenant);
      reject(new ParseCancelled());
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    const list = waiting.get(tenant) ?? [];
    list.push(entry);
    waiting.set(tenant, list);
    queued++;
  });
}

/** A task ended: hand its thread to the tenant whose turn it is. */
function endTurn() {
  inFlight--;
  let next: string | undefined;
  for (const tenant of waiting.keys()) if (next === undefined || (lastStart.get(tenant) ?? 0) < (lastStart.get(next) ?? 0)) next = tenant;
  if (next === undefined) return;
  const list = waiting.get(next)!;
  const entry = list.shift()!;
  queued--;
  if (!list.length) waiting.delete(next);
  begin(next);
  entry.go();
}

type Task = WorkerTask extends infer T ? (T extends unknown ? Omit<T, 'started'> : never) : never;

async function run(task: Task, signal?: AbortSignal): Promise<unknown> {
  if (signal?.aborted) throw new ParseCancelled();
  calls[task.op]++;
  await takeTurn(settings.tenantOf(), signal);
  try {
    return await runNow(task, signal);
  } finally {
    endTurn();
  }
}

async function runNow(task: Task, signal?: AbortSignal): Promise<unknown> {
  const { port1, port2 } = new MessageChannel();
  const abort = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  let overran = false;
  port1.once('message', () => {
    timer = setTimeout(() => {
      overran = true;
      abort.abort();
    }, settings.timeoutMs);
  });
  const cancel = () => abort.abort();
  signal?.addEventListener('abort', cancel);
  try {
    const result = (await getPool().run({ ...task, started: port2 }, { transferList: [port2], signal: abort.signal })) as WorkerResult;
    if (result.ok) return result.value;
    if (result.reason === 'invalid') throw new InvalidDocumentError(result.message);
    throw new MarkdownRefusedError('nesting', result.message);
  } catch (e) {
    if (abort.signal.aborted && !overran) throw new ParseCancelled();
    if (overran) throw new MarkdownRefusedError('timeout', `does not parse within ${settings.timeoutMs} ms; split the page or simplify its markup`);
    if (e instanceof Error && e.message === 'Task queue is at limit') throw new MarkdownRefusedError('busy', 'too much content is waiting to be parsed; retry in a few seconds');
    if ((e as NodeJS.ErrnoException)?.code === 'ERR_WORKER_OUT_OF_MEMORY') throw new MarkdownRefusedError('memory', 'needs more memory to parse than a page may use');
    throw e;
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', cancel);
    port1.close();
  }
}

/** Parse markdown in the pool: its JSON document, its links and its search sections. */
export async function parseMarkdown(markdown: string, signal?: AbortSignal): Promise<ParsedMarkdown> {
  return (await run({ op: 'parse', markdown, maxNesting: settings.maxNesting }, signal)) as ParsedMarkdown;
}

/**
 * For reads of content written before documents and links were stored (until the backfill job
 * reaches it): parsed in the pool, and what does not parse within the budget is read as the
 * backfill will store it (unparsed, lib/markdown.ts `unparsedMarkdown`). Never on the event loop.
 */
export async function parseForRead(markdown: string): Promise<ParsedMarkdown> {
  try {
    return await parseMarkdown(markdown);
  } catch (e) {
    if (e instanceof MarkdownRefusedError) return unparsedMarkdown(markdown);
    throw e;
  }
}

/** Only the search sections, for reads of old versions without stored sections; unparsable text is one section. */
export async function sectionsForRead(markdown: string): Promise<Section[]> {
  try {
    return (await run({ op: 'sections', markdown, maxNesting: settings.maxNesting })) as Section[];
  } catch (e) {
    if (e instanceof MarkdownRefusedError) return unparsedMarkdown(markdown).sections;
    throw e;
  }
}

/** A JSON document (untrusted input) → markdown, in the pool. Throws InvalidDocumentError for a malformed one. */
export async function documentToMarkdownInPool(document: unknown): Promise<string> {
  return (await run({ op: 'toMarkdown', document })) as string;
}

/** The API error for a refusal: a 400 naming the field (a 503 when the pool is full); anything else unchanged. */
export function refusalError(e: unknown, field: string): unknown {
  if (!(e instanceof MarkdownRefusedError)) return e;
  if (e.reason === 'busy') return new AppError('SERVICE_UNAVAILABLE', e.message);
  return badRequest(field, e.message);
}

/** Parse content a user sends; a refusal becomes a 400 naming `field`. */
export async function parseMarkdownFor(markdown: string, field: string): Promise<ParsedMarkdown> {
  try {
    return await parseMarkdown(markdown);
  } catch (e) {
    throw refusalError(e, field);
  }
}
