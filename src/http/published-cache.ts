// The published-structure cache: a serialized GraphQL response for a `publishedSite`
// query, stored under the site's structure version, the document, its variables and the
// operation name, and served again while the version stands.
//
// Why it is safe:
// - The version lives in PostgreSQL ("SiteStructureVersion") and triggers bump it in the
//   transaction of every write that changes what a reader of the site sees (migration
//   20261124100000_site_structure_version). A stored response is never invalidated: a write makes
//   a new key, and old keys age out of the LRU. Every process on the database agrees.
// - Only documents that read nothing but the versioned data are cached: one query operation whose
//   only root field is `publishedSite`, and whose every field is in CACHEABLE_FIELDS (the site,
//   its structure, sections, groups, site spaces, spaces and their immutable revisions' pages).
//   Anything else — `organization`, `permissions`, counts of comments — runs uncached. A field
//   added to a type later is uncached until someone adds it here, knowing what it reads.
// - Authentication (the token, cached per process and invalidated through LISTEN/NOTIFY) and the
//   reader's access check run on every hit: `Access.publishedSiteGate` decides with the same rule
//   as the uncached `siteReader`, in one statement that also reads the version. A revoked token, a
//   removed member, an unpublished site or a deactivated share key stops hits at once. A refusal
//   falls through to normal execution, which answers the error.
// - Visitor claims, share keys and the organization are arguments, so they are in the key; the
//   reader's audience (`audienceKey`: member or not, the valid share key, the claims) is too.
// - Readers without a token are gated like any other (the gate takes a null viewer). An anonymous
//   GET whose reader is `sharedCacheable` is remembered (site and structure version) for
//   conditional.ts, which then answers `Cache-Control: public` with surrogate keys instead of
//   `private` (docs/decisions.md, "Requests without a token"); purge.ts purges them.
// - The REST shim's published reads use the same store (`execute`): their documents read only
//   cacheable fields (rest/site-structure.ts PUBLISHED_SPACE_FIELDS).
//
// Bounded by bytes: the key is a sha256 digest of the site, its version, the canonical
// operation (printed, so whitespace and comments do not count) and the canonical variables (the
// declared ones only, keys sorted), so whatever a caller sends, a key weighs 43 characters; the
// LRU counts key and value bytes against `STRUCTURE_CACHE_MB`. Visitor claims are refused above
// 8 KiB at input validation (domain/site-order.ts), and a refused request stores nothing.
import {
  Kind,
  TypeInfo,
  getArgumentValues,
  getNamedType,
  print,
  visit,
  visitWithTypeInfo,
  type DocumentNode,
  type GraphQLField,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type FieldNode,
  type ExecutionArgs,
  type ExecutionResult,
} from 'graphql';
import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { stringify as canonicalJson } from 'safe-stable-stringify';
import type { Plugin } from 'graphql-yoga';
import type { Context, RequestRecord } from '../graphql/context.ts';
import { claimsExcess } from '../domain/site-order.ts';
import { audienceKey, sharedCacheable } from '../auth/audience.ts';
import type { SharedAnswer, SharedCaching } from './conditional.ts';

