import { bytes } from './format';

/** The pool figures the overview shows (PoolFigures of the status view). */
export interface PoolLike {
  name: string;
  fs_used_bytes: number;
  fs_total_bytes: number;
  logical_bytes: number;
  phys_est_bytes: number;
  dedup_ratio: number;
  compress_ratio: number;
  engine?: 'directory' | 'btrfs';
}

const ratio = (r: number) => `${r.toFixed(2)}×`;

/**
 * What the hosts wrote against what it takes on disk, at a glance: a btrfs pool's savings and
 * its dedup and compression ratios; a plain directory pool says it does neither (docs/storage.md).
 */
export function savingsText(p: PoolLike): string {
  const written = `${bytes(p.logical_bytes)} written by hosts`;
  if (p.engine !== 'btrfs') return `Plain directory: no dedup or compression. ${written}.`;
  const saved =
    p.logical_bytes > 0 ? Math.max(0, Math.round((1 - p.phys_est_bytes / p.logical_bytes) * 100)) : 0;
  return (
    `btrfs: ${written}, ${bytes(p.phys_est_bytes)} on disk (${saved} % saved); ` +
    `dedup ${ratio(p.dedup_ratio)}, compression ${ratio(p.compress_ratio)}.`
  );
}
