// Site redirects: an old path of a published site → a section, a site space or a page of the same
// site (the contract's SiteRedirect). Sources are normalized (`normalizeRedirectSource`) and unique
// per site; destinations are stored as `{kind, …ids}` in the model's words (`site_section`,
// `site_space`, `site_page`; REST writes them with `-`) and must name objects of the same site.
//
// Access: reading (list, by source) is `site:read` (any member with a role); every write is
// `site:write` (the organization's admins), as the other site settings.
//
// Automatic redirects (`recordMovedPages`): when a merge (or a live edit) changes the path of a
// page of a space that sites show, the old published path of the page on each of those sites
// becomes a redirect to the page, in the same transaction. The rule (docs/decisions.md "Redirects
// and URL lookup"): a manual redirect on the same source is never replaced; an automatic
// one is re-pointed (the latest move wins); and automatic redirects whose source is now the path of
// a moved page are removed, so moving a page back leaves no redirect shadowing it.
import { z } from 'zod';
import type { DomainContext } from './context.ts';
import type { Tx } from '../db/client.ts';
import { Prisma, type SiteRedirect } from '../generated/prisma/client.ts';
import { newId } from '../lib/ids.ts';
import { badRequest, notFound, parseInput } from '../lib/errors.ts';
import { transaction } from '../db/transaction.ts';
import { requireSite } from './sites.ts';
import { loadRevision, pagePaths } from './revisions.ts';
import { diffTrees, revisionPages, storedTreeOf, TreeSession } from './revision-tree.ts';
import { recordEvent } from '../events/log.ts';

export const REDIRECT_SOURCE_MAX = 512;
/** The contract's SiteRedirectSourcePath pattern: `/`-separated segments of unreserved characters or %XX. */
const SOURCE_PATTERN = /^\/(?:[A-Za-z0-9\-._~]|%[0-9A-Fa-f]{2})+(?:\/(?:[A-Za-z0-9\-._~]|%[0-9A-Fa-f]{2})+)*$/;

/**
 * A redirect source as stored: a leading `/`, no trailing slash, no query or fragment, no empty,
 * `.` or `..` segment. Null when the value cannot be one (the caller answers a 400 naming it).
 */
export function normalizeRedirectSource(raw: string): string | null {
  if (typeof raw !== 'string' || raw.length > REDIRECT_SOURCE_MAX * 2) return null;
  let s = raw.trim();
  const cut = s.search(/[?#]/);
  if (cut >= 0) s = s.slice(0, cut);
  s = `/${s.replace(/^\/+/, '').replace(/\/+$/, '')}`;
  if (s.length > REDIRECT_SOURCE_MAX || !SOURCE_PATTERN.test(s)) return null;
  if (s.split('/').slice(1).some((seg) => seg === '.' || seg === '..')) return null;
  return s;
}

export const RedirectSource = z.string().transform((v, c) => {
  const s = normalizeRedirectSource(v);
  if (s === null) {
    c.addIssue({ code: 'custom', message: `a path of at most ${REDIRECT_SOURCE_MAX} characters: "/" then segments of letters, digits, "-", ".", "_", "~" or %XX (a query or fragment is dropped)` });
    return z.NEVER;
  }
  return s;
});

const Id = z.string().min(1).max(200);
export const REDIRECT_DESTINATION_KINDS = ['site_section', 'site_space', 'site_page'] as const;
export const RedirectDestination = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('site_section'), siteSectionId: Id }),
  z.strictObject({ kind: z.literal('site_space'), siteSpaceId: Id }),
  z.strictObject({ kind: z.literal('site_page'), siteSpaceId: Id, pageId: Id }),
]);
export type RedirectDestination = z.infer<typeof RedirectDestination>;

