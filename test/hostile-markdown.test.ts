// Hostile markdown: content that made remark quadratic or overflow its stack
// is parsed off the event loop, once, at write time, within a deadline; what does not parse in
// time, or nests too deep, is a 400 naming the field and changes nothing; reads parse nothing;
// older rows are converted by the backfill job.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers.ts';
import { markdownPoolCalls } from '../src/lib/markdown-pool.ts';
import { markdownToDocument } from '../src/lib/markdown.ts';
import { backfillParsedContent } from '../src/domain/markdown-backfill.ts';
import { makePng } from './fixtures/content.ts';

/** Deadline for these tests: short, so a refused write does not take long. */
const TIMEOUT_MS = 2000;

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ config: { markdown: { timeoutMs: TIMEOUT_MS, threads: 2, maxNesting: 100 } } });
});
afterAll(async () => {
  await t?.close();
});

// The attacks of the issue.
const STARS = '*a'.repeat(58_500); // 117 KB: about 3 minutes of remark on the event loop before
const QUOTES = '> '.repeat(20_000); // overflowed remark's stack: every read was a 500
const NESTED_LIST = `${'- '.repeat(2000)}a`; // a list 2,000 levels deep: 10.8 s
const BRACKETS = '['.repeat(40_000); // froze a write for 6.7 s

async function newSpace(title = 'Hostile') {
  const r = await t.rest('POST', `/v1/orgs/${t.org.id}/spaces`, { title });
  expect(r.status).toBe(201);
  return r.body.id as string;
}

const edit = (spaceId: string, changes: unknown[]) => t.rest('POST', `/v1/spaces/${spaceId}/content`, { changes });
const revisionOf = async (spaceId: string) => (await t.app.prisma.space.findUniqueOrThrow({ where: { id: spaceId } })).revisionId;

/**
 * Run `fn` while /healthz is asked every 20 ms (one at a time); the slowest answer, and how many
 * there were. Before the fix a parse held the event loop, and /healthz with it, for minutes.
 */
