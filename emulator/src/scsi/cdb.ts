import { Sense, ScsiError } from './sense.js';

/**
 * CDB length by group code (SPC-4 4.2.5.1). Group 3 is variable length (byte 7 + 8) and the
 * vendor groups 6/7 are reported as 0 so a dispatch table entry must state its own length.
 */
export function cdbLengthForOpcode(opcode: number): number {
  switch (opcode >> 5) {
    case 0:
      return 6;
    case 1:
    case 2:
      return 10;
    case 4:
      return 16;
    case 5:
      return 12;
    default:
      return 0;
  }
}

export function readUInt24BE(buf: Buffer, offset: number): number {
  return (buf[offset]! << 16) | (buf[offset + 1]! << 8) | buf[offset + 2]!;
}

export function writeUInt24BE(buf: Buffer, value: number, offset: number): void {
  buf[offset] = (value >>> 16) & 0xff;
  buf[offset + 1] = (value >>> 8) & 0xff;
  buf[offset + 2] = value & 0xff;
}

/** A 64-bit big-endian field as a number; tape positions and LBAs stay below 2^53. */
export function readUInt64BE(buf: Buffer, offset: number): number {
  return Number(buf.readBigUInt64BE(offset));
}

/** The control byte: the last byte of the CDB for its group. */
export function controlByte(cdb: Buffer, cdbLength = cdbLengthForOpcode(cdb[0]!)): number {
  return cdbLength > 0 && cdb.length >= cdbLength ? cdb[cdbLength - 1]! : 0;
}

/** The NACA bit of the control byte; the emulator does not support ACA. */
export const CONTROL_NACA = 0x04;

/**
 * Allocation length of the SPC commands the core answers, by where SPC puts it for that opcode.
 * 6-byte CDBs use byte 4 (INQUIRY uses bytes 3-4); 10/12/16-byte ones state it per command.
 */
export function allocationLength(cdb: Buffer, offset: number, width: 1 | 2 | 3 | 4): number {
  switch (width) {
    case 1:
      return cdb[offset]!;
    case 2:
      return cdb.readUInt16BE(offset);
    case 3:
      return readUInt24BE(cdb, offset);
    case 4:
      return cdb.readUInt32BE(offset);
  }
}

/**
 * Rejects a CDB whose reserved or unsupported bits are set, pointing the sense field pointer at
 * the first offending bit: `mask` is the set of bits that must be zero in `cdb[byte]`.
 */
export function requireZeroBits(cdb: Buffer, byte: number, mask: number): void {
  const bad = (cdb[byte] ?? 0) & mask;
  if (bad === 0) return;
  throw new ScsiError(Sense.invalidFieldInCdb(byte, 31 - Math.clz32(bad)));
}

/** Trims data to an allocation length without copying (SPC: return min(available, allocation)). */
export function truncateToAllocation(data: Buffer, allocation: number): Buffer {
  return data.length > allocation ? data.subarray(0, allocation) : data;
}

/** Space-padded fixed-width ASCII field, as INQUIRY vendor/product/revision use. */
export function spacePadded(value: string, width: number): Buffer {
  const out = Buffer.alloc(width, 0x20);
  out.write(value.slice(0, width), 'ascii');
  return out;
}

/**
 * PREVENT ALLOW MEDIUM REMOVAL that allows (PREVENT 00b): a host may always give up its own
 * prevention, so it runs under another host's reservation (SPC-2 and SPC-4 reservation tables).
 */
export function allowsRemoval(cdb: Buffer): boolean {
  return (cdb[4]! & 0x03) === 0;
}