export const CreateSiteRedirectInput = z.strictObject({ source: RedirectSource, destination: RedirectDestination });
export const UpdateSiteRedirectInput = z.strictObject({ source: RedirectSource.optional(), destination: RedirectDestination.optional() });
/** One entry of a bulk upsert: `destination: null` deletes the redirect from `source`. */
export const UpsertSiteRedirectEntry = z.strictObject({ source: RedirectSource, destination: RedirectDestination.nullable() });
export const UPSERT_MAX = 500;
export const UpsertSiteRedirectsInput = z.strictObject({ redirects: z.array(UpsertSiteRedirectEntry).min(1).max(UPSERT_MAX) });

/** A destination must name objects of this site (and a page of the site space's current content): else a 400 naming the field. */
async function requireDestination(tx: Tx, siteId: string, d: RedirectDestination, field: string): Promise<void> {
  if (d.kind === 'site_section') {
    const section = await tx.siteSection.findFirst({ where: { id: d.siteSectionId, siteId }, select: { id: true } });
    if (!section) throw badRequest(`${field}.siteSectionId`, 'no such section in this site');
    return;
  }
  const siteSpace = await tx.siteSpace.findFirst({ where: { id: d.siteSpaceId, siteId, space: { deletedAt: null } }, select: { space: { select: { revisionId: true } } } });
  if (!siteSpace) throw badRequest(`${field}.siteSpaceId`, 'no such site space in this site');
  if (d.kind === 'site_page') {
    const revisionId = siteSpace.space.revisionId;
    const revision = revisionId ? await storedTreeOf(tx, revisionId) : null;
    const found = revision ? (await revisionPages(tx, revision, [d.pageId])).has(d.pageId) : false;
    if (!found) throw badRequest(`${field}.pageId`, 'no such page in the site space\'s content');
  }
}

// ------------------------------------------------------------------ reads

/** One redirect of a site by its source (normalized first); NOT_FOUND when none. Members with `site:read`. */
export async function getSiteRedirectBySource(ctx: DomainContext, organizationId: string | undefined, siteId: string, rawSource: string): Promise<SiteRedirect> {
  const site = await requireSite(ctx, organizationId, siteId, 'site:read');
  const source = parseInput(RedirectSource, rawSource, 'source');
  const redirect = await ctx.prisma.siteRedirect.findUnique({ where: { siteId_source: { siteId: site.id, source } } });
  if (!redirect) throw notFound('Site redirect');
  return redirect;
}

// ------------------------------------------------------------------ writes (one transaction each)

export async function createSiteRedirect(ctx: DomainContext, organizationId: string | undefined, siteId: string, raw: unknown): Promise<SiteRedirect> {
  const site = await requireSite(ctx, organizationId, siteId, 'site:write');
  const input = parseInput(CreateSiteRedirectInput, raw);
  return transaction(ctx.prisma, async (tx) => {
    await requireDestination(tx, site.id, input.destination, 'destination');
    const taken = await tx.siteRedirect.findUnique({ where: { siteId_source: { siteId: site.id, source: input.source } }, select: { id: true } });
    if (taken) throw badRequest('source', 'a redirect with this source exists already (update it, or upsert)');
    const now = ctx.clock.now();
    const created = await tx.siteRedirect.create({
      data: { id: newId('SiteRedirect'), siteId: site.id, source: input.source, destination: input.destination, automatic: false, createdAt: now, updatedAt: now },
    });
    await recordEvent(tx, ctx, redirectEvent('site_redirect_created', site, created));
    return created;
  });
}

export type UpsertResult = { status: 'created' | 'updated' | 'deleted'; source: string; redirect: SiteRedirect | null };

/**
 * Create, replace or delete (`destination: null`) redirects by source, in order, in one
 * transaction (a later entry for the same source wins). A replaced automatic redirect becomes
 * manual: whoever wrote it now owns it. Deleting a source that has no redirect is `deleted` too.
 */
