// Live updates: GraphQL subscriptions fed by the event log (README "Live updates").
//
// Each field checks access like its query twin before anything streams (NOT_FOUND for an object
// the caller cannot see), then joins the process's event feed (src/live/feed.ts) with a filter on
// the log's rows. Before every delivery the caller is checked again from scratch: the token (a
// revoked one ends the stream) and the object's visibility by the query's rules (a removed
// member, a deleted object: the stream ends, with nothing sent about the event). A reconnect
// (`Last-Event-ID: <seq>`, or the `after` argument) first replays the log after that seq, with
// the same filter and checks, then goes live: no event lost, none twice.
//
// Quiet streams are checked too: every keep-alive interval (`SSE_KEEPALIVE_MS`) each stream checks
// its token and the subscribe-time access again (`Spec.check`), so a revoked token or a removed
// member ends the stream within one interval even when nothing happens. A resume point beyond the
// log's end (a seq this server never sent) is a BAD_REQUEST naming `after` or `Last-Event-ID`:
// such a stream would otherwise wait, silently, for the log to catch up with it.
import { builder } from './builder.ts';
import type { Context } from './context.ts';
import { SiteRef, authorize } from './sites.ts';
import { SpaceRef } from './spaces.ts';
import { ChangeRequestRef } from './change-requests.ts';
import { CommentRef, CommentReplyRef } from './comments.ts';
import { ImportJobRef } from './content.ts';
import { Access } from '../auth/access.ts';
import type { ChangeRequest, Comment, Event, ImportJob, Site, Space } from '../generated/prisma/client.ts';
import { AppError, badRequest, isDatabaseUnavailable } from '../lib/errors.ts';
import { resolveChangeRequest } from '../domain/change-requests.ts';
import { resolveScope } from '../domain/comments.ts';
import { getImportJob } from '../domain/imports.ts';
import type { LiveEventRow, LiveSubscription } from '../live/feed.ts';
import { issueSubscriptionTicket } from '../auth/subscription-tickets.ts';
import { transaction } from '../db/transaction.ts';

/** Rows per page of a replay. */
const REPLAY_PAGE = 200;

/** Object types of a site's structure events (their payload names the site). */
const STRUCTURE_TYPES = new Set(['site_section', 'site_section_group', 'site_space']);

type Spec<T> = {
  organizationId: string;
  /** Which rows of the organization's log this subscription wants. */
  match: (row: LiveEventRow) => boolean;
  /**
   * What one event delivers, loaded with the caller's access checked again (the context's viewer
   * and access are fresh). An AppError (NOT_FOUND, FORBIDDEN…) ends the stream quietly.
   */
  load: (ctx: Context, row: LiveEventRow) => Promise<T>;
  /** The subscribe-time access check, run again on the keep-alive timer: throws when access is gone. */
  check: (ctx: Context) => Promise<unknown>;
  /** True after the last event worth waiting for (a finished import): the stream completes. */
  last?: (payload: T) => boolean;
};

type Delivery<T> = T & { event: LiveEventRow };

const str = (v: unknown) => (typeof v === 'string' ? v : undefined);

function eventFromRecord(e: Event): LiveEventRow {
  return {
    seq: Number(e.seq),
    id: e.id,
    type: e.type,
    occurredAt: e.occurredAt,
    organizationId: e.organizationId,
    userId: e.userId,
    tokenId: e.tokenId,
    objectType: e.objectType,
    objectId: e.objectId,
    payload: (e.payload ?? {}) as Record<string, unknown>,
  };
}

/**
 * `after` argument or `Last-Event-ID` header: the later of the two. Either beyond the log's end
 * (the event sequence's last value: every seq ever sent is at most that, whatever retention has
 * deleted since) is refused naming it.
 */
