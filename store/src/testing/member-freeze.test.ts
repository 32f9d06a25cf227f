import { describe, expect, it } from 'vitest';
import { MAX_GAP_AFTER_ELECTION_MS, unexcusedRefusals } from './member-freeze.js';

describe('refusals a slow etcd election excuses', () => {
  const frozeAt = 1_000_000;
  const deadlineMs = 5_000;
  // Calls started 1 s before the freeze, at the freeze, and 2 s and 4 s into it.
  const outcome = (electedAfterMs: number | undefined) => ({
    frozeAt,
    electedAfterMs,
    refused: ['before', 'at freeze', '+2 s', '+4 s'],
    refusedStartedAt: [frozeAt - 1_000, frozeAt, frozeAt + 2_000, frozeAt + 4_000],
  });

  it('excuses only calls whose deadline ran out before the election left them time', () => {
    // Elected 6.6 s in: a call had to start before 6.6 - (5 - 1) = 2.6 s to be excused.
    expect(unexcusedRefusals(outcome(6_600), deadlineMs)).toEqual(['+4 s']);
    // Exactly at the bound: a call starting then still has MAX_GAP_AFTER_ELECTION_MS left.
    const atBound = 2_000 + deadlineMs - MAX_GAP_AFTER_ELECTION_MS;
    expect(unexcusedRefusals(outcome(atBound), deadlineMs)).toEqual(['+2 s', '+4 s']);
  });

  it('excuses nothing after a quick election, or when no election was seen', () => {
    expect(unexcusedRefusals(outcome(2_000), deadlineMs)).toEqual(outcome(2_000).refused);
    expect(unexcusedRefusals(outcome(undefined), deadlineMs)).toEqual(outcome(undefined).refused);
  });
});