export async function upsertSiteRedirects(ctx: DomainContext, organizationId: string | undefined, siteId: string, raw: unknown): Promise<UpsertResult[]> {
  const site = await requireSite(ctx, organizationId, siteId, 'site:write');
  const { redirects } = parseInput(UpsertSiteRedirectsInput, raw);
  const bySource = new Map(redirects.map((r) => [r.source, r]));
  return transaction(ctx.prisma, async (tx) => {
    for (const [i, r] of redirects.entries()) if (r.destination) await requireDestination(tx, site.id, r.destination, `redirects.${i}.destination`);
    const now = ctx.clock.now();
    const out: UpsertResult[] = [];
    for (const r of bySource.values()) {
      const key = { siteId_source: { siteId: site.id, source: r.source } };
      const existing = await tx.siteRedirect.findUnique({ where: key, select: { id: true } });
      if (!r.destination) {
        if (existing) await tx.siteRedirect.delete({ where: { id: existing.id } });
        out.push({ status: 'deleted', source: r.source, redirect: null });
        continue;
      }
      const redirect = existing
        ? await tx.siteRedirect.update({ where: { id: existing.id }, data: { destination: r.destination, automatic: false, updatedAt: now } })
        : await tx.siteRedirect.create({ data: { id: newId('SiteRedirect'), siteId: site.id, source: r.source, destination: r.destination, automatic: false, createdAt: now, updatedAt: now } });
      out.push({ status: existing ? 'updated' : 'created', source: r.source, redirect });
    }
    await recordEvent(tx, ctx, {
      type: 'site_redirects_upserted',
      organizationId: site.organizationId,
      objectId: site.id,
      payload: { created: out.filter((r) => r.status === 'created').length, updated: out.filter((r) => r.status === 'updated').length, deleted: out.filter((r) => r.status === 'deleted').length },
    });
    return out;
  });
}

export async function updateSiteRedirect(ctx: DomainContext, organizationId: string | undefined, siteId: string, redirectId: string, raw: unknown): Promise<SiteRedirect> {
  const site = await requireSite(ctx, organizationId, siteId, 'site:write');
  const input = parseInput(UpdateSiteRedirectInput, raw);
  if (input.source === undefined && input.destination === undefined) throw badRequest('body', 'give at least one of source, destination');
  return transaction(ctx.prisma, async (tx) => {
    const current = await tx.siteRedirect.findFirst({ where: { id: redirectId, siteId: site.id } });
    if (!current) throw notFound('Site redirect');
    if (input.destination) await requireDestination(tx, site.id, input.destination, 'destination');
    if (input.source && input.source !== current.source) {
      const taken = await tx.siteRedirect.findUnique({ where: { siteId_source: { siteId: site.id, source: input.source } }, select: { id: true } });
      if (taken) throw badRequest('source', 'another redirect of this site has this source');
    }
    const updated = await tx.siteRedirect.update({
      where: { id: current.id },
      data: { ...(input.source ? { source: input.source } : {}), ...(input.destination ? { destination: input.destination } : {}), automatic: false, updatedAt: ctx.clock.now() },
    });
    await recordEvent(tx, ctx, redirectEvent('site_redirect_updated', site, updated));
    return updated;
  });
}

/** Idempotent: true when the redirect was deleted, false when it did not exist. */
export async function deleteSiteRedirect(ctx: DomainContext, organizationId: string | undefined, siteId: string, redirectId: string): Promise<boolean> {
  const site = await requireSite(ctx, organizationId, siteId, 'site:write');
  return transaction(ctx.prisma, async (tx) => {
    const gone = await tx.siteRedirect.findFirst({ where: { id: redirectId, siteId: site.id } });
    // deleteMany: a concurrent delete makes this one a no-op, not an error.
    if (!gone || (await tx.siteRedirect.deleteMany({ where: { id: gone.id } })).count === 0) return false;
    await recordEvent(tx, ctx, redirectEvent('site_redirect_deleted', site, gone));
    return true;
  });
}

