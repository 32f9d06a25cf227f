import {
  RemoteRecord,
  conflict,
  isJobActive,
  keys,
  notFound,
  type CreateRemoteRequest,
  type Remote,
  type UpdateRemoteRequest,
} from '@vtl/api';
import type { Store, Txn } from '@vtl/store';
import { Job } from '@vtl/api';
import { settingsWithoutRemote } from './settings.js';
import { createRemoteRecord, deleteRemoteCatalog, removeRemote, updateRemoteRecord } from '@vtl/domain';

/** Remotes that have a stored secret, from the keys alone: listing never reads a secret value. */
async function idsWithSecret(store: Store): Promise<Set<number>> {
  const secretKeys = await store.listKeys(keys.remoteSecrets.prefix);
  return new Set(secretKeys.map((k) => Number.parseInt(k.slice(keys.remoteSecrets.prefix.length), 10)));
}

const view = (r: RemoteRecord, secrets: Set<number>): Remote => ({ ...r, has_secret: secrets.has(r.id) });

/** GET /api/remotes. */
export async function listRemotes(store: Store): Promise<Remote[]> {
  const [records, secrets] = await Promise.all([
    store.list(keys.remotes.prefix, RemoteRecord),
    idsWithSecret(store),
  ]);
  return records.items.map((i) => view(i.value, secrets));
}

/** One stored remote; 404 when unknown. */
export async function remoteRecord(store: Store, id: number): Promise<RemoteRecord> {
  const found = await store.get(keys.remotes.one(id), RemoteRecord);
  if (!found) throw notFound(`No remote ${id}; GET /api/remotes lists them.`);
  return found.value;
}

/** One remote as the API returns it. */
export async function getRemote(store: Store, id: number): Promise<Remote> {
  const [record, secrets] = await Promise.all([remoteRecord(store, id), idsWithSecret(store)]);
  return view(record, secrets);
}

/** POST /api/remotes: the record and its secret in one transaction. */
export async function createRemote(store: Store, body: CreateRemoteRequest): Promise<Remote> {
  const { secret_key, ...fields } = body;
  const record = await createRemoteRecord(store, fields, secret_key);
  if (!record) throw conflict('Remotes kept being created meanwhile; retry.');
  return { ...record, has_secret: true };
}

/** PUT /api/remotes/{id}: omitted fields keep their values; an empty secret keeps the stored one. */
export async function updateRemote(store: Store, id: number, body: UpdateRemoteRequest): Promise<Remote> {
  const { secret_key, ...fields } = body;
  const defined = Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined));
  if (!(await updateRemoteRecord(store, id, defined, secret_key)))
    throw notFound(`No remote ${id}; GET /api/remotes lists them.`);
  return getRemote(store, id);
}

/**
 * DELETE /api/remotes/{id}: configuration, secret and cached catalog go; bucket objects stay.
 * Refused while a job that is not finished uses the remote (it would lose its bucket).
 */
export async function deleteRemote(store: Store, id: number): Promise<void> {
  await remoteRecord(store, id);
  // The jobs as checked are compared in the delete's transaction: a job admitted for this remote
  // meanwhile makes the delete re-check (and refuse) instead of leaving the job without a remote.
  const unused = async () => {
    const listed = await store.list(keys.jobs.prefix, Job);
    const jobs = listed.items
      .map((i) => i.value)
      .filter((j) => j.remote_id === id && (isJobActive(j.state) || j.state === 'interrupted'));
    if (jobs.length > 0)
      throw conflict(
        `Remote ${id} is used by job(s) ${jobs.map((j) => j.id).join(', ')}; wait for or cancel them first.`,
        { jobs: jobs.map((j) => j.id) },
      );
    return (txn: Txn) => void txn.ifUnchangedSince(keys.jobs.prefix, listed.revision);
  };
  await deleteRemoteRecord(store, id, unused);
  await deleteRemoteCatalog(store, id);
}

/**
 * Deletes a remote's record and secret with what that does to the settings
 * (settingsWithoutRemote), in one transaction. Retries while the remotes or the settings change
 * underneath; a remote created in that window only means the (hidden) no-offsite warning would
 * show again after its deletion, as it should.
 */
export async function deleteRemoteRecord(
  store: Store,
  id: number,
  /** Re-checks before each attempt (throws the refusal) and returns what the transaction compares. */
  recheck: () => Promise<(txn: Txn) => void> = async () => () => undefined,
): Promise<boolean> {
  return removeRemote(store, id, (remotesLeft) => settingsWithoutRemote(store, id, remotesLeft), recheck);
}