async function resumePoint(ctx: Context, after: string | null | undefined): Promise<number | undefined> {
  if (after != null && !/^\d{1,18}$/.test(after)) throw badRequest('after', 'must be the seq of an event (digits), as sent in an event stream’s `id:`');
  const given: Array<[string, number]> = [];
  if (after != null) given.push(['after', Number(after)]);
  if (ctx.live?.lastEventId !== undefined) given.push(['Last-Event-ID', ctx.live.lastEventId]);
  if (!given.length) return undefined;
  const [{ last }] = await ctx.prisma.$queryRaw<Array<{ last: bigint }>>`SELECT coalesce(pg_sequence_last_value(pg_get_serial_sequence('"Event"', 'seq')::regclass), 0) AS last`;
  for (const [field, seq] of given) {
    if (seq > Number(last)) throw badRequest(field, `is beyond the end of the event log (its last seq is ${last}): resume from a seq this server sent, or subscribe without it to start now`);
  }
  return Math.max(...given.map(([, seq]) => seq));
}

/** The caller again, from scratch: false when the token no longer works. */
async function refresh(ctx: Context): Promise<boolean> {
  const viewer = ctx.live ? await ctx.live.revalidate() : ctx.viewer;
  if (!viewer) return false;
  ctx.viewer = viewer;
  ctx.access = new Access(ctx.prisma, viewer);
  ctx.loaders = new Map();
  return true;
}

/**
 * Join the feed now (so nothing committed after this call is missed) and answer the stream:
 * the log's replay after `after`, then live rows, each checked and loaded by `spec`.
 */
async function liveStream<T>(ctx: Context, spec: Spec<T>, after: number | undefined): Promise<AsyncIterableIterator<Delivery<T>>> {
  const feed = ctx.services.live;
  if (!feed) throw new AppError('SERVICE_UNAVAILABLE', 'Live updates are not available on this server');
  const sub: LiveSubscription = await feed.subscribe(spec.organizationId, spec.match, ctx.live?.owner);
  let last = after ?? sub.horizon;
  /** Set when the keep-alive check found the token or the access gone. */
  let revoked = false;

  /** One delivery, or null when the caller lost access (the stream ends). */
  async function deliver(row: LiveEventRow): Promise<Delivery<T> | null> {
    if (!(await refresh(ctx))) return null;
    try {
      return { ...(await spec.load(ctx, row)), event: row };
    } catch (err) {
      if (err instanceof AppError && err.code !== 'SERVICE_UNAVAILABLE') return null;
      throw err;
    }
  }

  /**
   * The keep-alive check: the token and the subscribe-time access again, on a context of its own
   * (a delivery may be using the stream's). Gone → the stream ends (`sub.close()` wakes it). A
   * database that cannot answer ends nothing: the next check, or delivery, decides.
   */
  let timer: NodeJS.Timeout | undefined;
  let checksStopped = false;
  const stopChecks = () => {
    checksStopped = true;
    clearTimeout(timer);
  };
  // Each wait is at most one interval, jittered down to 80% of it, so streams opened in a burst
  // (clients reconnecting after a restart) do not all check in the same instant.
  const scheduleCheck = () => {
    if (checksStopped) return;
    timer = setTimeout(check, ctx.config.live.keepAliveMs * (0.8 + 0.2 * Math.random()));
    timer.unref();
  };
  async function check() {
    try {
      const viewer = ctx.live ? await ctx.live.revalidate() : ctx.viewer;
      if (viewer) await spec.check({ ...ctx, viewer, access: new Access(ctx.prisma, viewer), loaders: new Map() });
      else revoked = true;
    } catch (err) {
      if (err instanceof AppError && err.code !== 'SERVICE_UNAVAILABLE') revoked = true;
      else if (isDatabaseUnavailable(err)) ctx.log.debug({ err }, 'live: a stream’s access re-check could not reach the database; trying again at the next');
      else ctx.log.error({ err }, 'live: a stream’s access re-check failed');
    }
    if (revoked) return sub.close();
    scheduleCheck();
  }
  scheduleCheck();

  async function* run(): AsyncGenerator<Delivery<T>> {
    try {
      // A reconnect: what the client missed, from the log, up to where the feed took over.
      while (last < sub.horizon) {
        const page = await ctx.prisma.event.findMany({
          where: { organizationId: spec.organizationId, seq: { gt: BigInt(last), lte: BigInt(sub.horizon) } },
          orderBy: { seq: 'asc' },
          take: REPLAY_PAGE,
        });
        if (!page.length) break;
        for (const record of page) {
          if (revoked) return;
          const row = eventFromRecord(record);
          last = row.seq;
          if (!spec.match(row)) continue;
          const out = await deliver(row);
          if (!out) return;
          if (ctx.live) ctx.live.seq = row.seq;
          yield out;
          if (spec.last?.(out)) return;
        }
        if (page.length < REPLAY_PAGE) break;
      }
      for (;;) {
        const row = await sub.next();
        if (!row || revoked) return;
        if (row.seq <= last) continue;
        last = row.seq;
        const out = await deliver(row);
        if (!out) return;
        if (ctx.live) ctx.live.seq = row.seq;
        yield out;
        if (spec.last?.(out)) return;
      }
    } finally {
      stopChecks();
      sub.close();
    }
  }

  const it = run();
  // Closing the feed subscription first also wakes a generator waiting for its next row.
  const iterator: AsyncIterableIterator<Delivery<T>> = {
    next: () => it.next(),
    return: (value?: unknown) => (stopChecks(), sub.close(), it.return(value as never)),
    throw: (err?: unknown) => (stopChecks(), sub.close(), it.throw(err)),
    [Symbol.asyncIterator]: () => iterator,
  };
  return iterator;
}

