import { capacityBytes } from '../media/layout.js';
import { requireZeroBits, truncateToAllocation } from '../scsi/cdb.js';
import { SenseKey } from '../scsi/constants.js';
import type { CommandContext } from '../scsi/dispatch.js';
import { good } from '../scsi/result.js';
import { Sense, ScsiError } from '../scsi/sense.js';
import type { ScsiResult } from '../scsi/types.js';
import { ONE_PARTITION, layOut, maxAdditionalPartitions, minimumPartition } from './partition-page.js';
import type { MountedTape, TapeDrive } from './tape-drive.js';
import { mediaErrorToScsi } from './tape-sense.js';

/** POSITION PAST BEGINNING OF MEDIUM: FORMAT MEDIUM and SET CAPACITY need BOP of partition 0. */
const POSITION_PAST_BOM = [0x3b, 0x0c] as const;

const FORMAT_DEFAULT = 0x0;
const FORMAT_PARTITION = 0x1;
const FORMAT_DEFAULT_THEN_PARTITION = 0x2;

/** The threaded real cartridge at BOP of partition 0, writable; the sense otherwise. */
function atBeginning(drive: TapeDrive): Required<Pick<MountedTape, 'cartridge'>> & MountedTape {
  const m = drive.requireWritable();
  if (!m.cartridge) throw new ScsiError(Sense.of(SenseKey.MEDIUM_ERROR, [0x31, 0x00]));
  const at = m.tape.position();
  if (at.partition !== 0 || at.object !== 0) {
    throw new ScsiError(Sense.of(SenseKey.ILLEGAL_REQUEST, POSITION_PAST_BOM));
  }
  return m as Required<Pick<MountedTape, 'cartridge'>> & MountedTape;
}

/**
 * FORMAT MEDIUM (SSC-4 6.2, IBM LTO): format 0 makes one partition; 1 and 2 lay the tape out
 * as mode page 11h asked (2 first restores the default format, which an image does in the
 * same step). Everything on the tape is gone afterwards; the cartridge memory stays.
 */
export async function formatMedium(drive: TapeDrive, ctx: CommandContext): Promise<ScsiResult> {
  const { cdb } = ctx;
  requireZeroBits(cdb, 1, 0xfc);
  const format = cdb[2]! & 0x0f;
  if (
    (cdb[2]! & 0xf0) !== 0 ||
    ![FORMAT_DEFAULT, FORMAT_PARTITION, FORMAT_DEFAULT_THEN_PARTITION].includes(format)
  ) {
    throw new ScsiError(Sense.invalidFieldInCdb(2));
  }
  // No format parameter list is defined for tape.
  if (cdb.readUInt16BE(3) !== 0) throw new ScsiError(Sense.invalidFieldInCdb(3));
  const m = atBeginning(drive);
  const request = format === FORMAT_DEFAULT ? ONE_PARTITION : drive.mode.partitions;
  if (request.additional > maxAdditionalPartitions(drive.personality.gen)) {
    throw new ScsiError(Sense.invalidFieldInCdb(2));
  }
  const capacities = layOut(request, m.cartridge.nativeCapacityBytes);
  // Sizes chosen before this cartridge was threaded may not fit it.
  if ('badSize' in capacities) throw new ScsiError(Sense.invalidFieldInCdb(2));
  try {
    await m.cartridge.format(capacities);
  } catch (err) {
    return mediaErrorToScsi(err);
  }
  drive.noteFormatted(m.label, capacities);
  return good();
}

/**
 * SET CAPACITY (SSC-4 7.6): scales the tape to PROPORTION/65535 of its generation's native
 * capacity (at least one minimum partition) and leaves it one empty partition.
 */
export async function setCapacity(drive: TapeDrive, ctx: CommandContext): Promise<ScsiResult> {
  const { cdb } = ctx;
  requireZeroBits(cdb, 1, 0xfe);
  const proportion = cdb.readUInt16BE(3);
  const m = atBeginning(drive);
  const full = capacityBytes(m.format.gen);
  const scaled = Math.max(minimumPartition(full), Math.floor((full * proportion) / 0xffff / 1e6) * 1e6);
  try {
    await m.cartridge.format([scaled], scaled);
  } catch (err) {
    return mediaErrorToScsi(err);
  }
  drive.noteFormatted(m.label, [scaled]);
  return good();
}

const READ_BUFFER_DATA = 0x02;
const READ_BUFFER_DESCRIPTOR = 0x03;
const ECHO_DESCRIPTOR = 0x0b;
/** Size of the drive's buffer 0 as READ BUFFER describes it (the data is a blank dump area). */
const DUMP_BUFFER_SIZE = 64 * 1024;

/**
 * READ BUFFER (SPC-4 6.15): descriptor and data modes of buffer 0, a dump area that reads as
 * zeros (the image has no firmware trace to give). LTFS fetches it after a failed command.
 */
export function readBuffer(_drive: TapeDrive, ctx: CommandContext): ScsiResult {
  const { cdb } = ctx;
  const mode = cdb[1]! & 0x1f;
  const id = cdb[2]!;
  const offset = (cdb[3]! << 16) | cdb.readUInt16BE(4);
  const allocation = (cdb[6]! << 16) | cdb.readUInt16BE(7);
  // Buffer 0 on enterprise drives, 1 (the dump) on LTO: both name the same dump area here.
  if (id > 1) throw new ScsiError(Sense.invalidFieldInCdb(2));
  if (mode === READ_BUFFER_DESCRIPTOR || mode === ECHO_DESCRIPTOR) {
    const out = Buffer.alloc(4);
    out[0] = 0; // offset boundary 2^0: any offset
    out[1] = (DUMP_BUFFER_SIZE >> 16) & 0xff;
    out.writeUInt16BE(DUMP_BUFFER_SIZE & 0xffff, 2);
    return good(truncateToAllocation(out, allocation));
  }
  if (mode === READ_BUFFER_DATA) {
    if (offset > DUMP_BUFFER_SIZE) throw new ScsiError(Sense.invalidFieldInCdb(3));
    return good(Buffer.alloc(Math.min(allocation, DUMP_BUFFER_SIZE - offset)));
  }
  throw new ScsiError(Sense.invalidFieldInCdb(1, 4));
}

/** Data-out length of SEND DIAGNOSTIC. */
export function sendDiagnosticDataOutLength(cdb: Buffer): number {
  return cdb.readUInt16BE(3);
}

/**
 * SEND DIAGNOSTIC (SPC-4 6.32): the default self-test passes (an image has no mechanism to
 * test), and a diagnostic page, such as the "force dump" LTFS sends after a failure, is taken
 * and has nothing to do: READ BUFFER then reads the (blank) dump.
 */
export function sendDiagnostic(_drive: TapeDrive, ctx: CommandContext): ScsiResult {
  const { cdb } = ctx;
  const selfTest = (cdb[1]! & 0x04) !== 0;
  const pf = (cdb[1]! & 0x10) !== 0;
  if ((cdb[1]! & 0xe0) !== 0) throw new ScsiError(Sense.invalidFieldInCdb(1, 5));
  if (selfTest && cdb.readUInt16BE(3) !== 0) throw new ScsiError(Sense.invalidFieldInCdb(3));
  if (!selfTest && !pf && cdb.readUInt16BE(3) !== 0) throw new ScsiError(Sense.invalidFieldInCdb(1, 4));
  return good();
}
