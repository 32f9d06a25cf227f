import { counterValue, logParameter } from '../scsi/log-parameters.js';
import { Sense, ScsiError } from '../scsi/sense.js';

/** IBM LTO log page 37h, performance characteristics. */
export const PERFORMANCE_PAGE = 0x37;
/** Subpage: scope 01b (values of this mount), level 10b (advanced counters), group 4 (capacity). */
const MOUNT_ADVANCED_CAPACITY = 0x64;
const SPF = 0x40;

/** Cartridge condition (media efficiency) of subpage 0, in percent: 100 is a cartridge in full health. */
const CARTRIDGE_CONDITION = 0x0001;
/** Active capacity loss while writing (subpage 64h), a 16.16 fixed-point fraction. */
const ACTIVE_CQ_LOSS_WRITE = 0x7113;

function page(subpage: number, parameters: Buffer[]): Buffer {
  const body = Buffer.concat(parameters);
  const head = Buffer.alloc(4);
  head[0] = PERFORMANCE_PAGE | (subpage !== 0 ? SPF : 0);
  head[1] = subpage;
  head.writeUInt16BE(body.length, 2);
  return Buffer.concat([head, body]);
}

/**
 * Page 37h as IBM drives report it, with the parameters the LTFS reference implementation reads:
 * the cartridge condition behind its `cartridgeHealth` figures (subpage 0), and the active
 * capacity loss while writing behind the `ltfs.vendor.IBM.mediaCQsLossRate` attribute (subpage
 * 64h). An image neither wears nor loses capacity to rewritten data sets: full health, no loss.
 */
export function performancePage(subpage: number): Buffer {
  if (subpage === 0) return page(0, [logParameter(CARTRIDGE_CONDITION, counterValue(100, 1))]);
  if (subpage === MOUNT_ADVANCED_CAPACITY) {
    return page(subpage, [logParameter(ACTIVE_CQ_LOSS_WRITE, counterValue(0, 4))]);
  }
  throw new ScsiError(Sense.invalidFieldInCdb(3, 7));
}