// ------------------------------------------------------------------ types

const LiveEventRef = builder.objectRef<LiveEventRow>('LiveEvent').implement({
  description: 'An entry of the event log behind a live update: what changed, when, in log order.',
  fields: (t) => ({
    id: t.exposeID('id', { description: 'The event’s id (a UUID; the audit log’s event id).', deprecationReason: 'Not this object\'s own id (client caches key objects by `id`): use `eventId`.' }),
    eventId: t.exposeString('id', { description: 'The event’s id (a UUID): the id of the `AuditEvent` recording it.' }),
    seq: t.string({
      description: 'Position in the event log (increasing). Event streams send it as `id:`; reconnect with `Last-Event-ID` (or `after`) set to it to resume.',
      resolve: (e) => String(e.seq),
    }),
    type: t.exposeString('type', { description: 'What happened: `site_section_created`, `space_content_updated`, `comment_posted`, `import_completed`, …' }),
    occurredAt: t.field({ type: 'DateTime', description: 'When the change committed its transaction (its clock).', resolve: (e) => e.occurredAt }),
    objectType: t.exposeString('objectType', { description: 'The kind of object changed: `site`, `site_section`, `space`, `change_request`, `comment`, `comment_reply`, `import`, …' }),
    objectId: t.exposeString('objectId', { description: 'The changed object’s id.' }),
    payload: t.field({ type: 'JSONObject', description: 'Small facts of the change: ids, titles, revision ids (never content).', resolve: (e) => e.payload }),
  }),
});

const SiteStructureChangeRef = builder.objectRef<Delivery<{ site: Site }>>('SiteStructureChange').implement({
  description: 'A change to a site or its structure (sections, section groups, site spaces), with the site as it is now.',
  fields: (t) => ({
    event: t.field({ type: LiveEventRef, description: 'The event.', resolve: (p) => p.event }),
    site: t.field({ type: SiteRef, description: 'The site after the change: ask for its structure to re-render it.', resolve: (p) => p.site }),
  }),
});

const SpaceContentUpdateRef = builder.objectRef<Delivery<{ space: Space }>>('SpaceContentUpdate').implement({
  description: 'New content in a space (an edit, a merged change request, an import): the space with its new revision.',
  fields: (t) => ({
    event: t.field({ type: LiveEventRef, description: 'The event.', resolve: (p) => p.event }),
    revisionId: t.string({ nullable: true, description: 'The revision the change made (`rev_…`).', resolve: (p) => str(p.event.payload.revisionId) ?? null }),
    space: t.field({ type: SpaceRef, description: 'The space as it is now (its `revision` is the newest).', resolve: (p) => p.space }),
  }),
});

