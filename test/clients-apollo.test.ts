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
import { loadConfig } from '../src/config.ts';
import { wantsMultipartSubscription } from '../src/http/graphql-over-http.ts';
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
  // Short keep-alives: the multipart heartbeats show within the test.
  t = await startTestApp({ config: { live: { ...loadConfig({}).live, keepAliveMs: 300 } } });
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

  it('control: with the old shape (the page id as every revision’s page id) the main pane shows the draft title', async () => {
    // What the screen looked like before revision-scoped ids: proves the assertions above can fail.
    const old = (doc: string) => gql(doc.replace('allPages { id pageId title }', 'allPages { id: pageId pageId title }'));
    const client = apollo();
    await client.query({ query: old(MAIN_PANE), variables: { space: s.spaceId } });
    await client.query({ query: old(CHANGE_REQUEST_PANE), variables: { space: s.spaceId, cr: s.crNumber } });
    const main = client.readQuery<any>({ query: old(MAIN_PANE), variables: { space: s.spaceId } });
    expect(titleOf(main.space.revision.allPages, s.faqId)).toBe('FAQ (draft)');
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

// ------------------------------------------------------------------ HTTP multipart subscriptions

/** What Apollo Client 4's HttpLink sends for a subscription. */
const APOLLO_SUBSCRIPTION_ACCEPT = 'multipart/mixed;boundary=graphql;subscriptionSpec=1.0,application/graphql-response+json,application/json;q=0.9';
const SITE_CHANGES = `subscription SiteChanges($site: ID!, $after: String) { siteStructureChanged(siteId: $site, after: $after) { event { seq type } site { id title } } }`;
const logEndNow = async () => String(Number((await t.app.prisma.event.aggregate({ _max: { seq: true } }))._max.seq ?? 0));
const renameSite = async (title: string) => {
  const r = await t.rest('PATCH', `/v1/orgs/${t.org.id}/sites/${s.siteId}`, { title });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
};

describe('subscriptions through Apollo Client’s HttpLink (multipart/mixed, subscriptionSpec 1.0)', () => {
  it('events arrive through the link and update the editor pane in the cache', async () => {
    const client = apollo();
    const editor: string[] = [];
    const pane = client.watchQuery<any>({ query: Q.editor, variables: { site: s.siteId } }).subscribe((r) => r.data && editor.push(r.data.site.title));
    const events: any[] = [];
    const errors: unknown[] = [];
    let completed = false;
    await expect.poll(() => editor.length).toBeGreaterThan(0);
    const sub = client.subscribe<any>({ query: gql(SITE_CHANGES), variables: { site: s.siteId, after: await logEndNow() } }).subscribe({
      next: (r) => (r.error ? errors.push(r.error) : events.push(r.data)),
      error: (e) => errors.push(e),
      complete: () => (completed = true),
    });
    try {
      await renameSite('Docs (live 1)');
      await expect.poll(() => events.map((e) => e.siteStructureChanged.site.title), { timeout: 15_000 }).toEqual(['Docs (live 1)']);
      await renameSite('Docs (live 2)');
      await expect.poll(() => events.map((e) => e.siteStructureChanged.site.title), { timeout: 15_000 }).toEqual(['Docs (live 1)', 'Docs (live 2)']);
      expect(events.map((e) => e.siteStructureChanged.event.type)).toEqual(['site_updated', 'site_updated']);
      // The subscription's site is the editor's (same id): the editor pane shows the new title.
      await expect.poll(() => editor.at(-1)).toBe('Docs (live 2)');
      expect(errors).toEqual([]);
      expect(completed).toBe(false);
    } finally {
      sub.unsubscribe();
      pane.unsubscribe();
      await renameSite('Docs');
    }
    // Unsubscribing ends the request: the server lets go of the subscription.
    await expect.poll(async () => (await (await fetch(`${t.baseUrl}/metrics`, { headers: { authorization: `Bearer ${t.token}` } })).text()).match(/^docgraph_live_subscriptions (\d+)/m)?.[1]).toBe('0');
  });

  it('on the wire: Apollo’s parts (`{"payload": …}`), heartbeats `{}`, the boundary it reads', async () => {
    const ac = new AbortController();
    const res = await fetch(`${t.baseUrl}/graphql`, {
      method: 'POST',
      signal: ac.signal,
      headers: { 'content-type': 'application/json', accept: APOLLO_SUBSCRIPTION_ACCEPT, authorization: `Bearer ${t.token}` },
      body: JSON.stringify({ query: SITE_CHANGES, variables: { site: s.siteId, after: await logEndNow() } }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('multipart/mixed;boundary="graphql";subscriptionSpec="1.0"');
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    const parts = () => text.split('\r\n--graphql').slice(1, -1).map((p) => JSON.parse(p.slice(p.indexOf('\r\n\r\n'))));
    const readUntil = async (done: () => boolean) => {
      while (!done()) {
        const { value, done: end } = await reader.read();
        if (end) throw new Error(`stream ended: ${text}`);
        text += decoder.decode(value, { stream: true });
      }
    };
    try {
      await readUntil(() => parts().some((p) => Object.keys(p).length === 0));
      await renameSite('Docs (wire)');
      await readUntil(() => parts().some((p) => p.payload));
      const payload = parts().find((p) => p.payload).payload;
      expect(payload.data.siteStructureChanged.site).toEqual({ id: s.siteId, title: 'Docs (wire)' });
      expect(payload.errors).toBeUndefined();
      // Every part is JSON with Apollo's part header; nothing but heartbeats and payloads.
      expect(parts().every((p) => Object.keys(p).length === 0 || Object.keys(p).join() === 'payload')).toBe(true);
      expect(text).toMatch(/^\r\n--graphql\r\nContent-Type: application\/json; charset=utf-8\r\n\r\n/);
    } finally {
      ac.abort();
      await renameSite('Docs');
    }
  });

  it('a subscription to a site the caller may not see: Apollo gets the NOT_FOUND as a GraphQL error', async () => {
    const outsider = await t.as('outsider');
    const client = apollo(outsider.token!);
    const results: any[] = [];
    await new Promise<void>((resolve) => {
      client.subscribe<any>({ query: gql(SITE_CHANGES), variables: { site: s.siteId } }).subscribe({ next: (r) => results.push(r), error: (e) => (results.push({ thrown: e }), resolve()), complete: resolve });
    });
    expect(results).toHaveLength(1);
    const error = results[0].error ?? results[0].thrown;
    expect(JSON.stringify(error.errors ?? error)).toContain('NOT_FOUND');
  });

  it('an Accept no transport answers gets a 406 that names the transports; event streams still win when preferred', async () => {
    const ask = (accept: string) =>
      fetch(`${t.baseUrl}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept, authorization: `Bearer ${t.token}` },
        body: JSON.stringify({ query: SITE_CHANGES, variables: { site: s.siteId } }),
      });
    for (const accept of ['application/json', 'application/graphql-response+json', 'multipart/mixed']) {
      const res = await ask(accept);
      expect(res.status, accept).toBe(406);
      const body = await res.json();
      expect(body.errors[0].extensions.code).toBe('NOT_ACCEPTABLE');
      expect(body.errors[0].message).toContain('text/event-stream');
      expect(body.errors[0].message).toContain('subscriptionSpec');
      expect(body.errors[0].message).toContain('graphql-ws');
    }
    const sse = await ask('text/event-stream, multipart/mixed;subscriptionSpec=1.0');
    expect(sse.headers.get('content-type')).toMatch(/^text\/event-stream/);
    await sse.body?.cancel();
    // Which Accept headers get Apollo's protocol.
    expect(wantsMultipartSubscription(APOLLO_SUBSCRIPTION_ACCEPT)).toBe(true);
    expect(wantsMultipartSubscription('multipart/mixed;boundary="graphql";subscriptionSpec="1.0", text/event-stream')).toBe(true);
    expect(wantsMultipartSubscription('text/event-stream;q=0.5, multipart/mixed;subscriptionSpec=1.0')).toBe(true);
    expect(wantsMultipartSubscription('text/event-stream, multipart/mixed;subscriptionSpec=1.0')).toBe(false);
    expect(wantsMultipartSubscription('multipart/mixed;deferSpec=20220824, application/json')).toBe(false);
    expect(wantsMultipartSubscription(null)).toBe(false);
  });
});
