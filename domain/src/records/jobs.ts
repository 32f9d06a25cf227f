import {
  CANCELLABLE_JOB_STATES,
  CartridgeSpec,
  RETRYABLE_JOB_STATES,
  type JobState,
  Job,
  type JobLedger,
  RemoteRecord,
  VtlError,
  badRequest,
  conflict,
  isJobActive,
  isoNow,
  keys,
  notFound,
  type JobInput,
  type NewEvent,
} from '@vtl/api';
import type { EventJournal, Store, Txn } from '@vtl/store';
import { z } from 'zod';
import { exclusiveOpBusy, readExclusiveOp } from './exclusive-op.js';

/**
 * The job records (keys.jobs, keys.jobLabel) and export ledgers (keys.jobLedgers): the only
 * module that writes them. Its rules: how a new row starts, that every job is admitted with its
 * label's claim and the "no job while an apply or library delete runs" check in one transaction
 * (admitJob: API and policy jobs alike), that every change is a compare-and-swap from an expected
 * state, and that each row written is announced as `job_update` (§6.2). An export's ledger is
 * written only in the transaction that moves its job's row: a verified chunk only while the job
 * is `uploading`, its removal with the move to `succeeded` or `cancelled`, so a cancel racing a
 * chunk never leaves a ledger behind.
 */
/** Where job rows are announced. */
export interface JobJournal {
  emit(e: NewEvent): Promise<unknown>;
}

/** Journals a job row as `job_update` carrying the full row (§6.2). */
export async function publishJob(journal: JobJournal, job: Job): Promise<void> {
  await journal.emit({
    kind: 'job_update',
    subject: `job:${job.id}`,
    detail: `${job.kind} ${job.label}: ${job.state}${job.detail ? ` (${job.detail})` : ''}`,
    data: job,
  });
}

/** The fields a caller chooses for a new job; ids, counters and timestamps are set here. */
export type NewJob = Omit<
  JobInput,
  'id' | 'created_at' | 'updated_at' | 'bytes_done' | 'chunks_done' | 'attempts'
>;

/** A new job row: the caller's fields, with zeroed counters, a first attempt and now as both timestamps. */
export function newJobRow(fields: NewJob, id: number): Job {
  const now = isoNow();
  return Job.parse({
    ...fields,
    id,
    bytes_done: 0,
    chunks_done: 0,
    attempts: 1,
    created_at: now,
    updated_at: now,
  });
}

/**
 * Changes a job with compare-and-swap and announces the new row. `mutate` returns undefined
 * for "no change"; nothing is written unless the job is still in state `expect`.
 */
export async function updateJob(
  store: Store,
  journal: JobJournal,
  id: number,
  expect: Job['state'],
  mutate: (job: Job) => Partial<Job> | undefined,
): Promise<Job | undefined> {
  let changed = false;
  const result = await store.update(keys.jobs.one(id), Job, (job) => {
    changed = false;
    if (!job || job.state !== expect) return undefined;
    const patch = mutate(job);
    if (!patch) return undefined;
    changed = true;
    return { ...job, ...patch, updated_at: isoNow() };
  });
  if (!changed || !result) return undefined;
  await publishJob(journal, result.value);
  return result.value;
}

/** Transaction attempts of a retry, a cancel or an export's ledger; a lost one re-reads the job. */
const TRANSITION_ATTEMPTS = 8;

/**
 * Changes an export job still in state `expect` and, in the same transaction, writes its ledger
 * (or removes it): undefined, and nothing written, once the job moved on (cancelled, say).
 */
async function updateJobAndLedger(
  store: Store,
  journal: JobJournal,
  id: number,
  expect: Job['state'],
  patch: Partial<Job>,
  ledger: JobLedger | 'remove',
): Promise<Job | undefined> {
  const key = keys.jobs.one(id);
  for (let attempt = 1; attempt <= TRANSITION_ATTEMPTS; attempt++) {
    const found = await store.get(key, Job);
    if (!found || found.value.state !== expect) return undefined;
    const job: Job = { ...found.value, ...patch, updated_at: isoNow() };
    const txn = store.transaction().ifModRevision(key, found.modRevision).put(key, job);
    if (ledger === 'remove') txn.delete(keys.jobLedgers.one(id));
    else txn.put(keys.jobLedgers.one(id), ledger);
    if (await txn.commit()) {
      await publishJob(journal, job);
      return job;
    }
  }
  throw conflict(`Job ${id} kept changing while recording its export; the next chunk retries.`);
}

/**
 * After a verified chunk: the export's ledger (every chunk verified so far) and its job's
 * progress, while the job is `uploading`; undefined, nothing written, once it is not.
 */
