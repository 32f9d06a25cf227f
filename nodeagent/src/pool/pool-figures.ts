import fs from 'node:fs/promises';
import path from 'node:path';
import { isoNow, type PoolFigures, type PoolSpec } from '@vtl/api';

/** Logical (host-written) and allocated bytes of every file under a directory. */
async function usage(dir: string): Promise<{ logical: number; allocated: number }> {
  let logical = 0;
  let allocated = 0;
  const entries = await fs.readdir(dir, { withFileTypes: true }).catch(() => []);
  for (const e of entries) {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) {
      const sub = await usage(full);
      logical += sub.logical;
      allocated += sub.allocated;
    } else if (e.isFile()) {
      const st = await fs.stat(full).catch(() => undefined);
      if (!st) continue;
      logical += st.size;
      allocated += st.blocks * 512;
    }
  }
  return { logical, allocated };
}

/**
 * Figures of a directory pool (§2.8). A plain directory neither deduplicates nor compresses,
 * so dedup is 1 and compression is what sparse allocation saves; the "zpool" figures are the
 * filesystem's. ZFS pools fill these from zfs/zpool properties instead.
 */
export async function directoryPoolFigures(pool: PoolSpec): Promise<PoolFigures> {
  const fsStats = await fs.statfs(pool.path);
  const total = fsStats.blocks * fsStats.bsize;
  const used = (fsStats.blocks - fsStats.bfree) * fsStats.bsize;
  const { logical, allocated } = await usage(pool.path);
  const ratio = allocated > 0 ? Math.round((logical / allocated) * 100) / 100 : 1;
  return {
    name: pool.name,
    mountpoint: pool.path,
    fs_total_bytes: total,
    fs_used_bytes: used,
    logical_bytes: logical,
    dedup_ratio: 1,
    compress_ratio: Math.max(ratio, 1),
    record_bytes: fsStats.bsize,
    phys_est_bytes: allocated,
    zpool_size_bytes: total,
    zpool_alloc_bytes: used,
    collected_at: isoNow(),
    vdo_logical_bytes: logical,
    vdo_physical_bytes: allocated,
    vdo_saving_pct: logical > 0 ? Math.max(0, Math.round((1 - allocated / logical) * 100)) : 0,
  };
}
