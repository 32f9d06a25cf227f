import type { LunMap } from '../scsi/types.js';
import type { TcmuTarget } from './bridge.js';

/** dev_config prefix of the appliance's backstores (the nodeagent's lun-table writes it). */
export const DEV_CONFIG_PREFIX = 'vtl/';

/**
 * Maps a backstore's dev_config (`vtl/<target name>:lun<N>`, the device name the nodeagent's
 * LUN table took from the emulator's status) to LUN N of this emulator. A name for another
 * node's target, or a LUN the table no longer has, is not ours.
 */
export function resolveTcmuConfig(config: string, targetName: string, luns: LunMap): TcmuTarget | undefined {
  const m = /^vtl\/(.+):lun(\d+)$/.exec(config);
  if (!m || m[1] !== targetName) return undefined;
  const lun = Number(m[2]);
  const device = luns.get(lun);
  return device ? { device, lun } : undefined;
}
