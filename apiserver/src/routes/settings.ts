import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from '../plugins/zod-provider.js';
import { Settings, SettingsUpdate } from '@vtl/api';
import type { AppContext } from '../context.js';
import { settingsView, updateSettings } from '../services/settings.js';

/** §2.13, §4.2: the closed set of setting keys. */
export async function settingsRoutes(app: FastifyInstance, ctx: AppContext) {
  const r = app.withTypeProvider<ZodTypeProvider>();
  r.get(
    '/api/settings',
    {
      schema: { response: { 200: Settings } },
      config: { role: 'read-only', doc: { summary: 'Every setting key with its value' } },
    },
    async () => settingsView(ctx.store),
  );

  r.put(
    '/api/settings',
    {
      schema: { body: SettingsUpdate, response: { 200: Settings } },
      config: {
        role: 'admin',
        action: 'settings.update',
        doc: {
          summary: 'Set one or more keys, all or nothing; an unknown key is 400 and nothing is written',
        },
      },
    },
    async (request) => {
      const update = request.body;
      // The keys, not the values: the audit log names what changed.
      request.auditSubject = Object.keys(update).join(',');
      return updateSettings(ctx.store, update);
    },
  );
}
