import { Op, VtlError, conflict, isoNow, keys, type OpKind } from '@vtl/api';
import type { Store, Txn } from '@vtl/store';

/**
 * The operation records (keys.ops): how one is requested. An operation is recorded pending for
 * its executor, which alone moves it on (reconcile/src/op-runner.ts).
 */
export interface SubmitOp {
  kind: OpKind;
  executor: string;
  params: Record<string, unknown>;
  requestedBy?: string;
}

/** A new operation's record, pending for its executor. */
function newOpRecord(id: number, req: SubmitOp): Op {
  return {
    id,
    kind: req.kind,
    executor: req.executor,
    params: req.params,
    state: 'pending',
    steps: [],
    requested_by: req.requestedBy ?? '',
    created_at: isoNow(),
  };
}

/**
 * The part of a transaction that records a new operation `id`, pending for its executor: alone
 * (submitOp) or with the exclusive claim it takes (exclusive-op.ts), in that claim's transaction.
 */
export function recordNewOp(txn: Txn, id: number, req: SubmitOp): Txn {
  return txn.ifAbsent(keys.ops.one(id)).put(keys.ops.one(id), newOpRecord(id, req));
}

/** Records an operation for its executor to carry out; returns its id at once. */
export async function submitOp(store: Store, req: SubmitOp): Promise<number> {
  const id = await store.withNewId('ops', 1, async (next) => {
    const txn = store.transaction();
    next.take(txn);
    recordNewOp(txn, next.id, req);
    return (await txn.commit()) ? next.id : undefined;
  });
  if (id === undefined) throw conflict('Operations kept being submitted meanwhile; retry.');
  return id;
}

/** Appends steps to an operation's record (compare-and-swap); returns all its steps. */
export async function appendOpSteps(store: Store, id: number, steps: string[]): Promise<string[]> {
  if (steps.length === 0) return (await store.get(keys.ops.one(id), Op))?.value.steps ?? [];
  const next = await store.update(keys.ops.one(id), Op, (cur) =>
    cur ? { ...cur, steps: [...cur.steps, ...steps] } : undefined,
  );
  return next?.value.steps ?? steps;
}

/**
 * The part of a transaction that records an operation's progress and a step, against its
 * record as read now: the transaction fails if anything else changed the operation meanwhile.
 */
export async function opProgressWrite(
  store: Store,
  id: number,
  progress: Record<string, unknown>,
  step: string,
): Promise<(txn: Txn) => void> {
  const key = keys.ops.one(id);
  const current = await store.get(key, Op);
  if (!current) throw new VtlError('internal', `Operation ${id} is gone.`);
  const next: Op = { ...current.value, progress, steps: [...current.value.steps, step] };
  return (txn) => txn.ifModRevision(key, current.modRevision).put(key, next);
}

/** Removes an operation's record if it is still at modRevision (the collector's old ops). */
export async function removeOp(store: Store, id: number, modRevision?: string): Promise<boolean> {
  return store.delete(keys.ops.one(id), { modRevision });
}

/**
 * Writes a result too big for its op record (a bucket listing) as numbered parts, in place of any
 * a crashed earlier run of the op left; returns how many. Their reader removes them.
 */
export async function writeOpResultParts(store: Store, id: number, parts: unknown[][]): Promise<number> {
  await store.deletePrefix(keys.opResults.of(id));
  for (const [n, part] of parts.entries()) await store.put(keys.opResults.part(id, n), part);
  return parts.length;
}

/** Removes the result parts an operation left (their reader took them, or nobody will). */
export async function removeOpResults(store: Store, id: number): Promise<number> {
  return store.deletePrefix(keys.opResults.of(id));
}
