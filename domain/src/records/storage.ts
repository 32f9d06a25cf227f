import { StorageSpec, conflict, keys } from '@vtl/api';
import type { Store, Versioned } from '@vtl/store';

/**
 * A node's shared-storage spec (keys.storage, docs/storage.md): the only module that writes it.
 * The apiserver sets it up, grows it, changes its dedup schedule and marks it `deleting`, each
 * by compare-and-swap on the record as read (a concurrent change gets 409); the node's
 * nodeagent removes it, with its status, once it has torn the storage down.
 */

/** Records a node's new storage; false when the node has one already. */
export async function createStorage(store: Store, spec: StorageSpec): Promise<boolean> {
  return store
    .transaction()
    .ifAbsent(keys.storage.one(spec.node))
    .put(keys.storage.one(spec.node), spec)
    .commit();
}

/** Writes a changed storage spec if nobody changed it since it was read (409 otherwise). */
export async function replaceStorage(
  store: Store,
  read: Versioned<StorageSpec>,
  spec: StorageSpec,
): Promise<void> {
  const ok = await store
    .transaction()
    .ifModRevision(keys.storage.one(spec.node), read.modRevision)
    .put(keys.storage.one(spec.node), spec)
    .commit();
  if (!ok) throw conflict(`The storage of node ${spec.node} changed meanwhile; ask again.`);
}

/** Asks for the teardown of a node's storage (its nodeagent carries it out); idempotent. */
export async function markStorageDeleting(store: Store, read: Versioned<StorageSpec>): Promise<void> {
  if (!read.value.deleting) await replaceStorage(store, read, { ...read.value, deleting: true });
}

/** Removes the spec and status of storage its nodeagent tore down, if the spec is as it read it. */
export async function removeStorage(store: Store, node: string, modRevision: string): Promise<boolean> {
  return store
    .transaction()
    .ifModRevision(keys.storage.one(node), modRevision)
    .delete(keys.storage.one(node))
    .delete(keys.storageStatus.one(node))
    .commit();
}