const ChangeRequestUpdateRef = builder.objectRef<Delivery<{ changeRequest: ChangeRequest }>>('ChangeRequestUpdate').implement({
  description: 'A change to a change request (opened, edited, new content, status, merged), with the change request as it is now.',
  fields: (t) => ({
    event: t.field({ type: LiveEventRef, description: 'The event.', resolve: (p) => p.event }),
    changeRequest: t.field({ type: ChangeRequestRef, description: 'The change request after the change.', resolve: (p) => p.changeRequest }),
  }),
});

type CommentDelivery = Delivery<{ comment: Comment | null; reply: Comment | null }>;
const CommentActivityRef = builder.objectRef<CommentDelivery>('CommentActivity').implement({
  description: 'A comment or a reply posted, edited, resolved, reopened or deleted.',
  fields: (t) => ({
    event: t.field({ type: LiveEventRef, description: 'The event (`comment_posted`, `comment_reply_updated`, `comment_resolved`, `comment_deleted`…).' , resolve: (p) => p.event }),
    commentId: t.string({ description: 'The thread’s comment id (`cmt_…`).', resolve: (p) => (p.event.objectType === 'comment_reply' ? str(p.event.payload.commentId) ?? '' : p.event.objectId) }),
    replyId: t.string({ nullable: true, description: 'The reply’s id, when the event is about a reply.', resolve: (p) => (p.event.objectType === 'comment_reply' ? p.event.objectId : null) }),
    comment: t.field({ type: CommentRef, nullable: true, description: 'The thread as it is now; null once deleted.', resolve: (p) => p.comment }),
    reply: t.field({ type: CommentReplyRef, nullable: true, description: 'The reply as it is now, when the event is about a reply; null otherwise or once deleted.', resolve: (p) => p.reply }),
  }),
});

const ImportJobProgressRef = builder.objectRef<Delivery<{ importJob: ImportJob }>>('ImportJobProgress').implement({
  description: 'A step of an import job (running, completed, failed), with the job as it is now.',
  fields: (t) => ({
    event: t.field({ type: LiveEventRef, description: 'The event (`import_running`, `import_completed`, `import_failed`).', resolve: (p) => p.event }),
    importJob: t.field({ type: ImportJobRef, description: 'The job after this step.', resolve: (p) => p.importJob }),
  }),
});

// ------------------------------------------------------------------ fields

builder.subscriptionType({
  description:
    'Live updates, over Server-Sent Events (POST or GET /graphql with `Accept: text/event-stream`; a browser’s `EventSource` authenticates with a `ticket` from createSubscriptionTicket) or over WebSocket (graphql-ws, `graphql-transport-ws` protocol, on /graphql, the token in `connectionParams`; resume with `after`). Each event carries `id: <seq>`; reconnect with `Last-Event-ID` to resume without loss. Access is checked when you subscribe (NOT_FOUND like the query), again before every event and at every keep-alive; the stream ends when it is gone. Open streams are capped per token and per client address (RATE_LIMITED).',
});

const afterArg = (t: PothosSchemaTypes.SubscriptionFieldBuilder<any, any>) =>
  t.arg.string({ description: 'Resume after this event (`LiveEvent.seq`, the stream’s `id:`): the log’s later events come first. The `Last-Event-ID` header does the same. A seq beyond the end of the log is a BAD_REQUEST naming it.' });

/** Track a Space's id and organization (for the checks and the feed filter). */
async function requireReadableSpace(ctx: Context, spaceId: string): Promise<Space> {
  const space = await ctx.prisma.space.findUnique({ where: { id: spaceId } });
  await ctx.access.requireSpace(space, 'space:read');
  return space!;
}

