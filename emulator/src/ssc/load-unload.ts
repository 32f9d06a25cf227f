import { requireZeroBits } from '../scsi/cdb.js';
import type { CommandContext } from '../scsi/dispatch.js';
import { good } from '../scsi/result.js';
import { Sense, ScsiError } from '../scsi/sense.js';
import type { ScsiResult } from '../scsi/types.js';
import type { TapeDrive } from './tape-drive.js';
import { TapeAlertFlag } from './tape-alert.js';
import { TapeSense, mediaErrorToScsi } from './tape-sense.js';

const LOAD = 0x01;
const EOT = 0x04;

/**
 * LOAD UNLOAD (SSC-4 7.2). UNLOAD syncs, rewinds and presents the cartridge to the changer;
 * LOAD threads an ejected cartridge again or rewinds a threaded one.
 */
export async function loadUnload(drive: TapeDrive, ctx: CommandContext): Promise<ScsiResult> {
  const { cdb } = ctx;
  requireZeroBits(cdb, 1, 0xfe);
  // HOLD (3) is accepted: the cartridge memory is readable in either state here.
  requireZeroBits(cdb, 4, 0xf0);
  const load = (cdb[4]! & LOAD) !== 0;
  if (load && (cdb[4]! & EOT) !== 0) throw new ScsiError(Sense.invalidFieldInCdb(4, 2));
  const m = drive.medium;
  if (m.state === 'empty') throw new ScsiError(Sense.mediumNotPresent());
  if (m.state === 'loading') throw new ScsiError(Sense.notReady([0x04, 0x01]));
  if (load) {
    if (m.state === 'ejected') await drive.reload();
    else if (m.state === 'mounted') {
      await m.tape.rewind().catch((err: unknown) => mediaErrorToScsi(err));
    }
    drive.idleNow();
    return good();
  }
  if (drive.removalPrevented) {
    drive.alerts.raise(TapeAlertFlag.NO_REMOVAL);
    throw new ScsiError(TapeSense.removalPrevented());
  }
  await drive.eject().catch((err: unknown) => mediaErrorToScsi(err));
  drive.idleNow();
  return good();
}

/** PREVENT ALLOW MEDIUM REMOVAL: held per nexus; any holder blocks UNLOAD and the changer. */
export function preventAllow(drive: TapeDrive, ctx: CommandContext): ScsiResult {
  const { cdb, nexus } = ctx;
  requireZeroBits(cdb, 4, 0xfe);
  if ((cdb[4]! & 0x01) !== 0) drive.preventing.add(nexus);
  else drive.preventing.delete(nexus);
  return good();
}
