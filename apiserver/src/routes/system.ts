import type { FastifyInstance } from 'fastify';
import { MODELS, ModelsCatalog, SystemInfo } from '@vtl/api';
import type { AppContext } from '../context.js';
import { systemInfo } from '../services/system-info.js';

export async function systemRoutes(app: FastifyInstance, ctx: AppContext) {
  app.get(
    '/api/system',
    { config: { role: 'read-only', doc: { summary: 'System (§2.10)', response: SystemInfo } } },
    async () => systemInfo(ctx),
  );

  app.get(
    '/api/models',
    { config: { role: 'read-only', doc: { summary: 'Models catalog (§2.15)', response: ModelsCatalog } } },
    async () => ModelsCatalog.parse(MODELS),
  );
}
