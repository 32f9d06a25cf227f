import { EVENT_JOURNAL_BOUND, EventRecord, keys, NewEvent } from '@vtl/api';
import type { Store } from './store.js';

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
