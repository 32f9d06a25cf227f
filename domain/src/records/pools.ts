import { PoolSpec, PoolStatus, conflict, keys, type ManagedBy } from '@vtl/api';
import { z } from 'zod';
import type { Lease, Store, Versioned } from '@vtl/store';
import { releaseThrough, withManagedBy } from './managed-by.js';

/**
 * The pool records: the spec (keys.pools) with its name claim (keys.poolName), written by the
 * apiserver (and by a nodeagent once, for the default pool), and the status (keys.poolStatus),
 * written by the nodeagent of the pool's node alone. The only module that writes them. A pool
 * is created with its id and name claim in one transaction (a refused create leaves the id
 * counter); it is deleted only while no library claims it as home (keys.poolHome). Its status
 * is written only while the spec is as the nodeagent read it, in the same transaction, and
 * removed by that nodeagent once the spec is gone: a pool deleted during a walk of its
 * directory leaves no status behind. A GitOps source claims a pool it declares (managed_by,
 * records/managed-by.ts) and releases it when the source is deleted.
 */

/** Transaction attempts of one create; a lost one (another create took the id) re-plans. */
const CREATE_ATTEMPTS = 8;

/**
 * Creates a pool: `plan` builds its record given its id. Undefined when a pool of that name
 * exists (nothing written then).
 */
export async function createPool(
  store: Store,
  plan: (id: number) => PoolSpec,
): Promise<PoolSpec | undefined> {
  const created = await store.withNewId('pools', CREATE_ATTEMPTS, async (next) => {
    const pool = plan(next.id);
    const txn = store.transaction().ifAbsent(keys.poolName(pool.name));
    next.take(txn);
    txn.put(keys.poolName(pool.name), pool.id).put(keys.pools.one(pool.id), pool);
    if (await txn.commit()) return pool;
    // Lost to a pool of that name (refused: null), or to another create taking the id (retried).
    return (await store.get(keys.poolName(pool.name), z.unknown())) ? null : undefined;
  });
  if (created === undefined) throw conflict('Pools kept being created meanwhile; retry.');
  return created ?? undefined;
}

/** Deletes a pool's spec and name claim unless a library claims it as home; false then. */
export async function deletePool(store: Store, pool: PoolSpec): Promise<boolean> {
  return store
    .transaction()
    .ifAbsent(keys.poolHome(pool.id))
    .delete(keys.pools.one(pool.id))
    .delete(keys.poolName(pool.name))
    .commit();
}

/**
 * Writes a pool's status (its nodeagent, under its lease) only while the spec is still as read
 * before the figures were gathered; false when the pool changed or went meanwhile.
 */
export async function publishPoolStatus(
  store: Store,
  pool: Versioned<PoolSpec>,
  status: PoolStatus,
  lease: Lease,
): Promise<boolean> {
  return store
    .transaction()
    .ifModRevision(keys.pools.one(pool.value.id), pool.modRevision)
    .put(keys.poolStatus.one(pool.value.id), status, { lease })
    .commit();
}

/** Removes the status a node published for a pool that is gone (its spec deleted). */
export async function removePoolStatus(store: Store, id: number, node: string): Promise<void> {
  const status = await store.get(keys.poolStatus.one(id), PoolStatus);
  if (!status || status.value.node !== node) return;
  await store
    .transaction()
    .ifAbsent(keys.pools.one(id))
    .ifModRevision(keys.poolStatus.one(id), status.modRevision)
    .delete(keys.poolStatus.one(id))
    .commit();
}

/** Records the GitOps source that declares a pool (records/managed-by.ts has the rule). */
export async function claimPool(store: Store, id: number, managed: ManagedBy): Promise<void> {
  const key = keys.pools.one(id);
  await store.update(key, PoolSpec, (cur) => withManagedBy(cur, managed, key));
}

/** Drops a deleted GitOps source's claim on a pool; true when it held one. */
export async function releasePool(store: Store, id: number, source: string): Promise<boolean> {
  return releaseThrough<PoolSpec>((mutate) => store.update(keys.pools.one(id), PoolSpec, mutate), source);
}
