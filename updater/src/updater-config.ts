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

/** Settings of the updater's settle run (`main.js settle`, started and awaited by the apiserver). */
export interface SettleConfig {
  store: StoreSettings;
  /** The release directories; undefined where the deployment is not updated through the API. */
  releasesDir: string | undefined;
  /** The version the apiserver that started this run reports: the one running. */
  runningVersion: string;
}

/** `settle --running-version <v> [--releases-dir <dir>]`, the store from the environment. */
export function loadSettleConfig(args: string[], env: NodeJS.ProcessEnv = process.env): SettleConfig {
  const flag = (name: string) => {
    const i = args.indexOf(name);
    return i >= 0 ? args[i + 1] : undefined;
  };
  const runningVersion = flag('--running-version');
  if (!runningVersion) throw new Error('settle: --running-version is required (the apiserver passes it)');
  const releasesDir = flag('--releases-dir');
  const stateDir = path.resolve(env.VTL_STATE_DIR ?? 'var');
  return {
    store: storeSettingsFromEnv(env, stateDir),
    releasesDir: releasesDir ? path.resolve(releasesDir) : undefined,
    runningVersion,
  };
}
