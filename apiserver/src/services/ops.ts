import { Op, VtlError, isOpFinished, isoNow, keys, type OpKind } from '@vtl/api';
import type { Store } from '@vtl/store';
import { waitFor } from '@vtl/reconcile';

export interface SubmitOp {
  kind: OpKind;
  executor: string;
  params: Record<string, unknown>;
  requestedBy?: string;
}

/** A new operation's record, pending for its executor. */
export function newOpRecord(id: number, req: SubmitOp): Op {
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

/** Records an operation for its executor to carry out; returns its id at once. */
export async function submitOp(store: Store, req: SubmitOp): Promise<number> {
  const id = await store.nextId('ops');
  await store.put(keys.ops.one(id), newOpRecord(id, req));
  return id;
}

/** Waits for an operation to finish. A timeout is a 504 that names the op; the op goes on. */
export async function awaitOp(store: Store, id: number, timeoutMs: number): Promise<Op> {
  let last: Op | undefined;
  try {
    await waitFor(
      async () => {
        last = (await store.get(keys.ops.one(id), Op))?.value;
        return last !== undefined && isOpFinished(last);
      },
      { timeoutMs, intervalMs: 100 },
    );
  } catch {
    throw new VtlError(
      'timeout',
      `Operation ${id} (${last?.kind ?? 'unknown'}) is still ${last?.state ?? 'pending'}; it goes on: watch GET /api/events or poll GET /api/status instead of retrying.`,
      { op: id, steps: last?.steps ?? [] },
    );
  }
  return last as Op;
}

/** Submits, waits, and returns the result or throws the executor's error. */
export async function runOp<T>(store: Store, req: SubmitOp, timeoutMs: number): Promise<T> {
  return awaitOpResult<T>(store, await submitOp(store, req), timeoutMs);
}

/** Waits for a submitted operation; its result, or the executor's error thrown. */
export async function awaitOpResult<T>(store: Store, id: number, timeoutMs: number): Promise<T> {
  const op = await awaitOp(store, id, timeoutMs);
  if (op.state === 'failed') {
    const err = op.error ?? { code: 'internal' as const, message: 'operation failed' };
    throw new VtlError(err.code, err.message, { ...err.details, steps: op.steps });
  }
  return op.result as T;
}
