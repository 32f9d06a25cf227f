import { lunOrder, type TargetLun } from '@vtl/api';
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
 * The LUN table every port presents (§2.2), in the one LUN order of @vtl/api (`lunOrder`, which
 * the emulator numbers its devices by too): so an FC host and an iSCSI host see a library's
 * devices under the same LUN numbers.
 */
export function lunTable(libraries: readonly EmuLibrary[]): LunPlan[] {
  const byId = new Map(libraries.map((lib) => [lib.id, lib]));
  return lunOrder(libraries.map((lib) => ({ id: lib.id, drives: lib.drives.map((d) => d.index) }))).map(
    (slot) => {
      const lib = byId.get(slot.library)!;
      const name =
        slot.kind === 'changer'
          ? backstoreName(lib.id, 'changer')
          : backstoreName(lib.id, 'drive', slot.drive);
      const device =
        slot.kind === 'changer' ? lib.changer : lib.drives.find((d) => d.index === slot.drive)!.device;
      return {
        lun: slot.lun,
        library: lib.id,
        name,
        backstore: `${TCMU_HBA.replace(/^target\//, '')}/${name}`,
        device,
        config: `vtl/${device}`,
      };
    },
  );
}
