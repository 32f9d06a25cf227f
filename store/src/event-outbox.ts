import type { EventRecord, NewEvent } from '@vtl/api';
import type { Logger } from 'pino';

/** Events held while the store does not answer; past it new ones are refused, with an error line. */
export const OUTBOX_BOUND = 10_000;
/** Waits between write attempts while the store does not answer, growing to the last. */
const RETRY_MS = [100, 250, 500, 1_000, 2_000];
/** Events written per round: one counter bump and one transaction (the journal's chunk). */
const BATCH = 100;

/** What the outbox needs from the journal: ids once per event, and an idempotent write of them. */
export interface JournalWriter {
  allocate(events: readonly NewEvent[], ts: readonly string[]): Promise<EventRecord[]>;
  write(records: readonly EventRecord[]): Promise<void>;
}

/**
 * Events a process records without waiting (a supervisor noticing a crash, a fabric changing
 * state), written in order and retried until the store takes them: a store that does not
 * answer for a while delays events, it no longer loses them ("event not recorded"). Ids are
 * taken once per event and the write of a batch is idempotent (JournalWriter.write), so a
 * retry after a write whose answer was lost never records an event twice. Memory is bounded:
 * past OUTBOX_BOUND held events new ones are refused with an error line naming them.
 */
export class EventOutbox {
  private readonly waiting: { event: NewEvent; ts: string }[] = [];
  /** The batch being written, ids taken: retried as it is until written. */
  private inFlight: EventRecord[] | undefined;
  private draining: Promise<void> | undefined;
  private failingSince: number | undefined;
  private refused = 0;

  constructor(
    private readonly journal: JournalWriter,
    private readonly log: Logger,
    /** Whether the store was closed: then retrying is over. */
    private readonly storeClosed: () => boolean,
    private readonly bound = OUTBOX_BOUND,
  ) {}

  /** Queues events for the journal, in order; returns at once. */
  record(...events: NewEvent[]): void {
    const ts = new Date().toISOString();
    for (const event of events) {
      if (this.held >= this.bound) {
        if (this.refused++ === 0)
          this.log.error(
            { bound: this.bound, kind: event.kind, subject: event.subject },
            'event journal outbox full while the store does not answer; refusing new events',
          );
        continue;
      }
      this.waiting.push({ event, ts });
    }
    this.draining ??= this.drain().finally(() => (this.draining = undefined));
  }

  /** How many events wait to be written. */
  get held(): number {
    return this.waiting.length + (this.inFlight?.length ?? 0);
  }

  /** Resolves once every event recorded so far is written (or the store closed). */
  async flushed(): Promise<void> {
    while (this.draining) await this.draining;
  }

  private async drain(): Promise<void> {
    for (let attempt = 0; this.inFlight || this.waiting.length > 0;) {
      if (this.storeClosed()) {
        this.log.warn({ held: this.held }, 'store closed with events not recorded');
        return;
      }
      try {
        if (!this.inFlight) {
          const next = this.waiting.slice(0, BATCH);
          this.inFlight = await this.journal.allocate(
            next.map((w) => w.event),
            next.map((w) => w.ts),
          );
          this.waiting.splice(0, next.length);
        }
        await this.journal.write(this.inFlight);
        this.inFlight = undefined;
        attempt = 0;
        this.recovered();
      } catch (err) {
        if (this.failingSince === undefined) {
          this.failingSince = Date.now();
          this.log.warn({ err, held: this.held }, 'event not recorded yet; holding it and retrying in order');
        }
        await new Promise((r) => setTimeout(r, RETRY_MS[Math.min(attempt++, RETRY_MS.length - 1)]));
      }
    }
  }

  private recovered(): void {
    if (this.failingSince === undefined) return;
    this.log.info(
      { waitedMs: Date.now() - this.failingSince, refused: this.refused, held: this.held },
      'held events recorded',
    );
    this.failingSince = undefined;
    this.refused = 0;
  }
}