builder.subscriptionFields((t) => ({
  siteStructureChanged: t.field({
    type: SiteStructureChangeRef,
    description: 'Changes to a site and its structure, for those who may read the site (`site(id:)`). Ends when the site is deleted or you lose access.',
    args: { siteId: t.arg.id({ required: true, description: 'The site (`site_…`).' }), after: afterArg(t) },
    subscribe: async (_root, args, ctx) => {
      const siteId = String(args.siteId);
      const after = await resumePoint(ctx, args.after);
      const site = await ctx.prisma.site.findUnique({ where: { id: siteId } });
      await ctx.access.requireSite(site, 'site:read');
      return liveStream(
        ctx,
        {
          organizationId: site!.organizationId,
          match: (e) => (e.objectType === 'site' && e.objectId === siteId) || (STRUCTURE_TYPES.has(e.objectType) && e.payload.siteId === siteId),
          load: async (c) => {
            const now = await c.prisma.site.findUnique({ where: { id: siteId } });
            await c.access.requireSite(now, 'site:read');
            authorize(c, siteId);
            return { site: now! };
          },
          check: async (c) => c.access.requireSite(await c.prisma.site.findUnique({ where: { id: siteId } }), 'site:read'),
        },
        after,
      );
    },
    resolve: (p) => p,
  }),
  spaceContentUpdated: t.field({
    type: SpaceContentUpdateRef,
    description: 'New revisions of a space’s content, for those who may read the space (`space(id:)`). Ends when the space is deleted or you lose access.',
    args: { spaceId: t.arg.id({ required: true, description: 'The space (`space_…`).' }), after: afterArg(t) },
    subscribe: async (_root, args, ctx) => {
      const spaceId = String(args.spaceId);
      const after = await resumePoint(ctx, args.after);
      const space = await requireReadableSpace(ctx, spaceId);
      return liveStream(
        ctx,
        {
          organizationId: space.organizationId,
          match: (e) => e.type === 'space_content_updated' && e.objectId === spaceId,
          load: async (c) => ({ space: await requireReadableSpace(c, spaceId) }),
          check: (c) => requireReadableSpace(c, spaceId),
        },
        after,
      );
    },
    resolve: (p) => p,
  }),
  changeRequestUpdated: t.field({
    type: ChangeRequestUpdateRef,
    description: 'Changes to one change request, or to every change request of a space, for those who may read the space (`changeRequest(spaceId:, idOrNumber:)`).',
    args: {
      spaceId: t.arg.id({ required: true, description: 'The space (`space_…`).' }),
      changeRequestId: t.arg.string({ description: 'One change request (id `cr_…` or number); omit for all of the space’s.' }),
      after: afterArg(t),
    },
    subscribe: async (_root, args, ctx) => {
      const spaceId = String(args.spaceId);
      const after = await resumePoint(ctx, args.after);
      let crId: string | undefined;
      let space: Space;
      if (args.changeRequestId) {
        const resolved = await resolveChangeRequest(ctx, spaceId, args.changeRequestId);
        crId = resolved.changeRequest.id;
        space = resolved.space;
      } else space = await requireReadableSpace(ctx, spaceId);
      return liveStream(
        ctx,
        {
          organizationId: space.organizationId,
          match: (e) => e.objectType === 'change_request' && e.payload.spaceId === spaceId && (crId === undefined || e.objectId === crId),
          load: async (c, e) => ({ changeRequest: (await resolveChangeRequest(c, spaceId, e.objectId)).changeRequest }),
          check: (c) => (crId ? resolveChangeRequest(c, spaceId, crId) : requireReadableSpace(c, spaceId)),
        },
        after,
      );
    },
    resolve: (p) => p,
  }),
  commentActivity: t.field({
    type: CommentActivityRef,
    description:
      'Comments and replies posted, edited, resolved, reopened or deleted, for those who may read the space (`comments(spaceId:)`): on one change request with `changeRequestId`, else everywhere in the space (the space’s own comments and its change requests’).',
    args: {
      spaceId: t.arg.id({ required: true, description: 'The space (`space_…`).' }),
      changeRequestId: t.arg.string({ description: 'Only this change request’s comments (id `cr_…` or number).' }),
      after: afterArg(t),
    },
    subscribe: async (_root, args, ctx) => {
      const spaceId = String(args.spaceId);
      const after = await resumePoint(ctx, args.after);
      const scope = await resolveScope(ctx, spaceId, args.changeRequestId);
      const crId = args.changeRequestId ? scope.changeRequestId : undefined;
      return liveStream<{ comment: Comment | null; reply: Comment | null }>(
        ctx,
        {
          organizationId: scope.space.organizationId,
          match: (e) => (e.objectType === 'comment' || e.objectType === 'comment_reply') && e.payload.spaceId === spaceId && (crId === undefined || e.payload.changeRequestId === crId),
          load: async (c, e) => {
            await resolveScope(c, spaceId, crId);
            const row = await c.prisma.comment.findUnique({ where: { id: e.objectId } });
            if (e.objectType === 'comment') return { comment: row, reply: null };
            const parentId = str(e.payload.commentId);
            const parent = parentId ? await c.prisma.comment.findUnique({ where: { id: parentId } }) : null;
            return { comment: parent, reply: row };
          },
          check: (c) => resolveScope(c, spaceId, crId),
        },
        after,
      );
    },
    resolve: (p) => p,
  }),
  jobProgress: t.field({
    type: ImportJobProgressRef,
    description: 'The steps of an import job, for those who may edit its space (`importJob(id:)`). Completes after the job completes or fails for good.',
    args: { jobId: t.arg.id({ required: true, description: 'The import job (`imp_…`).' }), after: afterArg(t) },
    subscribe: async (_root, args, ctx) => {
      const jobId = String(args.jobId);
      const after = await resumePoint(ctx, args.after);
      const job = await getImportJob(ctx, jobId);
      const space = await ctx.prisma.space.findUniqueOrThrow({ where: { id: job.spaceId }, select: { organizationId: true } });
      return liveStream(
        ctx,
        {
          organizationId: space.organizationId,
          match: (e) => e.objectType === 'import' && e.objectId === jobId,
          load: async (c) => ({ importJob: await getImportJob(c, jobId) }),
          check: (c) => getImportJob(c, jobId),
          last: (p) => p.importJob.state === 'complete' || p.importJob.state === 'failed',
        },
        after,
      );
    },
    resolve: (p) => p,
  }),
}));

