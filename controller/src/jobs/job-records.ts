import { Job, isoNow, keys } from '@vtl/api';
import type { EventJournal, Store } from '@vtl/store';

/** Stores a new job under the next id of the `jobs` counter and journals it as `job_update`. */
export async function createJob(
  store: Store,
  journal: EventJournal,
  fields: Omit<Job, 'id' | 'created_at' | 'updated_at' | 'bytes_done' | 'chunks_done' | 'attempts'>,
): Promise<Job> {
  const id = await store.nextId('jobs');
  const now = isoNow();
  const job = Job.parse({
    ...fields,
    id,
    bytes_done: 0,
    chunks_done: 0,
    attempts: 1,
    created_at: now,
    updated_at: now,
  });
  if (!(await store.create(keys.jobs.one(id), job))) throw new Error(`job id ${id} was taken`);
  await journal.emit({
    kind: 'job_update',
    subject: `job:${id}`,
    detail: `${job.kind} ${job.label}: ${job.state} (${job.detail})`,
    data: job,
  });
  return job;
}
