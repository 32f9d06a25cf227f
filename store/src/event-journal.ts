import { EVENT_JOURNAL_BOUND, EventRecord, keys, NewEvent } from '@vtl/api';
import { EventOutbox, type JournalWriter } from './event-outbox.js';
import type { Store } from './store.js';

/** Events written per transaction by emitMany (etcd's --max-txn-ops is 128). */
const EMIT_CHUNK = 100;

/** Records read per request while searching newest-first. */
const SEARCH_PAGE = 500;

/** The bounded event journal under keys.events: ids from a counter, the oldest trimmed as new ones arrive. */
export class EventJournal implements JournalWriter {
  private outbox: EventOutbox | undefined;

  constructor(
    private readonly store: Store,
    private readonly bound: number = EVENT_JOURNAL_BOUND,
  ) {}

  /** Appends an event (emitMany of one); resolves once it is written. */
  async emit(e: NewEvent): Promise<EventRecord> {
    const [record] = await this.emitMany([e]);
    return record!;
  }

  /**
   * Appends many events with one counter bump and as few transactions as etcd allows (a
   * 400-cartridge mint records 400 events; one by one that is 800 round trips).
   */
  async emitMany(events: readonly NewEvent[]): Promise<EventRecord[]> {
    const ts = new Date().toISOString();
    const records = await this.allocate(
      events,
      events.map(() => ts),
    );
    await this.write(records);
    return records;
  }

  /**
   * Records events without waiting: written in order, and retried while the store does not
   * answer until they are (EventOutbox). For events a process notices rather than a request
   * it answers; a bad event throws here.
   */
  record(...events: NewEvent[]): void {
    const parsed = events.map((e) => NewEvent.parse(e));
    this.outbox ??= new EventOutbox(
      this,
      this.store.log.child({ component: 'event-journal' }),
      () => this.store.isClosed,
    );
    this.outbox.record(...parsed);
  }

  /** Resolves once every event given to record() so far is written. */
  async recorded(): Promise<void> {
    await this.outbox?.flushed();
  }

  /** Numbers events (one counter bump for all) and stamps each with its ts. */
  async allocate(events: readonly NewEvent[], ts: readonly string[]): Promise<EventRecord[]> {
    if (events.length === 0) return [];
    const parsed = events.map((e) => NewEvent.parse(e));
    const first = await this.store.nextIds('events', parsed.length);
    return parsed.map((e, i) => ({ id: first + i, ts: ts[i]!, ...e }));
  }

  /**
   * Writes numbered events, trimming in the same transaction everything `bound` or more older
   * than the newest. Trimming a range rather than the one key also removes a record whose
   * slower writer landed after its trim was due, so racing emitters cannot grow the journal.
   * Idempotent: a chunk is written only while its first key is absent, so a retry after a
   * write whose answer was lost (a member that froze) does not record its events twice.
   */
  async write(records: readonly EventRecord[]): Promise<void> {
    for (let i = 0; i < records.length; i += EMIT_CHUNK) {
      const chunk = records.slice(i, i + EMIT_CHUNK);
      const txn = this.store.transaction().ifAbsent(keys.events.one(chunk[0]!.id));
      for (const r of chunk) txn.put(keys.events.one(r.id), r);
      const last = chunk.at(-1)!.id;
      if (last > this.bound) txn.deleteRange(keys.events.one(0), keys.events.one(last - this.bound + 1));
      await txn.commit();
    }
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
