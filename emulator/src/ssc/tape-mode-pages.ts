import { readUInt24BE, truncateToAllocation, writeUInt24BE } from '../scsi/cdb.js';
import type { CommandContext } from '../scsi/dispatch.js';
import {
  ALL_PAGES,
  PageControl,
  buildModeData,
  parseModeSelectCdb,
  parseModeSelectData,
  parseModeSense,
} from '../scsi/mode-parameters.js';
import { good } from '../scsi/result.js';
import { Sense, ScsiError } from '../scsi/sense.js';
import type { ScsiResult } from '../scsi/types.js';
import { DEFAULT_TAPE_MODE, type TapeDrive, type TapeModeState } from './tape-drive.js';

/** Page codes of the drive (SSC-4 8.3, IBM LTO SCSI Reference). */
export const TapePage = {
  CONTROL: 0x0a,
  DATA_COMPRESSION: 0x0f,
  DEVICE_CONFIGURATION: 0x10,
  MEDIUM_PARTITION: 0x11,
  MEDIUM_CONFIGURATION: 0x1d,
} as const;

const PAGE_ORDER = [
  TapePage.CONTROL,
  TapePage.DATA_COMPRESSION,
  TapePage.DEVICE_CONFIGURATION,
  TapePage.MEDIUM_PARTITION,
  TapePage.MEDIUM_CONFIGURATION,
];

/** SLDC, the LTO compression algorithm, as IBM drives number it. */
const LTO_COMPRESSION_ALGORITHM = 0x01;
const BUFFERED_MODE = 0x10;
const WRITE_PROTECT = 0x80;
const NO_DENSITY_CHANGE = 0x7f;

function page(code: number, length: number, fill: (p: Buffer) => void): Buffer {
  const p = Buffer.alloc(2 + length);
  p[0] = code;
  p[1] = length;
  fill(p);
  return p;
}

/** One page's current values, or with `changeable` the mask of what MODE SELECT may change. */
function modePage(drive: TapeDrive, code: number, mode: TapeModeState, changeable: boolean): Buffer {
  switch (code) {
    case TapePage.CONTROL:
      return page(code, 0x0a, () => undefined);
    case TapePage.DATA_COMPRESSION:
      return page(code, 0x0e, (p) => {
        if (changeable) return void (p[2] = 0x80);
        // DCE as set, DCC: the drive can compress; DDE: decompression on read.
        p[2] = (mode.compression ? 0x80 : 0) | 0x40;
        p[3] = 0x80;
        p.writeUInt32BE(LTO_COMPRESSION_ALGORITHM, 4);
        p.writeUInt32BE(LTO_COMPRESSION_ALGORITHM, 8);
      });
    case TapePage.DEVICE_CONFIGURATION:
      return page(code, 0x0e, (p) => {
        if (changeable) return void (p[14] = 0xff);
        // BIS: block ids are logical object numbers; EEG + SEW: EOD written, sync at early warning.
        p[8] = 0x40;
        p[10] = 0x18;
        p[14] = mode.compression ? LTO_COMPRESSION_ALGORITHM : 0;
      });
    case TapePage.MEDIUM_PARTITION:
      return page(code, 0x08, (p) => {
        if (changeable) return;
        const m = drive.medium;
        const capacity = m.state === 'mounted' ? m.tape.capacityBytes : 0;
        // One partition (no additional ones); its size in GB (PSUM 11b, units 10^9 bytes).
        p[4] = 0x18;
        p[5] = 0x03;
        p[6] = 0x09;
        p.writeUInt16BE(Math.min(0xffff, Math.floor(capacity / 1e9)), 8);
      });
    case TapePage.MEDIUM_CONFIGURATION:
      return page(code, 0x1e, (p) => {
        if (changeable) return;
        // WORM label and filemark restrictions as IBM reports them for a data cartridge.
        p[4] = 0x01;
        p[5] = 0x02;
      });
    default:
      throw new Error(`no mode page 0x${code.toString(16)}`);
  }
}

function blockDescriptor(drive: TapeDrive, mode: TapeModeState, changeable: boolean): Buffer {
  const out = Buffer.alloc(8);
  if (changeable) {
    writeUInt24BE(out, 0xffffff, 5);
    return out;
  }
  const m = drive.medium;
  out[0] = m.state === 'mounted' ? m.format.density : 0;
  writeUInt24BE(out, mode.blockLength, 5);
  return out;
}

