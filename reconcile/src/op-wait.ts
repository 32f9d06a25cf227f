import { Op, VtlError, isOpFinished, keys } from '@vtl/api';
import type { Store } from '@vtl/store';

/**
 * Waits for an operation record to finish, by a watch on its key (no polling). The watch starts
 * from the revision after the one the record was read at, so a result written between the read
 * and the watch's start is delivered by the watch, never missed. Resolves with the record as
 * last seen: finished, or not yet when `timeoutMs` (counted from the call) passed first;
 * undefined when there is no such op. A store error while reading or starting the watch is
 * thrown (the caller decides whether to wait on); the re-read after the deadline is not.
 */
export async function watchOpUntilFinished(
  store: Store,
  id: number,
  timeoutMs: number,
): Promise<Op | undefined> {
  const deadline = Date.now() + timeoutMs;
  const key = keys.ops.one(id);
  const first = await store.get(key, Op);
  if (!first || isOpFinished(first.value)) return first?.value;
  let last: Op = first.value;
  let timer: NodeJS.Timeout | undefined;
  let settle!: () => void;
  const settled = new Promise<void>((resolve) => (settle = resolve));
  const watch = await store.watch(
    key,
    { fromRevision: (BigInt(first.modRevision) + 1n).toString(), onError: () => settle() },
    (e) => {
      if (e.key !== key || e.type !== 'put') return;
      const parsed = Op.safeParse(e.value);
      if (!parsed.success) return;
      last = parsed.data;
      if (isOpFinished(last)) settle();
    },
  );
  try {
    if (!isOpFinished(last)) {
      timer = setTimeout(settle, Math.max(0, deadline - Date.now()));
      await settled;
    }
  } finally {
    clearTimeout(timer);
    await watch.close();
  }
  // A compacted watch ends early: the record itself says where the op is (if the store answers).
  if (!isOpFinished(last)) last = (await store.get(key, Op).catch(() => undefined))?.value ?? last;
  return last;
}

/** When a wait for an op ends before the op does: the timeout error's message, for the caller's reader. */
export type OpTimeoutMessage = (id: number, last: Op | undefined) => string;

export interface AwaitOpOptions {
  /** How long to wait, from the call. */
  timeoutMs: number;
  /** The timeout error's message (what the reader does next: the op itself goes on). */
  timeoutMessage: OpTimeoutMessage;
}

/** While the store does not answer, a wait reads and watches the op again this often. */
const STORE_RETRY_MS = 200;

/**
 * Waits for a submitted operation to finish (watchOpUntilFinished) and returns its record.
 * The op is recorded already, so a store that stops answering meanwhile is waited out to the
 * same deadline, never thrown: a store error here would invite a second op. Past the deadline
 * the answer is a `timeout` error (504) carrying `{op, steps}`; the op goes on.
 */
export async function awaitOp(store: Store, id: number, opts: AwaitOpOptions): Promise<Op> {
  const deadline = Date.now() + opts.timeoutMs;
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
  throw new VtlError('timeout', opts.timeoutMessage(id, last), { op: id, steps: last?.steps ?? [] });
}

/**
 * Waits for a submitted operation (awaitOp) and returns its result; a failed op throws the
 * executor's error as it recorded it (code, message, details), with the op's steps added to the
 * details.
 */
export async function awaitOpResult<T>(store: Store, id: number, opts: AwaitOpOptions): Promise<T> {
  const op = await awaitOp(store, id, opts);
  if (op.state === 'failed') {
    const err = op.error ?? { code: 'internal' as const, message: `Operation ${id} (${op.kind}) failed` };
    throw new VtlError(err.code, err.message, { ...err.details, steps: op.steps });
  }
  return op.result as T;
}
