// The markdown pool shares its threads out by caller (one tenant's flood of parses must
// not delay another's write by the whole flood). With one thread, a caller who queued four parses
// and a caller who arrives after them: the second gets the thread as soon as the running parse
// ends, before the first caller's remaining three.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { closeMarkdownPool, configureMarkdownPool, parseMarkdown } from '../../src/lib/markdown-pool.ts';

let caller = 'a';
beforeAll(() => configureMarkdownPool({ threads: 1, timeoutMs: 30_000, tenantOf: () => caller }));
afterAll(() => closeMarkdownPool());

it('a caller arriving behind another caller’s queued parses is served next, not after them', async () => {
  const finished: string[] = [];
  const parse = (who: string, i: number) => parseMarkdown(`# ${who}${i}\n\n${'*a'.repeat(500)}`).then(() => finished.push(`${who}${i}`));
  caller = 'a';
  const flood = [1, 2, 3, 4].map((i) => parse('a', i));
  caller = 'b';
  const late = parse('b', 1);
  await Promise.all([...flood, late]);
  expect(finished).toEqual(['a1', 'b1', 'a2', 'a3', 'a4']);
});

it('a caller alone still gets every thread in turn, in order', async () => {
  const finished: number[] = [];
  caller = 'solo';
  await Promise.all([1, 2, 3].map((i) => parseMarkdown(`text ${i}`).then(() => finished.push(i))));
  expect(finished).toEqual([1, 2, 3]);
});

it('a parse cancelled while it waits for its turn leaves the queue (ParseCancelled) and the others run', async () => {
  caller = 'c';
  const first = parseMarkdown('# one');
  const stop = new AbortController();
  const waiting = parseMarkdown('# two', stop.signal);
  stop.abort();
  await expect(waiting).rejects.toMatchObject({ name: 'ParseCancelled' });
  await expect(first).resolves.toMatchObject({ sections: [expect.objectContaining({ title: 'one' })] });
  await expect(parseMarkdown('# three')).resolves.toBeTruthy();
});
