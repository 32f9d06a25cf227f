import { Gauge, Registry } from 'prom-client';
import type { Store } from '@vtl/store';
import { loadSnapshot } from '@vtl/store';
import { cartridgeView } from './status-view.js';

/** Prometheus series derived from the records at scrape time (§6.4). No label carries a secret. */
export function createMetrics(store: Store): Registry {
  const registry = new Registry();
  const pool = (name: string, help: string) =>
    new Gauge({ name, help, labelNames: ['pool'], registers: [registry] });
  const gauges = {
    used: pool('vtl_pool_fs_used_bytes', 'Pool dataset used bytes'),
    total: pool('vtl_pool_fs_total_bytes', 'Pool dataset total bytes'),
    logical: pool('vtl_pool_logical_bytes', 'Host-written bytes, before dedup and compression'),
    dedup: pool('vtl_pool_dedup_ratio', 'Pool-wide dedup ratio'),
    compress: pool('vtl_pool_compress_ratio', 'Per-dataset compression ratio'),
    physEst: pool('vtl_pool_phys_est_bytes', 'Estimated real disk share after global dedup'),
    zAlloc: new Gauge({
      name: 'vtl_zpool_alloc_bytes',
      help: 'Shared system pool allocated bytes',
      registers: [registry],
    }),
    zSize: new Gauge({
      name: 'vtl_zpool_size_bytes',
      help: 'Shared system pool size',
      registers: [registry],
    }),
    written: new Gauge({
      name: 'vtl_drive_blocks_written',
      help: 'Blocks written since boot',
      labelNames: ['library', 'drive'],
      registers: [registry],
    }),
    read: new Gauge({
      name: 'vtl_drive_blocks_read',
      help: 'Blocks read since boot',
      labelNames: ['library', 'drive'],
      registers: [registry],
    }),
    carts: new Gauge({
      name: 'vtl_carts',
      help: 'Cartridges by library and local state',
      labelNames: ['library', 'local_state'],
      registers: [registry],
    }),
  };

  // prom-client calls `collect` of each metric; one shared refresh keeps the scrape consistent.
  const refresh = async () => {
    const s = await loadSnapshot(store);
    Object.values(gauges).forEach((g) => g.reset());
    for (const p of s.pools) {
      const f = s.poolStatus.get(p.id)?.figures;
      if (!f) continue;
      gauges.used.set({ pool: f.name }, f.fs_used_bytes);
      gauges.total.set({ pool: f.name }, f.fs_total_bytes);
      gauges.logical.set({ pool: f.name }, f.logical_bytes);
      gauges.dedup.set({ pool: f.name }, f.dedup_ratio);
      gauges.compress.set({ pool: f.name }, f.compress_ratio);
      gauges.physEst.set({ pool: f.name }, f.phys_est_bytes);
      gauges.zAlloc.set(f.zpool_alloc_bytes);
      gauges.zSize.set(f.zpool_size_bytes);
    }
    const serialOf = new Map(s.libraries.map((l) => [l.id, l.serial]));
    for (const node of s.nodes)
      for (const lib of node.libraries)
        for (const d of lib.drives) {
          const labels = { library: serialOf.get(lib.id) ?? String(lib.id), drive: String(d.index) };
          gauges.written.set(labels, d.blocks_written);
          gauges.read.set(labels, d.blocks_read);
        }
    for (const c of cartridgeView(s))
      gauges.carts.inc({ library: serialOf.get(c.library) ?? String(c.library), local_state: c.local_state });
  };
  return Object.assign(registry, { refresh });
}

export type Metrics = Registry & { refresh(): Promise<void> };
