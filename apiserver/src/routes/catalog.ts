import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { CatalogEntry, CatalogQuery, CatalogRebuildRequest, CatalogRebuildResponse } from '@vtl/api';
import type { AppContext } from '../context.js';
import { parse } from '../plugins/validate.js';
import { listCatalog, rebuildCatalog } from '../services/catalog.js';
import { referencedRemote } from '../services/jobs.js';

/** §4.4 catalog: what a bucket holds, cached in etcd. */
export async function catalogRoutes(app: FastifyInstance, ctx: AppContext) {
  const { store } = ctx;

  app.get(
    '/api/catalog',
    {
      config: {
        role: 'read-only',
        doc: {
          summary: 'Cached catalog of one remote',
          query: CatalogQuery,
          response: z.array(CatalogEntry),
        },
      },
    },
    async (request) => {
      const { remote_id } = parse(CatalogQuery, request.query);
      await referencedRemote(store, remote_id);
      return listCatalog(store, remote_id);
    },
  );

  app.post(
    '/api/catalog/rebuild',
    {
      config: {
        role: 'admin',
        action: 'catalog.rebuild',
        doc: {
          summary: 'Rebuild a remote catalog from its bucket',
          body: CatalogRebuildRequest,
          response: CatalogRebuildResponse,
        },
      },
    },
    async (request) => {
      const { remote_id } = parse(CatalogRebuildRequest, request.body);
      request.auditSubject = `remote:${remote_id}`;
      const rebuilt = await rebuildCatalog(store, remote_id, {
        requestedBy: request.principal?.name ?? '',
        deadlineMs: ctx.config.remoteDeadlineMs,
      });
      return CatalogRebuildResponse.parse(rebuilt);
    },
  );
}
