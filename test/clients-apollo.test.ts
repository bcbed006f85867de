// Apollo Client 4 with its normalized InMemoryCache (keys `__typename:id`) against a live app:
// two panes a front end shows side by side, both in one cache, each must show its own data
// (fixtures/clients/screens.ts). A server answering one id for two objects makes one pane show
// the other's data with no error; Apollo says nothing, so the panes are the assertion. Also: a
// mutation updates the pane whose object it changed and only that one, a paged connection merges
// its pages (relayStylePagination), and Apollo's HTTP multipart subscriptions.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApolloClient, HttpLink, InMemoryCache, gql } from '@apollo/client';
import { relayStylePagination } from '@apollo/client/utilities';
import { loadDevMessages, loadErrorMessages } from '@apollo/client/dev';
import { startTestApp, type TestApp } from './helpers.ts';
import {
  CHANGE_REQUEST_PANE, EDITOR_PANE, EDITOR_SHOWS, MAIN_PANE, NO_CLAIMS, PREVIEW_PANE, RENAME_IN_CHANGE_REQUEST, SPACES_PAGE, VISITOR_SHOWS,
  consoleDuring, sectionsShown, seedScreens, titleOf, type Screens,
} from './fixtures/clients/screens.ts';

// Apollo's warnings in full (its production build prints only error codes).
loadDevMessages();
loadErrorMessages();

let t: TestApp;
let s: Screens;

beforeAll(async () => {
  t = await startTestApp();
  s = await seedScreens(t);
});
afterAll(async () => {
  await t?.close();
});

function apollo(token: string = t.token) {
  return new ApolloClient({
    link: new HttpLink({ uri: `${t.baseUrl}/graphql`, headers: { authorization: `Bearer ${token}` } }),
    cache: new InMemoryCache({ typePolicies: { Organization: { fields: { spaces: relayStylePagination() } } } }),
  });
}

const Q = {
  main: gql(MAIN_PANE),
  changeRequest: gql(CHANGE_REQUEST_PANE),
  editor: gql(EDITOR_PANE),
  preview: gql(PREVIEW_PANE),
  rename: gql(RENAME_IN_CHANGE_REQUEST),
  spaces: gql(SPACES_PAGE),
};

describe('review screen: main pages beside the change request’s', () => {
  it('each pane shows its own title once both queries are in the cache, in either order, without a warning', async () => {
    for (const order of [['main', 'changeRequest'], ['changeRequest', 'main']] as const) {
      const client = apollo();
      const vars = { main: { space: s.spaceId }, changeRequest: { space: s.spaceId, cr: s.crNumber } };
      const { lines } = await consoleDuring(async () => {
        for (const pane of order) {
          const r = await client.query({ query: Q[pane], variables: vars[pane] });
          expect(r.error).toBeUndefined();
        }
      });
      expect(lines).toEqual([]);
      const main = client.readQuery<any>({ query: Q.main, variables: vars.main });
      const cr = client.readQuery<any>({ query: Q.changeRequest, variables: vars.changeRequest });
      expect(titleOf(main.space.revision.allPages, s.faqId), order.join(' then ')).toBe('FAQ');
      expect(titleOf(cr.changeRequest.revision.allPages, s.faqId), order.join(' then ')).toBe('FAQ (draft)');
      // Both panes list every page (nothing lost or doubled in the merge).
      expect(main.space.revision.allPages.map((p: any) => p.title)).toEqual(['FAQ', 'Setup']);
      expect(cr.changeRequest.revision.allPages.map((p: any) => p.title)).toEqual(['FAQ (draft)', 'Setup']);
    }
  });

  it('a mutation renaming the page in the change request updates the change request pane only', async () => {
    const client = apollo();
    const vars = { main: { space: s.spaceId }, changeRequest: { space: s.spaceId, cr: s.crNumber } };
    const seen = { main: [] as Array<string | undefined>, changeRequest: [] as Array<string | undefined> };
    // Both panes watch the cache, as a rendered screen does.
    const subs = (['main', 'changeRequest'] as const).map((pane) =>
      client.watchQuery({ query: Q[pane], variables: vars[pane] }).subscribe((r: any) => {
        const data = r.data?.space ?? r.data?.changeRequest;
        if (data) seen[pane].push(titleOf(data.revision.allPages, s.faqId));
      }),
    );
    try {
      await expect.poll(() => seen.main.length > 0 && seen.changeRequest.length > 0).toBe(true);
      const { lines } = await consoleDuring(async () => {
        const r = await client.mutate<any>({
          mutation: Q.rename,
          variables: { input: { spaceId: s.spaceId, changeRequestId: s.changeRequestId, changes: [{ operation: 'update_page', page: s.faqId, title: 'FAQ (second draft)' }] } },
        });
        expect(r.error).toBeUndefined();
      });
      expect(lines).toEqual([]);
      await expect.poll(() => seen.changeRequest.at(-1)).toBe('FAQ (second draft)');
      expect(seen.main.at(-1)).toBe('FAQ');
      expect(seen.main.every((title) => title === 'FAQ')).toBe(true);
      // The cache agrees with the server on both panes.
      const fresh = await apollo().query<any>({ query: Q.changeRequest, variables: vars.changeRequest });
      expect(titleOf(fresh.data.changeRequest.revision.allPages, s.faqId)).toBe('FAQ (second draft)');
    } finally {
      subs.forEach((x) => x.unsubscribe());
      // Put the fixture's title back for the other tests.
      await t.rest('POST', `/v1/spaces/${s.spaceId}/change-requests/${s.changeRequestId}/content`, { changes: [{ operation: 'update_page', page: s.faqId, title: 'FAQ (draft)' }] });
    }
  });
});

