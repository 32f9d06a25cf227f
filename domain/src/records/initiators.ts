import {
  InitiatorRecord,
  keys,
  type InitiatorChap,
  type InitiatorChapSecret,
  type ManagedBy,
} from '@vtl/api';
import type { Store } from '@vtl/store';
import { releaseThrough, withManagedBy } from './managed-by.js';
import { resealUnder, type Resealed } from './reseal.js';

/**
 * The initiator records (keys.initiators) and their CHAP secrets (keys.initiatorSecrets): the
 * only module that writes them (the apiserver's target registry; the secrets re-sealed by a
 * seal rotation). A record and its secret record are written in one transaction, so a login
 * never sees a username without its secret. A GitOps source claims an initiator it declares
 * (managed_by, records/managed-by.ts) and releases it when the source is deleted.
 */

/**
 * How a registry write changes an initiator's CHAP: the usernames for its record and the
 * secrets for its own record under /vtl/secrets/ (`null`: CHAP off, both go).
 */
export interface ChapChange {
  record: InitiatorChap | null;
  secret: InitiatorChapSecret | null;
}

/** The record with the change's usernames (or without CHAP). */
function withChap(record: InitiatorRecord, change: ChapChange | undefined): InitiatorRecord {
  if (!change) return record;
  const { chap: _old, ...rest } = record;
  return change.record ? { ...rest, chap: change.record } : rest;
}

/**
 * Creates the record and its secret record together (a leftover secret goes); undefined when
 * the initiator is registered already. Returns the record's revision for the live-apply wait.
 */
export async function createInitiatorRecord(
  store: Store,
  record: InitiatorRecord,
  change: ChapChange | undefined,
): Promise<{ modRevision: string } | undefined> {
  const key = keys.initiators.one(record.wwpn);
  const txn = store.transaction().ifAbsent(key).put(key, withChap(record, change));
  const secretKey = keys.initiatorSecrets.one(record.wwpn);
  if (change?.secret) txn.put(secretKey, change.secret);
  else txn.delete(secretKey);
  if (!(await txn.commit())) return undefined;
  return store.get(key, InitiatorRecord);
}

/**
 * Read-modify-write of an initiator: the record (by `next`) and, when `change` is given, its
 * CHAP usernames and secret record, in one transaction retried on a concurrent change.
 * undefined when it is gone.
 */
export async function updateInitiatorRecord(
  store: Store,
  name: string,
  next: (cur: InitiatorRecord) => InitiatorRecord,
  change: ChapChange | undefined,
): Promise<{ modRevision: string } | undefined> {
  const key = keys.initiators.one(name);
  const secretKey = keys.initiatorSecrets.one(name);
  for (;;) {
    const current = await store.get(key, InitiatorRecord);
    if (!current) return undefined;
    const txn = store
      .transaction()
      .ifModRevision(key, current.modRevision)
      .put(key, withChap(next(current.value), change));
    if (change?.secret) txn.put(secretKey, change.secret);
    else if (change) txn.delete(secretKey);
    if (await txn.commit()) return store.get(key, InitiatorRecord);
  }
}

/** Deletes the record at `modRevision` and its secrets together; false when it changed meanwhile. */
export function deleteInitiatorRecord(store: Store, name: string, modRevision: string): Promise<boolean> {
  const key = keys.initiators.one(name);
  return store
    .transaction()
    .ifModRevision(key, modRevision)
    .delete(key)
    .delete(keys.initiatorSecrets.one(name))
    .commit();
}

/** Records the GitOps source that declares an initiator (records/managed-by.ts has the rule). */
export async function claimInitiator(store: Store, name: string, managed: ManagedBy): Promise<void> {
  const key = keys.initiators.one(name);
  await store.update(key, InitiatorRecord, (cur) => withManagedBy(cur, managed, key));
}

/** Drops a deleted GitOps source's claim on an initiator; true when it held one. */
export async function releaseInitiator(store: Store, name: string, source: string): Promise<boolean> {
  return releaseThrough<InitiatorRecord>(
    (mutate) => store.update(keys.initiators.one(name), InitiatorRecord, mutate),
    source,
  );
}

/**
 * Seals the initiators' CHAP secrets again under the sealing key kid (appliance/src/seal-rotation.ts),
 * each by compare-and-swap at the revision read: one changed meanwhile keeps its new value
 * and is counted as changed (records/reseal.ts).
 */
export function resealInitiatorSecrets(store: Store, kid: string): Promise<Resealed> {
  return resealUnder(store, keys.initiatorSecrets.prefix, kid, (key, value, modRevision) =>
    // writes keys.initiatorSecrets
    store.casPut(key, value, modRevision),
  );
}