/** Fields a cached document may read, per type: each is derived from rows the structure version covers. */
export const CACHEABLE_FIELDS: Record<string, readonly string[]> = {
  Query: ['publishedSite'],
  Site: [
    'id', 'siteId', 'organizationId', 'type', 'title', 'visibility', 'published', 'basename', 'hostname', 'proxy', 'adaptiveContent',
    'agentsContext', 'createdAt', 'updatedAt', 'defaultSiteSectionId', 'defaultSiteSpaceId', 'defaultSpaceId', 'siteSpaceCount',
    'urls', 'structure', 'sections', 'sectionGroups', 'siteSpaces',
  ],
  SiteProxy: ['origin', 'target'],
  SiteAdaptiveContent: ['enabled'],
  SiteUrls: ['location', 'app', 'published'],
  SiteStructure: ['type', 'items'],
  SiteItemUrls: ['location', 'published'],
  SiteSectionGroup: ['id', 'siteSectionGroupId', 'siteId', 'position', 'title', 'icon', 'createdAt', 'sections', 'site'],
  SiteSection: [
    'id', 'siteSectionId', 'siteId', 'position', 'title', 'description', 'path', 'condition', 'icon', 'groupId', 'defaultSiteSpaceId', 'createdAt',
    'default', 'siteSpaces', 'urls', 'group', 'site',
  ],
  SiteSpace: ['id', 'siteSpaceId', 'siteId', 'position', 'sectionId', 'section', 'site', 'spaceId', 'space', 'path', 'condition', 'createdAt', 'title', 'default', 'urls'],
  // A space's own columns (the trigger on "Space" bumps every site showing it) and its revision.
  Space: [
    'id', 'spaceId', 'title', 'emoji', 'icon', 'visibility', 'editMode', 'defaultLevel', 'createdAt', 'updatedAt', 'deletedAt', 'organizationId', 'parentId',
    'position', 'revisionId', 'revision', 'urls',
  ],
  // From the space's id, visibility and icon, and the configuration.
  SpaceUrls: ['location', 'app', 'published', 'public', 'icon'],
  // Revisions and page versions are immutable: the space's revision id stands for them.
  Revision: ['id', 'revisionId', 'parents', 'type', 'createdAt', 'spaceId', 'variables', 'reusableContents', 'pages', 'allPages', 'page', 'pageByPath'],
  RevisionPage: [
    'id', 'pageId', 'title', 'emoji', 'icon', 'type', 'slug', 'path', 'description', 'parentId', 'depth', 'revisionId', 'versionId', 'markdown',
    'href', 'hidden', 'noIndex', 'noRobotsIndex', 'condition', 'layout', 'createdAt', 'updatedAt', 'pages', 'descendants',
  ],
};

/** What a cacheable document needs at request time. */
type Plan = { root: FieldNode; rootField: GraphQLField<unknown, unknown>; documentHash: string; variableNames: string[] };

export type PublishedCacheStats = { hits: number; misses: number; stores: number; bypassed: number };

export type PublishedCache = {
  plugin: Plugin<Context>;
  stats: PublishedCacheStats;
  clear(): void;
  /** Bytes counted against the bound (keys and values, UTF-16 length × 2) and the entries. */
  size(): { bytes: number; entries: number; maxBytes: number };
  /** The stored keys (tests: each is a fixed-size digest). */
  keys(): string[];
  /** Turn serving and storing on or off at run time (the benchmark measures both; off also clears). */
  setEnabled(on: boolean): void;
  /**
   * For conditional.ts: the request's answer may be kept by shared caches (an anonymous reader
   * without claims, GET, of a public or unlisted published site: `sharedCacheable`), and of which site.
   */
  sharedAnswerOf(record: RequestRecord): SharedAnswer | undefined;
  /**
   * The same cache for a caller that executes a document itself (the REST shim's published
   * reads): the stored answer when there is one (no SQL but the gate's), else `run()`'s, stored.
   * `anonymousGet`: a GET without a token (its answer may then be marked for shared caches).
   */
  execute(ctx: Context, args: Pick<ExecutionArgs, 'schema' | 'document' | 'operationName' | 'variableValues'>, run: () => Promise<ExecutionResult>, anonymousGet: boolean): Promise<ExecutionResult>;
};

/**
 * The yoga plugin. `maxBytes` bounds the stored keys and responses (UTF-16 length × 2, plus a
 * small overhead per entry); 0 disables it.
 */
