import { Op, isOpFinished, keys } from '@vtl/api';
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
