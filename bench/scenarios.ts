// Every benchmark scenario, in one table. A scenario whose route, query or field does not exist
// (yet) in the running gateway is reported as "skipped (not available)" by the runner: load
// scenarios are probed with one request first, and a REST 404 "No route" or a GraphQL
// validation error marks them unavailable instead of failing the run.
import type { Fixture } from './seed.ts';
import { PEER_QUERY, describePeerTree } from './peer.ts';

export type HttpCall = { method: 'GET' | 'POST' | 'PATCH'; path: string; body?: unknown; token?: string };

export type BenchContext = {
  fx: Fixture;
  /** The GraphQL document and variables the REST shim runs for `url` (null: no such route). */
  restDoc(method: string, url: string): Promise<{ document: string; variables: Record<string, unknown> } | null>;
};

export type LoadScenario = {
  kind: 'load';
  /** Short id used in the table and the JSON (`1`, `3b`, …). */
  id: string;
  /** The scenario number. */
  group: number;
  name: string;
  api: 'graphql' | 'rest';
  /** Concurrent connections to run it at; the first is the latency figure targets use. */
  connections: number[];
  /** For GraphQL scenarios carrying a REST scenario's data: that scenario's id (shim ratio). */
  sameDataAs?: string;
  /** Scenario 1 is compared with the hand-written SQL floor. */
  floor?: boolean;
  /**
   * 'peer': the request goes to the peer process (PostGraphile v5, bench/peer-server.ts) instead
   * of the gateway; `pairWith` names the gateway scenario it is paired and compared with.
   */
  target?: 'peer';
  pairWith?: string;
  /** Run with the published-structure cache on (every other scenario runs with it off). */
  cache?: boolean;
  /** false: run with the search cache off, so every request ranks (5a.cold against 5a, which repeats one query). */
  searchCache?: false;
  /** A peer scenario this one is paired with too (1.cached against 1.peer). */
  comparePeer?: string;
  request(ctx: BenchContext): Promise<HttpCall | { unavailable: string }>;
  /** Describes the probe response (items, pages…), or throws when it is not what we asked for. */
  describe?(body: any, ctx: BenchContext): string;
};

export type WriteScenario = {
  kind: 'write';
  id: string;
  group: number;
  name: string;
  /** Clients running at once, each on its own space. */
  clients: number;
  /** Iterations per client. */
  iterations: (fx: Fixture) => number;
};

/**
 * Live updates (issue 16): `subscribers` SSE subscriptions to the fixture's site while one writer
 * renames it `writes` times; fan-out latency per delivery and the gateway's RSS. Opt-in: runs only
 * when named in `--only`.
 */
export type FanoutScenario = {
  kind: 'fanout';
  id: string;
  group: number;
  name: string;
  subscribers: number;
  writes: number;
  /** Pause between writes, ms. */
  intervalMs: number;
};

export type Scenario = LoadScenario | WriteScenario | FanoutScenario;

const gql = (query: string, variables: Record<string, unknown>, token?: string): HttpCall => ({ method: 'POST', path: '/graphql', body: { query, variables }, token });
const rest = (path: string): HttpCall => ({ method: 'GET', path });

/** The GraphQL twin of a REST scenario: the very document and variables the shim would run. */
async function twin(ctx: BenchContext, restPath: string): Promise<HttpCall | { unavailable: string }> {
  const doc = await ctx.restDoc('GET', restPath);
  if (!doc) return { unavailable: `REST route for ${restPath} is missing` };
  return gql(doc.document, doc.variables);
}

// ------------------------------------------------------------------ documents

/** Scenario 1: the published structure with every site space's whole page tree. */
export const SITE_TREE_QUERY = `
query BenchSiteTree($siteId: ID!, $org: ID!) {
  publishedSite(siteId: $siteId, organizationId: $org) {
    id title
    structure {
      type
      items {
        __typename
        ... on SiteSectionGroup { id title sections { ...BenchSection } }
        ... on SiteSection { ...BenchSection }
        ... on SiteSpace { ...BenchSiteSpace }
      }
    }
  }
}
fragment BenchSection on SiteSection { id title path siteSpaces { ...BenchSiteSpace } }
fragment BenchSiteSpace on SiteSpace {
  id path
  space { id title revision { id allPages { id title slug path type parentId depth } } }
}`;

