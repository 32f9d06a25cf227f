import { requireZeroBits } from '../scsi/cdb.js';
import { SenseKey } from '../scsi/constants.js';
import type { CommandContext } from '../scsi/dispatch.js';
import { good } from '../scsi/result.js';
import { Sense, ScsiError } from '../scsi/sense.js';
import type { ScsiResult } from '../scsi/types.js';
import type { ElementRef } from '../inventory/elements.js';
import { TapeSense } from '../ssc/tape-sense.js';
import { ElementType } from './element-map.js';
import type { MediaChanger } from './media-changer.js';
import { invalidElementAddress } from './read-element-status.js';

const DESTINATION_FULL = [0x3b, 0x0d] as const;
const SOURCE_EMPTY = [0x3b, 0x0e] as const;

/** A slot, I/E slot or drive at this address; the picker and unknown addresses are invalid. */
function cellAt(changer: MediaChanger, address: number): ElementRef {
  const e = changer.elements.resolve(address);
  if (!e?.ref) throw invalidElementAddress();
  return e.ref;
}

/** The transport address may be 0 ("the default picker") or the picker's own. */
function checkTransport(changer: MediaChanger, address: number): void {
  if (address !== 0 && address !== changer.elements.first(ElementType.MEDIUM_TRANSPORT)) {
    throw invalidElementAddress();
  }
}

/**
 * MOVE MEDIUM (SMC-3 6.6). Takes the same path as the API's load and unload, so the move is
 * persisted, recorded as a `cart_moved` event, and the drive threads or releases the cartridge.
 */
export async function moveMedium(changer: MediaChanger, ctx: CommandContext): Promise<ScsiResult> {
  const { cdb, nexus } = ctx;
  // INVERT: LTO cartridges go in one way only.
  requireZeroBits(cdb, 10, 0xff);
  checkTransport(changer, cdb.readUInt16BE(2));
  const from = cellAt(changer, cdb.readUInt16BE(4));
  const to = cellAt(changer, cdb.readUInt16BE(6));
  const inventory = changer.inventory;
  if (!inventory.labelAt(from)) throw new ScsiError(Sense.of(SenseKey.ILLEGAL_REQUEST, SOURCE_EMPTY));
  if (inventory.labelAt(to)) throw new ScsiError(Sense.of(SenseKey.ILLEGAL_REQUEST, DESTINATION_FULL));
  if (from.kind === 'drive') {
    const drive = changer.drives[from.num];
    if (drive?.removalPrevented) throw new ScsiError(TapeSense.removalPrevented());
    // The host that moves media out is done with the drive, whatever its idle timer says.
    drive?.idleNow();
  }
  await inventory.move(from, to, 'host');
  changer.movedBy(nexus);
  return good();
}

/** INITIALIZE ELEMENT STATUS (07h): the inventory is always current, there is nothing to scan. */
export function initializeElementStatus(_changer: MediaChanger, ctx: CommandContext): ScsiResult {
  requireZeroBits(ctx.cdb, 1, 0xe0);
  return good();
}

/** INITIALIZE ELEMENT STATUS WITH RANGE (37h): checks the range names elements, then as 07h. */
export function initializeElementStatusWithRange(changer: MediaChanger, ctx: CommandContext): ScsiResult {
  const { cdb } = ctx;
  requireZeroBits(cdb, 1, 0xfc);
  const ranged = (cdb[1]! & 0x01) !== 0;
  if (ranged && changer.elements.from(ElementType.ALL, cdb.readUInt16BE(2)).length === 0) {
    throw invalidElementAddress();
  }
  return good();
}

/** POSITION TO ELEMENT: the picker is always where it needs to be. */
export function positionToElement(changer: MediaChanger, ctx: CommandContext): ScsiResult {
  const { cdb } = ctx;
  requireZeroBits(cdb, 8, 0xff);
  checkTransport(changer, cdb.readUInt16BE(2));
  cellAt(changer, cdb.readUInt16BE(4));
  return good();
}

/** PREVENT ALLOW MEDIUM REMOVAL on the changer: locks the I/E station for this nexus. */
export function changerPreventAllow(changer: MediaChanger, ctx: CommandContext): ScsiResult {
  const { cdb, nexus } = ctx;
  requireZeroBits(cdb, 4, 0xfe);
  if ((cdb[4]! & 0x01) !== 0) changer.preventing.add(nexus);
  else changer.preventing.delete(nexus);
  return good();
}
