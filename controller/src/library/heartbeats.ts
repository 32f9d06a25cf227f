import type { NodeHeartbeat } from '@vtl/api';

/** A node whose heartbeat is overdue: when this process last saw it and how late it may be. */
export interface StaleNode {
  /** When this process last saw the node's heartbeat written (its own clock), ISO 8601. */
  lastSeenAt: string;
  staleAfterMs: number;
}

/**
 * The nodes' heartbeats as this process saw them arrive. A node's age is measured from when its
 * last beat was seen here, by this process's clock, never from the time the node wrote in it:
 * clocks of different machines disagree, and a beat stuck in a slow store is as late as a lost
 * one. After a restart every node starts fresh (seen at the first listing), so a controller
 * never calls a node stale before it has waited the node's own stale_after_ms for it.
 */
export class HeartbeatTracker {
  private readonly beats = new Map<string, { at: number; staleAfterMs: number }>();
  /** The stale set as changed() last saw it, node names sorted and joined. */
  private last = '';

  constructor(private readonly now: () => number) {}

  /** A beat was seen. True when its node was stale: its libraries are derived again. */
  seen(beat: NodeHeartbeat): boolean {
    const wasStale = this.isStale(beat.node) || this.lastSet().has(beat.node);
    this.beats.set(beat.node, { at: this.now(), staleAfterMs: beat.stale_after_ms });
    return wasStale;
  }

  /** Its record is gone (the lease lapsed or the node left): the node record goes with it. */
  forget(node: string): void {
    this.beats.delete(node);
  }

  /** The nodes overdue now. */
  stale(): Map<string, StaleNode> {
    const out = new Map<string, StaleNode>();
    for (const [node, b] of this.beats)
      if (this.isStale(node))
        out.set(node, { lastSeenAt: new Date(b.at).toISOString(), staleAfterMs: b.staleAfterMs });
    return out;
  }

  /** True when the set of overdue nodes differs from the one the last call saw. */
  changed(): boolean {
    const now = [...this.stale().keys()].sort().join('\n');
    if (now === this.last) return false;
    this.last = now;
    return true;
  }

  private isStale(node: string): boolean {
    const b = this.beats.get(node);
    return b !== undefined && this.now() - b.at > b.staleAfterMs;
  }

  private lastSet(): Set<string> {
    return new Set(this.last ? this.last.split('\n') : []);
  }
}
