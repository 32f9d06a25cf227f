import fs from 'node:fs/promises';
import path from 'node:path';
import { StorageSpec, StorageStatus, isoNow, keys, type DedupStatus } from '@vtl/api';
import { EventJournal, type Store } from '@vtl/store';
import { startController, watchInto, type ReconcileResult } from '@vtl/reconcile';
import { removeStorage } from '@vtl/domain';
import type { Logger } from 'pino';
import * as btrfs from './btrfs.js';
import { checkNewDevice, deviceFacts, isOurs } from './block-devices.js';

/** Size and allocation are refreshed this often while the storage is up. */
const REFRESH_MS = 30_000;
/** Where the pools' subvolumes live under the mount. */
export const POOLS_DIR = 'pools';

export const idleDedup = (): DedupStatus => ({
  state: 'idle',
  files_total: 0,
  files_done: 0,
  last_started_at: null,
  last_finished_at: null,
  last_result: null,
  last_detail: '',
  next_at: null,
  host_pause_seconds: 0,
  host_pause_overrides: 0,
});

/** Whether a btrfs filesystem is mounted exactly at `mountpoint`. */
export async function mountedAt(mountpoint: string): Promise<boolean> {
  const info = await fs.readFile('/proc/self/mountinfo', 'utf8').catch(() => '');
  return info
    .split('\n')
    .some((l) => l.split(' ')[4] === mountpoint && l.split(' - ')[1]?.startsWith('btrfs '));
}

/** The subvolumes under the pools directory: what pools on the storage still hold. */
export async function poolSubvolumes(mountpoint: string): Promise<string[]> {
  const dir = path.join(mountpoint, POOLS_DIR);
  const names = await fs.readdir(dir).catch(() => [] as string[]);
  return names.map((n) => path.join(dir, n));
}

/**
 * The node's shared storage (docs/storage.md): makes the btrfs filesystem over the named
 * devices, mounts it, adds devices named later, mirrors metadata from two devices, and tears
 * it down on request once no pool is left. Every step looks at what the disks are before it
 * acts (the filesystem label finds the storage again), so a nodeagent killed half way finishes
 * the job on its next pass. Writes the storage status and the storage events.
 */
