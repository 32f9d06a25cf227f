import { EXECUTING_JOB_STATES, Job, JobLedger, keys } from '@vtl/api';
import { type EventJournal, type Store } from '@vtl/store';
import { updateJob } from '@vtl/domain';
import type { LedgerEntry } from './offsite.js';

/** The chunks an earlier attempt verified, and the chunk size it used. */
export async function readLedger(
  store: Store,
  id: number,
): Promise<{ entries: LedgerEntry[]; chunkBytes?: number }> {
  const ledger = (await store.get(keys.jobLedgers.one(id), JobLedger))?.value;
  return { entries: ledger?.entries ?? [], chunkBytes: ledger?.chunk_bytes };
}

/** Whether `job` runs on `node` and is in an executing state (its data is moving or about to). */
export const executesOn = (job: Job, node: string): boolean =>
  job.node === node && EXECUTING_JOB_STATES.includes(job.state);

/** The jobs of `node` in an executing state, also those waiting for a worker or between steps. */
export async function executingJobs(store: Store, node: string): Promise<Job[]> {
  return (await store.list(keys.jobs.prefix, Job)).items
    .map((i) => i.value)
    .filter((j) => executesOn(j, node));
}

/**
 * Records an executing job interrupted by `cause` (§4.2: it waits for a retry). False when its
 * state moved on since it was read, so nothing was changed.
 */
export async function interruptJob(
  store: Store,
  journal: EventJournal,
  job: Job,
  cause: string,
): Promise<boolean> {
  const error = `interrupted by ${cause}; retry with POST /api/jobs/${job.id}/retry`;
  const done = await updateJob(store, journal, job.id, job.state, () => ({
    state: 'interrupted',
    error,
    detail: error,
  }));
  return done !== undefined;
}
