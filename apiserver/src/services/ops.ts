import { Op, VtlError, isOpFinished } from '@vtl/api';
import { submitOp, type SubmitOp } from '@vtl/domain';
import type { Store } from '@vtl/store';
import { watchOpUntilFinished } from '@vtl/reconcile';

/** While the store does not answer, a wait tries to read and watch the op again this often. */
const STORE_RETRY_MS = 200;

/**
 * Waits for an operation to finish, on a watch of its record (watchOpUntilFinished: from the
 * revision it was read at, so no result is missed). A timeout is a 504 that names the op; the op
 * goes on. The op is recorded already, so a store that stops answering meanwhile is waited out
 * to the same deadline (and answered 504, never a 503 that would invite a second op).
 */
export async function awaitOp(store: Store, id: number, timeoutMs: number): Promise<Op> {
  const deadline = Date.now() + timeoutMs;
  let last: Op | undefined;
  for (;;) {
    try {
      last = (await watchOpUntilFinished(store, id, Math.max(0, deadline - Date.now()))) ?? last;
      if (last && isOpFinished(last)) return last;
      if (Date.now() >= deadline) break;
      // No record (yet, as seen by this member): look again shortly, within the deadline.
    } catch {
      if (Date.now() >= deadline) break;
    }
    await new Promise((r) => setTimeout(r, Math.min(STORE_RETRY_MS, Math.max(0, deadline - Date.now()))));
  }
  throw new VtlError(
    'timeout',
    `Operation ${id} (${last?.kind ?? 'unknown'}) is still ${last?.state ?? 'pending'}; it goes on: watch GET /api/events or poll GET /api/status instead of retrying.`,
    { op: id, steps: last?.steps ?? [] },
  );
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
