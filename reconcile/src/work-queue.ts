/** Options of WorkQueue. */
export interface WorkQueueOptions {
  /** First retry delay of addRateLimited(); doubles per consecutive failure. Default 100 ms. */
  baseDelayMs?: number;
  /** Cap of the retry delay. Default 60 s. */
  maxDelayMs?: number;
}

/**
 * A work queue with client-go semantics: a waiting key is queued once, a key is never
 * handed to two workers at once, a key added while being processed is processed again
 * after done(), and addRateLimited() backs off per key until forget().
 */
export class WorkQueue<K extends string = string> {
  private readonly queue: K[] = [];
  /** Keys that need processing: waiting in `queue`, or re-added while processing. */
  private readonly dirty = new Set<K>();
  private readonly processing = new Set<K>();
  private readonly delayed = new Map<K, { readyAt: number; timer: NodeJS.Timeout }>();
  private readonly failures = new Map<K, number>();
  private readonly waiters: ((key: K | undefined) => void)[] = [];
  private readonly baseDelayMs: number;
  private readonly maxDelayMs: number;
  private stopped = false;

  constructor(opts: WorkQueueOptions = {}) {
    this.baseDelayMs = opts.baseDelayMs ?? 100;
    this.maxDelayMs = opts.maxDelayMs ?? 60_000;
  }

  /** Keys waiting to be handed out (not those being processed or delayed). */
  get length(): number {
    return this.queue.length;
  }

  /** Queues key unless it is waiting already. */
  add(key: K): void {
    if (this.stopped || this.dirty.has(key)) return;
    this.dirty.add(key);
    if (this.processing.has(key)) return; // done() queues it again
    this.hand(key);
  }

  /** Queues key after ms; of several pending delays for one key the earliest wins. */
  addAfter(key: K, ms: number): void {
    if (this.stopped) return;
    if (ms <= 0) return this.add(key);
    const readyAt = Date.now() + ms;
    const pending = this.delayed.get(key);
    if (pending && pending.readyAt <= readyAt) return;
    if (pending) clearTimeout(pending.timer);
    const timer = setTimeout(() => {
      this.delayed.delete(key);
      this.add(key);
    }, ms);
    this.delayed.set(key, { readyAt, timer });
  }

  /** Queues key after its backoff: baseDelayMs × 2^(failures so far), capped. */
  addRateLimited(key: K): void {
    const failures = this.failures.get(key) ?? 0;
    this.failures.set(key, failures + 1);
    this.addAfter(key, this.backoff(failures));
  }

  /** The delay the next addRateLimited(key) would use. */
  nextBackoff(key: K): number {
    return this.backoff(this.failures.get(key) ?? 0);
  }

  /** How many times key was rate-limited since its last forget(). */
  retries(key: K): number {
    return this.failures.get(key) ?? 0;
  }

  /** Resets key's backoff (after a success). */
  forget(key: K): void {
    this.failures.delete(key);
  }

  /** The next key to process, waiting for one; undefined once shut down. */
  get(): Promise<K | undefined> {
    if (this.stopped) return Promise.resolve(undefined);
    const key = this.queue.shift();
    if (key !== undefined) return Promise.resolve(this.take(key));
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Marks key processed; if it was added meanwhile, it is queued again. */
  done(key: K): void {
    this.processing.delete(key);
    if (!this.stopped && this.dirty.has(key)) this.hand(key);
  }

  /** Stops handing out keys: pending and future get() calls resolve undefined. */
  shutdown(): void {
    this.stopped = true;
    for (const { timer } of this.delayed.values()) clearTimeout(timer);
    this.delayed.clear();
    for (const waiter of this.waiters.splice(0)) waiter(undefined);
  }

  get isShutdown(): boolean {
    return this.stopped;
  }

  /** Gives key to a waiting worker, or queues it. */
  private hand(key: K): void {
    const waiter = this.waiters.shift();
    if (waiter) waiter(this.take(key));
    else this.queue.push(key);
  }

  private take(key: K): K {
    this.dirty.delete(key);
    this.processing.add(key);
    return key;
  }

  private backoff(failures: number): number {
    return Math.min(this.baseDelayMs * 2 ** failures, this.maxDelayMs);
  }
}
