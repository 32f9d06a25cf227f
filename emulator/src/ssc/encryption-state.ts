import { SenseKey } from '../scsi/constants.js';
import { Sense, ScsiError } from '../scsi/sense.js';

/** SCOPE of a Set Data Encryption page (SSC-4 8.5.3.2). */
export const EncryptionScope = { PUBLIC: 0, LOCAL: 1, ALL_I_T_NEXUS: 2 } as const;
export type DecryptMode = 'off' | 'on' | 'mixed';

/** One set of data encryption parameters, as a Set Data Encryption page established them. */
export interface EncryptionParams {
  /** ENCRYPTION MODE ENCRYPT: blocks written are encrypted with `key`. */
  encrypt: boolean;
  /** DECRYPTION MODE: DISABLE, DECRYPT (encrypted blocks only) or MIXED. */
  decrypt: DecryptMode;
  /** The 256-bit key, only ever in this process's memory. */
  key?: Buffer;
  ukad?: Buffer;
  akad?: Buffer;
  /** LOCAL or ALL I_T NEXUS, as reported by the data encryption status page. */
  scope: 1 | 2;
  /** Clear on demount, on reservation preempt, on reservation loss. */
  ckod: boolean;
  ckorp: boolean;
  ckorl: boolean;
  /** The nexus that set them (reservation loss and preempt are that nexus's). */
  owner: string;
  /** KEY INSTANCE COUNTER when they were set. */
  instance: number;
}

/** DATA PROTECT / DATA ENCRYPTION CONFIGURATION PREVENTED (74h/21h). */
export const configurationPrevented = () => new ScsiError(Sense.of(SenseKey.DATA_PROTECT, [0x74, 0x21]));

/**
 * The drive's data encryption parameters, held in memory only (SSC-4 4.2.21): one set shared by
 * every I_T nexus that uses public parameters (established with scope ALL I_T NEXUS), and sets
 * unique to one nexus (scope LOCAL). A nexus that set LOCK keeps the parameters it set: another
 * nexus may not replace the shared set it is locked to (DATA ENCRYPTION CONFIGURATION
 * PREVENTED). Parameters end with a LUN reset or an emulator restart (the power cycle), a
 * nexus's own at its nexus loss, and the ones asked for at demount (CKOD) or when the setting
 * nexus loses its reservation (CKORL) or is preempted (CKORP).
 */
export class DriveEncryption {
  private shared: EncryptionParams | undefined;
  private readonly local = new Map<string, EncryptionParams>();
  /** Nexuses locked to the parameters they set. */
  private readonly locked = new Set<string>();
  private instances = 0;

  /** The parameters a nexus reads and writes with; undefined means the defaults (no encryption). */
  paramsFor(nexus: string): EncryptionParams | undefined {
    return this.local.get(nexus) ?? this.shared;
  }

  /** The scope the nexus's parameters came from (data encryption status I_T NEXUS SCOPE). */
  scopeOf(nexus: string): number {
    return this.local.has(nexus) ? EncryptionScope.LOCAL : EncryptionScope.PUBLIC;
  }

  get keyInstanceCounter(): number {
    return this.instances;
  }

  /** Applies a Set Data Encryption page from `nexus`; `params` undefined with scope PUBLIC. */
  set(
    nexus: string,
    scope: number,
    lock: boolean,
    params: Omit<EncryptionParams, 'owner' | 'instance' | 'scope'> | undefined,
  ): void {
    if (scope === EncryptionScope.PUBLIC) {
      // Back to the shared set; its own parameters and lock go.
      this.local.delete(nexus);
      this.locked.delete(nexus);
      if (lock && this.shared) this.locked.add(nexus);
      return;
    }
    if (!params) throw new Error('parameters are required for scope LOCAL or ALL I_T NEXUS');
    if (scope === EncryptionScope.ALL_I_T_NEXUS) {
      // Another nexus locked to the shared set keeps it: this change is refused.
      const lockedOut = [...this.locked].some((n) => n !== nexus && !this.local.has(n));
      if (lockedOut && this.shared) throw configurationPrevented();
      this.local.delete(nexus);
    }
    this.instances += 1;
    const set: EncryptionParams = {
      ...params,
      scope: scope as 1 | 2,
      owner: nexus,
      instance: this.instances,
    };
    if (scope === EncryptionScope.LOCAL) this.local.set(nexus, set);
    else this.shared = set;
    if (lock) this.locked.add(nexus);
    else this.locked.delete(nexus);
  }

  /** Every set that asked for it is cleared at demount (CKOD). */
  demounted(): void {
    if (this.shared?.ckod) this.shared = undefined;
    for (const [n, p] of this.local) if (p.ckod) this.local.delete(n);
  }

  /**
   * Clears sets whose owner no longer holds a reservation (CKORL) or lost its registration to
   * a preempt (CKORP); `holds` says whether a nexus still holds one or is still registered.
   */
  reservationsChanged(holds: (nexus: string) => { reserved: boolean; registered: boolean }): void {
    const dropped = (p: EncryptionParams) => {
      const h = holds(p.owner);
      return (p.ckorl && !h.reserved) || (p.ckorp && !h.registered);
    };
    if (this.shared && dropped(this.shared)) this.shared = undefined;
    for (const [n, p] of this.local) if (dropped(p)) this.local.delete(n);
  }

  nexusLost(nexus: string): void {
    this.local.delete(nexus);
    this.locked.delete(nexus);
  }

  reset(): void {
    this.shared = undefined;
    this.local.clear();
    this.locked.clear();
  }
}