const ORG_SPACES_QUERY = `
query BenchOrgSpaces($org: ID!) {
  organization(id: $org) {
    spaces(first: 100) {
      totalCount
      pageInfo { hasNextPage endCursor }
      nodes {
        id title emoji visibility editMode parentId revisionId createdAt updatedAt
        comments changeRequests changeRequestsOpen changeRequestsDraft
        permissions { view access admin viewInviteLinks edit triggerGitSync comment merge review }
      }
    }
  }
}`;

// ------------------------------------------------------------------ describe helpers

function siteTreeCounts(site: any) {
  let siteSpaces = 0;
  let pages = 0;
  const visitSpace = (ss: any) => {
    siteSpaces++;
    pages += ss.space?.revision?.allPages?.length ?? 0;
  };
  for (const item of site?.structure?.items ?? []) {
    if (item.__typename === 'SiteSectionGroup') for (const s of item.sections) s.siteSpaces.forEach(visitSpace);
    else if (item.__typename === 'SiteSection') item.siteSpaces.forEach(visitSpace);
    else visitSpace(item);
  }
  return { siteSpaces, pages };
}

export function describeSiteTree(site: any) {
  const c = siteTreeCounts(site);
  return `${c.siteSpaces} site spaces, ${c.pages} pages`;
}

const items = (list: any) => `${list?.items?.length ?? list?.nodes?.length ?? 0} items of ${list?.count ?? list?.totalCount ?? '?'}`;

// ------------------------------------------------------------------ the table

