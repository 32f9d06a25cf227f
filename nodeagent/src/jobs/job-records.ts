import { CartridgeSpec, Job, JobLedger, RemoteRecord, RemoteSecret, VtlError, isoNow, keys } from '@vtl/api';
import type { EventJournal, Store } from '@vtl/store';
import type { LedgerEntry, RemoteConnection } from './offsite.js';

/**
 * Changes a job with compare-and-swap and journals the full row as `job_update` (§6.2).
 * `mutate` returns undefined for "no change"; the job's state must still be `expect`.
 */
export async function updateJob(
  store: Store,
  journal: EventJournal,
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
  const job = result.value;
  await journal.emit({
    kind: 'job_update',
    subject: `job:${id}`,
    detail: `${job.kind} ${job.label}: ${job.state}${job.detail ? ` (${job.detail})` : ''}`,
    data: job,
  });
  return job;
}

/** The remote with its secret: what the engine needs to reach the bucket. */
export async function connectionFor(store: Store, remoteId: number): Promise<RemoteConnection> {
  const [record, secret] = await Promise.all([
    store.get(keys.remotes.one(remoteId), RemoteRecord),
    store.get(keys.remoteSecrets.one(remoteId), RemoteSecret),
  ]);
  if (!record) throw new VtlError('bad_request', `remote ${remoteId} no longer exists`);
  if (!secret)
    throw new VtlError(
      'bad_request',
      `remote ${remoteId} has no secret key; set one with PUT /api/remotes/${remoteId}`,
    );
  const { endpoint, region, bucket, prefix, access_key, use_ssl, path_style } = record.value;
  return {
    endpoint,
    region,
    bucket,
    prefix,
    access_key,
    secret_key: secret.value.secret_key,
    use_ssl,
    path_style,
  };
}

/** The chunks an earlier attempt verified, and the chunk size it used. */
export async function readLedger(
  store: Store,
  id: number,
): Promise<{ entries: LedgerEntry[]; chunkBytes?: number }> {
  const ledger = (await store.get(keys.jobLedgers.one(id), JobLedger))?.value;
  return { entries: ledger?.entries ?? [], chunkBytes: ledger?.chunk_bytes };
}

/** Persists the ledger and the job's progress after each verified chunk. */
export async function recordChunk(
  store: Store,
  journal: EventJournal,
  id: number,
  ledger: { entries: LedgerEntry[]; chunkBytes: number },
  progress: { bytes_done: number; chunks_done: number },
): Promise<void> {
  await store.put(keys.jobLedgers.one(id), {
    job: id,
    chunk_bytes: ledger.chunkBytes,
    entries: ledger.entries,
  } satisfies JobLedger);
  await updateJob(store, journal, id, 'uploading', () => ({
    ...progress,
    detail: `uploaded ${progress.chunks_done} chunks`,
  }));
}

/** Records the generation an export produced on the cartridge (§2.7 last_export_gen). */
export async function setLastExport(store: Store, label: string, generation: string): Promise<void> {
  await store.update(keys.cartridges.one(label), CartridgeSpec, (c) =>
    c && c.last_export_gen < generation ? { ...c, last_export_gen: generation } : undefined,
  );
}
