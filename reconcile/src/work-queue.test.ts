import { afterEach, describe, expect, it, vi } from 'vitest';
import { WorkQueue } from './work-queue.js';

afterEach(() => {
  vi.useRealTimers();
});

describe('WorkQueue', () => {
  it('hands keys out in order and dedupes keys that are waiting', async () => {
    const q = new WorkQueue();
    q.add('a');
    q.add('b');
    q.add('a');
    expect(q.length).toBe(2);
    expect(await q.get()).toBe('a');
    expect(await q.get()).toBe('b');
    expect(q.length).toBe(0);
  });

  it('never hands one key to two workers; a key added while processing comes back after done()', async () => {
    const q = new WorkQueue();
    q.add('a');
    expect(await q.get()).toBe('a');
    q.add('a');
    q.add('a');
    expect(q.length).toBe(0);
    let second: string | undefined;
    void q.get().then((k) => (second = k));
    await Promise.resolve();
    expect(second).toBeUndefined();
    q.done('a');
    await vi.waitFor(() => expect(second).toBe('a'));
    q.done('a');
    expect(q.length).toBe(0);
  });

  it('wakes a waiting get() when a key is added', async () => {
    const q = new WorkQueue();
    const pending = q.get();
    q.add('x');
    expect(await pending).toBe('x');
  });

  it('resolves pending and later get() with undefined after shutdown and ignores adds', async () => {
    const q = new WorkQueue();
    const pending = q.get();
    q.add('a');
    await pending;
    const waiting = q.get();
    q.shutdown();
    expect(await waiting).toBeUndefined();
    q.add('b');
    expect(await q.get()).toBeUndefined();
  });

  it('addAfter delays a key; the earliest of several delays wins', async () => {
    vi.useFakeTimers();
    const q = new WorkQueue();
    q.addAfter('a', 100);
    q.addAfter('a', 50);
    q.addAfter('a', 500);
    await vi.advanceTimersByTimeAsync(49);
    expect(q.length).toBe(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(q.length).toBe(1);
    await vi.advanceTimersByTimeAsync(1000);
    expect(q.length).toBe(1);
  });

  it('backs off exponentially per key, capped, and forget() resets it', async () => {
    vi.useFakeTimers();
    const q = new WorkQueue({ baseDelayMs: 100, maxDelayMs: 350 });
    const readyAfter = async (key: string): Promise<number> => {
      q.addRateLimited(key);
      let waited = 0;
      while (q.length === 0) {
        await vi.advanceTimersByTimeAsync(10);
        waited += 10;
      }
      expect(await q.get()).toBe(key);
      q.done(key);
      return waited;
    };
    expect(await readyAfter('a')).toBe(100);
    expect(await readyAfter('a')).toBe(200);
    expect(await readyAfter('a')).toBe(350);
    expect(q.retries('a')).toBe(3);
    expect(await readyAfter('b')).toBe(100);
    q.forget('a');
    expect(q.retries('a')).toBe(0);
    expect(await readyAfter('a')).toBe(100);
  });
});
