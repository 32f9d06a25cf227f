import os from 'node:os';
import path from 'node:path';
import { storeSettingsFromEnv, type StoreSettings } from '@vtl/store';
import { healthSettingsFromEnv, type HealthSettings } from '@vtl/reconcile';

/** Controller settings, from the environment (README lists every variable). */
export interface ControllerConfig {
  node: string;
  /** Endpoints, client certificate, sealing key and deadline of the store. */
  store: StoreSettings;
  /** 0 keeps the drain reconciler's default. */
  drainTimeoutMs: number;
  /** How often the eviction policy runs besides on settings changes; 0 keeps its 30 s. */
  evictPolicyPeriodMs: number;
  /** host:port of the reconcile metrics endpoint (GET /metrics); '' serves none. */
  metricsAddr: string;
  /** Where the probes listen (VTL_HEALTH_PORT, VTL_HEALTH_BIND); port 0: nowhere. */
  health: HealthSettings;
  /** The GitOps poller (docs/gitops.md): where the apiserver answers and its certificate. */
  gitops: { apiUrl: string; apiCertFile: string; workDir: string };
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): ControllerConfig {
  const stateDir = path.resolve(env.VTL_STATE_DIR ?? 'var');
  return {
    node: env.VTL_NODE ?? os.hostname(),
    store: storeSettingsFromEnv(env, stateDir),
    drainTimeoutMs: Number(env.VTL_DRAIN_TIMEOUT_MS) || 0,
    evictPolicyPeriodMs: Number(env.VTL_EVICT_POLICY_PERIOD_MS) || 0,
    metricsAddr: env.VTL_CONTROLLER_METRICS_ADDR ?? '',
    health: healthSettingsFromEnv(env),
    gitops: {
      apiUrl: (env.VTL_GITOPS_API_URL || `https://127.0.0.1:${env.VTL_HTTPS_PORT || '8443'}`).replace(
        /\/+$/,
        '',
      ),
      apiCertFile: path.resolve(
        env.VTL_GITOPS_API_CERT_FILE || env.VTL_TLS_CERT_FILE || path.join(stateDir, 'tls', 'cert.pem'),
      ),
      workDir: path.join(stateDir, 'gitops'),
    },
  };
}