describe('site screen: the editor’s structure beside a visitor preview', () => {
  const vars = () => ({ editor: { site: s.siteId }, preview: { site: s.siteId, visitor: NO_CLAIMS } });

  it('the site: the preview pane is its own record, the editor’s section list is intact', async () => {
    for (const order of [['editor', 'preview'], ['preview', 'editor']] as const) {
      const client = apollo();
      for (const pane of order) expect((await client.query({ query: Q[pane], variables: vars()[pane] })).error).toBeUndefined();
      const editor = client.readQuery<any>({ query: Q.editor, variables: vars().editor }).site;
      const preview = client.readQuery<any>({ query: Q.preview, variables: vars().preview }).site;
      expect(editor.id).not.toBe(preview.id);
      expect([editor.siteId, preview.siteId]).toEqual([s.siteId, s.siteId]);
      expect(editor.sections.map((x: any) => x.title), order.join(' then ')).toEqual(['Guides', 'Enterprise']);
      expect(preview.sections.map((x: any) => x.title), order.join(' then ')).toEqual(['Guides']);
    }
  });

  it('each section: the editor sees every site space with its condition, the preview what the visitor sees, without a warning', async () => {
    for (const order of [['editor', 'preview'], ['preview', 'editor']] as const) {
      const client = apollo();
      // Apollo warns when a query replaces a list another query wrote on the same record
      // ("Cache data may be lost when replacing the siteSpaces field of a SiteSection object").
      const { lines } = await consoleDuring(async () => {
        for (const pane of order) await client.query({ query: Q[pane], variables: vars()[pane] });
      });
      expect(lines).toEqual([]);
      const editor = client.readQuery<any>({ query: Q.editor, variables: vars().editor }).site;
      const preview = client.readQuery<any>({ query: Q.preview, variables: vars().preview }).site;
      expect(sectionsShown(editor.sections), order.join(' then ')).toEqual(EDITOR_SHOWS);
      expect(sectionsShown(preview.sections), order.join(' then ')).toEqual(VISITOR_SHOWS);
    }
  });
});

describe('a paged connection', () => {
  it('first/after pages merge into one list in the cache (relayStylePagination)', async () => {
    const client = apollo();
    const watched = client.watchQuery<any>({ query: Q.spaces, variables: { org: t.org.id } });
    const titles: string[][] = [];
    const sub = watched.subscribe((r) => r.data && titles.push(r.data.organization.spaces.edges.map((e: any) => e.node.title)));
    try {
      await expect.poll(() => titles.length).toBeGreaterThan(0);
      expect(titles.at(-1)).toEqual(s.spaceTitles.slice(0, 2));
      let info = watched.getCurrentResult().data.organization.spaces.pageInfo;
      while (info.hasNextPage) {
        const more = await watched.fetchMore({ variables: { after: info.endCursor } });
        info = (more.data as any).organization.spaces.pageInfo;
      }
      await expect.poll(() => titles.at(-1)).toEqual(s.spaceTitles);
      expect(s.spaceTitles.length).toBeGreaterThan(2);
    } finally {
      sub.unsubscribe();
    }
  });
});
