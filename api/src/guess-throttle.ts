/** Wrong guesses a key gets before each further one locks it out. */
export const FREE_GUESSES = 5;
/** The lockout doubles with every failure past the free ones, up to this. */
const MAX_LOCKOUT_MS = 5 * 60_000;
/** A key with no failure for this long starts afresh. */
const FORGET_AFTER_MS = 15 * 60_000;
/** Bounds memory under a spray of keys: the oldest entries go first. */
const MAX_ENTRIES = 10_000;

interface Entry {
  failures: number;
  lockedUntil: number;
  lastFailure: number;
}

/**
 * Slows secret guessing (control API passwords, iSCSI CHAP secrets): per key, FREE_GUESSES free
 * wrong answers, then an exponentially growing lockout (1 s, 2 s, … up to 5 min) during which the
 * caller refuses even the right answer, so the lockout tells a guesser nothing. Kept in memory of
 * one process: a restart forgives, which an operator locked out by mistake wants.
 */
export class GuessThrottle {
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly now: () => number = Date.now) {}

  /** Milliseconds the key is still locked out for; 0 when it may try. */
  lockedFor(key: string): number {
    const entry = this.current(key);
    return entry ? Math.max(0, entry.lockedUntil - this.now()) : 0;
  }

  /** Counts a wrong answer; returns the lockout it started (0 while failures are still free). */
  failed(key: string): { failures: number; lockoutMs: number } {
    const now = this.now();
    const entry = this.current(key) ?? { failures: 0, lockedUntil: 0, lastFailure: now };
    entry.failures += 1;
    entry.lastFailure = now;
    const over = entry.failures - FREE_GUESSES;
    const lockoutMs = over > 0 ? Math.min(1000 * 2 ** (over - 1), MAX_LOCKOUT_MS) : 0;
    if (lockoutMs > 0) entry.lockedUntil = now + lockoutMs;
    this.entries.delete(key); // re-insert: Map order is then oldest failure first
    this.entries.set(key, entry);
    if (this.entries.size > MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
    return { failures: entry.failures, lockoutMs };
  }

  /** A right answer: the key starts afresh. */
  succeeded(key: string): void {
    this.entries.delete(key);
  }

  private current(key: string): Entry | undefined {
    const entry = this.entries.get(key);
    if (entry && this.now() - entry.lastFailure > FORGET_AFTER_MS && entry.lockedUntil <= this.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return entry;
  }
}
