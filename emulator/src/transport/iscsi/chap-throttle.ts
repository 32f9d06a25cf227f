import { FREE_GUESSES, GuessThrottle } from '@vtl/api/base';

/** Wrong CHAP answers an initiator name gets before each further one locks it out. */
export const CHAP_FREE_FAILURES = FREE_GUESSES;

/**
 * Slows CHAP secret guessing as the control API slows password guessing (GuessThrottle): per
 * initiator name (case-insensitive), a few free wrong answers, then a growing lockout during
 * which every CHAP login of that name is refused, even with the right secret. Kept per target
 * process; restarting the data plane forgives.
 */
export class ChapThrottle {
  private readonly guesses: GuessThrottle;

  constructor(now: () => number = Date.now) {
    this.guesses = new GuessThrottle(now);
  }

  /** Milliseconds the name is still locked out for; 0 when it may try. */
  lockedFor(initiatorName: string): number {
    return this.guesses.lockedFor(initiatorName.toLowerCase());
  }

  /** Counts a wrong answer; returns the lockout it started (0 while failures are still free). */
  failed(initiatorName: string): { failures: number; lockoutMs: number } {
    return this.guesses.failed(initiatorName.toLowerCase());
  }

  succeeded(initiatorName: string): void {
    this.guesses.succeeded(initiatorName.toLowerCase());
  }
}
