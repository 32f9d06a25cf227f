import path from 'node:path';
import { z } from 'zod';
import { DEFAULT_STORE_DEADLINE_MS } from './deadline.js';

/** The client certificate a process presents to etcd, and the CA that signed etcd's own. */
export const StoreTls = z.object({
  caFile: z.string().min(1),
  certFile: z.string().min(1),
  keyFile: z.string().min(1),
});
export type StoreTls = z.infer<typeof StoreTls>;

/**
 * How a process reaches the store: the `store` field of every process's configuration
 * (apiserver, controller, nodeagent, updater), handed as it is to Store.connect.
 */
export const StoreSettings = z.object({
  endpoints: z.array(z.string().min(1)).min(1),
  /** Unset for a plaintext etcd. */
  tls: StoreTls.optional(),
  /** Seals and opens records under /vtl/secrets/. */
  sealingKeyFile: z.string().min(1),
  /** The most one store call waits; past it: 503 unavailable. */
  deadlineMs: z.coerce
    .number({ error: 'expected a positive integer of milliseconds' })
    .int({ error: 'expected a positive integer of milliseconds' })
    .positive({ error: 'expected a positive integer of milliseconds' })
    .default(DEFAULT_STORE_DEADLINE_MS),
});
export type StoreSettings = z.infer<typeof StoreSettings>;

/** The variable each field is read from, to name it in an error. */
const VARIABLES: Record<string, string> = {
  endpoints: 'VTL_ETCD_ENDPOINTS',
  'tls.caFile': 'VTL_ETCD_CA_FILE',
  'tls.certFile': 'VTL_ETCD_CERT_FILE',
  'tls.keyFile': 'VTL_ETCD_KEY_FILE',
  sealingKeyFile: 'VTL_SEALING_KEY_FILE',
  deadlineMs: 'VTL_STORE_DEADLINE_MS',
};

/**
 * The store settings every process reads from its environment: VTL_ETCD_ENDPOINTS,
 * VTL_ETCD_CA_FILE, VTL_ETCD_CERT_FILE, VTL_ETCD_KEY_FILE (the three go together),
 * VTL_SEALING_KEY_FILE (default <stateDir>/pki/sealing.key) and VTL_STORE_DEADLINE_MS.
 */
export function storeSettingsFromEnv(env: NodeJS.ProcessEnv, stateDir: string): StoreSettings {
  const files = {
    caFile: env.VTL_ETCD_CA_FILE ?? '',
    certFile: env.VTL_ETCD_CERT_FILE ?? '',
    keyFile: env.VTL_ETCD_KEY_FILE ?? '',
  };
  const given = Object.values(files).filter(Boolean).length;
  if (given !== 0 && given !== 3) {
    throw new Error(
      'VTL_ETCD_CA_FILE, VTL_ETCD_CERT_FILE and VTL_ETCD_KEY_FILE go together: set all three (TLS with a client certificate) or none (plaintext etcd).',
    );
  }
  const fallback = given === 3 ? 'https://127.0.0.1:2379' : 'http://127.0.0.1:2379';
  const parsed = StoreSettings.safeParse({
    endpoints: (env.VTL_ETCD_ENDPOINTS || fallback).split(',').map((e) => e.trim()),
    tls: given === 3 ? files : undefined,
    sealingKeyFile: path.resolve(env.VTL_SEALING_KEY_FILE || path.join(stateDir, 'pki', 'sealing.key')),
    deadlineMs: env.VTL_STORE_DEADLINE_MS || undefined,
  });
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  const field = issue.path.filter((p) => typeof p === 'string').join('.');
  const variable = VARIABLES[field] ?? field;
  throw new Error(`${variable}: ${issue.message}, got "${env[variable] ?? ''}"`);
}
