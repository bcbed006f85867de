import { describe, expect, it } from 'vitest';
import { mergePageMaps, mergeText, type MergeMapOptions } from '../../src/lib/merge.ts';

const BASE = 'one\ntwo\nthree\nfour\nfive\n';

describe('mergeText', () => {
  it('takes the only side that changed', () => {
    expect(mergeText(BASE, BASE, 'one\ntwo\n3\nfour\nfive\n')).toEqual({ clean: true, text: 'one\ntwo\n3\nfour\nfive\n' });
    expect(mergeText(BASE, 'zero\n' + BASE, BASE)).toEqual({ clean: true, text: 'zero\n' + BASE });
  });

  it('merges edits of different lines', () => {
    const ours = 'ONE\ntwo\nthree\nfour\nfive\n';
    const theirs = 'one\ntwo\nthree\nfour\nFIVE\nsix\n';
    expect(mergeText(BASE, ours, theirs)).toEqual({ clean: true, text: 'ONE\ntwo\nthree\nfour\nFIVE\nsix\n' });
  });

  it('merges a deletion with an edit elsewhere', () => {
    expect(mergeText(BASE, 'one\nthree\nfour\nfive\n', 'one\ntwo\nthree\nfour\n5\n')).toEqual({
      clean: true,
      text: 'one\nthree\nfour\n5\n',
    });
  });

  it('does not treat the same edit on both sides as a conflict', () => {
    const edited = 'one\nTWO\nthree\nfour\nfive\n';
    expect(mergeText(BASE, edited, edited)).toEqual({ clean: true, text: edited });
    // Same change to one line, different changes to lines further away.
    expect(mergeText(BASE, 'ONE\ntwo\nTHREE\nfour\nfive\n', 'one\ntwo\nTHREE\nfour\nFIVE\n')).toEqual({
      clean: true,
      text: 'ONE\ntwo\nTHREE\nfour\nFIVE\n',
    });
    // Overlapping hunks that differ conflict, even if they share a line.
    expect(mergeText(BASE, 'ONE\nTWO\nthree\nfour\nfive\n', 'one\nTWO\nthree\nfour\nfive\n')).toEqual({ clean: false, conflicts: 1 });
  });

  it('reports conflicting edits of the same line', () => {
    expect(mergeText(BASE, 'one\nTWO\nthree\nfour\nfive\n', 'one\n2\nthree\nfour\nfive\n')).toEqual({ clean: false, conflicts: 1 });
    expect(mergeText(BASE, 'A\ntwo\nthree\nfour\nE\n', 'B\ntwo\nthree\nfour\nF\n')).toEqual({ clean: false, conflicts: 2 });
  });

  it('reports different insertions at the same place', () => {
    expect(mergeText('', 'ours\n', 'theirs\n')).toEqual({ clean: false, conflicts: 1 });
  });

  it('splits on lines, not on whitespace', () => {
    // Word-level merging would combine these; line-based merging must not.
    expect(mergeText('a b c', 'A b c', 'a b C')).toEqual({ clean: false, conflicts: 1 });
  });
});

interface Page {
  title: string;
  body: string;
}

const pageOpts: MergeMapOptions<Page> = {
  equals: (a, b) => a.title === b.title && a.body === b.body,
  mergeValue(base, main, branch) {
    const title = main.title === base.title ? branch.title : branch.title === base.title || branch.title === main.title ? main.title : null;
    const body = mergeText(base.body, main.body, branch.body);
    return title !== null && body.clean ? { clean: true, value: { title, body: body.text } } : { clean: false };
  },
};

const page = (title: string, body = 'line 1\nline 2\nline 3\n'): Page => ({ title, body });
const map = (entries: Record<string, Page>) => new Map(Object.entries(entries));

