import {
  DEFAULT_POOL_COMPRESSION,
  PoolRow,
  PoolStatus,
  badRequest,
  conflict,
  isoNow,
  keys,
  notFound,
  type CreatePoolRequest,
  type PoolSpec,
} from '@vtl/api';
import {
  createPool,
  deletePool,
  loadSnapshot,
  normalisePoolPath,
  refusePoolPath,
  type Snapshot,
} from '@vtl/domain';
import { waitFor } from '@vtl/reconcile';
import type { AppContext } from '../context.js';
import { runRemoteOp } from './remote-ops.js';
import { requestNode, storagePoolPath } from './storage.js';

/** How long POST /api/pools waits for the owning nodeagent to report the new pool active. */
const POOL_ACTIVATION_WAIT_MS = 10_000;
/** How long it waits for the node to check the path on its own disk. */
const POOL_PATH_CHECK_WAIT_MS = 10_000;

export function poolRow(s: Snapshot, pool: PoolSpec): PoolRow {
  const status = s.poolStatus.get(pool.id);
  const home = s.libraries.find((l) => l.home_pool === pool.id);
  return {
    ...pool,
    state: status?.state ?? 'offline',
    detail:
      status?.detail ?? `No nodeagent on node "${pool.node}" reports this pool; check that the node is up.`,
    library: home?.id ?? null,
    figures: status?.figures ?? null,
  };
}

const within = (child: string, parent: string) =>
  child === parent || child.startsWith(parent.replace(/\/$/, '') + '/');

/**
 * Creates a pool (createPool, domain/src/records/pools.ts) once its path passes the rules here and
 * on its node, and waits a little for the node to report it active; returns its row.
 */
export async function createPoolRequested(
  ctx: AppContext,
  body: CreatePoolRequest,
  requestedBy: string,
): Promise<PoolRow> {
  const s = await loadSnapshot(ctx.store);
  const node = requestNode(
    s.nodes.map((n) => n.node),
    body.node,
  );
  // No path: a subvolume of the node's shared storage (docs/storage.md).
  const onStorage = body.path === undefined;
  if (!onStorage && body.compression !== undefined)
    throw badRequest('compression applies to pools on shared storage only: leave out path to make one.');
  const input = body.path ?? (await storagePoolPath(ctx, node, body.name));
  // The rules on the path as written here; symlinks resolve on the node's disk, below.
  const poolPath = normalisePoolPath(input);
  if (!onStorage) refusePoolPath(input, [poolPath], [ctx.config.stateDir]);
  // A node that is up checks the path on its own disk (the apiserver reads no node's disk);
  // a pool declared for a node that is down is checked as written and shows offline.
  if (!onStorage && s.nodes.some((n) => n.node === node))
    await runRemoteOp(ctx.store, {
      kind: 'pool_path_check',
      executor: `node:${node}`,
      // The node resolves these too: a symlink must not hide an overlap.
      params: {
        path: input,
        pools: s.pools.filter((p) => p.node === node).map((p) => ({ name: p.name, path: p.path })),
      },
      requestedBy: requestedBy,
      waitMs: POOL_PATH_CHECK_WAIT_MS,
    });
  if (s.pools.some((p) => p.name === body.name))
    throw conflict(`A pool named "${body.name}" exists already.`);
  const clash = s.pools.find(
    (p) => p.node === node && (within(poolPath, p.path) || within(p.path, poolPath)),
  );
  if (clash)
    throw badRequest(`Path ${poolPath} overlaps pool "${clash.name}" (${clash.path}) on node ${node}.`);

  const pool = await createPool(ctx.store, (id) => ({
    id,
    name: body.name,
    node,
    path: poolPath,
    created_at: isoNow(),
    ...(onStorage
      ? { engine: 'btrfs' as const, compression: body.compression ?? DEFAULT_POOL_COMPRESSION }
      : {}),
  }));
  if (!pool) throw conflict(`A pool named "${body.name}" exists already.`);
  const id = pool.id;
  await ctx.journal.emit({ kind: 'pool_created', subject: body.name, detail: `${node}:${poolPath}` });
  await waitFor(
    async () => (await ctx.store.get(keys.poolStatus.one(id), PoolStatus))?.value.state === 'active',
    {
      timeoutMs: POOL_ACTIVATION_WAIT_MS,
    },
  ).catch(() => undefined);
  return PoolRow.parse(poolRow(await loadSnapshot(ctx.store), pool));
}

/** Deletes a pool that homes no library. */
export async function deletePoolRequested(
  { store, journal }: AppContext,
  id: number,
): Promise<{ ok: true; id: number; name: string }> {
  const s = await loadSnapshot(store);
  const pool = s.pools.find((p) => p.id === id);
  if (!pool) throw notFound(`No pool ${id}; GET /api/pools lists the pools.`);
  const home = s.libraries.find((l) => l.home_pool === id);
  if (home)
    throw badRequest(
      `Pool "${pool.name}" homes library ${home.id} (${home.name}); delete that library first.`,
    );
  // Its status goes with it: the pool's nodeagent removes it (domain/src/records/pools.ts).
  if (!(await deletePool(store, pool)))
    throw badRequest(`Pool "${pool.name}" was just claimed by a library; delete that library first.`);
  await journal.emit({
    kind: 'pool_removed',
    subject: pool.name,
    detail: `${pool.node}:${pool.path}`,
  });
  return { ok: true, id, name: pool.name };
}
