import { Op, VtlError, isOpFinished, keys } from '@vtl/api';
import type { Store } from '@vtl/store';
import { submitExclusiveOp, type Snapshot, type SubmitOp } from '@vtl/domain';
import { watchOpUntilFinished } from '@vtl/reconcile';
import { awaitOpResult, stillRunning } from './ops.js';

/**
 * Submits an operation that needs every job stopped (apply, data-plane restart, library delete;
 * domain/src/records/exclusive-op.ts) and waits for it. An apply refused because another apply
 * runs (a recovery's, whose activation timed out while its node was down) waits for that one
 * within the same wait, then goes ahead: applying is what docs/api.md tells the operator to do
 * then. Past the wait, the 504 names the apply still running.
 */
export async function runExclusiveOp<T>(
  store: Store,
  req: SubmitOp,
  what: string,
  timeoutMs: number,
  check: (s: Snapshot) => void = () => undefined,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  const submit = () => submitExclusiveOp(store, req, what, check);
  let id: number;
  try {
    id = await submit();
  } catch (err) {
    const running = await sameKindRunning(store, req, err);
    if (running === undefined) throw err;
    const last = await watchOpUntilFinished(store, running, Math.max(0, deadline - Date.now()));
    if (!last || !isOpFinished(last))
      throw new VtlError('timeout', stillRunning(running, last), { op: running });
    id = await submit();
  }
  return awaitOpResult<T>(store, id, Math.max(1, deadline - Date.now()));
}

/** The id of the operation of req's kind (an apply) that a 409 refusal names, if it is one. */
async function sameKindRunning(store: Store, req: SubmitOp, err: unknown): Promise<number | undefined> {
  if (req.kind !== 'apply' || !(err instanceof VtlError) || err.code !== 'conflict') return undefined;
  const op = Number(err.details?.op);
  if (!op) return undefined;
  const found = await store.get(keys.ops.one(op), Op);
  return found?.value.kind === req.kind ? op : undefined;
}
