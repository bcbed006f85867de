// Live updates: GraphQL subscriptions fed by the event log (README "Live updates").
//
// Each field checks access like its query twin before anything streams (NOT_FOUND for an object
// the caller cannot see), then opens an event stream (src/events/stream.ts) with its spec: the
// organization, which rows of its log it wants, what one event delivers (loaded again with the
// caller's access before every delivery) and the access to check again at every keep-alive. The
// stream does the rest: replay after `after` / `Last-Event-ID`, the live feed, the re-checks.
import { builder } from './builder.ts';
import { renewContext, type Context } from './context.ts';
import { SiteRef, authorize } from './sites.ts';
import { SpaceRef } from './spaces.ts';
import { ChangeRequestRef } from './change-requests.ts';
import { CommentRef, CommentReplyRef } from './comments.ts';
import { ImportJobRef } from './imports.ts';
import { EventTypeEnum } from './audit-events.ts';
import type { ChangeRequest, Comment, ImportJob, Site, Space } from '../generated/prisma/client.ts';
import { resolveChangeRequest } from '../domain/change-requests.ts';
import { resolveScope } from '../domain/comments.ts';
import { getImportJob } from '../domain/imports.ts';
import { requireSpaceById } from '../domain/spaces.ts';
import type { EventRow } from '../events/log.ts';
import type { EventType } from '../events/catalogue.ts';
import { openStream, resumePoint as streamResumePoint, type Delivery, type StreamSpec } from '../events/stream.ts';
import { issueSubscriptionTicket } from '../auth/subscription-tickets.ts';
import { transaction } from '../db/transaction.ts';

/** Object types of a site's structure events (their payload names the site). */
const STRUCTURE_TYPES = new Set(['site_section', 'site_section_group', 'site_space']);

const str = (v: unknown) => (typeof v === 'string' ? v : undefined);

/** The resume point of this request's subscription (`after`, or the transport's `Last-Event-ID`). */
const resumePoint = (ctx: Context, after: string | null | undefined) => streamResumePoint(ctx.prisma, ctx.live, after);

/**
 * The stream of `spec` for this request. Before a delivery the caller is renewed on the request's
 * own context (graphql-js resolves the delivered value with it): token, access and loaders from
 * scratch; the keep-alive check gets a context of its own.
 */
function liveStream<T>(ctx: Context, spec: StreamSpec<Context, T>, after: number | undefined) {
  return openStream<Context, T>(
    {
      feed: ctx.services.live,
      db: ctx.prisma,
      log: ctx.log,
      keepAliveMs: ctx.config.live.keepAliveMs,
      live: ctx.live,
      renew: async (purpose) => {
        const viewer = ctx.live ? await ctx.live.revalidate() : ctx.viewer;
        if (!viewer) return null;
        // A check runs on a copy; a delivery renews the stream's own context (its resolvers read it).
        return renewContext(purpose === 'check' ? { ...ctx } : ctx, viewer);
      },
    },
    spec,
    after,
  );
}

// ------------------------------------------------------------------ types

const LiveEventRef = builder.objectRef<EventRow>('LiveEvent').implement({
  description: 'An entry of the event log behind a live update: what changed, when, in log order.',
  fields: (t) => ({
    id: t.exposeID('id', { description: 'The event’s id (a UUID; the audit log’s event id).', deprecationReason: 'Not this object\'s own id (client caches key objects by `id`): use `eventId`.' }),
    eventId: t.exposeString('id', { description: 'The event’s id (a UUID): the id of the `AuditEvent` recording it.' }),
    seq: t.string({
      description: 'Position in the event log (increasing). Event streams send it as `id:`; reconnect with `Last-Event-ID` (or `after`) set to it to resume.',
      resolve: (e) => String(e.seq),
    }),
    type: t.field({ type: EventTypeEnum, description: 'What happened: `site_section_created`, `space_content_updated`, `comment_posted`, `import_completed`, … (the event catalogue).', resolve: (e) => e.type as EventType }),
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
      const space = await requireSpaceById(ctx, spaceId);
      return liveStream(
        ctx,
        {
          organizationId: space.organizationId,
          match: (e) => e.type === 'space_content_updated' && e.objectId === spaceId,
          load: async (c) => ({ space: await requireSpaceById(c, spaceId) }),
          check: (c) => requireSpaceById(c, spaceId),
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
      } else space = await requireSpaceById(ctx, spaceId);
      return liveStream(
        ctx,
        {
          organizationId: space.organizationId,
          match: (e) => e.objectType === 'change_request' && e.payload.spaceId === spaceId && (crId === undefined || e.objectId === crId),
          load: async (c, e) => ({ changeRequest: (await resolveChangeRequest(c, spaceId, e.objectId)).changeRequest }),
          check: (c) => (crId ? resolveChangeRequest(c, spaceId, crId) : requireSpaceById(c, spaceId)),
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
