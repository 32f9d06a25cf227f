import { truncateToAllocation } from '../scsi/cdb.js';
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
import { ElementType } from './element-map.js';
import type { MediaChanger } from './media-changer.js';

/** Mode pages of a medium changer (SMC-3 7.3). */
export const ChangerPage = {
  ELEMENT_ADDRESS_ASSIGNMENT: 0x1d,
  TRANSPORT_GEOMETRY: 0x1e,
  DEVICE_CAPABILITIES: 0x1f,
} as const;

const PAGE_ORDER = [
  ChangerPage.ELEMENT_ADDRESS_ASSIGNMENT,
  ChangerPage.TRANSPORT_GEOMETRY,
  ChangerPage.DEVICE_CAPABILITIES,
];

/** Storage capability bits (StorMT, StorST, StorI/E, StorDT) and the per-source move masks. */
const STOR_ST_IE_DT = 0x0e;
const TO_ST_IE_DT = 0x0e;

function modePage(changer: MediaChanger, code: number, changeable: boolean): Buffer {
  const e = changer.elements;
  switch (code) {
    case ChangerPage.ELEMENT_ADDRESS_ASSIGNMENT: {
      const p = Buffer.alloc(20);
      p[0] = code;
      p[1] = 0x12;
      if (changeable) return p;
      const types = [
        ElementType.MEDIUM_TRANSPORT,
        ElementType.STORAGE,
        ElementType.IMPORT_EXPORT,
        ElementType.DATA_TRANSFER,
      ];
      types.forEach((t, i) => {
        p.writeUInt16BE(e.count(t) > 0 ? e.first(t) : 0, 2 + 4 * i);
        p.writeUInt16BE(e.count(t), 4 + 4 * i);
      });
      return p;
    }
    case ChangerPage.TRANSPORT_GEOMETRY:
      // One picker, member 0 of its set, no rotation (cartridges are never flipped).
      return Buffer.from([code, 0x02, 0x00, 0x00]);
    case ChangerPage.DEVICE_CAPABILITIES: {
      const p = Buffer.alloc(20);
      p[0] = code;
      p[1] = 0x12;
      if (changeable) return p;
      p[2] = STOR_ST_IE_DT;
      // Move capabilities from MT, ST, I/E and DT: anywhere but to the picker itself.
      p[4] = 0;
      p[5] = TO_ST_IE_DT;
      p[6] = TO_ST_IE_DT;
      p[7] = TO_ST_IE_DT;
      return p;
    }
    default:
      throw new Error(`no changer mode page 0x${code.toString(16)}`);
  }
}

/** MODE SENSE(6)/(10) of the changer: no block descriptors, SMC pages only. */
export function changerModeSense(changer: MediaChanger, ctx: CommandContext): ScsiResult {
  const req = parseModeSense(ctx.cdb);
  if (req.subpage !== 0 && req.subpage !== 0xff) throw new ScsiError(Sense.invalidFieldInCdb(3));
  let codes: readonly number[];
  if (req.pageCode === ALL_PAGES) codes = PAGE_ORDER;
  else if ((PAGE_ORDER as readonly number[]).includes(req.pageCode)) codes = [req.pageCode];
  else throw new ScsiError(Sense.invalidFieldInCdb(2, 5));
  const changeable = req.pageControl === PageControl.CHANGEABLE;
  const pages = Buffer.concat(codes.map((c) => modePage(changer, c, changeable)));
  const data = buildModeData(req.ten, { mediumType: 0, deviceSpecific: 0 }, Buffer.alloc(0), pages);
  return good(truncateToAllocation(data, req.allocation));
}

/** MODE SELECT on the changer: the SMC pages are fixed by the hardware; anything else is refused. */
export function changerModeSelect(_changer: MediaChanger, ctx: CommandContext): ScsiResult {
  const { ten, length } = parseModeSelectCdb(ctx.cdb);
  const parsed = parseModeSelectData(ten, (ctx.cmd.dataOut ?? Buffer.alloc(0)).subarray(0, length));
  if (parsed.blockDescriptors.length > 0) throw new ScsiError(Sense.invalidFieldInParameterList(ten ? 6 : 3));
  for (const p of parsed.pages) {
    if (!(PAGE_ORDER as readonly number[]).includes(p.code)) {
      throw new ScsiError(Sense.invalidFieldInParameterList(p.offset, 5));
    }
  }
  return good();
}
