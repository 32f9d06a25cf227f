import os from 'node:os';
import path from 'node:path';

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
    inherited: { ...env },
  };
}
