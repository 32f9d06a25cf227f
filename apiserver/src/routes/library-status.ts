import type { FastifyInstance } from 'fastify';
import { LibraryStatusView, notFound } from '@vtl/api';
import type { AppContext } from '../context.js';
import { idParam } from '../plugins/validate.js';
import { libraryLifecycle } from '../services/library-lifecycle.js';
import { viewsOf } from '../services/views.js';

/**
 * GET /api/libraries/{lib}/status: a library's lifecycle phase and its Ready, Serving and
 * Degraded conditions, from the status record the controller's library reconciler writes
 * (docs/api.md "Library conditions"). The rows of GET /api/libraries carry the same fields.
 */
export async function libraryStatusRoutes(app: FastifyInstance, ctx: AppContext) {
  app.get<{ Params: { lib: string } }>(
    '/api/libraries/:lib/status',
    {
      config: {
        role: 'read-only',
        doc: { summary: "A library's lifecycle phase and conditions", response: LibraryStatusView },
      },
    },
    async (request) => {
      const id = idParam(request.params.lib, 'library');
      const s = (await viewsOf(ctx).fresh()).snapshot();
      const lib = s.libraries.find((l) => l.id === id && !l.deleting);
      if (!lib) throw notFound(`No library ${id}; GET /api/libraries lists them.`);
      return LibraryStatusView.parse({
        id,
        state: s.libraryStatus.get(id)?.state ?? 'pending_restart',
        ...libraryLifecycle(s, id),
      });
    },
  );
}
