import { describe, expect, it } from 'vitest';
import { waitFor } from './wait.js';

describe('waitFor', () => {
  it('resolves with the first value that is not false/null/undefined', async () => {
    let n = 0;
    const got = await waitFor(() => (++n >= 3 ? { n } : undefined), { intervalMs: 1 });
    expect(got).toEqual({ n: 3 });
  });

  it('treats a throw as not yet', async () => {
    let n = 0;
    const got = await waitFor(
      async () => {
        if (++n < 3) throw new Error('not ready');
        return n;
      },
      { intervalMs: 1 },
    );
    expect(got).toBe(3);
  });

  it('times out naming the message and the last error', async () => {
    const started = Date.now();
    await expect(
      waitFor(
        () => {
          throw new Error('still booting');
        },
        { timeoutMs: 100, intervalMs: 10, message: 'pool active' },
      ),
    ).rejects.toThrow(/pool active: .*100 ms.*still booting/);
    expect(Date.now() - started).toBeLessThan(1_000);
  });
});
