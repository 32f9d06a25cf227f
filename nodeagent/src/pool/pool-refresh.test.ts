import { describe, expect, it } from 'vitest';
import { refreshAfter } from './pool-reconciler.js';

describe('how often a pool is walked for its figures', () => {
  it('every 5 s while walks are short, then 100 × the walk × the pools, at most once a minute', () => {
    expect(refreshAfter(3, 1)).toBe(5_000);
    expect(refreshAfter(300, 1)).toBe(30_000);
    expect(refreshAfter(30, 16)).toBe(48_000);
    expect(refreshAfter(5_000, 1)).toBe(60_000);
  });

  it('at most every VTL_POOL_REFRESH_MAX_MS when that is set (tests)', () => {
    expect(refreshAfter(5_000, 1, 5_000)).toBe(5_000);
    expect(refreshAfter(3, 1, 5_000)).toBe(5_000);
  });
});
