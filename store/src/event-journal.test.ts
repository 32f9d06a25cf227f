import { EventRecord, keys } from '@vtl/api';
import { beforeEach, describe, expect, it } from 'vitest';
import { EventJournal } from './event-journal.js';
import { useTestStore } from './testing/use-test-store.js';

const env = useTestStore();
beforeEach(async () => {
  await env.store.deletePrefix('/vtl/');
});

describe('EventJournal', () => {
  it('numbers events from 1 and stores them under keys.events', async () => {
    const journal = new EventJournal(env.store);
    const e = await journal.emit({ kind: 'pool_created', subject: 'p1' });
    expect(e).toMatchObject({ id: 1, kind: 'pool_created', subject: 'p1', detail: '', data: {} });
    expect(new Date(e.ts).toISOString()).toBe(e.ts);
    expect((await env.store.get(keys.events.one(1), EventRecord))?.value).toEqual(e);
  });

  it('trims the record `bound` older, so the journal never holds more than bound', async () => {
    const journal = new EventJournal(env.store, 5);
    for (let i = 1; i <= 8; i++) await journal.emit({ kind: 'k', subject: `s${i}` });
    const ids = (await env.store.list(keys.events.prefix, EventRecord)).items.map((i) => i.value.id);
    expect(ids).toEqual([4, 5, 6, 7, 8]);
  });

  it('stays bounded under concurrent emitters', async () => {
    const journal = new EventJournal(env.store, 10);
    await Promise.all(Array.from({ length: 40 }, (_, i) => journal.emit({ kind: 'k', subject: `s${i}` })));
    // A straggler whose put landed after its trim is removed by the next emit at the latest.
    await journal.emit({ kind: 'k', subject: 'last' });
    const ids = (await env.store.list(keys.events.prefix, EventRecord)).items.map((i) => i.value.id);
    expect(ids).toEqual(Array.from({ length: 10 }, (_, i) => 32 + i));
  });

  it('emitMany writes a batch with consecutive ids beside racing single emits, and stays bounded', async () => {
    const journal = new EventJournal(env.store, 300);
    const batch = Array.from({ length: 250 }, (_, i) => ({ kind: 'cart_minted', subject: `B${i}` }));
    const [many] = await Promise.all([
      journal.emitMany(batch),
      ...Array.from({ length: 5 }, (_, i) => journal.emit({ kind: 'k', subject: `single${i}` })),
    ]);
    expect(many.map((e) => e.subject)).toEqual(batch.map((e) => e.subject));
    expect(many.map((e) => e.id)).toEqual(many.map((_, i) => many[0]!.id + i));
    const stored = (await env.store.list(keys.events.prefix, EventRecord)).items.map((i) => i.value);
    expect(stored).toHaveLength(255);
    expect(new Set(stored.map((e) => e.id)).size).toBe(255);
    await journal.emitMany(batch);
    const after = (await env.store.list(keys.events.prefix, EventRecord)).items.map((i) => i.value.id);
    expect(after).toHaveLength(300);
    expect(after.at(-1)).toBe(505);
    expect(await journal.emitMany([])).toEqual([]);
  });

  it('recent() returns the newest first', async () => {
    const journal = new EventJournal(env.store);
    for (let i = 1; i <= 5; i++) await journal.emit({ kind: 'k', subject: `s${i}` });
    expect((await journal.recent(3)).map((e) => e.subject)).toEqual(['s5', 's4', 's3']);
    expect(await journal.recent(10)).toHaveLength(5);
  });

  it('search() matches any case in kind/subject/detail, filters kind exactly, newest first, up to limit', async () => {
    const journal = new EventJournal(env.store);
    await journal.emit({ kind: 'cart_minted', subject: 'AAA001L8', detail: 'slot 3' });
    await journal.emit({ kind: 'pool_created', subject: 'fast', detail: 'node1:/srv/Pool' });
    await journal.emit({ kind: 'cart_deleted', subject: 'AAA001L8' });
    await journal.emit({ kind: 'cart_minted', subject: 'BBB002L8', detail: 'from POOL fast' });
    const subjects = (evs: EventRecord[]) => evs.map((e) => `${e.id}:${e.subject}`);
    expect(subjects(await journal.search({ q: 'pool', limit: 10 }))).toEqual(['4:BBB002L8', '2:fast']);
    expect(subjects(await journal.search({ q: 'aaa001', limit: 10 }))).toEqual(['3:AAA001L8', '1:AAA001L8']);
    expect(subjects(await journal.search({ kind: 'cart_minted', limit: 10 }))).toEqual([
      '4:BBB002L8',
      '1:AAA001L8',
    ]);
    expect(subjects(await journal.search({ kind: 'cart_minted', q: 'aaa', limit: 10 }))).toEqual([
      '1:AAA001L8',
    ]);
    expect(await journal.search({ kind: 'all', limit: 10 })).toHaveLength(4);
    expect(await journal.search({ kind: '', q: '', limit: 2 })).toHaveLength(2);
    expect(await journal.search({ kind: 'cart', limit: 10 })).toHaveLength(0);
  });

  it('search() walks past the first page to find older matches', async () => {
    const journal = new EventJournal(env.store);
    await journal.emit({ kind: 'rare', subject: 'needle' });
    for (let start = 0; start < 1100; start += 100) {
      const txn = env.store.transaction();
      for (let id = start + 2; id < start + 102; id++) {
        txn.put(keys.events.one(id), {
          id,
          ts: new Date().toISOString(),
          kind: 'noise',
          subject: 'x',
          detail: '',
          data: {},
        });
      }
      await txn.commit();
    }
    const found = await journal.search({ q: 'needle', limit: 5 });
    expect(found.map((e) => e.id)).toEqual([1]);
  });
});
