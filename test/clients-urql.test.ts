// urql with graphcache, its normalized cache (keys `__typename:id`), against a live app: two panes
// a front end shows side by side, both in one cache, each must show its own data
// (fixtures/clients/screens.ts). graphcache reports what it notices through its `logger`; the
// panes are the assertion either way. Also: a mutation updates the pane whose object it changed
// and only that one, and a paged connection merges its pages (relayPagination).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, fetchExchange, gql, type DocumentInput } from '@urql/core';
import { cacheExchange } from '@urql/exchange-graphcache';
import { relayPagination } from '@urql/exchange-graphcache/extras';
import { startTestApp, type TestApp } from './helpers.ts';
import {
  CHANGE_REQUEST_PANE, EDITOR_PANE, EDITOR_SHOWS, MAIN_PANE, NO_CLAIMS, PREVIEW_PANE, RENAME_IN_CHANGE_REQUEST, SPACES_PAGE, VISITOR_SHOWS,
  consoleDuring, sectionsShown, seedScreens, titleOf, type Screens,
} from './fixtures/clients/screens.ts';

let t: TestApp;
let s: Screens;

beforeAll(async () => {
  t = await startTestApp();
  s = await seedScreens(t);
});
afterAll(async () => {
  await t?.close();
});

/** A client with graphcache; `logged` collects what graphcache reports (warnings and errors). */
function urql(token: string = t.token) {
  const logged: string[] = [];
  const client = new Client({
    url: `${t.baseUrl}/graphql`,
    exchanges: [
      cacheExchange({
        // The types without an id are embedded in their parent, as graphcache's docs say to declare.
        keys: { OrganizationSpacesConnection: () => null, OrganizationSpacesConnectionEdge: () => null, PageInfo: () => null },
        resolvers: { Organization: { spaces: relayPagination() } },
        logger: (severity, message) => {
          if (severity !== 'debug') logged.push(`${severity}: ${message}`);
        },
      }),
      fetchExchange,
    ],
    fetchOptions: { headers: { authorization: `Bearer ${token}` } },
  });
  return { client, logged };
}

const Q = {
  main: gql(MAIN_PANE),
  changeRequest: gql(CHANGE_REQUEST_PANE),
  editor: gql(EDITOR_PANE),
  preview: gql(PREVIEW_PANE),
  rename: gql(RENAME_IN_CHANGE_REQUEST),
  spaces: gql(SPACES_PAGE),
};

/** What the cache answers for a pane now, without the network. */
function read(client: Client, query: DocumentInput, variables: Record<string, unknown>): any {
  const r = client.readQuery(query, variables);
  expect(r?.error).toBeUndefined();
  expect(r?.data, 'the cache holds the whole pane').toBeTruthy();
  return r!.data;
}

async function run(client: Client, query: DocumentInput, variables: Record<string, unknown>): Promise<any> {
  const r = await client.query(query, variables, { requestPolicy: 'network-only' }).toPromise();
  expect(r.error).toBeUndefined();
  return r.data;
}

