import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../context.js';
import { collectRoutes, openApiDocument } from '../services/openapi.js';

/**
 * GET /api/openapi.json: public, as it describes only the contract, never the appliance. Must be
 * registered before the other routes, so that it sees them all being added.
 */
export function openApiRoutes(app: FastifyInstance, ctx: AppContext) {
  const routes = collectRoutes(app);
  let document: unknown;
  app.get(
    '/api/openapi.json',
    { config: { role: 'public', doc: { summary: 'This OpenAPI document' } } },
    async () => (document ??= openApiDocument(routes, ctx.version)),
  );
}
