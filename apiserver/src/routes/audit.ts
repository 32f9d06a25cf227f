import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from '../plugins/zod-provider.js';
import { AuditPage, AuditQuery } from '@vtl/api';
import type { AppContext } from '../context.js';
import type { AuditLog } from '@vtl/store';

/** The audit log (§6: who asked for what), newest first, paged by id. */
export async function auditRoutes(app: FastifyInstance, _ctx: AppContext, audit: AuditLog) {
  const r = app.withTypeProvider<ZodTypeProvider>();
  r.get(
    '/api/audit',
    {
      schema: { querystring: AuditQuery, response: { 200: AuditPage } },
      config: {
        role: 'admin',
        doc: {
          summary: 'Audit entries, newest first; page with before=next_before',
        },
      },
    },
    async (request) => {
      const query = request.query;
      return AuditPage.parse(await audit.page(query.limit, query.before));
    },
  );
}