/** MODE SENSE(6)/(10) of the drive. */
export function tapeModeSense(drive: TapeDrive, ctx: CommandContext): ScsiResult {
  const req = parseModeSense(ctx.cdb);
  if (req.subpage !== 0 && req.subpage !== 0xff) throw new ScsiError(Sense.invalidFieldInCdb(3));
  const changeable = req.pageControl === PageControl.CHANGEABLE;
  const mode = req.pageControl === PageControl.DEFAULT ? DEFAULT_TAPE_MODE : drive.mode;
  let codes: readonly number[];
  if (req.pageCode === ALL_PAGES) codes = PAGE_ORDER;
  // Page 0: header and block descriptor only, which is what st asks for to learn the block size.
  else if (req.pageCode === 0) codes = [];
  else if ((PAGE_ORDER as readonly number[]).includes(req.pageCode)) codes = [req.pageCode];
  else throw new ScsiError(Sense.invalidFieldInCdb(2, 5));
  const pages = Buffer.concat(codes.map((c) => modePage(drive, c, mode, changeable)));
  const m = drive.medium;
  const protectedMedium = m.state === 'mounted' && (m.tape.writeProtected || m.access === 'read-only');
  const header = {
    mediumType: m.state === 'mounted' ? m.format.mediumType : 0,
    deviceSpecific: changeable
      ? BUFFERED_MODE
      : (mode.buffered ? BUFFERED_MODE : 0) | (protectedMedium ? WRITE_PROTECT : 0),
  };
  const descriptors = req.dbd ? Buffer.alloc(0) : blockDescriptor(drive, mode, changeable);
  return good(truncateToAllocation(buildModeData(req.ten, header, descriptors, pages), req.allocation));
}

/** MODE SELECT(6)/(10): block length (fixed/variable mode) and compression; partitions refused. */
export function tapeModeSelect(drive: TapeDrive, ctx: CommandContext): ScsiResult {
  const { ten, length } = parseModeSelectCdb(ctx.cdb);
  const data = (ctx.cmd.dataOut ?? Buffer.alloc(0)).subarray(0, length);
  const parsed = parseModeSelectData(ten, data);
  const next: TapeModeState = { ...drive.mode };
  if (data.length > 0) {
    // The header's buffered mode: 0 unbuffered, 1 buffered; other modes are not offered.
    const at = ten ? 3 : 2;
    const buffered = (data[at]! >> 4) & 0x07;
    if (buffered > 1) throw new ScsiError(Sense.invalidFieldInParameterList(at, 6));
    next.buffered = buffered === 1;
  }
  const bd = parsed.blockDescriptors;
  if (bd.length > 0) {
    if (bd.length !== 8) throw new ScsiError(Sense.invalidFieldInParameterList(ten ? 6 : 3));
    const at = parsed.blockDescriptorOffset;
    const density = bd[0]!;
    const known = drive.personality.readable.some((f) => f.density === density);
    if (density !== 0 && density !== NO_DENSITY_CHANGE && !known) {
      throw new ScsiError(Sense.invalidFieldInParameterList(at));
    }
    const blockLength = readUInt24BE(bd, 5);
    if (blockLength > drive.personality.maxBlockLength) {
      throw new ScsiError(Sense.invalidFieldInParameterList(at + 5));
    }
    next.blockLength = blockLength;
  }
  for (const p of parsed.pages) {
    switch (p.code) {
      case TapePage.DATA_COMPRESSION:
        if (p.data.length < 4) throw new ScsiError(Sense.invalidFieldInParameterList(p.offset + 1));
        next.compression = (p.data[2]! & 0x80) !== 0;
        break;
      case TapePage.DEVICE_CONFIGURATION:
        if (p.data.length < 16) throw new ScsiError(Sense.invalidFieldInParameterList(p.offset + 1));
        next.compression = p.data[14] !== 0;
        break;
      case TapePage.MEDIUM_PARTITION:
        // One partition only: the image format has no second one to give.
        if ((p.data[3] ?? 0) !== 0) throw new ScsiError(Sense.invalidFieldInParameterList(p.offset + 3));
        break;
      case TapePage.CONTROL:
      case TapePage.MEDIUM_CONFIGURATION:
        break;
      default:
        throw new ScsiError(Sense.invalidFieldInParameterList(p.offset, 5));
    }
  }
  Object.assign(drive.mode, next);
  return good();
}
