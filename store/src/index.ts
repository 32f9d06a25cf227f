export type { Versioned } from './codec.js';
export type { Leadership } from './election.js';
export { EventJournal } from './event-journal.js';
export { startEtcd, type EtcdOptions, type EtcdProcess } from './etcd-process.js';
export type { Informer, InformerHandler } from './informer.js';
export type { Lease } from './lease.js';
export type { RenewingLease } from './renewing-lease.js';
export { DEFAULT_STORE_DEADLINE_MS, isUnreachable, storeDeadlineFromEnv } from './deadline.js';
export { Store, type IdClaim, type ListOptions } from './store.js';
export { listNodeStatus } from './node-status.js';
export type { Txn } from './txn.js';
export type { Watch, WatchEvent, WatchOptions } from './watch.js';
export { WatchCache, type CacheChange, type CachedPrefix } from './watch-cache.js';
export { waitFor, type WaitOptions } from './wait.js';
export { ensurePki, PKI_IDENTITIES, type Pki, type PkiIdentity } from './pki.js';
export {
  ensureSealingKeyFile,
  isEnvelope,
  newSealingKey,
  parseKeyFile,
  Sealer,
  SECRETS_PREFIX,
  writeKeyFile,
  type SealedEnvelope,
  type SealingKey,
} from './sealing.js';
export { storeSettingsFromEnv, type StoreSettings, type StoreTls } from './store-tls.js';
export { rotateSealingKey, type RotationReport } from './seal-rotation.js';
