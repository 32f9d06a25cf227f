import path from 'node:path';
import { z } from 'zod';
import { keys, UpdateLastResult, UpdateRecord, type OrphanImage } from '@vtl/api';
import type { EventJournal, Store } from '@vtl/store';

/**
 * What a rollback does not restore: the update records themselves, the restart request (every
 * control-plane process compares it with the one it saw), and the event journal and audit log
 * with their counters, which are the history of what happened, not state to go back on.
 */
export const SNAPSHOT_EXCLUDES = [
  keys.update.prefix,
  keys.updateRequest,
  keys.restartRequest,
  keys.events.prefix,
  keys.audit.prefix,
  keys.counter('events'),
  keys.counter('audit'),
];

/** Where one update's files live: the uploaded bundle's parts and the store snapshot. */
export const updateDir = (stateDir: string, id: string) => path.join(stateDir, 'updates', id);

/** Event kinds of an update (§6: kinds are informational; docs/updates.md lists them). */
export const UPDATE_STEP = 'update_step';
export const UPDATE_DONE = 'update_done';
/** A rollback left cartridge images whose records it dropped (data kept, listed in `data.orphans`). */
export const UPDATE_ORPHAN_IMAGES = 'update_orphan_images';
/** The apiserver settled a pending record whose updater was gone. */
export const UPDATE_TAKEN_OVER = 'update_taken_over';

/** Records a step in the journal (best effort: a step is never held up by the journal). */
export async function step(
  journal: EventJournal,
  record: UpdateRecord,
  label: string,
  data: Record<string, unknown> = {},
) {
  await journal
    .emit({
      kind: UPDATE_STEP,
      subject: `${record.action}:${record.to_version}`,
      detail: label,
      data: { id: record.id, from: record.from_version, to: record.to_version, ...data },
    })
    .catch(() => undefined);
}

export function lastResult(
  ok: boolean,
  record: UpdateRecord,
  version: string,
  detail: string,
  orphanImages: OrphanImage[] = [],
): UpdateLastResult {
  return {
    ok,
    action: record.action,
    version,
    detail,
    at: new Date().toISOString(),
    orphan_images: orphanImages,
  };
}

/**
 * The update or rollback in flight: the updater's pending record, else the apiserver's request no
 * updater has taken over yet. The request is read first: the takeover removes it as it writes
 * the pending record, so a record in flight at both reads is never missed between them.
 */
export async function readPending(store: Store): Promise<UpdateRecord | undefined> {
  const request = await store.get(keys.updateRequest, UpdateRecord);
  return (await store.get(keys.update.pending, UpdateRecord))?.value ?? request?.value;
}
export const readLastGood = async (store: Store) =>
  (await store.get(keys.update.lastGood, UpdateRecord))?.value;

/** The update records as of one store revision (GET /api/system/update-status). */
export interface UpdateRecords {
  pending?: UpdateRecord;
  lastGood?: UpdateRecord;
  lastResult?: UpdateLastResult;
}

/**
 * Reads the update records in one range read, so they are all of one revision: separate reads
 * could see the pending record gone (ended) next to the last result and last-good written before
 * it ended, i.e. the previous update's result as if this one had settled. The request is read
 * first, as in readPending.
 */
export async function readUpdateRecords(store: Store): Promise<UpdateRecords> {
  const request = await store.get(keys.updateRequest, UpdateRecord);
  const { items } = await store.list(keys.update.prefix, z.unknown());
  const value = (key: string) => items.find((item) => item.key === key)?.value;
  const pending = value(keys.update.pending);
  const lastGood = value(keys.update.lastGood);
  const lastResult = value(keys.update.lastResult);
  return {
    pending: pending === undefined ? request?.value : UpdateRecord.parse(pending),
    lastGood: lastGood === undefined ? undefined : UpdateRecord.parse(lastGood),
    lastResult: lastResult === undefined ? undefined : UpdateLastResult.parse(lastResult),
  };
}
