import { readUInt24BE, requireZeroBits, truncateToAllocation } from '../scsi/cdb.js';
import type { CommandContext } from '../scsi/dispatch.js';
import { good } from '../scsi/result.js';
import { Sense, ScsiError } from '../scsi/sense.js';
import type { ScsiResult } from '../scsi/types.js';
import type { SpaceResult, TapePosition } from '../media/cartridge.js';
import { earlyWarningAt } from '../media/layout.js';
import type { MountedTape, TapeDrive } from './tape-drive.js';
import { TapeSense, mediaErrorToScsi } from './tape-sense.js';

const SPACE_BLOCKS = 0;
const SPACE_FILEMARKS = 1;
const SPACE_END_OF_DATA = 3;

function signed24(cdb: Buffer, offset: number): number {
  const v = readUInt24BE(cdb, offset);
  return v & 0x800000 ? v - 0x1000000 : v;
}

/** SPACE(6) and SPACE(16) (SSC-4 7.7 / 6.11): count is signed, negative spaces toward BOP. */
export async function space(drive: TapeDrive, ctx: CommandContext): Promise<ScsiResult> {
  const { cdb } = ctx;
  const sixteen = cdb[0] === 0x91;
  requireZeroBits(cdb, 1, 0xf0);
  if (sixteen && cdb.readUInt16BE(12) !== 0) throw new ScsiError(Sense.invalidFieldInCdb(12));
  const code = cdb[1]! & 0x0f;
  const count = sixteen ? Number(cdb.readBigInt64BE(4)) : signed24(cdb, 2);
  const m = drive.requireMounted();
  let r: SpaceResult;
  try {
    switch (code) {
      case SPACE_BLOCKS:
        r = await m.tape.spaceBlocks(count);
        break;
      case SPACE_FILEMARKS:
        r = await m.tape.spaceFilemarks(count);
        break;
      case SPACE_END_OF_DATA:
        await m.tape.spaceToEod();
        return good();
      default:
        // Sequential filemarks and setmarks are not LTO features.
        throw new ScsiError(Sense.invalidFieldInCdb(1, 3));
    }
  } catch (err) {
    return mediaErrorToScsi(err);
  }
  // SSC: INFORMATION is the requested count minus what was done, with the count's sign.
  const residue = count > 0 ? count - r.done : count + r.done;
  switch (r.stop) {
    case 'none':
      return good();
    case 'filemark':
      throw new ScsiError(TapeSense.filemark(residue));
    case 'eod':
      throw new ScsiError(TapeSense.endOfData(residue));
    case 'bop':
      throw new ScsiError(TapeSense.beginningOfPartition(residue));
  }
}

/** LOCATE(10) and LOCATE(16): to a logical object, a logical file, or end of data. */
export async function locate(drive: TapeDrive, ctx: CommandContext): Promise<ScsiResult> {
  const { cdb } = ctx;
  const sixteen = cdb[0] === 0x92;
  // LOCATE(10): BT (2), CP (1), IMMED (0). LOCATE(16): DEST_TYPE (5-3), CP, IMMED.
  requireZeroBits(cdb, 1, sixteen ? 0xc4 : 0xf8);
  const changePartition = (cdb[1]! & 0x02) !== 0;
  const partition = sixteen ? cdb[3]! : cdb[8]!;
  const destType = sixteen ? (cdb[1]! >> 3) & 0x07 : 0;
  const target = sixteen ? Number(cdb.readBigUInt64BE(4)) : cdb.readUInt32BE(3);
  const m = drive.requireMounted();
  // CP moves to another partition first; without it the partition field is ignored.
  if (changePartition && partition >= m.tape.partitionCount) {
    throw new ScsiError(Sense.invalidFieldInCdb(sixteen ? 3 : 8));
  }
  try {
    if (changePartition) await m.tape.changePartition(partition);
    switch (destType) {
      case 0: {
        const at = await m.tape.locate(target);
        if (at.object < target) throw new ScsiError(TapeSense.endOfData(target - at.object));
        return good();
      }
      case 1: {
        // Logical file N starts right after filemark N.
        await m.tape.locate(0);
        const r = await m.tape.spaceFilemarks(target);
        if (r.stop === 'eod') throw new ScsiError(TapeSense.endOfData(target - r.done));
        return good();
      }
      case 3:
        await m.tape.spaceToEod();
        return good();
      default:
        throw new ScsiError(Sense.invalidFieldInCdb(1, 5));
    }
  } catch (err) {
    return mediaErrorToScsi(err);
  }
}

