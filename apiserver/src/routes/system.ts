import type { FastifyInstance } from 'fastify';
import { MODELS, ModelsCatalog, SystemInfo, isoNow, keys } from '@vtl/api';
import { z } from 'zod';
import type { AppContext } from '../context.js';
import { ensureIdentity, readSettings } from '../services/identity.js';
import { activeJobs, loadSnapshot } from '@vtl/store';
import { defaultSystemName } from '@vtl/api';

const Drain = z.object({ draining: z.boolean() });

export async function systemRoutes(app: FastifyInstance, ctx: AppContext) {
  app.get(
    '/api/system',
    { config: { role: 'read-only', doc: { summary: 'System (§2.10)', response: SystemInfo } } },
    async () => {
      const [identity, settings, snapshot, drain] = await Promise.all([
        ensureIdentity(ctx.store),
        readSettings(ctx.store),
        loadSnapshot(ctx.store),
        ctx.store.get(keys.drain, Drain),
      ]);
      const { plainPort } = ctx.config;
      return SystemInfo.parse({
        version: ctx.version,
        started_at: isoNow(ctx.startedAt),
        uptime_sec: Math.floor((Date.now() - ctx.startedAt.getTime()) / 1000),
        active_jobs: activeJobs(snapshot).length,
        plain_listener: plainPort === 0 ? '' : `:${plainPort}`,
        draining: drain?.value.draining ?? false,
        apikeys_enabled: settings['apikeys.enabled'] === '1',
        system_name: settings['system.name'] || defaultSystemName(identity.system_uuid),
        system_uuid: identity.system_uuid,
      });
    },
  );

  app.get(
    '/api/models',
    { config: { role: 'read-only', doc: { summary: 'Models catalog (§2.15)', response: ModelsCatalog } } },
    async () => ModelsCatalog.parse(MODELS),
  );
}
