import { describe, expect, it } from 'vitest';
import { HeartbeatTracker } from './heartbeats.js';

const beat = (node: string, at = '2000-01-01T00:00:00.000Z') => ({
  node,
  at,
  interval_ms: 2_000,
  stale_after_ms: 8_000,
});

describe('HeartbeatTracker', () => {
  it("times beats by its own clock, not the node's, and names when it last heard a quiet node", () => {
    let now = Date.parse('2026-11-26T00:00:00.000Z');
    const t = new HeartbeatTracker(() => now);
    // The node's clock is 26 years behind: irrelevant, the beat is as fresh as its arrival.
    expect(t.seen(beat('n1'))).toBe(false);
    expect(t.seen(beat('n2'))).toBe(false);
    now += 8_000;
    expect(t.stale().size).toBe(0);
    t.seen(beat('n2'));
    now += 1;
    expect([...t.stale()]).toEqual([['n1', { lastSeenAt: '2026-11-26T00:00:00.000Z', staleAfterMs: 8_000 }]]);
  });

  it('reports a change of the quiet set once, and a beat from a quiet node as news', () => {
    let now = 0;
    const t = new HeartbeatTracker(() => now);
    t.seen(beat('n1'));
    expect(t.changed()).toBe(false);
    now = 9_000;
    expect(t.changed()).toBe(true);
    expect(t.changed()).toBe(false);
    // Its next beat: its libraries are derived again, and the quiet set changes back.
    expect(t.seen(beat('n1'))).toBe(true);
    expect(t.changed()).toBe(true);
    expect(t.stale().size).toBe(0);
  });

  it('forgets a node whose beat record is gone (its lease lapsed: the node record says the rest)', () => {
    let now = 0;
    const t = new HeartbeatTracker(() => now);
    t.seen(beat('n1'));
    t.forget('n1');
    now = 60_000;
    expect(t.stale().size).toBe(0);
  });
});
