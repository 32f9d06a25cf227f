import { Job, PoolSpec, StorageStatus, isJobActive, keys } from '@vtl/api';
import type { Store } from '@vtl/store';
import type { Logger } from 'pino';
import { DedupRunner } from './dedup-pass.js';

/**
 * The node's dedup runner, tied to the store: busy cartridges are those in a drive (from the
 * emulator) and those under an active job of this node; the pools are this node's pools on the
 * storage; the last run is carried on from the storage status the node published before.
 */
export async function startDedupRunner(opts: {
  store: Store;
  node: string;
  mountpoint: string;
  loadedLabels: () => Set<string>;
  /** Bytes (or blocks) the node's drives have moved for hosts: the pass pauses while it grows. */
  hostBytes: () => number;
  onChange: () => void;
  logger: Logger;
}): Promise<DedupRunner> {
  const { store, node } = opts;
  const previous = (await store.get(keys.storageStatus.one(node), StorageStatus))?.value.dedup;
  const runner = new DedupRunner({
    mountpoint: opts.mountpoint,
    logger: opts.logger,
    previous,
    onChange: opts.onChange,
    hostBytes: opts.hostBytes,
    busyLabels: async () => {
      const busy = opts.loadedLabels();
      for (const { value } of (await store.list(keys.jobs.prefix, Job)).items)
        if (value.node === node && isJobActive(value.state)) busy.add(value.label);
      return busy;
    },
    poolPaths: async () =>
      (await store.list(keys.pools.prefix, PoolSpec)).items
        .map((i) => i.value)
        .filter((p) => p.node === node && p.engine === 'btrfs')
        .map((p) => p.path),
  });
  runner.start();
  return runner;
}
