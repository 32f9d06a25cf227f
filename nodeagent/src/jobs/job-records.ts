import { CartridgeSpec, JobLedger, keys } from '@vtl/api';
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
