import { Job, LibrarySpec, PoolSpec, StorageStatus, isJobActive, keys } from '@vtl/api';
import type { EmuLibrary } from '@vtl/emulator';
import type { Store } from '@vtl/store';
import type { Logger } from 'pino';
import { DedupRunner } from './dedup-pass.js';
import { librariesOnStorage, storageHostBytes } from './storage-host-io.js';

/**
 * Which libraries live on the storage is read from the store at most this often while a pass
 * is paced (every PACER_SAMPLE_MS): libraries come and go far more slowly.
 */
const STORAGE_LIBRARIES_TTL_MS = 10_000;

/**
 * The node's dedup runner, tied to the store: busy cartridges are those in a drive (from the
 * emulator) and those under an active job of this node; the pools are this node's pools on the
 * storage; the pass is paced by the drives of the libraries on those pools alone; the last run
 * is carried on from the storage status the node published before.
 */
export async function startDedupRunner(opts: {
  store: Store;
  node: string;
  mountpoint: string;
  loadedLabels: () => Set<string>;
  /** The emulator's libraries as last seen, with their drives' host I/O counters. */
  libraries: () => readonly EmuLibrary[];
  /** PassPacer's bound on a pause (VTL_DEDUP_MAX_PAUSE_MINUTES); undefined: its default. */
  maxPauseMs?: number;
  onChange: () => void;
  logger: Logger;
}): Promise<DedupRunner> {
  const { store, node } = opts;
  const previous = (await store.get(keys.storageStatus.one(node), StorageStatus))?.value.dedup;
  const btrfsPools = async () =>
    (await store.list(keys.pools.prefix, PoolSpec)).items
      .map((i) => i.value)
      .filter((p) => p.node === node && p.engine === 'btrfs');
  let onStorage: { ids: Set<number>; at: number } | undefined;
  const storageLibraries = async () => {
    if (!onStorage || Date.now() - onStorage.at > STORAGE_LIBRARIES_TTL_MS) {
      const libraries = (await store.list(keys.libraries.prefix, LibrarySpec)).items.map((i) => i.value);
      onStorage = { ids: librariesOnStorage(node, libraries, await btrfsPools()), at: Date.now() };
    }
    return onStorage.ids;
  };
  const runner = new DedupRunner({
    mountpoint: opts.mountpoint,
    logger: opts.logger,
    previous,
    onChange: opts.onChange,
    hostBytes: async () => storageHostBytes(opts.libraries(), await storageLibraries()),
    maxPauseMs: opts.maxPauseMs,
    busyLabels: async () => {
      const busy = opts.loadedLabels();
      for (const { value } of (await store.list(keys.jobs.prefix, Job)).items)
        if (value.node === node && isJobActive(value.state)) busy.add(value.label);
      return busy;
    },
    poolPaths: async () => (await btrfsPools()).map((p) => p.path),
  });
  runner.start();
  return runner;
}
