import { bytes, Progress } from './common';
import { type PoolLike, savingsText } from '../pool-savings';

/** One pool on the overview: fill, then savings and ratios. */
export function PoolSummary({ pool: p }: { pool: PoolLike }) {
  return (
    <div class="pool">
      <span>
        Pool <strong>{p.name}</strong>: {bytes(p.fs_used_bytes)} of {bytes(p.fs_total_bytes)} used
      </span>
      <Progress value={p.fs_used_bytes} max={p.fs_total_bytes} label={`Pool ${p.name} fill`} />
      <span class="pool-savings">{savingsText(p)}</span>
    </div>
  );
}
