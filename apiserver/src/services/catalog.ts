import { CatalogEntry, isoNow, keys } from '@vtl/api';
import type { Store } from '@vtl/store';
import { offsite } from './offsite.js';
import { remoteConnection } from './remotes.js';

/** etcd bounds the operations of one transaction. */
const TXN_CHUNK = 100;

/** GET /api/catalog: the cached generations of one remote, in key order. */
export async function listCatalog(store: Store, remoteId: number): Promise<CatalogEntry[]> {
  return (await store.list(keys.catalog.remote(remoteId), CatalogEntry)).items.map((i) => i.value);
}

/**
 * POST /api/catalog/rebuild: lists the bucket (fetching every manifest), then replaces the
 * remote's cached catalog. The scan runs first, so an unreachable bucket leaves the cache as it was.
 */
export async function rebuildCatalog(store: Store, remoteId: number) {
  const conn = await remoteConnection(store, remoteId);
  const scan = await offsite().scanBucket(conn);
  const now = isoNow();
  const entries: CatalogEntry[] = scan.complete.map((g) => ({
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
  await store.deletePrefix(keys.catalog.remote(remoteId));
  for (let i = 0; i < entries.length; i += TXN_CHUNK) {
    const txn = store.transaction();
    for (const e of entries.slice(i, i + TXN_CHUNK))
      txn.put(keys.catalog.one(remoteId, e.system_name, e.library_serial, e.cart_label, e.generation), e);
    await txn.commit();
  }
  return {
    complete: entries.length,
    incomplete: scan.incomplete.map((g) => ({
      system: g.system,
      library: g.library_serial,
      label: g.label,
      generation: g.generation,
    })),
  };
}
