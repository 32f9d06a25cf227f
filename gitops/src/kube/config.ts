import fs from 'node:fs';
import { SOURCE_NAME, kubernetesSourceName } from '../contract.js';

/** The adapter's settings, all from the environment (README: Configuration). */
export interface KubeAdapterConfig {
  /** Namespace whose custom resources are the desired set. */
  namespace: string;
  /** The GitOps source the set is applied as: kubernetesSourceName(namespace) unless set. */
  source: string;
  /** A kubeconfig file (development, tests); unset = the in-cluster service account. */
  kubeconfig?: string;
  /** The appliance's REST API. */
  apiUrl: string;
  apiCaFile?: string;
  apiInsecure: boolean;
  /** An admin API key, or a user and password that logs in (re-logged in on 401). */
  apiKey?: string;
  apiUsername?: string;
  apiPassword?: string;
  /** Quiet time after a change before a sync, so a `kubectl apply -f dir` is one revision. */
  debounceMs: number;
  /** A full sync this often even with no change (REST drift, Secrets, library state). */
  resyncMs: number;
  healthPort: number;
  logLevel: string;
}

const SA_NAMESPACE = '/var/run/secrets/kubernetes.io/serviceaccount/namespace';

const readSecretFile = (file: string | undefined, what: string) => {
  if (!file) return undefined;
  try {
    return fs.readFileSync(file, 'utf8').trim();
  } catch (err) {
    throw new Error(`${what}: cannot read ${file} (${(err as Error).message}); mount the Secret there`);
  }
};

const int = (env: NodeJS.ProcessEnv, name: string, fallback: number, min: number) => {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min) throw new Error(`${name} must be an integer ≥ ${min}, got "${raw}"`);
  return n;
};

/** Reads and checks every setting; throws with what to set when one is missing or wrong. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): KubeAdapterConfig {
  const namespace =
    env.VTL_KUBE_NAMESPACE ||
    (fs.existsSync(SA_NAMESPACE) ? fs.readFileSync(SA_NAMESPACE, 'utf8').trim() : '');
  if (!namespace)
    throw new Error('VTL_KUBE_NAMESPACE is not set and no service account namespace is mounted');
  const apiUrl = env.VTL_API_URL;
  if (!apiUrl) throw new Error('VTL_API_URL must name the appliance API, e.g. https://vtl-apiserver:8443');
  const apiKey = env.VTL_API_KEY || readSecretFile(env.VTL_API_KEY_FILE, 'VTL_API_KEY_FILE');
  const apiUsername = env.VTL_API_USERNAME || undefined;
  const apiPassword =
    env.VTL_API_PASSWORD || readSecretFile(env.VTL_API_PASSWORD_FILE, 'VTL_API_PASSWORD_FILE');
  if (!apiKey && !(apiUsername && apiPassword))
    throw new Error(
      'No appliance credential: set VTL_API_KEY_FILE (an admin API key) or VTL_API_USERNAME and VTL_API_PASSWORD_FILE',
    );
  const source = env.VTL_GITOPS_SOURCE || kubernetesSourceName(namespace);
  if (!SOURCE_NAME.test(source))
    throw new Error(
      `VTL_GITOPS_SOURCE "${source}" is not a source name: lowercase letters, digits and -, at most 63`,
    );
  return {
    namespace,
    source,
    ...(env.VTL_KUBECONFIG ? { kubeconfig: env.VTL_KUBECONFIG } : {}),
    apiUrl,
    ...(env.VTL_API_CA_FILE ? { apiCaFile: env.VTL_API_CA_FILE } : {}),
    apiInsecure: env.VTL_API_INSECURE === '1',
    ...(apiKey ? { apiKey } : {}),
    ...(apiUsername ? { apiUsername } : {}),
    ...(apiPassword ? { apiPassword } : {}),
    debounceMs: int(env, 'VTL_KUBE_DEBOUNCE_MS', 500, 0),
    resyncMs: int(env, 'VTL_KUBE_RESYNC_SEC', 60, 1) * 1000,
    healthPort: int(env, 'VTL_HEALTH_PORT', 0, 0),
    logLevel: env.VTL_LOG_LEVEL || 'info',
  };
}
