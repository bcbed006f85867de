// Comments in the graph: Space.comments, ChangeRequest.comments and Comment.replies are Relay
// connections with the REST list's filters, batched across parents (no N+1).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers.ts';
import { newId } from '../src/lib/ids.ts';

let t: TestApp;
let other: Awaited<ReturnType<TestApp['createUser']>>;
let spaceId: string;
let crId: string;
/** Comments on `spaceId`, oldest first. */
const posted: Array<{ id: string; authorId: string; status: 'open' | 'resolved'; pageId: string | null }> = [];

let clock = Date.parse('2024-01-01T00:00:00Z');
async function comment(data: { spaceId: string; changeRequestId?: string | null; parentId?: string | null; authorId?: string; status?: 'open' | 'resolved'; pageId?: string | null }) {
  clock += 1000;
  const row = await t.app.prisma.comment.create({
    data: {
      id: newId(data.parentId ? 'CommentReply' : 'Comment'),
      spaceId: data.spaceId,
      changeRequestId: data.changeRequestId ?? null,
      parentId: data.parentId ?? null,
      authorId: data.authorId ?? t.adminUser.id,
      markdown: 'hello',
      status: data.status ?? 'open',
      pageId: data.pageId ?? null,
      postedAt: new Date(clock),
    },
  });
  return row;
}

async function newSpace(title: string) {
  const r = await t.rest('POST', `/v1/orgs/${t.org.id}/spaces`, { title });
  expect(r.status).toBe(201);
  return r.body.id as string;
}

async function newChangeRequest(space: string) {
  const r = await t.rest('POST', `/v1/spaces/${space}/change-requests`, { subject: 'CR' });
  expect(r.status).toBe(201);
  return r.body.id as string;
}

beforeAll(async () => {
  t = await startTestApp();
  other = await t.createUser('comment');
  spaceId = await newSpace('Discussed');
  crId = await newChangeRequest(spaceId);
  // Six threads on the space: authors alternate, every third is resolved, two are on "page_a".
  for (let i = 0; i < 6; i++) {
    const c = await comment({ spaceId, authorId: i % 2 ? other.user.id : t.adminUser.id, status: i % 3 === 2 ? 'resolved' : 'open', pageId: i < 2 ? 'page_a' : null });
    posted.push({ id: c.id, authorId: c.authorId, status: c.status, pageId: c.pageId });
  }
  // Replies to the first thread; two threads on the change request.
  for (let i = 0; i < 3; i++) await comment({ spaceId, parentId: posted[0].id });
  await comment({ spaceId, changeRequestId: crId });
  await comment({ spaceId, changeRequestId: crId, status: 'resolved' });
});
afterAll(async () => {
  await t?.close();
});

const SPACE_COMMENTS = `query($id: ID!, $first: Int, $after: String, $order: CommentOrder, $status: CommentStatusFilter, $targetPage: String, $authors: [String!]) {
  space(id: $id) { commentCount comments(first: $first, after: $after, order: $order, status: $status, targetPage: $targetPage, authors: $authors) {
    totalCount pageInfo { hasNextPage endCursor } nodes { id status replyCount } } } }`;

async function spaceComments(vars: Record<string, unknown>) {
  const r = await t.gql(SPACE_COMMENTS, { id: spaceId, ...vars });
  expect(r.errors).toBeUndefined();
  return r.data.space;
}

describe('Space.comments', () => {
  it('lists the space\'s own threads (not its change requests\' or replies), newest first, with the counter beside it', async () => {
    const s = await spaceComments({});
    expect(s.comments.totalCount).toBe(6);
    expect(s.comments.nodes.map((c: any) => c.id)).toEqual([...posted].reverse().map((c) => c.id));
    expect(s.commentCount).toBe(posted.filter((c) => c.status === 'open').length);
    expect(s.comments.nodes.find((c: any) => c.id === posted[0].id).replyCount).toBe(3);
  });

  it('filters by status, page and authors, and orders, as the REST list does', async () => {
    const cases: Array<[Record<string, unknown>, string[]]> = [
      [{ order: 'asc' }, posted.map((c) => c.id)],
      [{ status: 'resolved', order: 'asc' }, posted.filter((c) => c.status === 'resolved').map((c) => c.id)],
      [{ status: 'open', order: 'asc' }, posted.filter((c) => c.status === 'open').map((c) => c.id)],
      [{ targetPage: 'page_a', order: 'asc' }, posted.filter((c) => c.pageId === 'page_a').map((c) => c.id)],
      [{ authors: [other.user.id], order: 'asc' }, posted.filter((c) => c.authorId === other.user.id).map((c) => c.id)],
      [{ authors: [other.user.id], status: 'open', order: 'asc' }, posted.filter((c) => c.authorId === other.user.id && c.status === 'open').map((c) => c.id)],
    ];
    for (const [vars, want] of cases) {
      const s = await spaceComments(vars);
      expect(s.comments.nodes.map((c: any) => c.id), JSON.stringify(vars)).toEqual(want);
      expect(s.comments.totalCount, JSON.stringify(vars)).toBe(want.length);
      // The REST list agrees.
      const qs = new URLSearchParams(Object.entries(vars).flatMap(([k, v]) => (Array.isArray(v) ? v.map((x) => [k, x]) : [[k, String(v)]])));
      const rest = await t.rest('GET', `/v1/spaces/${spaceId}/comments?${qs}`);
      expect(rest.body.items.map((c: any) => c.id), JSON.stringify(vars)).toEqual(want);
    }
  });

  it('pages with first/after through every thread exactly once', async () => {
    const seen: string[] = [];
    let after: string | null = null;
    for (let i = 0; i < 10; i++) {
      const s = await spaceComments({ first: 4, after, order: 'asc' });
      seen.push(...s.comments.nodes.map((c: any) => c.id));
      if (!s.comments.pageInfo.hasNextPage) break;
      after = s.comments.pageInfo.endCursor;
    }
    expect(seen).toEqual(posted.map((c) => c.id));
  });

  it('refuses bad filters with BAD_REQUEST naming the argument', async () => {
    const r = await t.gql(SPACE_COMMENTS, { id: spaceId, authors: Array.from({ length: 101 }, (_, i) => `user_${i}`) });
    expect(r.errors?.[0].extensions).toMatchObject({ code: 'BAD_REQUEST', field: 'authors' });
  });
});

