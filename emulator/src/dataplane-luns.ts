import type { Logger } from 'pino';
import type { DataPlane, LibraryRuntime } from './dataplane.js';
import type { EmulatorLibraryConfig } from './control/protocol.js';
import type { ScsiDevice } from './scsi/types.js';
import { MediaChanger } from './smc/media-changer.js';
import { TapeDrive } from './ssc/tape-drive.js';

/** One row of the LUN table: which device of which library a LUN is. */
export interface LunAssignment {
  lun: number;
  library: number;
  kind: 'changer' | 'drive';
  /** Drive index (0-based, element address order) for drive LUNs. */
  drive?: number;
  serial: string;
  product: string;
}

/**
 * The LUN table every initiator sees (spec §2.2: one changer LUN plus one LUN per drive, per
 * library, identical on every port). Libraries are taken in ascending id; each takes a
 * consecutive block: its changer first, then its drives in element address order. So LUN 0 is
 * always the changer of the lowest-numbered library (hosts scan from LUN 0, and Linux falls
 * back to a sequential scan that stops at the first hole), and a library's block only moves
 * when a library with a lower id is added or deleted, which the spec makes a restart anyway.
 * Backup software pairs drives with changer elements by serial (DVCID), not by LUN.
 */
export function lunLayout(libraries: readonly EmulatorLibraryConfig[]): LunAssignment[] {
  const out: LunAssignment[] = [];
  let next = 0;
  for (const lib of [...libraries].sort((a, b) => a.id - b.id)) {
    out.push({ lun: next++, library: lib.id, kind: 'changer', serial: lib.serial, product: lib.product });
    lib.drive_serials.forEach((serial, drive) =>
      out.push({ lun: next++, library: lib.id, kind: 'drive', drive, serial, product: lib.drive_product }),
    );
  }
  return out;
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
