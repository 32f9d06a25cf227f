import { describe, expect, it } from 'vitest';
import { refreshAfter } from './pool-reconciler.js';

describe('how often a pool is walked for its figures', () => {
  it('every 5 s while the walk is short, then 100 × the walk, at most once a minute', () => {
    expect(refreshAfter(3)).toBe(5_000);
    expect(refreshAfter(300)).toBe(30_000);
    expect(refreshAfter(5_000)).toBe(60_000);
  });
});