export async function startStorageReconciler(opts: {
  store: Store;
  node: string;
  mountpoint: string;
  logger: Logger;
  /** The dedup pass's figures, kept by its runner and published with the status. */
  dedup?: () => DedupStatus;
  /** Told after every pass what the storage should be and whether it is mounted. */
  onPass?: (spec: StorageSpec | undefined, mounted: boolean) => void;
}) {
  const { store, node, mountpoint, logger } = opts;
  const journal = new EventJournal(store);
  const key = keys.storage.one(node);
  let last: string | undefined;

  async function publish(status: Omit<StorageStatus, 'node' | 'mountpoint' | 'updated_at' | 'dedup'>) {
    const full: StorageStatus = {
      node,
      mountpoint,
      ...status,
      dedup: opts.dedup?.() ?? idleDedup(),
      updated_at: isoNow(),
    };
    const same = JSON.stringify({ ...full, updated_at: '' });
    if (same === last) return;
    await store.put(keys.storageStatus.one(node), full);
    last = same;
  }

  /** Mounts the storage the devices hold, making it first if none of them carries it. */
  async function ensureMounted(spec: StorageSpec): Promise<boolean> {
    if (await mountedAt(mountpoint)) return false;
    const facts = await Promise.all(spec.devices.map((d) => deviceFacts(d)));
    const ours = facts.find(isOurs);
    let made = false;
    if (!ours) {
      for (const d of spec.devices) await checkNewDevice(d, spec.force.includes(d));
      await btrfs.mkfs(spec.devices, spec.force.length > 0);
      made = true;
      logger.info({ devices: spec.devices }, 'made the shared storage filesystem');
    }
    await fs.mkdir(mountpoint, { recursive: true });
    await btrfs.mount(ours?.real ?? (spec.devices[0] as string), mountpoint);
    await fs.mkdir(path.join(mountpoint, POOLS_DIR), { recursive: true });
    return made;
  }

  /** Adds every named device the mounted filesystem does not span yet. */
  async function ensureDevices(spec: StorageSpec): Promise<string[]> {
    const added: string[] = [];
    const spanned = new Set((await btrfs.members(mountpoint)).devices);
    for (const d of spec.devices) {
      const real = await fs.realpath(d).catch(() => d);
      if (spanned.has(real) || spanned.has(d)) continue;
      await checkNewDevice(d, spec.force.includes(d));
      await btrfs.addDevice(d, mountpoint, spec.force.includes(d));
      added.push(d);
    }
    const count = (await btrfs.members(mountpoint)).devices.length;
    if (count >= 2 && (await btrfs.metadataProfile(mountpoint)) !== 'raid1')
      await btrfs.mirrorMetadata(mountpoint);
    return added;
  }

  async function describe(state: 'ready' | 'deleting', detail: string) {
    const { uuid, devices } = await btrfs.members(mountpoint);
    const { size, used } = await btrfs.usage(mountpoint);
    await publish({
      state,
      detail,
      uuid,
      devices,
      metadata_profile: await btrfs.metadataProfile(mountpoint),
      size_bytes: size,
      alloc_bytes: used,
    });
  }

  /** Unmounts and wipes the storage, once no pool is on it; then the records go. */
  async function teardown(spec: StorageSpec, revision: string): Promise<ReconcileResult> {
    if (await mountedAt(mountpoint)) {
      const left = await poolSubvolumes(mountpoint);
      if (left.length > 0) {
        await describe('deleting', `Waiting for ${left.length} pool subvolume(s) to go: ${left.join(', ')}.`);
        return { requeueAfterMs: 5_000 };
      }
      await btrfs.unmount(mountpoint);
    }
    for (const d of spec.devices) {
      const facts = await deviceFacts(d).catch(() => undefined);
      if (facts && isOurs(facts)) await btrfs.wipe(facts.real);
    }
    await journal.emit({
      kind: 'storage_torndown',
      subject: node,
      detail: `${spec.devices.join(', ')} unmounted from ${mountpoint} and wiped`,
      data: { devices: spec.devices, mountpoint },
    });
    await removeStorage(store, node, revision);
    last = undefined;
    opts.onPass?.(undefined, false);
    logger.info({ devices: spec.devices }, 'shared storage torn down');
  }

  async function reconcile(): Promise<ReconcileResult> {
    const got = await store.get(key, StorageSpec);
    if (!got) {
      opts.onPass?.(undefined, await mountedAt(mountpoint));
      return;
    }
    const spec = got.value;
    if (spec.deleting) {
      opts.onPass?.(spec, await mountedAt(mountpoint));
      return teardown(spec, got.modRevision);
    }
    try {
      const made = await ensureMounted(spec);
      if (made)
        await journal.emit({
          kind: 'storage_setup',
          subject: node,
          detail: `btrfs over ${spec.devices.join(', ')} mounted at ${mountpoint}`,
          data: { devices: spec.devices, mountpoint },
        });
      const added = await ensureDevices(spec);
      if (added.length > 0)
        await journal.emit({
          kind: 'storage_grown',
          subject: node,
          detail: `${added.join(', ')} added; the storage spans ${spec.devices.length} devices`,
          data: { added, devices: spec.devices, size_bytes: (await btrfs.usage(mountpoint)).size },
        });
      opts.onPass?.(spec, true);
      await describe('ready', `btrfs mounted at ${mountpoint}`);
    } catch (err) {
      opts.onPass?.(spec, await mountedAt(mountpoint));
      logger.warn({ err }, 'shared storage not ready');
      await publish({
        state: 'error',
        detail: `Shared storage on ${spec.devices.join(', ')}: ${(err as Error).message}`,
        uuid: null,
        devices: [],
        metadata_profile: null,
        size_bytes: 0,
        alloc_bytes: 0,
      });
      return { requeueAfterMs: 10_000 };
    }
    return { requeueAfterMs: REFRESH_MS };
  }

  const controller = startController<string>({ name: 'storage', logger, reconcile: () => reconcile() });
  const informer = await watchInto(store, keys.storage.prefix, StorageSpec, controller.queue, (k) =>
    k === key ? key : undefined,
  );
  controller.queue.add(key);
  return {
    /** Publishes again now (the dedup pass moved on). */
    refresh: () => controller.queue.add(key),
    stop: async () => {
      await informer.close();
      await controller.stop();
    },
  };
}
