import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import { VtlError, keys } from '@vtl/api';
import {
  resealGitopsSecrets,
  resealGitopsSourceSecrets,
  resealInitiatorSecrets,
  resealRemoteSecrets,
  type Resealed,
} from '@vtl/domain';
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
 * The sealed families, each re-sealed by its owner module (api/src/keys.ts KEY_OWNERS): this
 * module writes no secret itself.
 */
const FAMILIES: { prefix: string; reseal: (store: Store, kid: string) => Promise<Resealed> }[] = [
  { prefix: keys.remoteSecrets.prefix, reseal: resealRemoteSecrets },
  { prefix: keys.initiatorSecrets.prefix, reseal: resealInitiatorSecrets },
  { prefix: keys.gitopsSecrets.prefix, reseal: resealGitopsSecrets },
  { prefix: keys.gitopsSourceSecrets.prefix, reseal: resealGitopsSourceSecrets },
];

/**
 * Rotates the sealing key: puts a new key first in the key file (every process re-reads the
 * file on change, so new writes use it at once), has each sealed family's owner module re-seal
 * its secrets under it by compare-and-swap, and only once none is left under an old key (or in
 * clear) retires the old keys from the file. resealOnly skips the key-file edits: for a key file the operator manages
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
    const unowned = stale.filter((s) => !FAMILIES.some((f) => s.key.startsWith(f.prefix)));
    if (unowned.length > 0) {
      throw new VtlError(
        'internal',
        `No owner module re-seals ${unowned.map((s) => s.key).join(', ')}; the old keys stay in ${keyFile}.`,
      );
    }
    for (const f of FAMILIES) {
      if (!stale.some((s) => s.key.startsWith(f.prefix))) continue;
      const done = await f.reseal(store, primary.kid);
      resealed += done.resealed;
      migrated += done.migrated;
    }
  }
  const retired = opts.resealOnly ? [] : old.map((k) => k.kid);
  if (!opts.resealOnly) writeKeyFile(keyFile, [primary]);
  opts.logger?.info({ kid: primary.kid, retired, resealed, migrated }, 'sealing key rotated');
  return { kid: primary.kid, retired, resealed, migrated };
}