export function createPublishedCache(opts: { maxBytes: number; sharedCaching?: SharedCaching }): PublishedCache {
  const stats: PublishedCacheStats = { hits: 0, misses: 0, stores: 0, bypassed: 0 };
  const maxSize = Math.max(opts.maxBytes, 1);
  const stored = new LRUCache<string, string>({ maxSize, sizeCalculation: (value, key) => ENTRY_OVERHEAD + (key.length + value.length) * 2 });
  const plans = new WeakMap<DocumentNode, Map<string, Plan | null>>();
  let enabled = opts.maxBytes > 0;
  const sharedCaching = opts.sharedCaching ?? DEFAULT_SHARED_CACHING;

  function planOf(schema: GraphQLSchema, document: DocumentNode, operationName: string | null | undefined): Plan | null {
    let byOperation = plans.get(document);
    if (!byOperation) plans.set(document, (byOperation = new Map()));
    const key = operationName ?? '';
    if (!byOperation.has(key)) byOperation.set(key, analyse(schema, document, operationName));
    return byOperation.get(key)!;
  }

  /**
   * The cache's decision for one execution: a stored answer (`hit`), or how to store the answer
   * about to be computed (`store`), or nothing (not cacheable, refused by the gate: execution
   * answers). Also notes on the request record that a shared cache may keep the answer.
   */
  async function lookup(ctx: Context, schema: GraphQLSchema, document: DocumentNode, operationName: string | null | undefined, variableValues: unknown, anonymousGet: boolean): Promise<{ hit: string } | { store: (body: string) => void } | undefined> {
    // An anonymous GET is gated even with the store off: the gate decides its shared-cache headers.
    if (!enabled && !anonymousGet) return;
    const plan = planOf(schema, document, operationName);
    if (!plan) return;
    const variables = (variableValues ?? {}) as Record<string, unknown>;
    let rootArgs: Record<string, unknown>;
    try {
      rootArgs = getArgumentValues(plan.rootField, plan.root, variables);
    } catch {
      return; // bad variables: execution answers the error
    }
    // Claims over their bound are refused by execution (a 400 naming visitor.claims): never
    // hash megabytes of them into a key first (a walk that stops at the bound: the domain's own rule).
    const visitor = rootArgs.visitor as { claims?: unknown } | null | undefined;
    if (visitor != null && (typeof visitor !== 'object' || claimsExcess(visitor.claims ?? {}) !== null)) {
      stats.bypassed++;
      return;
    }
    const siteId = String(rootArgs.siteId);
    const gate = await ctx.access.publishedSiteGate(siteId, {
      organizationId: rootArgs.organizationId == null ? undefined : String(rootArgs.organizationId),
      shareKey: rootArgs.shareKey == null ? null : String(rootArgs.shareKey),
      visitorToken: rootArgs.visitorToken == null ? (ctx.visitorToken ?? null) : String(rootArgs.visitorToken),
      visitor: (visitor ?? undefined) as { claims?: Record<string, unknown> } | undefined,
      now: ctx.clock.now(),
    });
    if (!gate) {
      stats.bypassed++;
      return;
    }
    // The anonymous reader (no token, no visitor token, no claims; a share key in the URL at
    // most) of a site it may open: its answer is every such caller's (audience.ts).
    if (anonymousGet && sharedCacheable(gate.reader) && ctx.requestRecord) {
      ctx.requestRecord.sharedSiteId = siteId;
      ctx.requestRecord.sharedSiteVersion = String(gate.version);
    }
    if (!enabled) return;
    // The reader's audience is in the key: one reader's answer never reaches a reader with other rights.
    const key = cacheKey(siteId, gate.version, plan, operationName, variables, audienceKey(gate.reader));
    const hit = stored.get(key);
    if (hit !== undefined) {
      stats.hits++;
      return { hit };
    }
    stats.misses++;
    return {
      store(body) {
        stored.set(key, body);
        stats.stores++;
      },
    };
  }

  const plugin: Plugin<Context> = {
    async onExecute({ args, setResultAndStopExecution }) {
      const ctx = args.contextValue as Context & { request?: Request };
      const request = ctx.request;
      const anonymousGet = request !== undefined && request.method === 'GET' && !ctx.viewer;
      const found = await lookup(ctx, args.schema, args.document, args.operationName, args.variableValues, anonymousGet);
      if (!found) return;
      if ('hit' in found) {
        const hit = found.hit;
        setResultAndStopExecution({ data: CACHED_DATA, stringify: () => hit } as never);
        return;
      }
      return {
        onExecuteDone({ result, setResult }) {
          if (Symbol.asyncIterator in result || result.errors?.length) return;
          const body = JSON.stringify(result);
          found.store(body);
          // Serialized once: yoga sends these very bytes.
          setResult({ ...result, stringify: () => body } as never);
        },
      };
    },
  };
  return {
    plugin,
    stats,
    async execute(ctx, args, run, anonymousGet) {
      const found = await lookup(ctx, args.schema, args.document, args.operationName, args.variableValues, anonymousGet);
      if (found && 'hit' in found) return JSON.parse(found.hit) as ExecutionResult;
      const result = await run();
      if (found && !result.errors?.length) found.store(JSON.stringify(result));
      return result;
    },
    clear: () => stored.clear(),
    size: () => ({ bytes: stored.calculatedSize, entries: stored.size, maxBytes: maxSize }),
    keys: () => [...stored.keys()],
    sharedAnswerOf(record) {
      const siteId = record.sharedSiteId;
      return siteId === undefined ? undefined : { siteId, version: record.sharedSiteVersion, caching: sharedCaching };
    },
    setEnabled(on) {
      enabled = on && opts.maxBytes > 0;
      if (!enabled) stored.clear();
    },
  };
}

