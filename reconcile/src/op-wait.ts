import { Op, isOpFinished, keys } from '@vtl/api';
import type { Store } from '@vtl/store';

/**
 * Waits for an operation record to finish, by a watch on its key from the revision it was read
 * at (no polling, no missed change). Resolves with the record as last seen: finished, or not
 * yet when `timeoutMs` passed first (undefined when there is no such op).
 */
export async function watchOpUntilFinished(
  store: Store,
  id: number,
  timeoutMs: number,
): Promise<Op | undefined> {
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
    timer = setTimeout(settle, timeoutMs);
    await settled;
  } finally {
    clearTimeout(timer);
    await watch.close();
  }
  // A compacted watch ends early: the record itself says where the op is.
  if (!isOpFinished(last)) last = (await store.get(key, Op))?.value ?? last;
  return last;
}
