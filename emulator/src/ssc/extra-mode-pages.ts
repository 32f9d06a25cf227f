import { Sense, ScsiError } from '../scsi/sense.js';
import type { SelectedPage } from '../scsi/mode-parameters.js';

/**
 * The mode pages an archive host reads beside the classic ones: control data protection
 * (0Ah/F0h, logical block protection), device configuration extension (10h/01h), and IBM's
 * vendor pages 24h and 25h, which LTFS asks for on IBM drives. Their values live here.
 */
export interface ExtraModeState {
  /** Logical block protection method (0 none, 1 Reed-Solomon CRC, 2 CRC32C). */
  lbpMethod: number;
  /** Protection information length in bytes (4 for both methods). */
  lbpLength: number;
  /** LBP_W, LBP_R and RBDP bits as the host set them (byte 6 of 0Ah/F0h). */
  lbpFlags: number;
  /** Programmable early warning size in MB (10h/01h). */
  pews: number;
  /** IBM read/write control (25h) byte 8: read past EOD and similar options. */
  rwControl: number;
}

export const DEFAULT_EXTRA_MODE: Readonly<ExtraModeState> = {
  lbpMethod: 0,
  lbpLength: 0,
  lbpFlags: 0,
  pews: 0,
  rwControl: 0,
};

/** Page code and subpage of each page here, in MODE SENSE order. */
export const EXTRA_PAGES: ReadonlyArray<readonly [number, number]> = [
  [0x0a, 0xf0],
  [0x10, 0x01],
  [0x24, 0x00],
  [0x25, 0x00],
];

const LBP_RS_CRC = 0x01;
const LBP_CRC32C = 0x02;
const SPF = 0x40;

function subpageFormat(code: number, subpage: number, length: number): Buffer {
  const p = Buffer.alloc(4 + length);
  p[0] = SPF | code;
  p[1] = subpage;
  p.writeUInt16BE(length, 2);
  return p;
}

function page0(code: number, length: number): Buffer {
  const p = Buffer.alloc(2 + length);
  p[0] = code;
  p[1] = length;
  return p;
}

/** One of these pages: current values, or with `changeable` the mask of what may be set. */
export function extraPage(code: number, subpage: number, s: ExtraModeState, changeable: boolean): Buffer {
  if (code === 0x0a && subpage === 0xf0) {
    const p = subpageFormat(code, subpage, 0x1c);
    if (changeable) {
      p[4] = 0xff;
      p[5] = 0x3f;
      p[6] = 0xe0;
    } else {
      p[4] = s.lbpMethod;
      p[5] = s.lbpLength;
      p[6] = s.lbpFlags;
    }
    return p;
  }
  if (code === 0x10 && subpage === 0x01) {
    const p = subpageFormat(code, subpage, 0x1c);
    if (changeable) p.writeUInt16BE(0xffff, 6);
    else p.writeUInt16BE(s.pews, 6);
    return p;
  }
  if (code === 0x24) {
    // IBM vendor-specific control: no vendor options are on (encryption stays off here).
    return page0(code, 0x06);
  }
  if (code === 0x25) {
    const p = page0(code, 0x1e);
    if (changeable) p[8] = 0x0c;
    else p[8] = s.rwControl;
    return p;
  }
  throw new Error(`no mode page ${code.toString(16)}h/${subpage.toString(16)}h`);
}

/** Whether a MODE SELECT page is one of these; the caller applies it with selectExtraPage. */
export function isExtraPage(p: SelectedPage): boolean {
  const subpage = (p.data[0]! & SPF) !== 0 ? p.data[1]! : 0;
  return EXTRA_PAGES.some(([c, s]) => c === p.code && s === subpage);
}

/**
 * Takes the host's values from a MODE SELECT page. Logical block protection accepts the methods
 * the generation has (Reed-Solomon CRC from LTO-5, CRC32C from LTO-7) with 4 bytes of
 * protection information, or none.
 */
export function selectExtraPage(p: SelectedPage, next: ExtraModeState, gen: number): void {
  const d = p.data;
  if (p.code === 0x0a) {
    if (d.length < 7) throw new ScsiError(Sense.invalidFieldInParameterList(p.offset + 2));
    const method = d[4]!;
    const allowed = [0, ...(gen >= 5 ? [LBP_RS_CRC] : []), ...(gen >= 7 ? [LBP_CRC32C] : [])];
    if (!allowed.includes(method)) throw new ScsiError(Sense.invalidFieldInParameterList(p.offset + 4));
    const length = d[5]! & 0x3f;
    if (method !== 0 && length !== 4) throw new ScsiError(Sense.invalidFieldInParameterList(p.offset + 5));
    next.lbpMethod = method;
    next.lbpLength = method === 0 ? 0 : length;
    next.lbpFlags = method === 0 ? 0 : d[6]! & 0xe0;
    return;
  }
  if (p.code === 0x10) {
    if (d.length < 8) throw new ScsiError(Sense.invalidFieldInParameterList(p.offset + 2));
    next.pews = d.readUInt16BE(6);
    return;
  }
  if (p.code === 0x25) {
    if (d.length >= 9) next.rwControl = d[8]! & 0x0c;
  }
}
