import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from '../plugins/zod-provider.js';
import { z } from 'zod';
import { Cartridge, DeleteCartridgeRequest, MintRequest, MintResponse, notFound } from '@vtl/api';
import type { AppContext } from '../context.js';
import { cartridgeView } from '../services/status-view.js';
import { cartridgesBytes } from '../services/status-body.js';
import { cachedViewHandler } from '../plugins/view-fast-path.js';
import { viewsOf } from '../services/views.js';
import { deleteRequested, mintRequested } from '../services/cartridges.js';

/** The cartridges (§2.7): read from the view cache; mint and delete in services/cartridges.ts. */
export async function cartridgeRoutes(app: FastifyInstance, ctx: AppContext) {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const views = viewsOf(ctx);

  r.get(
    '/api/cartridges',
    {
      // Answered from the view cache's bytes, serialized through this schema when they were built.
      config: {
        role: 'read-only',
        doc: { summary: 'Every cartridge (§2.7)', response: z.array(Cartridge) },
        view: cartridgesBytes,
      },
    },
    cachedViewHandler(() => views),
  );

  r.get(
    '/api/cartridges/:label',
    {
      schema: { params: z.object({ label: z.string() }), response: { 200: Cartridge } },
      config: { role: 'read-only', doc: { summary: 'One cartridge' } },
    },
    async (request) => {
      const label = request.params.label.toUpperCase();
      await views.fresh(request.arrivedAt);
      const found = views
        .memo('cartridge-view', () => cartridgeView(views.snapshot()))
        .find((c) => c.label === label);
      if (!found) throw notFound(`No cartridge ${label}; GET /api/cartridges lists them.`);
      return Cartridge.parse(found);
    },
  );

  r.post(
    '/api/cartridges',
    {
      schema: { body: MintRequest, response: { 200: MintResponse } },
      config: {
        role: 'admin',
        action: 'cartridge.mint',
        doc: { summary: 'Mint cartridges' },
      },
    },
    async (request) => mintRequested(ctx, request.body, request.arrivedAt),
  );

  r.delete(
    '/api/cartridges/:label',
    {
      schema: { params: z.object({ label: z.string() }), body: DeleteCartridgeRequest },
      config: {
        role: 'admin',
        action: 'cartridge.delete',
        doc: { summary: 'Delete a cartridge' },
      },
    },
    async (request) => deleteRequested(ctx, request.params.label.toUpperCase(), request.body.confirm),
  );
}