async function whilePolled<T>(fn: () => Promise<T>): Promise<{ result: T; slowestMs: number; answered: number }> {
  let done = false;
  let slowestMs = 0;
  let answered = 0;
  const poll = (async () => {
    while (!done) {
      const started = performance.now();
      const r = await fetch(`${t.baseUrl}/healthz`);
      await r.arrayBuffer();
      expect(r.status).toBe(200);
      slowestMs = Math.max(slowestMs, performance.now() - started);
      answered++;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  })();
  try {
    const result = await fn();
    return { result, slowestMs, answered };
  } finally {
    done = true;
    await poll;
  }
}

/** A 400 whose message names `field` first (REST: `{error: {code, message}}`). */
function expectRefused(r: { status: number; body: any }, field: string) {
  expect(r.status, JSON.stringify(r.body)).toBe(400);
  expect(r.body.error.message.startsWith(`${field}: `), r.body.error.message).toBe(true);
}

describe('writes of hostile markdown', () => {
  it('the 117 KB `*a` page is refused within the deadline, naming the field, while /healthz answers throughout', async () => {
    const spaceId = await newSpace();
    const before = await revisionOf(spaceId);
    const started = performance.now();
    const { result, slowestMs, answered } = await whilePolled(() => edit(spaceId, [{ operation: 'insert_page', title: 'Stars', document: { markdown: STARS } }]));
    expectRefused(result, 'changes.0.document.markdown');
    expect(result.body.error.message).toContain(`within ${TIMEOUT_MS} ms`);
    // The deadline, plus a generous margin for a loaded machine; before: about 3 minutes.
    expect(performance.now() - started).toBeLessThan(TIMEOUT_MS + 15_000);
    expect(slowestMs).toBeLessThan(1000);
    expect(answered).toBeGreaterThan(5);
    expect(await revisionOf(spaceId)).toBe(before);
  });

  it('`> ` × 20,000 and a 2,000-level list are 400s naming the field (not 500s), and nothing changes', async () => {
    const spaceId = await newSpace();
    const ok = await edit(spaceId, [{ operation: 'insert_page', title: 'Fine', document: { markdown: 'fine' } }]);
    expect(ok.status).toBe(200);
    const pageId = ok.body.changes[0].page.id;
    const before = await revisionOf(spaceId);

    const quotes = await edit(spaceId, [{ operation: 'insert_page', title: 'Quotes', document: { markdown: QUOTES } }]);
    expectRefused(quotes, 'changes.0.document.markdown');
    expect(quotes.body.error.message).toContain('deeper than 100 levels');
    const list = await edit(spaceId, [
      { operation: 'update_page', page: pageId, title: 'Renamed' },
      { operation: 'update_page', page: pageId, document: { markdown: NESTED_LIST } },
    ]);
    expectRefused(list, 'changes.1.document.markdown');
    expect(await revisionOf(spaceId)).toBe(before);
    const page = await t.rest('GET', `/v1/spaces/${spaceId}/content/page/${pageId}?format=document`);
    expect(page.status).toBe(200);
    expect(page.body.title).toBe('Fine');
  });

  it('`[` × 40,000 does not block /healthz while it is written (accepted or refused by the deadline)', async () => {
    const spaceId = await newSpace();
    const before = await revisionOf(spaceId);
    const { result, slowestMs, answered } = await whilePolled(() => edit(spaceId, [{ operation: 'insert_page', title: 'Brackets', document: { markdown: BRACKETS } }]));
    expect([200, 400]).toContain(result.status);
    if (result.status === 400) {
      expectRefused(result, 'changes.0.document.markdown');
      expect(await revisionOf(spaceId)).toBe(before);
    }
    expect(slowestMs).toBeLessThan(1000);
    expect(answered).toBeGreaterThan(2);
  });

  it('comments: a nesting bomb and the `*a` body are 400s naming body.markdown; nothing is posted', async () => {
    const spaceId = await newSpace();
    const quotes = await t.rest('POST', `/v1/spaces/${spaceId}/comments`, { body: { markdown: QUOTES } });
    expectRefused(quotes, 'body.markdown');
    const { result, slowestMs } = await whilePolled(() => t.rest('POST', `/v1/spaces/${spaceId}/comments`, { body: { markdown: '*a'.repeat(50_000) } }));
    expectRefused(result, 'body.markdown');
    expect(slowestMs).toBeLessThan(1000);
    expect(await t.app.prisma.comment.count({ where: { spaceId } })).toBe(0);

    const posted = await t.rest('POST', `/v1/spaces/${spaceId}/comments`, { body: { markdown: 'fine' } });
    expect(posted.status).toBe(200);
    const edited = await t.rest('PUT', `/v1/spaces/${spaceId}/comments/${posted.body.id}`, { body: { markdown: NESTED_LIST } });
    expectRefused(edited, 'body.markdown');
    const reply = await t.rest('POST', `/v1/spaces/${spaceId}/comments/${posted.body.id}/replies`, { body: { markdown: QUOTES } });
    expectRefused(reply, 'body.markdown');
    const stored = await t.app.prisma.comment.findMany({ where: { spaceId } });
    expect(stored.map((c) => c.markdown)).toEqual(['fine']);
  });
});

describe('reads', () => {
  it('document, links, backlinks and comments of stored content parse nothing, and answer what parsing would', async () => {
    const spaceId = await newSpace();
    const markdown = '## Intro\n\nSee [setup](./setup.md), [missing](./nowhere.md) and [the web](https://example.com).\n\n![Logo](./logo.png)\n\n> a **quote**\n';
    const png = makePng(2, 2);
    const r = await edit(spaceId, [
      { operation: 'insert_page', title: 'Guide', document: { markdown } },
      { operation: 'insert_page', ref: 'setup', title: 'Setup', document: { markdown: 'Install.' } },
      { operation: 'insert_files', files: [{ ref: 'logo.png', name: 'logo.png', contentType: 'image/png', base64: png.toString('base64') }] },
    ]);
    expect(r.status).toBe(200);
    const guide = r.body.changes[0].page.id;
    const fileId = r.body.insertedFiles[0].id;
    const comment = await t.rest('POST', `/v1/spaces/${spaceId}/comments`, { page: guide, body: { markdown: 'A [link](https://example.com) **here**' } });
    expect(comment.status).toBe(200);

    const before = markdownPoolCalls();
    const page = await t.rest('GET', `/v1/spaces/${spaceId}/content/page/${guide}?format=document`);
    expect(page.status).toBe(200);
    const stored = (await t.app.prisma.pageVersion.findFirstOrThrow({ where: { pageId: guide } })).markdown;
    // The stored document is what converting the stored markdown gives (as reads did before).
    expect(page.body.document).toEqual(markdownToDocument(stored));
    expect(page.text).toContain(JSON.stringify(markdownToDocument(stored))); // byte for byte, keys in the same order
    const links = await t.rest('GET', `/v1/spaces/${spaceId}/links`);
    expect(links.status).toBe(200);
    expect(links.body.items.map((l: any) => [l.targetReference.kind, l.status]).sort()).toEqual([
      ['file', 'ok'],
      ['page', 'ok'],
      ['url', 'broken'],
      ['url', 'ok'],
    ]);
    const pageLinks = await t.rest('GET', `/v1/spaces/${spaceId}/content/page/${guide}/links`);
    expect(pageLinks.body.items).toHaveLength(4);
    const backlinks = await t.rest('GET', `/v1/spaces/${spaceId}/content/files/${fileId}/backlinks`);
    expect(backlinks.body.items.map((l: any) => l.page.id)).toEqual([guide]);
    const got = await t.rest('GET', `/v1/spaces/${spaceId}/comments/${comment.body.id}?format=document`);
    expect(got.body.body.document).toEqual(markdownToDocument('A [link](https://example.com) **here**'));
    const gql = await t.gql(`query($id: ID!) { node(id: $id) { ... on Space { revision { allPages { document markdown links { totalCount } } } } } }`, { id: spaceId });
    expect(gql.errors).toBeUndefined();
    expect(gql.data.node.revision.allPages[0].document).toEqual(page.body.document);
    expect(markdownPoolCalls()).toEqual(before);
  });
});

describe('writes that keep the text', () => {
  it('a rename parses nothing: the new version takes the document, links and sections of the one with the same markdown', async () => {
    const spaceId = await newSpace();
    const r = await edit(spaceId, [{ operation: 'insert_page', title: 'Before', document: { markdown: '## One\n\n[x](https://example.com)\n\n## Two\n\ntext' } }]);
    const pageId = r.body.changes[0].page.id;
    const calls = markdownPoolCalls();
    expect((await edit(spaceId, [{ operation: 'update_page', page: pageId, title: 'After' }])).status).toBe(200);
    expect(markdownPoolCalls()).toEqual(calls);
    const versions = await t.app.prisma.pageVersion.findMany({ where: { pageId }, include: { sections: { orderBy: { position: 'asc' } } }, orderBy: { createdAt: 'asc' } });
    expect(versions.map((v) => v.title)).toEqual(['Before', 'After']);
    expect(versions[1].document).toEqual(versions[0].document);
    expect(versions[1].links).toEqual([{ kind: 'url', target: 'https://example.com' }]);
    expect(versions[1].sections.map((x) => x.anchor)).toEqual(['one', 'two']);
  });
});

describe('content written before parsing at write time', () => {
  it('is read through the pool until the backfill job converts it; the job is idempotent and stores unparsable rows unparsed', async () => {
    const spaceId = await newSpace();
    const r = await edit(spaceId, [
      { operation: 'insert_page', title: 'Old', document: { markdown: '# Head\n\n[x](https://example.com/old) text' } },
      { operation: 'insert_page', title: 'Old stars', document: { markdown: 'short for now' } },
    ]);
    expect(r.status).toBe(200);
    const [oldPage, starsPage] = r.body.changes.map((c: any) => c.page.id as string);
    const comment = await t.rest('POST', `/v1/spaces/${spaceId}/comments`, { body: { markdown: 'old *comment*' } });
    // Make them as rows written before the migration: no document, no links, no sections; one
    // with the pathological markdown nobody could have written through the API now.
    await t.app.prisma.$executeRawUnsafe(`UPDATE "PageVersion" SET "markdown" = $1 WHERE "pageId" = $2`, STARS, starsPage);
    await t.app.prisma.$executeRawUnsafe(
      `DELETE FROM "PageSection" WHERE "versionId" IN (SELECT id FROM "PageVersion" WHERE "pageId" = ANY($1::text[]))`,
      [oldPage, starsPage],
    );
    await t.app.prisma.$executeRawUnsafe(`UPDATE "PageVersion" SET "document" = NULL, "links" = NULL WHERE "pageId" = ANY($1::text[])`, [oldPage, starsPage]);
    await t.app.prisma.$executeRawUnsafe(`UPDATE "Comment" SET "document" = NULL WHERE id = $1`, comment.body.id);

    // Before the backfill: read through the pool (the pathological one within the deadline, as text).
    const calls0 = markdownPoolCalls().parse;
    const { result: stars, slowestMs } = await whilePolled(() => t.rest('GET', `/v1/spaces/${spaceId}/content/page/${starsPage}?format=document`));
    expect(stars.status).toBe(200);
    expect(stars.body.document.nodes[0].type).toBe('code');
    expect(slowestMs).toBeLessThan(1000);
    const old = await t.rest('GET', `/v1/spaces/${spaceId}/content/page/${oldPage}?format=document`);
    expect(old.body.document).toEqual(markdownToDocument('[x](https://example.com/old) text'));
    const links = await t.rest('GET', `/v1/spaces/${spaceId}/links`);
    expect(links.body.items.map((l: any) => l.targetReference.url)).toEqual(['https://example.com/old']);
    expect(markdownPoolCalls().parse).toBeGreaterThan(calls0);

    const deps = { prisma: t.app.prisma, log: t.app.log, services: t.app.services };
    const first = await backfillParsedContent(deps);
    expect(first).toEqual({ pageVersions: 2, comments: 1 });
    const rows = await t.app.prisma.pageVersion.findMany({ where: { pageId: { in: [oldPage, starsPage] } }, include: { sections: true } });
    const oldRow = rows.find((v) => v.pageId === oldPage)!;
    expect(oldRow.document).toEqual(markdownToDocument(oldRow.markdown));
    expect(oldRow.links).toEqual([{ kind: 'url', target: 'https://example.com/old' }]);
    expect(oldRow.sections.map((s) => s.body)).toEqual(['x text']);
    const starsRow = rows.find((v) => v.pageId === starsPage)!;
    expect((starsRow.document as any).nodes[0].type).toBe('code');
    expect(starsRow.sections).toHaveLength(1);
    expect((await t.app.prisma.comment.findUniqueOrThrow({ where: { id: comment.body.id } })).document).toEqual(markdownToDocument('old *comment*'));

    // Again: nothing left, nothing parsed; and reads parse nothing any more.
    const calls1 = markdownPoolCalls();
    expect(await backfillParsedContent(deps)).toEqual({ pageVersions: 0, comments: 0 });
    const again = await t.rest('GET', `/v1/spaces/${spaceId}/content/page/${starsPage}?format=document`);
    expect(again.body.document).toEqual(stars.body.document);
    await t.rest('GET', `/v1/spaces/${spaceId}/links`);
    const c = await t.rest('GET', `/v1/spaces/${spaceId}/comments/${comment.body.id}?format=document`);
    expect(c.body.body.document).toEqual(markdownToDocument('old *comment*'));
    expect(markdownPoolCalls()).toEqual(calls1);
  });
});
