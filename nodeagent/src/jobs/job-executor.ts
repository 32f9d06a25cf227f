import type { Logger } from 'pino';
import { Job, LibrarySpec, isoNow, keys, type JobState } from '@vtl/api';
import type { EventJournal, Store } from '@vtl/store';
import { Requeue, startController, watchInto } from '@vtl/reconcile';
import type { EmulatorSupervisor } from '../dataplane/emulator-supervisor.js';
import type { NodeStatusPublisher } from '../dataplane/node-status.js';
import type { JobStepContext, StepResult } from './job-context.js';
import { quiesce, upload } from './export-job.js';
import { downloadAndSwapIn, verifyAndEvict } from './evict-import-jobs.js';
import { updateJob } from '@vtl/domain';
import { offsiteCode, offsiteEngine, type Codec, type OffsiteEngine } from './offsite.js';
import { isStoreBlip } from './store-blip.js';
import { executesOn, executingJobs, interruptJob } from './job-records.js';

type JobSteps = Partial<Record<JobState, (ctx: JobStepContext) => Promise<StepResult>>>;

const STEPS: JobSteps = {
  quiescing: quiesce,
  uploading: upload,
  verifying: verifyAndEvict,
  downloading: downloadAndSwapIn,
};

/** Why a step failed, in words that say what to do next. */
function failureReason(job: Job, err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  const retry = `retry with POST /api/jobs/${job.id}/retry`;
  switch (offsiteCode(err)) {
    case 'unreachable':
      return `S3 remote ${job.remote_id} is unreachable (${message}); ${job.kind === 'export' ? 'verified chunks are kept; ' : ''}${retry} once it answers`;
    case 'verify_failed':
      return job.kind === 'evict'
        ? `the bucket copy of generation ${job.generation} does not verify (${message}); the cartridge was not evicted: export it again`
        : `generation ${job.generation} does not verify (${message}); nothing was changed locally`;
    case 'access_denied':
      return `S3 remote ${job.remote_id} refused the keys (${message}); fix access_key or secret_key with PUT /api/remotes/${job.remote_id}, then ${retry}`;
    case 'stub':
      return `${job.label} is an evicted stub with no data to export (${message}); import it first`;
    case 'not_found':
      return `generation ${job.generation} of ${job.label} is not in the bucket (${message}); check the catalog`;
    default:
      return `${message}; ${retry}`;
  }
}

/**
 * Runs the data movement of the jobs whose cartridge lives on this node's pools: level-triggered
 * on the job records, so a restarted nodeagent picks up every job in an executing state and an
 * export resumes from its ledger. Shutdown aborts running steps; `interruptAll` (control-plane
 * restart) marks them `interrupted` so they wait for a retry.
 */
export async function startJobExecutor(opts: {
  store: Store;
  journal: EventJournal;
  node: string;
  supervisor: EmulatorSupervisor;
  publisher: NodeStatusPublisher;
  logger: Logger;
  chunkBytes?: number;
  /** Nice value of the codec threads (nodeagent config). */
  codecNice?: number;
  /** zstd level of exports (nodeagent config). */
  zstdLevel?: number;
  /** The release the bucket's system file names (nodeagent config). */
  version?: string;
  /** The step run in each executing state; tests replace them. */
  steps?: JobSteps;
}): Promise<{ stop(opts?: { interrupt?: string; pause?: string }): Promise<void> }> {
  const { store, journal } = opts;
  const abort = new AbortController();
  let codec: Codec | undefined;
  let loaded: Promise<OffsiteEngine> | undefined;
  const engineOf = () => (loaded ??= offsiteEngine());

  const controller = startController<string>({
    name: 'job-executor',
    logger: opts.logger,
    workers: 2,
    reconcile: async (key, { log }) => {
      const id = Number(key);
      const job = (await store.get(keys.jobs.one(id), Job))?.value;
      const step = job && job.node === opts.node ? (opts.steps ?? STEPS)[job.state] : undefined;
      if (!job || !step || abort.signal.aborted) return;
      const library = (await store.get(keys.libraries.one(job.library), LibrarySpec))?.value;
      if (!library) return { requeueAfterMs: Requeue.slow };
      try {
        const engine = await engineOf();
        const codecOf = () =>
          (codec ??= new engine.CodecPool({ nice: opts.codecNice, level: opts.zstdLevel }));
        return await step({ ...opts, engine, codec: codecOf, signal: abort.signal, log, job, library });
      } catch (err) {
        if (abort.signal.aborted) return;
        if (isStoreBlip(err)) {
          // An etcd member stopping or electing a leader: the step resumes from its records.
          log.warn({ err, job: id }, 'the store did not answer during a job step; running the step again');
          return { requeueAfterMs: Requeue.soon };
        }
        const error = failureReason(job, err);
        log.warn({ err, job: id }, 'job failed');
        await updateJob(store, journal, id, job.state, () => ({
          state: 'failed',
          error,
          detail: error,
          finished_at: isoNow(),
        }));
        await opts.supervisor.emulator
          ?.release({ library: job.library, label: job.label })
          .catch(() => undefined);
      }
    },
  });
  const watch = await watchInto(store, keys.jobs.prefix, Job, controller.queue, (_key, job) =>
    job && executesOn(job, opts.node) ? String(job.id) : undefined,
  );
  return {
    stop: async ({ interrupt, pause } = {}) => {
      abort.abort();
      await watch.close();
      // Interrupted jobs are recorded first, and the running steps' unwinding awaited after:
      // shutdown has a budget of a few seconds (nodeagent main.ts), and an aborted step may take
      // a while to return on a busy machine (a chunk being compressed). A record left executing
      // would have the next nodeagent resume the job instead of leaving it interrupted. A step
      // still running cannot undo the change: its own updates expect the state it saw (updateJob).
      // None when the store is gone: nothing could be recorded then.
      const executing = () => executingJobs(store, opts.node).catch(() => [] as Job[]);
      const interrupted: Job[] = [];
      if (interrupt)
        for (const job of await executing())
          if (await interruptJob(store, journal, job, interrupt).catch(() => false)) interrupted.push(job);
      await controller.stop();
      // The emulator outlives this process: an interrupted job must not keep the cartridge held.
      // Released once its step has stopped reading it.
      for (const job of interrupted)
        await opts.supervisor.emulator
          ?.release({ library: job.library, label: job.label })
          .catch(() => undefined);
      // Paused (an update's restart): the state stays executing, so the next nodeagent picks the
      // job up again; the detail says why it stood still, and the journal keeps it.
      if (pause)
        for (const job of await executing()) {
          const detail = `paused: ${pause} restarts the control plane; resumes ${job.kind === 'export' ? 'from its chunk ledger ' : ''}when the nodeagent is back`;
          await updateJob(store, journal, job.id, job.state, () => ({ detail })).catch(() => undefined);
        }
      await codec?.close();
    },
  };
}
