import path from 'node:path';
import { ensurePki, type PkiIdentity } from '@vtl/etcd-launcher';
import { ensureSealingKeyFile } from '@vtl/sealing';
// A type only: the launcher does not load the etcd client (gRPC) nor zod.
import type { StoreTls } from '@vtl/store';
import type { Logger } from 'pino';

/** How the appliance's processes reach the store: etcd's TLS files and each process's settings. */
export interface StoreAccess {
  /** etcd's own pair and the CA, when the appliance runs its own etcd. */
  etcdTls: StoreTls | undefined;
  /** VTL_ETCD_CA_FILE / _CERT_FILE / _KEY_FILE (its own certificate) and VTL_SEALING_KEY_FILE. */
  envFor(identity: Exclude<PkiIdentity, 'etcd'>): Record<string, string>;
}

/**
 * First start: the CA, the certificates ($VTL_STATE_DIR/pki, 0700, keys 0600) and the sealing
 * key; later starts reuse them. With an external etcd (VTL_ETCD_ENDPOINTS) no PKI is made here:
 * the operator's VTL_ETCD_CA_FILE / _CERT_FILE / _KEY_FILE reach every process unchanged.
 */
export async function prepareStoreAccess(opts: {
  stateDir: string;
  external: boolean;
  sealingKeyFile: string;
  logger: Logger;
}): Promise<StoreAccess> {
  if (ensureSealingKeyFile(opts.sealingKeyFile))
    opts.logger.info(
      { file: opts.sealingKeyFile },
      'sealing key created: keep a copy apart from the store backups',
    );
  const sealing = { VTL_SEALING_KEY_FILE: opts.sealingKeyFile };
  if (opts.external) return { etcdTls: undefined, envFor: () => sealing };
  const pki = await ensurePki(path.join(opts.stateDir, 'pki'));
  return {
    etcdTls: pki.files('etcd'),
    envFor: (identity) => {
      const files = pki.files(identity);
      return {
        ...sealing,
        VTL_ETCD_CA_FILE: files.caFile,
        VTL_ETCD_CERT_FILE: files.certFile,
        VTL_ETCD_KEY_FILE: files.keyFile,
      };
    },
  };
}
