export { activate, DATAPLANE_RESTART_TIMEOUT_MS } from './library/activate.js';
export { remoteOpHandlers, startRemoteOps, REMOTE_OPS_EXECUTOR } from './ops/index.js';
