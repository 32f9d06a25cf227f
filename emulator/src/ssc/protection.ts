import { SenseKey } from '../scsi/constants.js';
import { Sense, ScsiError } from '../scsi/sense.js';
import { crc32c } from '../util/crc32c.js';
import type { TapeDrive } from './tape-drive.js';

/**
 * Logical block protection (SSC-4 4.2.23, page 0Ah/F0h) with the two methods LTO drives offer:
 * Reed-Solomon CRC (method 1, from LTO-5; ECMA-319 Annex C, sent most significant byte first)
 * and CRC32C (method 2, from LTO-7; least significant byte first, as LTFS appends it). Each is
 * 4 bytes of protection information after the block's data.
 */
export const LbpMethod = { NONE: 0, RS_CRC: 1, CRC32C: 2 } as const;
const LBP_W = 0x80;
const LBP_R = 0x40;
const PI_BYTES = 4;
/** LOGICAL BLOCK GUARD CHECK FAILED: a protected block's CRC does not match its data. */
const GUARD_CHECK_FAILED = [0x10, 0x01] as const;

/** Product of two elements of GF(256) with the field polynomial x^8 + x^4 + x^3 + x^2 + 1. */
function gfMul(a: number, b: number): number {
  let product = 0;
  for (; b > 0; b >>= 1) {
    if (b & 1) product ^= a;
    a = a & 0x80 ? ((a << 1) ^ 0x11d) & 0xff : a << 1;
  }
  return product;
}

/**
 * One step of the Reed-Solomon CRC for each input byte: the byte times the generator's
 * coefficients (38h CFh 38h 01h), so the register shifts a byte and adds that product.
 */
const RS_TABLE = Uint32Array.from(
  { length: 256 },
  (_, b) => ((gfMul(b, 0x38) << 24) | (gfMul(b, 0xcf) << 16) | (gfMul(b, 0x38) << 8) | b) >>> 0,
);

/** The 32-bit Reed-Solomon GF(256) CRC of LTO drives. */
export function rsCrc(data: Uint8Array): number {
  let reg = 0;
  for (const byte of data) reg = ((reg << 8) ^ RS_TABLE[(byte ^ (reg >>> 24)) & 0xff]!) >>> 0;
  return reg;
}

/** The protection information of a block's data under a method. */
export function protectionInfo(method: number, data: Uint8Array): Buffer {
  const pi = Buffer.alloc(PI_BYTES);
  if (method === LbpMethod.RS_CRC) pi.writeUInt32BE(rsCrc(data));
  else pi.writeUInt32LE(crc32c(data));
  return pi;
}

function activeMethod(drive: TapeDrive, flag: number): number {
  const { lbpMethod, lbpFlags } = drive.mode.extra;
  return lbpMethod !== LbpMethod.NONE && (lbpFlags & flag) !== 0 ? lbpMethod : LbpMethod.NONE;
}

/**
 * WRITE with protection on (LBP_W): every block must end in the right protection information,
 * or the command is refused before anything is written (ABORTED COMMAND, LOGICAL BLOCK GUARD
 * CHECK FAILED). In variable-block mode the drive keeps the data and drops the 4 bytes, as a
 * drive records its own check on the medium; fixed blocks are stored as sent.
 */
export function checkWriteProtection(
  drive: TapeDrive,
  data: Buffer,
  blocks: number,
  blockLength: number,
  fixed: boolean,
): Buffer[] {
  const method = activeMethod(drive, LBP_W);
  const sent = Array.from({ length: blocks }, (_, i) =>
    data.subarray(i * blockLength, (i + 1) * blockLength),
  );
  if (method === LbpMethod.NONE) return sent;
  for (const block of sent) {
    const n = block.length - PI_BYTES;
    if (n < 1 || !protectionInfo(method, block.subarray(0, n)).equals(block.subarray(n))) {
      throw new ScsiError(Sense.of(SenseKey.ABORTED_COMMAND, GUARD_CHECK_FAILED));
    }
  }
  return fixed ? sent : sent.map((b) => b.subarray(0, b.length - PI_BYTES));
}

/** Whether a variable-block READ gets protection information appended (LBP_R). */
export function readProtectionMethod(drive: TapeDrive): number {
  return activeMethod(drive, LBP_R);
}
