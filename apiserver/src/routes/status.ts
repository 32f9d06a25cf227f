import type { FastifyInstance } from 'fastify';
import { LegacyLibraryView, StatusView } from '@vtl/api';
import type { AppContext } from '../context.js';
import { cachedViewHandler } from '../plugins/view-fast-path.js';
import { legacyLibraryBytes, statusBytes } from '../services/status-body.js';
import { viewsOf } from '../services/views.js';

export async function statusRoutes(app: FastifyInstance, ctx: AppContext) {
  const handler = cachedViewHandler(() => viewsOf(ctx));
  app.get(
    '/api/status',
    {
      config: {
        role: 'read-only',
        doc: { summary: 'Status view (§2.9)', response: StatusView },
        view: statusBytes,
      },
    },
    handler,
  );

  /** The older, smaller shape: no display names, no cartridge state join. */
  app.get(
    '/api/library',
    {
      config: {
        role: 'read-only',
        doc: { summary: 'Older library view', response: LegacyLibraryView },
        view: legacyLibraryBytes,
      },
    },
    handler,
  );
}