// ------------------------------------------------------------------ EventSource tickets

const CreateSubscriptionTicketPayload = builder.simpleObject('CreateSubscriptionTicketPayload', {
  description: 'Result of createSubscriptionTicket.',
  fields: (t) => ({
    ticket: t.string({ description: 'The ticket: pass it as `ticket=` on one `GET /graphql?query=subscription…` with `Accept: text/event-stream` (a browser’s `EventSource`). It works once.' }),
    expiresAt: t.field({ type: 'DateTime', description: 'Unused by then, it no longer works (60 seconds after it was made).' }),
  }),
});

builder.mutationField('createSubscriptionTicket', (t) =>
  t.field({
    type: CreateSubscriptionTicketPayload,
    description:
      'A short-lived (60 s), single-use ticket standing for your API token on one event stream, for a browser’s `EventSource`, which cannot send an Authorization header: `new EventSource("/graphql?query=subscription…&variables=…&ticket=…")`. The stream then runs as your token (and ends when it is revoked). Never put the API token itself in a URL: `token=` and `access_token=` are refused. At most 50 unused tickets per token (RATE_LIMITED beyond). No REST twin.',
    resolve: async (_r, _a, ctx) => {
      const viewer = ctx.access.requireViewer();
      return transaction(ctx.prisma, (tx) => issueSubscriptionTicket(tx, viewer, ctx.clock.now()));
    },
  }),
);
