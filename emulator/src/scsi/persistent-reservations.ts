import { Asc, type AscPair, ScsiStatus, SenseKey } from './constants.js';
import { Sense, ScsiError } from './sense.js';

/** Persistent reservation types (SPC-4 table 169); 0, 2 and 4 are obsolete. */
export const PrType = {
  WRITE_EXCLUSIVE: 1,
  EXCLUSIVE_ACCESS: 3,
  WRITE_EXCLUSIVE_REGISTRANTS_ONLY: 5,
  EXCLUSIVE_ACCESS_REGISTRANTS_ONLY: 6,
  WRITE_EXCLUSIVE_ALL_REGISTRANTS: 7,
  EXCLUSIVE_ACCESS_ALL_REGISTRANTS: 8,
} as const;

export const SUPPORTED_PR_TYPES: readonly number[] = Object.values(PrType);

/** All registrants are holders; the reservation key reported is zero. */
export const isAllRegistrantsType = (type: number) =>
  type === PrType.WRITE_EXCLUSIVE_ALL_REGISTRANTS || type === PrType.EXCLUSIVE_ACCESS_ALL_REGISTRANTS;
/** Registrants that are not the holder get the holder's access too. */
const registrantsShareAccess = (type: number) => type >= PrType.WRITE_EXCLUSIVE_REGISTRANTS_ONLY;
/** Others may still read (transfer from the medium, move to read, sense settings). */
const othersMayRead = (type: number) =>
  type === PrType.WRITE_EXCLUSIVE ||
  type === PrType.WRITE_EXCLUSIVE_REGISTRANTS_ONLY ||
  type === PrType.WRITE_EXCLUSIVE_ALL_REGISTRANTS;

/** What a nexus may do under the current persistent reservation. */
export type PrAccess = 'all' | 'read' | 'none';

export interface PrReservation {
  /** The nexus that reserved; for all-registrants types every registrant holds it. */
  holder: string;
  type: number;
}

/** Unit attentions the state changes owe other nexuses (SPC-4 5.13.11, 5.13.12). */
export interface PrNotice {
  nexus: string;
  asc: AscPair;
}

const conflict = () => new ScsiError(undefined, ScsiStatus.RESERVATION_CONFLICT);

/**
 * SPC-4 persistent reservations of one logical unit: registrations per I_T nexus, at most one
 * reservation, and the generation counter. Registrations survive I_T nexus loss and logical
 * unit resets, not a power cycle: the emulator, like an LTO drive, does not offer APTPL, so a
 * restart of the emulator is the power-on that clears them. Scope is always the logical unit.
 * Refusals throw ScsiError (RESERVATION CONFLICT, or CHECK CONDITION with sense); the methods
 * that succeed return the unit attentions to raise.
 */
export class PersistentReservations {
  private gen = 0;
  /** Nexus → reservation key, in registration order (READ KEYS lists them so). */
  private readonly keys = new Map<string, bigint>();
  private held: PrReservation | undefined;

  get generation(): number {
    return this.gen;
  }

  get reservation(): PrReservation | undefined {
    return this.held;
  }

  registrations(): ReadonlyMap<string, bigint> {
    return this.keys;
  }

  isHolder(nexus: string): boolean {
    if (!this.held) return false;
    return isAllRegistrantsType(this.held.type) ? this.keys.has(nexus) : this.held.holder === nexus;
  }

  access(nexus: string): PrAccess {
    const r = this.held;
    if (!r || this.isHolder(nexus)) return 'all';
    if (registrantsShareAccess(r.type) && this.keys.has(nexus)) return 'all';
    return othersMayRead(r.type) ? 'read' : 'none';
  }

  /**
   * RESERVE/RELEASE (6/10) while persistent reservations are in use (SPC-4 5.13.3, CRH 1): GOOD
   * without effect for a holder, or a registrant of a registrants-only type; conflict otherwise.
   */
  legacyCommandIsNoOp(nexus: string): boolean {
    return this.held !== undefined && this.access(nexus) === 'all';
  }

  /** Any registration or reservation: the SPC-2 RESERVE/RELEASE commands no longer apply. */
  get active(): boolean {
    return this.keys.size > 0 || this.held !== undefined;
  }

