import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import { z } from 'zod';
import { VtlError } from '@vtl/api';
import { newSealingKey, parseKeyFile, writeKeyFile } from '@vtl/sealing';
import { storeSettingsFromEnv, type Store, type StoreSettings } from '@vtl/store';
import type { ApplianceConfig } from './config.js';

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

/** What a rotation did. */
export interface RotationReport {
  /** The key that seals from now on. */
  kid: string;
  /** Keys taken out of the file (none with resealOnly). */
  retired: string[];
  /** Records sealed again under kid, and how many of them were still in clear (migrated). */
  resealed: number;
  migrated: number;
}

/** Passes over the secrets before giving up: each pass only retries records that changed meanwhile. */
const PASSES = 10;

/**
 * Rotates the sealing key: puts a new key first in the key file (every process re-reads the
 * file on change, so new writes use it at once), re-seals every secret under it by
 * compare-and-swap, and only once none is left under an old key (or in clear) retires the old
 * keys from the file. resealOnly skips the key-file edits: for a key file the operator manages
 * (a Kubernetes Secret), re-sealing under its first key.
 */
export async function rotateSealingKey(
  store: Store,
  keyFile: string,
  opts: { resealOnly?: boolean; logger?: Logger } = {},
): Promise<RotationReport> {
  const old = parseKeyFile(readFileSync(keyFile, 'utf8'), keyFile);
  let primary = old[0]!;
  if (!opts.resealOnly) {
    primary = newSealingKey();
    writeKeyFile(keyFile, [primary, ...old]);
    opts.logger?.info({ kid: primary.kid }, 'new sealing key added');
  }
  let resealed = 0;
  let migrated = 0;
  for (let pass = 1; ; pass++) {
    const stale = (await store.secretSeals()).filter((s) => s.kid !== primary.kid);
    if (stale.length === 0) break;
    if (pass > PASSES) {
      throw new VtlError(
        'conflict',
        `${stale.length} secrets kept changing during ${PASSES} passes; the old keys stay in ${keyFile}. Run the rotation again.`,
      );
    }
    for (const s of stale) {
      // Read through the store (opens with any key of the file), write back: sealed under primary.
      const current = await store.get(s.key, z.unknown());
      if (!current || current.modRevision !== s.modRevision) continue;
      // writes keys.remoteSecrets, keys.initiatorSecrets, keys.gitopsSecrets, keys.gitopsSourceSecrets
      if (await store.casPut(s.key, current.value, current.modRevision)) {
        resealed++;
        if (s.kid === null) migrated++;
      }
    }
  }
  const retired = opts.resealOnly ? [] : old.map((k) => k.kid);
  if (!opts.resealOnly) writeKeyFile(keyFile, [primary]);
  opts.logger?.info({ kid: primary.kid, retired, resealed, migrated }, 'sealing key rotated');
  return { kid: primary.kid, retired, resealed, migrated };
}
