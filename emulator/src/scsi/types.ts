/** One SCSI command as a transport hands it to a logical unit. */
export interface ScsiCommand {
  /** The CDB; transports may pad it (iSCSI carries 16 bytes), handlers read by opcode length. */
  cdb: Buffer;
  /** Data-out buffer, already collected by the transport (length = dataOutLength(cdb) or less). */
  dataOut?: Buffer;
  /** How many data-in bytes the initiator can take (iSCSI: Expected Data Transfer Length). */
  expectedDataInLength: number;
  /**
   * The I_T nexus: the initiator port name as SPC uses it for unit attentions and reservations.
   * iSCSI passes `<initiator iqn>,i,0x<isid>`; the part before `,i,` is the initiator name.
   */
  initiator: string;
  lun: number;
  /** Fires when task management aborts the command; long handlers may stop early. */
  signal?: AbortSignal;
}

/** What a logical unit answers. */
export interface ScsiResult {
  /** SCSI status (ScsiStatus): GOOD 0, CHECK CONDITION 2, BUSY 8, RESERVATION CONFLICT 0x18. */
  status: number;
  dataIn?: Buffer;
  /** Sense data (fixed format) with CHECK CONDITION. */
  sense?: Buffer;
  /**
   * Bytes of the expected transfer that were not moved, when the device knows better than
   * `expected - dataIn.length` (the transport computes that difference when this is absent).
   */
  residual?: number;
  /**
   * The device still reads the command's data-out until this settles (a block written behind
   * from a tape drive's buffer): the transport must not reuse that buffer before.
   */
  dataOutInUse?: Promise<unknown>;
}

/** Why a logical unit is told to drop per-nexus or per-task state. */
export type DeviceEvent =
  | { kind: 'lun-reset'; by: string }
  | { kind: 'nexus-loss'; nexus: string }
  | { kind: 'tasks-aborted'; nexus: string };

/** A logical unit: what every transport (iSCSI here, FC through LIO later) drives. */
export interface ScsiDevice {
  readonly peripheralType: number;
  execute(cmd: ScsiCommand): Promise<ScsiResult>;
  /** How many data-out bytes this CDB transfers, so the transport can solicit exactly that. */
  dataOutLength(cdb: Buffer): number;
  /** Task management and session loss; optional for devices without per-nexus state. */
  notify?(event: DeviceEvent): void;
}

/** The LUN map one initiator sees. */
export type LunMap = ReadonlyMap<number, ScsiDevice>;

/** Splits an I_T nexus id back into the initiator name (iSCSI) or returns it unchanged. */
export function initiatorNameOf(nexus: string): string {
  const i = nexus.indexOf(',i,');
  return i < 0 ? nexus : nexus.slice(0, i);
}
