import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from '../plugins/zod-provider.js';
import { MODELS, ModelsCatalog, SystemInfo } from '@vtl/api';
import type { AppContext } from '../context.js';
import { systemInfo } from '../services/system-info.js';

export async function systemRoutes(app: FastifyInstance, ctx: AppContext) {
  const r = app.withTypeProvider<ZodTypeProvider>();
  r.get(
    '/api/system',
    {
      schema: { response: { 200: SystemInfo } },
      config: { role: 'read-only', doc: { summary: 'System (§2.10)' } },
    },
    async () => systemInfo(ctx),
  );

  r.get(
    '/api/models',
    {
      schema: { response: { 200: ModelsCatalog } },
      config: { role: 'read-only', doc: { summary: 'Models catalog (§2.15)' } },
    },
    async () => ModelsCatalog.parse(MODELS),
  );
}
