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
import type { TapeDrive } from './tape-drive.js';
import { DEFAULT_TAPE_MODE, type TapeModeState } from './tape-mode-state.js';
import { EXTRA_PAGES, extraPage, isExtraPage, selectExtraPage } from './extra-mode-pages.js';
import { layOut, parsePartitionPage, partitionPage } from './partition-page.js';

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
    case TapePage.MEDIUM_PARTITION: {
      const m = drive.medium;
      const capacities =
        m.state === 'mounted'
          ? Array.from({ length: m.tape.partitionCount }, (_, i) => m.tape.partitionCapacity(i))
          : [];
      return partitionPage(drive.personality.gen, capacities, changeable);
    }
    case TapePage.MEDIUM_CONFIGURATION:
      return page(code, 0x1e, (p) => {
        if (changeable) return;
        // WORMM: a WORM cartridge is threaded; then the WORM label and filemark restrictions
        // as IBM reports them.
        const m = drive.medium;
        if (m.state === 'mounted' && m.tape.worm) p[2] = 0x01;
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

/**
 * The pages a MODE SENSE asks for: one page (subpage 0), one subpage, a page with all its
 * subpages (FFh), or every page (3Fh) with (FFh) or without (0) the subpages.
 */
function selectedPages(
  drive: TapeDrive,
  pageCode: number,
  subpage: number,
  mode: TapeModeState,
  changeable: boolean,
): Buffer[] {
  const all = pageCode === ALL_PAGES;
  const known = (PAGE_ORDER as readonly number[]).includes(pageCode);
  const extras = EXTRA_PAGES.filter(
    ([c, s]) => (all || c === pageCode) && (subpage === 0xff ? true : s === subpage),
  );
  const classic = all ? PAGE_ORDER : known ? [pageCode] : [];
  const out: Buffer[] = [];
  if (subpage === 0 || subpage === 0xff)
    out.push(...classic.map((c) => modePage(drive, c, mode, changeable)));
  // Vendor pages without subpages (24h, 25h) come with subpage 0; the others only when asked.
  for (const [c, s] of extras) {
    if (s === 0 && (PAGE_ORDER as readonly number[]).includes(c)) continue;
    out.push(extraPage(c, s, mode.extra, changeable));
  }
  if (out.length === 0) {
    const pageKnown = known || EXTRA_PAGES.some(([c]) => c === pageCode);
    throw new ScsiError(pageKnown ? Sense.invalidFieldInCdb(3) : Sense.invalidFieldInCdb(2, 5));
  }
  return out;
}

/** MODE SENSE(6)/(10) of the drive. */
export function tapeModeSense(drive: TapeDrive, ctx: CommandContext): ScsiResult {
  const req = parseModeSense(ctx.cdb);
  const changeable = req.pageControl === PageControl.CHANGEABLE;
  const mode = req.pageControl === PageControl.DEFAULT ? DEFAULT_TAPE_MODE : drive.mode;
  // Page 0: header and block descriptor only, which is what st asks for to learn the block size.
  const pages =
    req.pageCode === 0
      ? Buffer.alloc(0)
      : Buffer.concat(selectedPages(drive, req.pageCode, req.subpage, mode, changeable));
  const m = drive.medium;
  const protectedMedium = m.state === 'mounted' && (m.tape.writeProtected || m.access === 'read-only');
  const header = {
    // A WORM cartridge's medium type is its generation's data type with bit 2 set (8Ch: LTO-8 WORM).
    mediumType: m.state === 'mounted' ? m.format.mediumType | (m.tape.worm ? 0x04 : 0) : 0,
    deviceSpecific: changeable
      ? BUFFERED_MODE
      : (mode.buffered ? BUFFERED_MODE : 0) | (protectedMedium ? WRITE_PROTECT : 0),
  };
  const descriptors = req.dbd ? Buffer.alloc(0) : blockDescriptor(drive, mode, changeable);
  return good(truncateToAllocation(buildModeData(req.ten, header, descriptors, pages), req.allocation));
}

/** MODE SELECT(6)/(10): block length, compression, partitioning (for FORMAT MEDIUM), the extra pages. */
export function tapeModeSelect(drive: TapeDrive, ctx: CommandContext): ScsiResult {
  const { ten, length } = parseModeSelectCdb(ctx.cdb);
  const data = (ctx.cmd.dataOut ?? Buffer.alloc(0)).subarray(0, length);
  const parsed = parseModeSelectData(ten, data);
  const next: TapeModeState = { ...drive.mode, extra: { ...drive.mode.extra } };
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
    // Subpage-format pages (SPF) are all among the extra pages (0Ah/F0h, 10h/01h).
    if ((p.data[0]! & 0x40) !== 0) {
      if (!isExtraPage(p)) throw new ScsiError(Sense.invalidFieldInParameterList(p.offset, 6));
      selectExtraPage(p, next.extra, drive.personality.gen);
      continue;
    }
    switch (p.code) {
      case TapePage.DATA_COMPRESSION:
        if (p.data.length < 4) throw new ScsiError(Sense.invalidFieldInParameterList(p.offset + 1));
        next.compression = (p.data[2]! & 0x80) !== 0;
        break;
      case TapePage.DEVICE_CONFIGURATION:
        if (p.data.length < 16) throw new ScsiError(Sense.invalidFieldInParameterList(p.offset + 1));
        next.compression = p.data[14] !== 0;
        break;
      case TapePage.MEDIUM_PARTITION: {
        const gen = drive.personality.gen;
        const request = parsePartitionPage(gen, p.data, p.offset);
        // With a cartridge threaded, sizes that cannot fit are refused now rather than at FORMAT.
        const m = drive.medium;
        if (m.state === 'mounted' && m.cartridge) {
          const fits = layOut(request, m.cartridge.nativeCapacityBytes);
          if ('badSize' in fits) {
            throw new ScsiError(Sense.invalidFieldInParameterList(p.offset + 8 + 2 * fits.badSize));
          }
        }
        next.partitions = request;
        break;
      }
      case TapePage.CONTROL:
      case TapePage.MEDIUM_CONFIGURATION:
        break;
      default:
        if (!isExtraPage(p)) throw new ScsiError(Sense.invalidFieldInParameterList(p.offset, 5));
        selectExtraPage(p, next.extra, drive.personality.gen);
    }
  }
  Object.assign(drive.mode, next);
  return good();
}
