import { Job, conflict, isJobActive, keys } from '@vtl/api';
import { z } from 'zod';
import type { EventJournal } from './event-journal.js';
import { exclusiveOpBusy, readExclusiveOp } from './exclusive-op.js';
import { newJobRow, publishJob, type NewJob } from '@vtl/domain';
import type { Store } from './store.js';
import type { Txn } from './txn.js';

/** The record under keys.jobLabel(label): the last job admitted for the label. */
export const JobLabelClaim = z.object({ job: z.number().int().positive() });

/** Transaction attempts of one admission; a lost one re-reads and re-checks everything. */
const ADMIT_ATTEMPTS = 8;

/** A label's claim as read: either the job that holds it, or a guard keeping it as read. */
export interface LabelClaim {
  /** The unfinished job that holds the label (the caller refuses). */
  busy?: Job;
  /** Adds the comparisons "the claim and its job are still as read" to a transaction. */
  guard: (txn: Txn) => void;
}

/**
 * Reads who holds a label. A claim by a finished (or vanished) job leaves the label free; the
 * guard then compares the claim and that job so a concurrent admission or retry loses the race.
 */
export async function readLabelClaim(store: Store, label: string): Promise<LabelClaim> {
  const claimKey = keys.jobLabel(label);
  const claim = await store.get(claimKey, JobLabelClaim);
  if (!claim) return { guard: (txn) => txn.ifAbsent(claimKey) };
  const jobKey = keys.jobs.one(claim.value.job);
  const job = await store.get(jobKey, Job);
  if (job && isJobActive(job.value.state)) return { busy: job.value, guard: () => undefined };
  return {
    guard: (txn) => {
      txn.ifModRevision(claimKey, claim.modRevision);
      if (job) txn.ifModRevision(jobKey, job.modRevision);
      else txn.ifAbsent(jobKey);
    },
  };
}

/** The 409 of §4.5 for a label another unfinished job works on. */
export function busyLabel(label: string, jobs: Job[]) {
  return conflict(
    `${label} already has ${jobs.map((j) => `${j.kind} job ${j.id} (${j.state})`).join(', ')}; wait for it or cancel it.`,
    { jobs: jobs.map((j) => j.id) },
  );
}

/**
 * Creates a job for a label only if no other unfinished job holds the label, in one etcd
 * transaction with the label's claim and whatever `recheck` compares (e.g. the cartridge record
 * still as checked). recheck runs before every attempt and throws the refusal when what it
 * checks no longer holds. Of N racing requests exactly one wins; the others get 409.
 */
export async function admitJob(
  store: Store,
  journal: EventJournal,
  fields: NewJob,
  recheck: () => Promise<(txn: Txn) => void> = async () => () => undefined,
): Promise<Job> {
  const label = fields.label;
  const id = await store.nextId('jobs');
  for (let attempt = 1; attempt <= ADMIT_ATTEMPTS; attempt++) {
    const claim = await readLabelClaim(store, label);
    if (claim.busy) throw busyLabel(label, [claim.busy]);
    // No job starts while an apply or a library delete runs (they need every job stopped).
    const exclusive = await readExclusiveOp(store);
    if (exclusive.busy) throw exclusiveOpBusy(`A new ${fields.kind} job`, exclusive.busy);
    const guard = await recheck();
    const job = newJobRow(fields, id);
    const txn = store.transaction();
    claim.guard(txn);
    exclusive.guard(txn);
    guard(txn);
    txn.ifAbsent(keys.jobs.one(id)).put(keys.jobs.one(id), job).put(keys.jobLabel(label), { job: id });
    if (await txn.commit()) {
      await publishJob(journal, job);
      return job;
    }
  }
  throw conflict(
    `${label} kept changing while this job was admitted; GET /api/jobs?label=${label}, then retry.`,
  );
}
