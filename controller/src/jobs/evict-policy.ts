import {
  CatalogEntry,
  POLICY_REQUESTERS,
  PoolStatus,
  isJobActive,
  keys,
  type ObservedCartridge,
} from '@vtl/api';
import type { EventJournal, Store } from '@vtl/store';
import {
  admitPolicyJob,
  cartridgeUnchanged,
  loadSnapshot,
  nodeOfLibrary,
  observedCartridges,
} from '@vtl/domain';
import { Requeue } from '@vtl/reconcile';
import { policyLoop, readPolicySettings } from './policy-loop.js';

/** Jobs the policy creates carry this as `requested_by`. */
export const EVICT_POLICY = POLICY_REQUESTERS.evictThreshold;

/**
 * One pass of the eviction policy (§2.13 evict.threshold_pct): for every pool filled above the
 * threshold, queues evict jobs for exported, resident cartridges that are out of the drives,
 * least recently modified first, until their allocated bytes would bring the pool below it.
 * Only cartridges whose last export is in the default remote's catalog qualify, so the job's
 * verification has a copy to check; a pool with policy evictions still running waits for them.
 * Returns the jobs it queued.
 */
export async function evictionPass(store: Store, journal: EventJournal): Promise<number[]> {
  const policy = await readPolicySettings(store, (settings) =>
    Number.isFinite(Number.parseInt(settings['evict.threshold_pct'] ?? '', 10)),
  );
  if (!policy) return [];
  const { remoteId, system } = policy;
  const threshold = Number.parseInt(policy.settings['evict.threshold_pct']!, 10);
  const s = await loadSnapshot(store);
  const catalog = (await store.list(keys.catalog.remote(remoteId), CatalogEntry)).items.map((i) => i.value);
  const observed = observedCartridges(s);
  const busy = new Set(s.jobs.filter((j) => isJobActive(j.state)).map((j) => j.label));
  const queued: number[] = [];

  for (const pool of s.pools) {
    const f: PoolStatus['figures'] = s.poolStatus.get(pool.id)?.figures;
    if (!f || f.fs_total_bytes <= 0) continue;
    let excess = f.fs_used_bytes - (threshold / 100) * f.fs_total_bytes;
    if (excess <= 0) continue;
    const libs = s.libraries.filter((l) => l.home_pool === pool.id && !l.deleting);
    const libIds = new Set(libs.map((l) => l.id));
    const running = s.jobs.some(
      (j) =>
        j.kind === 'evict' &&
        j.requested_by === EVICT_POLICY &&
        isJobActive(j.state) &&
        libIds.has(j.library),
    );
    if (running) continue;
    const candidates = s.cartridges
      .filter((c) => libIds.has(c.library) && !c.deleting && c.last_export_gen && !busy.has(c.label))
      .map((c) => ({ spec: c, seen: observed.get(c.label), lib: libs.find((l) => l.id === c.library)! }))
      .filter((c): c is typeof c & { seen: ObservedCartridge } =>
        Boolean(c.seen && c.seen.local_state === 'resident' && !c.seen.location.startsWith('drive:')),
      )
      .filter((c) =>
        catalog.some(
          (e) =>
            e.cart_label === c.spec.label &&
            e.generation === c.spec.last_export_gen &&
            e.library_serial === c.lib.serial &&
            e.system_name === system,
        ),
      )
      .sort((a, b) => a.seen.modified.localeCompare(b.seen.modified));
    for (const c of candidates) {
      if (excess <= 0) break;
      const { job, refused } = await admitPolicyJob(
        store,
        journal,
        {
          kind: 'evict',
          state: 'queued',
          label: c.spec.label,
          library: c.lib.id,
          remote_id: remoteId,
          generation: c.spec.last_export_gen,
          system_name: system,
          library_serial: c.lib.serial,
          node: nodeOfLibrary(s, c.lib) ?? '',
          logical_bytes: c.seen.size_bytes,
          detail: `pool ${pool.name} is above ${threshold}% full`,
          requested_by: EVICT_POLICY,
        },
        cartridgeUnchanged(store, c.spec.label, remoteId),
      );
      // Refused as an API request would be: an apply or library delete runs (nothing more
      // this pass), or this cartridge changed meanwhile (the next one may still go).
      if (refused?.details?.op) return queued;
      if (!job) continue;
      queued.push(job.id);
      excess -= c.seen.phys_bytes;
    }
  }
  return queued;
}

/**
 * Runs the eviction policy every 30 s (VTL_EVICT_POLICY_PERIOD_MS, passed as `everyMs`) and
 * whenever the settings change (pool figures refresh every few seconds: polling them is enough;
 * a settings change acts at once).
 */
export const startEvictPolicy = policyLoop({
  name: 'evict-policy',
  everyMs: Requeue.slow,
  pass: evictionPass,
  made: 'pool above evict.threshold_pct: evictions queued',
});
