export { activate, DATAPLANE_RESTART_TIMEOUT_MS } from './library/activate.js';
