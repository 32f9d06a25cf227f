export {
  activeJobs,
  findLibrary,
  libraryState,
  liveLibraryIds,
  nodeOfLibrary,
  observedCartridges,
  observedLibrary,
  refuseWithActiveJobs,
  refuseWithLoadedDrives,
  requireFreeActivePool,
  type Snapshot,
} from './snapshot.js';
export {
  libraryLiveness,
  libraryNotServed,
  libraryStateUnknown,
  refuseWhileLivenessUnknown,
  requireLive,
  soleLiveLibrary,
  type Liveness,
} from './liveness.js';
export {
  admitJob,
  admitPolicyJob,
  busyLabel,
  cancelJob,
  cartridgeAbsent,
  cartridgeUnchanged,
  finishExport,
  JobLabelClaim,
  newJobRow,
  publishJob,
  readLabelClaim,
  recordExportChunk,
  remoteUnchanged,
  retryJob,
  updateJob,
  type JobJournal,
  type LabelClaim,
  type NewJob,
} from './records/jobs.js';
export {
  ExclusiveOpClaim,
  exclusiveOpBusy,
  readExclusiveOp,
  submitExclusiveOp,
  type ExclusiveOpRead,
} from './records/exclusive-op.js';
export {
  appendOpSteps,
  opProgressWrite,
  recordNewOp,
  removeOp,
  removeOpResults,
  submitOp,
  writeOpResultParts,
  type SubmitOp,
} from './records/ops.js';
export {
  declareLibrary,
  declareLibraryWithApply,
  claimLibrary,
  markLibraryDeleting,
  releaseLibrary,
  removeLibrary,
  type PlanLibrary,
} from './records/libraries.js';
export { loadSnapshot } from './load-snapshot.js';
export { checkRecoverPreconditions } from './recover-rules.js';
export { normalisePoolPath, refusePoolPath } from './pool-path-rules.js';
export { deleteRemoteCatalog, putCatalogEntries, replaceRemoteCatalog } from './records/catalog.js';
export {
  claimPool,
  createPool,
  deletePool,
  publishPoolStatus,
  releasePool,
  removePoolStatus,
} from './records/pools.js';
export { releaseThrough, withManagedBy } from './records/managed-by.js';
export {
  claimInitiator,
  createInitiatorRecord,
  deleteInitiatorRecord,
  releaseInitiator,
  resealInitiatorSecrets,
  updateInitiatorRecord,
  type ChapChange,
} from './records/initiators.js';
export {
  claimRemote,
  createRemoteRecord,
  recordRemoteTest,
  releaseRemote,
  resealRemoteSecrets,
  removeRemote,
  updateRemoteRecord,
  type RemoteFields,
} from './records/remotes.js';
export { remoteConnection } from './remote-connection.js';
export {
  deleteGitopsSecret,
  newSourceSecret,
  putGitopsSecret,
  removeSourceSecret,
  replaceSourceCredential,
  resealGitopsSecrets,
  resealGitopsSourceSecrets,
  type SourceCredentialSecret,
} from './records/gitops-secrets.js';
export { type Resealed } from './records/reseal.js';
export { createStorage, markStorageDeleting, removeStorage, replaceStorage } from './records/storage.js';
export { listNodeStatus } from './node-status.js';
export { abandonDrain, requestRestart, startDrain } from './records/restart.js';
export { dropFromDataplane, requestDataplane } from './records/dataplane.js';
export {
  markCartridgeDeleting,
  mintCartridges,
  recordImportedCartridge,
  removeDeletedCartridge,
  removeLibraryCartridge,
  setLastExportGen,
} from './records/cartridges.js';
export {
  createGitSource,
  deleteGitSource,
  recordPollOutcome,
  requestPoll,
  takePollRequest,
  updateGitSource,
  type SourceSecretWrite,
} from './records/gitops-sources.js';
