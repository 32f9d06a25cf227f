import { PeripheralType } from '../../../scsi/constants.js';
import { ScsiDeviceBase } from '../../../scsi/device-base.js';
import { good } from '../../../scsi/result.js';
import type { ScsiDevice } from '../../../scsi/types.js';
import { RamDisk } from '../../../testing/ram-disk.js';
import { type IscsiTarget, type IscsiTargetOptions, startIscsiTarget } from '../target.js';

export const TEST_TARGET = 'iqn.2024-01.org.vtl.test:library';
export const TEST_INITIATOR = 'iqn.2024-01.org.vtl.test:host1';
/** A vendor opcode of the test changer that holds the command until it is aborted. */
export const HOLD_OPCODE = 0xc1;

/** A medium-changer-typed LUN that only knows SPC plus a command that waits for abort. */
export class HoldingDevice extends ScsiDeviceBase {
  held = 0;

  constructor() {
    super(PeripheralType.MEDIUM_CHANGER, {
      vendor: 'IBM',
      product: '03584L32',
      revision: '0100',
      serial: '0000013100410401',
      removable: true,
    });
    this.table.set(HOLD_OPCODE, {
      name: 'HOLD (test)',
      cdbLength: 6,
      // Concurrent so a held command does not block INQUIRY/TUR behind it in the serial queue.
      concurrent: true,
      handler: ({ cmd }) =>
        new Promise((resolve) => {
          this.held++;
          cmd.signal?.addEventListener('abort', () => resolve(good()));
        }),
    });
  }
}

export interface TestTarget {
  target: IscsiTarget;
  disk: RamDisk;
  changer: HoldingDevice;
  luns: Map<number, ScsiDevice>;
}

/** A target with a RAM disk at LUN 0 and the holding changer at LUN 1, open unless told otherwise. */
export async function startTestTarget(opts: Partial<IscsiTargetOptions> = {}): Promise<TestTarget> {
  const disk = new RamDisk(512, 16384);
  const changer = new HoldingDevice();
  const luns = new Map<number, ScsiDevice>([
    [0, disk],
    [1, changer],
  ]);
  const target = await startIscsiTarget({
    bind: '127.0.0.1',
    port: 0,
    targetName: TEST_TARGET,
    luns,
    ...(opts.authorize ? {} : { open: true }),
    ...opts,
  });
  return { target, disk, changer, luns };
}