describe('review screen: main pages beside the change request’s', () => {
  const vars = () => ({ main: { space: s.spaceId }, changeRequest: { space: s.spaceId, cr: s.crNumber } });

  it('each pane shows its own title once both queries are in the cache, in either order, with nothing logged', async () => {
    for (const order of [['main', 'changeRequest'], ['changeRequest', 'main']] as const) {
      const { client, logged } = urql();
      const { lines } = await consoleDuring(async () => {
        for (const pane of order) await run(client, Q[pane], vars()[pane]);
      });
      expect([...logged, ...lines]).toEqual([]);
      const main = read(client, Q.main, vars().main);
      const cr = read(client, Q.changeRequest, vars().changeRequest);
      expect(titleOf(main.space.revision.allPages, s.faqId), order.join(' then ')).toBe('FAQ');
      expect(titleOf(cr.changeRequest.revision.allPages, s.faqId), order.join(' then ')).toBe('FAQ (draft)');
      expect(main.space.revision.allPages.map((p: any) => p.title)).toEqual(['FAQ', 'Setup']);
      expect(cr.changeRequest.revision.allPages.map((p: any) => p.title)).toEqual(['FAQ (draft)', 'Setup']);
    }
  });

  it('control: with the old shape (the page id as every revision’s page id) the main pane shows the draft title', async () => {
    // What the screen looked like before revision-scoped ids: proves the assertions above can fail.
    const old = (doc: string) => gql(doc.replace('allPages { id pageId title }', 'allPages { id: pageId pageId title }'));
    const { client } = urql();
    await run(client, old(MAIN_PANE), { space: s.spaceId });
    await run(client, old(CHANGE_REQUEST_PANE), { space: s.spaceId, cr: s.crNumber });
    expect(titleOf(read(client, old(MAIN_PANE), { space: s.spaceId }).space.revision.allPages, s.faqId)).toBe('FAQ (draft)');
  });

  it('a mutation renaming the page in the change request updates the change request pane only', async () => {
    const { client, logged } = urql();
    const seen = { main: [] as Array<string | undefined>, changeRequest: [] as Array<string | undefined> };
    // Both panes stay subscribed to the cache, as a rendered screen does.
    const subs = (['main', 'changeRequest'] as const).map((pane) =>
      client.query(Q[pane], vars()[pane]).subscribe((r) => {
        const data = r.data?.space ?? r.data?.changeRequest;
        if (data) seen[pane].push(titleOf(data.revision.allPages, s.faqId));
      }),
    );
    try {
      await expect.poll(() => seen.main.length > 0 && seen.changeRequest.length > 0).toBe(true);
      const r = await client
        .mutation(Q.rename, { input: { spaceId: s.spaceId, changeRequestId: s.changeRequestId, changes: [{ operation: 'update_page', page: s.faqId, title: 'FAQ (second draft)' }] } })
        .toPromise();
      expect(r.error).toBeUndefined();
      await expect.poll(() => seen.changeRequest.at(-1)).toBe('FAQ (second draft)');
      expect(seen.main.at(-1)).toBe('FAQ');
      expect(seen.main.every((title) => title === 'FAQ')).toBe(true);
      expect(logged).toEqual([]);
    } finally {
      subs.forEach((x) => x.unsubscribe());
      await t.rest('POST', `/v1/spaces/${s.spaceId}/change-requests/${s.changeRequestId}/content`, { changes: [{ operation: 'update_page', page: s.faqId, title: 'FAQ (draft)' }] });
    }
  });
});

describe('site screen: the editor’s structure beside a visitor preview', () => {
  const vars = () => ({ editor: { site: s.siteId }, preview: { site: s.siteId, visitor: NO_CLAIMS } });

  it('the site: the preview pane is its own record, the editor’s section list is intact', async () => {
    for (const order of [['editor', 'preview'], ['preview', 'editor']] as const) {
      const { client, logged } = urql();
      for (const pane of order) await run(client, Q[pane], vars()[pane]);
      expect(logged).toEqual([]);
      const editor = read(client, Q.editor, vars().editor).site;
      const preview = read(client, Q.preview, vars().preview).site;
      expect(editor.id).not.toBe(preview.id);
      expect([editor.siteId, preview.siteId]).toEqual([s.siteId, s.siteId]);
      expect(editor.sections.map((x: any) => x.title), order.join(' then ')).toEqual(['Guides', 'Enterprise']);
      expect(preview.sections.map((x: any) => x.title), order.join(' then ')).toEqual(['Guides']);
    }
  });

  it('each section: the editor sees every site space with its condition, the preview what the visitor sees', async () => {
    for (const order of [['editor', 'preview'], ['preview', 'editor']] as const) {
      const { client } = urql();
      for (const pane of order) await run(client, Q[pane], vars()[pane]);
      const editor = read(client, Q.editor, vars().editor).site;
      const preview = read(client, Q.preview, vars().preview).site;
      expect(sectionsShown(editor.sections), order.join(' then ')).toEqual(EDITOR_SHOWS);
      expect(sectionsShown(preview.sections), order.join(' then ')).toEqual(VISITOR_SHOWS);
    }
  });
});

describe('a paged connection', () => {
  it('first/after pages merge into one list in the cache (relayPagination)', async () => {
    const { client, logged } = urql();
    let data = await run(client, Q.spaces, { org: t.org.id, after: null });
    expect(data.organization.spaces.edges.map((e: any) => e.node.title)).toEqual(s.spaceTitles.slice(0, 2));
    // The next pages, as a "load more" button asks for them: each answer shows the list so far.
    while (data.organization.spaces.pageInfo.hasNextPage) {
      data = (await client.query(Q.spaces, { org: t.org.id, after: data.organization.spaces.pageInfo.endCursor }).toPromise()).data;
    }
    expect(data.organization.spaces.edges.map((e: any) => e.node.title)).toEqual(s.spaceTitles);
    expect(s.spaceTitles.length).toBeGreaterThan(2);
    expect(logged).toEqual([]);
  });
});