/** REWIND: makes what was written durable, then back to BOP. */
export async function rewind(drive: TapeDrive, ctx: CommandContext): Promise<ScsiResult> {
  requireZeroBits(ctx.cdb, 1, 0xfe);
  const m = drive.requireMounted();
  try {
    await m.tape.sync();
    await m.tape.rewind();
  } catch (err) {
    return mediaErrorToScsi(err);
  }
  drive.idleNow();
  return good();
}

/** ERASE(6): everything from the position on is gone (LONG or not: there is no gap to write). */
export async function erase(drive: TapeDrive, ctx: CommandContext): Promise<ScsiResult> {
  requireZeroBits(ctx.cdb, 1, 0xfc);
  const m = drive.requireWritable();
  try {
    await m.tape.erase();
    await m.tape.sync();
  } catch (err) {
    return mediaErrorToScsi(err);
  }
  return good();
}

const SHORT_FORM = 0x00;
const SHORT_FORM_BLOCK_ID = 0x01;
const LONG_FORM = 0x06;
const EXTENDED_FORM = 0x08;

/**
 * READ POSITION (SSC-4 6.5): short (20 bytes), long and extended (32 bytes) forms, each with
 * the partition the head is in.
 */
export function readPosition(drive: TapeDrive, ctx: CommandContext): ScsiResult {
  const { cdb } = ctx;
  const form = cdb[1]! & 0x1f;
  if (![SHORT_FORM, SHORT_FORM_BLOCK_ID, LONG_FORM, EXTENDED_FORM].includes(form)) {
    throw new ScsiError(Sense.invalidFieldInCdb(1, 4));
  }
  const m = drive.requireMounted();
  const at = m.tape.position();
  const flags = (at.bop ? 0x80 : 0) | (pastEarlyWarning(m, at) ? 0x40 : 0);
  if (form === LONG_FORM) {
    const out = Buffer.alloc(32);
    out[0] = flags;
    out.writeUInt32BE(at.partition, 4);
    out.writeBigUInt64BE(BigInt(at.object), 8);
    out.writeBigUInt64BE(BigInt(at.filemarksBefore), 16);
    return good(out);
  }
  if (form === EXTENDED_FORM) {
    const out = Buffer.alloc(32);
    out[0] = flags;
    out[1] = at.partition;
    out.writeUInt16BE(28, 2);
    out.writeBigUInt64BE(BigInt(at.object), 8);
    out.writeBigUInt64BE(BigInt(at.object), 16);
    return good(truncateToAllocation(out, cdb.readUInt16BE(7) || 32));
  }
  const out = Buffer.alloc(20);
  // Positions beyond 32 bits do not fit the short form: LOLU says "use the long form".
  const fits = at.object <= 0xffffffff;
  out[0] = flags | (fits ? 0 : 0x04);
  out[1] = at.partition;
  if (fits) {
    out.writeUInt32BE(at.object, 4);
    out.writeUInt32BE(at.object, 8);
  }
  return good(out);
}

/** EOP of READ POSITION: the position is in the early-warning zone of the partition. */
function pastEarlyWarning(m: MountedTape, at: TapePosition): boolean {
  return at.eod && m.tape.sizeBytes >= earlyWarningAt(m.tape.capacityBytes);
}
