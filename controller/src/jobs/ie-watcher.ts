import { POLICY_REQUESTERS, isJobActive } from '@vtl/api';
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

/** A bucket generation name for now, `YYYYMMDDTHHMMSSZ` (§2.17). */
export const generationNow = (at = new Date()) =>
  at
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');

/**
 * One pass of the import/export-slot watcher (§2.13 export.ie_watcher): a resident cartridge
 * the host ejected to an I/E slot is exported to the default remote; the nodeagent puts it back
 * into its slot once the upload verified. A cartridge gets one watcher export per change: any
 * job on the label created since the image last changed (an import that placed it there, or a
 * failed watcher export waiting for a retry) leaves it alone. Returns the jobs it created.
 */
export async function ieWatcherPass(store: Store, journal: EventJournal): Promise<number[]> {
  const policy = await readPolicySettings(store, (settings) => settings['export.ie_watcher'] === 'on');
  if (!policy) return [];
  const { remoteId, system } = policy;
  const s = await loadSnapshot(store);
  const created: number[] = [];
  for (const [label, seen] of observedCartridges(s)) {
    if (!seen.location.startsWith('ie:') || seen.local_state !== 'resident') continue;
    const spec = s.cartridges.find((c) => c.label === label && !c.deleting);
    const lib = s.libraries.find((l) => l.id === seen.library && !l.deleting);
    if (!spec || !lib) continue;
    const jobs = s.jobs.filter((j) => j.label === label);
    if (jobs.some((j) => isJobActive(j.state) || j.created_at >= seen.modified)) continue;
    const { job, refused } = await admitPolicyJob(
      store,
      journal,
      {
        kind: 'export',
        state: 'detected',
        label,
        library: lib.id,
        remote_id: remoteId,
        generation: generationNow(),
        system_name: system,
        library_serial: lib.serial,
        node: nodeOfLibrary(s, lib) ?? '',
        logical_bytes: seen.size_bytes,
        detail: `ejected to ${seen.location.replace(':', ' slot ')}`,
        requested_by: POLICY_REQUESTERS.ieWatcher,
      },
      cartridgeUnchanged(store, label, remoteId),
    );
    // Refused as an API request would be (an apply or library delete runs, the label is busy):
    // the next pass tries again.
    if (refused?.details?.op) return created;
    if (!job) continue;
    created.push(job.id);
  }
  return created;
}

/** Runs the watcher on a short poll (the node status changes too often to watch) and on settings changes. */
export const startIeWatcher = policyLoop({
  name: 'ie-watcher',
  everyMs: Requeue.poll,
  pass: ieWatcherPass,
  made: 'ejected cartridges: exports queued',
});
