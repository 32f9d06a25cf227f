import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { CatalogEntry, CatalogQuery, CatalogRebuildRequest, CatalogRebuildResponse } from '@vtl/api';
import type { AppContext } from '../context.js';
import type { ZodTypeProvider } from '../plugins/zod-provider.js';
import { listCatalog, rebuildCatalog } from '../services/catalog.js';
import { referencedRemote } from '../services/jobs.js';

/** §4.4 catalog: what a bucket holds, cached in etcd. */
export async function catalogRoutes(app: FastifyInstance, ctx: AppContext) {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const { store } = ctx;

  r.get(
    '/api/catalog',
    {
      schema: { querystring: CatalogQuery, response: { 200: z.array(CatalogEntry) } },
      config: { role: 'read-only', doc: { summary: 'Cached catalog of one remote' } },
    },
    async (request) => {
      const { remote_id } = request.query;
      await referencedRemote(store, remote_id);
      return listCatalog(store, remote_id);
    },
  );

  r.post(
    '/api/catalog/rebuild',
    {
      schema: { body: CatalogRebuildRequest, response: { 200: CatalogRebuildResponse } },
      config: {
        role: 'admin',
        action: 'catalog.rebuild',
        doc: { summary: 'Rebuild a remote catalog from its bucket' },
      },
    },
    async (request) => {
      const { remote_id } = request.body;
      request.auditSubject = `remote:${remote_id}`;
      return rebuildCatalog(store, remote_id, {
        requestedBy: request.principal?.name ?? '',
        deadlineMs: ctx.config.remoteDeadlineMs,
      });
    },
  );
}
