import { Job, VtlError, isoNow, keys, type JobInput, type NewEvent } from '@vtl/api';

/**
 * The job record's rules: how a new row starts, that every change is a compare-and-swap from
 * an expected state, and that each row written is announced as `job_update` (§6.2). The store
 * and the event journal come in as the two small ports below (the etcd Store and EventJournal
 * fit them), so the rules stay out of the etcd client.
 */
export interface JobStore {
  nextId(counter: string): Promise<number>;
  create(key: string, value: Job): Promise<unknown>;
  update(
    key: string,
    schema: typeof Job,
    mutate: (current: Job | undefined) => Job | undefined,
  ): Promise<{ value: Job } | undefined>;
}

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

/** Stores a new job under the next id of the `jobs` counter and announces it. */
export async function createJob(store: JobStore, journal: JobJournal, fields: NewJob): Promise<Job> {
  const id = await store.nextId('jobs');
  const job = newJobRow(fields, id);
  if (!(await store.create(keys.jobs.one(id), job)))
    throw new VtlError('internal', `Job id ${id} was taken; retry.`);
  await publishJob(journal, job);
  return job;
}

/**
 * Changes a job with compare-and-swap and announces the new row. `mutate` returns undefined
 * for "no change"; nothing is written unless the job is still in state `expect`.
 */
export async function updateJob(
  store: JobStore,
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