describe('mergePageMaps', () => {
  const base = map({ a: page('A'), b: page('B') });

  it('keeps everything when nothing changed', () => {
    expect(mergePageMaps(base, map({ ...Object.fromEntries(base) }), map({ ...Object.fromEntries(base) }), pageOpts)).toEqual({
      clean: true,
      result: base,
    });
  });

  it('takes an insertion made on one side', () => {
    const branch = map({ a: page('A'), b: page('B'), c: page('C') });
    expect(mergePageMaps(base, base, branch, pageOpts)).toEqual({ clean: true, result: branch });
    const main = map({ a: page('A'), b: page('B'), d: page('D') });
    expect(mergePageMaps(base, main, base, pageOpts)).toEqual({ clean: true, result: main });
  });

  it('takes insertions made on both sides under different keys', () => {
    const r = mergePageMaps(base, map({ a: page('A'), b: page('B'), m: page('M') }), map({ a: page('A'), b: page('B'), x: page('X') }), pageOpts);
    expect(r).toEqual({ clean: true, result: map({ a: page('A'), b: page('B'), m: page('M'), x: page('X') }) });
  });

  it('takes a deletion made on one side', () => {
    expect(mergePageMaps(base, base, map({ a: page('A') }), pageOpts)).toEqual({ clean: true, result: map({ a: page('A') }) });
    expect(mergePageMaps(base, map({ b: page('B') }), base, pageOpts)).toEqual({ clean: true, result: map({ b: page('B') }) });
  });

  it('takes a deletion made on both sides', () => {
    expect(mergePageMaps(base, map({ a: page('A') }), map({ a: page('A') }), pageOpts)).toEqual({ clean: true, result: map({ a: page('A') }) });
  });

  it('takes a modification made on one side', () => {
    const branch = map({ a: page('A2'), b: page('B') });
    expect(mergePageMaps(base, base, branch, pageOpts)).toEqual({ clean: true, result: branch });
  });

  it('takes the same insertion and the same modification made on both sides', () => {
    const both = map({ a: page('A2'), b: page('B'), c: page('C') });
    const r = mergePageMaps(base, both, map({ ...Object.fromEntries(both) }), {
      ...pageOpts,
      mergeValue: () => {
        throw new Error('equal values must not be merged');
      },
    });
    expect(r).toEqual({ clean: true, result: both });
  });

  it('merges values modified on both sides on different lines', () => {
    const main = map({ a: page('A', 'LINE 1\nline 2\nline 3\n'), b: page('B') });
    const branch = map({ a: page('A', 'line 1\nline 2\nLINE 3\n'), b: page('B') });
    expect(mergePageMaps(base, main, branch, pageOpts)).toEqual({
      clean: true,
      result: map({ a: page('A', 'LINE 1\nline 2\nLINE 3\n'), b: page('B') }),
    });
  });

  it('reports values modified on both sides on the same line', () => {
    const main = map({ a: page('A', 'line 1\nMAIN\nline 3\n'), b: page('B') });
    const branch = map({ a: page('A', 'line 1\nBRANCH\nline 3\n'), b: page('B2') });
    expect(mergePageMaps(base, main, branch, pageOpts)).toEqual({ clean: false, conflicts: ['a'] });
  });

  it('reports delete on one side vs modify on the other', () => {
    expect(mergePageMaps(base, map({ b: page('B') }), map({ a: page('A2'), b: page('B') }), pageOpts)).toEqual({ clean: false, conflicts: ['a'] });
    expect(mergePageMaps(base, map({ a: page('A2'), b: page('B') }), map({ b: page('B') }), pageOpts)).toEqual({ clean: false, conflicts: ['a'] });
  });

  it('reports different values inserted under the same key', () => {
    expect(mergePageMaps(base, map({ ...Object.fromEntries(base), c: page('C1') }), map({ ...Object.fromEntries(base), c: page('C2') }), pageOpts)).toEqual({
      clean: false,
      conflicts: ['c'],
    });
  });

  it('lists every conflicting key', () => {
    const main = map({ b: page('B', 'x\n') });
    const branch = map({ a: page('A2'), b: page('B', 'y\n') });
    expect(mergePageMaps(base, main, branch, pageOpts)).toEqual({ clean: false, conflicts: ['a', 'b'] });
  });

  it('treats a present undefined value as present', () => {
    const opts: MergeMapOptions<string | undefined> = { equals: (a, b) => a === b, mergeValue: () => ({ clean: false }) };
    const r = mergePageMaps(new Map([['k', 'v']]), new Map([['k', undefined]]), new Map([['k', 'v']]), opts);
    expect(r.clean && [...r.result.entries()]).toEqual([['k', undefined]]);
  });
});
