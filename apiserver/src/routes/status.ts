import type { FastifyInstance } from 'fastify';
import { LegacyLibraryView, StatusView } from '@vtl/api';
import type { AppContext } from '../context.js';
import { loadSnapshot } from '@vtl/store';
import { liveLibrary, statusView } from '../services/status-view.js';

export async function statusRoutes(app: FastifyInstance, ctx: AppContext) {
  app.get(
    '/api/status',
    { config: { role: 'read-only', doc: { summary: 'Status view (§2.9)', response: StatusView } } },
    async () => StatusView.parse(statusView(await loadSnapshot(ctx.store))),
  );

  /** The older, smaller shape: no display names, no cartridge state join. */
  app.get(
    '/api/library',
    { config: { role: 'read-only', doc: { summary: 'Older library view', response: LegacyLibraryView } } },
    async () => {
      const s = await loadSnapshot(ctx.store);
      return LegacyLibraryView.parse({
        libraries: s.libraries
          .filter((l) => !l.deleting)
          .map((lib) => {
            const { library, drives, slots } = liveLibrary(s, lib);
            const { name: _name, ...rest } = library;
            return { library: rest, drives, slots };
          }),
      });
    },
  );
}
