/**
 * Runs the appliance's own etcd and makes its PKI: what the launcher and the tests need to host
 * etcd, apart from the store's client (which never starts etcd), and without its gRPC stack.
 */
export { etcdTlsArgs, startEtcd, type EtcdOptions, type EtcdProcess } from './etcd-process.js';
export { ensurePki, PKI_IDENTITIES, type Pki, type PkiIdentity } from './pki.js';
export type { TlsFiles } from './tls-files.js';