export function recordExportChunk(
  store: Store,
  journal: JobJournal,
  id: number,
  ledger: Omit<JobLedger, 'job'>,
  progress: Partial<Job>,
): Promise<Job | undefined> {
  return updateJobAndLedger(store, journal, id, 'uploading', progress, { job: id, ...ledger });
}

/** The export's end: its job succeeds (`patch`) and its ledger goes, in one transaction. */
export function finishExport(
  store: Store,
  journal: JobJournal,
  id: number,
  patch: Partial<Job>,
): Promise<Job | undefined> {
  return updateJobAndLedger(store, journal, id, 'uploading', { ...patch, state: 'succeeded' }, 'remove');
}

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
 * checks no longer holds. Of N racing requests exactly one wins; the others get 409. The job's
 * id is taken in that transaction too: a refused admission leaves the id counter.
 */
export async function admitJob(
  store: Store,
  journal: EventJournal,
  fields: NewJob,
  recheck: () => Promise<(txn: Txn) => void> = async () => () => undefined,
  duringOp?: number,
): Promise<Job> {
  const label = fields.label;
  const job = await store.withNewId('jobs', ADMIT_ATTEMPTS, async (next) => {
    const claim = await readLabelClaim(store, label);
    if (claim.busy) throw busyLabel(label, [claim.busy]);
    // No job starts while an apply or a library delete runs (they need every job stopped),
    // except the work of `duringOp` itself (see admitPolicyJob).
    const exclusive = await readExclusiveOp(store, duringOp);
    if (exclusive.busy) throw exclusiveOpBusy(`A new ${fields.kind} job`, exclusive.busy);
    const guard = await recheck();
    const id = next.id;
    const row = newJobRow(fields, id);
    const txn = store.transaction();
    claim.guard(txn);
    exclusive.guard(txn);
    guard(txn);
    next.take(txn);
    txn.ifAbsent(keys.jobs.one(id)).put(keys.jobs.one(id), row).put(keys.jobLabel(label), { job: id });
    return (await txn.commit()) ? row : undefined;
  });
  if (job) {
    await publishJob(journal, job);
    return job;
  }
  throw conflict(
    `${label} kept changing while this job was admitted; GET /api/jobs?label=${label}, then retry.`,
  );
}

/**
 * What job admission compares in its transaction besides the label's claim: the cartridge
 * record as it is now (present, not being deleted), so a delete and an export cannot both win.
 */
export const cartridgeUnchanged = (store: Store, label: string, remoteId: number) => async () => {
  const key = keys.cartridges.one(label);
  const found = await store.get(key, CartridgeSpec);
  if (!found || found.value.deleting)
    throw notFound(`No cartridge ${label}; GET /api/cartridges lists them.`);
  const remote = await remoteUnchanged(store, remoteId)();
  return (txn: Txn) => {
    txn.ifModRevision(key, found.modRevision);
    remote(txn);
  };
};

/** For an import under a new label: the label is still free of a cartridge. */
export const cartridgeAbsent = (store: Store, label: string, remoteId: number) => async () => {
  const key = keys.cartridges.one(label);
  if (await store.get(key, CartridgeSpec))
    throw conflict(
      `${label} exists here and is not an evicted stub; delete it first or import another label.`,
    );
  const remote = await remoteUnchanged(store, remoteId)();
  return (txn: Txn) => {
    txn.ifAbsent(key);
    remote(txn);
  };
};

/** The job's remote still exists as read: a remote delete racing the admission cannot both win. */
export const remoteUnchanged = (store: Store, remoteId: number) => async () => {
  const key = keys.remotes.one(remoteId);
  const found = await store.get(key, RemoteRecord);
  if (!found) throw badRequest(`remote_id ${remoteId}: no such remote; GET /api/remotes lists them.`);
  return (txn: Txn) => void txn.ifModRevision(key, found.modRevision);
};

/**
 * Admits a job a policy makes (eviction threshold, I/E watcher, recovery) by exactly the rules of
 * an API job (admitJob with the same recheck). A refusal the API would answer with a 4xx (the
 * label busy, an apply or library delete running, the cartridge or remote gone) is the policy's
 * answer "not now": undefined, nothing written. Anything else is thrown.
 *
 * `duringOp` is for a recovery, whose imports come after the apply that activates its library:
 * while that apply still holds the exclusive claim (it timed out, the node is down) the imports
 * are queued all the same, and the controller fails them at once because their library is not
 * live (docs/api.md "Jobs"), so they never run during the apply and the operator retries them.
 */
export async function admitPolicyJob(
  store: Store,
  journal: EventJournal,
  fields: NewJob,
  recheck: () => Promise<(txn: Txn) => void>,
  duringOp?: number,
): Promise<{ job?: Job; refused?: VtlError }> {
  try {
    return { job: await admitJob(store, journal, fields, recheck, duringOp) };
  } catch (err) {
    if (err instanceof VtlError && err.status < 500) return { refused: err };
    throw err;
  }
}