/** The defaults of PUBLISHED_S_MAXAGE_SECONDS and PUBLISHED_STALE_WHILE_REVALIDATE_SECONDS. */
export const DEFAULT_SHARED_CACHING: SharedCaching = { sMaxAgeSeconds: 60, staleWhileRevalidateSeconds: 300 };

/** Bytes an entry costs beyond its strings (the LRU's own node, roughly). */
const ENTRY_OVERHEAD = 128;

/** The key of a request: a digest of everything that decides the answer, whatever its size. */
function cacheKey(siteId: string, version: unknown, plan: Plan, operationName: string | null | undefined, variables: Record<string, unknown>, audience: unknown[]): string {
  const declared: Record<string, unknown> = {};
  for (const name of plan.variableNames) if (variables[name] !== undefined) declared[name] = variables[name];
  return createHash('sha256')
    .update(canonicalJson([siteId, String(version), plan.documentHash, operationName ?? '', declared, audience]) ?? '')
    .digest('base64url');
}

/** The data of a hit as other plugins see it (the client gets the stored bytes). */
const CACHED_DATA = Object.freeze({ publishedSite: Object.freeze({}) });

/**
 * A plan when the document can be cached: one query operation (the selected one), one root field
 * `publishedSite` (aliases allowed), every field in CACHEABLE_FIELDS, no directive but
 * `@include`/`@skip`. Null otherwise.
 */
export function analyse(schema: GraphQLSchema, document: DocumentNode, operationName: string | null | undefined): Plan | null {
  const operations = document.definitions.filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
  const operation = operationName ? operations.find((o) => o.name?.value === operationName) : operations.length === 1 ? operations[0] : undefined;
  if (!operation || operation.operation !== 'query') return null;
  const roots = operation.selectionSet.selections;
  if (roots.length !== 1 || roots[0].kind !== Kind.FIELD || roots[0].name.value !== 'publishedSite' || roots[0].directives?.length) return null;
  const rootField = schema.getQueryType()?.getFields().publishedSite;
  if (!rootField) return null;

  // Walk the operation and every fragment it may spread (unused ones too: harmless, and simpler).
  const typeInfo = new TypeInfo(schema);
  let cacheable = true;
  const visitor = visitWithTypeInfo(typeInfo, {
    Field(node) {
      if (node.name.value === '__typename') return;
      const parent = typeInfo.getParentType();
      const allowed = parent ? CACHEABLE_FIELDS[getNamedType(parent).name] : undefined;
      if (!allowed?.includes(node.name.value)) cacheable = false;
    },
    Directive(node) {
      if (node.name.value !== 'include' && node.name.value !== 'skip') cacheable = false;
    },
  });
  for (const definition of document.definitions) {
    if (definition.kind === Kind.OPERATION_DEFINITION && definition !== operation) continue;
    visit(definition, visitor);
    if (!cacheable) return null;
  }
  // The canonical text: the selected operation and the fragments, printed (no comments, one layout).
  const canonical = document.definitions.filter((d) => d.kind !== Kind.OPERATION_DEFINITION || d === operation).map((d) => print(d)).join('\n');
  const documentHash = createHash('sha256').update(canonical).digest('base64url');
  const variableNames = (operation.variableDefinitions ?? []).map((v) => v.variable.name.value);
  return { root: roots[0], rootField, documentHash, variableNames };
}
