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
 * While requests keep coming, a read is sent every quarter window, so a steady load never waits
 * for a round trip; an idle apiserver sends none.
 */
export class RevisionWindow {
  private readonly inFlight: RevisionRead[] = [];
  /** The newest completed read and when it began. */
  private last: { startedAt: number; revision: string } | undefined;

  constructor(
    private readonly read: () => Promise<string>,
    private readonly windowMs = REVISION_WINDOW_MS,
    private readonly now: () => number = () => performance.now(),
  ) {}

  revision(since: number, strict = false): Promise<string> {
    const cutoff = strict ? since : since - this.windowMs;
    const last = this.last;
    if (last && last.startedAt >= cutoff) {
      this.readAhead(last.startedAt);
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
    this.readAhead(last.startedAt);
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
   * Keeps a steady load inside the window: a read is sent every quarter window while requests
   * come (two at most in flight), so the newest answered read stays inside the window as long
   * as etcd answers within three quarters of it, even on a loaded machine.
   */
  private readAhead(newestDone: number): void {
    const newest = Math.max(newestDone, ...this.inFlight.map((r) => r.startedAt));
    if (this.inFlight.length >= MAX_IN_FLIGHT || this.now() - newest < this.windowMs / 4) return;
    // Nobody waits for it; a failure shows up in the next request that has to.
    this.start().revision.catch(() => undefined);
  }

  private start(): RevisionRead {
    const startedAt = this.now();
    const read: RevisionRead = {
      startedAt,
      revision: this.read()
        .then((revision) => {
          if (!this.last || this.last.startedAt < startedAt) this.last = { startedAt, revision };
          return revision;
        })
        .finally(() => this.inFlight.splice(this.inFlight.indexOf(read), 1)),
    };
    this.inFlight.push(read);
    return read;
  }
}
