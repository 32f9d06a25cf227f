import { isoNow, keys, type Op, type OpKind } from '@vtl/api';
import type { Store } from '@vtl/store';

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
