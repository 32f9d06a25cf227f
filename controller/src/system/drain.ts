import type { Logger } from 'pino';
import { DrainState, Job, isJobActive, keys } from '@vtl/api';
import type { EventJournal, Store } from '@vtl/store';
import { startController, watchInto } from '@vtl/reconcile';
import { abandonDrain, requestRestart } from '@vtl/domain';

/** §8: a graceful restart waits up to 30 minutes; VTL_DRAIN_TIMEOUT_MS shortens it for tests. */
export const DEFAULT_DRAIN_TIMEOUT_MS = 30 * 60_000;
/** Jobs finish without the drain record changing, and the deadline passes silently: poll too. */
const RECHECK_MS = 2_000;
const KEY = 'drain';

const duration = (ms: number) =>
  ms >= 60_000 ? `${Math.round(ms / 60_000)} minutes` : `${Math.round(ms / 1000)} seconds`;

/**
 * Finishes a graceful restart (§3.5): once no job is active it clears the drain and writes the
 * restart request in one transaction; past the deadline it clears the drain and journals a
 * `system` event instead. Level-triggered, so a controller failover picks up where it was.
 */
export async function startDrainReconciler(opts: {
  store: Store;
  journal: EventJournal;
  logger: Logger;
  timeoutMs: number;
}): Promise<{ stop(): Promise<void> }> {
  const { store, journal, timeoutMs } = opts;
  const controller = startController<string>({
    name: 'drain',
    logger: opts.logger,
    reconcile: async (_key, { log }) => {
      const record = await store.get(keys.drain, DrainState);
      const drain = record?.value;
      if (!record || !drain?.draining) return;
      const listed = await store.list(keys.jobs.prefix, Job);
      const jobs = listed.items.filter((j) => isJobActive(j.value.state));
      if (jobs.length === 0) {
        // Only if neither the drain (cancelled meanwhile) nor a job changed since they were read:
        // a drain cleared between the two reads must not restart the control plane. The change
        // that failed the comparison is a watch event, which queues another pass.
        const restarted = await requestRestart(store, 'graceful', (txn) =>
          txn
            .ifModRevision(keys.drain, record.modRevision)
            .ifUnchangedSince(keys.jobs.prefix, listed.revision),
        );
        if (restarted) log.info('no job active; restarting the control plane');
        return;
      }
      const since = Date.parse(drain.since ?? '') || Date.now();
      const stored = Date.parse(drain.deadline ?? '') || Infinity;
      if (Date.now() < Math.min(stored, since + timeoutMs)) return { requeueAfterMs: RECHECK_MS };
      await abandonDrain(store);
      const waited = duration(Math.min(stored, since + timeoutMs) - since);
      const detail = `Graceful restart abandoned after ${waited} with ${jobs.length} jobs still active`;
      log.warn({ jobs: jobs.length }, detail);
      await journal.emit({ kind: 'system', subject: 'restart', detail, data: { active_jobs: jobs.length } });
    },
  });
  const watches = await Promise.all([
    watchInto(store, keys.drain, DrainState, controller.queue, () => KEY),
    watchInto(store, keys.jobs.prefix, Job, controller.queue, () => KEY),
  ]);
  controller.queue.add(KEY);
  return {
    stop: async () => {
      await Promise.all(watches.map((w) => w.close()));
      await controller.stop();
    },
  };
}
