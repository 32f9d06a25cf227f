import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../context.js';
import { supportBundle } from '../services/support-bundle.js';
import { systemInfo } from '../services/system-info.js';

/** `20261123T182316Z`: sortable and safe in a file name. */
const stamp = (d: Date) =>
  d
    .toISOString()
    .replace(/\.\d{3}Z$/, 'Z')
    .replace(/[-:]/g, '');

/** §4.2 rule 5: admin-only although a GET, and audited since it hands out the logs. */
export async function supportBundleRoutes(app: FastifyInstance, ctx: AppContext) {
  app.get(
    '/api/system/support-bundle',
    {
      config: {
        role: 'admin',
        audit: true,
        action: 'support.bundle',
        doc: { summary: 'Redacted diagnostics archive (tar.gz)', produces: 'application/gzip' },
      },
    },
    async (_request, reply) => {
      const [bundle, system] = await Promise.all([supportBundle(ctx), systemInfo(ctx)]);
      reply.header('content-type', 'application/gzip');
      reply.header(
        'content-disposition',
        `attachment; filename="vtl-support-${system.system_name}-${stamp(new Date())}.tar.gz"`,
      );
      return bundle;
    },
  );
}