/**
 * When this process (the apiserver) last retried each job, in milliseconds (updated_at has whole seconds).
 * A retry sent before that moment is refused: of a burst of retries only one counts.
 */
const lastRetryAt = new Map<number, number>();
/** Entries older than this cannot matter: no request waits that long to be decided. */
const RETRY_MEMORY_MS = 10 * 60_000;

function noteRetry(id: number): void {
  const now = Date.now();
  for (const [job, at] of lastRetryAt) if (now - at > RETRY_MEMORY_MS) lastRetryAt.delete(job);
  lastRetryAt.set(id, now);
}

/**
 * Changes a job in one etcd transaction comparing the row as checked, refusing when `allowed`
 * does not hold; announces the result. With `retry`, the transaction also takes the label's
 * claim (no other unfinished job may hold it) and refuses once the attempt it first read has
 * moved on: of N racing retries exactly one counts, even if the new attempt fails again at once.
 */
async function transition(
  store: Store,
  journal: EventJournal,
  id: number,
  allowed: readonly JobState[],
  verb: string,
  next: (job: Job) => Job,
  opts: { retry?: boolean; sentAt?: number; removeLedger?: boolean } = {},
): Promise<Job> {
  const key = keys.jobs.one(id);
  let firstAttempt: number | undefined;
  for (let attempt = 1; attempt <= TRANSITION_ATTEMPTS; attempt++) {
    const found = await store.get(key, Job);
    if (!found) throw notFound(`No job ${id}; GET /api/jobs lists them.`);
    const cur = found.value;
    firstAttempt ??= cur.attempts;
    if (opts.retry && cur.attempts !== firstAttempt)
      throw conflict(`Job ${id} was retried meanwhile (now attempt ${cur.attempts}); GET /api/jobs/${id}.`, {
        state: cur.state,
      });
    // A retry asks about the failure its sender saw: a job retried after the request was sent
    // (another request of the same burst won, and its attempt may have failed again already)
    // is not the one it meant.
    const retriedAt = lastRetryAt.get(id);
    if (opts.retry && opts.sentAt !== undefined && retriedAt !== undefined && retriedAt > opts.sentAt)
      throw conflict(
        `Job ${id} changed after this request was sent (now ${cur.state}, attempt ${cur.attempts}); GET /api/jobs/${id} and retry if still wanted.`,
        { state: cur.state },
      );
    if (!allowed.includes(cur.state))
      throw conflict(`Job ${id} is ${cur.state}; only ${allowed.join(' or ')} jobs can be ${verb}.`, {
        state: cur.state,
      });
    const txn = store.transaction().ifModRevision(key, found.modRevision);
    if (opts.retry) {
      const claim = await readLabelClaim(store, cur.label);
      if (claim.busy && claim.busy.id !== id) throw busyLabel(cur.label, [claim.busy]);
      claim.guard(txn);
      const exclusive = await readExclusiveOp(store);
      if (exclusive.busy) throw exclusiveOpBusy(`Retrying job ${id}`, exclusive.busy);
      exclusive.guard(txn);
      txn.put(keys.jobLabel(cur.label), { job: id });
    }
    const job = { ...next(cur), updated_at: isoNow() };
    txn.put(key, job);
    if (opts.removeLedger) txn.delete(keys.jobLedgers.one(id));
    if (await txn.commit()) {
      if (opts.retry) noteRetry(id);
      await publishJob(journal, job);
      return job;
    }
  }
  throw conflict(`Job ${id} kept changing while this request ran; GET /api/jobs/${id}, then retry.`);
}

/** POST /api/jobs/{id}/retry: a failed or interrupted job starts over from its first state (an export keeps its ledger). */
export function retryJob(store: Store, journal: EventJournal, id: number, sentAt?: number): Promise<Job> {
  return transition(
    store,
    journal,
    id,
    RETRYABLE_JOB_STATES,
    'retried',
    (j) => ({
      ...j,
      state: j.kind === 'export' ? 'detected' : 'queued',
      attempts: j.attempts + 1,
      error: '',
      detail: `retry ${j.attempts} requested`,
      finished_at: '',
    }),
    { retry: true, sentAt },
  );
}

/** POST /api/jobs/{id}/cancel: before any data moved, or once interrupted (its ledger goes too). */
export async function cancelJob(store: Store, journal: EventJournal, id: number): Promise<Job> {
  const now = isoNow();
  return transition(
    store,
    journal,
    id,
    CANCELLABLE_JOB_STATES,
    'cancelled',
    (j) => ({ ...j, state: 'cancelled', detail: 'cancelled by request', finished_at: now }),
    { removeLedger: true },
  );
}
