import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from '../plugins/zod-provider.js';
import { z } from 'zod';
import { CreatePoolRequest, PoolRow } from '@vtl/api';
import type { AppContext } from '../context.js';
import { loadSnapshot } from '@vtl/domain';
import { idParam } from '../plugins/validate.js';
import { createPoolRequested, deletePoolRequested, poolRow } from '../services/pools.js';

/** Pools: the spec names pools but shows no endpoint; docs/api.md documents these (services/pools.ts). */
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
      const row = await createPoolRequested(ctx, request.body, request.principal?.name ?? '');
      reply.status(201);
      return row;
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
    async (request) => deletePoolRequested(ctx, idParam(request.params.id, 'pool')),
  );
}
