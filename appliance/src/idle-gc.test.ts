import v8 from 'node:v8';
import vm from 'node:vm';
import { describe, expect, it } from 'vitest';
import { CHECK_MS, IdleWatch, QUIET_FOR_MS, collectAll, whenStillQuiet } from './idle-gc.js';

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

describe('IdleWatch', () => {
  const MB = 2 ** 20;
  /** Feeds readings every CHECK_MS; the times at which it would collect. */
  const run = (watch: IdleWatch, readings: [number, number, boolean][]) => {
    const due: number[] = [];
    readings.forEach(([utilization, growth, resident], i) => {
      const now = (i + 1) * CHECK_MS;
      if (watch.reading(now, utilization, growth, resident) !== undefined) {
        due.push(now);
        watch.collected();
      }
    });
    return due;
  };
  const quiet: [number, number, boolean] = [0.01, 0, false];
  const busy: [number, number, boolean] = [0.6, 0, false];

  it('collects once after a busy spell and QUIET_FOR_MS of quiet intervals, then stays quiet', () => {
    const due = run(new IdleWatch(), [busy, busy, ...Array(12).fill(quiet)]);
    // Busy until 4 s; quiet intervals from 4 s on.
    expect(due).toEqual([4_000 + QUIET_FOR_MS]);
  });

  it('does not collect in the gaps between bursts a few seconds apart', () => {
    // Bursts of 4 s with 6 s of quiet between them (a benchmark's alternated loads, polling).
    const spell = [busy, busy, quiet, quiet, quiet];
    expect(run(new IdleWatch(), [...spell, ...spell, ...spell, busy])).toEqual([]);
  });

  it('never collects a process that was not busy since its last collection', () => {
    expect(run(new IdleWatch(), Array(20).fill(quiet))).toEqual([]);
  });

  it('counts heap growth as a busy spell though the loop stayed quiet', () => {
    const due = run(new IdleWatch(), [[0.01, 20 * MB, false], ...Array(6).fill(quiet)]);
    expect(due).toEqual([QUIET_FOR_MS]);
  });

  it('collects a never-idle process whose resident set grew, after as long at its looser limit', () => {
    const grown: [number, number, boolean] = [0.2, 0, true];
    const watch = new IdleWatch();
    const limits = [1, 2, 3, 4].map((i) => watch.reading(i * CHECK_MS, ...grown));
    // Quiet at 0.2 busy only because the resident set grew: the confirmation uses that looser limit.
    expect(limits.slice(0, 3)).toEqual([undefined, undefined, undefined]);
    expect(limits[3]).toBeGreaterThanOrEqual(0.2);
    // After the collection the resident set is measured afresh: 0.2 busy is not quiet any more.
    expect(run(new IdleWatch(), [grown, grown, grown, grown, ...Array(8).fill([0.2, 0, false])])).toEqual([
      QUIET_FOR_MS,
    ]);
  });
});
