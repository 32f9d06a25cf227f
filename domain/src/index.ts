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
} from './job-records.js';
export { normalisePoolPath, refusePoolPath } from './pool-path-rules.js';
