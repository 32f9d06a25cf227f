import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from '../plugins/zod-provider.js';
import { z } from 'zod';
import {
  CreatePoolRequest,
  PoolRow,
  PoolSpec,
  PoolStatus,
  DEFAULT_POOL_COMPRESSION,
  badRequest,
  conflict,
  isoNow,
  keys,
  notFound,
} from '@vtl/api';
import { waitFor } from '@vtl/reconcile';
import type { AppContext } from '../context.js';
import {
  createPool,
  deletePool,
  normalisePoolPath,
  refusePoolPath,
  type Snapshot,
  loadSnapshot,
} from '@vtl/domain';
import { idParam } from '../plugins/validate.js';
import { runRemoteOp } from '../services/remote-ops.js';
import { requestNode, storagePoolPath } from '../services/storage.js';

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

/** Pools: the spec names pools but shows no endpoint; docs/api.md documents these. */
export async function poolRoutes(app: FastifyInstance, ctx: AppContext) {
  const r = app.withTypeProvider<ZodTypeProvider>();
  r.get(
    '/api/pools',
    {
      schema: { response: { 200: z.array(PoolRow) } },
      config: { role: 'read-only', doc: { summary: 'Pool rows' } },
    },
    async () => {
      const s = await loadSnapshot(ctx.store);
      return s.pools.map((p) => PoolRow.parse(poolRow(s, p)));
    },
  );

  r.post(
    '/api/pools',
    {
      schema: { body: CreatePoolRequest, response: { 201: PoolRow } },
      config: {
        role: 'admin',
        action: 'pool.create',
        doc: { summary: 'Create a pool', status: 201 },
      },
    },
    async (request, reply) => {
      const body = request.body;
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
          requestedBy: request.principal?.name ?? '',
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
      reply.status(201);
      return PoolRow.parse(poolRow(await loadSnapshot(ctx.store), pool));
    },
  );

  r.delete<{ Params: { id: string } }>(
    '/api/pools/:id',
    {
      config: {
        role: 'admin',
        action: 'pool.delete',
        doc: { summary: 'Delete a pool that homes no library' },
      },
    },
    async (request) => {
      const id = idParam(request.params.id, 'pool');
      const s = await loadSnapshot(ctx.store);
      const pool = s.pools.find((p) => p.id === id);
      if (!pool) throw notFound(`No pool ${id}; GET /api/pools lists the pools.`);
      const home = s.libraries.find((l) => l.home_pool === id);
      if (home)
        throw badRequest(
          `Pool "${pool.name}" homes library ${home.id} (${home.name}); delete that library first.`,
        );
      // Its status goes with it: the pool's nodeagent removes it (domain/src/records/pools.ts).
      if (!(await deletePool(ctx.store, pool)))
        throw badRequest(`Pool "${pool.name}" was just claimed by a library; delete that library first.`);
      await ctx.journal.emit({
        kind: 'pool_removed',
        subject: pool.name,
        detail: `${pool.node}:${pool.path}`,
      });
      return { ok: true, id, name: pool.name };
    },
  );
}
