export { activate } from './library/apply.js';
export {
  DATAPLANE_RESTART_TIMEOUT_MS,
  LIBRARY_UP_TIMEOUT_MS,
  deriveLibraryStatus,
} from './library/library-status.js';
export { startLibraryReconciler } from './library/library-reconciler.js';
export { deleteLibraryOp } from './library/delete-library.js';
export { remoteOpHandlers, startRemoteOps, REMOTE_OPS_EXECUTOR } from './ops/index.js';
export { TestGitRepo, sshKeyPair } from './gitops/testing/git-servers.js';
