import type { LibrarySpec, PoolSpec } from '@vtl/api';
import type { EmuLibrary } from '@vtl/emulator';

/**
 * The libraries of `node` whose cartridges live on its shared storage: those whose home pool
 * is one of its btrfs pools. Libraries on directory pools are elsewhere on the machine.
 */
export function librariesOnStorage(node: string, libraries: LibrarySpec[], pools: PoolSpec[]): Set<number> {
  const onStorage = new Set(pools.filter((p) => p.node === node && p.engine === 'btrfs').map((p) => p.id));
  return new Set(libraries.filter((l) => onStorage.has(l.home_pool)).map((l) => l.id));
}

/**
 * What the drives of the libraries in `onStorage` have moved for hosts so far: iSCSI bytes both
 * ways, and blocks (which count an FC host's traffic too). It grows while one of them streams,
 * which is what pauses a dedup pass (PassPacer); drives of other libraries leave it alone.
 */
export function storageHostBytes(libraries: readonly EmuLibrary[], onStorage: ReadonlySet<number>): number {
  let sum = 0;
  for (const lib of libraries) {
    if (!onStorage.has(lib.id)) continue;
    for (const d of lib.drives)
      sum += (d.iscsi_bytes_read ?? 0) + (d.iscsi_bytes_written ?? 0) + d.blocks_read + d.blocks_written;
  }
  return sum;
}
