import type { Logger } from 'pino';
import {
  Identity,
  POLICY_REQUESTERS,
  RemoteRecord,
  Settings,
  defaultSystemName,
  isJobActive,
  keys,
} from '@vtl/api';
import type { EventJournal, Store } from '@vtl/store';
import {
  admitPolicyJob,
  cartridgeUnchanged,
  loadSnapshot,
  nodeOfLibrary,
  observedCartridges,
} from '@vtl/domain';
import { Requeue, startController, watchInto } from '@vtl/reconcile';

const KEY = 'ie-watcher';

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
  const settings = (await store.get(keys.settings, Settings))?.value ?? {};
  const remoteId = Number.parseInt(settings['export.default_remote'] ?? '', 10);
  if (settings['export.ie_watcher'] !== 'on' || !Number.isFinite(remoteId)) return [];
  if (!(await store.get(keys.remotes.one(remoteId), RemoteRecord))) return [];
  const identity = (await store.get(keys.identity, Identity))?.value;
  const system = settings['system.name'] || (identity ? defaultSystemName(identity.system_uuid) : '');
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
export async function startIeWatcher(opts: {
  store: Store;
  journal: EventJournal;
  logger: Logger;
}): Promise<{ stop(): Promise<void> }> {
  const controller = startController<string>({
    name: 'ie-watcher',
    logger: opts.logger,
    reconcile: async (_key, { log }) => {
      const created = await ieWatcherPass(opts.store, opts.journal);
      if (created.length > 0) log.info({ jobs: created }, 'ejected cartridges: exports queued');
      return { requeueAfterMs: Requeue.poll };
    },
  });
  const watch = await watchInto(opts.store, keys.settings, Settings, controller.queue, () => KEY);
  controller.queue.add(KEY);
  return {
    stop: async () => {
      await watch.close();
      await controller.stop();
    },
  };
}