/** Redirects are events of their site (the event log has no object type of their own). */
function redirectEvent(type: 'site_redirect_created' | 'site_redirect_updated' | 'site_redirect_deleted', site: { id: string; organizationId: string }, r: SiteRedirect) {
  return { type, organizationId: site.organizationId, objectId: site.id, payload: { redirectId: r.id, source: r.source } };
}

// ------------------------------------------------------------------ automatic redirects

/**
 * The path of a site space's pages under its site's address, as the `urls` fields write it: the
 * section's path, then the site space's unless it is its section's default; root-level site
 * spaces always have their segment. `''` or `a/b/`.
 */
export function siteSpacePrefix(s: { id: string; path: string; section: { path: string; defaultSiteSpaceId: string | null } | null }): string {
  if (!s.section) return `${s.path}/`;
  return `${s.section.path}/${s.section.defaultSiteSpaceId === s.id ? '' : `${s.path}/`}`;
}

/**
 * Record redirects for the pages whose path changed between two revisions of a space (see the rule
 * at the top). Inside the caller's transaction; costs one statement when no site shows the space.
 */
export async function recordMovedPages(tx: Tx, spaceId: string, beforeRevisionId: string, afterRevisionId: string, now: Date): Promise<number> {
  const siteSpaces = await tx.siteSpace.findMany({
    where: { spaceId },
    select: { id: true, siteId: true, path: true, section: { select: { path: true, defaultSiteSpaceId: true } } },
  });
  if (siteSpaces.length === 0 || beforeRevisionId === afterRevisionId) return 0;
  const moved = await movedPages(tx, beforeRevisionId, afterRevisionId);
  if (moved.length === 0) return 0;
  const rows = new Map<string, Prisma.Sql>();
  const freed: Array<{ siteId: string; source: string }> = [];
  for (const ss of siteSpaces) {
    const prefix = siteSpacePrefix(ss);
    for (const m of moved) {
      const source = normalizeRedirectSource(`/${prefix}${m.from}`);
      const target = normalizeRedirectSource(`/${prefix}${m.to}`);
      if (target) freed.push({ siteId: ss.siteId, source: target });
      if (!source) continue;
      const destination = JSON.stringify({ kind: 'site_page', siteSpaceId: ss.id, pageId: m.pageId });
      rows.set(`${ss.siteId} ${source}`, Prisma.sql`(${newId('SiteRedirect')}, ${ss.siteId}, ${source}, ${destination}::jsonb, true, ${now}, ${now})`);
    }
  }
  // A moved page's new path is a page again: automatic redirects from it would shadow nothing but
  // would outlive the page there; manual ones stay (the owner's choice).
  for (let i = 0; i < freed.length; i += 500) {
    const chunk = freed.slice(i, i + 500);
    await tx.siteRedirect.deleteMany({ where: { automatic: true, OR: chunk.map((f) => ({ siteId: f.siteId, source: f.source })) } });
  }
  const values = [...rows.values()];
  for (let i = 0; i < values.length; i += 500) {
    // Manual redirects on the same source win (the WHERE of DO UPDATE); automatic ones follow the latest move.
    await tx.$executeRaw(Prisma.sql`
      INSERT INTO "SiteRedirect" ("id", "siteId", "source", "destination", "automatic", "createdAt", "updatedAt")
      VALUES ${Prisma.join(values.slice(i, i + 500))}
      ON CONFLICT ("siteId", "source") DO UPDATE SET "destination" = EXCLUDED."destination", "updatedAt" = EXCLUDED."updatedAt"
      WHERE "SiteRedirect"."automatic"`);
  }
  return values.length;
}

/**
 * The pages whose path differs between two revisions (present in both), with both paths. Reads
 * the difference of the two trees, then only the pages that moved or changed, their ancestors
 * (for their paths) and, under a page whose path changed, its descendants.
 */
