import { SenseKey } from '../scsi/constants.js';
import { Sense, ScsiError, type SenseSpec } from '../scsi/sense.js';
import { isMediaError } from '../media/errors.js';

/** Additional sense codes of sequential-access devices (SSC-4, IBM LTO SCSI Reference). */
export const TapeAsc = {
  FILEMARK_DETECTED: [0x00, 0x01],
  END_OF_PARTITION_DETECTED: [0x00, 0x02],
  BEGINNING_OF_PARTITION_DETECTED: [0x00, 0x04],
  END_OF_DATA_DETECTED: [0x00, 0x05],
  NOT_READY_INITIALIZING_COMMAND_REQUIRED: [0x04, 0x02],
  WRITE_ERROR: [0x0c, 0x00],
  UNRECOVERED_READ_ERROR: [0x11, 0x00],
  WRITE_PROTECTED: [0x27, 0x00],
  WORM_OVERWRITE_ATTEMPTED: [0x30, 0x0c],
  INCOMPATIBLE_MEDIUM_INSTALLED: [0x30, 0x00],
  CANNOT_READ_MEDIUM_UNKNOWN_FORMAT: [0x30, 0x01],
  CANNOT_WRITE_MEDIUM_INCOMPATIBLE_FORMAT: [0x30, 0x05],
  MEDIUM_FORMAT_CORRUPTED: [0x31, 0x00],
  SEQUENTIAL_POSITIONING_ERROR: [0x3b, 0x00],
  MEDIUM_REMOVAL_PREVENTED: [0x53, 0x02],
} as const;

const noSense = (asc: readonly [number, number], extra: Partial<SenseSpec>): SenseSpec =>
  Sense.of(SenseKey.NO_SENSE, asc, extra);

/** Sense of the conditions a READ, SPACE or WRITE ends on; `information` is the residue. */
export const TapeSense = {
  filemark: (information: number): SenseSpec =>
    noSense(TapeAsc.FILEMARK_DETECTED, { filemark: true, information }),
  /** Incorrect length: information is requested minus actual (negative for a longer block). */
  incorrectLength: (information: number): SenseSpec =>
    Sense.of(SenseKey.NO_SENSE, [0x00, 0x00], { ili: true, information }),
  endOfData: (information: number): SenseSpec =>
    Sense.of(SenseKey.BLANK_CHECK, TapeAsc.END_OF_DATA_DETECTED, { information }),
  beginningOfPartition: (information: number): SenseSpec =>
    noSense(TapeAsc.BEGINNING_OF_PARTITION_DETECTED, { eom: true, information }),
  /** Early warning: the data went to tape, the host should wrap up. */
  earlyWarning: (information: number): SenseSpec =>
    noSense(TapeAsc.END_OF_PARTITION_DETECTED, { eom: true, information }),
  volumeOverflow: (information: number): SenseSpec =>
    Sense.of(SenseKey.VOLUME_OVERFLOW, TapeAsc.END_OF_PARTITION_DETECTED, { eom: true, information }),
  writeProtected: (): SenseSpec => Sense.of(SenseKey.DATA_PROTECT, TapeAsc.WRITE_PROTECTED),
  /** DATA PROTECT, WORM MEDIUM - OVERWRITE ATTEMPTED (SSC-4, IBM LTO). */
  wormOverwrite: (information = 0): SenseSpec =>
    Sense.of(SenseKey.DATA_PROTECT, TapeAsc.WORM_OVERWRITE_ATTEMPTED, { information }),
  readOnlyFormat: (): SenseSpec =>
    Sense.of(SenseKey.DATA_PROTECT, TapeAsc.CANNOT_WRITE_MEDIUM_INCOMPATIBLE_FORMAT),
  incompatibleMedium: (): SenseSpec => Sense.of(SenseKey.MEDIUM_ERROR, TapeAsc.INCOMPATIBLE_MEDIUM_INSTALLED),
  /** An evicted stub: no tape content behind the label. */
  stubMedium: (): SenseSpec => Sense.of(SenseKey.MEDIUM_ERROR, TapeAsc.MEDIUM_FORMAT_CORRUPTED),
  readError: (): SenseSpec => Sense.of(SenseKey.MEDIUM_ERROR, TapeAsc.UNRECOVERED_READ_ERROR),
  /**
   * A block acknowledged from the drive's buffer did not reach the tape: reported on the next
   * command as a deferred error (response code 71h); `information` counts the blocks lost.
   */
  deferredWriteError: (information: number): SenseSpec =>
    Sense.of(SenseKey.MEDIUM_ERROR, TapeAsc.WRITE_ERROR, { deferred: true, information }),
  /** A WRITE or WRITE FILEMARKS whose data could not reach the image (the pool is full, a disk error). */
  writeError: (information: number): SenseSpec =>
    Sense.of(SenseKey.MEDIUM_ERROR, TapeAsc.WRITE_ERROR, { information }),
  removalPrevented: (): SenseSpec => Sense.of(SenseKey.ILLEGAL_REQUEST, TapeAsc.MEDIUM_REMOVAL_PREVENTED),
  mediumNotPresent: (): SenseSpec => Sense.mediumNotPresent(),
} as const;

/** Turns a cartridge-image failure into the sense a drive reports; rethrows anything else. */
export function mediaErrorToScsi(err: unknown, residue?: number): never {
  if (err instanceof ScsiError) throw err;
  if (isMediaError(err)) {
    switch (err.reason) {
      case 'write_protected':
        throw new ScsiError(TapeSense.writeProtected());
      case 'worm_overwrite':
        throw new ScsiError(TapeSense.wormOverwrite(residue ?? 0));
      case 'end_of_medium':
        throw new ScsiError(TapeSense.volumeOverflow(residue ?? 0));
      case 'stub':
        throw new ScsiError(TapeSense.stubMedium());
      case 'corrupt':
        throw new ScsiError(TapeSense.readError());
      case 'closed':
      case 'not_found':
        throw new ScsiError(TapeSense.mediumNotPresent());
      default:
        break;
    }
  }
  throw err;
}
