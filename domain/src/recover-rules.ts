import { RemoteRecord, badRequest, keys, type PoolSpec, type RecoverRequest } from '@vtl/api';
import { z } from 'zod';
import type { Store } from '@vtl/store';
import { loadSnapshot } from './load-snapshot.js';
import { refuseWithActiveJobs, requireFreeActivePool, type Snapshot } from './snapshot.js';

/**
 * The preconditions of a recovery that etcd alone can check (§4.6 rule 5: 400 otherwise, nothing
 * written): no job active, the serial not here yet, the pool active and free, the remote known.
 * The apiserver checks them before it records the operation; the controller checks them again
 * before it declares (its transaction guards the pool and serial claims).
 */
export async function checkRecoverPreconditions(
  store: Store,
  body: z.infer<typeof RecoverRequest>,
): Promise<{ snapshot: Snapshot; pool: PoolSpec }> {
  const s = await loadSnapshot(store);
  refuseWithActiveJobs(s, 'Recover');
  if (
    s.libraries.some((l) => l.serial === body.library_serial) ||
    (await store.get(keys.librarySerial(body.library_serial), z.unknown()))
  )
    throw badRequest(
      `A library with serial ${body.library_serial} exists here already; recover restores only missing libraries.`,
    );
  const pool = requireFreeActivePool(s, body.pool_id);
  if (!(await store.get(keys.remotes.one(body.remote_id), RemoteRecord)))
    throw badRequest(`remote_id ${body.remote_id}: no such remote; GET /api/remotes lists them.`);
  return { snapshot: s, pool };
}