describe('ChangeRequest.comments and Comment.replies', () => {
  it('list the change request\'s own threads and a thread\'s replies', async () => {
    const r = await t.gql(
      `query($id: ID!, $cr: String!) {
        changeRequest(spaceId: $id, idOrNumber: $cr) { commentCount comments { totalCount nodes { id status } } open: comments(status: open) { totalCount } }
        space(id: $id) { comments(order: asc, first: 1) { nodes { id replies(first: 2) { totalCount pageInfo { hasNextPage } nodes { id } } } } }
      }`,
      { id: spaceId, cr: crId },
    );
    expect(r.errors).toBeUndefined();
    const cr = r.data.changeRequest;
    expect(cr.comments.totalCount).toBe(2);
    expect(cr.open.totalCount).toBe(1);
    expect(cr.commentCount).toBe(1);
    const rows = await t.app.prisma.comment.findMany({ where: { changeRequestId: crId }, orderBy: { postedAt: 'desc' } });
    expect(cr.comments.nodes.map((c: any) => c.id)).toEqual(rows.map((c) => c.id));
    const replies = r.data.space.comments.nodes[0].replies;
    expect(replies.totalCount).toBe(3);
    expect(replies.nodes).toHaveLength(2);
    expect(replies.pageInfo.hasNextPage).toBe(true);
  });
});

describe('nested comments cost a constant number of statements', () => {
  const QUERY = `query($org: ID!) { organization(id: $org) { spaces(first: 20) { nodes { id commentCount
    comments(first: 3, status: open, order: asc) { totalCount nodes { id replyCount postedBy { id } replies(first: 2) { totalCount nodes { id postedBy { id } } } } }
    changeRequestList(first: 2) { nodes { id commentCount comments(first: 2) { totalCount nodes { id replies(first: 1) { totalCount } } } } }
  } } } }`;

  /** Grow to `n` extra spaces, each with 4 threads (2 replies on the first) and a change request with 2 threads. */
  const grown: string[] = [];
  async function grow(n: number) {
    while (grown.length < n) {
      const id = await newSpace(`Space ${grown.length}`);
      const cr = await newChangeRequest(id);
      for (let i = 0; i < 4; i++) {
        const c = await comment({ spaceId: id, authorId: i % 2 ? other.user.id : t.adminUser.id });
        if (i === 0) for (let j = 0; j < 2; j++) await comment({ spaceId: id, parentId: c.id, authorId: other.user.id });
      }
      for (let i = 0; i < 2; i++) await comment({ spaceId: id, changeRequestId: cr });
      grown.push(id);
    }
  }

  it('with 2 and with 12 spaces, and the data is right', async () => {
    await grow(2);
    await t.gql(QUERY, { org: t.org.id }); // warm
    const small = await t.countQueries(() => t.gql(QUERY, { org: t.org.id }));
    expect(small.result.errors).toBeUndefined();
    await grow(12);
    const large = await t.countQueries(() => t.gql(QUERY, { org: t.org.id }));
    expect(large.result.errors).toBeUndefined();
    expect(large.count).toBe(small.count);

    const spaces = large.result.data.organization.spaces.nodes;
    for (const id of grown) {
      const s = spaces.find((x: any) => x.id === id);
      expect(s.commentCount).toBe(4);
      expect(s.comments.totalCount).toBe(4);
      expect(s.comments.nodes).toHaveLength(3);
      const first = s.comments.nodes.find((c: any) => c.replyCount === 2);
      expect(first.replies.totalCount).toBe(2);
      expect(first.replies.nodes.every((r: any) => r.postedBy.id === other.user.id)).toBe(true);
      const [cr] = s.changeRequestList.nodes;
      expect(cr.commentCount).toBe(2);
      expect(cr.comments.totalCount).toBe(2);
    }
  });
});

describe('who reads comments through the graph', () => {
  it('an outsider reading a space through a share key sees the space but not its comments', async () => {
    const site = await t.rest('POST', `/v1/orgs/${t.org.id}/sites`, { title: 'Shared', visibility: 'share-link', spaces: [spaceId] });
    expect(site.status).toBe(201);
    expect((await t.rest('POST', `/v1/orgs/${t.org.id}/sites/${site.body.id}/publish`)).status).toBe(200);
    const link = await t.rest('POST', `/v1/orgs/${t.org.id}/sites/${site.body.id}/share-links`, { name: 'l' });
    const key = link.body.key ?? (await t.app.prisma.shareLink.findUniqueOrThrow({ where: { id: link.body.id } })).key;
    const outsider = await t.createUser(undefined);
    const r = await t.gql(
      `query($id: ID!, $key: String) { space(id: $id, shareKey: $key) { id commentCount comments { totalCount nodes { id } } } }`,
      { id: spaceId, key },
      outsider.token,
    );
    expect(r.data.space.id).toBe(spaceId);
    expect(r.data.space.comments).toBeNull();
    expect(r.errors?.[0].extensions?.code).toBe('FORBIDDEN');
  });
});