async function movedPages(tx: Tx, beforeRevisionId: string, afterRevisionId: string): Promise<Array<{ pageId: string; from: string; to: string }>> {
  const roots = await tx.revision.findMany({ where: { id: { in: [beforeRevisionId, afterRevisionId] } }, select: { id: true, treeRoot: true } });
  const beforeRoot = roots.find((r) => r.id === beforeRevisionId)?.treeRoot;
  const afterRoot = roots.find((r) => r.id === afterRevisionId)?.treeRoot;
  if (!beforeRoot || !afterRoot) {
    // A revision written before trees were stored: compare the whole page lists.
    const [before, after] = await Promise.all([loadRevision(tx, beforeRevisionId, { bodies: false }), loadRevision(tx, afterRevisionId, { bodies: false })]);
    const oldPaths = pagePaths(before);
    const out: Array<{ pageId: string; from: string; to: string }> = [];
    for (const [pageId, to] of pagePaths(after)) {
      const from = oldPaths.get(pageId);
      if (from !== undefined && from !== to) out.push({ pageId, from, to });
    }
    return out;
  }
  const session = new TreeSession(tx);
  const candidates = (await diffTrees(tx, beforeRoot, afterRoot)).filter((d) => d.before && d.after).map((d) => d.pageId);
  const paths = new PathReader(tx, session);
  const out: Array<{ pageId: string; from: string; to: string }> = [];
  const seen = new Set<string>();
  let level = candidates;
  while (level.length) {
    const [from, to] = [await paths.of(beforeRoot, level), await paths.of(afterRoot, level)];
    const next: string[] = [];
    const changedHere: string[] = [];
    for (const pageId of level) {
      if (seen.has(pageId)) continue;
      seen.add(pageId);
      const f = from.get(pageId);
      const t = to.get(pageId);
      if (f !== undefined && t !== undefined && f !== t) {
        out.push({ pageId, from: f, to: t });
        changedHere.push(pageId);
      }
    }
    // Pages under a page whose path changed moved with it.
    await session.preload(afterRoot, [], changedHere);
    for (const p of changedHere) for (const c of await session.children(afterRoot, p)) if (!seen.has(c.pageId)) next.push(c.pageId);
    level = next;
  }
  return out;
}

/** Paths (slug chains) of pages in trees, reading the pages and their ancestors only. */
class PathReader {
  private readonly slugs = new Map<string, string>();
  private readonly entries = new Map<string, Map<string, { v: string; parent: string | null } | null>>();
  constructor(
    private readonly tx: Tx,
    private readonly session: TreeSession,
  ) {}

  async of(root: string, pageIds: string[]): Promise<Map<string, string>> {
    let known = this.entries.get(root);
    if (!known) this.entries.set(root, (known = new Map()));
    // Walk up, one level of ancestors at a time.
    let want = pageIds.filter((id) => !known.has(id));
    while (want.length) {
      const found = await this.session.lookup(root, want);
      for (const id of want) known.set(id, found.get(id) ?? null);
      want = [...new Set(want.map((id) => known.get(id)?.parent).filter((p): p is string => !!p && !known.has(p)))];
    }
    const missing = new Set<string>();
    for (const e of known.values()) if (e && !this.slugs.has(e.v)) missing.add(e.v);
    if (missing.size) {
      const rows = await this.tx.pageVersion.findMany({ where: { id: { in: [...missing] } }, select: { id: true, slug: true } });
      for (const r of rows) this.slugs.set(r.id, r.slug);
    }
    const out = new Map<string, string>();
    for (const id of pageIds) {
      if (!known.get(id)) continue;
      const chain: string[] = [];
      const seen = new Set<string>();
      for (let x: string | null = id; x && known.get(x) && !seen.has(x); x = known.get(x)!.parent) {
        seen.add(x);
        chain.unshift(this.slugs.get(known.get(x)!.v) ?? x);
      }
      out.set(id, chain.join('/'));
    }
    return out;
  }
}
