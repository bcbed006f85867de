// The background task table handed to the queue (graphile-worker takes a task list): task name →
// handler, with its schedule and what to record when the queue gives a job up. The house's second
// table, beside the REST route table (src/rest/index.ts). Every process that runs a worker gets
// every task from here; nothing registers itself when its module is imported.
import type { TaskDefinition, TaskNames, TaskTable } from './jobs.ts';
import { giveUpImportJob, importContentTask } from './domain/imports.ts';
import { giveUpOpenApiSpec, processOpenApiSpec } from './domain/openapi.ts';
import { purgeDeletedSpaces, sweepOrphanFiles, sweepTreeNodes } from './domain/cleanup.ts';
import { purgeOldEvents } from './events/log.ts';
import { deliverWebhook, giveUpWebhookDelivery } from './domain/webhooks.ts';
import { giveUpPdfExport, renderPdfExportTask } from './domain/pdf-exports.ts';
import { backfillParsedContent } from './domain/markdown-backfill.ts';
import { backfillRevisionTreesTask } from './domain/revision-tree.ts';
import { purgeIdempotencyKeys } from './http/idempotency.ts';

import { purgeSharedCacheTask } from './http/purge.ts';

export const tasks = {
  /** Content import (URL or upload → pages), payload `{ jobId }`. */
  importContent: { handler: importContentTask, onGiveUp: giveUpImportJob },
  /** Fetch and parse an OpenAPI specification, payload `{ specId }`. */
  processOpenApiSpec: { handler: processOpenApiSpec, onGiveUp: giveUpOpenApiSpec },
  /** Hourly: spaces deleted more than 7 days ago, with everything they own. */
  purgeDeletedSpaces: { handler: async (_payload, deps) => void (await purgeDeletedSpaces(deps)), cron: '0 * * * *' },
  /** Hourly: stored bytes no row refers to (rolled-back uploads, interrupted purges). */
  sweepOrphanFiles: { handler: async (_payload, deps) => void (await sweepOrphanFiles(deps)), cron: '17 * * * *' },
  /**
   * Daily: page tree nodes no revision reaches (purged spaces), 20,000 per run in one transaction;
   * enqueues itself again while more remain.
   */
  sweepTreeNodes: { handler: async (_payload, deps) => void (await sweepTreeNodes(deps)), cron: '29 4 * * *' },
  /** Hourly: events (the audit log) older than AUDIT_RETENTION_DAYS. */
  purgeOldEvents: { handler: async (_payload, deps) => void (await purgeOldEvents(deps)), cron: '41 * * * *' },
  /**
   * One attempt of one webhook delivery, payload `{ deliveryId }` (enqueued in SQL, with the
   * delivery, by `docgraph_webhook_enqueue`: the fan-out trigger on "Event" and redeliveries; in the
   * organization's named queue: one delivery of an organization at a time). On a
   * pool of its own: a receiver that hangs holds only webhook workers, never imports or processing.
   */
  deliverWebhook: { handler: deliverWebhook, onGiveUp: giveUpWebhookDelivery, pool: 'webhooks' },
  /** Render a change request's PDF export in a worker thread, payload `{ exportId }`. */
  renderPdfExport: { handler: renderPdfExportTask, onGiveUp: giveUpPdfExport },
  /**
   * Every 10 minutes: page versions and comments written before markdown was parsed at write
   * time get their stored document and links; runs for up to 2 minutes, then enqueues itself
   * while rows remain. Nothing to do (one indexed statement each) once all are converted.
   */
  backfillParsedContent: { handler: async (_payload, deps) => void (await backfillParsedContent(deps)), cron: '*/10 * * * *' },
  /**
   * Every 10 minutes: revisions written before page trees were stored get their tree root, 20
   * revisions per transaction, for up to 2 minutes, then it enqueues itself while some remain.
   * Once none is left a run is one statement on an empty partial index.
   */
  backfillRevisionTrees: { handler: async (_payload, deps) => void (await backfillRevisionTreesTask(deps)), cron: '*/10 * * * *' },
  /** Hourly: idempotency keys (and the answers they keep) older than 24 hours. */
  purgeIdempotencyKeys: { handler: async (_payload, deps) => void (await purgeIdempotencyKeys(deps)), cron: '53 * * * *' },
  /** The shared-cache purge feed (src/http/purge.ts): re-enqueues itself every PURGE_INTERVAL_MS; the cron restarts a lost chain. */
  purgeSharedCache: { handler: purgeSharedCacheTask, cron: '* * * * *' },
} satisfies TaskTable & Record<keyof TaskNames, TaskDefinition>;

export type TaskName = keyof typeof tasks;

// The table's names, for the queue's `enqueue` and `runNow` (src/jobs.ts `TaskNames`). Written out
// (deriving them from `tasks` would be circular: the handlers' types reach the queue's); the
// `satisfies` above holds the two together: a row needs its name here, a name its row.
declare module './jobs.ts' {
  interface TaskNames {
    importContent: true;
    processOpenApiSpec: true;
    purgeDeletedSpaces: true;
    sweepOrphanFiles: true;
    sweepTreeNodes: true;
    purgeOldEvents: true;
    purgeIdempotencyKeys: true;
    deliverWebhook: true;
    renderPdfExport: true;
    backfillParsedContent: true;
    backfillRevisionTrees: true;
    purgeSharedCache: true;
  }
}
