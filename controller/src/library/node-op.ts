import type { OpKind } from '@vtl/api';
import { submitOp } from '@vtl/domain';
import { awaitOpResult } from '@vtl/reconcile';
import type { Store } from '@vtl/store';

/**
 * Asks one node's nodeagent to carry out a node-local step (an op addressed to `node:<name>`)
 * and waits for its outcome (awaitOpResult: a store outage is waited out). Throws the node's
 * error, or a timeout naming the op.
 */
export async function runNodeOp(
  store: Store,
  req: { kind: OpKind; node: string; params: Record<string, unknown>; requestedBy: string },
  timeoutMs: number,
): Promise<unknown> {
  const id = await submitOp(store, {
    kind: req.kind,
    executor: `node:${req.node}`,
    params: req.params,
    requestedBy: req.requestedBy,
  });
  return awaitOpResult<unknown>(store, id, {
    timeoutMs,
    timeoutMessage: (_, last) =>
      `Node ${req.node} did not finish ${last?.kind ?? 'its step'} (op ${id}) within ${Math.round(timeoutMs / 1000)} s; check its nodeagent, then retry.`,
  });
}
