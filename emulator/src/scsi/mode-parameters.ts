import { allocationLength, requireZeroBits } from './cdb.js';
import { SenseKey } from './constants.js';
import { Sense, ScsiError } from './sense.js';

/** Page control of MODE SENSE (SPC-4 6.11): which set of values the host asks for. */
export const PageControl = { CURRENT: 0, CHANGEABLE: 1, DEFAULT: 2, SAVED: 3 } as const;

export const ALL_PAGES = 0x3f;

/** SAVING PARAMETERS NOT SUPPORTED: no device here keeps saved mode pages. */
const SAVING_NOT_SUPPORTED = [0x39, 0x00] as const;

/** What a MODE SENSE(6)/(10) CDB asks for. */
export interface ModeSenseRequest {
  ten: boolean;
  dbd: boolean;
  pageControl: number;
  pageCode: number;
  subpage: number;
  allocation: number;
}

export function parseModeSense(cdb: Buffer): ModeSenseRequest {
  const ten = cdb[0] === 0x5a;
  // LLBAA (bit 4 of MODE SENSE(10)) asks for long block descriptors, which tape never uses.
  requireZeroBits(cdb, 1, ten ? 0xe7 : 0xf7);
  const pageControl = cdb[2]! >> 6;
  if (pageControl === PageControl.SAVED) {
    throw new ScsiError(Sense.of(SenseKey.ILLEGAL_REQUEST, SAVING_NOT_SUPPORTED));
  }
  return {
    ten,
    dbd: (cdb[1]! & 0x08) !== 0,
    pageControl,
    pageCode: cdb[2]! & 0x3f,
    subpage: cdb[3]!,
    allocation: ten ? allocationLength(cdb, 7, 2) : cdb[4]!,
  };
}

/** The mode parameter header fields a device fills in. */
export interface ModeHeader {
  mediumType: number;
  deviceSpecific: number;
}

/** Header + block descriptors + pages, in the 6- or 10-byte layout. */
export function buildModeData(
  ten: boolean,
  header: ModeHeader,
  blockDescriptors: Buffer,
  pages: Buffer,
): Buffer {
  const head = Buffer.alloc(ten ? 8 : 4);
  const total = head.length + blockDescriptors.length + pages.length;
  if (ten) {
    head.writeUInt16BE(total - 2, 0);
    head[2] = header.mediumType;
    head[3] = header.deviceSpecific;
    head.writeUInt16BE(blockDescriptors.length, 6);
  } else {
    head[0] = Math.min(total - 1, 0xff);
    head[1] = header.mediumType;
    head[2] = header.deviceSpecific;
    head[3] = blockDescriptors.length;
  }
  return Buffer.concat([head, blockDescriptors, pages]);
}

/** One page of a MODE SELECT parameter list, with where it starts (for field pointers). */
export interface SelectedPage {
  code: number;
  /** The whole page including its 2-byte header (PS bit cleared). */
  data: Buffer;
  offset: number;
}

export interface ModeSelectData {
  blockDescriptors: Buffer;
  /** Offset of the first block descriptor in the parameter list. */
  blockDescriptorOffset: number;
  pages: SelectedPage[];
}

/** Checks a MODE SELECT CDB: PF must be set (SPC pages), SP is refused (nothing is saved). */
export function parseModeSelectCdb(cdb: Buffer): { ten: boolean; length: number } {
  const ten = cdb[0] === 0x55;
  requireZeroBits(cdb, 1, 0xee);
  if ((cdb[1]! & 0x01) !== 0) throw new ScsiError(Sense.invalidFieldInCdb(1, 0));
  return { ten, length: ten ? cdb.readUInt16BE(7) : cdb[4]! };
}

/** Splits a MODE SELECT parameter list into block descriptors and pages. */
export function parseModeSelectData(ten: boolean, data: Buffer): ModeSelectData {
  const headLength = ten ? 8 : 4;
  if (data.length === 0)
    return { blockDescriptors: Buffer.alloc(0), blockDescriptorOffset: headLength, pages: [] };
  if (data.length < headLength) throw new ScsiError(Sense.parameterListLengthError());
  const bdLength = ten ? data.readUInt16BE(6) : data[3]!;
  if (headLength + bdLength > data.length) {
    throw new ScsiError(Sense.invalidFieldInParameterList(ten ? 6 : 3));
  }
  const pages: SelectedPage[] = [];
  let at = headLength + bdLength;
  while (at < data.length) {
    if (at + 2 > data.length) throw new ScsiError(Sense.parameterListLengthError());
    const spf = (data[at]! & 0x40) !== 0;
    const length = spf ? data.readUInt16BE(at + 2) + 4 : data[at + 1]! + 2;
    if (at + length > data.length) throw new ScsiError(Sense.parameterListLengthError());
    const page = Buffer.from(data.subarray(at, at + length));
    page[0] = page[0]! & 0x7f;
    pages.push({ code: page[0]! & 0x3f, data: page, offset: at });
    at += length;
  }
  return {
    blockDescriptors: data.subarray(headLength, headLength + bdLength),
    blockDescriptorOffset: headLength,
    pages,
  };
}

/** Data-out length of MODE SELECT(6)/(10). */
export function modeSelectDataOutLength(cdb: Buffer): number {
  return cdb[0] === 0x55 ? cdb.readUInt16BE(7) : cdb[4]!;
}
