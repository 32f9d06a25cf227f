import { readdirSync, statSync, type Dirent } from 'node:fs';
import fs from 'node:fs/promises';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { isoNow, type PoolFigures, type PoolSpec } from '@vtl/api';

/** Entries read between two turns of the event loop (a few ms of system calls at most). */
const ENTRIES_PER_TURN = 512;

/**
 * Logical (host-written) and allocated bytes of every file under a directory. Every pool is
 * walked every few seconds (16 full pools: some 25,000 files and 6,000 directories each time),
 * so the walk reads synchronously in slices of ENTRIES_PER_TURN entries and gives the event
 * loop a turn between slices: one asynchronous stat per file allocated a promise, a request
 * and its native buffer for each, some 20 MB a second of short-lived garbage and malloc churn
 * that kept an idle nodeagent's heap and malloc arena 100 MB above what it used.
 */
export async function usage(root: string): Promise<{ logical: number; allocated: number }> {
  let logical = 0;
  let allocated = 0;
  let read = 0;
  const dirs = [root];
  for (let dir = dirs.pop(); dir !== undefined; dir = dirs.pop()) {
    let entries: Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      continue; // gone or unreadable meanwhile: counted as empty, as before
    }
    for (const e of entries) {
      const full = `${dir}/${e.name}`;
      if (e.isDirectory()) dirs.push(full);
      else if (e.isFile()) {
        try {
          const st = statSync(full, { throwIfNoEntry: false });
          if (st) {
            logical += st.size;
            allocated += st.blocks * 512;
          }
        } catch {
          // unreadable: skipped
        }
      }
      if (++read % ENTRIES_PER_TURN === 0) await yieldToLoop();
    }
  }
  return { logical, allocated };
}

/**
 * Figures of a directory pool (§2.8). A plain directory neither deduplicates nor compresses,
 * so dedup is 1 and compression is what sparse allocation saves; the "zpool" figures are the
 * filesystem's. Pools on shared storage take theirs from btrfs (storage/btrfs-pool.ts).
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
    engine: 'directory',
    vdo_logical_bytes: logical,
    vdo_physical_bytes: allocated,
    vdo_saving_pct: logical > 0 ? Math.max(0, Math.round((1 - allocated / logical) * 100)) : 0,
  };
}
