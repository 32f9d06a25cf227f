/** Options of waitFor(). */
export interface WaitOptions {
  /** Give up after this long; default 10 s. */
  timeoutMs?: number;
  /** Pause between polls; default 50 ms. */
  intervalMs?: number;
  /** Names what was awaited in the timeout error. */
  message?: string;
}

type Passed<T> = Exclude<T, false | null | undefined>;

/**
 * Polls fn until it returns something other than false/null/undefined and resolves with
 * that; a throw counts as "not yet". On timeout it rejects naming the last result or error.
 */
export async function waitFor<T>(fn: () => T | Promise<T>, opts: WaitOptions = {}): Promise<Passed<T>> {
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const intervalMs = opts.intervalMs ?? 50;
  const deadline = Date.now() + timeoutMs;
  let last = 'never ran';
  while (true) {
    try {
      const value = await fn();
      if (value !== false && value !== null && value !== undefined) return value as Passed<T>;
      last = `returned ${String(value)}`;
    } catch (err) {
      last = `threw ${err instanceof Error ? err.message : String(err)}`;
    }
    if (Date.now() >= deadline) break;
    await new Promise((resolve) =>
      setTimeout(resolve, Math.min(intervalMs, Math.max(0, deadline - Date.now()))),
    );
  }
  const what = opts.message ? `${opts.message}: ` : '';
  throw new Error(`${what}condition not met within ${timeoutMs} ms (last check ${last})`);
}
