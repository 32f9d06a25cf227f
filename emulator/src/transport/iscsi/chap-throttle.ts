/** Wrong CHAP answers an initiator name gets before each further one locks it out. */
export const CHAP_FREE_FAILURES = 5;
/** The lockout doubles with every failure past the free ones, up to this. */
const MAX_LOCKOUT_MS = 5 * 60_000;
/** A name with no failure for this long starts afresh. */
const FORGET_AFTER_MS = 15 * 60_000;
/** Bounds memory under a spray of initiator names: the oldest entries go first. */
const MAX_ENTRIES = 10_000;

interface Entry {
  failures: number;
  lockedUntil: number;
  lastFailure: number;
}

/**
 * Slows CHAP secret guessing as the control API slows password guessing: per initiator name, a
 * few free wrong answers, then an exponentially growing lockout during which every CHAP login
 * of that name is refused, even with the right secret (so the lockout tells a guesser nothing).
 * Kept per target process; restarting the data plane forgives.
 */
export class ChapThrottle {
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly now: () => number = Date.now) {}

  /** Milliseconds the name is still locked out for; 0 when it may try. */
  lockedFor(initiatorName: string): number {
    const entry = this.current(initiatorName);
    return entry ? Math.max(0, entry.lockedUntil - this.now()) : 0;
  }

  /** Counts a wrong answer; returns the lockout it started (0 while failures are still free). */
  failed(initiatorName: string): { failures: number; lockoutMs: number } {
    const key = initiatorName.toLowerCase();
    const now = this.now();
    const entry = this.current(initiatorName) ?? { failures: 0, lockedUntil: 0, lastFailure: now };
    entry.failures += 1;
    entry.lastFailure = now;
    const over = entry.failures - CHAP_FREE_FAILURES;
    const lockoutMs = over > 0 ? Math.min(1000 * 2 ** (over - 1), MAX_LOCKOUT_MS) : 0;
    if (lockoutMs > 0) entry.lockedUntil = now + lockoutMs;
    this.entries.delete(key); // re-insert: Map order is then oldest failure first
    this.entries.set(key, entry);
    if (this.entries.size > MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
    return { failures: entry.failures, lockoutMs };
  }

  succeeded(initiatorName: string): void {
    this.entries.delete(initiatorName.toLowerCase());
  }

  private current(initiatorName: string): Entry | undefined {
    const key = initiatorName.toLowerCase();
    const entry = this.entries.get(key);
    if (entry && this.now() - entry.lastFailure > FORGET_AFTER_MS && entry.lockedUntil <= this.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return entry;
  }
}
