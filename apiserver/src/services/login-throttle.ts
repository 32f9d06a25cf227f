import { FREE_GUESSES, GuessThrottle, VtlError } from '@vtl/api';

/** Failed logins a (user, client) pair gets before each further failure locks it out. */
export const FREE_FAILURES = FREE_GUESSES;

/**
 * Slows password guessing (GuessThrottle): per user name and client address, a few free
 * failures, then an exponentially growing lockout during which even the right password is
 * refused. Kept per apiserver process: each instance throttles the clients it serves.
 */
export class LoginThrottle {
  private readonly guesses: GuessThrottle;

  constructor(now: () => number = Date.now) {
    this.guesses = new GuessThrottle(now);
  }

  /** Throws `rate_limited` while the pair is locked out. */
  check(username: string, client: string): void {
    const waitMs = this.guesses.lockedFor(keyOf(username, client));
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
    this.guesses.failed(keyOf(username, client));
  }

  succeeded(username: string, client: string): void {
    this.guesses.succeeded(keyOf(username, client));
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
