import path from 'node:path';
import {
  driveGeneration,
  findDriveModel,
  type DataplaneSpec,
  type LibrarySpec,
  type PoolSpec,
} from '@vtl/api';
import type { EmulatorConfig } from '@vtl/emulator';
import type { NodeagentConfig } from '../config.js';

export const emulatorSocket = (stateDir: string) => path.join(stateDir, 'emulator', 'emulator.sock');

/** What this node's emulator serves: the applied libraries whose pool lives on this node. */
export function emulatorConfig(
  config: NodeagentConfig,
  desired: DataplaneSpec | undefined,
  libraries: LibrarySpec[],
  pools: PoolSpec[],
): EmulatorConfig {
  const mine = new Set(pools.filter((p) => p.node === config.node).map((p) => p.id));
  const served = libraries.filter(
    (l) => !l.deleting && mine.has(l.home_pool) && desired?.libraries.includes(l.id),
  );
  return {
    node: config.node,
    generation: desired?.generation ?? 0,
    socket: emulatorSocket(config.stateDir),
    iscsi: {
      bind: config.bind,
      port: config.iscsiPort,
      open: config.iscsiOpen,
      allowed_initiators: config.iscsiInitiators,
      tcp_congestion: config.iscsiTcpCongestion,
    },
    libraries: served.map((l) => {
      const drive = findDriveModel(l.drive_model);
      return {
        id: l.id,
        name: l.name,
        serial: l.serial,
        product: l.product,
        vendor: l.vendor,
        drive_product: l.drive_model,
        drive_serials: l.drive_serials,
        num_slots: l.num_slots,
        num_ie: l.num_ie,
        media_dir: l.media_dir,
        generation: drive ? driveGeneration(drive) : 0,
      };
    }),
  };
}
