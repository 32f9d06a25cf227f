import path from 'node:path';
import { storeSettingsFromEnv, type StoreSettings } from '@vtl/store';
import type { ProbeTarget } from './health-probe.js';

/** Settings of the detached updater: the apiserver passes its own environment plus the update id. */
export interface UpdaterConfig {
  stateDir: string;
  releasesDir: string;
  store: StoreSettings;
  probe: ProbeTarget;
  updateId: string;
}

const int = (v: string | undefined, fallback: number) => (v === undefined || v === '' ? fallback : Number(v));

export function loadUpdaterConfig(env: NodeJS.ProcessEnv = process.env): UpdaterConfig {
  const stateDir = path.resolve(env.VTL_STATE_DIR ?? 'var');
  if (!env.VTL_UPDATE_ID)
    throw new Error('VTL_UPDATE_ID is not set: the updater is started by the apiserver');
  return {
    stateDir,
    releasesDir: path.resolve(env.VTL_RELEASES_DIR || path.join(stateDir, 'releases')),
    store: storeSettingsFromEnv(env, stateDir),
    probe: {
      bind: env.VTL_BIND ?? '127.0.0.1',
      httpsPort: int(env.VTL_HTTPS_PORT, 8443),
      plainPort: int(env.VTL_PLAIN_PORT, 8080),
    },
    updateId: env.VTL_UPDATE_ID,
  };
}
