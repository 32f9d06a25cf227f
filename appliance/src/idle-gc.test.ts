import v8 from 'node:v8';
import vm from 'node:vm';
import { describe, expect, it } from 'vitest';
import { collectAll, whenStillQuiet } from './idle-gc.js';

describe('the idle collection', () => {
  it('collects at once, on a Node that takes the synchronous options and on one that does not', () => {
    v8.setFlagsFromString('--expose-gc');
    const gc = vm.runInNewContext('gc') as Parameters<typeof collectAll>[0];
    collectAll(gc);
    const base = process.memoryUsage().heapUsed;
    let garbage: string[] | undefined = Array.from({ length: 200_000 }, (_, i) => `entry ${i} `.repeat(4));
    const held = process.memoryUsage().heapUsed - base;
    garbage = undefined;
    collectAll(gc);
    expect(garbage).toBeUndefined();
    expect(held).toBeGreaterThan(10 * 2 ** 20);
    // What was reachable is gone when the call returns, not merely scheduled for later.
    expect(process.memoryUsage().heapUsed - base).toBeLessThan(held / 4);
  });
});

describe('whenStillQuiet', () => {
  const outcome = (busyMs: number) =>
    new Promise<boolean>((resolve) => {
      let collected = false;
      // Half busy at most: a loaded test machine's own callbacks stay far below it.
      whenStillQuiet(0.5, () => (collected = true));
      // The event loop kept busy (a burst of requests) for busyMs, in slices.
      const until = performance.now() + busyMs;
      const spin = () => {
        const slice = performance.now() + 5;
        while (performance.now() < Math.min(slice, until));
        if (performance.now() < until) setImmediate(spin);
      };
      spin();
      setTimeout(() => resolve(collected), 400);
    });

  it('collects when the loop stays quiet', async () => {
    expect(await outcome(0)).toBe(true);
  });

  it('does not collect when a burst begins just after the quiet interval', async () => {
    expect(await outcome(250)).toBe(false);
  });
});
