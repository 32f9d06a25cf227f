import { DrainState, SystemInfo, defaultSystemName, isoNow, keys } from '@vtl/api';
import { activeJobs, loadSnapshot } from '@vtl/domain';
import type { AppContext } from '../context.js';
import { ensureIdentity, readSettings } from './identity.js';

/** The System view (§2.10), shared by GET /api/system and the support bundle. */
export async function systemInfo(ctx: AppContext): Promise<SystemInfo> {
  const [identity, settings, snapshot, drain] = await Promise.all([
    ensureIdentity(ctx.store),
    readSettings(ctx.store),
    loadSnapshot(ctx.store),
    ctx.store.get(keys.drain, DrainState),
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
}
