import { RemoteObjects, VtlError, keys, type OpKind } from '@vtl/api';
import { removeOp, removeOpResults, submitOp } from '@vtl/domain';
import type { Store } from '@vtl/store';
import { awaitOpResult } from './ops.js';
import { z } from 'zod';

/** Op.executor of the controller's remote operations (controller/src/ops). */
const REMOTE_EXECUTOR = 'controller:remote';

/**
 * Slack on top of an op's own bound before the route gives up waiting: the op is picked up by
 * the controller's runner (after a failover, once the leader lease is taken over) and records
 * its outcome.
 */
const PICKUP_GRACE_MS = 10_000;

export interface RemoteOpRequest {
  kind: OpKind;
  params: Record<string, unknown>;
  requestedBy: string;
  /** How long the route waits for the outcome. */
  waitMs: number;
  /** Who runs it: the controller's remote runner unless a node's (`node:<name>`). */
  executor?: string;
}

/**
 * Records an operation for the controller (or a node) and waits for it as every route does
 * (awaitOpResult), bounded by `waitMs` plus a pickup grace.
 */
export async function runRemoteOp<T>(store: Store, req: RemoteOpRequest): Promise<{ id: number; result: T }> {
  const id = await submitOp(store, {
    kind: req.kind,
    executor: req.executor ?? REMOTE_EXECUTOR,
    params: req.params,
    requestedBy: req.requestedBy,
  });
  return { id, result: await awaitOpResult<T>(store, id, req.waitMs + PICKUP_GRACE_MS) };
}

const ObjectsPart = RemoteObjects.shape.objects;

/** The listing a remote_objects_list op left in its result parts; the parts and the op go. */
export async function takeListing(
  store: Store,
  id: number,
  parts: number,
): Promise<z.infer<typeof ObjectsPart>> {
  const listed = await store.list(keys.opResults.of(id), ObjectsPart);
  if (listed.items.length !== parts)
    throw new VtlError(
      'internal',
      `Operation ${id} left ${listed.items.length} of ${parts} listing parts; retry.`,
    );
  await removeOpResults(store, id);
  // A listing is a read: its record has nothing to keep.
  await removeOp(store, id);
  return listed.items.flatMap((i) => i.value);
}
