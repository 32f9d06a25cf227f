/**
 * RESERVE/RELEASE (6 and 10) logical-unit reservations (SPC-2 7.21/7.22). One holder at a time;
 * released by the holder, a LUN reset, or the holder's I_T nexus loss.
 */
export class Reservation {
  private holder: string | undefined;

  get heldBy(): string | undefined {
    return this.holder;
  }

  /** false: another nexus holds it (the caller answers RESERVATION CONFLICT). */
  reserve(nexus: string): boolean {
    if (this.holder !== undefined && this.holder !== nexus) return false;
    this.holder = nexus;
    return true;
  }

  /** A release from a non-holder is GOOD and changes nothing (SPC-2 7.21.1). */
  release(nexus: string): void {
    if (this.holder === nexus) this.holder = undefined;
  }

  conflicts(nexus: string): boolean {
    return this.holder !== undefined && this.holder !== nexus;
  }

  clear(): void {
    this.holder = undefined;
  }
}
