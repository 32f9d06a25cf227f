import { z } from 'zod';
import { conflict, isoNow, keys } from '@vtl/api';
import type { Store, Txn } from '@vtl/store';

/**
 * The Git sources of GitOps (docs/gitops.md): the spec (keys.gitopsSources), the outcome of its
 * polls (keys.gitopsSourceStatus) and a webhook's request for an early poll
 * (keys.gitopsPollRequests). The only module that writes them. The apiserver creates, changes
 * and deletes a source (its status and poll request go with it, in the same transaction) and
 * records a webhook's poll request; the leader controller's poller takes the requests and records
 * each poll's outcome. Both of the poller's writes are guarded by the source as it is now: a
 * source deleted during a poll (a fetch and an apply take seconds) gets no status back, and a
 * poll request is only written for a source that exists, so nothing is left that no one
 * removes. A source's sealed secrets (keys.gitopsSourceSecrets) are written by their own
 * module (records/gitops-secrets.ts); the writes here take that part as `secret`, added to the
 * same transaction. The records' schemas are the GitOps model's (@vtl/gitops GitSourceRecord,
 * SourceStatus): the caller gives them, so the domain needs no GitOps model.
 */

/** Compare-and-swap attempts before answering 409 (a source changed by every attempt). */
const ATTEMPTS = 20;

/** Adds the source's secret write to the transaction that writes the source. */
export type SourceSecretWrite = (txn: Txn) => void;

/** What this module reads of a source record: its name (the caller's schema has the rest). */
interface SourceFields {
  name: string;
}

/** Any record: the guards compare a record's revisions only. */
const Present = z.unknown();

/** Records a new source with its secret; false when a source of that name exists. */
export async function createGitSource(
  store: Store,
  record: SourceFields,
  secret: SourceSecretWrite,
): Promise<boolean> {
  const key = keys.gitopsSources.one(record.name);
  const txn = store.transaction().ifAbsent(key).put(key, record);
  secret(txn);
  return txn.commit();
}

/**
 * Changes a source by compare-and-swap: `change` gets the record as it is (read with `schema`),
 * `secret` (when the credential changes) adds the secret's write. Undefined when there is no
 * such source.
 */
export async function updateGitSource<T extends SourceFields>(
  store: Store,
  name: string,
  schema: z.ZodType<T>,
  change: (current: T) => T,
  secret?: SourceSecretWrite,
): Promise<T | undefined> {
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const current = await store.get(keys.gitopsSources.one(name), schema);
    if (!current) return undefined;
    const next = change(current.value);
    const txn = store.transaction().ifModRevision(current.key, current.modRevision);
    secret?.(txn);
    txn.put(current.key, next);
    if (await txn.commit()) return next;
  }
  throw conflict(`Git source "${name}" kept changing while updating it; retry.`);
}

/**
 * Deletes a source with its status, its poll request and (through `secret`) its secrets, in one
 * transaction at the source as read; false when there is no such source.
 */
export async function deleteGitSource(
  store: Store,
  name: string,
  secret: SourceSecretWrite,
): Promise<boolean> {
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const current = await store.get(keys.gitopsSources.one(name), Present);
    if (!current) return false;
    const txn = store
      .transaction()
      .ifModRevision(current.key, current.modRevision)
      .delete(current.key)
      .delete(keys.gitopsSourceStatus.one(name))
      .delete(keys.gitopsPollRequests.one(name));
    secret(txn);
    if (await txn.commit()) return true;
  }
  throw conflict(`Git source "${name}" kept changing while deleting it; retry.`);
}

/**
 * A webhook's request for an early poll, written only while the source exists (its delete
 * removes the request); false when there is no such source.
 */
export async function requestPoll(store: Store, name: string): Promise<boolean> {
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const source = await store.get(keys.gitopsSources.one(name), Present);
    if (!source) return false;
    const ok = await store
      .transaction()
      .ifModRevision(source.key, source.modRevision)
      .put(keys.gitopsPollRequests.one(name), { requested_at: isoNow() })
      .commit();
    if (ok) return true;
  }
  throw conflict(`Git source "${name}" kept changing while requesting its poll; retry.`);
}

/** The poller took a poll request: it goes, unless a newer request came meanwhile (that one stays). */
export function takePollRequest(store: Store, name: string, modRevision: string): Promise<boolean> {
  return store.delete(keys.gitopsPollRequests.one(name), { modRevision });
}

/**
 * Records the outcome of a poll of `source` (as the poller listed it): `next` gets the status as
 * it is (read with `schema`; undefined before the first poll). Only while that same source
 * exists: false, and nothing written, when it was deleted meanwhile (or deleted and made again
 * under its name, a source this poll did not fetch).
 */
export async function recordPollOutcome<S>(
  store: Store,
  source: { value: SourceFields; createRevision: string },
  schema: z.ZodType<S>,
  next: (current: S | undefined) => S,
): Promise<boolean> {
  const { name } = source.value;
  const statusKey = keys.gitopsSourceStatus.one(name);
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const current = await store.get(keys.gitopsSources.one(name), Present);
    if (!current || current.createRevision !== source.createRevision) return false;
    const status = await store.get(statusKey, schema);
    const txn = store.transaction().ifModRevision(current.key, current.modRevision);
    if (status) txn.ifModRevision(statusKey, status.modRevision);
    else txn.ifAbsent(statusKey);
    txn.put(statusKey, next(status?.value));
    if (await txn.commit()) return true;
  }
  throw conflict(`Git source "${name}" or its status kept changing while recording a poll; retry.`);
}
