// Runs in the markdown pool's worker threads (lib/markdown-pool.ts), never on the event loop. A
// task first says on its `started` port that it began (the pool's deadline counts from there,
// not from the queue), then parses. Refusals it can tell itself (nesting too deep, an invalid
// JSON document) come back as values; the pool ends a task that overruns its deadline by
// terminating the thread.
import type { MessagePort } from 'node:worker_threads';
import { analyzeMarkdown, blockNesting, documentToMarkdown, InvalidDocumentError, splitSections } from './markdown.ts';

export type WorkerTask =
  | { op: 'parse'; markdown: string; maxNesting: number; started: MessagePort }
  | { op: 'sections'; markdown: string; maxNesting: number; started: MessagePort }
  | { op: 'toMarkdown'; document: unknown; started: MessagePort };

export type WorkerResult =
  | { ok: true; value: unknown }
  | { ok: false; reason: 'nesting' | 'invalid'; message: string };

export default function run(task: WorkerTask): WorkerResult {
  task.started.postMessage(0);
  task.started.close();
  try {
    if (task.op === 'toMarkdown') return { ok: true, value: documentToMarkdown(task.document) };
    const nesting = blockNesting(task.markdown, task.maxNesting);
    if (nesting.depth > task.maxNesting) {
      return { ok: false, reason: 'nesting', message: `block quotes and lists nest deeper than ${task.maxNesting} levels (line ${nesting.line})` };
    }
    return { ok: true, value: task.op === 'parse' ? analyzeMarkdown(task.markdown) : splitSections(task.markdown) };
  } catch (e) {
    // The parser and the conversions recurse per level of nesting: what the scan above let
    // through and still overflows the stack is refused the same way.
    if (e instanceof RangeError) return { ok: false, reason: 'nesting', message: 'nested too deeply to parse' };
    if (e instanceof InvalidDocumentError) return { ok: false, reason: 'invalid', message: e.message };
    throw e;
  }
}
