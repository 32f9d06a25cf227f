import { randomUUID } from 'node:crypto';
import { isoNow, keys, UpdateRecord, type RestartRequest, type UpdateLastResult } from '@vtl/api';
import { AuditLog, type Store, type Txn } from '@vtl/store';

/*
 * Every write the updater process makes (api/src/keys.ts): the update records, the removal of the
 * apiserver's request, its restart requests, and its audit entries through AuditLog. Loaded only
 * by the updater's entries (main.ts and the settle run, takeover.ts), never by the apiserver,
 * which reads these records through update-records.ts and writes none of them.
 */

/**
 * An audit entry written by the updater itself (not through an HTTP request): the apply and the
 * rollback outlive the request that started them. The same bounded log as the apiserver's.
 */
export async function audit(store: Store, action: string, subject: string, ok: boolean, actor: string) {
  await new AuditLog(store).append({
    actor: { kind: 'user', name: actor },
    action,
    subject,
    outcome: ok ? 'ok' : 'failed',
    status: ok ? 200 : 500,
    method: '-',
    route: 'updater',
    request_id: randomUUID(),
  });
}

/**
 * Takes the apiserver's request `id` over as the pending record `take` makes of it, in one
 * transaction that removes the request, so the two never both exist. Undefined when the request
 * is not this one's (taken, or settled as never taken).
 */
export async function takeOverRequest(
  store: Store,
  id: string,
  take: (request: UpdateRecord) => Promise<UpdateRecord>,
): Promise<UpdateRecord | undefined> {
  const request = await store.get(keys.updateRequest, UpdateRecord);
  if (!request || request.value.id !== id) return undefined;
  const record = await take(request.value);
  const taken = await store
    .transaction()
    .ifModRevision(keys.updateRequest, request.modRevision)
    .ifAbsent(keys.update.pending)
    .delete(keys.updateRequest)
    .put(keys.update.pending, record)
    .commit();
  return taken ? record : undefined;
}

/** Whether the pending record is still the caller's (an updater's own, not settled meanwhile). */
export type Owns = (pending: UpdateRecord | undefined) => boolean;

/**
 * Rewrites the pending record while `owns` holds (compare-and-swap), so a late write never brings
 * back a record a settle run settled. The record written, or undefined when it is not ours.
 */
export async function patchPending(
  store: Store,
  owns: Owns,
  patch: (cur: UpdateRecord) => UpdateRecord,
): Promise<UpdateRecord | undefined> {
  let wrote: UpdateRecord | undefined;
  await store.update(keys.update.pending, UpdateRecord, (cur) => {
    wrote = owns(cur) ? patch(cur!) : undefined; // the last try's outcome counts
    return wrote;
  });
  return wrote;
}

/**
 * How an update or rollback ended: its last_result, and what becomes of last-good: this record
 * (what a later rollback reverts to), removed (null), or left (absent).
 */
export interface UpdateEnd {
  lastResult: UpdateLastResult;
  lastGood?: UpdateRecord | null;
}

function recordEnd(txn: Txn, end: UpdateEnd): Txn {
  txn.put(keys.update.lastResult, end.lastResult);
  if (end.lastGood) txn.put(keys.update.lastGood, end.lastGood);
  else if (end.lastGood === null) txn.delete(keys.update.lastGood);
  return txn;
}

/**
 * The updater ends its pending record: removed and `end` recorded in one transaction, while the
 * record is still its own and unchanged since read. `not_ours`: a settle run settled it;
 * `changed`: it changed between the read and the commit.
 */
export async function endPending(
  store: Store,
  owns: Owns,
  end: UpdateEnd,
): Promise<'ended' | 'not_ours' | 'changed'> {
  const cur = await store.get(keys.update.pending, UpdateRecord);
  if (!owns(cur?.value)) return 'not_ours';
  const txn = store
    .transaction()
    .ifModRevision(keys.update.pending, cur!.modRevision)
    .delete(keys.update.pending);
  return (await recordEnd(txn, end).commit()) ? 'ended' : 'changed';
}

/** The update or rollback in flight as found, with where and at which revision (settle runs). */
export interface FoundUpdate {
  record: UpdateRecord;
  /** Taken over by an updater (its pending record), or still the apiserver's request. */
  taken: boolean;
  modRevision: string;
}

/** The pending record, else a request no updater took over. */
export async function findInFlight(store: Store): Promise<FoundUpdate | undefined> {
  const pending = await store.get(keys.update.pending, UpdateRecord);
  const found = pending ?? (await store.get(keys.updateRequest, UpdateRecord));
  return found && { record: found.value, taken: pending !== undefined, modRevision: found.modRevision };
}

/**
 * A settle run ends an update whose updater is gone: the record found is removed at its revision
 * and `end` recorded, in one transaction (two settle runs never both settle it). False when it
 * changed meanwhile.
 */
export async function settleInFlight(store: Store, found: FoundUpdate, end: UpdateEnd): Promise<boolean> {
  const key = found.taken ? keys.update.pending : keys.updateRequest;
  return recordEnd(store.transaction().ifModRevision(key, found.modRevision).delete(key), end).commit();
}

/**
 * Asks every control-plane process to exit; the launcher starts them from `current` (§4.2 rule 1).
 * Unlike POST /api/system/restart, running jobs are resumed by the restarted nodeagent rather than
 * interrupted: an update must not need the operator to retry exports (docs/updates.md).
 */
export async function requestControlPlaneRestart(store: Store, reason: string): Promise<void> {
  const request: RestartRequest = {
    id: randomUUID(),
    requested_at: isoNow(),
    mode: 'immediate',
    resume_jobs: true,
    reason,
  };
  await store.put(keys.restartRequest, request);
}
