import { EVENT_JOURNAL_BOUND, EventRecord, keys, NewEvent } from '@vtl/api';
import type { Store } from './store.js';

/** Events written per transaction by emitMany (etcd's --max-txn-ops is 128). */
const EMIT_CHUNK = 100;

/** Records read per request while searching newest-first. */
const SEARCH_PAGE = 500;

/** The bounded event journal under keys.events: ids from a counter, the oldest trimmed as new ones arrive. */
export class EventJournal {
  constructor(
    private readonly store: Store,
    private readonly bound: number = EVENT_JOURNAL_BOUND,
  ) {}

  /**
   * Appends an event and, in the same transaction, trims everything `bound` or more older.
   * Trimming a range rather than the one key also removes a record whose slower writer
   * landed after its trim was due, so racing emitters cannot grow the journal.
   */
  async emit(e: NewEvent): Promise<EventRecord> {
    const parsed = NewEvent.parse(e);
    const id = await this.store.nextId('events');
    const record: EventRecord = { id, ts: new Date().toISOString(), ...parsed };
    const txn = this.store.transaction().put(keys.events.one(id), record);
    if (id > this.bound) txn.deleteRange(keys.events.one(0), keys.events.one(id - this.bound + 1));
    await txn.commit();
    return record;
  }

  /**
   * Appends many events with one counter bump and as few transactions as etcd allows (a
   * 400-cartridge mint records 400 events; one by one that is 800 round trips).
   */
  async emitMany(events: readonly NewEvent[]): Promise<EventRecord[]> {
    if (events.length === 0) return [];
    const parsed = events.map((e) => NewEvent.parse(e));
    const first = await this.store.nextIds('events', parsed.length);
    const ts = new Date().toISOString();
    const records: EventRecord[] = parsed.map((e, i) => ({ id: first + i, ts, ...e }));
    for (let i = 0; i < records.length; i += EMIT_CHUNK) {
      const chunk = records.slice(i, i + EMIT_CHUNK);
      const txn = this.store.transaction();
      for (const r of chunk) txn.put(keys.events.one(r.id), r);
      const last = chunk.at(-1)!.id;
      if (last > this.bound) txn.deleteRange(keys.events.one(0), keys.events.one(last - this.bound + 1));
      await txn.commit();
    }
    return records;
  }

  /** The newest events, newest first. */
  async recent(limit: number): Promise<EventRecord[]> {
    const { items } = await this.store.list(keys.events.prefix, EventRecord, { limit, reverse: true });
    return items.map((i) => i.value);
  }

  /** Newest-first events whose kind/subject/detail contain q (any case) and whose kind is kind ('' or 'all' = any). */
  async search(query: { q?: string; kind?: string; limit: number }): Promise<EventRecord[]> {
    const needle = query.q?.toLowerCase() ?? '';
    const kind = query.kind === 'all' ? '' : (query.kind ?? '');
    const found: EventRecord[] = [];
    let after: string | undefined;
    while (found.length < query.limit) {
      const { items } = await this.store.list(keys.events.prefix, EventRecord, {
        limit: SEARCH_PAGE,
        reverse: true,
        ...(after !== undefined ? { after } : {}),
      });
      for (const { value } of items) {
        if (found.length >= query.limit) break;
        if (kind && value.kind !== kind) continue;
        if (
          needle &&
          ![value.kind, value.subject, value.detail].some((s) => s.toLowerCase().includes(needle))
        )
          continue;
        found.push(value);
      }
      const last = items.at(-1);
      if (!last) break;
      after = last.key;
    }
    return found;
  }
}
