import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from '../plugins/zod-provider.js';
import {
  ApiKeyRecord,
  ApiKeyRow,
  CreateApiKeyRequest,
  CreatedApiKey,
  OkResponse,
  conflict,
  keys,
  notFound,
} from '@vtl/api';
import { z } from 'zod';
import type { AppContext } from '../context.js';
import { idParam } from '../plugins/validate.js';
import { createApiKey, revokeApiKey } from '../services/api-keys.js';

/** API keys (§5.1, 5.2): created by admins, shown once, stored as a hash, revoked by id. */
export async function apiKeyRoutes(app: FastifyInstance, ctx: AppContext) {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const { store } = ctx;

  r.get(
    '/api/apikeys',
    {
      schema: { response: { 200: z.array(ApiKeyRow) } },
      config: {
        role: 'admin',
        doc: { summary: 'List API keys (never the keys)' },
      },
    },
    async () =>
      (await store.list(keys.apiKeys.prefix, ApiKeyRecord)).items.map((i) => ApiKeyRow.parse(i.value)),
  );

  r.post(
    '/api/apikeys',
    {
      schema: { body: CreateApiKeyRequest, response: { 201: CreatedApiKey } },
      config: {
        role: 'admin',
        action: 'apikey.create',
        doc: {
          summary: 'Create an API key; the response is the only place the key is shown',

          status: 201,
        },
      },
    },
    async (request, reply) => {
      const body = request.body;
      const created = await createApiKey(store, {
        name: body.name,
        role: body.role,
        createdBy: request.principal?.name ?? '',
      });
      if (!created) throw conflict('API keys kept being created meanwhile; retry.');
      const { key, record } = created;
      request.auditSubject = `${record.id}:${body.name}`;
      reply.status(201);
      return CreatedApiKey.parse({ ...ApiKeyRow.parse(record), key });
    },
  );

  r.delete(
    '/api/apikeys/:id',
    {
      schema: { params: z.object({ id: z.string() }), response: { 200: OkResponse } },
      config: {
        role: 'admin',
        action: 'apikey.revoke',
        doc: { summary: 'Revoke an API key; it stops working at once' },
      },
    },
    async (request) => {
      const id = idParam(request.params.id, 'API key');
      if (!(await revokeApiKey(store, id))) throw notFound(`No API key ${id}; GET /api/apikeys lists them.`);
      return { ok: true as const };
    },
  );
}
