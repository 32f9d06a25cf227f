import fs from 'node:fs/promises';
import path from 'node:path';
import {
  DEFAULT_POOL_COMPRESSION,
  isoNow,
  type DedupStatus,
  type PoolFigures,
  type PoolSpec,
} from '@vtl/api';
import * as btrfs from './btrfs.js';
import { POOLS_DIR, mountedAt, poolSubvolumes } from './storage-reconciler.js';

/** btrfs shares and compresses in 4 KiB blocks: the unit a dedup pass matches. */
const BTRFS_BLOCK = 4096;

const ratio = (a: number, b: number) => (b > 0 ? Math.round((a / b) * 100) / 100 : 1);

/**
 * A pool on shared storage: its subvolume exists with the pool's compression. Refuses (throws)
 * while the storage is not mounted, so the pool shows the reason as its state.
 */
export async function ensurePoolSubvolume(pool: PoolSpec, mountpoint: string): Promise<void> {
  if (!(await mountedAt(mountpoint)))
    throw new Error(`the shared storage is not mounted at ${mountpoint} (GET /api/storage says why)`);
  if (path.dirname(pool.path) !== path.join(mountpoint, POOLS_DIR))
    throw new Error(`${pool.path} is not under ${path.join(mountpoint, POOLS_DIR)}`);
  if (!(await btrfs.isSubvolume(pool.path))) {
    // A directory left by a crash between mkdir and create cannot be here: create makes it.
    await btrfs.createSubvolume(pool.path);
  }
  const wanted = pool.compression ?? DEFAULT_POOL_COMPRESSION;
  if ((await btrfs.getCompression(pool.path)) !== wanted) await btrfs.setCompression(pool.path, wanted);
}

/**
 * Figures of a pool on btrfs (§2.8), from the engine: compsize over the subvolume counts each
 * extent once, as stored (after compression), as written before compression, and as referenced
 * by the files (a block shared by dedup is referenced twice, stored once).
 */
export async function btrfsPoolFigures(
  pool: PoolSpec,
  mountpoint: string,
  dedup: DedupStatus | undefined,
): Promise<PoolFigures> {
  const collectedAt = isoNow(); // when the reading began: the figures show nothing older
  const { disk, uncompressed, referenced } = await btrfs.extentBytes([pool.path]);
  const { size, used } = await btrfs.usage(mountpoint);
  return {
    name: pool.name,
    mountpoint: pool.path,
    fs_total_bytes: size,
    fs_used_bytes: used,
    logical_bytes: referenced,
    dedup_ratio: Math.max(1, ratio(referenced, uncompressed)),
    compress_ratio: Math.max(1, ratio(uncompressed, disk)),
    record_bytes: BTRFS_BLOCK,
    phys_est_bytes: disk,
    zpool_size_bytes: size,
    zpool_alloc_bytes: used,
    collected_at: collectedAt,
    engine: 'btrfs',
    ...(dedup ? { dedup } : {}),
    vdo_logical_bytes: referenced,
    vdo_physical_bytes: disk,
    vdo_saving_pct: referenced > 0 ? Math.max(0, Math.round((1 - disk / referenced) * 100)) : 0,
  };
}

/**
 * Deletes the subvolume of every pool that is gone (the pool delete's disk part): what is under
 * the pools directory and no pool names. Runs after a delete and at start, so a delete the
 * nodeagent missed while it was down is done later.
 */
export async function removeOrphanSubvolumes(mountpoint: string, pools: PoolSpec[]): Promise<string[]> {
  if (!(await mountedAt(mountpoint))) return [];
  const wanted = new Set(pools.filter((p) => p.engine === 'btrfs').map((p) => p.path));
  const removed: string[] = [];
  for (const sub of await poolSubvolumes(mountpoint)) {
    if (wanted.has(sub)) continue;
    if (await btrfs.isSubvolume(sub)) await btrfs.deleteSubvolume(sub);
    else await fs.rm(sub, { recursive: true, force: true });
    removed.push(sub);
  }
  return removed;
}
