// Parses an OpenAPI specification in a worker thread of its own, never on the event loop: a
// specification may be 10 MB of YAML, and parsing plus validation (swagger-parser, whose first
// validation also compiles its JSON Schemas: ~0.3 s) would otherwise stall every request of the
// process. The thread has a deadline (terminated when it passes) and a heap cap; either ends as a
// PARSE_ERROR. Referenced files are fetched here, by the caller's (SSRF-guarded) fetcher, on the
// thread's request; a fetch error is rethrown as the caller's own error.
import type { Worker } from 'node:worker_threads';
import type { ParsedOpenApi } from './openapi-parse.ts';
import type { OpenApiWorkerInput, OpenApiWorkerMessage, OpenApiWorkerReply } from './openapi-worker.ts';
import { startWorkerThread, superviseWorkerThread } from './worker-thread.ts';

export type OpenApiParseBudget = { timeoutMs: number; maxHeapMb: number };
export const OPENAPI_PARSE_BUDGET: OpenApiParseBudget = { timeoutMs: 60_000, maxHeapMb: 256 };

export function parseOpenApiInWorker(
  text: string,
  sourceUrl: string | undefined,
  fetchRef: (url: string) => Promise<string>,
  budget: OpenApiParseBudget = OPENAPI_PARSE_BUDGET,
): Promise<ParsedOpenApi> {
  const worker: Worker = startWorkerThread(import.meta.url, 'openapi-worker', {
    workerData: { text, sourceUrl } satisfies OpenApiWorkerInput,
    resourceLimits: { maxOldGenerationSizeMb: budget.maxHeapMb },
  });
  const fetchErrors = new Map<number, unknown>();
  const parseError = (message: string): ParsedOpenApi => ({ ok: false, code: 'PARSE_ERROR', message });
  return superviseWorkerThread<ParsedOpenApi, OpenApiWorkerMessage>(worker, budget.timeoutMs, {
    timeout: (settle) => settle.resolve(parseError(`the specification did not parse within ${Math.round(budget.timeoutMs / 1000)} s`)),
    message: (m, settle) => {
      if (m.type === 'fetch') {
        fetchRef(m.url).then(
          (body) => !settle.settled && worker.postMessage({ id: m.id, text: body } satisfies OpenApiWorkerReply),
          (err) => {
            fetchErrors.set(m.id, err);
            if (!settle.settled) worker.postMessage({ id: m.id, failed: true } satisfies OpenApiWorkerReply);
          },
        );
        return;
      }
      if (m.type === 'done') return settle.resolve(m.result);
      settle.reject(m.fetchId !== undefined && fetchErrors.has(m.fetchId) ? fetchErrors.get(m.fetchId) : new Error(`OpenAPI parse thread: ${m.message}`));
    },
    error: (e, settle) =>
      e.code === 'ERR_WORKER_OUT_OF_MEMORY' ? settle.resolve(parseError(`parsing the specification needs more than ${budget.maxHeapMb} MB of memory`)) : settle.reject(e),
    exit: (code, settle) => settle.reject(new Error(`OpenAPI parse thread exited (${code}) without an answer`)),
  });
}
