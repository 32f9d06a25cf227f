import {
  CANCELLABLE_JOB_STATES,
  CatalogEntry,
  Job,
  JobKind,
  JobState,
  RETRYABLE_JOB_STATES,
  RemoteRecord,
  badRequest,
  conflict,
  isJobActive,
  isoNow,
  keys,
  notFound,
} from '@vtl/api';
import type { EventJournal, Store } from '@vtl/store';
import { publishJob, busyLabel, exclusiveOpBusy, readExclusiveOp, readLabelClaim } from '@vtl/domain';
import type { z } from 'zod';
import type { JobListQuery } from '@vtl/api';

/** A stored remote named in a request body or query: 400 when it does not exist. */
export async function referencedRemote(store: Store, id: number): Promise<RemoteRecord> {
  const found = await store.get(keys.remotes.one(id), RemoteRecord);
  if (!found) throw badRequest(`remote_id ${id}: no such remote; GET /api/remotes lists them.`);
  return found.value;
}

/** Catalog generations of a remote for one label (optionally of one system). */
export async function catalogGenerations(store: Store, remoteId: number, label: string, system?: string) {
  const items = (await store.list(keys.catalog.remote(remoteId), CatalogEntry)).items.map((i) => i.value);
  return items.filter((e) => e.cart_label === label && (system === undefined || e.system_name === system));
}

/** 409 when another unfinished job already works on the label. */
export function refuseBusyLabel(jobs: Job[], label: string): void {
  const busy = jobs.filter((j) => j.label === label && isJobActive(j.state));
  if (busy.length > 0) throw busyLabel(label, busy);
}

const list = <T extends string>(value: string | undefined, schema: z.ZodEnum<Record<T, T>>, what: string) => {
  if (!value) return undefined;
  const parts = value
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean);
  for (const p of parts)
    if (!schema.options.includes(p as T))
      throw badRequest(`${what} "${p}" is not one of ${schema.options.join(', ')}.`);
  return new Set(parts);
};

/** GET /api/jobs: newest first, filtered. */
export function listJobs(jobs: readonly Job[], q: z.infer<typeof JobListQuery>): Job[] {
  const states = list(q.state, JobState, 'state');
  const kinds = list(q.kind, JobKind, 'kind');
  const label = q.label?.trim().toUpperCase();
  return jobs
    .filter(
      (j) =>
        (!states || states.has(j.state)) &&
        (!kinds || kinds.has(j.kind)) &&
        (!label || j.label === label) &&
        (q.remote_id === undefined || j.remote_id === q.remote_id),
    )
    .sort((a, b) => b.id - a.id)
    .slice(0, q.limit);
}

/** One job; 404 when unknown. */
export function getJob(jobs: readonly Job[], id: number): Job {
  const found = jobs.find((j) => j.id === id);
  if (!found) throw notFound(`No job ${id}; GET /api/jobs lists them.`);
  return found;
}

/**
 * When this apiserver last retried each job, in milliseconds (updated_at has whole seconds).
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

/** Transaction attempts of a retry or cancel; a lost one re-reads and re-checks the job. */
const TRANSITION_ATTEMPTS = 8;

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
  opts: { retry?: boolean; sentAt?: number } = {},
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
  const job = await transition(store, journal, id, CANCELLABLE_JOB_STATES, 'cancelled', (j) => ({
    ...j,
    state: 'cancelled',
    detail: 'cancelled by request',
    finished_at: now,
  }));
  await store.delete(keys.jobLedgers.one(id));
  return job;
}
