import type { Logger } from 'pino';
import {
  CartridgeSpec,
  Job,
  LibraryStatus,
  LibrarySpec,
  PoolSpec,
  RemoteRecord,
  isoNow,
  keys,
  type JobState,
} from '@vtl/api';
import { type EventJournal, type Store } from '@vtl/store';
import { updateJob } from '@vtl/domain';
import { startController, watchInto } from '@vtl/reconcile';

/** Where each kind of job goes once the controller has admitted it (docs/api.md "Jobs"). */
const ADMITTED: Record<Job['kind'], { from: JobState; to: JobState; detail: string }> = {
  export: {
    from: 'detected',
    to: 'quiescing',
    detail: 'waiting for the cartridge to be idle and out of every drive',
  },
  evict: { from: 'queued', to: 'verifying', detail: 'verifying the bucket copy' },
  import: { from: 'queued', to: 'downloading', detail: 'downloading' },
};

/** Why a job cannot be admitted at all (`failing`), or nothing when it can; and the node that will run it. */
async function admission(store: Store, job: Job): Promise<{ failing?: string; node: string }> {
  const [remote, cart, lib, libStatus] = await Promise.all([
    store.get(keys.remotes.one(job.remote_id), RemoteRecord),
    store.get(keys.cartridges.one(job.label), CartridgeSpec),
    store.get(keys.libraries.one(job.library), LibrarySpec),
    store.get(keys.libraryStatus.one(job.library), LibraryStatus),
  ]);
  const pool = lib ? await store.get(keys.pools.one(lib.value.home_pool), PoolSpec) : undefined;
  const node = pool?.value.node ?? job.node;
  // What the job needs is gone for good (a job retried after its library was deleted, say): it
  // fails at once; left waiting in detected/queued it would count as active and block apply,
  // data-plane restart and library delete until someone cancelled it.
  if (!remote) return { node, failing: `remote ${job.remote_id} does not exist; this job cannot run` };
  if (!lib || lib.value.deleting)
    return { node, failing: `library ${job.library} does not exist; this job cannot run` };
  const intoLibrary = job.kind === 'import' && job.target_library > 0;
  if (!intoLibrary && (!cart || cart.value.deleting))
    return { node, failing: `cartridge ${job.label} does not exist here; this job cannot run` };
  // A queued job would block the very apply that makes the library live (§4.6 rule 5): fail it,
  // so the operator applies and then retries it.
  if (intoLibrary && libStatus?.value.state !== 'active')
    return {
      node,
      failing: `library ${job.library} is not live (${libStatus?.value.state ?? 'pending_restart'}); apply it (POST /api/libraries/apply), then retry with POST /api/jobs/${job.id}/retry`,
    };
  return { node };
}

/**
 * The controller's part of the job state machines: it admits new jobs (detected/queued) into
 * the state in which the nodeagent owning the cartridge's pool moves the data, naming that node.
 * Jobs whose remote, library or cartridge is gone fail with an error saying so. The executing and terminal
 * transitions are the nodeagent's (nodeagent/src/jobs), retry and cancel the apiserver's.
 */
export async function startJobReconciler(opts: {
  store: Store;
  journal: EventJournal;
  logger: Logger;
}): Promise<{ stop(): Promise<void> }> {
  const { store, journal } = opts;
  const controller = startController<string>({
    name: 'jobs',
    logger: opts.logger,
    workers: 2,
    reconcile: async (key, { log }) => {
      const id = Number(key);
      const current = await store.get(keys.jobs.one(id), Job);
      const step = current && ADMITTED[current.value.kind];
      if (!current || !step || current.value.state !== step.from) return;
      const { failing, node } = await admission(store, current.value);
      const detail = failing ?? step.detail;
      const updated = await updateJob(store, journal, id, step.from, (job) =>
        failing
          ? { state: 'failed' as const, node, error: failing, detail, finished_at: isoNow() }
          : { state: step.to, node, detail, started_at: job.started_at || isoNow() },
      );
      if (updated) log.info({ job: id, state: updated.state, detail }, 'job admitted or failed');
      return undefined;
    },
  });
  const watch = await watchInto(store, keys.jobs.prefix, Job, controller.queue, (_key, job) =>
    job ? String(job.id) : undefined,
  );
  return {
    stop: async () => {
      await watch.close();
      await controller.stop();
    },
  };
}
