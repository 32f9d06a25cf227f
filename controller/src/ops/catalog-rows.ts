import { CatalogEntry, isoNow, keys } from '@vtl/api';
import type { ScannedGeneration } from '@vtl/offsite';
import type { Store } from '@vtl/store';

/** etcd bounds the operations of one transaction. */
const TXN_CHUNK = 100;

/** The catalog entries (§2.18) of scanned generations, synced now. */
export function catalogEntries(remoteId: number, scanned: ScannedGeneration[]): CatalogEntry[] {
  const now = isoNow();
  return scanned.map((g) => ({
    remote_id: remoteId,
    system_name: g.system,
    library_serial: g.library_serial,
    cart_label: g.label,
    generation: g.generation,
    logical_bytes: g.logical_bytes,
    stored_bytes: g.stored_bytes,
    chunk_count: g.chunk_count,
    exported_at: g.exported_at,
    synced_at: now,
  }));
}

/** Writes catalog entries in transactions of TXN_CHUNK; a rewrite of the same entry is harmless. */
export async function putCatalogEntries(store: Store, entries: CatalogEntry[]): Promise<void> {
  for (let i = 0; i < entries.length; i += TXN_CHUNK) {
    const txn = store.transaction();
    for (const e of entries.slice(i, i + TXN_CHUNK))
      txn.put(keys.catalog.one(e.remote_id, e.system_name, e.library_serial, e.cart_label, e.generation), e);
    await txn.commit();
  }
}
