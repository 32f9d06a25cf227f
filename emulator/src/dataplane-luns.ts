import type { Logger } from 'pino';
import { lunOrder, type LunSlot } from '@vtl/api/base';
import type { DataPlane, LibraryRuntime } from './dataplane.js';
import type { EmulatorLibraryConfig } from './control/protocol.js';
import type { ScsiDevice } from './scsi/types.js';
import { MediaChanger } from './smc/media-changer.js';
import { TapeDrive } from './ssc/tape-drive.js';

/** One row of the LUN table: which device of which library a LUN is (@vtl/api `lunOrder`). */
export interface LunAssignment extends LunSlot {
  serial: string;
  product: string;
}

/** The LUN table every initiator sees, in the one LUN order of @vtl/api (spec §2.2). */
export function lunLayout(libraries: readonly EmulatorLibraryConfig[]): LunAssignment[] {
  const byId = new Map(libraries.map((lib) => [lib.id, lib]));
  return lunOrder(libraries.map((lib) => ({ id: lib.id, drives: lib.drive_serials.map((_, i) => i) }))).map(
    (slot) => {
      const lib = byId.get(slot.library)!;
      return slot.kind === 'changer'
        ? { ...slot, serial: lib.serial, product: lib.product }
        : { ...slot, serial: lib.drive_serials[slot.drive!]!, product: lib.drive_product };
    },
  );
}

/** The SCSI devices of one library. */
export interface LibraryDevices {
  library: number;
  changer: MediaChanger;
  /** Index order = element address order. */
  drives: TapeDrive[];
}

export interface LunBuildOptions {
  logger?: Logger;
  /** How long after the last READ/WRITE a drive reports idle (default 1 s). */
  idleAfterMs?: number;
}

/**
 * Creates a library's changer and drives and connects them to its inventory: the drives thread
 * and release cartridges through the inventory hooks, and cartridges already in a drive at
 * start-up are threaded now (without a unit attention: every nexus starts with power-on).
 */
export async function createLibraryDevices(
  lib: LibraryRuntime,
  opts: LunBuildOptions = {},
): Promise<LibraryDevices> {
  const { config, inventory } = lib;
  const drives = config.drive_serials.map(
    (serial, index) =>
      new TapeDrive({
        library: config.id,
        index,
        serial,
        product: config.drive_product,
        generation: config.generation,
        mediaDir: config.media_dir,
        activity: inventory,
        logger: opts.logger?.child({ library: config.id, drive: index }),
        idleAfterMs: opts.idleAfterMs,
      }),
  );
  inventory.setHooks({
    mediaLoaded: (drive, label) => drives[drive]!.mediaLoaded(label),
    mediaUnloading: (drive, label) => drives[drive]!.mediaUnloading(label),
  });
  for (const d of inventory.drives()) {
    if (d.loaded) await drives[d.index]?.mediaLoaded(d.loaded, { initial: true });
  }
  const changer = new MediaChanger({
    product: config.product,
    serial: config.serial,
    vendor: config.vendor,
    inventory,
    drives,
    logger: opts.logger?.child({ library: config.id, changer: true }),
  });
  return { library: config.id, changer, drives };
}

/** Every library's devices under the LUN numbers of `lunLayout`. */
export interface DataPlaneLuns {
  luns: Map<number, ScsiDevice>;
  layout: LunAssignment[];
  libraries: Map<number, LibraryDevices>;
  /** Syncs and closes every threaded cartridge; the transport's stop must call it. */
  close(): Promise<void>;
}

/** Builds the LUN map the transport serves for the whole data plane. */
export async function buildDataPlaneLuns(dp: DataPlane, opts: LunBuildOptions = {}): Promise<DataPlaneLuns> {
  const libraries = new Map<number, LibraryDevices>();
  for (const lib of dp.libraries.values()) {
    libraries.set(lib.config.id, await createLibraryDevices(lib, { logger: dp.logger, ...opts }));
  }
  const layout = lunLayout([...dp.libraries.values()].map((l) => l.config));
  const luns = new Map<number, ScsiDevice>();
  for (const row of layout) {
    const devices = libraries.get(row.library)!;
    luns.set(row.lun, row.kind === 'changer' ? devices.changer : devices.drives[row.drive!]!);
  }
  return {
    luns,
    layout,
    libraries,
    close: async () => {
      const failures: unknown[] = [];
      for (const devices of libraries.values()) {
        for (const drive of devices.drives) await drive.close().catch((err: unknown) => failures.push(err));
      }
      if (failures.length > 0) throw failures[0];
    },
  };
}