export const SCENARIOS: Scenario[] = [
  {
    kind: 'load',
    id: '1',
    group: 1,
    name: 'GraphQL site structure + every page tree',
    api: 'graphql',
    connections: [1, 8],
    floor: true,
    request: async ({ fx }) => gql(SITE_TREE_QUERY, { siteId: fx.siteId, org: fx.organizationId }),
    describe: (b) => describeSiteTree(b.data.publishedSite),
  },
  {
    kind: 'load',
    id: '1.peer',
    group: 1,
    name: 'peer: PostGraphile v5, same structure + page trees',
    api: 'graphql',
    connections: [1, 8],
    target: 'peer',
    pairWith: '1',
    request: async ({ fx }) => gql(PEER_QUERY, { id: fx.siteId }),
    describe: (b) => describePeerTree(b.data.siteByRowId),
  },
  {
    kind: 'load',
    id: '1.cached',
    group: 1,
    name: 'GraphQL site structure, published-structure cache on (hits)',
    api: 'graphql',
    connections: [1, 8],
    cache: true,
    comparePeer: '1.peer',
    request: async ({ fx }) => gql(SITE_TREE_QUERY, { siteId: fx.siteId, org: fx.organizationId }),
    describe: (b) => describeSiteTree(b.data.publishedSite),
  },
  {
    kind: 'load',
    id: '2a',
    group: 2,
    name: 'GraphQL org spaces(first:100) + counters + permissions (admin)',
    api: 'graphql',
    connections: [1, 8],
    request: async ({ fx }) => gql(ORG_SPACES_QUERY, { org: fx.organizationId }),
    describe: (b) => items(b.data.organization.spaces),
  },
  {
    kind: 'load',
    id: '2b',
    group: 2,
    name: 'GraphQL org spaces(first:100) + counters + permissions (edit member)',
    api: 'graphql',
    connections: [1],
    request: async ({ fx }) => gql(ORG_SPACES_QUERY, { org: fx.organizationId }, fx.memberToken),
    describe: (b) => items(b.data.organization.spaces),
  },
  {
    kind: 'load',
    id: '3a',
    group: 3,
    name: 'REST GET /v1/spaces/{id}',
    api: 'rest',
    connections: [1, 8],
    request: async ({ fx }) => rest(`/v1/spaces/${fx.spaceId}`),
    describe: (b) => `space ${b.id}`,
  },
  {
    kind: 'load',
    id: '3b',
    group: 3,
    name: 'REST GET /v1/collections/{id}/spaces?limit=100',
    api: 'rest',
    connections: [1],
    request: async ({ fx }) => rest(`/v1/collections/${fx.bigCollectionId}/spaces?limit=100`),
    describe: items,
  },
  {
    kind: 'load',
    id: '3c',
    group: 3,
    name: 'REST GET /v1/spaces/{id}/comments?limit=100',
    api: 'rest',
    connections: [1],
    request: async ({ fx }) => rest(`/v1/spaces/${fx.commentSpaceId}/comments?limit=100`),
    describe: items,
  },
  {
    kind: 'load',
    id: '3d',
    group: 3,
    name: 'REST GET /v1/orgs/{org}/sites/{site}/published',
    api: 'rest',
    connections: [1, 8],
    request: async ({ fx }) => rest(`/v1/orgs/${fx.organizationId}/sites/${fx.siteId}/published`),
    describe: (b) => `${b.structure?.structure?.length ?? 0} top-level items`,
  },
  {
    kind: 'load',
    id: '4a',
    group: 4,
    name: 'GraphQL twin of 3a (space)',
    api: 'graphql',
    connections: [1],
    sameDataAs: '3a',
    request: (ctx) => twin(ctx, `/v1/spaces/${ctx.fx.spaceId}`),
  },
  {
    kind: 'load',
    id: '4b',
    group: 4,
    name: 'GraphQL twin of 3b (collection spaces)',
    api: 'graphql',
    connections: [1],
    sameDataAs: '3b',
    request: (ctx) => twin(ctx, `/v1/collections/${ctx.fx.bigCollectionId}/spaces?limit=100`),
  },
  {
    kind: 'load',
    id: '4c',
    group: 4,
    name: 'GraphQL twin of 3c (space comments)',
    api: 'graphql',
    connections: [1],
    sameDataAs: '3c',
    request: (ctx) => twin(ctx, `/v1/spaces/${ctx.fx.commentSpaceId}/comments?limit=100`),
  },
  {
    kind: 'load',
    id: '4d',
    group: 4,
    name: 'GraphQL twin of 3d (published site)',
    api: 'graphql',
    connections: [1],
    sameDataAs: '3d',
    request: (ctx) => twin(ctx, `/v1/orgs/${ctx.fx.organizationId}/sites/${ctx.fx.siteId}/published`),
  },
  {
    kind: 'load',
    id: '5a',
    group: 5,
    name: 'REST org search, common word (repeated: ranked candidates from the search cache)',
    api: 'rest',
    connections: [1],
    request: async ({ fx }) => rest(`/v1/orgs/${fx.organizationId}/search?query=${encodeURIComponent(fx.commonWord)}`),
    describe: items,
  },
  {
    kind: 'load',
    id: '5a.cold',
    group: 5,
    name: 'REST org search, common word, search cache off (every request ranks)',
    api: 'rest',
    connections: [1],
    searchCache: false,
    request: async ({ fx }) => rest(`/v1/orgs/${fx.organizationId}/search?query=${encodeURIComponent(fx.commonWord)}`),
    describe: items,
  },
  {
    kind: 'load',
    id: '5b',
    group: 5,
    name: 'REST org search, rare word',
    api: 'rest',
    connections: [1],
    request: async ({ fx }) => rest(`/v1/orgs/${fx.organizationId}/search?query=${encodeURIComponent(fx.rareWord)}`),
    describe: items,
  },
  {
    // A one-row write (docs/performance.md, "A one-row write, statement by statement"): the same
    // title written again and again, so every request is a real UPDATE with its event.
    kind: 'load',
    id: '8w',
    group: 8,
    name: 'Write: PATCH /v1/spaces/{id} {title}, one row (req/s = updates/s)',
    api: 'rest',
    connections: [1, 8],
    request: async ({ fx }) => ({ method: 'PATCH', path: `/v1/spaces/${fx.spaceId}`, body: { title: 'Bench title' } }),
    describe: (b) => `space ${b.title}`,
  },
  {
    kind: 'load',
    id: '8w.peer',
    group: 8,
    name: 'peer: PostGraphile v5 updateSpaceByRowId {title}, one row',
    api: 'graphql',
    connections: [1, 8],
    target: 'peer',
    pairWith: '8w',
    request: async ({ fx }) =>
      gql(`mutation($id: String!) { updateSpaceByRowId(input: { rowId: $id, spacePatch: { title: "Bench title" } }) { space { rowId title } } }`, { id: fx.spaceId }),
    describe: (b) => `space ${b.data.updateSpaceByRowId.space.title}`,
  },
  {
    kind: 'write',
    id: '6a',
    group: 6,
    name: 'Write: create CR + 5-page batch + merge, sequential',
    clients: 1,
    iterations: (fx) => (fx.scale === 'small' ? 20 : 40),
  },
  {
    kind: 'write',
    id: '6b',
    group: 6,
    name: 'Write: create CR + 5-page batch + merge, 8 clients',
    clients: 8,
    iterations: (fx) => (fx.scale === 'small' ? 8 : 15),
  },
  {
    kind: 'fanout',
    id: '7.live',
    group: 7,
    name: 'Live: 500 SSE subscribers to one site, a writer renaming it (opt-in: --only 7.live)',
    subscribers: 500,
    writes: 20,
    intervalMs: 250,
  },
];
