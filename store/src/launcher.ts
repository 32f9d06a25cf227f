/**
 * The store's entry point for the appliance launcher: starting etcd and preparing its PKI and
 * sealing key, without the etcd client. The main entry loads etcd3 and gRPC, some 20 MB of
 * heap the launcher (which never talks to etcd itself) would otherwise keep for good.
 */
export { startEtcd, type EtcdProcess } from './etcd-process.js';
export { ensurePki, type PkiIdentity } from './pki.js';
export { ensureSealingKeyFile } from './sealing.js';
export { storeDeadlineFromEnv } from './deadline-env.js';
export { storeSettingsFromEnv, type StoreSettings, type StoreTls } from './store-tls.js';
