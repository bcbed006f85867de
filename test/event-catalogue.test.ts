// The event catalogue (src/events/catalogue.ts) is the one vocabulary of the event log: every type
// written is in it (the type check refuses others: the `@ts-expect-error` lines below fail
// `npm run typecheck` the day a typo is accepted), every row of it is written somewhere, and the
// GraphQL `EventType` enum and the webhooks' `eventTypes` come from it.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { EVENTS, EVENT_OBJECT_TYPES, EVENT_TYPES, EventTypeList, eventDefinition } from '../src/events/catalogue.ts';
import { recordEvent, type EventActor } from '../src/events/log.ts';

const SRC = path.join(import.meta.dirname, '../src');

function sources(dir: string): Array<{ file: string; text: string }> {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
    const p = path.join(dir, d.name);
    if (d.isDirectory()) return d.name === 'generated' ? [] : sources(p);
    return d.name.endsWith('.ts') ? [{ file: path.relative(SRC, p), text: fs.readFileSync(p, 'utf8') }] : [];
  });
}

describe('the event catalogue', () => {
  it('has an object type, a description and a payload schema per row', () => {
    expect(EVENT_TYPES.length).toBeGreaterThan(70);
    for (const [name, e] of Object.entries(EVENTS)) {
      expect(name).toMatch(/^[a-z][a-z0-9_]*$/);
      expect(EVENT_OBJECT_TYPES, name).toContain(e.object);
      expect(e.description, name).toMatch(/^[A-Z].*\.\)?$/);
      expect(typeof e.payload.safeParse, name).toBe('function');
    }
  });

  it('recordEvent takes only catalogue types and their payloads (checked by tsc)', () => {
    const actor = {} as EventActor;
    const tx = {} as never;
    const calls = [
      // @ts-expect-error a type that is not in the catalogue
      () => recordEvent(tx, actor, { type: 'space_create', organizationId: 'org_x', objectId: 'space_x' }),
      // @ts-expect-error a payload that is not the type's
      () => recordEvent(tx, actor, { type: 'space_deleted', organizationId: 'org_x', objectId: 'space_x', payload: { name: 'x' } }),
      // @ts-expect-error a payload missing a field the type requires
      () => recordEvent(tx, actor, { type: 'site_published', organizationId: 'org_x', objectId: 'site_x', payload: {} }),
      () => recordEvent(tx, actor, { type: 'site_deleted', organizationId: 'org_x', objectId: 'site_x' }),
    ];
    expect(calls).toHaveLength(4);
  });

  it('every type a recordEvent line names is in the catalogue, and every row is written somewhere', () => {
    const files = sources(SRC).filter((f) => !f.file.startsWith('events/'));
    const named = new Set<string>();
    for (const { file, text } of files) {
      for (const line of text.split('\n')) {
        if (!/recordEvent\(|structureEvent\(|redirectEvent\(|recordImportEvent\(/.test(line)) continue;
        for (const m of line.matchAll(/(?:type: |Event\(site, |Event\()'([a-z_]+)'/g)) named.add(`${file}: ${m[1]}`);
      }
    }
    expect(named.size).toBeGreaterThan(40);
    for (const entry of named) expect(eventDefinition(entry.split(': ')[1]), entry).toBeDefined();

    const all = files.map((f) => f.text).join('\n');
    const comments = files.find((f) => f.file === 'domain/comments.ts')!.text;
    for (const name of EVENT_TYPES) {
      // Comment events are built from their verb: `commentEvent(scope, c, 'posted')`.
      const verb = /^comment(?:_reply)?_([a-z]+)$/.exec(name)?.[1];
      const written = all.includes(`'${name}'`) || (verb !== undefined && comments.includes(`'${verb}'`));
      expect(written, `${name} is in the catalogue but nothing records it`).toBe(true);
    }
  });

  it('is the GraphQL EventType enum, value for value', () => {
    const sdl = fs.readFileSync(path.join(SRC, '../schema.graphql'), 'utf8');
    const block = /\nenum EventType \{([\s\S]*?)\n\}/.exec(sdl)?.[1] ?? '';
    const values = [...block.matchAll(/^\s+([a-z][a-z0-9_]*)\s*$/gm)].map((m) => m[1]);
    expect(values.sort()).toEqual([...EVENT_TYPES].sort());
  });

  it('validates a webhook’s event types: unknown names refused by index, duplicates dropped', () => {
    const typo = EventTypeList.safeParse(['space_created', 'space_create']);
    expect(typo.success).toBe(false);
    expect(typo.error?.issues[0].path).toEqual([1]);
    expect(EventTypeList.parse(['space_created', 'space_created', 'site_published'])).toEqual(['space_created', 'site_published']);
    expect(EventTypeList.safeParse(['__proto__']).success).toBe(false);
  });
});

describe('the task table’s names', () => {
  it('are the only names the queue takes (checked by tsc)', () => {
    const jobs = {} as import('../src/jobs.ts').Jobs;
    const calls = [
      // @ts-expect-error a task the table does not hold
      () => jobs.enqueue({} as never, 'deliverWebhok', {}),
      () => jobs.enqueue({} as never, 'deliverWebhook', { deliveryId: 'whd_x' }),
    ];
    expect(calls).toHaveLength(2);
  });
});
