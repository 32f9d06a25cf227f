import os from 'node:os';
import path from 'node:path';
// The launcher's entry of the store package: the main one loads the etcd client (launcher.ts).
import { storeDeadlineFromEnv, storeSettingsFromEnv, type StoreSettings } from '@vtl/store/settings';

/** Single-node appliance settings; every one has a built-in default (README lists them). */
export interface ApplianceConfig {
  stateDir: string;
  bind: string;
  node: string;
  httpsPort: number;
  plainPort: number;
  iscsiPort: number;
  /** External etcd endpoints; empty means the appliance runs its own etcd. */
  etcdEndpoints: string[];
  etcdClientPort: number;
  etcdPeerPort: number;
  /** Seals the secrets in the store (VTL_SEALING_KEY_FILE, default <stateDir>/pki/sealing.key). */
  sealingKeyFile: string;
  /** The nodeagent's default pool directory (VTL_DEFAULT_POOL, default <stateDir>/pool). */
  defaultPool: string;
  /** The operator's own HTTPS certificate (VTL_TLS_CERT_FILE); unset: the apiserver's self-signed one. */
  tlsCertFile: string | undefined;
  /** The most one store (etcd) call of seal-rotate waits (VTL_STORE_DEADLINE_MS, default 5 s). */
  storeDeadlineMs: number;
  /**
   * The environment the supervised processes inherit: each reads its own settings from it in
   * its config.ts; the appliance only adds the values it decides (ports, endpoints, node).
   */
  inherited: NodeJS.ProcessEnv;
}

const port = (value: string | undefined, fallback: number, name: string) => {
  if (value === undefined || value === '') return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535)
    throw new Error(`${name} must be a TCP port, got "${value}"`);
  return n;
};

export function loadConfig(env: NodeJS.ProcessEnv = process.env): ApplianceConfig {
  const stateDir = path.resolve(env.VTL_STATE_DIR ?? 'var');
  return {
    stateDir,
    bind: env.VTL_BIND ?? '127.0.0.1',
    node: env.VTL_NODE ?? os.hostname(),
    httpsPort: port(env.VTL_HTTPS_PORT, 8443, 'VTL_HTTPS_PORT'),
    plainPort: port(env.VTL_PLAIN_PORT, 8080, 'VTL_PLAIN_PORT'),
    iscsiPort: port(env.VTL_ISCSI_PORT, 3260, 'VTL_ISCSI_PORT'),
    etcdEndpoints: env.VTL_ETCD_ENDPOINTS ? env.VTL_ETCD_ENDPOINTS.split(',') : [],
    etcdClientPort: port(env.VTL_ETCD_CLIENT_PORT, 2379, 'VTL_ETCD_CLIENT_PORT'),
    etcdPeerPort: port(env.VTL_ETCD_PEER_PORT, 2380, 'VTL_ETCD_PEER_PORT'),
    sealingKeyFile: path.resolve(env.VTL_SEALING_KEY_FILE || path.join(stateDir, 'pki', 'sealing.key')),
    defaultPool: env.VTL_DEFAULT_POOL ?? path.join(stateDir, 'pool'),
    tlsCertFile: env.VTL_TLS_CERT_FILE || undefined,
    storeDeadlineMs: storeDeadlineFromEnv(env),
    inherited: { ...env },
  };
}

/**
 * How seal-rotate reaches the store: with the appliance's own etcd, as its admin certificate
 * of <stateDir>/pki; with VTL_ETCD_ENDPOINTS, by VTL_ETCD_CA_FILE / _CERT_FILE / _KEY_FILE.
 */
export function adminStoreSettings(config: ApplianceConfig): StoreSettings {
  if (config.etcdEndpoints.length > 0) return storeSettingsFromEnv(config.inherited, config.stateDir);
  const pki = path.join(config.stateDir, 'pki');
  return storeSettingsFromEnv(
    {
      ...config.inherited,
      VTL_ETCD_ENDPOINTS: `https://127.0.0.1:${config.etcdClientPort}`,
      VTL_ETCD_CA_FILE: path.join(pki, 'ca.crt'),
      VTL_ETCD_CERT_FILE: path.join(pki, 'admin.crt'),
      VTL_ETCD_KEY_FILE: path.join(pki, 'admin.key'),
    },
    config.stateDir,
  );
}
