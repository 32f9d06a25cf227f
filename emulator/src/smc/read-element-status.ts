import { readUInt24BE, requireZeroBits, truncateToAllocation, writeUInt24BE } from '../scsi/cdb.js';
import { SenseKey } from '../scsi/constants.js';
import type { CommandContext } from '../scsi/dispatch.js';
import { good } from '../scsi/result.js';
import { Sense, ScsiError } from '../scsi/sense.js';
import type { ScsiResult } from '../scsi/types.js';
import { asciiField } from '../media/mam.js';
import { ElementType, type SmcElement } from './element-map.js';
import type { MediaChanger } from './media-changer.js';

/** INVALID ELEMENT ADDRESS (SMC-3): no element at (or from) the address given. */
export const INVALID_ELEMENT_ADDRESS = [0x21, 0x01] as const;
export const invalidElementAddress = () =>
  new ScsiError(Sense.of(SenseKey.ILLEGAL_REQUEST, INVALID_ELEMENT_ADDRESS));

const VOLUME_TAG_LENGTH = 36;
const IDENTIFIER_HEADER = 4;
/** Designator header values of a T10 vendor ID in ASCII (SPC-4 7.8.6). */
const CODE_SET_ASCII = 0x02;
const TYPE_T10_VENDOR_ID = 0x01;
/** Medium type "data medium" in byte 9 of a full element. */
const DATA_MEDIUM = 0x01;

const Flag = {
  FULL: 0x01,
  IMPEXP: 0x02,
  ACCESS: 0x08,
  EX_ENAB: 0x10,
  IN_ENAB: 0x20,
  SVALID: 0x80,
} as const;

interface ReportOptions {
  voltag: boolean;
  dvcid: boolean;
}

/** The identifier a drive element carries with DVCID: the drive's own T10 vendor ID. */
function identifierOf(changer: MediaChanger, e: SmcElement): Buffer {
  if (e.type !== ElementType.DATA_TRANSFER || !e.ref) return Buffer.alloc(0);
  return changer.drives[e.ref.num]?.deviceIdentifier ?? Buffer.alloc(0);
}

function descriptor(changer: MediaChanger, e: SmcElement, opts: ReportOptions, idLength: number): Buffer {
  const length = 12 + (opts.voltag ? VOLUME_TAG_LENGTH : 0) + (opts.dvcid ? IDENTIFIER_HEADER + idLength : 0);
  const out = Buffer.alloc(length);
  out.writeUInt16BE(e.address, 0);
  const label = e.ref ? changer.inventory.labelAt(e.ref) : '';
  const full = label !== '' ? Flag.FULL : 0;
  switch (e.type) {
    case ElementType.MEDIUM_TRANSPORT:
      out[2] = full;
      break;
    case ElementType.STORAGE:
      out[2] = Flag.ACCESS | full;
      break;
    case ElementType.IMPORT_EXPORT:
      // Anything in the station was put there by an operator (an import), never by the picker.
      out[2] = Flag.IN_ENAB | Flag.EX_ENAB | Flag.ACCESS | (full ? Flag.IMPEXP : 0) | full;
      break;
    case ElementType.DATA_TRANSFER: {
      const prevented = e.ref ? changer.drives[e.ref.num]?.removalPrevented : false;
      out[2] = (prevented ? 0 : Flag.ACCESS) | full;
      break;
    }
  }
  if (full) {
    const sourceRef = e.ref?.kind === 'drive' ? changer.inventory.sourceOf(e.ref.num) : undefined;
    out[9] = (sourceRef ? Flag.SVALID : 0) | DATA_MEDIUM;
    if (sourceRef) out.writeUInt16BE(changer.elements.addressOf(sourceRef), 10);
  }
  let at = 12;
  if (opts.voltag) {
    // Primary volume tag: 32 bytes of barcode, 2 reserved, 2 volume sequence number.
    if (full) asciiField(label, 32).copy(out, at);
    at += VOLUME_TAG_LENGTH;
  }
  if (opts.dvcid) {
    const id = identifierOf(changer, e);
    out[at] = CODE_SET_ASCII;
    out[at + 1] = TYPE_T10_VENDOR_ID;
    out[at + 3] = id.length > 0 ? idLength : 0;
    if (id.length > 0) asciiField(id.toString('ascii'), idLength).copy(out, at + IDENTIFIER_HEADER);
  }
  return out;
}

/** One element status page: a run of elements of one type, all descriptors the same length. */
function statusPage(changer: MediaChanger, run: SmcElement[], opts: ReportOptions): Buffer {
  const idLength = Math.max(0, ...run.map((e) => identifierOf(changer, e).length));
  const descriptors = run.map((e) => descriptor(changer, e, opts, idLength));
  const head = Buffer.alloc(8);
  head[0] = run[0]!.type;
  head[1] = opts.voltag ? 0x80 : 0;
  head.writeUInt16BE(descriptors[0]!.length, 2);
  const body = Buffer.concat(descriptors);
  writeUInt24BE(head, body.length, 5);
  return Buffer.concat([head, body]);
}

/**
 * READ ELEMENT STATUS (SMC-3 6.11): the picker, I/E slots, drives and slots from `start`, with
 * barcodes (VOLTAG) and drive identifiers (DVCID) on request.
 */
export function readElementStatus(changer: MediaChanger, ctx: CommandContext): ScsiResult {
  const { cdb } = ctx;
  requireZeroBits(cdb, 1, 0xe0);
  requireZeroBits(cdb, 6, 0xfc);
  const type = cdb[1]! & 0x0f;
  if (type > ElementType.DATA_TRANSFER) throw new ScsiError(Sense.invalidFieldInCdb(1, 3));
  const opts: ReportOptions = { voltag: (cdb[1]! & 0x10) !== 0, dvcid: (cdb[6]! & 0x01) !== 0 };
  const start = cdb.readUInt16BE(2);
  const wanted = cdb.readUInt16BE(4);
  const allocation = readUInt24BE(cdb, 7);
  const candidates = changer.elements.from(type, start);
  const hasAny = type === ElementType.ALL || changer.elements.count(type) > 0;
  if (candidates.length === 0 && hasAny) throw invalidElementAddress();
  const elements = candidates.slice(0, wanted);
  const pages: Buffer[] = [];
  for (let i = 0; i < elements.length;) {
    let j = i + 1;
    while (j < elements.length && elements[j]!.type === elements[i]!.type) j++;
    pages.push(statusPage(changer, elements.slice(i, j), opts));
    i = j;
  }
  const body = Buffer.concat(pages);
  const head = Buffer.alloc(8);
  head.writeUInt16BE(elements[0]?.address ?? 0, 0);
  head.writeUInt16BE(elements.length, 2);
  writeUInt24BE(head, body.length, 5);
  return good(truncateToAllocation(Buffer.concat([head, body]), allocation));
}
