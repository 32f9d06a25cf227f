import fs from 'node:fs/promises';
import path from 'node:path';
import { VtlError } from '@vtl/api/base';

/** The client certificate a process presents to etcd, and the CA that signed etcd's own. */
export interface StoreTls {
  caFile: string;
  certFile: string;
  keyFile: string;
}

/** How a process reaches the store: what every process's config.ts reads from the environment. */
export interface StoreSettings {
  endpoints: string[];
  /** Unset when none of VTL_ETCD_CA_FILE / _CERT_FILE / _KEY_FILE is set (a plaintext etcd). */
  tls: StoreTls | undefined;
  /** Seals and opens records under /vtl/secrets/. */
  sealingKeyFile: string;
}

/**
 * VTL_ETCD_ENDPOINTS, VTL_ETCD_CA_FILE, VTL_ETCD_CERT_FILE, VTL_ETCD_KEY_FILE and
 * VTL_SEALING_KEY_FILE (default <stateDir>/pki/sealing.key). The three TLS files go together.
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
  const tls = given === 3 ? files : undefined;
  const fallback = tls ? 'https://127.0.0.1:2379' : 'http://127.0.0.1:2379';
  return {
    endpoints: (env.VTL_ETCD_ENDPOINTS || fallback).split(',').map((e) => e.trim()),
    tls,
    sealingKeyFile: env.VTL_SEALING_KEY_FILE || path.join(stateDir, 'pki', 'sealing.key'),
  };
}

/** The etcd3 client's credentials, read from the files; a missing file names its setting. */
export async function credentials(
  tls: StoreTls,
): Promise<{ rootCertificate: Buffer; certChain: Buffer; privateKey: Buffer }> {
  const read = async (file: string, setting: string) => {
    try {
      return await fs.readFile(file);
    } catch (err) {
      throw new VtlError(
        'unavailable',
        `Cannot read ${setting}=${file} (${(err as NodeJS.ErrnoException).code}): the store needs it to connect. Point ${setting} at the file, or run as the user that owns it.`,
      );
    }
  };
  const [rootCertificate, certChain, privateKey] = await Promise.all([
    read(tls.caFile, 'VTL_ETCD_CA_FILE'),
    read(tls.certFile, 'VTL_ETCD_CERT_FILE'),
    read(tls.keyFile, 'VTL_ETCD_KEY_FILE'),
  ]);
  return { rootCertificate, certChain, privateKey };
}
