import { CartridgeSpec, JobLedger, RemoteRecord, RemoteSecret, VtlError, keys } from '@vtl/api';
import { type EventJournal, type Store } from '@vtl/store';
import { updateJob } from '@vtl/domain';
import type { LedgerEntry, RemoteConnection } from './offsite.js';

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
