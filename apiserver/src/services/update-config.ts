import path from 'node:path';

/** Settings of signed updates (README lists them; docs/updates.md explains them). */
export interface UpdateConfig {
  /**
   * The release directories (VTL_RELEASES_DIR), set by the single-node launcher, which restarts
   * the control plane from `<dir>/current`. Unset: this deployment is not updated through the API.
   */
  releasesDir: string | undefined;
  /** PEM Ed25519 public keys a bundle's signature must verify with (VTL_UPDATE_TRUSTED_KEYS_FILE). */
  trustedKeysFile: string;
  /** How long after staging /healthz must report the new version (VTL_UPDATE_DEADLINE_SEC). */
  deadlineSec: number;
  /** Control-plane restarts tried before rolling back (VTL_UPDATE_ATTEMPT_LIMIT). */
  attemptLimit: number;
}

const positive = (value: string | undefined, fallback: number, name: string) => {
  if (value === undefined || value === '') return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${name} must be a positive integer, got "${value}"`);
  return n;
};

/** Read by the apiserver's loadConfig (config.ts), the one place its environment is read. */
export function loadUpdateConfig(stateDir: string, env: NodeJS.ProcessEnv): UpdateConfig {
  return {
    releasesDir: env.VTL_RELEASES_DIR ? path.resolve(env.VTL_RELEASES_DIR) : undefined,
    trustedKeysFile: path.resolve(
      env.VTL_UPDATE_TRUSTED_KEYS_FILE || path.join(stateDir, 'pki', 'update-trusted-keys.pem'),
    ),
    deadlineSec: positive(env.VTL_UPDATE_DEADLINE_SEC, 300, 'VTL_UPDATE_DEADLINE_SEC'),
    attemptLimit: positive(env.VTL_UPDATE_ATTEMPT_LIMIT, 3, 'VTL_UPDATE_ATTEMPT_LIMIT'),
  };
}
