/**
 * How a process reaches the store, read from its environment, without the etcd client: the
 * appliance launcher reads these for its children and never talks to etcd itself, and the main
 * entry loads etcd3 and gRPC, some 20 MB of heap it would otherwise keep for good.
 */
export { storeDeadlineFromEnv } from './deadline-env.js';
export { storeSettingsFromEnv, type StoreSettings, type StoreTls } from './store-tls.js';
