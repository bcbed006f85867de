// `publishedContentByUrl(url)`: from a web address of a published site to what a front end renders
// there, in one request (site, section, site space, space, revision, page), or a redirect.
//
//   1. The site, by the URL's host and path, with indexed lookups only: the site's proxy
//      (`host/path`, the longest one that prefixes the URL), its custom hostname (then its
//      basename must prefix the path), or the gateway's own `${publicUrl}/sites/{siteId}/`.
//   2. The reader (`Access.siteReader`: share key, visitor token, claims); NOT_FOUND when it may
//      not read the site.
//   3. The section by its path segment (none given: the default section), then the site space
//      (the default one of a section has no segment; root-level site spaces always have one),
//      then the page by its path in the site space's current revision (none: the first page).
//      A section, site space or page the reader's claims hide is treated as missing.
//   4. Nothing there: a redirect of the site whose source is the path (its destination must be
//      visible to the reader too); else NOT_FOUND.
import { builder } from './builder.ts';
import type { Context } from './context.ts';
import { SiteRef, authorize, publishedBaseUrl, tag, type View } from './sites.ts';
import { SiteSectionRef, SiteSpaceRef } from './site-structure.ts';
import { SpaceRef } from './spaces.ts';
import { RevisionPageRef } from './content.ts';
import { loadRevisionContent } from './content-loading.ts';
import { redirectTarget } from './site-redirects.ts';
import type { Site, SiteSection, SiteSpace, Space } from '../generated/prisma/client.ts';
import type { ContentPage } from '../domain/content.ts';
import { contentForReader } from '../domain/content.ts';
import { isVisibleTo, VisitorInput, type VisitorClaims } from '../domain/site-order.ts';
import { normalizeRedirectSource, siteSpacePrefix, type RedirectDestination } from '../domain/site-redirects.ts';
import { badRequest, notFound, parseInput } from '../lib/errors.ts';

export const URL_MAX = 2048;
/** Path segments a URL may have (deeper ones name nothing: NOT_FOUND). */
const MAX_SEGMENTS = 64;
/** Proxy candidates tried: `host/a`, `host/a/b`, … up to this many segments. */
const MAX_PROXY_SEGMENTS = 16;

export type PublishedLookup =
  | { kind: 'redirect'; target: 'content'; redirect: string }
  | {
      kind: 'content';
      site: Site;
      siteSection: SiteSection | null;
      siteSpace: SiteSpace;
      space: Space;
      revisionId: string;
      page: ContentPage | null;
      pathname: string;
      basePath: string;
      siteBasePath: string;
      canonicalUrl: string;
      shareKey: string | null;
      complete: boolean;
      /** How the reader sees the site's rows (tags the objects the fields load). */
      view: View;
    };

type SiteMatch = { site: Site; consumed: number; baseSegments: string[] };

/** Step 1: the site whose address prefixes the URL (see the top). */
async function matchSite(ctx: Context, url: URL, segments: string[]): Promise<SiteMatch | null> {
  const host = url.hostname.toLowerCase();
  const candidates: string[] = [];
  for (let k = 1; k <= Math.min(segments.length, MAX_PROXY_SEGMENTS); k++) candidates.push(`${host}/${segments.slice(0, k).join('/')}`);
  const pub = new URL(ctx.config.publicUrl);
  const pubSegments = pub.pathname.split('/').filter(Boolean);
  const gateway =
    url.host === pub.host && pubSegments.every((s, i) => segments[i] === s) && segments[pubSegments.length] === 'sites' && segments[pubSegments.length + 1]
      ? segments[pubSegments.length + 1]
      : null;
  const [proxied, hosted, byId] = await Promise.all([
    candidates.length ? ctx.prisma.site.findMany({ where: { proxy: { in: candidates } } }) : [],
    ctx.prisma.site.findUnique({ where: { hostname: host } }),
    gateway ? ctx.prisma.site.findUnique({ where: { id: gateway } }) : null,
  ]);
  // The longest proxy path first: `example.com/docs/api` before `example.com/docs`.
  const proxy = proxied.sort((a, b) => (b.proxy?.length ?? 0) - (a.proxy?.length ?? 0))[0];
  if (proxy) {
    const n = proxy.proxy!.split('/').length - 1;
    return { site: proxy, consumed: n, baseSegments: segments.slice(0, n) };
  }
  if (hosted) {
    const basename = hosted.basename ? hosted.basename.split('/').filter(Boolean) : [];
    if (basename.every((s, i) => segments[i] === s)) return { site: hosted, consumed: basename.length, baseSegments: basename };
  }
  if (byId) {
    const n = pubSegments.length + 2;
    return { site: byId, consumed: n, baseSegments: segments.slice(0, n) };
  }
  return null;
}

const byPosition = <T extends { position: number }>(rows: T[]) => [...rows].sort((a, b) => a.position - b.position);

/** The first of `rows` the reader sees, preferring `preferredId`. */
function pick<T extends { id: string; condition: string | null; position: number }>(rows: T[], preferredId: string | null, claims: VisitorClaims | null): T | undefined {
  const seen = byPosition(rows).filter((r) => isVisibleTo(r.condition, claims));
  return seen.find((r) => r.id === preferredId) ?? seen[0];
}

