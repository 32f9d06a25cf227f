import type { FastifyInstance } from 'fastify';
import { AuditPage, AuditQuery } from '@vtl/api';
import type { AppContext } from '../context.js';
import { parse } from '../plugins/validate.js';
import type { AuditLog } from '../services/audit-log.js';

/** The audit log (§6: who asked for what), newest first, paged by id. */
export async function auditRoutes(app: FastifyInstance, _ctx: AppContext, audit: AuditLog) {
  app.get(
    '/api/audit',
    {
      config: {
        role: 'admin',
        doc: {
          summary: 'Audit entries, newest first; page with before=next_before',
          query: AuditQuery,
          response: AuditPage,
        },
      },
    },
    async (request) => {
      const query = parse(AuditQuery, request.query);
      return AuditPage.parse(await audit.page(query.limit, query.before));
    },
  );
}
