import { truncateToAllocation } from '../scsi/cdb.js';
import type { CommandContext } from '../scsi/dispatch.js';
import { parseLogSense } from '../scsi/log-parameters.js';
import { good } from '../scsi/result.js';
import { Sense, ScsiError } from '../scsi/sense.js';
import type { ScsiResult } from '../scsi/types.js';
import type { MediaChanger } from './media-changer.js';

const SUPPORTED_PAGES = 0x00;
const TAPE_ALERT = 0x2e;

/**
 * LOG SENSE of the changer: the supported-pages list and the library's TapeAlert page, which
 * backup software polls on the changer as well as on the drives. A virtual robot never jams,
 * so its flags stay clear.
 */
export function changerLogSense(changer: MediaChanger, ctx: CommandContext): ScsiResult {
  const req = parseLogSense(ctx.cdb);
  let data: Buffer;
  if (req.page === SUPPORTED_PAGES) data = Buffer.from([0, 0, 0, 2, SUPPORTED_PAGES, TAPE_ALERT]);
  else if (req.page === TAPE_ALERT) data = changer.alerts.takeLogPage();
  else throw new ScsiError(Sense.invalidFieldInCdb(2, 5));
  return good(truncateToAllocation(data, req.allocation));
}