export type LookupArgs = { url: string; shareKey?: string | null; visitorToken?: string | null; visitor?: unknown };

/** The lookup (see the top). Throws NOT_FOUND (unknown, or not for this reader) or a 400 naming `url`. */
export async function lookupPublishedUrl(ctx: Context, args: LookupArgs): Promise<PublishedLookup> {
  if (typeof args.url !== 'string' || args.url.length > URL_MAX) throw badRequest('url', `an absolute http(s) URL of at most ${URL_MAX} characters`);
  let url: URL;
  try {
    url = new URL(args.url);
  } catch {
    throw badRequest('url', 'not an absolute URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw badRequest('url', 'an http(s) URL');
  const visitor = args.visitor == null ? undefined : parseInput(VisitorInput, args.visitor, 'visitor');
  const segments = url.pathname.split('/').filter(Boolean);
  if (segments.length > MAX_SEGMENTS) throw notFound('Content', 'no published content at this URL');

  const match = await matchSite(ctx, url, segments);
  if (!match) throw notFound('Content', 'no published content at this URL');
  const { site } = match;
  const reader = await ctx.access.siteReader(site, {
    shareKey: args.shareKey ?? url.searchParams.get('share'),
    visitorToken: args.visitorToken ?? ctx.visitorToken,
    visitor,
    now: ctx.clock.now(),
  });
  authorize(ctx, site.id);
  const view: View = { claims: reader.claims, shareKey: reader.shareKey, member: reader.member };
  const claims = reader.claims;
  const rest = segments.slice(match.consumed);
  const siteBasePath = `/${match.baseSegments.map((s) => `${s}/`).join('')}`;

  const [sections, siteSpaces] = await Promise.all([
    ctx.prisma.siteSection.findMany({ where: { siteId: site.id } }),
    ctx.prisma.siteSpace.findMany({ where: { siteId: site.id, space: { deletedAt: null } } }),
  ]);

  // Step 3: section, site space, page.
  let i = 0;
  let section: SiteSection | undefined;
  let candidates: SiteSpace[];
  let siteSpace: SiteSpace | undefined;
  if (sections.length > 0) {
    section = sections.find((s) => s.path === rest[0] && isVisibleTo(s.condition, claims));
    if (section) i++;
    else section = pick(sections, site.defaultSiteSectionId, claims);
    candidates = section ? siteSpaces.filter((s) => s.sectionId === section!.id && isVisibleTo(s.condition, claims)) : [];
    siteSpace = candidates.find((s) => s.path === rest[i] && s.id !== section!.defaultSiteSpaceId);
    if (siteSpace) i++;
    else siteSpace = section ? pick(candidates, section.defaultSiteSpaceId, claims) : undefined;
  } else {
    candidates = siteSpaces.filter((s) => s.sectionId === null && isVisibleTo(s.condition, claims));
    siteSpace = candidates.find((s) => s.path === rest[0]);
    if (siteSpace) i++;
    else siteSpace = pick(candidates, site.defaultSiteSpaceId, claims);
  }

  if (siteSpace) {
    const space = await ctx.prisma.space.findUnique({ where: { id: siteSpace.spaceId } });
    if (space?.revisionId) {
      const all = await loadRevisionContent(ctx, space.revisionId, { withMarkdown: false });
      const content = claims ? contentForReader(all, claims) : all;
      const pathname = rest.slice(i).join('/');
      const page = pathname === '' ? (content.ordered.find((p) => p.version.kind === 'document') ?? content.ordered[0] ?? null) : (content.byId.get(content.byPath.get(pathname) ?? '') ?? null);
      if (pathname === '' || page) {
        const prefix = siteSpacePrefix({ id: siteSpace.id, path: siteSpace.path, section: section ?? null });
        return {
          kind: 'content',
          site,
          siteSection: section ?? null,
          siteSpace,
          space,
          revisionId: space.revisionId,
          page,
          pathname,
          basePath: `${siteBasePath}${rest.slice(0, i).map((s) => `${s}/`).join('')}`,
          siteBasePath,
          canonicalUrl: `${publishedBaseUrl(ctx.config.publicUrl, site)}${prefix}${pathname && page ? page.path : ''}`,
          shareKey: reader.shareKey,
          complete: page !== null,
          view,
        };
      }
    }
  }

  // Step 4: a redirect from this path.
  const source = rest.length ? normalizeRedirectSource(`/${rest.join('/')}`) : null;
  if (source) {
    const redirect = await ctx.prisma.siteRedirect.findUnique({ where: { siteId_source: { siteId: site.id, source } } });
    const target = redirect ? await redirectTarget(ctx, site, redirect.destination as RedirectDestination, claims) : null;
    if (target) return { kind: 'redirect', target: 'content', redirect: target };
  }
  throw notFound('Content', 'no published content at this URL');
}

// ------------------------------------------------------------------ GraphQL

type ContentLookup = Extract<PublishedLookup, { kind: 'content' }>;
const tagged = <T extends object>(row: T | null, view: View): T | null => (row ? tag([row], view)[0] : null);
const field = <K extends keyof ContentLookup>(l: PublishedLookup, k: K): ContentLookup[K] | null => (l.kind === 'content' ? l[k] : null);

export const PublishedContentLookupRef = builder.objectRef<PublishedLookup>('PublishedContentLookup').implement({
  description:
    'What a URL of a published site shows: either a redirect (`redirect` set: send the reader there) or the content (site, section, site space, space, revision and page, with the paths the URL was read as).',
  fields: (t) => ({
    redirect: t.string({ nullable: true, description: 'Where to send the reader (a redirect of the site); null when the URL shows content.', resolve: (l) => (l.kind === 'redirect' ? l.redirect : null) }),
    target: t.string({ nullable: true, description: '`content` for a redirect to content of the site; null when the URL shows content.', resolve: (l) => (l.kind === 'redirect' ? l.target : null) }),
    // Planned reads (one statement each, nested selections folded in), tagged with the reader's
    // view so nested lists and conditions answer as they do under publishedSite.
    site: t.prismaField({
      type: SiteRef,
      nullable: true,
      description: 'The site the URL is on, as its reader sees it.',
      resolve: async (query, l, _a, ctx) => (l.kind === 'content' ? tagged(await ctx.prisma.site.findUnique({ ...query, where: { id: l.site.id } }), l.view) : null),
    }),
    siteSection: t.prismaField({
      type: SiteSectionRef,
      nullable: true,
      description: 'Null for a site without sections.',
      resolve: async (query, l, _a, ctx) => (l.kind === 'content' && l.siteSection ? tagged(await ctx.prisma.siteSection.findUnique({ ...query, where: { id: l.siteSection.id } }), l.view) : null),
    }),
    siteSpace: t.prismaField({
      type: SiteSpaceRef,
      nullable: true,
      description: 'The site space the page is in.',
      resolve: async (query, l, _a, ctx) => (l.kind === 'content' ? tagged(await ctx.prisma.siteSpace.findUnique({ ...query, where: { id: l.siteSpace.id } }), l.view) : null),
    }),
    space: t.prismaField({
      type: SpaceRef,
      nullable: true,
      description: 'The site space\'s space.',
      resolve: async (query, l, _a, ctx) => (l.kind === 'content' ? ctx.prisma.space.findUnique({ ...query, where: { id: l.space.id } }) : null),
    }),
    revisionId: t.string({ nullable: true, description: 'The space\'s current revision, the one the page is read from.', resolve: (l) => field(l, 'revisionId') }),
    page: t.field({ type: RevisionPageRef, nullable: true, description: 'The page (the first one when the URL names none); null when the site space has no page.', resolve: (l) => field(l, 'page') }),
    pathname: t.string({ nullable: true, description: 'The page path the URL names, relative to `basePath` (`` for none).', resolve: (l) => field(l, 'pathname') }),
    basePath: t.string({ nullable: true, description: 'The path of the site space in the URL (`/docs/guides/`).', resolve: (l) => field(l, 'basePath') }),
    siteBasePath: t.string({ nullable: true, description: 'The path of the site in the URL (`/docs/`).', resolve: (l) => field(l, 'siteBasePath') }),
    canonicalUrl: t.string({ nullable: true, description: 'The canonical address of this content (the section and site space spelled out).', resolve: (l) => field(l, 'canonicalUrl') }),
    organizationId: t.string({ nullable: true, description: 'The site\'s organization.', resolve: (l) => (l.kind === 'content' ? l.site.organizationId : null) }),
    shareKey: t.string({ nullable: true, description: 'The share key the site was read with, if any.', resolve: (l) => field(l, 'shareKey') }),
    complete: t.boolean({ nullable: true, description: 'True when the URL resolved to a page.', resolve: (l) => field(l, 'complete') }),
  }),
});

builder.queryFields((t) => ({
  publishedContentByUrl: t.field({
    type: PublishedContentLookupRef,
    nullable: true,
    description:
      'From a URL of a published site (its proxy, custom hostname and basename, or the gateway\'s `/sites/{siteId}/`) to its section, site space and page, or a redirect, as the reader sees the site (share key, visitor token, `visitor: { claims: { unsigned } }`). NOT_FOUND when nothing is there for this reader. REST: GET/POST /v1/urls/published.',
    args: {
      url: t.arg.string({ required: true, description: 'The absolute URL (at most 2048 characters).' }),
      shareKey: t.arg.string({ description: 'The key of an active share link (else the URL\'s `share` query parameter).' }),
      visitorToken: t.arg.string({ description: 'A visitor token (JWT) for the site; the `X-Visitor-Token` header does the same.' }),
      visitor: t.arg({ type: 'JSON', description: 'The visitor: `{ claims: { unsigned: { … } } }` (anyone), or any claims for a member\'s preview.' }),
    },
    resolve: (_r, args, ctx) => lookupPublishedUrl(ctx, args),
  }),
}));
