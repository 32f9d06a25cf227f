import { Asc, type AscPair } from './constants.js';

/** Enough for every condition a library raises between two polls of a quiet host. */
const MAX_QUEUED = 16;

/**
 * Unit attention conditions per I_T nexus (SAM-5 5.14). A nexus seen for the first time starts
 * with POWER ON, RESET, OR BUS DEVICE RESET OCCURRED, as a drive does after a host logs in;
 * libiscsi and the Linux midlayer expect exactly 29/00 there and retry past it.
 */
export class UnitAttentions {
  private readonly queues = new Map<string, AscPair[]>();

  constructor(private readonly powerOnForNewNexus = true) {}

  /** Registers the nexus on its first command. */
  touch(nexus: string): void {
    if (this.queues.has(nexus)) return;
    this.queues.set(nexus, this.powerOnForNewNexus ? [Asc.POWER_ON_RESET_OR_BUS_DEVICE_RESET] : []);
  }

  pending(nexus: string): boolean {
    return (this.queues.get(nexus)?.length ?? 0) > 0;
  }

  /** Removes and returns the oldest condition for the nexus. */
  take(nexus: string): AscPair | undefined {
    return this.queues.get(nexus)?.shift();
  }

  /**
   * Raises a condition for every known nexus (or one, or all but one). Resets supersede what
   * is queued, as SPC lets a reset condition replace lower-priority ones.
   */
  raise(asc: AscPair, scope: { only?: string; except?: string } = {}): void {
    const supersedes = asc[0] === 0x29;
    for (const [nexus, queue] of this.queues) {
      if (scope.only !== undefined && nexus !== scope.only) continue;
      if (scope.except !== undefined && nexus === scope.except) continue;
      if (supersedes) queue.length = 0;
      if (queue.some(([a, q]) => a === asc[0] && q === asc[1])) continue;
      if (queue.length >= MAX_QUEUED) queue.shift();
      queue.push(asc);
    }
  }

  /** Drops a nexus that logged out; its next login starts with a power-on condition again. */
  forget(nexus: string): void {
    this.queues.delete(nexus);
  }

  nexuses(): string[] {
    return [...this.queues.keys()];
  }
}
