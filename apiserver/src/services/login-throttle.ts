import { VtlError } from '@vtl/api';

/** Failed logins a (user, client) pair gets before each further failure locks it out. */
export const FREE_FAILURES = 5;
/** The lockout doubles with every failure past the free ones, up to this. */
const MAX_LOCKOUT_MS = 5 * 60_000;
/** A pair with no failure for this long starts afresh. */
const FORGET_AFTER_MS = 15 * 60_000;
/** Bounds memory under a spray of usernames: the oldest entries go first. */
const MAX_ENTRIES = 10_000;

interface Entry {
  failures: number;
  lockedUntil: number;
  lastFailure: number;
}

/**
 * Slows password guessing: per user name and client address, a few free failures, then an
 * exponentially growing lockout during which even the right password is refused (so the
 * lockout tells a guesser nothing). Kept per apiserver process: each instance throttles the
 * clients it serves, and a restart forgives, which an operator locked out by mistake wants.
 */
export class LoginThrottle {
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly now: () => number = Date.now) {}

  /** Throws `rate_limited` while the pair is locked out. */
  check(username: string, client: string): void {
    const entry = this.current(username, client);
    const waitMs = entry ? entry.lockedUntil - this.now() : 0;
    if (waitMs > 0) {
      const retryAfterSec = Math.ceil(waitMs / 1000);
      throw new VtlError(
        'rate_limited',
        `Too many failed logins for ${username} from this address; try again in ${retryAfterSec} s.`,
        { retry_after_sec: retryAfterSec },
      );
    }
  }

  failed(username: string, client: string): void {
    const key = keyOf(username, client);
    const now = this.now();
    const entry = this.current(username, client) ?? { failures: 0, lockedUntil: 0, lastFailure: now };
    entry.failures += 1;
    entry.lastFailure = now;
    const over = entry.failures - FREE_FAILURES;
    if (over > 0) entry.lockedUntil = now + Math.min(1000 * 2 ** (over - 1), MAX_LOCKOUT_MS);
    this.entries.delete(key); // re-insert: Map order is then oldest failure first
    this.entries.set(key, entry);
    if (this.entries.size > MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
  }

  succeeded(username: string, client: string): void {
    this.entries.delete(keyOf(username, client));
  }

  private current(username: string, client: string): Entry | undefined {
    const key = keyOf(username, client);
    const entry = this.entries.get(key);
    if (entry && this.now() - entry.lastFailure > FORGET_AFTER_MS && entry.lockedUntil <= this.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return entry;
  }
}

const keyOf = (username: string, client: string) => `${username}\u0000${client}`;

const perApp = new WeakMap<object, LoginThrottle>();

/**
 * The one throttle of password guesses of an app: logins and the current_password of a
 * password change count together, so guessing through either path is slowed alike.
 */
export function passwordThrottle(app: object): LoginThrottle {
  let throttle = perApp.get(app);
  if (!throttle) perApp.set(app, (throttle = new LoginThrottle()));
  return throttle;
}
