import type { TargetLun } from '@vtl/api';
import type { EmuLibrary } from '@vtl/emulator';
import { TCMU_HBA, backstoreName } from './lio-objects.js';

/** One row of the LUN table with the backstore that carries it. */
export interface LunPlan extends TargetLun {
  /** TCMU backstore (configfs) name. */
  name: string;
  /** The handler's dev_config: which emulator device the backstore reaches. */
  config: string;
}

/**
 * The LUN table every port presents (§2.2), in the emulator's own order (emulator
 * `lunLayout`): libraries by ascending id, each its changer then its drives. So an FC host
 * and an iSCSI host see a library's devices under the same LUN numbers.
 */
export function lunTable(libraries: readonly EmuLibrary[]): LunPlan[] {
  const out: LunPlan[] = [];
  let next = 0;
  const row = (library: number, name: string, device: string): LunPlan => ({
    lun: next++,
    library,
    name,
    backstore: `${TCMU_HBA.replace(/^target\//, '')}/${name}`,
    device,
    config: `vtl/${device}`,
  });
  for (const lib of [...libraries].sort((a, b) => a.id - b.id)) {
    out.push(row(lib.id, backstoreName(lib.id, 'changer'), lib.changer));
    for (const d of [...lib.drives].sort((a, b) => a.index - b.index))
      out.push(row(lib.id, backstoreName(lib.id, 'drive', d.index), d.device));
  }
  return out;
}
