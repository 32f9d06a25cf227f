import { Counter, Gauge, Registry } from 'prom-client';
import { JobKind, TERMINAL_JOB_STATES } from '@vtl/api';
import type { Store } from '@vtl/store';
import { loadSnapshot } from '@vtl/domain';
import { cartridgeView, statusView } from './status-view.js';
import { componentsOf, namedSeries, upSeries } from './named-metrics.js';
import { processRegistry } from './process-metrics.js';

/** Where the controllers campaign (the election `controller` of controller/src/main.ts): leased keys. */
const CONTROLLER_ELECTION = 'controller/';

/**
 * Prometheus series derived from the records at scrape time (§6.4, and their conventional
 * companions of named-metrics.ts), with the process's own (process-metrics.ts). No label
 * carries a secret.
 */
export function createMetrics(store: Store): Metrics {
  const registry = new Registry();
  const named = namedSeries(registry);
  const upRegistry = new Registry();
  const up = upSeries(upRegistry);
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

  const job = (name: string, help: string) =>
    new Counter({ name, help, labelNames: ['kind', 'outcome'], registers: [registry] });
  const jobs = {
    count: job('vtl_jobs_total', 'Terminal jobs by kind and outcome, from the job records'),
    bytes: job('vtl_job_bytes_total', 'Bytes moved by terminal jobs'),
    seconds: job('vtl_job_duration_seconds_total', 'Seconds terminal jobs ran, creation to end'),
  };
  const fc = {
    verified: new Gauge({
      name: 'vtl_fc_target_verified',
      help: '1 when the FC target passed identity verification',
      registers: [registry],
    }),
    sessions: new Gauge({
      name: 'vtl_target_sessions_active',
      help: 'Live initiator logins by fabric',
      labelNames: ['fabric'],
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

    // Counters rebuilt from the records on every scrape: every kind/outcome pair is present, 0 or not.
    Object.values(jobs).forEach((c) => c.reset());
    for (const kind of JobKind.options)
      for (const outcome of TERMINAL_JOB_STATES)
        Object.values(jobs).forEach((c) => c.inc({ kind, outcome }, 0));
    for (const j of s.jobs) {
      if (!TERMINAL_JOB_STATES.includes(j.state)) continue;
      const labels = { kind: j.kind, outcome: j.state };
      jobs.count.inc(labels);
      jobs.bytes.inc(labels, j.bytes_done);
      const seconds = (Date.parse(j.updated_at) - Date.parse(j.created_at)) / 1000;
      if (Number.isFinite(seconds) && seconds > 0) jobs.seconds.inc(labels, seconds);
    }
    const view = statusView(s);
    fc.verified.set(view.fc.verified ? 1 : 0);
    fc.sessions.set({ fabric: 'fc' }, view.fabrics.fc.sessions);
    fc.sessions.set({ fabric: 'iscsi' }, view.fabrics.iscsi.sessions);
    named(s);
    up(componentsOf(s, (await store.count(CONTROLLER_ELECTION)) > 0));
  };
  // Refresh resets and refills the series: two scrapes at once must not interleave.
  let queue: Promise<unknown> = Promise.resolve();
  const scrape = (): Promise<string> => {
    const next = queue.then(async () => {
      try {
        await refresh();
      } catch {
        // The store does not answer: the process's series and vtl_up say so, the rest is unknown.
        up({ etcd: false, controller: false, nodeagent: false, emulator: false });
        return Registry.merge([processRegistry, upRegistry]).metrics();
      }
      return Registry.merge([registry, processRegistry, upRegistry]).metrics();
    });
    queue = next.catch(() => undefined);
    return next;
  };
  return Object.assign(registry, { scrape });
}

export type Metrics = Registry & { scrape(): Promise<string> };
