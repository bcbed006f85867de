// The worker thread of an import (started by import-thread.ts): fetches and converts, off the
// server's event loop, and posts the pages and files back. An ImportError's message is for the
// user; anything else is reported as unexpected.
import { parentPort, workerData } from 'node:worker_threads';
import { fetchAndConvert, ImportError } from './importers.ts';
import type { ImportThreadInput } from './import-thread.ts';

const input = (workerData as { input: ImportThreadInput }).input;
try {
  const result = await fetchAndConvert(input.source, input.url, input);
  parentPort!.postMessage({ ok: true, result });
} catch (e) {
  // Converters recurse over the document: markup nested thousands deep overflows their stack.
  const tooDeep = e instanceof RangeError && /call stack/i.test(e.message);
  if (e instanceof ImportError || tooDeep) parentPort!.postMessage({ ok: false, importError: tooDeep ? 'the content is nested too deeply to convert' : (e as Error).message });
  else parentPort!.postMessage({ ok: false, error: (e as Error)?.stack ?? String(e) });
}
