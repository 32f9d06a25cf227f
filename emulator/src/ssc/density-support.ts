import { requireZeroBits, truncateToAllocation, writeUInt24BE } from '../scsi/cdb.js';
import { asciiField } from '../media/mam.js';
import type { CommandContext } from '../scsi/dispatch.js';
import { good } from '../scsi/result.js';
import type { ScsiResult } from '../scsi/types.js';
import { mediumAccess, type LtoFormat } from './lto-personality.js';
import type { TapeDrive } from './tape-drive.js';

/** LTO tape is half an inch wide: 127 tenths of a millimetre. */
const MEDIA_WIDTH = 127;
const ORGANIZATION = 'LTO-CVE';

/** READ BLOCK LIMITS (SSC-4 7.4): 1 byte to the personality's maximum, any granularity. */
export function readBlockLimits(drive: TapeDrive, ctx: CommandContext): ScsiResult {
  requireZeroBits(ctx.cdb, 1, 0xfe);
  const mloi = (ctx.cdb[1]! & 0x01) !== 0;
  // MLOI asks for the largest logical object identifier instead; 0 says "not reported".
  if (mloi) {
    const out = Buffer.alloc(20);
    out.writeUInt16BE(16, 2);
    return good(out);
  }
  const out = Buffer.alloc(6);
  writeUInt24BE(out, drive.personality.maxBlockLength, 1);
  out.writeUInt16BE(1, 4);
  return good(out);
}

function densityDescriptor(drive: TapeDrive, f: LtoFormat): Buffer {
  const out = Buffer.alloc(52);
  out[0] = f.density;
  out[1] = f.density;
  const writable = mediumAccess(drive.personality.gen, f.gen) === 'read-write';
  const isDefault = f.gen === drive.personality.gen;
  out[2] = (writable ? 0x80 : 0) | (isDefault ? 0x20 : 0);
  writeUInt24BE(out, f.bitsPerMm, 5);
  out.writeUInt16BE(MEDIA_WIDTH, 8);
  out.writeUInt16BE(f.tracks, 10);
  out.writeUInt32BE(f.capacityMb, 12);
  asciiField(ORGANIZATION, 8).copy(out, 16);
  asciiField(f.densityName, 8).copy(out, 24);
  asciiField(f.description, 20).copy(out, 32);
  return out;
}

function mediumTypeDescriptor(f: LtoFormat): Buffer {
  const out = Buffer.alloc(56);
  out[0] = f.mediumType;
  out.writeUInt16BE(52, 2);
  // The densities of this drive that can live on this medium: its own generation's.
  out[4] = 1;
  out[5] = f.density;
  out.writeUInt16BE(MEDIA_WIDTH, 14);
  asciiField(ORGANIZATION, 8).copy(out, 20);
  asciiField(`LTO-${f.gen}`, 8).copy(out, 28);
  asciiField(`Ultrium ${f.gen} data`, 20).copy(out, 36);
  return out;
}

/**
 * REPORT DENSITY SUPPORT (SSC-4 6.7): every generation the drive reads, newest first; with
 * MEDIA set only the mounted cartridge's; with MEDIUM TYPE the medium type descriptors.
 */
export function reportDensitySupport(drive: TapeDrive, ctx: CommandContext): ScsiResult {
  const { cdb } = ctx;
  requireZeroBits(cdb, 1, 0xfc);
  const media = (cdb[1]! & 0x01) !== 0;
  const mediumType = (cdb[1]! & 0x02) !== 0;
  const formats = media ? [drive.requireMounted().format] : drive.personality.readable;
  const descriptors = formats.map((f) =>
    mediumType ? mediumTypeDescriptor(f) : densityDescriptor(drive, f),
  );
  const body = Buffer.concat(descriptors);
  const head = Buffer.alloc(4);
  head.writeUInt16BE(body.length + 2, 0);
  return good(truncateToAllocation(Buffer.concat([head, body]), cdb.readUInt16BE(7)));
}
