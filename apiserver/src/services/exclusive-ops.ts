import type { Store } from '@vtl/store';
import { submitExclusiveOp, type Snapshot, type SubmitOp } from '@vtl/domain';
import { awaitOpResult } from './ops.js';

/**
 * Submits an operation that needs every job stopped (apply, data-plane restart, library delete;
 * domain/src/records/exclusive-op.ts) and waits for it.
 */
export async function runExclusiveOp<T>(
  store: Store,
  req: SubmitOp,
  what: string,
  timeoutMs: number,
  check: (s: Snapshot) => void = () => undefined,
): Promise<T> {
  return awaitOpResult<T>(store, await submitExclusiveOp(store, req, what, check), timeoutMs);
}
