import { Op, RemoteObjects, VtlError, isOpFinished, isoNow, keys, type OpKind } from '@vtl/api';
import type { Store } from '@vtl/store';
import { watchOpUntilFinished } from '@vtl/reconcile';
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
 * Records an operation for the controller (or a node) and waits for it (by a watch on the record),
 * bounded by `waitMs` plus a pickup grace. The op's error is the answer exactly as the
 * controller recorded it; past the wait the answer is 504 timeout naming the op, which goes on.
 */
export async function runRemoteOp<T>(store: Store, req: RemoteOpRequest): Promise<{ id: number; result: T }> {
  const id = await store.nextId('ops');
  const op: Op = {
    id,
    kind: req.kind,
    executor: req.executor ?? REMOTE_EXECUTOR,
    params: req.params,
    state: 'pending',
    steps: [],
    requested_by: req.requestedBy,
    created_at: isoNow(),
  };
  await store.put(keys.ops.one(id), op);
  const last = await watchOpUntilFinished(store, id, req.waitMs + PICKUP_GRACE_MS);
  if (!last || !isOpFinished(last))
    throw new VtlError(
      'timeout',
      `Operation ${id} (${req.kind}) is still ${last?.state ?? 'pending'}; it goes on: watch GET /api/events or poll GET /api/status instead of retrying.`,
      { op: id, steps: last?.steps ?? [] },
    );
  if (last.state === 'failed') {
    const err = last.error ?? { code: 'internal' as const, message: `${req.kind} failed` };
    throw VtlError.fromBody(err);
  }
  return { id, result: last.result as T };
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
  await store.deletePrefix(keys.opResults.of(id));
  // A listing is a read: its record has nothing to keep.
  await store.delete(keys.ops.one(id));
  return listed.items.flatMap((i) => i.value);
}
