import { Op, VtlError, isOpFinished, isoNow, keys, type OpKind } from '@vtl/api';
import type { Store } from '@vtl/store';
import { waitOnRecords } from './record-wait.js';

/**
 * Asks one node's nodeagent to carry out a node-local step (an op addressed to `node:<name>`)
 * and waits for its outcome on a watch. Throws the node's error, or a timeout naming the op.
 */
export async function runNodeOp(
  store: Store,
  req: { kind: OpKind; node: string; params: Record<string, unknown>; requestedBy: string },
  timeoutMs: number,
): Promise<unknown> {
  const id = await store.nextId('ops');
  const op: Op = {
    id,
    kind: req.kind,
    executor: `node:${req.node}`,
    params: req.params,
    state: 'pending',
    steps: [],
    requested_by: req.requestedBy,
    created_at: isoNow(),
  };
  await store.put(keys.ops.one(id), op);
  return awaitNodeOp(store, id, req.node, timeoutMs);
}

async function awaitNodeOp(store: Store, id: number, node: string, timeoutMs: number): Promise<unknown> {
  const key = keys.ops.one(id);
  const { done, items } = await waitOnRecords(
    store,
    key,
    Op,
    (items) => {
      const op = items.get(key)?.value;
      return op && isOpFinished(op) ? op : undefined;
    },
    timeoutMs,
  );
  if (!done)
    throw new VtlError(
      'timeout',
      `Node ${node} did not finish ${items.get(key)?.value.kind ?? 'its step'} (op ${id}) within ${Math.round(timeoutMs / 1000)} s; check its nodeagent, then retry.`,
      { op: id },
    );
  if (done.state === 'failed') {
    const err = done.error ?? { code: 'internal' as const, message: `op ${id} failed on node ${node}` };
    throw new VtlError(err.code, err.message, err.details);
  }
  return done.result;
}
