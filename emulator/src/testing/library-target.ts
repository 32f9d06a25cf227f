import { join } from 'node:path';
import { pino } from 'pino';
import type { EmulatorConfig, EmulatorLibraryConfig, EmuEvent } from '../control/protocol.js';
import { DataPlane } from '../dataplane.js';
import { buildDataPlaneLuns, type DataPlaneLuns } from '../dataplane-luns.js';
import { cartridgeDir } from '../media/layout.js';
import { mintCartridge } from '../media/mint.js';
import { makeStub } from '../media/image.js';
import { type IscsiTarget, startIscsiTarget } from '../transport/iscsi/target.js';
import { makeTempDir } from '../util/temp-dir.js';
import { ScsiHost } from './scsi-host.js';

export const LIBRARY_TARGET = 'iqn.2025-01.io.vtl.test:library';

export interface LibrarySpec {
  id: number;
  product?: string;
  driveProduct?: string;
  generation?: number;
  numSlots?: number;
  numIe?: number;
  drives?: number;
}

/** A data plane served over a real iSCSI target on 127.0.0.1, on a temp media dir. */
export interface LibraryTarget {
  dp: DataPlane;
  devices: DataPlaneLuns;
  target: IscsiTarget;
  events: EmuEvent[];
  dir: string;
  /** Mints a labelled cartridge into a storage slot (any generation; small capacity for EW tests). */
  mint(
    library: number,
    label: string,
    slot: number,
    opts?: { generation?: number; capacityBytes?: number; worm?: boolean },
  ): Promise<void>;
  /** Evicts a cartridge's data, leaving the labelled stub. */
  evict(library: number, label: string): Promise<void>;
  /** A logged-in host; each name is its own I_T nexus. */
  host(name?: string): Promise<ScsiHost>;
  stop(): Promise<void>;
}

export function libraryConfig(spec: LibrarySpec, mediaRoot: string): EmulatorLibraryConfig {
  const gen = spec.generation ?? 8;
  const drives = spec.drives ?? 2;
  return {
    id: spec.id,
    name: `lib${spec.id}`,
    serial: `LIB${String(spec.id).padStart(4, '0')}X1`,
    product: spec.product ?? '3573-TL',
    vendor: 'IBM',
    drive_product: spec.driveProduct ?? `ULT3580-TD${gen === 10 ? 'A' : gen}`,
    drive_serials: Array.from(
      { length: drives },
      (_, i) => `10${String(spec.id).padStart(2, '0')}00000${i + 1}`,
    ),
    num_slots: spec.numSlots ?? 8,
    num_ie: spec.numIe ?? 2,
    media_dir: join(mediaRoot, `lib${spec.id}`),
    generation: gen,
  };
}

/** `mediaRoot` puts the libraries' media on another filesystem (a small one, to fill it up). */
export async function startLibraryTarget(
  specs: LibrarySpec[] = [{ id: 1 }],
  opts: { mediaRoot?: string } = {},
): Promise<LibraryTarget> {
  const tmp = await makeTempDir('vtl-scsi-');
  const config: EmulatorConfig = {
    node: 'test-node',
    generation: 1,
    socket: join(tmp.path, 'emulator.sock'),
    iscsi: { bind: '127.0.0.1', port: 0, open: true, allowed_initiators: [] },
    libraries: specs.map((s) => libraryConfig(s, opts.mediaRoot ?? tmp.path)),
  };
  const logger = pino({ level: 'silent' });
  const dp = await DataPlane.open(config, logger);
  const events: EmuEvent[] = [];
  dp.bus.subscribe((e) => events.push(e));
  const devices = await buildDataPlaneLuns(dp, { idleAfterMs: 50 });
  const target = await startIscsiTarget({
    bind: '127.0.0.1',
    port: 0,
    targetName: LIBRARY_TARGET,
    luns: devices.luns,
    open: true,
  });
  const hosts: ScsiHost[] = [];
  let hostCount = 0;
  return {
    dp,
    devices,
    target,
    events,
    dir: tmp.path,
    mint: async (library, label, slot, opts = {}) => {
      const lib = dp.library(library);
      await mintCartridge({
        mediaDir: lib.config.media_dir,
        label,
        generation: opts.generation ?? lib.config.generation,
        ...(opts.capacityBytes ? { capacityBytes: opts.capacityBytes } : {}),
        ...(opts.worm ? { worm: true } : {}),
      });
      await lib.inventory.place(label, slot);
    },
    evict: (library, label) => makeStub(cartridgeDir(dp.library(library).config.media_dir, label)),
    host: async (name) => {
      const h = await ScsiHost.login(
        target.port,
        LIBRARY_TARGET,
        name ?? `iqn.2025-01.io.vtl.test:host${++hostCount}`,
      );
      hosts.push(h);
      return h;
    },
    stop: async () => {
      for (const h of hosts) await h.close();
      await target.stop();
      await devices.close();
      await tmp.cleanup();
    },
  };
}

/**
 * One library of LTO `generation` with `label` minted into slot 1 and loaded in its first drive
 * (LUN 1), and a host whose unit attentions on that drive are cleared.
 */
export async function startWithCartridge(
  label: string,
  generation = 8,
): Promise<{ target: LibraryTarget; host: ScsiHost }> {
  const target = await startLibraryTarget([{ id: 1, generation }]);
  await target.mint(1, label, 1, { generation });
  const host = await target.host();
  await host.clearUnitAttentions(1);
  await target.dp.library(1).inventory.load(0, label);
  await host.clearUnitAttentions(1);
  return { target, host };
}
