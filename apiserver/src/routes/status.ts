import type { FastifyInstance } from 'fastify';
import { LegacyLibraryView, StatusView } from '@vtl/api';
import type { AppContext } from '../context.js';
import { asBytes, legacyLibraryBody, statusBytes } from '../services/status-body.js';
import { viewsOf } from '../services/views.js';

export async function statusRoutes(app: FastifyInstance, ctx: AppContext) {
  const views = viewsOf(ctx);
  app.get(
    '/api/status',
    { config: { role: 'read-only', doc: { summary: 'Status view (§2.9)', response: StatusView } } },
    async (request, reply) => {
      await views.fresh(request.arrivedAt);
      return reply.type('application/json; charset=utf-8').send(statusBytes(views));
    },
  );

  /** The older, smaller shape: no display names, no cartridge state join. */
  app.get(
    '/api/library',
    { config: { role: 'read-only', doc: { summary: 'Older library view', response: LegacyLibraryView } } },
    async (request, reply) => {
      await views.fresh(request.arrivedAt);
      return reply
        .type('application/json; charset=utf-8')
        .send(asBytes(views, 'legacy-library', () => legacyLibraryBody(views)));
    },
  );
}
