/**
 * How recent a read of the store's current revision must be to serve a view: one etcd round trip
 * serves every request that arrives within this window after it began (Kubernetes' consistent
 * reads from cache, KEP-2340, with the round trip shared). Under load a revision read per
 * request, or even per batch of requests that must wait for a read begun after they arrived,
 * costs more than serving the view itself (a small view answered 0.17 × precomputed bytes).
 */
export const REVISION_WINDOW_MS = 50;
/** Revision reads in flight at once. */
const MAX_IN_FLIGHT = 2;
/** How many recent reads' durations the read-ahead's timing looks at (their slowest). */
const RECENT_READS = 8;
/** A read-ahead is sent this many of the slowest recent reads before the window runs out. */
const HEADROOM = 3;

interface RevisionRead {
  /** performance.now() when the read was sent. */
  startedAt: number;
  revision: Promise<string>;
}

/**
 * The store's current revision as requests need it, with one read shared by every request of a
 * window. `revision(since)` answers a revision read that began at or after `since - windowMs`:
 * a view at that revision holds every write answered more than `windowMs` before the request
 * arrived. `strict` asks for a read that began after `since` (no staleness at all), for lookups
 * that would otherwise refuse something another process just created.
 *
 * While requests keep coming, the next read is sent before the newest leaves the window (see
 * readAhead), so a steady load never waits for a round trip; an idle apiserver sends none.
 */
export class RevisionWindow {
  private readonly inFlight: RevisionRead[] = [];
  /** The newest completed read and when it began. */
  private last: { startedAt: number; revision: string } | undefined;
  /** Durations of the latest reads, newest last. */
  private readonly durations: number[] = [];
  /** When the newest read was sent. */
  private newestStart = -Infinity;
  /** When readAhead sends the next read (newestStart + readAheadAfter(), kept per read, not per request). */
  private nextReadAt = -Infinity;

  constructor(
    private readonly read: () => Promise<string>,
    private readonly windowMs = REVISION_WINDOW_MS,
    private readonly now: () => number = () => performance.now(),
  ) {}

  revision(since: number, strict = false): Promise<string> {
    const cutoff = strict ? since : since - this.windowMs;
    const last = this.last;
    if (last && last.startedAt >= cutoff) {
      this.readAhead();
      return Promise.resolve(last.revision);
    }
    return this.readAfter(cutoff);
  }

  /**
   * revision() without waiting: the revision when a read that serves `since` has completed,
   * else undefined (the caller then waits through revision()). Keeps the read-ahead going.
   */
  peek(since: number): string | undefined {
    const last = this.last;
    if (!last || last.startedAt < since - this.windowMs) return undefined;
    this.readAhead();
    return last.revision;
  }

  /** The newest completed read's revision, if any (for messages). */
  get latest(): string | undefined {
    return this.last?.revision;
  }

  /** A read in flight that began at or after cutoff, else a new one (at most MAX_IN_FLIGHT). */
  private readAfter(cutoff: number): Promise<string> {
    const joinable = this.inFlight.find((r) => r.startedAt >= cutoff);
    if (joinable) return joinable.revision;
    if (this.inFlight.length >= MAX_IN_FLIGHT)
      return Promise.race(this.inFlight.map((r) => r.revision.catch(() => undefined))).then(() =>
        this.readAfter(cutoff),
      );
    return this.start().revision;
  }

  /**
   * Keeps a steady load inside the window: while requests come, the next read is sent before
   * the newest one leaves the window, three times the slowest of the last eight reads ahead of
   * the edge and at least every quarter window (two at most in flight). On a quiet machine
   * (etcd answering in a millisecond or two) that is some 20 reads a second instead of 80, each
   * costing the apiserver half a millisecond of CPU in the gRPC client; on a loaded one (reads
   * taking tens of milliseconds) every quarter window, so the newest answered read stays inside
   * the window as long as etcd answers within three quarters of it.
   */
  private readAhead(): void {
    if (this.inFlight.length >= MAX_IN_FLIGHT || this.now() < this.nextReadAt) return;
    // Nobody waits for it; a failure shows up in the next request that has to.
    this.start().revision.catch(() => undefined);
  }

  /** How long after the newest read began the next one is sent. */
  private readAheadAfter(): number {
    const slowest = this.durations.length > 0 ? Math.max(...this.durations) : this.windowMs;
    return Math.max(this.windowMs / 4, this.windowMs - HEADROOM * slowest);
  }

  private start(): RevisionRead {
    const startedAt = this.now();
    this.newestStart = startedAt;
    this.nextReadAt = startedAt + this.readAheadAfter();
    const read: RevisionRead = {
      startedAt,
      revision: this.read()
        .then((revision) => {
          this.durations.push(this.now() - startedAt);
          if (this.durations.length > RECENT_READS) this.durations.shift();
          this.nextReadAt = this.newestStart + this.readAheadAfter();
          if (!this.last || this.last.startedAt < startedAt) this.last = { startedAt, revision };
          return revision;
        })
        .finally(() => this.inFlight.splice(this.inFlight.indexOf(read), 1)),
    };
    this.inFlight.push(read);
    return read;
  }
}
