import { allocationLength, requireZeroBits } from './cdb.js';
import { Sense, ScsiError } from './sense.js';

/**
 * Parameter control byte of a bounded counter (binary, format 00b), of an ASCII list (01b) and of
 * a binary list (11b).
 */
export const LOG_COUNTER = 0x00;
export const LOG_ASCII_LIST = 0x01;
export const LOG_BINARY_LIST = 0x03;

/** One log parameter (SPC-4 7.3.2.2.2): code, control byte, value. */
export function logParameter(code: number, value: Buffer, control = LOG_COUNTER): Buffer {
  const head = Buffer.alloc(4);
  head.writeUInt16BE(code, 0);
  head[2] = control;
  head[3] = value.length;
  return Buffer.concat([head, value]);
}

/** An unsigned counter of `width` bytes, saturating rather than wrapping. */
export function counterValue(n: number, width: 1 | 2 | 4 | 8 = 4): Buffer {
  const out = Buffer.alloc(width);
  const value = Math.max(0, Math.trunc(n));
  if (width === 8) out.writeBigUInt64BE(BigInt(value));
  else out.writeUIntBE(Math.min(value, 2 ** (8 * width) - 1), 0, width);
  return out;
}

/** A log page: header (page code, subpage, length) and its parameters. */
export function logPage(page: number, parameters: Buffer[]): Buffer {
  const body = Buffer.concat(parameters);
  const head = Buffer.alloc(4);
  head[0] = page & 0x3f;
  head.writeUInt16BE(body.length, 2);
  return Buffer.concat([head, body]);
}

export interface LogSenseRequest {
  pageControl: number;
  page: number;
  subpage: number;
  parameterPointer: number;
  allocation: number;
}

/**
 * Decodes LOG SENSE (SPC-4 6.6); PPC (parameters from the pointer on) is not supported. A
 * SUBPAGE CODE is refused unless the device says it has subpages (it checks the code itself).
 */
export function parseLogSense(cdb: Buffer, opts: { subpages?: boolean } = {}): LogSenseRequest {
  requireZeroBits(cdb, 1, 0xff);
  if (cdb[3] !== 0 && !opts.subpages) throw new ScsiError(Sense.invalidFieldInCdb(3, 7));
  return {
    pageControl: cdb[2]! >> 6,
    page: cdb[2]! & 0x3f,
    subpage: cdb[3]!,
    parameterPointer: cdb.readUInt16BE(5),
    allocation: allocationLength(cdb, 7, 2),
  };
}

/** Drops the parameters whose code is below the parameter pointer (SPC-4 6.6). */
export function fromParameterPointer(page: Buffer, pointer: number): Buffer {
  if (pointer === 0) return page;
  const kept: Buffer[] = [];
  for (let at = 4; at + 4 <= page.length;) {
    const length = 4 + page[at + 3]!;
    if (page.readUInt16BE(at) >= pointer) kept.push(page.subarray(at, at + length));
    at += length;
  }
  const out = logPage(page[0]!, kept);
  // Keep the SPF bit and subpage code of a subpage.
  page.copy(out, 0, 0, 2);
  return out;
}
