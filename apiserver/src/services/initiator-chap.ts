import {
  InitiatorRecord,
  badRequest,
  keys,
  type ChapInput,
  type Fabric,
  type InitiatorChap,
  type InitiatorChapSecret,
} from '@vtl/api';
import type { Store } from '@vtl/store';

/**
 * How a registry write changes an initiator's CHAP: the usernames for its record and the
 * secrets for its own record under /vtl/secrets/ (`null`: CHAP off, both go). Both land in one
 * transaction with the record, so a login never sees a username without its secret.
 */
export interface ChapChange {
  record: InitiatorChap | null;
  secret: InitiatorChapSecret | null;
}

/** The change a request's `chap` asks for; undefined when it leaves CHAP alone (PUT without it). */
export function chapChange(input: ChapInput | null | undefined, fabric: Fabric): ChapChange | undefined {
  if (input === undefined) return undefined;
  if (input === null) return { record: null, secret: null };
  if (fabric !== 'iscsi')
    throw badRequest('chap is for iSCSI initiators (fabric iscsi); Fibre Channel logins have no CHAP.');
  return {
    record: { username: input.username, mutual_username: input.mutual_username ?? '' },
    secret: {
      username: input.username,
      secret: input.secret,
      mutual_username: input.mutual_username ?? '',
      mutual_secret: input.mutual_secret ?? '',
    },
  };
}

/** The record with the change's usernames (or without CHAP). */
export function withChap(record: InitiatorRecord, change: ChapChange | undefined): InitiatorRecord {
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
 * Read-modify-write of an initiator whose CHAP changes: the record (by `next`) and its secret
 * record in one transaction, retried on a concurrent change. undefined when it is gone.
 */
export async function updateInitiatorWithChap(
  store: Store,
  name: string,
  next: (cur: InitiatorRecord) => InitiatorRecord,
  change: ChapChange,
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
    if (change.secret) txn.put(secretKey, change.secret);
    else txn.delete(secretKey);
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
