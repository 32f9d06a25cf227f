import type { FastifyInstance } from 'fastify';
import { Settings, SettingsUpdate } from '@vtl/api';
import type { AppContext } from '../context.js';
import { parse } from '../plugins/validate.js';
import { settingsView, updateSettings } from '../services/settings.js';

/** §2.13, §4.2: the closed set of setting keys. */
export async function settingsRoutes(app: FastifyInstance, ctx: AppContext) {
  app.get(
    '/api/settings',
    {
      config: { role: 'read-only', doc: { summary: 'Every setting key with its value', response: Settings } },
    },
    async () => settingsView(ctx.store),
  );

  app.put(
    '/api/settings',
    {
      config: {
        role: 'admin',
        action: 'settings.update',
        doc: {
          summary: 'Set one or more keys, all or nothing; an unknown key is 400 and nothing is written',
          body: SettingsUpdate,
          response: Settings,
        },
      },
    },
    async (request) => {
      const update = parse(SettingsUpdate, request.body);
      // The keys, not the values: the audit log names what changed.
      request.auditSubject = Object.keys(update).join(',');
      return updateSettings(ctx.store, update);
    },
  );
}
