import v8 from 'node:v8';
import vm from 'node:vm';
import { describe, expect, it } from 'vitest';
import { collectAll } from './idle-gc.js';

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
