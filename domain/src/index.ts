export {
  activeJobs,
  libraryState,
  liveLibraryIds,
  nodeOfLibrary,
  observedCartridges,
  observedLibrary,
  refuseWithActiveJobs,
  refuseWithLoadedDrives,
  type Snapshot,
} from './snapshot.js';
export { libraryLiveness, libraryStateUnknown, refuseWhileLivenessUnknown, requireLive } from './liveness.js';
export {
  createJob,
  newJobRow,
  publishJob,
  updateJob,
  type JobJournal,
  type JobStore,
  type NewJob,
  admitJob,
  busyLabel,
  JobLabelClaim,
  readLabelClaim,
  type LabelClaim,
} from './records/jobs.js';
export {
  ExclusiveOpClaim,
  exclusiveOpBusy,
  readExclusiveOp,
  type ExclusiveOpRead,
} from './records/exclusive-op.js';
export { loadSnapshot } from './load-snapshot.js';
export { checkRecoverPreconditions } from './recover-rules.js';
export { normalisePoolPath, refusePoolPath } from './pool-path-rules.js';
