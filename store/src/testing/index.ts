/**
 * Helpers for tests only (`@vtl/store/testing`): a throwaway etcd, records as their writers
 * would put them, a TCP proxy to cut a process off from etcd, and free TCP ports. Kept off the
 * main entry so production code cannot reach them by accident. useTestStore (the beforeAll and
 * afterAll around startTestStores) has its own entry, `@vtl/store/testing/use-test-store`: it
 * imports vitest, which a benchmark run by plain node cannot load.
 */
export { startTcpProxy, type TcpProxy } from '../tcp-proxy.js';
export { startTestEtcd, startTestStores, type TestEtcd, type TestStores } from '../test-etcd.js';
export { putTestLibrary, putTestNodeStatus, putTestPool, putTestRemote, testJob } from './records.js';
export { modulesLoadedBy } from './loaded-modules.js';
// Its home is @vtl/api/testing/free-port (packages that do not depend on the store take it there).
export { freePort, freePorts } from '@vtl/api/testing/free-port';
export { startTestCluster, type ClusterMember, type TestCluster } from './etcd-cluster.js';
export {
  freezeUnderLoad,
  freezeGapBound,
  longestGap,
  MAX_FREEZE_GAP_MS,
  MAX_GAP_AFTER_ELECTION_MS,
  unexcusedRefusals,
  type FreezeOutcome,
} from './member-freeze.js';
