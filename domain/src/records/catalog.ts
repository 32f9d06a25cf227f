import { keys, type CatalogEntry } from '@vtl/api';
import type { Store } from '@vtl/store';

/**
 * The catalog (keys.catalog, §2.18): the cached list of the generations each remote holds. The
 * only module that writes it: an export adds its generation (nodeagent), a recovery or a catalog
 * rebuild writes what a bucket scan found (controller), a remote delete drops the remote's
 * entries (apiserver). An entry is a fact about the bucket, so a rewrite of it is harmless.
 */

/** etcd bounds the operations of one transaction. */
const TXN_CHUNK = 100;

const entryKey = (e: CatalogEntry) =>
  keys.catalog.one(e.remote_id, e.system_name, e.library_serial, e.cart_label, e.generation);

/** Writes catalog entries in transactions of TXN_CHUNK. */
export async function putCatalogEntries(store: Store, entries: CatalogEntry[]): Promise<void> {
  for (let i = 0; i < entries.length; i += TXN_CHUNK) {
    const txn = store.transaction();
    for (const e of entries.slice(i, i + TXN_CHUNK)) txn.put(entryKey(e), e);
    await txn.commit();
  }
}

/** Replaces a remote's cached catalog with a scan's entries (catalog rebuild). */
export async function replaceRemoteCatalog(
  store: Store,
  remoteId: number,
  entries: CatalogEntry[],
): Promise<void> {
  await store.deletePrefix(keys.catalog.remote(remoteId));
  await putCatalogEntries(store, entries);
}

/** Drops a remote's cached catalog (the remote is deleted; its bucket objects stay). */
export async function deleteRemoteCatalog(store: Store, remoteId: number): Promise<void> {
  await store.deletePrefix(keys.catalog.remote(remoteId));
}
