import type { Op } from '@vtl/api';
import type { RemoteObject } from '@vtl/offsite';
import type { OpHandler } from '@vtl/reconcile';
import type { Store } from '@vtl/store';
import { catalogEntries } from './catalog-rows.js';
import { deadlineOf, remoteCall } from './remote-call.js';
import { loadOffsite } from './offsite-module.js';
import { recordRemoteTest, remoteConnection, replaceRemoteCatalog, writeOpResultParts } from '@vtl/domain';

/** Objects per result part of a listing: a part stays far below etcd's 1.5 MB request limit. */
export const LIST_PART_OBJECTS = 5_000;

const remoteIdOf = (op: Op) => Number(op.params.remote_id);

/** POST /api/remotes/{id}/test: the probe, its outcome recorded on the remote; never fails. */
export function remoteTestOp(store: Store): OpHandler {
  return async (op) => {
    const { probeRemote } = await loadOffsite();
    const id = remoteIdOf(op);
    const conn = await remoteConnection(store, id);
    const deadlineMs = deadlineOf(op);
    let result: { ok: boolean; detail: string };
    try {
      result = await remoteCall('Testing the remote', conn, deadlineMs, (signal) =>
        probeRemote(conn, signal),
      );
    } catch (err) {
      // The probe reports its own failures; this is the deadline (or a bug): still `ok: false`.
      result = { ok: false, detail: err instanceof Error ? err.message : String(err) };
    }
    await recordRemoteTest(store, id, result);
    return result;
  };
}

/**
 * GET /api/remotes/{id}/objects: every object under the prefix. The listing goes into result
 * parts of LIST_PART_OBJECTS (a bucket may hold more than one etcd record can); the op's result
 * says how many. The reader deletes the parts.
 */
export function remoteObjectsListOp(store: Store, partObjects = LIST_PART_OBJECTS): OpHandler {
  return async (op) => {
    const { listObjects } = await loadOffsite();
    const conn = await remoteConnection(store, remoteIdOf(op));
    const objects = await remoteCall('Listing the remote', conn, deadlineOf(op), (signal) =>
      listObjects(conn, signal),
    );
    const parts: RemoteObject[][] = [];
    for (let i = 0; i < objects.length; i += partObjects) parts.push(objects.slice(i, i + partObjects));
    return { parts: await writeOpResultParts(store, op.id, parts), count: objects.length };
  };
}

/** DELETE /api/remotes/{id}/objects: every object under one folder prefix. */
export function remoteObjectsDeleteOp(store: Store): OpHandler {
  return async (op) => {
    const { deleteFolder } = await loadOffsite();
    const conn = await remoteConnection(store, remoteIdOf(op));
    const prefix = String(op.params.prefix);
    const deleted = await remoteCall(`Deleting ${prefix} on the remote`, conn, deadlineOf(op), (signal) =>
      deleteFolder(conn, prefix, signal),
    );
    return { deleted };
  };
}

/**
 * POST /api/catalog/rebuild: lists the bucket (fetching every manifest), then replaces the
 * remote's cached catalog. The scan runs first, so an unreachable bucket leaves the cache as it was.
 */
export function catalogRebuildOp(store: Store): OpHandler {
  return async (op) => {
    const { scanBucket } = await loadOffsite();
    const remoteId = remoteIdOf(op);
    const conn = await remoteConnection(store, remoteId);
    const scan = await remoteCall('Scanning the bucket', conn, deadlineOf(op), (signal) =>
      scanBucket(conn, signal),
    );
    const entries = catalogEntries(remoteId, scan.complete);
    await replaceRemoteCatalog(store, remoteId, entries);
    return {
      complete: entries.length,
      incomplete: scan.incomplete.map((g) => ({
        system: g.system,
        library: g.library_serial,
        label: g.label,
        generation: g.generation,
      })),
    };
  };
}
