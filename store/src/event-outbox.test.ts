import { EventRecord, keys } from '@vtl/api';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventJournal } from './event-journal.js';
import { EventOutbox } from './event-outbox.js';
import { Store } from './store.js';
import { startTestEtcd, type TestEtcd } from './test-etcd.js';

let etcd: TestEtcd;
let store: Store;
beforeAll(async () => {
  etcd = await startTestEtcd();
  store = await Store.connect({ endpoints: [etcd.endpoint], deadlineMs: 1_000 });
});
afterAll(async () => {
  await store?.close();
  await etcd?.stop();
});

/** A pino logger whose lines land in `lines`. */
function capture(lines: { msg: string }[]) {
  return pino({ level: 'info' }, { write: (s: string) => void lines.push(JSON.parse(s) as { msg: string }) });
}

describe('EventJournal.record (the outbox)', () => {
  it('holds events while etcd does not answer and writes them in order, each once, when it does', async () => {
    await store.deletePrefix('/vtl/');
    const journal = new EventJournal(store);
    journal.record({ kind: 'k', subject: 'before' });
    await journal.recorded();
    process.kill(etcd.pid, 'SIGSTOP');
    try {
      for (let i = 0; i < 30; i++) journal.record({ kind: 'k', subject: `held${i}` });
      // Several failed attempts (1 s deadline each) while it is frozen.
      await new Promise((r) => setTimeout(r, 2_500));
    } finally {
      process.kill(etcd.pid, 'SIGCONT');
    }
    journal.record({ kind: 'k', subject: 'after' });
    await journal.recorded();
    const { items } = await store.list(keys.events.prefix, EventRecord);
    const subjects = items.sort((a, b) => a.value.id - b.value.id).map((i) => i.value.subject);
    expect(subjects).toEqual(['before', ...Array.from({ length: 30 }, (_, i) => `held${i}`), 'after']);
  }, 20_000);

  it('refuses events past its bound with one error line, and says when the held ones are written', async () => {
    const lines: { msg: string }[] = [];
    let failing = true;
    const written: string[] = [];
    const outbox = new EventOutbox(
      {
        allocate: async (events, ts) =>
          events.map((e, i) => ({ id: i, ts: ts[i]!, detail: '', data: {}, ...e })),
        write: async (records) => {
          if (failing) throw new Error('etcd does not answer');
          written.push(...records.map((r) => r.subject));
        },
      },
      capture(lines),
      () => false,
      3,
    );
    for (let i = 0; i < 5; i++) outbox.record({ kind: 'k', subject: `e${i}` });
    await new Promise((r) => setTimeout(r, 50));
    failing = false;
    await outbox.flushed();
    expect(written).toEqual(['e0', 'e1', 'e2']);
    expect(lines.map((l) => l.msg)).toEqual([
      'event journal outbox full while the store does not answer; refusing new events',
      'event not recorded yet; holding it and retrying in order',
      'held events recorded',
    ]);
  });
});
