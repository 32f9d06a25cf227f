import { RemoteRecord, RemoteSecret, conflict, isoNow, keys, type ManagedBy } from '@vtl/api';
import type { Store, Txn } from '@vtl/store';
import { z } from 'zod';
import { releaseThrough, withManagedBy } from './managed-by.js';
import { resealUnder, type Resealed } from './reseal.js';

/**
 * The remote records (keys.remotes) and their secrets (keys.remoteSecrets): the only module
 * that writes them (written by the apiserver; the last check's result by the controller's
 * remote test op; the secrets re-sealed by a seal rotation). A remote is created with its id
 * and secret in one transaction (a refused create leaves the id counter), changed by
 * compare-and-swap, and deleted with its secret and, in the same transaction, what that does
 * to the settings. A GitOps source claims a remote it declares (managed_by,
 * records/managed-by.ts) and releases it when the source is deleted.
 */

/** The configuration of a remote, as sent: everything but the id, the dates and the check. */
export type RemoteFields = Omit<
  RemoteRecord,
  'id' | 'created_at' | 'last_test_at' | 'last_test_ok' | 'last_test_detail' | 'managed_by'
>;

/** Creates a remote and its secret; undefined when another create kept taking the id. */
export async function createRemoteRecord(
  store: Store,
  fields: RemoteFields,
  secret_key: string,
): Promise<RemoteRecord | undefined> {
  return store.withNewId('remotes', 1, async (next) => {
    const created: RemoteRecord = {
      id: next.id,
      ...fields,
      created_at: isoNow(),
      last_test_at: '',
      last_test_ok: false,
      last_test_detail: '',
    };
    const txn = store.transaction();
    next.take(txn);
    txn
      .ifAbsent(keys.remotes.one(next.id))
      .put(keys.remotes.one(next.id), created)
      .put(keys.remoteSecrets.one(next.id), { secret_key } satisfies RemoteSecret);
    return (await txn.commit()) ? created : undefined;
  });
}

/**
 * Changes a remote's configuration (the fields given) and, when `secret_key` is not empty, its
 * secret, in one compare-and-swap; false when there is no such remote, 409 conflict when it
 * kept changing under 20 attempts (it never loops without end).
 */
export async function updateRemoteRecord(
  store: Store,
  id: number,
  fields: Partial<RemoteFields>,
  secret_key: string | undefined,
): Promise<boolean> {
  for (let attempt = 0; attempt < 20; attempt++) {
    const current = await store.get(keys.remotes.one(id), RemoteRecord);
    if (!current) return false;
    const next: RemoteRecord = { ...current.value, ...fields };
    const txn = store.transaction().ifModRevision(current.key, current.modRevision).put(current.key, next);
    if (secret_key) txn.put(keys.remoteSecrets.one(id), { secret_key } satisfies RemoteSecret);
    if (await txn.commit()) return true;
  }
  throw conflict(`Remote ${id} kept changing while updating it; retry.`);
}

/** Records the result of a remote's check (the controller's test op); nothing when it is gone. */
export async function recordRemoteTest(
  store: Store,
  id: number,
  result: { ok: boolean; detail: string },
): Promise<void> {
  await store.update(keys.remotes.one(id), RemoteRecord, (cur) =>
    cur
      ? { ...cur, last_test_at: isoNow(), last_test_ok: result.ok, last_test_detail: result.detail }
      : undefined,
  );
}

/**
 * Deletes a remote's record and secret with `alongside` (what the delete does to the other
 * records, given how many remotes are left) in one transaction, compared with every remote as
 * listed. Retries while the remotes or the compared records change; false when it is gone.
 */
export async function removeRemote(
  store: Store,
  id: number,
  alongside: (remotesLeft: number) => Promise<(txn: Txn) => void>,
  /** Re-checks before each attempt (throws the refusal) and returns what the transaction compares. */
  recheck: () => Promise<(txn: Txn) => void>,
): Promise<boolean> {
  for (let attempt = 0; attempt < 20; attempt++) {
    const guard = await recheck();
    const { items } = await store.list(keys.remotes.prefix, z.unknown());
    if (!items.some((i) => i.key === keys.remotes.one(id))) return false;
    const more = await alongside(items.length - 1);
    const txn = store.transaction();
    for (const r of items) txn.ifModRevision(r.key, r.modRevision);
    more(txn);
    guard(txn);
    txn.delete(keys.remotes.one(id)).delete(keys.remoteSecrets.one(id));
    if (await txn.commit()) return true;
  }
  throw conflict('The remotes kept changing while deleting one; retry.');
}

/** Records the GitOps source that declares a remote (records/managed-by.ts has the rule). */
export async function claimRemote(store: Store, id: number, managed: ManagedBy): Promise<void> {
  const key = keys.remotes.one(id);
  await store.update(key, RemoteRecord, (cur) => withManagedBy(cur, managed, key));
}

/** Drops a deleted GitOps source's claim on a remote; true when it held one. */
export async function releaseRemote(store: Store, id: number, source: string): Promise<boolean> {
  return releaseThrough<RemoteRecord>(
    (mutate) => store.update(keys.remotes.one(id), RemoteRecord, mutate),
    source,
  );
}

/**
 * Seals the remotes' secrets again under the sealing key kid (appliance/src/seal-rotation.ts),
 * each by compare-and-swap at the revision read: one changed meanwhile keeps its new value
 * and is counted as changed (records/reseal.ts).
 */
export function resealRemoteSecrets(store: Store, kid: string): Promise<Resealed> {
  return resealUnder(store, keys.remoteSecrets.prefix, kid, (key, value, modRevision) =>
    // writes keys.remoteSecrets
    store.casPut(key, value, modRevision),
  );
}