  /** REGISTER (ignoreExisting false) and REGISTER AND IGNORE EXISTING KEY. */
  register(nexus: string, key: bigint, newKey: bigint, ignoreExisting: boolean): PrNotice[] {
    const current = this.keys.get(nexus);
    if (current === undefined) {
      if (!ignoreExisting && key !== 0n) throw conflict();
      if (newKey === 0n) return [];
      this.keys.set(nexus, newKey);
      this.gen++;
      return [];
    }
    if (!ignoreExisting && key !== current) throw conflict();
    this.gen++;
    if (newKey !== 0n) {
      this.keys.set(nexus, newKey);
      return [];
    }
    return this.unregister(nexus);
  }

  /** RESERVE: a registered nexus takes the reservation; it may hold it again with the same type. */
  reserve(nexus: string, key: bigint, type: number): void {
    this.requireKey(nexus, key);
    if (!this.held) {
      this.held = { holder: nexus, type };
      return;
    }
    if (!this.isHolder(nexus) || this.held.type !== type) throw conflict();
  }

  /** RELEASE by the holder; by anyone else it is GOOD and changes nothing. */
  release(nexus: string, key: bigint, type: number): PrNotice[] {
    this.requireKey(nexus, key);
    const r = this.held;
    if (!r || !this.isHolder(nexus)) return [];
    if (r.type !== type)
      throw new ScsiError(Sense.of(SenseKey.ILLEGAL_REQUEST, Asc.INVALID_RELEASE_OF_PERSISTENT_RESERVATION));
    this.held = undefined;
    // Registrants-only and all-registrants types tell the other registrants (SPC-4 5.13.11.2.2).
    return registrantsShareAccess(r.type) ? this.others(nexus, Asc.RESERVATIONS_RELEASED) : [];
  }

  /** CLEAR: every registration and the reservation go; the others hear RESERVATIONS PREEMPTED. */
  clear(nexus: string, key: bigint): PrNotice[] {
    this.requireKey(nexus, key);
    const notices = this.others(nexus, Asc.RESERVATIONS_PREEMPTED);
    this.keys.clear();
    this.held = undefined;
    this.gen++;
    return notices;
  }

  /**
   * PREEMPT (and PREEMPT AND ABORT): removes the registrations holding `victimKey`; when that is
   * the holder's key the requester takes the reservation with `type` (SPC-4 5.13.11.4).
   */
  preempt(nexus: string, key: bigint, victimKey: bigint, type: number): PrNotice[] {
    this.requireKey(nexus, key);
    const r = this.held;
    if (r && isAllRegistrantsType(r.type) && victimKey === 0n) {
      // Zero against an all-registrants reservation: everyone else goes, the requester reserves.
      const notices = this.others(nexus, Asc.REGISTRATIONS_PREEMPTED);
      for (const n of [...this.keys.keys()]) if (n !== nexus) this.keys.delete(n);
      this.held = { holder: nexus, type };
      this.gen++;
      return notices;
    }
    if (victimKey === 0n) throw new ScsiError(Sense.invalidFieldInParameterList(8));
    const matching = [...this.keys].filter(([, k]) => k === victimKey).map(([n]) => n);
    if (matching.length === 0) throw conflict();
    const takesReservation =
      r !== undefined && !isAllRegistrantsType(r.type) && this.keys.get(r.holder) === victimKey;
    // The requester keeps its own registration (preempting its own key changes the type).
    const victims = matching.filter((n) => n !== nexus);
    for (const v of victims) this.keys.delete(v);
    const notices: PrNotice[] = victims.map((v) => ({ nexus: v, asc: Asc.REGISTRATIONS_PREEMPTED }));
    if (takesReservation) {
      this.held = { holder: nexus, type };
      // Registrants that stay lose what the old type gave them: they hear that it was released.
      if (r.type !== type)
        for (const n of this.keys.keys())
          if (n !== nexus) notices.push({ nexus: n, asc: Asc.RESERVATIONS_RELEASED });
    }
    this.gen++;
    return notices;
  }

  private unregister(nexus: string): PrNotice[] {
    this.keys.delete(nexus);
    const r = this.held;
    if (!r) return [];
    const lastOfAll = isAllRegistrantsType(r.type) && this.keys.size === 0;
    if (!lastOfAll && (isAllRegistrantsType(r.type) || r.holder !== nexus)) return [];
    this.held = undefined;
    return registrantsShareAccess(r.type) ? this.others(nexus, Asc.RESERVATIONS_RELEASED) : [];
  }

  private requireKey(nexus: string, key: bigint): void {
    if (this.keys.get(nexus) !== key) throw conflict();
  }

  private others(nexus: string, asc: AscPair): PrNotice[] {
    return [...this.keys.keys()].filter((n) => n !== nexus).map((n) => ({ nexus: n, asc }));
  }
}
